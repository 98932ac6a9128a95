//! Events: markers recorded on a stream. One record releases every waiter (unlike a notify,
//! where one record releases one wait).
//!
//! Each record gets a sequence number when it is queued; the event is complete for a waiter
//! once the record it saw has run. Waiting on an event never recorded returns at once.
//!
//! A record its stream discards without running (`aclrtStreamAbort`, a forced destroy) can
//! never complete: threads synchronising with it are released with 107023 rather than left
//! waiting, as the vendor documents for an abort.

use std::collections::BTreeSet;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::stream::{CANCEL_POLL, Stream, TaskCtx};
use crate::error::rt_codes::{
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_STREAM_ABORT,
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

pub struct Event {
    state: Mutex<State>,
    changed: Condvar,
    /// Sequence numbers of records discarded without running. A lock of its own, held only
    /// to read or insert: a record is dropped under its stream's lock, sometimes while
    /// `state` is held (a refused submit), so noting it must not take `state`.
    discarded: Mutex<BTreeSet<u64>>,
    pub flags: u32,
}

impl Event {
    pub fn new(flags: u32) -> Event {
        Event {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            discarded: Mutex::new(BTreeSet::new()),
            flags,
        }
    }

    /// Queues a record on `stream`.
    pub fn record(self: &Arc<Self>, stream: &Stream) -> AclResult<()> {
        let mut s = sync::lock(&self.state);
        let seq = s.recorded + 1;
        let record = Record { event: Arc::clone(self), seq, ran: false };
        stream.submit(Box::new(move |_| {
            let mut record = record;
            record.ran = true;
            record.event.complete(seq);
            Ok(())
        }))?;
        s.recorded = seq;
        Ok(())
    }

    fn discard(&self, seq: u64) {
        sync::lock(&self.discarded).insert(seq);
        // Without `state` held a waiter may miss this wake-up; waiters look again every
        // CANCEL_POLL.
        self.changed.notify_all();
    }

    fn complete(&self, seq: u64) {
        let mut s = sync::lock(&self.state);
        s.completed = s.completed.max(seq);
        drop(s);
        // Discarded records up to a completed one no longer matter to anyone.
        sync::lock(&self.discarded).retain(|&d| d > seq);
        self.changed.notify_all();
    }

    /// Queues a reset on `stream`: when it runs, every record so far counts as complete, so
    /// the event is back in its initial (not recorded) state.
    pub fn reset(self: &Arc<Self>, stream: &Stream) -> AclResult<()> {
        let event = Arc::clone(self);
        stream.submit(Box::new(move |_| {
            let mut s = sync::lock(&event.state);
            s.completed = s.recorded;
            drop(s);
            event.changed.notify_all();
            Ok(())
        }))
    }

    /// Blocks until the latest record queued before this call has run. `None` waits without
    /// limit; on time-out the error is 507047; 107023 when that record was discarded.
    pub fn synchronize(&self, timeout: Option<Duration>) -> AclResult<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = sync::lock(&self.state);
        let target = s.recorded;
        while s.completed < target {
            if sync::lock(&self.discarded).contains(&target) {
                return Err(AclError::new(
                    ACL_ERROR_RT_STREAM_ABORT,
                    "the event's record was discarded: its stream was aborted or destroyed",
                ));
            }
            s = match deadline {
                None => sync::wait_timeout(&self.changed, s, CANCEL_POLL).0,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(AclError::new(
                            ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                            format!(
                                "event not complete after {} ms",
                                timeout.unwrap_or_default().as_millis()
                            ),
                        ));
                    }
                    sync::wait_timeout(&self.changed, s, (d - now).min(CANCEL_POLL)).0
                }
            };
        }
        Ok(())
    }

    /// Queues on `stream` a wait for the latest record queued before this call.
    pub fn wait_on(self: &Arc<Self>, stream: &Stream) -> AclResult<()> {
        let target = sync::lock(&self.state).recorded;
        let event = Arc::clone(self);
        stream.submit(Box::new(move |ctx| event.wait_in_task(target, ctx)))
    }

    fn wait_in_task(&self, target: u64, ctx: &TaskCtx) -> AclResult<()> {
        let mut s = sync::lock(&self.state);
        while s.completed < target {
            if ctx.cancelled() {
                return Err(AclError::new(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    "event wait cancelled: stream destroyed",
                ));
            }
            s = sync::wait_timeout(&self.changed, s, CANCEL_POLL).0;
        }
        Ok(())
    }
}

/// A queued record: dropped without having run, it tells the event so.
struct Record {
    event: Arc<Event>,
    seq: u64,
    ran: bool,
}

impl Drop for Record {
    fn drop(&mut self) {
        if !self.ran {
            self.event.discard(self.seq);
        }
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
        e.wait_on(&b).unwrap();
        e.wait_on(&c).unwrap();
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
        e.wait_on(&b).unwrap();
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
}
