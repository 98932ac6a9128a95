//! Where a captured stream's work goes: [`Sink`] appends it to a graph (a capture, or a stream
//! bound to a model being built), [`UpdateSink`] collects the new tasks of a task-group update.

use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use super::graph::{Graph, Group, ModelStream, State};
use crate::error::rt_codes::{
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
};
use crate::error::{AclError, AclResult};
use crate::runtime::context::STREAMS;
use crate::runtime::event::{Event, JoinCapture};
use crate::runtime::stream::Stream;
use crate::runtime::task::{Op, Params, Recorder, TaskInfo, TaskType};
use crate::sync;

pub struct Sink {
    pub graph: Arc<Graph>,
    pub stream: Arc<ModelStream>,
    /// A stream bound with `aclmdlRIBindStream` rather than captured.
    pub build: bool,
}

impl Recorder for Sink {
    fn record(&self, info: TaskInfo, op: Op) -> AclResult<()> {
        if self.graph.invalid.load(Ordering::Acquire) {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                "the stream's capture was invalidated by an earlier error: end it (aclmdlRICaptureEnd) and capture again",
            ));
        }
        if !self.build && info.kind == TaskType::EventRecord {
            if let Params::Event { event, .. } = &info.params {
                if let Ok(e) = Arc::clone(event).downcast::<Event>() {
                    e.set_capture(Some(joiner(Arc::downgrade(&self.graph))));
                    sync::lock(&self.graph.inner).marked_events.push(e);
                }
            }
        }
        self.graph.push(self.stream.index, info, op);
        Ok(())
    }

    fn refuse(&self, what: &str) -> AclError {
        if !self.build {
            self.graph.invalid.store(true, Ordering::Release);
        }
        AclError::new(
            ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
            format!(
                "{what} cannot be recorded into a model (stream {} is captured or bound to model {}); {}",
                self.stream.stream_id,
                self.graph.id,
                if self.build { "nothing was queued" } else { "the capture is invalidated" }
            ),
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a stream waiting on an event recorded by the capture of `graph` calls: it joins the
/// capture (cross-stream capture), unless the capture is over.
fn joiner(graph: Weak<Graph>) -> JoinCapture {
    Arc::new(move |stream: &Stream| {
        let Some(graph) = graph.upgrade() else {
            return Ok(());
        };
        if !matches!(graph.state(), State::Capturing { .. }) {
            return Ok(());
        }
        let ms = graph.model_stream(stream.id, stream.handle.load(Ordering::Acquire));
        stream.set_recorder(Some(Arc::new(Sink { graph, stream: ms, build: false })));
        Ok(())
    })
}

/// Stops recording on every user stream of `graph`: each stream whose recorder is a sink of
/// `graph` goes back to running its work.
pub fn release_streams(graph: &Arc<Graph>) {
    for ms in graph.streams() {
        let Ok(s) = STREAMS.get(ms.stream_handle) else { continue };
        let ours = s
            .recorder()
            .is_some_and(|r| r.as_any().downcast_ref::<Sink>().is_some_and(|k| Arc::ptr_eq(&k.graph, graph)));
        if ours {
            s.set_recorder(None);
        }
    }
}

/// A stream updating a task group (`aclmdlRICaptureTaskUpdateBegin`): its work is collected to
/// replace the group's tasks at `aclmdlRICaptureTaskUpdateEnd`.
pub struct UpdateSink {
    pub group: Arc<Group>,
    pub collected: Mutex<Vec<(TaskInfo, Op)>>,
}

impl Recorder for UpdateSink {
    fn record(&self, info: TaskInfo, op: Op) -> AclResult<()> {
        sync::lock(&self.collected).push((info, op));
        Ok(())
    }

    fn refuse(&self, what: &str) -> AclError {
        AclError::new(
            ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
            format!("{what} cannot replace a task of a task group (the stream is updating one)"),
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// 107029: the stream is not captured.
pub(crate) fn not_captured() -> AclError {
    AclError::new(
        ACL_ERROR_RT_STREAM_NOT_CAPTURED,
        "the stream is not being captured: begin with aclmdlRICaptureBegin",
    )
}

/// The capture sink of `stream`, or 107029.
pub(crate) fn capture_sink(stream: &Stream) -> AclResult<Arc<dyn crate::runtime::task::Recorder>> {
    let r = stream.recorder().ok_or_else(not_captured)?;
    match r.as_any().downcast_ref::<Sink>() {
        Some(s) if !s.build => Ok(r),
        _ => Err(not_captured()),
    }
}

/// The sink behind a recorder [`capture_sink`] returned.
pub(crate) fn sink(r: &Arc<dyn crate::runtime::task::Recorder>) -> &Sink {
    r.as_any().downcast_ref::<Sink>().expect("checked by capture_sink")
}
