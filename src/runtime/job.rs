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

use std::sync::Arc;

use super::event::{Record, Wait};
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
            Job::Record(record) => record.run(),
            Job::Wait(wait) => wait.run(ctx),
        }
    }
}
