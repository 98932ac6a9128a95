//! Events: markers recorded on a stream. One record releases every waiter (unlike a notify,
//! where one record releases one wait).
//!
//! Each record gets a sequence number when it is queued; the event is complete for a waiter
//! once the record it saw has run. Waiting on an event never recorded returns at once.
//!
//! A record its stream discards without running (`aclrtStreamAbort`, a forced destroy) can
//! never complete: threads synchronising with it are released with 107023 rather than left
//! waiting, as the vendor documents for an abort.
//!
//! An IPC event (`ACL_EVENT_IPC`) keeps its sequences in a shared cell instead
//! ([`super::ipc_event`]), so records and waits of every process that opened it meet there. A
//! discarded record of an IPC event counts as run for everyone (no process is left waiting
//! for it; the local synchronising threads still get 107023).
//!
//! Each record notes the time it ran (`aclrtEventGetTimestamp`, `aclrtEventElapsedTime`), and
//! each queued wait is counted until it has run (`aclrtQueryEventWaitStatus`).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::ipc_event::IpcEvent;
use super::job::{EventJobs, Job, Record, Wait};
use super::notify::cell::WaitEnd;
use super::stream::{CANCEL_POLL, Stream, TaskCtx};
use super::task::{Op, Params, Task, TaskInfo, TaskType};
use crate::error::rt_codes::{
    ACL_ERROR_RT_EVENT_CAPTURED, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_IPC_ERROR, ACL_ERROR_RT_STREAM_ABORT,
    ACL_ERROR_RT_WAIT_TIMEOUT,
};
use crate::error::{AclError, AclResult};
use crate::sync;

#[derive(Default)]
struct State {
    /// Records queued so far (the sequence number of the latest).
    recorded: u64,
    /// Highest sequence number whose record has run.
    completed: u64,
}

/// How an event was made, which decides what may be done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `aclrtCreateEvent` / `aclrtCreateEventWithFlag`: counted against the device's events.
    Pooled,
    /// `aclrtCreateEventExWithFlag`: not counted; no reset, no `aclrtQueryEvent`, no wait status.
    Ex,
}

/// Events of the pool (`Origin::Pooled`) alive in this process.
static POOLED: AtomicU32 = AtomicU32::new(0);
static NEXT_ID: AtomicU32 = AtomicU32::new(0);
/// `aclrtSetOpWaitTimeout`, in seconds (0: none): the bound of stream waits that have none.
static OP_WAIT_TIMEOUT_S: AtomicU32 = AtomicU32::new(0);

/// Sets the process-wide bound of stream waits queued without a time-out of their own.
pub fn set_op_wait_timeout(seconds: u32) {
    OP_WAIT_TIMEOUT_S.store(seconds, Ordering::Relaxed);
}

/// The bound `aclrtSetOpWaitTimeout` set, if any.
pub fn op_wait_timeout() -> Option<Duration> {
    let s = OP_WAIT_TIMEOUT_S.load(Ordering::Relaxed);
    (s > 0).then(|| Duration::from_secs(u64::from(s)))
}

/// Live events of the pool, for `aclrtGetEventAvailNum` and the creation limit.
pub fn pooled_live() -> u32 {
    POOLED.load(Ordering::Relaxed)
}

/// Nanoseconds on the process's monotonic clock, the time base of event timestamps.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

pub struct Event {
    state: Mutex<State>,
    changed: Condvar,
    /// Sequence numbers of records discarded without running. A lock of its own, held only
    /// to read or insert: a record is dropped under its stream's lock, sometimes while
    /// `state` is held (a refused submit), so noting it must not take `state`.
    discarded: Mutex<BTreeSet<u64>>,
    /// Whether `discarded` may hold anything: set with the first insertion, so a record that
    /// completes (every round of a ping-pong) skips that lock while nothing was ever discarded.
    ever_discarded: AtomicBool,
    pub flags: u32,
    pub origin: Origin,
    /// What `aclrtGetEventId` reports.
    pub id: u32,
    /// When the latest completed record ran ([`now_ns`]; 0: none yet).
    stamp_ns: AtomicU64,
    /// Waits queued on streams, and those that have ended.
    waits_queued: AtomicU64,
    waits_ended: AtomicU64,
    /// The shared state of an IPC event.
    pub ipc: Option<IpcEvent>,
    /// Set while the event's latest record belongs to a capture in progress: what makes a
    /// stream that waits on it join that capture (cross-stream capture). Cleared when the
    /// capture ends.
    capture: Mutex<Option<JoinCapture>>,
}

/// Makes a stream join the capture an event's record belongs to (given by the capture).
pub type JoinCapture = Arc<dyn Fn(&Stream) -> AclResult<()> + Send + Sync>;

impl Event {
    pub fn new(flags: u32) -> Event {
        Event::with(flags, Origin::Pooled, None)
    }

    /// An event made in the given way; an IPC event brings its shared state.
    pub fn with(flags: u32, origin: Origin, ipc: Option<IpcEvent>) -> Event {
        if origin == Origin::Pooled {
            POOLED.fetch_add(1, Ordering::Relaxed);
        }
        Event {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            discarded: Mutex::new(BTreeSet::new()),
            ever_discarded: AtomicBool::new(false),
            flags,
            origin,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            stamp_ns: AtomicU64::new(0),
            waits_queued: AtomicU64::new(0),
            waits_ended: AtomicU64::new(0),
            ipc,
            capture: Mutex::new(None),
        }
    }

    /// Queues a record on `stream`. On an opened IPC event whose creator has exited the record
    /// could reach no one: 507022, found when it is queued (as for an imported notify).
    pub fn record(self: &Arc<Self>, stream: &Stream) -> AclResult<()> {
        if let Some(link) = self.ipc.as_ref().and_then(|i| i.link.as_ref()) {
            if link.exporter_gone() {
                return Err(AclError::new(
                    ACL_ERROR_RT_IPC_ERROR,
                    "the process that created this IPC event exited: recording it reaches no one",
                ));
            }
        }
        if stream.is_capturing() && self.ipc.is_some() {
            return Err(ipc_captured());
        }
        if stream.is_capturing() {
            // Recorded: each replay takes a sequence number when it is queued.
            let (info, op) = self.record_op();
            return stream.submit_any(info, op);
        }
        let mut s = sync::lock(&self.state);
        let seq = s.recorded + 1;
        let shared = self.ipc.as_ref().map(IpcEvent::next_record);
        stream.submit_job(Job::Record(Record::new(Arc::clone(self) as _, seq, shared)))?;
        s.recorded = seq;
        Ok(())
    }

    /// A record queued now (by a replay): its sequence number is taken, and the task that
    /// completes it returned.
    pub fn stage_record(self: &Arc<Self>) -> Task {
        let mut s = sync::lock(&self.state);
        let seq = s.recorded + 1;
        s.recorded = seq;
        drop(s);
        let mut record = Record::new(Arc::clone(self) as _, seq, None);
        Box::new(move |_| {
            record.run();
            Ok(())
        })
    }

    /// A record as a recordable task: each run (replay) takes its sequence number when it is
    /// queued. Not for IPC events.
    pub fn record_op(self: &Arc<Self>) -> (TaskInfo, Op) {
        let event = Arc::clone(self);
        (
            self.task_info(TaskType::EventRecord, "event record"),
            Op::Staged(Arc::new(move || Ok(event.stage_record()))),
        )
    }

    /// A wait as a recordable task: each run waits for the latest record queued before it.
    pub fn wait_op(self: &Arc<Self>, timeout: Option<Duration>) -> (TaskInfo, Op) {
        let event = Arc::clone(self);
        let op = Op::Staged(Arc::new(move || {
            let target = sync::lock(&event.state).recorded;
            event.count_wait(&event.waits_queued);
            let mut wait = Wait::new(Arc::clone(&event) as _, target, None, timeout);
            let task: Task = Box::new(move |ctx: &TaskCtx| wait.run(ctx));
            Ok(task)
        }));
        (self.task_info(TaskType::EventWait, "event wait"), op)
    }

    /// A reset as a recordable task.
    pub fn reset_op(self: &Arc<Self>) -> (TaskInfo, Op) {
        let event = Arc::clone(self);
        let op = Op::Run(Arc::new(move |_: &TaskCtx| {
            let mut s = sync::lock(&event.state);
            s.completed = s.recorded;
            drop(s);
            event.changed.notify_all();
            Ok(())
        }));
        (self.task_info(TaskType::EventReset, "event reset"), op)
    }

    /// What a recorded task of this event reports (`aclmdlRITaskGetParams`).
    pub fn task_info(self: &Arc<Self>, kind: TaskType, name: &'static str) -> TaskInfo {
        let event: Arc<dyn std::any::Any + Send + Sync> = Arc::clone(self) as _;
        TaskInfo { kind, name, params: Params::Event { event, event_flags: self.flags, flag: 0 } }
    }

    /// Marks the event's latest record as part of a capture (`Some`) or not any more.
    pub fn set_capture(&self, join: Option<JoinCapture>) {
        *sync::lock(&self.capture) = join;
    }

    /// 107028 while the event's latest record belongs to a capture in progress: it will run
    /// only when the graph is replayed, so synchronising with it or querying it means nothing.
    pub fn refuse_if_captured(&self, what: &str) -> AclResult<()> {
        if sync::lock(&self.capture).is_some() {
            return Err(AclError::new(
                ACL_ERROR_RT_EVENT_CAPTURED,
                format!(
                    "{what}: the event's latest record is part of a capture in progress (aclmdlRICaptureBegin)"
                ),
            ));
        }
        Ok(())
    }

    fn discard(&self, seq: u64, shared: Option<u32>) {
        // Noted as discarded before the shared cell says "run": a local synchroniser woken by
        // the cell must find it so (else it would report the discarded record as done).
        sync::lock(&self.discarded).insert(seq);
        self.ever_discarded.store(true, Ordering::Release);
        if let (Some(ipc), Some(shared)) = (&self.ipc, shared) {
            ipc.complete(shared);
        }
        // Without `state` held a waiter may miss this wake-up; waiters look again every
        // CANCEL_POLL.
        self.wake_local();
    }

    fn complete(&self, seq: u64) {
        let mut s = sync::lock(&self.state);
        s.completed = s.completed.max(seq);
        drop(s);
        // Discarded records up to a completed one no longer matter to anyone.
        if self.ever_discarded.load(Ordering::Acquire) {
            sync::lock(&self.discarded).retain(|&d| d > seq);
        }
        self.wake_local();
    }

    /// Wakes the threads waiting on `changed`. Nobody waits there on an IPC event (its waits
    /// sleep on the shared cell), and a condition variable's wake-up is a system call: the
    /// ping-pong case would pay it on every record.
    fn wake_local(&self) {
        if self.ipc.is_none() {
            self.changed.notify_all();
        }
    }

    /// Queues a reset on `stream`: when it runs, every record so far counts as complete, so
    /// the event is back in its initial (not recorded) state.
    pub fn reset(self: &Arc<Self>, stream: &Stream) -> AclResult<()> {
        let (info, op) = self.reset_op();
        stream.submit_any(info, op)
    }

    /// Whether every record queued so far (in any process, for an IPC event) has run.
    pub fn is_complete(&self) -> bool {
        if let Some(ipc) = &self.ipc {
            return ipc.is_done(ipc.recorded());
        }
        let s = sync::lock(&self.state);
        s.completed >= s.recorded
    }

    /// Counts a wait queued or ended in `counter`. Only for events whose wait status can be
    /// asked (`aclrtQueryEventWaitStatus` refuses those of `aclrtCreateEventExWithFlag`): the
    /// count is a locked instruction on the way from a wait's end to the next task.
    fn count_wait(&self, counter: &AtomicU64) {
        if self.origin == Origin::Pooled {
            counter.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Whether every wait queued on a stream for this event has ended.
    pub fn waits_complete(&self) -> bool {
        self.waits_ended.load(Ordering::Acquire) >= self.waits_queued.load(Ordering::Acquire)
    }

    /// When the latest record ran ([`now_ns`]), if it has run: `None` while a record is
    /// pending or the event was never recorded.
    pub fn timestamp_ns(&self) -> Option<u64> {
        let stamp = self.stamp_ns.load(Ordering::Acquire);
        (self.is_complete() && stamp != 0).then_some(stamp)
    }

    /// Blocks until the latest record queued before this call has run. `None` waits without
    /// limit; on time-out the error is 507047; 107023 when that record was discarded.
    pub fn synchronize(&self, timeout: Option<Duration>) -> AclResult<()> {
        self.refuse_if_captured("synchronising with the event")?;
        if let Some(ipc) = &self.ipc {
            return self.synchronize_shared(ipc, timeout);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = sync::lock(&self.state);
        let target = s.recorded;
        while s.completed < target {
            if sync::lock(&self.discarded).contains(&target) {
                return Err(discarded());
            }
            s = match deadline {
                None => sync::wait_timeout(&self.changed, s, CANCEL_POLL).0,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(sync_timeout(timeout));
                    }
                    sync::wait_timeout(&self.changed, s, (d - now).min(CANCEL_POLL)).0
                }
            };
        }
        Ok(())
    }

    fn synchronize_shared(&self, ipc: &IpcEvent, timeout: Option<Duration>) -> AclResult<()> {
        let target = ipc.recorded();
        let local = sync::lock(&self.state).recorded;
        let deadline = timeout.map(|t| Instant::now() + t);
        match ipc.wait(target, deadline, || ipc.peer_lost(timeout.is_none()).is_some()) {
            Ok(()) if sync::lock(&self.discarded).contains(&local) && !self.local_done(local) => {
                Err(discarded())
            }
            Ok(()) => Ok(()),
            Err(WaitEnd::TimedOut) => Err(sync_timeout(timeout)),
            Err(WaitEnd::Stopped) => Err(peer_error(ipc, timeout.is_none())),
        }
    }

    fn local_done(&self, seq: u64) -> bool {
        sync::lock(&self.state).completed >= seq
    }

    /// Queues on `stream` a wait for the latest record queued before this call. `timeout`
    /// bounds the wait (`None`: the `aclrtSetOpWaitTimeout` bound, if any); a wait that times
    /// out fails its task with 107019, which the stream's synchronisation reports.
    pub fn wait_on(self: &Arc<Self>, stream: &Stream, timeout: Option<Duration>) -> AclResult<()> {
        let timeout = timeout.or_else(op_wait_timeout);
        if !stream.is_capturing() {
            let join = sync::lock(&self.capture).clone();
            if let Some(join) = join {
                // The event's record is captured: the waiting stream joins that capture.
                join(stream)?;
            }
        }
        if stream.is_capturing() && self.ipc.is_some() {
            return Err(ipc_captured());
        }
        if stream.is_capturing() {
            // Recorded: each replay waits for the latest record queued before it (a record of
            // the same graph when it has one before this wait).
            let (info, op) = self.wait_op(timeout);
            return stream.submit_any(info, op);
        }
        let target = sync::lock(&self.state).recorded;
        let shared = self.ipc.as_ref().map(IpcEvent::recorded);
        self.count_wait(&self.waits_queued);
        stream.submit_job(Job::Wait(Wait::new(Arc::clone(self) as _, target, shared, timeout)))
    }

    fn wait_shared(
        &self,
        ipc: &IpcEvent,
        target: u32,
        deadline: Option<Instant>,
        ctx: &TaskCtx,
    ) -> AclResult<()> {
        let unlimited = deadline.is_none();
        match ipc.wait(target, deadline, || ctx.cancelled() || ipc.peer_lost(unlimited).is_some()) {
            Ok(()) => Ok(()),
            Err(WaitEnd::TimedOut) => Err(wait_timeout()),
            Err(WaitEnd::Stopped) if ctx.cancelled() => Err(cancelled()),
            Err(WaitEnd::Stopped) => Err(peer_error(ipc, unlimited)),
        }
    }

    fn wait_in_task(&self, target: u64, deadline: Option<Instant>, ctx: &TaskCtx) -> AclResult<()> {
        let mut s = sync::lock(&self.state);
        while s.completed < target {
            if ctx.cancelled() {
                return Err(cancelled());
            }
            let mut slice = CANCEL_POLL;
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    return Err(wait_timeout());
                }
                slice = slice.min(d - now);
            }
            s = sync::wait_timeout(&self.changed, s, slice).0;
        }
        Ok(())
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.origin == Origin::Pooled {
            POOLED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// As the vendor: an IPC event cannot be part of a capture (the capture goes on).
fn ipc_captured() -> AclError {
    AclError::new(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        "IPC events cannot be recorded or waited on by a captured stream (aclmdlRICaptureBegin)",
    )
}

fn discarded() -> AclError {
    AclError::new(
        ACL_ERROR_RT_STREAM_ABORT,
        "the event's record was discarded: its stream was aborted or destroyed",
    )
}

fn sync_timeout(timeout: Option<Duration>) -> AclError {
    AclError::new(
        ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
        format!("event not complete after {} ms", timeout.unwrap_or_default().as_millis()),
    )
}

fn wait_timeout() -> AclError {
    AclError::new(
        ACL_ERROR_RT_WAIT_TIMEOUT,
        "a stream's wait for an event timed out before the event's record ran",
    )
}

fn cancelled() -> AclError {
    AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "event wait cancelled: stream destroyed or aborted")
}

fn peer_error(ipc: &IpcEvent, unlimited: bool) -> AclError {
    AclError::new(
        ACL_ERROR_RT_IPC_ERROR,
        ipc.peer_lost(unlimited).unwrap_or("the other process of this IPC event is gone"),
    )
}

impl EventJobs for Event {
    fn record_ran(&self, seq: u64, shared: Option<u32>) {
        // The time stamp before the shared cell says "run": a thread of this process released
        // by the cell (a synchronisation, a stream's wait, a wait on a record of the other
        // side queued after this one) reads the time next, and `timestamp_ns` asks the cell,
        // not the local state, whether the event is complete. Stored after the cell, a thread
        // released by it could find the record done and no time. The cell's store is SeqCst,
        // so the stamp is visible to whoever sees the cell's new value. The local bookkeeping
        // may follow: waits on an IPC event sleep on the cell, not on `state`.
        self.stamp_ns.store(now_ns(), Ordering::Release);
        if let (Some(ipc), Some(shared)) = (&self.ipc, shared) {
            ipc.complete(shared);
        }
        self.complete(seq);
    }

    fn record_discarded(&self, seq: u64, shared: Option<u32>) {
        self.discard(seq, shared);
    }

    fn wait(
        &self,
        target: u64,
        shared: Option<u32>,
        timeout: Option<Duration>,
        ctx: &TaskCtx,
    ) -> AclResult<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        match (&self.ipc, shared) {
            (Some(ipc), Some(shared)) => self.wait_shared(ipc, shared, deadline, ctx),
            _ => self.wait_in_task(target, deadline, ctx),
        }
    }

    fn wait_ended(&self) {
        self.count_wait(&self.waits_ended);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn gate() -> (Arc<AtomicBool>, impl Fn(&TaskCtx) -> AclResult<()> + Send + 'static) {
        let open = Arc::new(AtomicBool::new(false));
        let o = Arc::clone(&open);
        (open, move |ctx: &TaskCtx| {
            while !o.load(Ordering::Acquire) && !ctx.cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        })
    }

    #[test]
    fn a_never_recorded_event_is_complete() {
        Event::new(0).synchronize(Some(Duration::ZERO)).unwrap();
    }

    #[test]
    fn one_record_releases_every_waiter_across_streams() {
        let a = Stream::new(0, 1).unwrap();
        let b = Stream::new(0, 1).unwrap();
        let c = Stream::new(0, 1).unwrap();
        let e = Arc::new(Event::new(0));
        let (open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        e.wait_on(&b, None).unwrap();
        e.wait_on(&c, None).unwrap();
        let after_b = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&after_b);
        b.submit(Box::new(move |_| {
            flag.store(true, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(!after_b.load(Ordering::SeqCst), "b ran past the wait before the record");
        assert_eq!(
            e.synchronize(Some(Duration::from_millis(10))).unwrap_err().code,
            ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
        );
        open.store(true, Ordering::Release);
        b.synchronize(Some(Duration::from_secs(5))).unwrap();
        c.synchronize(Some(Duration::from_secs(5))).unwrap();
        assert!(after_b.load(Ordering::SeqCst));
        e.synchronize(None).unwrap();
    }

    #[test]
    fn reset_returns_the_event_to_not_recorded() {
        let a = Stream::new(0, 1).unwrap();
        let e = Arc::new(Event::new(0));
        let (open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        e.reset(&a).unwrap();
        open.store(true, Ordering::Release);
        a.synchronize(None).unwrap();
        e.synchronize(Some(Duration::ZERO)).unwrap();
    }

    #[test]
    fn a_wait_is_cancelled_when_its_stream_is_force_closed() {
        let a = Stream::new(0, 1).unwrap();
        let b = Stream::new(0, 1).unwrap();
        let e = Arc::new(Event::new(0));
        let (_open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        e.wait_on(&b, None).unwrap();
        let started = Instant::now();
        b.close(true);
        assert!(started.elapsed() < Duration::from_secs(5));
        a.close(true);
    }

    #[test]
    fn a_record_discarded_by_an_abort_releases_the_synchronising_threads() {
        let a = Arc::new(Stream::new(0, 1).unwrap());
        let e = Arc::new(Event::new(0));
        let (_open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        let waiter = {
            let e = Arc::clone(&e);
            std::thread::spawn(move || e.synchronize(None))
        };
        std::thread::sleep(Duration::from_millis(100));
        a.abort(Duration::from_secs(10)).unwrap();
        assert_eq!(waiter.join().unwrap().unwrap_err().code, ACL_ERROR_RT_STREAM_ABORT);
        // A new record on the stream completes normally.
        e.record(&a).unwrap();
        e.synchronize(Some(Duration::from_secs(10))).unwrap();
    }

    #[test]
    fn a_refused_record_changes_nothing() {
        let a = Stream::new(0, 1).unwrap();
        let e = Arc::new(Event::new(0));
        a.close(false);
        assert!(e.record(&a).is_err(), "a closed stream refuses, without deadlocking");
        e.synchronize(Some(Duration::ZERO)).unwrap();
    }

    /// Two events over one cell, as the creator and an opener in two processes see it.
    fn ipc_pair() -> (Arc<Event>, Arc<Event>) {
        use crate::runtime::notify::cell::{self, Cell};
        use crate::sys::memfd::MemFd;
        let c = cell::alone().unwrap();
        let dup = c.page_fd().as_fd().try_clone_to_owned().unwrap();
        let other = Cell::import(MemFd::from(dup), 0).unwrap();
        (
            Arc::new(Event::with(0x40, Origin::Ex, Some(IpcEvent::new(c, None)))),
            Arc::new(Event::with(0x40, Origin::Ex, Some(IpcEvent::new(other, None)))),
        )
    }

    #[test]
    fn an_ipc_events_records_release_waits_on_the_other_side_and_back() {
        let (mine, theirs) = ipc_pair();
        let a = Stream::new(0, 1).unwrap();
        let b = Stream::new(0, 1).unwrap();
        let (open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        mine.record(&a).unwrap();
        assert!(!theirs.is_complete(), "the other side sees the pending record");
        theirs.wait_on(&b, None).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(b.pending(), 1, "the wait holds the other stream");
        open.store(true, Ordering::Release);
        b.synchronize(Some(Duration::from_secs(5))).unwrap();
        assert!(theirs.is_complete() && mine.is_complete());
        // Back: the other side records, this side synchronises on it.
        theirs.record(&b).unwrap();
        mine.synchronize(Some(Duration::from_secs(5))).unwrap();
        assert!(mine.timestamp_ns().is_some(), "a record that ran here has a time");
    }

    #[test]
    fn a_discarded_ipc_record_releases_the_other_side_and_fails_the_local_sync() {
        let (mine, theirs) = ipc_pair();
        let a = Stream::new(0, 1).unwrap();
        let (_open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        mine.record(&a).unwrap();
        // The waiter must be synchronising before the abort (one that starts after it finds
        // the record discarded and run): it says when it is about to, and is given time to.
        let (started, ready) = std::sync::mpsc::channel();
        let waiter = {
            let mine = Arc::clone(&mine);
            std::thread::spawn(move || {
                started.send(()).unwrap();
                mine.synchronize(None)
            })
        };
        ready.recv().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        a.abort(Duration::from_secs(10)).unwrap();
        assert_eq!(waiter.join().unwrap().unwrap_err().code, ACL_ERROR_RT_STREAM_ABORT);
        theirs.synchronize(Some(Duration::ZERO)).expect("no process is left waiting for it");
    }

    #[test]
    fn wait_status_counts_queued_waits_until_they_end() {
        let a = Stream::new(0, 1).unwrap();
        let b = Stream::new(0, 1).unwrap();
        let e = Arc::new(Event::new(0));
        assert!(e.waits_complete());
        let (open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        e.wait_on(&b, None).unwrap();
        assert!(!e.waits_complete());
        assert!(e.timestamp_ns().is_none());
        open.store(true, Ordering::Release);
        b.synchronize(Some(Duration::from_secs(5))).unwrap();
        assert!(e.waits_complete());
        assert!(e.timestamp_ns().is_some());
        // A wait with a time-out fails its task with 107019.
        let (_open, blocker) = gate();
        a.submit(Box::new(blocker)).unwrap();
        e.record(&a).unwrap();
        e.wait_on(&b, Some(Duration::from_millis(30))).unwrap();
        assert_eq!(b.synchronize(Some(Duration::from_secs(5))).unwrap_err().code, ACL_ERROR_RT_WAIT_TIMEOUT);
        assert!(e.waits_complete(), "a failed wait has ended too");
        a.close(true);
    }
}
