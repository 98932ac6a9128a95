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

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::engine::limits::{MAX_REQUESTS, MAX_WORKERS};
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::sync::{Job, Pool, PoolOptions, Refused, lock, wait_timeout};

crate::handle_kind!(
    /// Every engine's requests, by handle.
    /// (A NULL, stale or foreign request handle is PARAM_INVALID.)
    pub static REQUESTS: TransferRequest => Request, EngineError);

/// The values of `adxl::TransferStatus` (the vendor's enum class, in its order) that
/// GetTransferStatus reports.
pub const TRANSFER_WAITING: i32 = 0;
pub const TRANSFER_COMPLETED: i32 = 1;
/// The request's time limit passed before its data had landed; its job has stopped.
pub const TRANSFER_TIMEOUT: i32 = 2;
pub const TRANSFER_FAILED: i32 = 3;

/// A worker idle this long ends.
const IDLE_EXIT: Duration = Duration::from_secs(5);

/// The requests service: how many requests this engine holds, the ones in flight, and the
/// workers that run them.
pub struct Requests {
    /// Requests held (submitted and not yet reported done), at most [`MAX_REQUESTS`].
    held: Arc<AtomicUsize>,
    /// The workers; a job that panics is logged and its worker takes the next one.
    workers: Pool,
    /// Requests not yet done, so a notify can wait for the transfers submitted before it.
    inflight: Mutex<Vec<Arc<Request>>>,
    /// Every request held, by handle, in submission order: the batched GetTransferStatus
    /// walks this once instead of looking each request up in the handle table. Weak, so a
    /// request the single GetTransferStatus freed is gone from here too (its entry is dropped
    /// when met, or when the list is compacted).
    submitted: Mutex<VecDeque<(u64, Weak<Request>)>>,
}

/// One request reported by [`Requests::poll_batch`]: its handle, the caller's `user_data`
/// and the status (a `TRANSFER_*` value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polled {
    pub handle: u64,
    pub user_data: usize,
    pub status: i32,
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
        })?;
        Ok(Requests {
            held: Arc::default(),
            workers,
            inflight: Mutex::default(),
            submitted: Mutex::default(),
        })
    }

    /// A new request to `remote` of the engine `owner`, carrying `user_data`, counted as held
    /// and tracked as in flight; `None` at [`MAX_REQUESTS`].
    pub fn start(&self, remote: &str, owner: usize, user_data: usize) -> Option<Arc<Request>> {
        let mut request = Request::new(remote, owner, &self.held)?;
        request.user_data = user_data;
        let request = Arc::new(request);
        lock(&self.inflight).push(request.clone());
        Some(request)
    }

    /// Records the request's handle, in submission order, for [`Requests::poll_batch`].
    pub fn track(&self, handle: u64, request: &Arc<Request>) {
        let mut list = lock(&self.submitted);
        while list.front().is_some_and(|(_, w)| w.strong_count() == 0) {
            list.pop_front();
        }
        // Requests freed out of order by single polls leave dead entries behind the first
        // live one: compact once they are as many as the live ones (amortised O(1)).
        if list.len() > 64 && list.len() > 2 * self.held.load(Ordering::Acquire) {
            list.retain(|(_, w)| w.strong_count() > 0);
        }
        list.push_back((handle, Arc::downgrade(request)));
    }

    /// The batched GetTransferStatus: one pass over the requests held, oldest first, reporting
    /// each (the WAITING ones only unless `skip_waiting`) until `max` are reported. A request
    /// reported COMPLETED, TIMEOUT or FAILED is freed (its handle released) and not reported
    /// again; a failure because the link went away is FAILED here (the caller learns of it
    /// from the status, not from an error).
    pub fn poll_batch(&self, max: usize, skip_waiting: bool) -> Vec<Polled> {
        let mut out = Vec::new();
        if max == 0 {
            return out;
        }
        // The requests found done (their positions in `out`, handles and references): freed
        // together after the walk, one lock per handle-table shard rather than one per request.
        let (mut done_at, mut done, mut held) = (Vec::new(), Vec::new(), Vec::new());
        let mut list = lock(&self.submitted);
        list.retain(|(handle, weak)| {
            if out.len() >= max {
                return true;
            }
            let Some(request) = weak.upgrade() else { return false };
            let status = request.status_now();
            if status == TRANSFER_WAITING {
                if !skip_waiting {
                    out.push(Polled { handle: *handle, user_data: request.user_data, status });
                }
                return true;
            }
            done_at.push(out.len());
            done.push(*handle);
            out.push(Polled { handle: *handle, user_data: request.user_data, status });
            held.push(request);
            false
        });
        drop(list);
        // A request a single poll freed in the meantime was reported there: not again here.
        let missed: Vec<usize> = (done_at.into_iter().zip(REQUESTS.remove_each(&done)))
            .filter_map(|(at, freed)| freed.is_none().then_some(at))
            .collect();
        if !missed.is_empty() {
            let mut i = 0;
            out.retain(|_| {
                i += 1;
                missed.binary_search(&(i - 1)).is_err()
            });
        }
        drop(held);
        out
    }

    /// The request is done: no longer in flight.
    pub fn finished(&self, request: &Arc<Request>) {
        lock(&self.inflight).retain(|r| !Arc::ptr_eq(r, request));
    }

    /// The requests to `remote` in flight now.
    pub fn in_flight_to(&self, remote: &str) -> Vec<Arc<Request>> {
        lock(&self.inflight).iter().filter(|r| r.remote == remote).cloned().collect()
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

/// A request while its job runs: [`Running::finish`] records the outcome and ends its time in
/// flight. Dropped unfinished (the job panicked; the pool logs the panic and goes on), it fails
/// the request, which GetTransferStatus then reports instead of WAITING for ever.
pub struct Running<'a> {
    requests: &'a Requests,
    request: &'a Arc<Request>,
    finished: bool,
}

impl<'a> Running<'a> {
    pub fn new(requests: &'a Requests, request: &'a Arc<Request>) -> Running<'a> {
        Running { requests, request, finished: false }
    }

    /// The job's outcome (see [`Request::finish`]).
    pub fn finish(mut self, result: EngineResult<()>, link_gone: bool) {
        self.finished = true;
        self.request.finish(result, link_gone);
        self.requests.finished(self.request);
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.request.finish(Err(EngineError::new(ADXL_FAILED, "the transfer job panicked")), false);
            self.requests.finished(self.request);
        }
    }
}

/// The outcome of a request.
#[derive(Debug, Clone)]
pub enum Outcome {
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

/// One TransferAsync request.
pub struct Request {
    pub remote: String,
    /// Which engine made it (the address of its core; requests are checked against it).
    pub(super) owner: usize,
    state: Mutex<Outcome>,
    /// The `TRANSFER_*` value of `state`, set with it: the batched poll reads this without
    /// taking the lock.
    status: AtomicI32,
    done: Condvar,
    /// The engine's count of requests held; decremented when the request is dropped.
    held: Arc<AtomicUsize>,
    /// `TransferArgs::user_data`, handed back by the batched GetTransferStatus.
    pub user_data: usize,
}

impl Drop for Request {
    fn drop(&mut self) {
        self.held.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Request {
    /// A request counted in `held`, or `None` at [`MAX_REQUESTS`].
    pub fn new(remote: &str, owner: usize, held: &Arc<AtomicUsize>) -> Option<Request> {
        held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_REQUESTS).then_some(n + 1))
            .ok()?;
        Some(Request {
            remote: remote.to_owned(),
            owner,
            state: Mutex::new(Outcome::Waiting),
            status: AtomicI32::new(TRANSFER_WAITING),
            done: Condvar::new(),
            held: held.clone(),
            user_data: 0,
        })
    }

    pub fn outcome(&self) -> Outcome {
        lock(&self.state).clone()
    }

    /// The `TRANSFER_*` value to report now (a time-out is TIMEOUT, any other failure FAILED),
    /// without copying the outcome's message.
    pub fn status_now(&self) -> i32 {
        self.status.load(Ordering::Acquire)
    }

    pub fn finish(&self, result: EngineResult<()>, link_gone: bool) {
        let (outcome, status) = match result {
            Ok(()) => (Outcome::Completed, TRANSFER_COMPLETED),
            Err(e) => {
                let reported = if e.status == crate::error::engine_status::ADXL_TIMEOUT {
                    TRANSFER_TIMEOUT
                } else {
                    TRANSFER_FAILED
                };
                (Outcome::Failed { status: e.status, message: e.message.clone(), link_gone }, reported)
            }
        };
        let mut state = lock(&self.state);
        *state = outcome;
        self.status.store(status, Ordering::Release);
        drop(state);
        self.done.notify_all();
    }

    /// Waits until the request is done or `deadline` passes; whether it is done.
    pub fn wait(&self, deadline: Instant) -> bool {
        let mut state = lock(&self.state);
        while matches!(*state, Outcome::Waiting) {
            let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                return false;
            };
            state = wait_timeout(&self.done, state, left).0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_up_to_the_limit_and_released_on_drop() {
        let held = Arc::new(AtomicUsize::new(0));
        let all: Vec<Request> = (0..MAX_REQUESTS).map(|_| Request::new("x", 1, &held).unwrap()).collect();
        assert!(Request::new("x", 1, &held).is_none());
        drop(all);
        assert_eq!(held.load(Ordering::Acquire), 0);
        let r = Request::new("x", 1, &held).unwrap();
        assert!(matches!(r.outcome(), Outcome::Waiting));
        assert!(!r.wait(Instant::now() + Duration::from_millis(10)));
        r.finish(Err(EngineError::new(503900, "gone")), true);
        assert!(r.wait(Instant::now()));
        assert!(matches!(r.outcome(), Outcome::Failed { status: 503900, link_gone: true, .. }));
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
    fn a_request_whose_job_panics_fails_and_leaves_the_in_flight_list() {
        let w = Arc::new(Requests::with_workers(1).unwrap());
        let request = w.start("peer", 1, 0).unwrap();
        let (service, r) = (w.clone(), request.clone());
        w.submit(Box::new(move || {
            let _running = Running::new(&service, &r);
            panic!("a bug in a transfer job");
        }))
        .unwrap();
        assert!(request.wait(Instant::now() + Duration::from_secs(10)));
        assert!(matches!(request.outcome(), Outcome::Failed { status: ADXL_FAILED, link_gone: false, .. }));
        // Taken off the list just after the outcome is recorded.
        let t = Instant::now();
        while !w.in_flight_to("peer").is_empty() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(w.in_flight_to("peer").is_empty());
        w.stop();
    }
}
