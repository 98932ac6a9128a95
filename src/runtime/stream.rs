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
//! # Abort
//! [`Stream::abort`] (`aclrtStreamAbort`) discards the queued tasks, cancels the running one
//! and releases the threads synchronising with the stream (107023); the stream then takes new
//! work. An abort is an *epoch*: a task taken before it sees itself cancelled, tasks of its
//! batch not yet started are dropped, and errors they leave are not reported; tasks queued
//! after it run normally, so the stream needs no reset that could race with them.
//!
//! The worker is a one-worker [`Pool`] of the stream's own: a task may wait for another
//! stream's task, so streams sharing workers could all wait on a task none is free to run.
//! The pool runs a *drain* job while the stream has tasks; the stream's queue, not the pool's,
//! holds the tasks, so a drain takes them in batches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::rt_codes::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_WAIT_TIMEOUT,
};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync::{self, Pool, PoolOptions};

/// What a running task may ask of its stream.
pub struct TaskCtx<'a> {
    cancel: &'a AtomicBool,
    aborts: &'a AtomicU64,
    /// The abort epoch the task was taken in.
    epoch: u64,
}

impl TaskCtx<'_> {
    /// True once the stream is being destroyed with tasks still pending, or aborted since the
    /// task was taken.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire) || self.aborts.load(Ordering::Acquire) != self.epoch
    }
}

pub type Task = Box<dyn FnOnce(&TaskCtx) -> AclResult<()> + Send>;

/// How long a waiting task sleeps between checks of its cancellation flag.
pub const CANCEL_POLL: Duration = Duration::from_millis(20);

/// How long [`Stream::abort`] waits for the running task to end (the vendor's bound).
pub const ABORT_TIMEOUT: Duration = Duration::from_secs(60);

/// `aclrtCreateStreamWithConfig` flags (the vendor's `ACL_STREAM_*` values).
pub mod flags {
    pub const FAST_LAUNCH: u32 = 0x01;
    pub const FAST_SYNC: u32 = 0x02;
    pub const PERSISTENT: u32 = 0x04;
    pub const HUGE: u32 = 0x08;
    pub const CPU_SCHEDULE: u32 = 0x10;
    pub const DEVICE_USE_ONLY: u32 = 0x20;
    /// Every flag the vendor knows; other bits are ignored, as the vendor does.
    pub const KNOWN: u32 = FAST_LAUNCH | FAST_SYNC | PERSISTENT | HUGE | CPU_SCHEDULE | DEVICE_USE_ONLY;
}

struct Queue {
    tasks: VecDeque<Task>,
    submitted: u64,
    completed: u64,
    first_error: Option<AclError>,
    closed: bool,
    /// A drain job is queued or running on the worker; it takes every task queued before it
    /// ends, so a submit schedules one only when none is.
    draining: bool,
    /// Aborts under way: new tasks are refused and synchronising threads released.
    aborting: u32,
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
    /// Aborts so far: the epoch (see the module doc).
    aborts: AtomicU64,
}

/// A stream of one context.
pub struct Stream {
    shared: Arc<Shared>,
    worker: Pool,
    /// The context the stream belongs to (its handle value).
    pub context: u64,
    pub device: i32,
    /// The `ACL_STREAM_*` flags it was created with (known bits only).
    pub flags: u32,
}

impl Stream {
    pub fn new(device: i32, context: u64) -> AclResult<Stream> {
        Stream::with_flags(device, context, 0)
    }

    /// A stream created with `ACL_STREAM_*` `flags` (already checked by the caller).
    pub fn with_flags(device: i32, context: u64, flags: u32) -> AclResult<Stream> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                submitted: 0,
                completed: 0,
                first_error: None,
                closed: false,
                draining: false,
                aborting: 0,
                awaited: Vec::new(),
            }),
            done: Condvar::new(),
            cancel: AtomicBool::new(false),
            aborts: AtomicU64::new(0),
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
        Ok(Stream { shared, worker, context, device, flags: flags & flags::KNOWN })
    }

    /// Queues `task` behind every task submitted before it.
    pub fn submit(&self, task: Task) -> AclResult<()> {
        let mut q = sync::lock(&self.shared.queue);
        if q.closed {
            return Err(AclError::new(ACL_ERROR_RT_INVALID_HANDLE, "the stream has been destroyed"));
        }
        if q.aborting > 0 {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_ABORT,
                "the stream is being aborted (aclrtStreamAbort); submit the task again once the abort returns",
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
        if q.aborting > 0 {
            return Err(aborted());
        }
        let epoch = self.shared.aborts.load(Ordering::Acquire);
        let target = q.submitted;
        if q.completed < target {
            q.awaited.push(target);
        }
        let mut timed_out = false;
        while q.completed < target && self.shared.aborts.load(Ordering::Acquire) == epoch {
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
        if self.shared.aborts.load(Ordering::Acquire) != epoch {
            return Err(aborted());
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

    /// `aclrtStreamAbort`: discards the queued tasks, cancels the running one and releases
    /// the synchronising threads (107023), waiting at most `timeout` for the running task to
    /// end (107019 after). Tasks submitted while it runs are refused (107023); afterwards the
    /// stream runs new work as before, and no error of the discarded work is reported.
    pub fn abort(&self, timeout: Duration) -> AclResult<()> {
        let deadline = Instant::now() + timeout;
        let mut q = sync::lock(&self.shared.queue);
        if q.closed {
            return Err(AclError::new(ACL_ERROR_RT_INVALID_HANDLE, "the stream has been destroyed"));
        }
        q.aborting += 1;
        // Under the queue's lock: a drain taking its next batch sees the new epoch.
        self.shared.aborts.fetch_add(1, Ordering::AcqRel);
        let discarded = std::mem::take(&mut q.tasks);
        let dropped = discarded.len() as u64;
        q.completed += dropped;
        q.first_error = None;
        let target = q.submitted;
        if q.completed < target {
            q.awaited.push(target);
        }
        self.shared.done.notify_all();
        // The discarded tasks are dropped outside the lock: what they hold may have work to
        // do when released (an event's record tells its waiters).
        drop(q);
        drop(discarded);
        let mut q = sync::lock(&self.shared.queue);
        let mut timed_out = false;
        while q.completed < target {
            let now = Instant::now();
            if now >= deadline {
                timed_out = true;
                break;
            }
            q = sync::wait_timeout(&self.shared.done, q, deadline - now).0;
        }
        if let Some(i) = q.awaited.iter().position(|&t| t == target) {
            q.awaited.swap_remove(i);
        }
        q.first_error = None;
        q.aborting -= 1;
        if timed_out {
            return Err(AclError::new(
                ACL_ERROR_RT_WAIT_TIMEOUT,
                format!(
                    "stream abort: the running task did not end within {} ms; it was told to stop and \
                     its result will be ignored, and later tasks run after it",
                    timeout.as_millis()
                ),
            ));
        }
        log::debug!(target: TARGET, "stream aborted: {dropped} queued task(s) discarded");
        Ok(())
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

fn aborted() -> AclError {
    AclError::new(
        ACL_ERROR_RT_STREAM_ABORT,
        "the stream was aborted (aclrtStreamAbort) while this call waited on it",
    )
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
        // Read under the queue's lock, which an abort holds while it moves to the next epoch.
        let epoch = shared.aborts.load(Ordering::Acquire);
        drop(q);
        let ctx = TaskCtx { cancel: &shared.cancel, aborts: &shared.aborts, epoch };
        let mut first_error = None;
        let ran = batch.len() as u64;
        for task in batch.drain(..) {
            if shared.aborts.load(Ordering::Acquire) != epoch {
                // Aborted: the rest of the batch is discarded, not run.
                continue;
            }
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task(&ctx)))
                .unwrap_or_else(|_| {
                    Err(AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "a stream task panicked"))
                });
            match result {
                Ok(()) => {}
                Err(e) if shared.aborts.load(Ordering::Acquire) != epoch => {
                    log::debug!(target: TARGET, "aborted stream task ended: {}", e.message);
                }
                Err(e) => {
                    log::error!(target: TARGET, "stream task failed: {}", e.message);
                    first_error.get_or_insert(e);
                }
            }
        }
        q = sync::lock(&shared.queue);
        q.completed += ran;
        if let Some(e) = first_error.filter(|_| shared.aborts.load(Ordering::Acquire) == epoch) {
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

    /// A task that blocks until cancelled, and a flag telling it has started.
    fn blocker(started: &Arc<AtomicBool>) -> Task {
        let started = Arc::clone(started);
        Box::new(move |ctx| {
            started.store(true, Ordering::SeqCst);
            while !ctx.cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "cancelled"))
        })
    }

    fn wait_for(flag: &AtomicBool) {
        let start = Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(10), "the task never started");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn abort_discards_queued_tasks_cancels_the_running_one_and_the_stream_goes_on() {
        let s = Arc::new(Stream::new(0, 1).unwrap());
        let started = Arc::new(AtomicBool::new(false));
        s.submit(blocker(&started)).unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        for _ in 0..5 {
            let r = Arc::clone(&ran);
            s.submit(Box::new(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        wait_for(&started);
        let waiter = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.synchronize(None))
        };
        std::thread::sleep(Duration::from_millis(100));
        s.abort(Duration::from_secs(10)).unwrap();
        assert_eq!(waiter.join().unwrap().unwrap_err().code, ACL_ERROR_RT_STREAM_ABORT);
        assert_eq!(s.pending(), 0);
        assert_eq!(ran.load(Ordering::SeqCst), 0, "queued tasks were discarded");
        // The stream takes new work, and the cancelled task's error is not reported.
        let r = Arc::clone(&ran);
        s.submit(Box::new(move |_| {
            r.fetch_add(10, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 10);
    }

    #[test]
    fn abort_drops_the_rest_of_a_batch_already_taken() {
        let s = Stream::new(0, 1).unwrap();
        let started = Arc::new(AtomicBool::new(false));
        let ran = Arc::new(AtomicU64::new(0));
        // The worker is held in a first batch while the next tasks queue up, so it takes
        // them in one batch of its own.
        let gate = Arc::new(AtomicBool::new(false));
        let g = Arc::clone(&gate);
        s.submit(Box::new(move |_| {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        s.submit(blocker(&started)).unwrap();
        for _ in 0..3 {
            let r = Arc::clone(&ran);
            s.submit(Box::new(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
            .unwrap();
        }
        gate.store(true, Ordering::SeqCst);
        wait_for(&started);
        assert_eq!(s.shared.queue.lock().unwrap().tasks.len(), 0, "all taken in one batch");
        s.abort(Duration::from_secs(10)).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_task_that_ignores_the_abort_bounds_it_and_submits_meanwhile_are_refused() {
        let s = Arc::new(Stream::new(0, 1).unwrap());
        let started = Arc::new(AtomicBool::new(false));
        let st = Arc::clone(&started);
        s.submit(Box::new(move |_| {
            st.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(600));
            Err(AclError::new(1, "late failure"))
        }))
        .unwrap();
        wait_for(&started);
        let aborter = {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.abort(Duration::from_millis(150)))
        };
        let start = Instant::now();
        while s.shared.queue.lock().unwrap().aborting == 0 {
            assert!(start.elapsed() < Duration::from_secs(10), "the abort never started");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(s.submit(Box::new(|_| Ok(()))).unwrap_err().code, ACL_ERROR_RT_STREAM_ABORT);
        assert_eq!(aborter.join().unwrap().unwrap_err().code, ACL_ERROR_RT_WAIT_TIMEOUT);
        s.submit(Box::new(|_| Ok(()))).unwrap();
        // The late task's failure belongs to the aborted epoch: not reported.
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
    }

    #[test]
    fn abort_of_an_idle_or_destroyed_stream() {
        let s = Stream::new(0, 1).unwrap();
        s.abort(Duration::from_secs(1)).unwrap();
        s.synchronize(Some(Duration::from_secs(1))).unwrap();
        s.close(false);
        assert_eq!(s.abort(Duration::from_secs(1)).unwrap_err().code, ACL_ERROR_RT_INVALID_HANDLE);
    }
}
