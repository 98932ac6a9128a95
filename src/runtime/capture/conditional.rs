//! Conditional tasks: creating condition handles for a model (`aclmdlRICondHandleCreate`) and
//! recording a conditional task with its branch models (`aclmdlRIAddCondTask`); what the task
//! does when a run reaches it is in [`super::replay`].

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::cond::{ASSIGN_DEFAULT, CONDS, CondHandle};
use super::graph::{Graph, State};
use super::replay;
use super::sink::{capture_sink, sink};
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::runtime::stream::Stream;
use crate::sync;

/// `aclmdlRICondHandleCreate`: a condition word at `addr` (8 bytes of device memory the caller
/// allocated for it) for conditional tasks of `graph`.
pub fn cond_create(graph: &Arc<Graph>, addr: usize, default: u32, flag: u32) -> AclResult<u64> {
    if flag != 0 && flag != ASSIGN_DEFAULT {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag}: use 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT (1)"),
        ));
    }
    let word = crate::runtime::value::word_at(addr)?;
    word.store(u64::from(default));
    let c = Arc::new(CondHandle {
        addr,
        word,
        default: u64::from(default),
        assign_default: flag == ASSIGN_DEFAULT,
        model: graph.handle.load(Ordering::Acquire),
        handle: Default::default(),
    });
    let h = CONDS.insert_arc(Arc::clone(&c));
    c.handle.store(h, Ordering::Release);
    sync::lock(&graph.conds).push(c);
    Ok(h)
}

/// `aclmdlRIAddCondTask`: records on the captured `stream` a conditional task over `cond` with
/// `size` new branch graphs, returned for the caller to capture into
/// (`aclmdlRICaptureToModelRIBegin`).
pub fn add_cond_task(
    stream: &Stream,
    cond: Arc<CondHandle>,
    kind: u32,
    size: u32,
) -> AclResult<Vec<Arc<Graph>>> {
    let r = capture_sink(stream)?;
    let s = sink(&r);
    let ok = match kind {
        replay::COND_IF => size == 1 || size == 2,
        replay::COND_WHILE => size == 1,
        replay::COND_SWITCH => size > 0,
        _ => {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("type {kind}: use ACL_MODEL_RI_COND_TYPE_IF (0), _WHILE (1) or _SWITCH (2)"),
            ));
        }
    };
    if !ok {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("size {size}: an IF takes 1 or 2 branches, a WHILE 1, a SWITCH at least 1"),
        ));
    }
    if size > 1024 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("size {size}: at most 1024 branches")));
    }
    let root = s.graph.root();
    if cond.model != root.handle.load(Ordering::Acquire)
        && cond.model != s.graph.handle.load(Ordering::Acquire)
    {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "the condition handle belongs to another model than the one this stream is captured into",
        ));
    }
    let branches: Vec<Arc<Graph>> = (0..size)
        .map(|_| {
            let b = Graph::create(State::Empty, s.graph.device, s.graph.context);
            *sync::lock(&b.branch_of) = Some(Arc::downgrade(&s.graph));
            b
        })
        .collect();
    sync::lock(&s.graph.inner).children.extend(branches.iter().cloned());
    let op = replay::cond_op(cond, kind, branches.clone());
    r.record(crate::runtime::task::TaskInfo::plain("conditional"), op)?;
    Ok(branches)
}
