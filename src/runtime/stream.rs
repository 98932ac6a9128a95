//! Streams: in-order queues of tasks run asynchronously by one worker thread per stream.
//!
//! A task is a closure that returns `Ok` or an error. Tasks run in submission order; a failed
//! task does not stop the ones after it (as on the device, where later tasks still execute),
//! but its error is kept and the next synchronisation reports it (the first one, then clears
//! it, so the stream stays usable).
//!
//! Tasks that wait (on an event, a notify) check [`TaskCtx::cancelled`], so destroying a stream
//! or resetting its device never leaves a worker blocked forever.
//!
//! The worker is a one-worker [`Pool`] of the stream's own: a task may wait for another
//! stream's task, so streams sharing workers could all wait on a task none is free to run.
//! The pool runs a *drain* job while the stream has tasks; the stream's queue, not the pool's,
//! holds the tasks, so a drain takes them in batches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::rt_codes::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync::{self, Pool, PoolOptions};

/// What a running task may ask of its stream.
pub struct TaskCtx<'a> {
    cancel: &'a AtomicBool,
}

impl TaskCtx<'_> {
    /// True once the stream is being destroyed with tasks still pending.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }
}

pub type Task = Box<dyn FnOnce(&TaskCtx) -> AclResult<()> + Send>;

/// How long a waiting task sleeps between checks of its cancellation flag.
pub const CANCEL_POLL: Duration = Duration::from_millis(20);

struct Queue {
    tasks: VecDeque<Task>,
    submitted: u64,
    completed: u64,
    first_error: Option<AclError>,
    closed: bool,
    /// A drain job is queued or running on the worker; it takes every task queued before it
    /// ends, so a submit schedules one only when none is.
    draining: bool,
    /// Completion counts that synchronising threads are waiting for. The worker signals `done`
    /// only when the lowest is reached, not after every task: a wake-up is a system call, and
    /// a stream running thousands of small tasks (a notify ping-pong) would pay one per task.
    awaited: Vec<u64>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a task completes.
    done: Condvar,
    cancel: AtomicBool,
}

/// A stream of one context.
pub struct Stream {
    shared: Arc<Shared>,
    worker: Pool,
    /// The context the stream belongs to (its handle value).
    pub context: u64,
    pub device: i32,
}

impl Stream {
    pub fn new(device: i32, context: u64) -> AclResult<Stream> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                submitted: 0,
                completed: 0,
                first_error: None,
                closed: false,
                draining: false,
                awaited: Vec::new(),
            }),
            done: Condvar::new(),
            cancel: AtomicBool::new(false),
        });
        let worker = Pool::new(PoolOptions {
            name: format!("acl-stream-d{device}"),
            min_workers: 1,
            max_workers: 1,
            // At most one drain job is queued (see `Queue::draining`); the tasks themselves
            // are not bounded, as on the device.
            capacity: 1,
            idle_exit: None,
        })
        .map_err(|e| {
            AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, format!("cannot start a stream worker thread: {e}"))
        })?;
        Ok(Stream { shared, worker, context, device })
    }

    /// Queues `task` behind every task submitted before it.
    pub fn submit(&self, task: Task) -> AclResult<()> {
        let mut q = sync::lock(&self.shared.queue);
        if q.closed {
            return Err(AclError::new(
                crate::error::rt_codes::ACL_ERROR_RT_INVALID_HANDLE,
                "the stream has been destroyed",
            ));
        }
        q.tasks.push_back(task);
        q.submitted += 1;
        if !q.draining {
            // Scheduled under the queue's lock, so `close` cannot stop the worker between the
            // task being queued and its drain being scheduled.
            let shared = Arc::clone(&self.shared);
            if let Err(e) = self.worker.submit(Box::new(move || drain(&shared))) {
                q.tasks.pop_back();
                q.submitted -= 1;
                return Err(AclError::new(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("the stream worker refused a task: {e}"),
                ));
            }
            q.draining = true;
        }
        Ok(())
    }

    /// Waits until every task submitted before this call has run, then reports (and clears)
    /// the first task failure since the last synchronisation. `None` waits without limit.
    pub fn synchronize(&self, timeout: Option<Duration>) -> AclResult<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut q = sync::lock(&self.shared.queue);
        let target = q.submitted;
        if q.completed < target {
            q.awaited.push(target);
        }
        let mut timed_out = false;
        while q.completed < target {
            q = match deadline {
                None => sync::wait(&self.shared.done, q),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        timed_out = true;
                        break;
                    }
                    sync::wait_timeout(&self.shared.done, q, d - now).0
                }
            };
        }
        if let Some(i) = q.awaited.iter().position(|&t| t == target) {
            q.awaited.swap_remove(i);
        }
        if timed_out {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                format!(
                    "stream synchronisation timed out after {} ms with {} task(s) pending",
                    timeout.unwrap_or_default().as_millis(),
                    target - q.completed
                ),
            ));
        }
        q.first_error.take().map_or(Ok(()), Err)
    }

    /// Tasks submitted and not yet completed.
    pub fn pending(&self) -> u64 {
        let q = sync::lock(&self.shared.queue);
        q.submitted - q.completed
    }

    /// Stops the stream. Without `force`, pending tasks run first; with `force`, they are
    /// dropped and running waits are cancelled. Idempotent.
    pub fn close(&self, force: bool) {
        {
            let mut q = sync::lock(&self.shared.queue);
            if force {
                let dropped = q.tasks.len() as u64;
                q.tasks.clear();
                q.completed += dropped;
                self.shared.cancel.store(true, Ordering::Release);
            }
            q.closed = true;
        }
        self.shared.done.notify_all();
        // A task destroying its own stream: the worker ends after this task.
        self.worker.join();
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.close(true);
    }
}

/// Tasks the worker takes from the queue at once.
const BATCH: usize = 64;

/// The worker's job: runs the stream's tasks until its queue is empty.
fn drain(shared: &Shared) {
    // The worker takes up to BATCH queued tasks under one lock and reports their completion
    // under the next, so a stream of many small tasks (a notify ping-pong) pays two lock
    // rounds per batch, not per task. Synchronisation only looks at the completion count, so
    // reporting a batch's completions together changes no result, only when it is seen.
    let mut batch: Vec<Task> = Vec::with_capacity(BATCH);
    let mut q = sync::lock(&shared.queue);
    loop {
        if q.tasks.is_empty() {
            q.draining = false;
            return;
        }
        let take = q.tasks.len().min(BATCH);
        batch.extend(q.tasks.drain(..take));
        drop(q);
        let ctx = TaskCtx { cancel: &shared.cancel };
        let mut first_error = None;
        let ran = batch.len() as u64;
        for task in batch.drain(..) {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(&ctx)))
                .unwrap_or_else(|_| {
                    Err(AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "a stream task panicked"))
                });
            if let Err(e) = result {
                log::error!(target: TARGET, "stream task failed: {}", e.message);
                first_error.get_or_insert(e);
            }
        }
        q = sync::lock(&shared.queue);
        q.completed += ran;
        if let Some(e) = first_error {
            q.first_error.get_or_insert(e);
        }
        if q.awaited.iter().any(|&t| q.completed >= t) {
            shared.done.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn tasks_run_in_order_and_synchronize_waits() {
        let s = Stream::new(0, 1).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let log = Arc::clone(&log);
            s.submit(Box::new(move |_| {
                log.lock().unwrap().push(i);
                Ok(())
            }))
            .unwrap();
        }
        s.synchronize(None).unwrap();
        assert_eq!(*log.lock().unwrap(), (0..100).collect::<Vec<_>>());
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn the_first_failure_is_reported_once_and_later_tasks_still_run() {
        let s = Stream::new(0, 1).unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        s.submit(Box::new(|_| Err(AclError::new(1, "first")))).unwrap();
        s.submit(Box::new(|_| Err(AclError::new(2, "second")))).unwrap();
        let r = Arc::clone(&ran);
        s.submit(Box::new(move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        assert_eq!(s.synchronize(None).unwrap_err().message, "first");
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        s.synchronize(None).unwrap();
    }

    #[test]
    fn synchronize_times_out_and_force_close_cancels_waits() {
        let s = Stream::new(0, 1).unwrap();
        s.submit(Box::new(|ctx| {
            while !ctx.cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        let e = s.synchronize(Some(Duration::from_millis(30))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        let started = Instant::now();
        s.close(true);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(s.submit(Box::new(|_| Ok(()))).is_err());
    }

    #[test]
    fn a_panicking_task_is_an_error_not_a_dead_worker() {
        let s = Stream::new(0, 1).unwrap();
        s.submit(Box::new(|_| panic!("task bug"))).unwrap();
        assert_eq!(s.synchronize(None).unwrap_err().code, ACL_ERROR_RT_INTERNAL_ERROR);
        s.submit(Box::new(|_| Ok(()))).unwrap();
        s.synchronize(None).unwrap();
    }

    #[test]
    fn close_without_force_runs_pending_tasks() {
        let s = Stream::new(0, 1).unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        for _ in 0..10 {
            let r = Arc::clone(&ran);
            s.submit(Box::new(move |_| {
                std::thread::sleep(Duration::from_millis(1));
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        s.close(false);
        assert_eq!(ran.load(Ordering::SeqCst), 10);
    }
}
