//! Models built from bound streams (`aclmdlRIBuildBegin`, `aclmdlRIBindStream`,
//! `aclmdlRIEndTask`, `aclmdlRIBuildEnd`, `aclmdlRIUnbindStream`) and `aclrtPersistentTaskClean`:
//! a bound stream's work is recorded into the model as a captured stream's is.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::graph::{Graph, State};
use super::sink::Sink;
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::runtime::stream::Stream;

/// `aclmdlRIBindStream`: the stream's work goes into `graph` (being built) until unbound.
pub fn bind(graph: &Arc<Graph>, stream: &Stream) -> AclResult<()> {
    if graph.state() != State::Building {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "streams are bound to a model between aclmdlRIBuildBegin and aclmdlRIBuildEnd",
        ));
    }
    if stream.is_capturing() {
        return Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURED,
            "the stream is captured, bound to a model or updating a task group",
        ));
    }
    let ms = graph.model_stream(stream.id, stream.handle.load(Ordering::Acquire));
    stream.set_recorder(Some(Arc::new(Sink { graph: Arc::clone(graph), stream: ms, build: true })));
    Ok(())
}

/// The build sink binding `stream` to `graph`, or 107005.
fn bound_to(graph: &Arc<Graph>, stream: &Stream) -> AclResult<u32> {
    stream
        .recorder()
        .and_then(|r| {
            r.as_any()
                .downcast_ref::<Sink>()
                .filter(|s| s.build && Arc::ptr_eq(&s.graph, graph))
                .map(|s| s.stream.index)
        })
        .ok_or_else(|| {
            AclError::new(
                ACL_ERROR_RT_STREAM_MODEL,
                "the stream is not bound to this model (aclmdlRIBindStream)",
            )
        })
}

/// `aclmdlRIUnbindStream`.
pub fn unbind(graph: &Arc<Graph>, stream: &Stream) -> AclResult<()> {
    bound_to(graph, stream)?;
    stream.set_recorder(None);
    Ok(())
}

/// `aclmdlRIEndTask`: marks the end of a bound stream's tasks (a task that does nothing).
pub fn end_task(graph: &Arc<Graph>, stream: &Stream) -> AclResult<()> {
    let index = bound_to(graph, stream)?;
    let op = crate::runtime::task::Op::Run(Arc::new(|_: &crate::runtime::task::TaskCtx| Ok(())));
    graph.push(index, crate::runtime::task::TaskInfo::plain("end of graph"), op);
    Ok(())
}

/// `aclmdlRIBuildEnd`: the model may run.
pub fn build_end(graph: &Arc<Graph>) -> AclResult<()> {
    if graph.state() != State::Building {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "the model is not being built (aclmdlRIBuildBegin)",
        ));
    }
    graph.set_state(State::Ready);
    graph.touch();
    Ok(())
}

/// `aclrtPersistentTaskClean`: drops the tasks a stream bound to a model recorded there.
pub fn persistent_clean(stream: &Stream) -> AclResult<()> {
    let Some(r) = stream.recorder() else {
        // Nothing is kept on a stream that is not bound: its tasks are gone once run.
        return Ok(());
    };
    match r.as_any().downcast_ref::<Sink>() {
        Some(s) if s.build => {
            s.graph.clean_stream(s.stream.index);
            Ok(())
        }
        _ => Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURED,
            "the stream is being captured or is updating a task group: its tasks are not persistent ones",
        )),
    }
}
