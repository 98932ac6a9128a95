//! Asynchronous transfers: the requests of TransferAsync and the per-engine workers that run
//! them.
//!
//! A request is made in the caller's thread (descriptors checked and copied, local memory
//! resolved), then queued; a worker thread of the engine runs it exactly as TransferSync
//! would (same-host path or TCP) and records the outcome. Workers are started on demand, up to
//! [`MAX_WORKERS`] per engine, and end when idle for a while or when the engine finalizes. A
//! request counts against [`MAX_REQUESTS`] from submission until GetTransferStatus has reported
//! it COMPLETED, TIMEOUT or FAILED (and freed it). A request whose time limit passes fails with
//! the TIMEOUT status in its job (the paths stop at the deadline), so it is reported TIMEOUT
//! only once nothing touches the caller's memory any more.
//!
//! # A slab of request slots, not a handle table
//! Collecting completions is the hot path of an application with many requests in flight, so
//! a request is not an object of its own: it is a slot of its engine's slab, reused.
//! - What the caller's thread reads and writes (each slot's generation, `user_data` and place
//!   in the submission-order list, and the free list) is the [`Book`], behind one lock the
//!   workers never take.
//! - What a worker writes when a request ends is its slot's status word, in one dense array,
//!   sixteen to a cache line, and its outcome (the failure's message), which only a single
//!   GetTransferStatus reads.
//!
//! So the batched GetTransferStatus is one walk of a linked list under one lock, reading a
//! status word per request and freeing what it reports by moving the slot to the free list:
//! no lookups, no allocation, nothing freed to the allocator. A request's handle is the usual
//! 64-bit handle (see [`crate::handle`]) whose id names the engine's tag, the slot's generation
//! and the slot: a handle of another engine, or one already reported done (the slot moved to
//! a later generation), is refused as PARAM_INVALID. Generations have 20 bits and slots are
//! reused oldest-free first, so a stale handle is recognised until its slot has served about
//! 2^20 more requests (4 billion requests of the engine when all slots are used in turn).

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::engine::limits::{MAX_REQUESTS, MAX_WORKERS};
use crate::engine::path::pieces::Pieces;
use crate::error::engine_status::{ADXL_FAILED, ADXL_PARAM_INVALID, ADXL_TIMEOUT};
use crate::error::{EngineError, EngineResult};
use crate::handle::FromHandleError;
use crate::handle::{self, HandleKind, ID_BITS};
use crate::sync::{Job, Pool, PoolOptions, Refused, lock, wait_timeout};

/// The values of `adxl::TransferStatus` (the vendor's enum class, in its order) that
/// GetTransferStatus reports.
pub const TRANSFER_WAITING: i32 = 0;
pub const TRANSFER_COMPLETED: i32 = 1;
/// The request's time limit passed before its data had landed; its job has stopped.
pub const TRANSFER_TIMEOUT: i32 = 2;
pub const TRANSFER_FAILED: i32 = 3;

/// A worker idle this long ends.
const IDLE_EXIT: Duration = Duration::from_secs(5);
/// How long a worker that ran out of requests watches for the next before it sleeps: about
/// what waking it would cost (see [`crate::sync::PoolOptions::watch`]).
const WORKER_WATCH: Duration = Duration::from_micros(50);

/// A thread that has polled one waiting request for this long with no pause between polls
/// ([`POLL_GAP`]) takes pieces of the request's same-host copy when it has some left (see
/// [`Requests::offer`]): it would otherwise spin beside the worker copying them. A caller that
/// polls now and then, between work of its own, is not held up by a copy.
const POLL_HELP: Duration = Duration::from_micros(2);
/// What a poll copies at most before it answers (a few tens of microseconds).
const HELP_BUDGET: usize = 1 << 20;

/// A thread that has polled one waiting request for this long with no pause between polls,
/// while the engine holds other requests too, is parked until the request ends or
/// [`POLL_PARK`] passes. A poll spinning on a CPU takes it from the workers and from the
/// peer's readers: on two CPUs, eight 1 MiB WRITEs in flight over TCP moved 4.0-4.6 GB/s with
/// the caller spinning on GetTransferStatus and 4.1-7.1 GB/s with it parked, about what eight
/// raw socket pairs move (docs/performance.md). With one request in flight the spin is left alone: the poll is then the
/// only thread waiting, and a parked one woke late behind the worker (4 KiB READs 0.7x).
const POLL_SPIN: Duration = Duration::from_micros(10);
/// Polls further apart than this are not a tight loop (the caller does something between).
const POLL_GAP: Duration = Duration::from_micros(10);
/// The longest a poll stays parked: it returns WAITING after it, or at once when the request
/// ends.
const POLL_PARK: Duration = Duration::from_micros(100);

thread_local! {
    /// This thread's run of polls of one waiting request: its handle, when the run began and
    /// when the last poll was.
    static POLL_RUN: std::cell::Cell<Option<(u64, Instant, Instant)>> = const { std::cell::Cell::new(None) };
}

/// Notes a poll that found `raw` waiting: how long this thread has polled it in a tight loop.
fn tight_poll(raw: u64) -> Duration {
    let now = Instant::now();
    let since = match POLL_RUN.get() {
        Some((r, since, last)) if r == raw && now.duration_since(last) < POLL_GAP => since,
        _ => now,
    };
    POLL_RUN.set(Some((raw, since, now)));
    now.duration_since(since)
}

/// Ends a park or a share of the copy: the run goes on from now (neither is a pause of the
/// caller's).
fn parked_until_now() {
    if let Some((raw, since, _)) = POLL_RUN.get() {
        POLL_RUN.set(Some((raw, since, Instant::now())));
    }
}

/// A request handle's id: `tag << (GEN_BITS + SLOT_BITS) | generation << SLOT_BITS | slot`.
const SLOT_BITS: u32 = 12;
const GEN_BITS: u32 = 20;
const TAG_BITS: u32 = ID_BITS - GEN_BITS - SLOT_BITS;
const GEN_MASK: u32 = (1 << GEN_BITS) - 1;
const _: () = assert!(MAX_REQUESTS <= 1 << SLOT_BITS);

/// Slots are made a chunk at a time, as an engine first holds that many requests.
const CHUNK: usize = 256;
const CHUNKS: usize = MAX_REQUESTS.div_ceil(CHUNK);

/// The end of the submission-order list.
const NIL: u32 = u32::MAX;

/// Each engine's requests carry a tag of their own, so a handle of another engine is refused.
static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

/// A request as its engine names it: its slot and the slot's generation while it holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    slot: u32,
    generation: u32,
}

/// The requests service: the slab of request slots and the workers that run them.
pub struct Requests {
    /// This engine's tag in its request handles (never 0, so a handle's id is never 0).
    tag: u64,
    book: Mutex<Book>,
    /// The `TRANSFER_*` value of each slot: written by the worker that ends the request, read
    /// without a lock by the polls (the Book says which slots hold requests).
    status: Box<[AtomicI32]>,
    /// Requests ended and not yet reported: a batched poll that skips the WAITING ones stops
    /// walking once it has met this many (the rest are still waiting).
    ended: AtomicUsize,
    /// Batched polls parked until a request ends (see [`Requests::poll_batch`]): their count,
    /// which a worker reads to know whether to wake them, and where they wait.
    batch_waiters: AtomicUsize,
    any_ended: (Mutex<()>, Condvar),
    /// What a worker writes besides the status (made a chunk at a time).
    chunks: [OnceLock<Box<[Slot]>>; CHUNKS],
    /// The workers; a job that panics is logged and its worker takes the next one.
    workers: Pool,
}

/// What the caller's threads keep of the slots: one lock, never taken by a worker.
#[derive(Default)]
struct Book {
    /// One per slot made so far.
    entries: Vec<Entry>,
    /// Slots free for a new request, the longest-free first (spreads the generations).
    free: VecDeque<u32>,
    /// The requests held, oldest first: a list linked through the entries.
    head: u32,
    tail: u32,
    held: usize,
}

struct Entry {
    /// The generation of the request in the slot, or of the next one when the slot is free.
    generation: u32,
    held: bool,
    user_data: usize,
    prev: u32,
    next: u32,
}

/// What a request's worker writes besides its status word.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    done: Condvar,
}

#[derive(Default)]
struct SlotState {
    /// The generation of the request these fields describe.
    generation: u32,
    remote: String,
    outcome: Outcome,
    /// Threads waiting in [`Requests::wait_in_flight_to`] or parked in [`Requests::poll`]: a
    /// worker wakes them only when there are some (a wake-up is a system call).
    waiters: u32,
    /// The same-host copy the request's worker is running, which polls may share.
    pieces: Option<Arc<Pieces>>,
}

/// One request reported by [`Requests::poll_batch`]: its handle, the caller's `user_data`
/// and the status (a `TRANSFER_*` value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polled {
    pub handle: u64,
    pub user_data: usize,
    pub status: i32,
}

/// What a single GetTransferStatus found.
#[derive(Debug, Clone)]
pub enum Poll {
    Waiting,
    /// Done, and freed: its outcome and, when it failed, the engine it went to.
    Done {
        outcome: Outcome,
        remote: String,
    },
}

/// The outcome of a request.
#[derive(Debug, Clone, Default)]
pub enum Outcome {
    #[default]
    Waiting,
    Completed,
    /// The transfer failed; `link_gone` when the link to the peer went away (Disconnect,
    /// peer death, Finalize).
    Failed {
        status: u32,
        message: String,
        link_gone: bool,
    },
}

impl Outcome {
    /// The `TRANSFER_*` value to report (a time-out is TIMEOUT, any other failure FAILED).
    pub fn status(&self) -> i32 {
        match self {
            Outcome::Waiting => TRANSFER_WAITING,
            Outcome::Completed => TRANSFER_COMPLETED,
            Outcome::Failed { status, .. } if *status == ADXL_TIMEOUT => TRANSFER_TIMEOUT,
            Outcome::Failed { .. } => TRANSFER_FAILED,
        }
    }
}

impl Book {
    fn unlink(&mut self, slot: u32) {
        let Entry { prev, next, .. } = self.entries[slot as usize];
        match prev {
            NIL => self.head = next,
            p => self.entries[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.entries[n as usize].prev = prev,
        }
    }

    /// Frees the slot of a request reported done: a later handle to it is stale.
    fn free(&mut self, slot: u32) {
        self.unlink(slot);
        let e = &mut self.entries[slot as usize];
        e.held = false;
        e.generation = (e.generation + 1) & GEN_MASK;
        self.free.push_back(slot);
        self.held -= 1;
    }
}

impl Requests {
    /// The service of a new engine; no worker runs until a request is submitted.
    pub fn new() -> io::Result<Requests> {
        Requests::with_workers(MAX_WORKERS)
    }

    fn with_workers(max_workers: usize) -> io::Result<Requests> {
        let workers = Pool::new(PoolOptions {
            name: "adxl-async".into(),
            min_workers: 0,
            max_workers,
            // Every queued job is a request held, so the queue never holds more.
            capacity: MAX_REQUESTS,
            idle_exit: Some(IDLE_EXIT),
            max_idle: usize::MAX,
            // A caller that keeps one request in flight submits the next as soon as it sees
            // the last one end: the worker that ran it takes it without being woken.
            watch: WORKER_WATCH,
        })?;
        let tag = loop {
            let t = u64::from(NEXT_TAG.fetch_add(1, Ordering::Relaxed)) & ((1 << TAG_BITS) - 1);
            if t != 0 {
                break t;
            }
        };
        Ok(Requests {
            tag,
            book: Mutex::new(Book { head: NIL, tail: NIL, ..Book::default() }),
            status: (0..MAX_REQUESTS).map(|_| AtomicI32::new(TRANSFER_WAITING)).collect(),
            ended: AtomicUsize::new(0),
            batch_waiters: AtomicUsize::new(0),
            any_ended: (Mutex::new(()), Condvar::new()),
            chunks: Default::default(),
            workers,
        })
    }

    fn slot(&self, slot: u32) -> &Slot {
        let chunk =
            self.chunks[slot as usize / CHUNK].get_or_init(|| (0..CHUNK).map(|_| Slot::default()).collect());
        &chunk[slot as usize % CHUNK]
    }

    /// The handle the caller holds for `t`.
    pub fn handle(&self, t: Ticket) -> u64 {
        let id =
            (self.tag << (GEN_BITS + SLOT_BITS)) | (u64::from(t.generation) << SLOT_BITS) | u64::from(t.slot);
        handle::compose(HandleKind::TransferRequest, id)
    }

    /// The request `raw` names if it is a handle of this engine's requests (held or not).
    fn ticket(&self, raw: u64) -> EngineResult<Ticket> {
        let what = "transfer request";
        let id = handle::id_of(raw, HandleKind::TransferRequest)
            .map_err(|e| EngineError::from_handle_error(what, e))?;
        if id >> (GEN_BITS + SLOT_BITS) != self.tag {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "the request belongs to another engine"));
        }
        Ok(Ticket {
            slot: (id & ((1 << SLOT_BITS) - 1)) as u32,
            generation: ((id >> SLOT_BITS) as u32) & GEN_MASK,
        })
    }

    /// A new request to `remote` carrying `user_data`, held and WAITING, last in submission
    /// order; `None` when [`MAX_REQUESTS`] are held.
    pub fn start(&self, remote: &str, user_data: usize) -> Option<Ticket> {
        let mut book = lock(&self.book);
        let slot = match book.free.pop_front() {
            Some(s) => s,
            None if book.entries.len() < MAX_REQUESTS => {
                book.entries.push(Entry { generation: 0, held: false, user_data: 0, prev: NIL, next: NIL });
                (book.entries.len() - 1) as u32
            }
            None => return None,
        };
        let tail = book.tail;
        let e = &mut book.entries[slot as usize];
        let t = Ticket { slot, generation: e.generation };
        *e = Entry { generation: t.generation, held: true, user_data, prev: tail, next: NIL };
        match tail {
            NIL => book.head = slot,
            p => book.entries[p as usize].next = slot,
        }
        book.tail = slot;
        book.held += 1;
        // Before the slot is in the list a batched poll walks (under this lock).
        self.status[slot as usize].store(TRANSFER_WAITING, Ordering::Release);
        drop(book);
        let mut state = lock(&self.slot(slot).state);
        state.generation = t.generation;
        state.remote.clear();
        state.remote.push_str(remote);
        state.outcome = Outcome::Waiting;
        Some(t)
    }

    /// A request whose job never ran (the queue refused it): freed without being reported.
    pub fn cancel(&self, t: Ticket) {
        let mut book = lock(&self.book);
        if book.entries[t.slot as usize].held && book.entries[t.slot as usize].generation == t.generation {
            book.free(t.slot);
        }
    }

    /// Offers the pieces of the same-host copy `t`'s worker runs to the threads polling `t`
    /// (`None`: the copy has ended). The worker waits for the pieces a poll took before it
    /// ends the request, so nothing writes the caller's memory once it is reported done.
    pub fn offer(&self, t: Ticket, pieces: Option<Arc<Pieces>>) {
        let mut state = lock(&self.slot(t.slot).state);
        if state.generation == t.generation {
            state.pieces = pieces;
        }
    }

    /// Takes pieces of `t`'s same-host copy, if its worker offers some not yet taken; whether
    /// it copied any.
    fn help(&self, t: Ticket) -> bool {
        let pieces = {
            let state = lock(&self.slot(t.slot).state);
            match &state.pieces {
                Some(p) if state.generation == t.generation && p.left() => Arc::clone(p),
                _ => return false,
            }
        };
        pieces.take(HELP_BUDGET) > 0
    }

    /// Records the outcome of `t`'s job (a failure because the link went away is
    /// `link_gone`), then wakes who waits for it.
    pub fn finish(&self, t: Ticket, result: EngineResult<()>, link_gone: bool) {
        let outcome = match result {
            Ok(()) => Outcome::Completed,
            Err(e) => Outcome::Failed { status: e.status, message: e.message, link_gone },
        };
        let slot = self.slot(t.slot);
        let mut state = lock(&slot.state);
        // Counted before it shows: a poll that sees the status and takes the count down
        // never takes it below zero.
        // SeqCst with the count of parked batched polls: either such a poll sees this end, or
        // this sees the poll and wakes it (see `park_batch`).
        self.ended.fetch_add(1, Ordering::SeqCst);
        self.status[t.slot as usize].store(outcome.status(), Ordering::Release);
        state.outcome = outcome;
        state.pieces = None;
        if state.waiters > 0 {
            slot.done.notify_all();
        }
        drop(state);
        if self.batch_waiters.load(Ordering::SeqCst) > 0 {
            let _g = lock(&self.any_ended.0);
            self.any_ended.1.notify_all();
        }
    }

    /// Parks a batched poll until a request ends or [`POLL_PARK`] passes.
    fn park_batch(&self) {
        let deadline = Instant::now() + POLL_PARK;
        let mut g = lock(&self.any_ended.0);
        self.batch_waiters.fetch_add(1, Ordering::SeqCst);
        while self.ended.load(Ordering::SeqCst) == 0 {
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                break;
            };
            g = wait_timeout(&self.any_ended.1, g, left).0;
        }
        self.batch_waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// The single GetTransferStatus: the status of the request `raw` names; one reported done
    /// is freed (asking again: PARAM_INVALID). A thread that has polled a waiting request in a
    /// tight loop for [`POLL_HELP`] copies pieces of its same-host copy when some are left;
    /// one that has for [`POLL_SPIN`] while others are held is parked, and answered when the
    /// request ends or [`POLL_PARK`] has passed.
    pub fn poll(&self, raw: u64) -> EngineResult<Poll> {
        let t = self.ticket(raw)?;
        let mut once = false;
        loop {
            let mut book = lock(&self.book);
            let e = book.entries.get(t.slot as usize);
            if !e.is_some_and(|e| e.held && e.generation == t.generation) {
                return Err(EngineError::new(
                    ADXL_PARAM_INVALID,
                    "the transfer request is not held (already reported done, or never handed out)",
                ));
            }
            if self.status[t.slot as usize].load(Ordering::Acquire) == TRANSFER_WAITING {
                let others = book.held > 1;
                drop(book);
                if once {
                    return Ok(Poll::Waiting);
                }
                let run = tight_poll(raw);
                if run >= POLL_HELP && self.help(t) {
                    // The worker ends the request once the last piece has landed: look again.
                } else if run >= POLL_SPIN && others {
                    self.wait(t, None, Instant::now() + POLL_PARK);
                } else {
                    return Ok(Poll::Waiting);
                }
                parked_until_now();
                once = true;
                continue;
            }
            // Read before the slot is free for a new request to overwrite (and left in place
            // for those waiting on it to see).
            let state = lock(&self.slot(t.slot).state);
            let done = match &state.outcome {
                Outcome::Completed => Poll::Done { outcome: Outcome::Completed, remote: String::new() },
                failed => Poll::Done { outcome: failed.clone(), remote: state.remote.clone() },
            };
            drop(state);
            book.free(t.slot);
            self.ended.fetch_sub(1, Ordering::Relaxed);
            return Ok(done);
        }
    }

    /// The batched GetTransferStatus: one pass over the requests held, oldest first, reporting
    /// each (the WAITING ones only unless `skip_waiting`) until `max` are reported. A request
    /// reported COMPLETED, TIMEOUT or FAILED is freed and not reported again; a failure because
    /// the link went away is FAILED here (the caller learns of it from the status, not from an
    /// error).
    pub fn poll_batch(&self, max: usize, skip_waiting: bool) -> Vec<Polled> {
        let mut out = Vec::new();
        if max == 0 {
            return out;
        }
        let mut book = lock(&self.book);
        // Those that end during the walk may be missed: the next poll reports them.
        let mut ended = self.ended.load(Ordering::Relaxed);
        if ended == 0 {
            // Nothing to report done: a thread polling in a tight loop while several requests
            // are held is parked until one ends, as a single poll is (its run is that of the
            // handle 0, which no request has).
            if book.held > 1 && tight_poll(0) >= POLL_SPIN {
                drop(book);
                self.park_batch();
                parked_until_now();
                book = lock(&self.book);
                ended = self.ended.load(Ordering::Relaxed);
            }
            if skip_waiting && ended == 0 {
                return out;
            }
        }
        out.reserve(if skip_waiting { ended.min(book.held) } else { book.held }.min(max));
        let mut found = 0;
        let mut at = book.head;
        while at != NIL && out.len() < max && !(skip_waiting && found >= ended) {
            let Entry { generation, user_data, next, .. } = book.entries[at as usize];
            let status = self.status[at as usize].load(Ordering::Acquire);
            let handle = self.handle(Ticket { slot: at, generation });
            if status != TRANSFER_WAITING {
                out.push(Polled { handle, user_data, status });
                book.free(at);
                found += 1;
            } else if !skip_waiting {
                out.push(Polled { handle, user_data, status });
            }
            at = next;
        }
        self.ended.fetch_sub(found, Ordering::Relaxed);
        if found > 0 {
            // The next wait is a run of its own.
            POLL_RUN.set(None);
        }
        out
    }

    /// Waits, until `deadline`, for every request to `remote` held now and not yet done;
    /// whether they all ended in time.
    pub fn wait_in_flight_to(&self, remote: &str, deadline: Instant) -> bool {
        let waiting: Vec<Ticket> = {
            let book = lock(&self.book);
            let mut list = Vec::new();
            let mut at = book.head;
            while at != NIL {
                let e = &book.entries[at as usize];
                if self.status[at as usize].load(Ordering::Acquire) == TRANSFER_WAITING {
                    list.push(Ticket { slot: at, generation: e.generation });
                }
                at = e.next;
            }
            list
        };
        waiting.into_iter().all(|t| self.wait(t, Some(remote), deadline))
    }

    /// Waits until `t` (if it goes to `remote`, when one is given) has ended or `deadline`
    /// passes; whether it ended.
    fn wait(&self, t: Ticket, remote: Option<&str>, deadline: Instant) -> bool {
        let slot = self.slot(t.slot);
        let mut state = lock(&slot.state);
        if remote.is_some_and(|r| state.remote != r) {
            return true;
        }
        state.waiters += 1;
        let ended = loop {
            // The slot now holds a later request: this one ended.
            if state.generation != t.generation || !matches!(state.outcome, Outcome::Waiting) {
                break true;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                break false;
            };
            state = wait_timeout(&slot.done, state, left).0;
        };
        state.waiters -= 1;
        ended
    }

    /// How many requests are held (submitted and not reported done).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        lock(&self.book).held
    }

    /// Queues `job` for the workers (started on demand, up to [`MAX_WORKERS`]); refused after
    /// [`Requests::stop`].
    pub fn submit(&self, job: Job) -> Result<(), Refused> {
        self.workers.submit(job)
    }

    /// Stops the workers (Finalize): new jobs are refused; the workers finish the queued ones
    /// (which fail at once, the links being closed) and end.
    pub fn stop(&self) {
        self.workers.stop();
    }
}

/// A request while its job runs: [`Running::finish`] records the outcome. Dropped unfinished
/// (the job panicked; the pool logs the panic and goes on), it fails the request, which
/// GetTransferStatus then reports instead of WAITING for ever.
pub struct Running<'a> {
    requests: &'a Requests,
    ticket: Ticket,
    finished: bool,
}

impl<'a> Running<'a> {
    pub fn new(requests: &'a Requests, ticket: Ticket) -> Running<'a> {
        Running { requests, ticket, finished: false }
    }

    /// The job's outcome (see [`Requests::finish`]).
    pub fn finish(mut self, result: EngineResult<()>, link_gone: bool) {
        self.finished = true;
        self.requests.finish(self.ticket, result, link_gone);
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let e = EngineError::new(ADXL_FAILED, "the transfer job panicked");
            self.requests.finish(self.ticket, Err(e), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn done(p: EngineResult<Poll>) -> Outcome {
        match p.unwrap() {
            Poll::Done { outcome, .. } => outcome,
            Poll::Waiting => panic!("still waiting"),
        }
    }

    #[test]
    fn requests_are_held_up_to_the_limit_and_freed_when_reported() {
        let r = Requests::new().unwrap();
        let all: Vec<Ticket> = (0..MAX_REQUESTS).map(|i| r.start("x", i).unwrap()).collect();
        assert!(r.start("x", 0).is_none());
        assert_eq!(r.held(), MAX_REQUESTS);
        let first = r.handle(all[0]);
        assert!(matches!(r.poll(first).unwrap(), Poll::Waiting));
        r.finish(all[0], Err(EngineError::new(503900, "gone")), true);
        assert!(matches!(done(r.poll(first)), Outcome::Failed { status: 503900, link_gone: true, .. }));
        assert_eq!(r.held(), MAX_REQUESTS - 1);
        // Reported once: the handle is stale, and the slot's next request has another handle.
        assert_eq!(r.poll(first).unwrap_err().status, ADXL_PARAM_INVALID);
        let again = r.start("x", 0).unwrap();
        assert_eq!(again.slot, all[0].slot);
        assert_ne!(r.handle(again), first);
        assert_eq!(r.poll(first).unwrap_err().status, ADXL_PARAM_INVALID);
    }

    /// A tight poll while other requests are held sleeps in the call and is answered as its
    /// request ends: spinning for the same 50 ms would answer WAITING hundreds of thousands of
    /// times, parked it is about once per park.
    #[test]
    fn a_tight_poll_with_others_held_sleeps_until_its_request_ends() {
        let r = Arc::new(Requests::new().unwrap());
        let t: Vec<Ticket> = (0..2).map(|i| r.start("x", i).unwrap()).collect();
        let raw = r.handle(t[0]);
        let poller = {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                let mut waiting = 0u64;
                loop {
                    match r.poll(raw).unwrap() {
                        Poll::Waiting => waiting += 1,
                        Poll::Done { outcome, .. } => return (waiting, outcome, Instant::now()),
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let ended = Instant::now();
        r.finish(t[0], Ok(()), false);
        let (waiting, outcome, seen) = poller.join().unwrap();
        assert!(matches!(outcome, Outcome::Completed));
        assert!(waiting < 5_000, "{waiting} polls answered WAITING in 50 ms: the poll did not park");
        assert!(seen.duration_since(ended) < Duration::from_secs(1), "the end was seen late");
    }

    /// The batched poll likewise: polled in a tight loop while requests are held and none has
    /// ended, it sleeps in the call and answers as one ends.
    #[test]
    fn a_tight_batched_poll_sleeps_until_a_request_ends() {
        let r = Arc::new(Requests::new().unwrap());
        let t: Vec<Ticket> = (0..3).map(|i| r.start("x", i).unwrap()).collect();
        let poller = {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                let mut empty = 0u64;
                loop {
                    let got = r.poll_batch(8, true);
                    if !got.is_empty() {
                        return (empty, got, Instant::now());
                    }
                    empty += 1;
                }
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let ended = Instant::now();
        r.finish(t[1], Ok(()), false);
        let (empty, got, seen) = poller.join().unwrap();
        assert_eq!(got, [Polled { handle: r.handle(t[1]), user_data: 1, status: TRANSFER_COMPLETED }]);
        assert!(empty < 5_000, "{empty} batched polls answered nothing in 50 ms: the poll did not park");
        assert!(seen.duration_since(ended) < Duration::from_secs(1), "the end was seen late");
        // With one request held, it answers at once however tight the loop.
        r.finish(t[0], Ok(()), false);
        assert_eq!(r.poll_batch(8, true).len(), 1);
        let start = Instant::now();
        for _ in 0..2000 {
            assert!(r.poll_batch(8, true).is_empty());
        }
        assert!(start.elapsed() < Duration::from_millis(150), "{:?} for 2000 polls", start.elapsed());
    }

    /// With one request held the poll is the only thread waiting: it answers at once, however
    /// tight the loop (2000 parks would take at least 200 ms).
    #[test]
    fn a_tight_poll_of_the_only_request_held_answers_at_once() {
        let r = Requests::new().unwrap();
        let raw = r.handle(r.start("x", 0).unwrap());
        let start = Instant::now();
        for _ in 0..2000 {
            assert!(matches!(r.poll(raw).unwrap(), Poll::Waiting));
        }
        assert!(start.elapsed() < Duration::from_millis(150), "{:?} for 2000 polls", start.elapsed());
    }

    /// A tight poll copies the pieces its request's worker offers, and only a tight one: a
    /// poll now and then leaves them to the worker.
    #[test]
    fn a_tight_poll_copies_the_pieces_its_request_offers() {
        use crate::sys::mapping::Mapping;
        use crate::sys::memfd::MemFd;
        use crate::sys::span::RawSpan;

        let len = 4 << 20;
        let map = || Arc::new(Mapping::shared_rw(&MemFd::create("poll-help", len).unwrap(), len, 1).unwrap());
        let (src, dst) = (map(), map());
        let bytes: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
        RawSpan::of_mapping(&src, 0, len).unwrap().write_slice(&bytes);
        let pair =
            || (RawSpan::of_mapping(&dst, 0, len).unwrap(), RawSpan::of_mapping(&src, 0, len).unwrap());
        let r = Requests::new().unwrap();
        let t = r.start("x", 0).unwrap();
        let raw = r.handle(t);

        // Polls a pause apart: none copies.
        let pieces = Arc::new(Pieces::new(vec![pair()], 64 << 10, false));
        r.offer(t, Some(Arc::clone(&pieces)));
        for _ in 0..3 {
            assert!(matches!(r.poll(raw).unwrap(), Poll::Waiting));
            std::thread::sleep(POLL_GAP * 2);
        }
        assert_eq!(pieces.take(0), 0, "a budget of nothing copies nothing");
        assert!(pieces.left(), "polls a pause apart took pieces");

        // A tight loop: the polls copy it all, each at most its budget.
        let start = Instant::now();
        while pieces.left() {
            assert!(matches!(r.poll(raw).unwrap(), Poll::Waiting));
            assert!(start.elapsed() < Duration::from_secs(10), "the polls did not take the pieces");
        }
        pieces.wait_landed();
        let mut out = vec![0u8; len];
        RawSpan::of_mapping(&dst, 0, len).unwrap().read_into(&mut out);
        assert!(out == bytes, "the polls' copy is not the source");

        // Once the copy has ended (offer None), or the request has, a poll has nothing to take.
        let late = Arc::new(Pieces::new(vec![pair()], 64 << 10, false));
        r.offer(t, Some(Arc::clone(&late)));
        r.offer(t, None);
        for _ in 0..1000 {
            assert!(matches!(r.poll(raw).unwrap(), Poll::Waiting));
        }
        assert!(late.left(), "a poll took pieces of a copy no longer offered");
        r.finish(t, Ok(()), false);
        assert!(matches!(done(r.poll(raw)), Outcome::Completed));
    }

    #[test]
    fn handles_of_another_engine_or_kind_are_refused() {
        let (a, b) = (Requests::new().unwrap(), Requests::new().unwrap());
        let t = a.start("x", 0).unwrap();
        let err = b.poll(a.handle(t)).unwrap_err();
        assert_eq!(err.status, ADXL_PARAM_INVALID);
        assert!(err.message.contains("another engine"), "{}", err.message);
        let stream = handle::compose(HandleKind::Stream, 1);
        for raw in [0, 0x7fff_0000_1000, stream] {
            assert_eq!(a.poll(raw).unwrap_err().status, ADXL_PARAM_INVALID, "{raw:#x}");
        }
        assert!(matches!(a.poll(a.handle(t)).unwrap(), Poll::Waiting));
    }

    #[test]
    fn the_batched_poll_reports_in_submission_order_and_frees_what_is_done() {
        let r = Requests::new().unwrap();
        let t: Vec<Ticket> = (0..6).map(|i| r.start("x", 100 + i).unwrap()).collect();
        r.finish(t[1], Ok(()), false);
        r.finish(t[3], Err(EngineError::new(ADXL_TIMEOUT, "late")), false);
        r.finish(t[4], Err(EngineError::new(ADXL_FAILED, "bad")), true);
        // A single poll freed t[4] first: not reported again by the batch.
        assert!(matches!(done(r.poll(r.handle(t[4]))), Outcome::Failed { link_gone: true, .. }));
        let all = r.poll_batch(usize::MAX, false);
        let seen: Vec<(usize, i32)> = all.iter().map(|p| (p.user_data, p.status)).collect();
        assert_eq!(seen, [(100, 0), (101, TRANSFER_COMPLETED), (102, 0), (103, TRANSFER_TIMEOUT), (105, 0)]);
        assert_eq!(all[1].handle, r.handle(t[1]));
        assert_eq!(r.held(), 3);
        assert_eq!(r.poll(r.handle(t[1])).unwrap_err().status, ADXL_PARAM_INVALID);
        // skip_waiting and max.
        assert!(r.poll_batch(usize::MAX, true).is_empty());
        r.finish(t[0], Ok(()), false);
        r.finish(t[5], Ok(()), false);
        assert_eq!(r.poll_batch(1, true).iter().map(|p| p.user_data).collect::<Vec<_>>(), [100]);
        assert_eq!(r.poll_batch(0, true), []);
        assert_eq!(r.poll_batch(5, true).iter().map(|p| p.user_data).collect::<Vec<_>>(), [105]);
        assert_eq!(r.held(), 1);
        // A request started now goes last, in a reused slot.
        let late = r.start("x", 7).unwrap();
        assert_eq!(r.poll_batch(9, false).iter().map(|p| p.user_data).collect::<Vec<_>>(), [102, 7]);
        assert_ne!(r.handle(late), r.handle(t[0]));
    }

    #[test]
    fn a_cancelled_request_is_freed_without_a_report() {
        let r = Requests::new().unwrap();
        let t = r.start("x", 1).unwrap();
        r.cancel(t);
        assert_eq!(r.held(), 0);
        assert!(r.poll_batch(9, false).is_empty());
        assert_eq!(r.poll(r.handle(t)).unwrap_err().status, ADXL_PARAM_INVALID);
    }

    #[test]
    fn waiting_for_the_requests_to_one_peer() {
        let r = Arc::new(Requests::new().unwrap());
        let a = r.start("a", 0).unwrap();
        let b = r.start("b", 0).unwrap();
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!r.wait_in_flight_to("a", soon));
        assert!(r.wait_in_flight_to("c", Instant::now()));
        let ender = {
            let r = r.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                r.finish(a, Ok(()), false);
            })
        };
        assert!(r.wait_in_flight_to("a", Instant::now() + Duration::from_secs(10)));
        ender.join().unwrap();
        assert!(!r.wait_in_flight_to("b", Instant::now()));
        r.finish(b, Ok(()), false);
        assert!(r.wait_in_flight_to("b", Instant::now()));
    }

    fn wait_for(n: &AtomicUsize, want: usize) -> usize {
        let t = Instant::now();
        while n.load(Ordering::Acquire) < want && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        n.load(Ordering::Acquire)
    }

    fn count(n: &Arc<AtomicUsize>) -> Job {
        let n = n.clone();
        Box::new(move || {
            n.fetch_add(1, Ordering::AcqRel);
        })
    }

    #[test]
    fn workers_run_every_job_and_stop() {
        let w = Requests::new().unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..100 {
            w.submit(count(&n)).unwrap();
        }
        assert_eq!(wait_for(&n, 100), 100);
        w.stop();
        assert_eq!(w.submit(Box::new(|| {})), Err(Refused::Stopped));
    }

    #[test]
    fn a_panicking_job_does_not_stop_later_requests() {
        // One worker, so the later jobs run on the very thread the panic went through.
        let w = Requests::with_workers(1).unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        w.submit(Box::new(|| panic!("a bug in a transfer job"))).unwrap();
        for _ in 0..10 {
            w.submit(count(&n)).unwrap();
        }
        assert_eq!(wait_for(&n, 10), 10);
        w.stop();
    }

    #[test]
    fn a_request_whose_job_panics_fails() {
        let w = Arc::new(Requests::with_workers(1).unwrap());
        let t = w.start("peer", 0).unwrap();
        let service = w.clone();
        w.submit(Box::new(move || {
            let _running = Running::new(&service, t);
            panic!("a bug in a transfer job");
        }))
        .unwrap();
        assert!(w.wait_in_flight_to("peer", Instant::now() + Duration::from_secs(10)));
        assert!(matches!(
            done(w.poll(w.handle(t))),
            Outcome::Failed { status: ADXL_FAILED, link_gone: false, .. }
        ));
        w.stop();
    }
}
