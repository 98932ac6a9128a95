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
//! # Failure mode, stop
//! With `ACL_STOP_ON_FAILURE` (shared by every stream of a context, as the vendor) the first
//! failing task stops its stream: the tasks after it are dropped and new ones refused with the
//! failure's code. [`Stream::stop`] (`aclrtStreamStop`) stops the running task and leaves the
//! queued ones where they are, not run, until an abort discards them. Every failed task is
//! reported to the exception hooks ([`super::exception`]) with its id.
//!
//! The worker is a one-worker [`Pool`] of the stream's own: a task may wait for another
//! stream's task, so streams sharing workers could all wait on a task none is free to run.
//! The pool runs a *drain* job while the stream has tasks; the stream's queue, not the pool's,
//! holds the tasks, so a drain takes them in batches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::exception::{self, TaskFailure};
use super::job::Job;
use super::task::Recorder;
use crate::error::rt_codes::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_WAIT_TIMEOUT,
};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync::{self, Pool, PoolOptions};

pub use super::task::{Op, Task, TaskCtx, TaskInfo};

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

/// `ACL_STOP_ON_FAILURE`: the first failed task stops its stream.
pub const STOP_ON_FAILURE: u64 = 1;

/// Stream ids (`aclrtStreamGetId`), unique in the process.
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// A queued task with what an exception report says of it.
struct Queued {
    /// The n-th task submitted to the stream.
    index: u64,
    /// The kernel id of the thread that queued it.
    thread: u32,
    task: Job,
    /// The task may run on the thread synchronising with the stream (see [`Stream::synchronize`]).
    anywhere: bool,
}

/// Stream attributes (`aclrtSetStreamAttribute`) with no effect on how tasks run here; kept
/// and answered.
#[derive(Default)]
pub struct Attrs {
    pub priority: AtomicU32,
    pub overflow_check: AtomicU32,
    pub user_custom_tag: AtomicU32,
    pub cache_op_info: AtomicU32,
}

struct Queue {
    tasks: VecDeque<Queued>,
    submitted: u64,
    completed: u64,
    first_error: Option<AclError>,
    closed: bool,
    /// A drain job is queued or running on the worker; it takes every task queued before it
    /// ends, so a submit schedules one only when none is.
    draining: bool,
    /// The drain job is queued on the worker and has not started.
    job_queued: bool,
    /// Tasks are being run, by the worker or by a synchronising thread (one at a time: the
    /// order of the stream).
    running: bool,
    /// ... and it is a synchronising thread (`Stream::run_here`), not the worker.
    here: bool,
    /// Threads asleep on `Shared::done` ([`sleep_done`]): a completion wakes them only if there
    /// are some (a condition variable's notify is a system call, waiter or not).
    sleeping: u32,
    /// Aborts under way: new tasks are refused and synchronising threads released.
    aborting: u32,
    /// Completion counts that synchronising threads are waiting for. The worker signals `done`
    /// only when the lowest is reached, not after every task: a wake-up is a system call, and
    /// a stream running thousands of small tasks (a notify ping-pong) would pay one per task.
    /// The lowest not yet reached is published in [`Shared::awaited_min`].
    awaited: Vec<u64>,
    /// `aclrtStreamStop`: queued tasks wait, not run, until an abort.
    stopped: bool,
    /// The code of the failure that stopped the stream under `ACL_STOP_ON_FAILURE`.
    failed: Option<i32>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when a task completes.
    done: Condvar,
    /// The lowest completion count a synchronising thread waits for and has not seen
    /// (`u64::MAX`: none), for the worker to look at after each task without the lock.
    awaited_min: AtomicU64,
    cancel: AtomicBool,
    /// Aborts so far: the epoch (see the module doc).
    aborts: AtomicU64,
    /// Set by [`Stream::stop`], for the running task to see.
    stop: AtomicBool,
    /// `ACL_CONTINUE_ON_FAILURE` or `ACL_STOP_ON_FAILURE`, one cell for a whole context.
    failure_mode: Arc<AtomicU64>,
    id: u32,
    device: i32,
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
    /// `aclrtStreamGetId`.
    pub id: u32,
    pub attrs: Attrs,
    /// The handle the stream was given (0 until its context names it).
    pub handle: AtomicU64,
    /// Set while `recorder` is: a submit looks at this flag only, not at the lock.
    capturing: AtomicBool,
    /// Where submitted work goes while the stream is captured (`aclmdlRICaptureBegin`), bound
    /// to a model being built, or updating a task group.
    recorder: Mutex<Option<Arc<dyn Recorder>>>,
}

impl Stream {
    pub fn new(device: i32, context: u64) -> AclResult<Stream> {
        Stream::with_flags(device, context, 0)
    }

    /// A stream created with `ACL_STREAM_*` `flags` (already checked by the caller).
    pub fn with_flags(device: i32, context: u64, flags: u32) -> AclResult<Stream> {
        Stream::with_config(device, context, flags, 0, Arc::default())
    }

    /// A stream with `flags`, `priority` and the context's `failure_mode` cell.
    pub fn with_config(
        device: i32,
        context: u64,
        flags: u32,
        priority: u32,
        failure_mode: Arc<AtomicU64>,
    ) -> AclResult<Stream> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                submitted: 0,
                completed: 0,
                first_error: None,
                closed: false,
                draining: false,
                job_queued: false,
                running: false,
                here: false,
                sleeping: 0,
                aborting: 0,
                awaited: Vec::new(),
                stopped: false,
                failed: None,
            }),
            done: Condvar::new(),
            awaited_min: AtomicU64::new(u64::MAX),
            cancel: AtomicBool::new(false),
            aborts: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            failure_mode,
            id,
            device,
        });
        let worker = Pool::new(PoolOptions {
            name: format!("acl-stream-d{device}"),
            min_workers: 1,
            max_workers: 1,
            // At most one drain job is queued (see `Queue::draining`); the tasks themselves
            // are not bounded, as on the device.
            capacity: 1,
            idle_exit: None,
            max_idle: usize::MAX,
            watch: Duration::ZERO,
        })
        .map_err(|e| {
            AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, format!("cannot start a stream worker thread: {e}"))
        })?;
        let attrs = Attrs { priority: AtomicU32::new(priority), ..Attrs::default() };
        Ok(Stream {
            shared,
            worker,
            context,
            device,
            flags: flags & flags::KNOWN,
            id,
            attrs,
            handle: AtomicU64::new(0),
            capturing: AtomicBool::new(false),
            recorder: Mutex::new(None),
        })
    }

    /// The failure mode of this stream's context.
    pub fn failure_mode(&self) -> u64 {
        self.shared.failure_mode.load(Ordering::Acquire)
    }

    /// Sets the failure mode of this stream's context (every stream of it).
    pub fn set_failure_mode(&self, mode: u64) {
        self.shared.failure_mode.store(mode, Ordering::Release);
    }

    /// Sends the stream's work to `recorder` from now on (`None`: to the queue again), and
    /// returns the recorder it had.
    pub fn set_recorder(&self, recorder: Option<Arc<dyn Recorder>>) -> Option<Arc<dyn Recorder>> {
        let mut r = sync::lock(&self.recorder);
        self.capturing.store(recorder.is_some(), Ordering::Release);
        std::mem::replace(&mut *r, recorder)
    }

    /// The recorder the stream's work goes to, if it is captured.
    pub fn recorder(&self) -> Option<Arc<dyn Recorder>> {
        if !self.capturing.load(Ordering::Acquire) {
            return None;
        }
        sync::lock(&self.recorder).clone()
    }

    /// Whether the stream's work is being recorded rather than run.
    pub fn is_capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    /// 107027 while the stream is captured: what cannot be asked of a stream whose work is
    /// recorded, not run (synchronising with it, querying it, destroying it).
    pub fn refuse_if_captured(&self, what: &str) -> AclResult<()> {
        if self.is_capturing() {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_CAPTURED,
                format!(
                    "{what}: stream {} is being captured (aclmdlRICaptureBegin), bound to a model or updating a \
                     task group, so its work is recorded, not run; end that first (aclmdlRICaptureEnd)",
                    self.id
                ),
            ));
        }
        Ok(())
    }

    /// Queues work that can also be recorded: while the stream is captured, `f` becomes a task
    /// of the graph (run at every replay); otherwise it is queued once, as [`Stream::submit`].
    pub fn submit_op<F>(&self, info: TaskInfo, f: F) -> AclResult<()>
    where
        F: Fn(&TaskCtx) -> AclResult<()> + Send + Sync + 'static,
    {
        let f: Arc<super::task::RunFn> = Arc::new(f);
        let anywhere = runs_anywhere(&info);
        if let Some(r) = self.recorder() {
            return r.record(info, Op::Run(f));
        }
        // Shared, not boxed as a one-shot task: what is left of a job once run is released
        // with its batch, not on the way to the next task (see `job`).
        self.queue(Job::Shared(f), anywhere)
    }

    /// As [`Stream::submit_op`] for work with a part to do when it is queued (see [`Op`]):
    /// `stage` does that part and returns the task to run.
    pub fn submit_staged<F>(&self, info: TaskInfo, stage: F) -> AclResult<()>
    where
        F: Fn() -> AclResult<Task> + Send + Sync + 'static,
    {
        if let Some(r) = self.recorder() {
            return r.record(info, Op::Staged(Arc::new(stage)));
        }
        self.submit_unrecorded(stage()?)
    }

    /// As [`Stream::submit_op`] for work already in its recordable form.
    pub fn submit_any(&self, info: TaskInfo, op: Op) -> AclResult<()> {
        let anywhere = runs_anywhere(&info);
        if let Some(r) = self.recorder() {
            return r.record(info, op);
        }
        match op {
            Op::Run(f) => self.queue(Job::Shared(f), anywhere),
            Op::Staged(stage) => self.submit_unrecorded(stage()?),
        }
    }

    /// Queues `task` behind every task submitted before it. A one-shot task cannot be part of
    /// a graph: on a captured stream it is refused (107030) and the capture invalidated.
    pub fn submit(&self, task: Task) -> AclResult<()> {
        self.submit_job(Job::Once(Some(task)))
    }

    /// As [`Stream::submit`] for any kind of [`Job`].
    pub fn submit_job(&self, job: Job) -> AclResult<()> {
        if let Some(r) = self.recorder() {
            return Err(r.refuse("this kind of task"));
        }
        let anywhere = matches!(job, Job::Record(_) | Job::Wait(_));
        self.queue(job, anywhere)
    }

    /// Queues `task` on the stream's queue whether it is captured or not (a replay's task).
    pub fn submit_unrecorded(&self, task: Task) -> AclResult<()> {
        self.queue(Job::Once(Some(task)), false)
    }

    fn queue(&self, task: Job, anywhere: bool) -> AclResult<()> {
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
        if let Some(code) = q.failed {
            return Err(AclError::new(
                code,
                "a task of this stream failed under ACL_STOP_ON_FAILURE: the stream takes no new task \
                 (abort it with aclrtStreamAbort or destroy it)",
            ));
        }
        let index = q.submitted;
        super::last_task::note(index as u32);
        q.tasks.push_back(Queued { index, thread: crate::sys::thread_id(), task, anywhere });
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
            q.job_queued = true;
        }
        Ok(())
    }

    /// Waits until every task submitted before this call has run, then reports (and clears)
    /// the first task failure since the last synchronisation. `None` waits without limit.
    pub fn synchronize(&self, timeout: Option<Duration>) -> AclResult<()> {
        self.refuse_if_captured("synchronising with the stream")?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut q = sync::lock(&self.shared.queue);
        if q.aborting > 0 {
            return Err(aborted());
        }
        let epoch = self.shared.aborts.load(Ordering::Acquire);
        let target = q.submitted;
        if q.completed < target && timeout.is_none() {
            q = self.run_here(q, target);
        }
        let awaits = q.completed < target;
        if awaits {
            q.awaited.push(target);
            publish_awaited(&q, &self.shared);
        }
        let mut timed_out = false;
        while q.completed < target && self.shared.aborts.load(Ordering::Acquire) == epoch {
            q = match deadline {
                None => sleep_done(&self.shared, q, None).0,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        timed_out = true;
                        break;
                    }
                    sleep_done(&self.shared, q, Some(d - now)).0
                }
            };
        }
        if let Some(i) = q.awaited.iter().position(|&t| awaits && t == target) {
            q.awaited.swap_remove(i);
            publish_awaited(&q, &self.shared);
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

    /// The synchronising thread runs the tasks it waits for itself, when the worker has not
    /// taken them yet and every one is a wait or signal between streams ([`runs_anywhere`]):
    /// the worker would otherwise be woken to run them while this thread sleeps until woken in
    /// turn, two wake-ups on the path of every round trip of a ping-pong and two threads for
    /// one wait. Only without a time-out (a task run here ends by itself, but not at the
    /// caller's deadline). What is queued behind goes back to the worker.
    fn run_here<'a>(&'a self, mut q: MutexGuard<'a, Queue>, target: u64) -> MutexGuard<'a, Queue> {
        let shared = &*self.shared;
        let mut batch = VecDeque::new();
        let mut requeue = VecDeque::new();
        while q.completed < target
            && !q.running
            && q.aborting == 0
            && !q.stopped
            && q.failed.is_none()
            && !q.tasks.is_empty()
            && q.tasks.iter().all(|t| t.anywhere && t.index < target)
        {
            (q.running, q.here) = (true, true);
            q = run_batch(shared, q, &mut batch, &mut requeue);
            (q.running, q.here) = (false, false);
            if q.job_queued {
                // The worker's drain is still to come: it takes what is left.
                continue;
            }
            if q.tasks.is_empty() || q.stopped || q.failed.is_some() {
                q.draining = false;
            } else {
                let shared = Arc::clone(&self.shared);
                if let Err(e) = self.worker.submit(Box::new(move || drain(&shared))) {
                    // Only a worker being stopped refuses: the stream is being destroyed.
                    log::debug!(target: TARGET, "stream worker refused a drain ({e}); tasks dropped");
                    let dropped = std::mem::take(&mut q.tasks);
                    q.completed += dropped.len() as u64;
                    q.draining = false;
                } else {
                    q.job_queued = true;
                }
            }
        }
        if q.closed {
            wake_done(&q, shared);
        }
        batch.clear();
        q
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
        // An abort ends a stop and a stop on failure: the stream takes work again.
        q.stopped = false;
        q.failed = None;
        self.shared.stop.store(false, Ordering::Release);
        let discarded = std::mem::take(&mut q.tasks);
        let dropped = discarded.len() as u64;
        q.completed += dropped;
        q.first_error = None;
        let target = q.submitted;
        if q.completed < target {
            q.awaited.push(target);
            publish_awaited(&q, &self.shared);
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
            q = sleep_done(&self.shared, q, Some(deadline - now)).0;
        }
        if let Some(i) = q.awaited.iter().position(|&t| t == target) {
            q.awaited.swap_remove(i);
            publish_awaited(&q, &self.shared);
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

    /// `aclrtStreamStop`: the running task is told to stop (its result is ignored) and the
    /// queued tasks are kept but not run; synchronising threads go on waiting until an abort
    /// (`aclrtStreamAbort`, `aclrtDeviceTaskAbort`) discards them and releases them with
    /// 107023, or their time-out passes.
    pub fn stop(&self) -> AclResult<()> {
        let mut q = sync::lock(&self.shared.queue);
        if q.closed {
            return Err(AclError::new(ACL_ERROR_RT_INVALID_HANDLE, "the stream has been destroyed"));
        }
        q.stopped = true;
        self.shared.stop.store(true, Ordering::Release);
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
        // A synchronising thread running tasks (`run_here`) finishes them first.
        let mut q = sync::lock(&self.shared.queue);
        while q.here {
            q = sleep_done(&self.shared, q, Some(CANCEL_POLL)).0;
        }
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

/// Sleeps on `shared.done` (counted in `Queue::sleeping`) at most `timeout` (`None`: until
/// woken); the lock again and whether the time ran out.
fn sleep_done<'a>(
    shared: &'a Shared,
    mut q: MutexGuard<'a, Queue>,
    timeout: Option<Duration>,
) -> (MutexGuard<'a, Queue>, bool) {
    q.sleeping += 1;
    let (mut q, timed_out) = match timeout {
        None => (sync::wait(&shared.done, q), false),
        Some(t) => sync::wait_timeout(&shared.done, q, t),
    };
    q.sleeping -= 1;
    (q, timed_out)
}

/// Wakes the threads asleep on `shared.done`, if any (`q`: the queue's lock, held).
fn wake_done(q: &Queue, shared: &Shared) {
    if q.sleeping > 0 {
        shared.done.notify_all();
    }
}

/// Whether a task may run on the thread that synchronises with its stream rather than on the
/// worker ([`Stream::synchronize`]): the waits and signals between streams (notifies, events,
/// value words), which touch nothing of the thread they run on and return or fail by
/// themselves. Host functions, callbacks and the rest stay on the worker.
fn runs_anywhere(info: &TaskInfo) -> bool {
    use super::task::TaskType;
    matches!(
        info.kind,
        TaskType::EventRecord | TaskType::EventWait | TaskType::ValueWrite | TaskType::ValueWait
    ) || matches!(
        info.name,
        "notify record" | "notify wait" | "counting notify record" | "counting notify wait"
    )
}

/// Publishes the lowest completion count a synchronising thread still waits for.
fn publish_awaited(q: &Queue, shared: &Shared) {
    let min = q.awaited.iter().copied().filter(|&t| t > q.completed).min().unwrap_or(u64::MAX);
    shared.awaited_min.store(min, Ordering::Release);
}

/// The worker's job: runs the stream's tasks until its queue is empty.
fn drain(shared: &Shared) {
    // The worker takes every queued task under one lock (swapping queues, so nothing is
    // copied) and reports their completion under the next, so a stream of many small tasks (a
    // notify ping-pong) pays two lock rounds per batch, not per task. A thread synchronising
    // with a task inside the batch is told as soon as that task has run (`awaited_min`): the
    // tasks after it may wait on something that thread does next.
    let mut q = sync::lock(&shared.queue);
    q.job_queued = false;
    if q.running {
        // A synchronising thread runs the tasks (`Stream::run_here`); it hands what is left
        // back to the worker when it is done.
        return;
    }
    q.running = true;
    let mut batch: VecDeque<Queued> = VecDeque::new();
    let mut requeue: VecDeque<Queued> = VecDeque::new();
    loop {
        if q.tasks.is_empty() || q.stopped || q.failed.is_some() {
            q.running = false;
            q.draining = false;
            if q.closed {
                wake_done(&q, shared);
            }
            return;
        }
        q = run_batch(shared, q, &mut batch, &mut requeue);
    }
}

/// Runs every task queued (one batch), with the queue's lock `q`; returns the lock again.
fn run_batch<'a>(
    shared: &'a Shared,
    mut q: MutexGuard<'a, Queue>,
    batch: &mut VecDeque<Queued>,
    requeue: &mut VecDeque<Queued>,
) -> MutexGuard<'a, Queue> {
    let mut failed_code = None;
    {
        std::mem::swap(batch, &mut q.tasks);
        // Read under the queue's lock, which an abort holds while it moves to the next epoch.
        let epoch = shared.aborts.load(Ordering::Acquire);
        drop(q);
        let ctx = TaskCtx::new(&shared.cancel, &shared.stop, &shared.aborts, epoch);
        let mut first_error = None;
        let mut ran = batch.len() as u64;
        // Tasks of the batch whose completion has been reported.
        let mut reported = 0;
        // Jobs run where they lie in the batch (moving them costs more than a small one takes
        // to run); what is left of them is dropped with the batch, below.
        for i in 0..batch.len() {
            if shared.aborts.load(Ordering::Acquire) != epoch {
                // Aborted: the rest of the batch is discarded, not run.
                break;
            }
            if shared.stop.load(Ordering::Acquire) {
                // Stopped (`aclrtStreamStop`): this task and the rest go back to the queue.
                ran = i as u64;
                requeue.extend(batch.drain(i..));
                break;
            }
            let Queued { index, thread, task, .. } = &mut batch[i];
            let started = super::profiling::task_clock();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.run(&ctx)))
                .unwrap_or_else(|_| {
                    Err(AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "a stream task panicked"))
                });
            if let Some(start) = started {
                super::profiling::task_ran(shared.device, shared.id, *index, task, start);
            }
            match result {
                Ok(()) => {}
                Err(e) if shared.aborts.load(Ordering::Acquire) != epoch => {
                    log::debug!(target: TARGET, "aborted stream task ended: {}", e.message);
                }
                Err(_) if shared.stop.load(Ordering::Acquire) => {
                    log::debug!(target: TARGET, "stopped stream task ended");
                }
                Err(e) => {
                    log::error!(target: TARGET, "stream task failed: {}", e.message);
                    exception::report(&TaskFailure {
                        task_id: *index as u32,
                        stream_id: shared.id,
                        thread_id: *thread,
                        device_id: shared.device as u32,
                        error_code: e.code,
                    });
                    let code = e.code;
                    first_error.get_or_insert(e);
                    if shared.failure_mode.load(Ordering::Acquire) == STOP_ON_FAILURE {
                        // Stopped on failure: the rest of the batch is dropped.
                        failed_code = Some(code);
                        break;
                    }
                }
            }
            if *index + 1 >= shared.awaited_min.load(Ordering::Acquire) {
                // A synchronising thread waits for this task (tasks run in submission order).
                let mut q = sync::lock(&shared.queue);
                q.completed += (i + 1 - reported) as u64;
                reported = i + 1;
                // With the failures so far: that thread reports the first.
                if let Some(e) = first_error.take().filter(|_| shared.aborts.load(Ordering::Acquire) == epoch)
                {
                    q.first_error.get_or_insert(e);
                }
                publish_awaited(&q, shared);
                wake_done(&q, shared);
            }
        }
        ran -= reported as u64;
        batch.clear();
        q = sync::lock(&shared.queue);
        q.completed += ran;
        if shared.aborts.load(Ordering::Acquire) != epoch {
            // An abort came after the stop: the paused tasks are discarded with the rest.
            // Dropped outside the lock, as an abort's discarded tasks are.
            q.completed += requeue.len() as u64;
            let gone = std::mem::take(requeue);
            drop(q);
            drop(gone);
            q = sync::lock(&shared.queue);
        }
        // Tasks of a stopped batch go back to the front of the queue, in order.
        while let Some(t) = requeue.pop_back() {
            q.tasks.push_front(t);
        }
        if let Some(code) = failed_code.take().filter(|_| shared.aborts.load(Ordering::Acquire) == epoch) {
            // Stop on failure: what is queued behind the failed task is dropped.
            let dropped = std::mem::take(&mut q.tasks);
            q.completed += dropped.len() as u64;
            q.failed = Some(code);
            drop(q);
            drop(dropped);
            q = sync::lock(&shared.queue);
        }
        if let Some(e) = first_error.filter(|_| shared.aborts.load(Ordering::Acquire) == epoch) {
            q.first_error.get_or_insert(e);
        }
        if q.awaited.iter().any(|&t| q.completed >= t) {
            publish_awaited(&q, shared);
            wake_done(&q, shared);
        }
    }
    q
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
    fn a_synchronising_thread_is_released_by_its_last_task_not_by_the_end_of_the_batch() {
        // A and W run in one batch; W waits for what the thread synchronising with A does once
        // released. Reporting completions only at the end of the batch would hold that thread
        // until W gave up. A fails: the thread is told, as when its batch ends.
        let s = Arc::new(Stream::new(0, 1).unwrap());
        let (started, open, released) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (st, op) = (Arc::clone(&started), Arc::clone(&open));
        s.submit(Box::new(move |_| {
            st.store(true, Ordering::SeqCst);
            while !op.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        wait_for(&started);
        s.submit(Box::new(|_| Err(AclError::new(507011, "A failed")))).unwrap();
        let syncer = {
            let (s, released) = (Arc::clone(&s), Arc::clone(&released));
            std::thread::spawn(move || {
                let r = s.synchronize(Some(Duration::from_secs(10)));
                released.store(true, Ordering::SeqCst);
                r
            })
        };
        let start = Instant::now();
        while s.shared.awaited_min.load(Ordering::SeqCst) == u64::MAX {
            assert!(start.elapsed() < Duration::from_secs(10), "the thread never started waiting");
            std::thread::sleep(Duration::from_millis(1));
        }
        let rel = Arc::clone(&released);
        s.submit(Box::new(move |_| {
            let start = Instant::now();
            while !rel.load(Ordering::SeqCst) {
                if start.elapsed() > Duration::from_secs(5) {
                    return Err(AclError::new(ACL_ERROR_RT_WAIT_TIMEOUT, "never released"));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        open.store(true, Ordering::SeqCst);
        assert_eq!(syncer.join().unwrap().unwrap_err().message, "A failed");
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
    }

    /// A synchronisation without a time-out runs the waits and signals it waits for on its own
    /// thread when the worker has not taken them (one thread waits, not two); other tasks, and
    /// what is queued behind them, stay the worker's.
    #[test]
    fn a_synchronising_thread_runs_the_waits_it_waits_for() {
        let s = Stream::new(0, 1).unwrap();
        let me = std::thread::current().id();
        let ran_on = Arc::new(Mutex::new(Vec::new()));
        let note = |ran_on: &Arc<Mutex<Vec<_>>>| {
            let r = Arc::clone(ran_on);
            move |_: &TaskCtx| {
                r.lock().unwrap().push(std::thread::current().id());
                Ok(())
            }
        };
        // The worker is kept from the tasks (as when it has not woken yet): its drain finds
        // them being run and leaves.
        sync::lock(&s.shared.queue).running = true;
        s.submit_op(TaskInfo::plain("notify wait"), note(&ran_on)).unwrap();
        let start = Instant::now();
        while sync::lock(&s.shared.queue).job_queued {
            assert!(start.elapsed() < Duration::from_secs(10), "the worker never looked");
            std::thread::sleep(Duration::from_millis(1));
        }
        sync::lock(&s.shared.queue).running = false;
        s.synchronize(None).unwrap();
        assert_eq!(*ran_on.lock().unwrap(), vec![me], "the wait ran on the synchronising thread");
        // A task that is not a wait or a signal, and one behind it: the worker's.
        s.submit_op(TaskInfo::plain("host function"), note(&ran_on)).unwrap();
        s.submit_op(TaskInfo::plain("notify record"), note(&ran_on)).unwrap();
        s.synchronize(None).unwrap();
        // With a time-out the worker runs everything.
        s.submit_op(TaskInfo::plain("notify record"), note(&ran_on)).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        let ran_on = ran_on.lock().unwrap();
        assert_eq!(ran_on.len(), 4);
        assert!(ran_on[1..].iter().all(|&t| t != me), "{ran_on:?}");
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

    fn counter(ran: &Arc<AtomicU64>) -> Task {
        let r = Arc::clone(ran);
        Box::new(move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    #[test]
    fn stop_on_failure_is_the_contexts_and_drops_the_rest() {
        let mode = Arc::new(AtomicU64::new(0));
        let a = Stream::with_config(0, 1, 0, 0, Arc::clone(&mode)).unwrap();
        let b = Stream::with_config(0, 1, 0, 0, Arc::clone(&mode)).unwrap();
        a.set_failure_mode(STOP_ON_FAILURE);
        assert_eq!(b.failure_mode(), STOP_ON_FAILURE, "one mode for the context");
        let ran = Arc::new(AtomicU64::new(0));
        b.submit(counter(&ran)).unwrap();
        b.submit(Box::new(|_| Err(AclError::new(507011, "boom")))).unwrap();
        b.submit(counter(&ran)).unwrap();
        assert_eq!(b.synchronize(Some(Duration::from_secs(10))).unwrap_err().code, 507011);
        assert_eq!(ran.load(Ordering::SeqCst), 1, "the task after the failure did not run");
        assert_eq!(b.submit(counter(&ran)).unwrap_err().code, 507011);
        b.abort(Duration::from_secs(10)).unwrap();
        b.submit(counter(&ran)).unwrap();
        b.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn stop_holds_the_queue_until_an_abort() {
        let s = Stream::new(0, 1).unwrap();
        let started = Arc::new(AtomicBool::new(false));
        let ran = Arc::new(AtomicU64::new(0));
        s.submit(blocker(&started)).unwrap();
        s.submit(counter(&ran)).unwrap();
        wait_for(&started);
        s.stop().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(s.pending(), 1, "the running task ended, the queued one is held");
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        let e = s.synchronize(Some(Duration::from_millis(50))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "the stopped task's error is not reported");
        s.abort(Duration::from_secs(10)).unwrap();
        assert_eq!(s.pending(), 0);
        s.submit(counter(&ran)).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1, "only the task queued after the abort ran");
    }

    #[test]
    fn a_failed_task_is_reported_with_its_index_stream_and_thread() {
        let s = Stream::new(3, 1).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let id = s.id;
        super::exception::register(
            0xfeed_0000 + id as usize,
            Arc::new(move |f: &TaskFailure| {
                if f.stream_id == id {
                    sink.lock().unwrap().push(*f);
                }
            }),
        );
        s.submit(Box::new(|_| Ok(()))).unwrap();
        s.submit(Box::new(|_| Err(AclError::new(507011, "boom")))).unwrap();
        assert!(s.synchronize(Some(Duration::from_secs(10))).is_err());
        super::exception::unregister(0xfeed_0000 + id as usize);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![TaskFailure {
                task_id: 1,
                stream_id: id,
                thread_id: crate::sys::thread_id(),
                device_id: 3,
                error_code: 507011
            }]
        );
    }
}
