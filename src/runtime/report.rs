//! Host callbacks run by a thread of the user's: the report model of `aclrtSubscribeReport`,
//! `aclrtLaunchCallback`, `aclrtProcessReport` (and the same model for host functions with
//! `aclrtSubscribeHostFunc` / `aclrtProcessHostFunc`).
//!
//! A user thread is *subscribed* to streams; a callback task, when its stream reaches it, puts
//! the callback in that thread's mailbox, and the thread runs it inside its next
//! `aclrtProcessReport(timeout)`. A *blocking* callback holds its stream until the thread has
//! run it (its result is the task's); a non-blocking one lets the stream go on at once.
//!
//! Rules, as the vendor's runtime implements them:
//! - a stream has at most one subscribed thread (107011 for a second); a thread may serve
//!   several streams of one device, not of two (107012); at most [`MAX_THREADS`] threads
//!   (507000 beyond);
//! - unsubscribing a stream that has no subscriber is 107011, by another thread than its own
//!   107012;
//! - processing in a thread that serves no stream is 107012; nothing to run within the
//!   time-out is 507012 (`ACL_ERROR_RT_REPORT_TIMEOUT`, which the deprecated
//!   `ACL_ERROR_WAIT_CALLBACK_TIMEOUT` 100036 names);
//! - launching a callback on a stream without a subscriber is 107015.
//!
//! Our choices where the vendor is silent: a callback whose stream lost its subscriber before
//! the callback ran fails its stream task with 107015 (blocking) or is dropped with a warning
//! (non-blocking), so nothing waits forever; a thread waiting in `process` when its last
//! stream is unsubscribed returns 107012 at once. A blocking callback's task ends when its
//! stream is aborted or destroyed, even while the callback runs (its result is then ignored).
//!
//! Streams are keyed by their address, kept from reuse by a weak reference to what owns them
//! (the stream, or the context of a default stream), so a destroyed stream's subscription is
//! never mistaken for a new stream's; it is purged when seen.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, LazyLock, Mutex, Weak};
use std::time::{Duration, Instant};

use super::context::{Context, StreamRef};
use super::stream::{CANCEL_POLL, Stream, TaskCtx};
use super::task::TaskInfo;
use crate::error::rt_codes::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE, ACL_ERROR_RT_THREAD_SUBSCRIBE,
};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync;

/// Subscribed threads a process may have at once (the vendor's limit).
pub const MAX_THREADS: usize = 1024;

/// How often a waiting `process` looks whether its streams still exist.
const LIVENESS_POLL: Duration = Duration::from_millis(100);

/// A callback bound to its argument; `Err` when it failed (a panic caught at the FFI edge).
pub type Callback = Box<dyn FnOnce() -> AclResult<()> + Send>;

/// A callback that can run again: what a stream task keeps, so a captured graph can hand it
/// over at every replay.
pub type SharedCallback = Arc<dyn Fn() -> AclResult<()> + Send + Sync>;

/// Where a blocking callback is.
enum State {
    Queued,
    Running,
    Done(AclResult<()>),
    /// Its task gave up (stream aborted or destroyed) before the thread took it.
    Withdrawn,
}

/// What a blocking callback's task waits on.
struct Slot {
    state: Mutex<State>,
    changed: Condvar,
}

impl Slot {
    fn finish(&self, result: AclResult<()>) {
        *sync::lock(&self.state) = State::Done(result);
        self.changed.notify_all();
    }
}

struct Job {
    stream: usize,
    run: Callback,
    /// Blocking callbacks only.
    slot: Option<Arc<Slot>>,
}

#[derive(Default)]
struct Inbox {
    jobs: VecDeque<Job>,
    /// The thread serves no stream any more: a waiting `process` returns.
    closed: bool,
}

#[derive(Default)]
struct Mailbox {
    inbox: Mutex<Inbox>,
    ready: Condvar,
}

/// What keeps a subscribed stream's address from being reused.
enum Owner {
    Stream(Weak<Stream>),
    Context(Weak<Context>),
}

impl Owner {
    fn of(stream: &StreamRef) -> Owner {
        match stream {
            StreamRef::Created(s) => Owner::Stream(Arc::downgrade(s)),
            StreamRef::Default(c) => Owner::Context(Arc::downgrade(c)),
        }
    }

    fn alive(&self) -> bool {
        match self {
            Owner::Stream(w) => w.strong_count() > 0,
            Owner::Context(w) => w.strong_count() > 0,
        }
    }
}

struct Subscription {
    thread: u64,
    owner: Owner,
}

struct Subscriber {
    device: i32,
    mailbox: Arc<Mailbox>,
}

#[derive(Default)]
struct Tables {
    streams: HashMap<usize, Subscription>,
    threads: HashMap<u64, Subscriber>,
}

impl Tables {
    /// Forgets the subscriptions of destroyed streams, and threads left with none.
    fn purge(&mut self) {
        self.streams.retain(|_, s| s.owner.alive());
        let streams = &self.streams;
        self.threads.retain(|tid, sub| {
            let keep = streams.values().any(|s| s.thread == *tid);
            if !keep {
                close(&sub.mailbox);
            }
            keep
        });
    }
}

fn close(mailbox: &Mailbox) {
    sync::lock(&mailbox.inbox).closed = true;
    mailbox.ready.notify_all();
}

/// The key of a stream in the tables.
pub fn key(stream: &Stream) -> usize {
    std::ptr::from_ref(stream).addr()
}

/// One family of subscriptions: the report callbacks, or the host functions.
pub struct Registry {
    /// The subscribing call, for messages (`aclrtSubscribeReport`).
    subscribe_api: &'static str,
    tables: Mutex<Tables>,
}

/// `aclrtSubscribeReport` / `aclrtLaunchCallback` / `aclrtProcessReport`.
pub static REPORTS: LazyLock<Registry> = LazyLock::new(|| Registry::new("aclrtSubscribeReport"));
/// `aclrtSubscribeHostFunc` / `aclrtProcessHostFunc`: host functions of a subscribed stream
/// run in the subscribed thread instead of the stream's worker.
pub static HOST_FUNCS: LazyLock<Registry> = LazyLock::new(|| Registry::new("aclrtSubscribeHostFunc"));

impl Registry {
    pub fn new(subscribe_api: &'static str) -> Registry {
        Registry { subscribe_api, tables: Mutex::new(Tables::default()) }
    }

    /// Binds thread `thread` to `stream`: the stream's callbacks run in that thread.
    pub fn subscribe(&self, thread: u64, stream: &StreamRef) -> AclResult<()> {
        let mut t = sync::lock(&self.tables);
        t.purge();
        let k = key(stream);
        if let Some(s) = t.streams.get(&k) {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "the stream already has a subscribed thread ({}); a stream is served by one thread \
                     only: unsubscribe it first",
                    s.thread
                ),
            ));
        }
        match t.threads.get(&thread) {
            Some(sub) if sub.device != stream.device => {
                return Err(AclError::new(
                    ACL_ERROR_RT_THREAD_SUBSCRIBE,
                    format!(
                        "thread {thread} already serves streams of device {}; one thread serves streams \
                         of one device only (the stream is on device {})",
                        sub.device, stream.device
                    ),
                ));
            }
            Some(_) => {}
            None => {
                if t.threads.len() >= MAX_THREADS {
                    return Err(AclError::new(
                        ACL_ERROR_RT_INTERNAL_ERROR,
                        format!("{MAX_THREADS} threads are subscribed already, the most a process may have"),
                    ));
                }
                t.threads.insert(thread, Subscriber { device: stream.device, mailbox: Arc::default() });
            }
        }
        t.streams.insert(k, Subscription { thread, owner: Owner::of(stream) });
        Ok(())
    }

    /// Unbinds `thread` from `stream`. Callbacks of the stream still waiting for the thread
    /// are withdrawn: a blocking one fails its task with 107015, so the stream goes on.
    pub fn unsubscribe(&self, thread: u64, stream: &Stream) -> AclResult<()> {
        let k = key(stream);
        let mailbox = {
            let mut t = sync::lock(&self.tables);
            match t.streams.get(&k) {
                None => {
                    return Err(AclError::new(
                        ACL_ERROR_RT_STREAM_SUBSCRIBE,
                        format!(
                            "the stream has no subscribed thread ({} was not called for it)",
                            self.subscribe_api
                        ),
                    ));
                }
                Some(s) if s.thread != thread => {
                    return Err(AclError::new(
                        ACL_ERROR_RT_THREAD_SUBSCRIBE,
                        format!("the stream is served by thread {}, not by thread {thread}", s.thread),
                    ));
                }
                Some(_) => {}
            }
            t.streams.remove(&k);
            let last = !t.streams.values().any(|s| s.thread == thread);
            let mailbox = if last {
                t.threads.remove(&thread).map(|s| s.mailbox)
            } else {
                t.threads.get(&thread).map(|s| Arc::clone(&s.mailbox))
            };
            if let (true, Some(m)) = (last, &mailbox) {
                close(m);
            }
            mailbox
        };
        if let Some(m) = mailbox {
            let withdrawn: VecDeque<Job> = {
                let mut inbox = sync::lock(&m.inbox);
                let (gone, kept) = std::mem::take(&mut inbox.jobs).into_iter().partition(|j| j.stream == k);
                inbox.jobs = kept;
                gone
            };
            for job in withdrawn {
                match job.slot {
                    Some(slot) => slot.finish(Err(unsubscribed())),
                    None => log::warn!(
                        target: TARGET,
                        "a non-blocking callback was dropped: its stream was unsubscribed before it ran"
                    ),
                }
            }
        }
        Ok(())
    }

    /// Whether `stream` has a subscribed thread.
    pub fn subscribed(&self, stream: &Stream) -> bool {
        let t = sync::lock(&self.tables);
        t.streams.get(&key(stream)).is_some_and(|s| s.owner.alive())
    }

    fn mailbox_of_stream(&self, stream: usize) -> Option<Arc<Mailbox>> {
        let t = sync::lock(&self.tables);
        let s = t.streams.get(&stream)?;
        t.threads.get(&s.thread).map(|sub| Arc::clone(&sub.mailbox))
    }

    /// Queues on `stream` a task that hands `callback` to the stream's subscribed thread;
    /// `block` holds the stream's later tasks until the thread has run it. 107015 when the
    /// stream has no subscriber.
    pub fn launch(&'static self, stream: &Stream, callback: SharedCallback, block: bool) -> AclResult<()> {
        if !self.subscribed(stream) {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_NO_CB_REG,
                format!(
                    "the stream has no thread to run its callbacks: create one that loops on \
                     aclrtProcessReport and bind it with {} first",
                    self.subscribe_api
                ),
            ));
        }
        let k = key(stream);
        stream.submit_op(TaskInfo::plain("callback"), move |ctx| {
            let f = Arc::clone(&callback);
            match self.hand_over(k, Box::new(move || f()), block, ctx) {
                Handed::Done(r) => r,
                Handed::NoSubscriber(_) => Err(unsubscribed()),
            }
        })
    }

    /// Runs `callback` in the subscribed thread of stream `stream` (waiting for it when
    /// `block`), or gives it back when the stream has none.
    pub(crate) fn hand_over(&self, stream: usize, callback: Callback, block: bool, ctx: &TaskCtx) -> Handed {
        let Some(mailbox) = self.mailbox_of_stream(stream) else {
            return Handed::NoSubscriber(callback);
        };
        let slot =
            block.then(|| Arc::new(Slot { state: Mutex::new(State::Queued), changed: Condvar::new() }));
        {
            let mut inbox = sync::lock(&mailbox.inbox);
            if inbox.closed {
                return Handed::NoSubscriber(callback);
            }
            inbox.jobs.push_back(Job { stream, run: callback, slot: slot.clone() });
        }
        mailbox.ready.notify_one();
        let Some(slot) = slot else {
            return Handed::Done(Ok(()));
        };
        let mut state = sync::lock(&slot.state);
        loop {
            if let State::Done(_) = &*state {
                let State::Done(r) = std::mem::replace(&mut *state, State::Withdrawn) else { unreachable!() };
                return Handed::Done(r);
            }
            if ctx.cancelled() {
                let running = matches!(*state, State::Running);
                *state = State::Withdrawn;
                return Handed::Done(Err(AclError::new(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    if running {
                        "the stream was aborted or destroyed while its callback ran; the stream no longer waits for it"
                    } else {
                        "the stream was aborted or destroyed before its callback ran; the callback will not run"
                    },
                )));
            }
            state = sync::wait_timeout(&slot.changed, state, CANCEL_POLL).0;
        }
    }

    /// `aclrtProcessReport`: in thread `thread`, waits up to `timeout` (`None`: no limit) for
    /// callbacks of its streams, then runs every one queued. Returns the first failure of a
    /// callback it ran, after running the rest.
    pub fn process(&self, thread: u64, timeout: Option<Duration>) -> AclResult<()> {
        let mailbox = {
            let mut t = sync::lock(&self.tables);
            t.purge();
            match t.threads.get(&thread) {
                Some(sub) => Arc::clone(&sub.mailbox),
                None => return Err(not_subscribed(thread, self.subscribe_api)),
            }
        };
        let deadline = timeout.map(|t| Instant::now() + t);
        let jobs = {
            let mut inbox = sync::lock(&mailbox.inbox);
            loop {
                if !inbox.jobs.is_empty() {
                    break std::mem::take(&mut inbox.jobs);
                }
                if inbox.closed {
                    return Err(not_subscribed(thread, self.subscribe_api));
                }
                let mut slice = LIVENESS_POLL;
                if let Some(d) = deadline {
                    let now = Instant::now();
                    if now >= d {
                        return Err(AclError::benign(
                            ACL_ERROR_RT_REPORT_TIMEOUT,
                            format!(
                                "no callback to run within {} ms",
                                timeout.unwrap_or_default().as_millis()
                            ),
                        ));
                    }
                    slice = slice.min(d - now);
                }
                let (guard, timed_out) = sync::wait_timeout(&mailbox.ready, inbox, slice);
                inbox = guard;
                if timed_out && inbox.jobs.is_empty() {
                    // Streams destroyed without being unsubscribed: a thread left with none
                    // has nothing to wait for.
                    drop(inbox);
                    sync::lock(&self.tables).purge();
                    inbox = sync::lock(&mailbox.inbox);
                }
            }
        };
        let mut first_error = None;
        for job in jobs {
            if let Some(slot) = &job.slot {
                let mut state = sync::lock(&slot.state);
                if matches!(*state, State::Withdrawn) {
                    continue;
                }
                *state = State::Running;
            }
            let result = (job.run)();
            if let Err(e) = &result {
                log::error!(target: TARGET, "host callback failed: {}", e.message);
                first_error.get_or_insert_with(|| e.clone());
            }
            if let Some(slot) = job.slot {
                let mut state = sync::lock(&slot.state);
                if !matches!(*state, State::Withdrawn) {
                    *state = State::Done(result);
                    slot.changed.notify_all();
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// What [`Registry::hand_over`] did.
pub(crate) enum Handed {
    Done(AclResult<()>),
    NoSubscriber(Callback),
}

fn unsubscribed() -> AclError {
    AclError::new(
        ACL_ERROR_RT_STREAM_NO_CB_REG,
        "the stream's callback thread was unsubscribed before the callback ran; the callback was not run",
    )
}

/// Benign: a report thread polls before its subscription and after its unsubscription.
fn not_subscribed(thread: u64, api: &str) -> AclError {
    AclError::benign(
        ACL_ERROR_RT_THREAD_SUBSCRIBE,
        format!("thread {thread} serves no stream: bind it to a stream with {api} first"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn stream(device: i32) -> StreamRef {
        StreamRef::Created(Arc::new(Stream::new(device, 1).unwrap()))
    }

    fn registry() -> &'static Registry {
        Box::leak(Box::new(Registry::new("test")))
    }

    #[test]
    fn blocking_callbacks_hold_the_stream_until_processed() {
        let r = registry();
        let s = stream(0);
        r.subscribe(7, &s).unwrap();
        let ran = Arc::new(AtomicU32::new(0));
        for block in [true, false, true] {
            let ran = Arc::clone(&ran);
            r.launch(
                &s,
                Arc::new(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }),
                block,
            )
            .unwrap();
        }
        let e = s.synchronize(Some(Duration::from_millis(30))).unwrap_err();
        assert_eq!(e.code, crate::error::rt_codes::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        // Each process runs what is queued; the stream goes on after each blocking one.
        let start = Instant::now();
        while ran.load(Ordering::SeqCst) < 3 {
            assert!(start.elapsed() < Duration::from_secs(10));
            let _ = r.process(7, Some(Duration::from_millis(20)));
        }
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(
            r.process(7, Some(Duration::from_millis(1))).unwrap_err().code,
            ACL_ERROR_RT_REPORT_TIMEOUT
        );
        assert_eq!(r.process(8, None).unwrap_err().code, ACL_ERROR_RT_THREAD_SUBSCRIBE);
    }

    #[test]
    fn subscription_rules() {
        let r = registry();
        let (a, b, other) = (stream(0), stream(0), stream(1));
        r.subscribe(1, &a).unwrap();
        assert_eq!(r.subscribe(2, &a).unwrap_err().code, ACL_ERROR_RT_STREAM_SUBSCRIBE);
        r.subscribe(1, &b).unwrap();
        assert_eq!(r.subscribe(1, &other).unwrap_err().code, ACL_ERROR_RT_THREAD_SUBSCRIBE);
        assert_eq!(r.unsubscribe(2, &a).unwrap_err().code, ACL_ERROR_RT_THREAD_SUBSCRIBE);
        assert_eq!(r.unsubscribe(1, &other).unwrap_err().code, ACL_ERROR_RT_STREAM_SUBSCRIBE);
        r.unsubscribe(1, &a).unwrap();
        assert_eq!(r.launch(&a, Arc::new(|| Ok(())), true).unwrap_err().code, ACL_ERROR_RT_STREAM_NO_CB_REG);
        // A dropped stream's subscription goes with it.
        drop(b);
        assert_eq!(
            r.process(1, Some(Duration::from_millis(1))).unwrap_err().code,
            ACL_ERROR_RT_THREAD_SUBSCRIBE
        );
        r.subscribe(1, &other).unwrap();
    }
}
