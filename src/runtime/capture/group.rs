//! Task groups of a capture (`aclmdlRICaptureTaskGrpBegin/End`) and their updates
//! (`aclmdlRICaptureTaskUpdateBegin/End`): a group's tasks are replaced one for one by the work
//! another stream submits during the update.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::graph::{GROUPS, Group};
use super::sink::{UpdateSink, capture_sink, sink};
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::runtime::stream::Stream;
use crate::sync;

/// `aclmdlRICaptureTaskGrpBegin`: the stream's next tasks form a group until the end.
pub fn group_begin(stream: &Stream) -> AclResult<()> {
    let r = capture_sink(stream)?;
    let s = sink(&r);
    let mut inner = sync::lock(&s.graph.inner);
    if inner.open_groups.iter().any(|(i, _)| *i == s.stream.index) {
        return Err(AclError::new(
            ACL_ERROR_STREAM_TASK_GROUP_STATUS,
            "a task group is already open on this stream: end it with aclmdlRICaptureTaskGrpEnd first",
        ));
    }
    inner.open_groups.push((s.stream.index, Vec::new()));
    Ok(())
}

/// `aclmdlRICaptureTaskGrpEnd`: closes the stream's group; returns its handle.
pub fn group_end(stream: &Stream) -> AclResult<u64> {
    let r = capture_sink(stream)?;
    let s = sink(&r);
    let mut inner = sync::lock(&s.graph.inner);
    let Some(at) = inner.open_groups.iter().position(|(i, _)| *i == s.stream.index) else {
        return Err(AclError::new(
            ACL_ERROR_STREAM_TASK_GROUP_STATUS,
            "no task group is open on this stream: begin one with aclmdlRICaptureTaskGrpBegin",
        ));
    };
    let (_, tasks) = inner.open_groups.remove(at);
    drop(inner);
    if s.graph.invalid.load(Ordering::Acquire) {
        return Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
            "the capture of this stream was invalidated: the task group is dropped",
        ));
    }
    let h = GROUPS.insert(Group { graph: Arc::downgrade(&s.graph), tasks });
    sync::lock(&s.graph.inner).groups.push(h);
    Ok(h)
}

/// `aclmdlRICaptureTaskUpdateBegin`: the work submitted to `stream` until the update's end
/// replaces the tasks of `group`, one for one.
pub fn update_begin(stream: &Stream, group: Arc<Group>) -> AclResult<()> {
    if stream.is_capturing() {
        return Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURED,
            "the stream is captured, bound to a model or already updating a task group: use another stream",
        ));
    }
    if group.graph.upgrade().is_none() {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "the task group's model was destroyed"));
    }
    stream.set_recorder(Some(Arc::new(UpdateSink { group, collected: Mutex::new(Vec::new()) })));
    Ok(())
}

/// `aclmdlRICaptureTaskUpdateEnd`: applies the update begun on `stream`: the new tasks must
/// match the group's in number and type (107040 otherwise, nothing changed).
pub fn update_end(stream: &Stream) -> AclResult<()> {
    let r = stream.recorder().ok_or_else(no_update)?;
    let Some(u) = r.as_any().downcast_ref::<UpdateSink>() else {
        return Err(no_update());
    };
    stream.set_recorder(None);
    let new = std::mem::take(&mut *sync::lock(&u.collected));
    let old = &u.group.tasks;
    let matches = new.len() == old.len() && new.iter().zip(old).all(|((i, _), t)| i.kind == t.kind());
    if !matches {
        return Err(AclError::new(
            ACL_ERROR_RT_MODEL_UPDATE_FAILED,
            format!(
                "the update submitted {} task(s) but the group holds {} (of the same types, in the same order): \
                 nothing was changed",
                new.len(),
                old.len()
            ),
        ));
    }
    for ((info, op), t) in new.into_iter().zip(old) {
        t.replace(info, op);
    }
    if let Some(g) = u.group.graph.upgrade() {
        g.touch();
    }
    Ok(())
}

fn no_update() -> AclError {
    AclError::new(
        ACL_ERROR_STREAM_TASK_GROUP_STATUS,
        "the stream is not updating a task group: begin with aclmdlRICaptureTaskUpdateBegin",
    )
}
