//! What a stream's queue holds: a task closure, or one of the small tasks that are queued and
//! run without a heap allocation of their own.
//!
//! Event records and waits are most of what a synchronising stream runs (an IPC event
//! ping-pong is nothing else). Between a wait ending and the record after it, a boxed closure
//! would cost an indirect call and the free of the wait's box on the path of every wake-up (a
//! free that, with other streams of the process doing the same, takes the allocator's lock in
//! turn with them). As plain values in the queue they cost neither. Jobs run where they lie in
//! the stream's batch and what is left of them (a reference to their event) is dropped with
//! the batch, not between one task and the next.
//!
//! The event is reached through [`EventJobs`], which `event::Event` implements: the stream and
//! this module stay below the event module.

use std::sync::Arc;
use std::time::Duration;

use super::task::{RunFn, Task, TaskCtx};
use crate::error::AclResult;

pub enum Job {
    /// A one-shot closure (`None` once run).
    Once(Option<Task>),
    /// A closure shared with a graph that holds the same work (`Op::Run`).
    Shared(Arc<RunFn>),
    /// An event record.
    Record(Record),
    /// A wait on an event.
    Wait(Wait),
}

impl Job {
    /// Runs the job (the stream runs each once, where it lies in its batch).
    pub fn run(&mut self, ctx: &TaskCtx) -> AclResult<()> {
        match self {
            Job::Once(task) => task.take().map_or(Ok(()), |task| task(ctx)),
            Job::Shared(f) => f(ctx),
            Job::Record(record) => {
                record.run();
                Ok(())
            }
            Job::Wait(wait) => wait.run(ctx),
        }
    }
}

/// What an event does for the records and waits queued on it.
pub trait EventJobs: Send + Sync {
    /// Record `seq` (`shared`: its sequence in an IPC event's shared cell) has run.
    fn record_ran(&self, seq: u64, shared: Option<u32>);
    /// Record `seq` was dropped without having run (its stream was aborted or destroyed).
    fn record_discarded(&self, seq: u64, shared: Option<u32>);
    /// Waits until record `target` (`shared`, as above) has run, at most `timeout`.
    fn wait(
        &self,
        target: u64,
        shared: Option<u32>,
        timeout: Option<Duration>,
        ctx: &TaskCtx,
    ) -> AclResult<()>;
    /// A wait queued on the event has ended, run or not.
    fn wait_ended(&self);
}

/// A queued record: dropped without having run, it tells its event so.
pub struct Record {
    event: Arc<dyn EventJobs>,
    seq: u64,
    shared: Option<u32>,
    ran: bool,
}

impl Record {
    pub fn new(event: Arc<dyn EventJobs>, seq: u64, shared: Option<u32>) -> Record {
        Record { event, seq, shared, ran: false }
    }

    pub fn run(&mut self) {
        self.ran = true;
        self.event.record_ran(self.seq, self.shared);
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if !self.ran {
            self.event.record_discarded(self.seq, self.shared);
        }
    }
}

/// A queued wait for the latest record queued before it; it ends once run, or when dropped
/// without having run.
pub struct Wait {
    event: Arc<dyn EventJobs>,
    target: u64,
    shared: Option<u32>,
    timeout: Option<Duration>,
    ended: bool,
}

impl Wait {
    pub fn new(
        event: Arc<dyn EventJobs>,
        target: u64,
        shared: Option<u32>,
        timeout: Option<Duration>,
    ) -> Wait {
        Wait { event, target, shared, timeout, ended: false }
    }

    pub fn run(&mut self, ctx: &TaskCtx) -> AclResult<()> {
        let result = self.event.wait(self.target, self.shared, self.timeout, ctx);
        self.ended = true;
        self.event.wait_ended();
        result
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        if !self.ended {
            self.event.wait_ended();
        }
    }
}
