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
//! - [`cond`]: condition handles; [`print`]: `aclmdlRIDebugPrint` and `aclmdlRIDebugJsonPrint`.

pub mod cond;
pub mod graph;
pub mod mode;
pub mod print;
pub mod replay;
pub mod sink;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cond::{ASSIGN_DEFAULT, CONDS, CondHandle};
use graph::{GROUPS, Graph, Group, MODELS, State};
use sink::{Sink, UpdateSink};

use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::runtime::stream::Stream;
use crate::runtime::task::{Params, TaskType};
use crate::sync;

/// `aclmdlRICaptureStatus`.
pub const STATUS_NONE: u32 = 0;
pub const STATUS_ACTIVE: u32 = 1;
pub const STATUS_INVALIDATED: u32 = 2;

fn not_captured() -> AclError {
    AclError::new(
        ACL_ERROR_RT_STREAM_NOT_CAPTURED,
        "the stream is not being captured: begin with aclmdlRICaptureBegin",
    )
}

/// The capture sink of `stream`, or 107029.
fn capture_sink(stream: &Stream) -> AclResult<Arc<dyn crate::runtime::task::Recorder>> {
    let r = stream.recorder().ok_or_else(not_captured)?;
    match r.as_any().downcast_ref::<Sink>() {
        Some(s) if !s.build => Ok(r),
        _ => Err(not_captured()),
    }
}

fn sink(r: &Arc<dyn crate::runtime::task::Recorder>) -> &Sink {
    r.as_any().downcast_ref::<Sink>().expect("checked by capture_sink")
}

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
