//! What a stream runs, in the two forms it comes in: a one-shot [`Task`] queued to run once,
//! and an [`Op`] that a capture (`aclmdlRICaptureBegin`) records to run at every replay.
//!
//! A leaf below `stream.rs` and `capture/`: a stream hands what it is given while capturing to
//! its [`Recorder`] (the capture's side, reached through a trait object so the stream does not
//! know the capture module), and the capture runs the recorded ops with the stream's own
//! [`TaskCtx`] when a replay reaches them.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{AclError, AclResult};

/// What a running task may ask of its stream.
pub struct TaskCtx<'a> {
    cancel: &'a AtomicBool,
    stop: &'a AtomicBool,
    aborts: &'a AtomicU64,
    /// The abort epoch the task was taken in.
    epoch: u64,
    /// A second abort counter and the epoch seen, for tasks a replay runs: aborting the model
    /// (`aclmdlRIAbort`) cancels what it is running.
    model: Option<(&'a AtomicU64, u64)>,
}

impl<'a> TaskCtx<'a> {
    pub(crate) fn new(
        cancel: &'a AtomicBool,
        stop: &'a AtomicBool,
        aborts: &'a AtomicU64,
        epoch: u64,
    ) -> Self {
        TaskCtx { cancel, stop, aborts, epoch, model: None }
    }

    /// The same context, also cancelled once `aborts` moves past `epoch`.
    pub fn with_model_abort<'b>(&'b self, aborts: &'b AtomicU64, epoch: u64) -> TaskCtx<'b> {
        TaskCtx {
            cancel: self.cancel,
            stop: self.stop,
            aborts: self.aborts,
            epoch: self.epoch,
            model: Some((aborts, epoch)),
        }
    }

    /// True once the stream is being destroyed with tasks still pending, stopped, or aborted
    /// since the task was taken (or, in a replay, the model was aborted).
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
            || self.stop.load(Ordering::Acquire)
            || self.aborts.load(Ordering::Acquire) != self.epoch
            || self.model.is_some_and(|(a, e)| a.load(Ordering::Acquire) != e)
    }
}

pub type Task = Box<dyn FnOnce(&TaskCtx) -> AclResult<()> + Send>;

/// Work a graph runs at every replay.
pub type RunFn = dyn Fn(&TaskCtx) -> AclResult<()> + Send + Sync;
/// The queue-time part of a staged op: returns the task to run.
pub type StageFn = dyn Fn() -> AclResult<Task> + Send + Sync;

/// A recorded piece of work, run at every replay of the graph that holds it.
#[derive(Clone)]
pub enum Op {
    /// Runs as recorded, each time.
    Run(Arc<RunFn>),
    /// Has a part to do when the replay is queued, not when it runs: an event record takes its
    /// sequence number then, so a thread synchronising with the event after
    /// `aclmdlRIExecuteAsync` waits for the replay's record. The closure does that part and
    /// returns the one-shot task to run.
    Staged(Arc<StageFn>),
}

/// `aclmdlRITaskType`: what a recorded task is, as the vendor's task queries report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TaskType {
    Default = 0,
    Kernel = 1,
    EventRecord = 2,
    EventWait = 3,
    EventReset = 4,
    ValueWrite = 5,
    ValueWait = 6,
}

/// The parameters of a recorded task, for `aclmdlRITaskGetParams` and the debug prints.
#[derive(Clone)]
pub enum Params {
    None,
    /// An event task: the event (an `Arc<Event>`, typed `Any` here to keep this file a leaf)
    /// and the flag of the call that made it.
    Event {
        event: Arc<dyn Any + Send + Sync>,
        event_flags: u32,
        flag: u32,
    },
    ValueWrite {
        addr: usize,
        value: u64,
    },
    ValueWait {
        addr: usize,
        value: u64,
        flag: u32,
    },
}

/// What a recorded task is: its type, a name for people and its parameters.
#[derive(Clone)]
pub struct TaskInfo {
    pub kind: TaskType,
    pub name: &'static str,
    pub params: Params,
}

impl TaskInfo {
    /// A task of the default type with nothing to report but its name.
    pub const fn plain(name: &'static str) -> TaskInfo {
        TaskInfo { kind: TaskType::Default, name, params: Params::None }
    }
}

/// Where a capturing stream's work goes instead of its queue.
pub trait Recorder: Send + Sync {
    /// Records `op` as the next task of the stream `stream_id`.
    fn record(&self, info: TaskInfo, op: Op) -> AclResult<()>;
    /// Work the graph cannot hold was submitted: the capture is invalidated and the caller
    /// gets this error (107030).
    fn refuse(&self, what: &str) -> AclError;
    /// The capture's own object, for the capture module to find its graph again.
    fn as_any(&self) -> &dyn Any;
}
