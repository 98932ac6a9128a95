//! Stream capture and replay (`aclmdlRI*`): between `aclmdlRICaptureBegin` and
//! `aclmdlRICaptureEnd` the work submitted to a stream is recorded into a graph instead of run
//! (the stream hands it to a [`sink::Sink`]); `aclmdlRIExecuteAsync` then runs the recorded
//! work again, as one task of any stream ([`replay`]). docs/capture.md says what is recorded,
//! what is refused, and our choices where the vendor is silent.
//!
//! - [`graph`]: the graph (model run instance), its tasks, streams and task groups;
//! - [`mode`]: capture modes and the thread exchange mode;
//! - [`sink`]: where a captured stream's work goes;
//! - [`replay`]: running a graph, conditional tasks;
//! - [`group`]: task groups and their updates; [`build`]: models built from bound streams;
//! - [`cond`], [`conditional`]: condition handles and conditional tasks;
//! - [`print`]: `aclmdlRIDebugPrint` and `aclmdlRIDebugJsonPrint`.
//!
//! This file: beginning and ending a capture, running, aborting and destroying a model.

pub mod build;
pub mod cond;
pub mod conditional;
pub mod graph;
pub mod group;
pub mod mode;
pub mod print;
pub mod replay;
pub mod sink;

pub use build::{bind, build_end, end_task, persistent_clean, unbind};
pub use conditional::{add_cond_task, cond_create};
pub use group::{group_begin, group_end, update_begin, update_end};

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use graph::{Graph, MODELS, State};
use sink::{Sink, capture_sink, not_captured, sink};

use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::runtime::stream::Stream;
use crate::runtime::task::{Params, TaskType};
use crate::sync;

/// The device of the live model whose id (`aclmdlRIGetId`'s number) is `id`, if there is one.
pub fn model_device(id: u32) -> Option<i32> {
    MODELS.live_where(|g| g.id == id).first().map(|g| g.device)
}

/// `aclmdlRICaptureStatus`.
pub const STATUS_NONE: u32 = 0;
pub const STATUS_ACTIVE: u32 = 1;
pub const STATUS_INVALIDATED: u32 = 2;

/// `aclmdlRICaptureBegin` / `aclmdlRICaptureToModelRIBegin`: `stream`'s work is recorded from
/// now on, into `into` (an empty branch graph) or a new graph of `context` on `device`.
pub fn begin(
    stream: &Stream,
    mode: u32,
    into: Option<Arc<Graph>>,
    device: i32,
    context: u64,
) -> AclResult<Arc<Graph>> {
    mode::check(mode)?;
    if stream.is_capturing() {
        return Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURED,
            "the stream is already captured, bound to a model or updating a task group",
        ));
    }
    let thread = crate::sys::thread_id();
    let graph = match into {
        Some(g) => {
            if g.state() != State::Empty {
                return Err(AclError::new(
                    ACL_ERROR_RT_MODEL_CAPTURED,
                    "the model was captured or built already: capture into a branch model from aclmdlRIAddCondTask \
                     that has not been captured yet",
                ));
            }
            g.set_state(State::Capturing { thread, mode });
            g
        }
        None => Graph::create(State::Capturing { thread, mode }, device, context),
    };
    let token = mode::enter(context, thread, mode, Arc::clone(&graph.invalid));
    sync::lock(&graph.inner).mode_token = Some(token);
    let ms = graph.model_stream(stream.id, stream.handle.load(Ordering::Acquire));
    stream.set_recorder(Some(Arc::new(Sink { graph: Arc::clone(&graph), stream: ms, build: false })));
    Ok(graph)
}

/// `aclmdlRICaptureGetInfo`: the stream's capture status and its graph.
pub fn info(stream: &Stream) -> (u32, Option<Arc<Graph>>) {
    match capture_sink(stream) {
        Ok(r) => {
            let g = Arc::clone(&sink(&r).graph);
            let status = if g.invalid.load(Ordering::Acquire) { STATUS_INVALIDATED } else { STATUS_ACTIVE };
            (status, Some(g))
        }
        Err(_) => (STATUS_NONE, None),
    }
}

/// Ends the capture of `graph` on every stream, clears its marks and mode registration.
fn finish(graph: &Arc<Graph>) {
    sink::release_streams(graph);
    let mut inner = sync::lock(&graph.inner);
    for e in inner.marked_events.drain(..) {
        e.set_capture(None);
    }
    if let Some(t) = inner.mode_token.take() {
        mode::exit(t);
    }
}

/// Destroys a graph whose capture failed: its handle goes (the C caller never got it from the
/// end).
fn discard(graph: &Arc<Graph>) {
    graph.set_state(State::Empty);
    let _ = MODELS.remove(graph.handle.load(Ordering::Acquire));
}

/// `aclmdlRICaptureEnd`: ends the capture `stream` began and returns its graph, ready to run.
pub fn end(stream: &Stream) -> AclResult<Arc<Graph>> {
    let r = capture_sink(stream)?;
    let s = sink(&r);
    let graph = Arc::clone(&s.graph);
    if s.stream.index != 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
            "the capture was not begun on this stream (it joined it by waiting on a captured event): end it on \
             the stream given to aclmdlRICaptureBegin",
        ));
    }
    let State::Capturing { thread, mode } = graph.state() else {
        return Err(not_captured());
    };
    stream.set_recorder(None);
    finish(&graph);
    let fail = |e: AclError| {
        if graph.parent_is_none() {
            discard(&graph);
        } else {
            graph.reset_branch();
        }
        Err(e)
    };
    if thread != crate::sys::thread_id() && mode != mode::RELAXED {
        return fail(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
            "the capture was begun by another thread in a mode other than RELAXED: end it on that thread; the \
             capture is discarded",
        ));
    }
    if graph.invalid.load(Ordering::Acquire) {
        return fail(AclError::new(
            ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
            "the capture was invalidated by an earlier error (a call it could not hold); it is discarded: \
             capture again",
        ));
    }
    let children = sync::lock(&graph.inner).children.clone();
    if children.iter().any(|c| matches!(c.state(), State::Capturing { .. })) {
        return fail(AclError::new(
            ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
            "a branch model of a conditional task is still being captured: end its capture first",
        ));
    }
    if let Some(unjoined) = unjoined_stream(&graph) {
        return fail(AclError::new(
            ACL_ERROR_RT_STREAM_UNJOINED,
            format!(
                "stream {unjoined} joined the capture through an event but its work does not end with an event \
                 record that a later task of another stream waits on: join it back before ending the capture"
            ),
        ));
    }
    graph.set_state(State::Ready);
    graph.touch();
    Ok(graph)
}

/// A stream that joined the capture and did not join back: its last task is not an event
/// record waited on later by another stream.
fn unjoined_stream(graph: &Graph) -> Option<u32> {
    let tasks = graph.tasks();
    for ms in graph.streams().iter().skip(1) {
        let Some(last) = tasks.iter().rev().find(|t| t.stream == ms.index) else { continue };
        let joined_back = match (last.kind(), last.info().params) {
            (TaskType::EventRecord, Params::Event { event, .. }) => tasks.iter().any(|t| {
                t.seq > last.seq
                    && t.stream != ms.index
                    && t.kind() == TaskType::EventWait
                    && matches!(t.info().params, Params::Event { event: ref e, .. }
                        if Arc::as_ptr(e).cast::<()>() == Arc::as_ptr(&event).cast::<()>())
            }),
            _ => false,
        };
        if !joined_back {
            return Some(ms.stream_id);
        }
    }
    None
}

/// `aclmdlRIExecute`: runs `graph` and waits for it, at most `timeout` (`None`: no limit).
pub fn execute(graph: &Arc<Graph>, timeout: Option<Duration>) -> AclResult<()> {
    graph.check_runnable()?;
    let stream = {
        let mut s = sync::lock(&graph.exec_stream);
        match &*s {
            Some(s) => Arc::clone(s),
            None => {
                let made = Arc::new(Stream::new(graph.device, graph.context)?);
                *s = Some(Arc::clone(&made));
                made
            }
        }
    };
    replay::launch(graph, &stream)?;
    stream.synchronize(timeout).map_err(|e| {
        if e.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT {
            AclError::new(
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                format!("{}; the run goes on (aclmdlRIAbort stops it)", e.message),
            )
        } else {
            e
        }
    })
}

/// `aclmdlRIAbort`: runs of the model queued so far stop at their next task (a task that
/// waits is cancelled; a run not started does nothing). Runs queued later are not affected.
pub fn abort(graph: &Graph) {
    graph.aborts.fetch_add(1, Ordering::AcqRel);
}

/// `aclmdlRIDestroy`: the handle goes; the graph's resources (and its destroy callbacks) go
/// once its queued runs are done. 107026 while it is being captured.
pub fn destroy(handle: u64) -> AclResult<()> {
    let g = Graph::resolve(handle, "modelRI")?;
    if matches!(g.state(), State::Capturing { .. }) {
        return Err(AclError::new(
            ACL_ERROR_RT_MODEL_CAPTURED,
            "the model is being captured: end the capture (aclmdlRICaptureEnd) before destroying it",
        ));
    }
    drop(g);
    Graph::release(handle, "modelRI")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::task::TaskInfo;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn recorded_work_replays_as_one_task_and_a_one_shot_task_invalidates() {
        let ctx = 0xCAFE_0001;
        let s = Stream::new(0, ctx).unwrap();
        let g = begin(&s, mode::RELAXED, None, 0, ctx).unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        for _ in 0..10 {
            let r = Arc::clone(&ran);
            s.submit_op(TaskInfo::plain("count"), move |_| {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(ran.load(Ordering::SeqCst), 0, "recorded, not run");
        assert!(Arc::ptr_eq(&end(&s).unwrap(), &g));
        for round in 1..=3 {
            replay::launch(&g, &s).unwrap();
            assert!(s.pending() <= 1, "a replay is one task");
            s.synchronize(Some(Duration::from_secs(10))).unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 10 * round);
        }
        // A one-shot task cannot be recorded: refused, and the capture is invalidated.
        let g = begin(&s, mode::RELAXED, None, 0, ctx).unwrap();
        let e = s.submit(Box::new(|_| Ok(()))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
        assert_eq!(info(&s).0, STATUS_INVALIDATED);
        assert_eq!(end(&s).err().map(|e| e.code), Some(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED));
        assert!(MODELS.get(g.handle.load(Ordering::Acquire)).is_err(), "the failed capture's model is gone");
        s.submit(Box::new(|_| Ok(()))).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
    }
}
