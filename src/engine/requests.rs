//! Asynchronous transfers: the requests of TransferAsync and the per-engine workers that run
//! them.
//!
//! A request is made in the caller's thread (descriptors checked and copied, local memory
//! resolved), then queued; a worker thread of the engine runs it exactly as TransferSync
//! would (same-host path or TCP) and records the outcome. Workers are started on demand, up to
//! [`MAX_WORKERS`] per engine, and end when idle for a while or when the engine finalizes. A
//! request counts against [`MAX_REQUESTS`] from submission until GetTransferStatus has reported
//! it COMPLETED or FAILED (and freed it).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::engine::limits::{MAX_REQUESTS, MAX_WORKERS};
use crate::error::EngineResult;
use crate::handle::{HandleKind, HandleTable};
use crate::sync::{lock, wait_timeout};

/// Every engine's requests, by handle.
pub static REQUESTS: HandleTable<Request> = HandleTable::new(HandleKind::TransferRequest);

/// A worker idle this long ends.
const IDLE_EXIT: Duration = Duration::from_secs(5);

/// The requests service: how many requests this engine holds, the ones in flight, and the
/// workers that run them.
#[derive(Default)]
pub struct Requests {
    /// Requests held (submitted and not yet reported done), at most [`MAX_REQUESTS`].
    held: Arc<AtomicUsize>,
    workers: Workers,
    /// Requests not yet done, so a notify can wait for the transfers submitted before it.
    inflight: Mutex<Vec<Arc<Request>>>,
}

impl Requests {
    /// A new request to `remote` of the engine `owner`, counted as held and tracked as in
    /// flight; `None` at [`MAX_REQUESTS`].
    pub fn start(&self, remote: &str, owner: usize) -> Option<Arc<Request>> {
        let request = Arc::new(Request::new(remote, owner, &self.held)?);
        crate::sync::lock(&self.inflight).push(request.clone());
        Some(request)
    }

    /// The request is done: no longer in flight.
    pub fn finished(&self, request: &Arc<Request>) {
        crate::sync::lock(&self.inflight).retain(|r| !Arc::ptr_eq(r, request));
    }

    /// The requests to `remote` in flight now.
    pub fn in_flight_to(&self, remote: &str) -> Vec<Arc<Request>> {
        crate::sync::lock(&self.inflight).iter().filter(|r| r.remote == remote).cloned().collect()
    }

    /// Queues `job` for the workers; `false` after [`Requests::stop`].
    pub fn submit(&self, job: Job) -> bool {
        self.workers.submit(job)
    }

    /// Stops the workers (Finalize).
    pub fn stop(&self) {
        self.workers.stop();
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
    done: Condvar,
    /// The engine's count of requests held; decremented when the request is dropped.
    held: Arc<AtomicUsize>,
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
            done: Condvar::new(),
            held: held.clone(),
        })
    }

    pub fn outcome(&self) -> Outcome {
        lock(&self.state).clone()
    }

    pub fn finish(&self, result: EngineResult<()>, link_gone: bool) {
        let outcome = match result {
            Ok(()) => Outcome::Completed,
            Err(e) => Outcome::Failed { status: e.status, message: e.message.clone(), link_gone },
        };
        *lock(&self.state) = outcome;
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

pub type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    workers: usize,
    idle: usize,
    stopping: bool,
}

/// The engine's worker threads and their queue.
#[derive(Default)]
pub struct Workers {
    queue: Arc<(Mutex<Queue>, Condvar)>,
}

impl Workers {
    /// Queues `job`; starts a worker when none is idle (up to [`MAX_WORKERS`]). `false` after
    /// [`Workers::stop`].
    pub fn submit(&self, job: Job) -> bool {
        let (m, cv) = &*self.queue;
        let mut q = lock(m);
        if q.stopping {
            return false;
        }
        q.jobs.push_back(job);
        if q.idle < q.jobs.len() && q.workers < MAX_WORKERS {
            let queue = self.queue.clone();
            if std::thread::Builder::new().name("adxl-async".into()).spawn(move || work(&queue)).is_ok() {
                q.workers += 1;
            }
        }
        cv.notify_one();
        true
    }

    /// Refuses new jobs; the workers finish the queued ones (which fail at once, the links
    /// being closed) and end.
    pub fn stop(&self) {
        let (m, cv) = &*self.queue;
        lock(m).stopping = true;
        cv.notify_all();
    }
}

fn work(queue: &(Mutex<Queue>, Condvar)) {
    let (m, cv) = queue;
    let mut q = lock(m);
    loop {
        if let Some(job) = q.jobs.pop_front() {
            drop(q);
            job();
            q = lock(m);
            continue;
        }
        if q.stopping {
            break;
        }
        q.idle += 1;
        let (next, timed_out) = wait_timeout(cv, q, IDLE_EXIT);
        q = next;
        q.idle -= 1;
        if timed_out && q.jobs.is_empty() {
            break;
        }
    }
    q.workers -= 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EngineError;

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

    #[test]
    fn workers_run_every_job_and_stop() {
        let w = Workers::default();
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..100 {
            let n = n.clone();
            assert!(w.submit(Box::new(move || {
                n.fetch_add(1, Ordering::AcqRel);
            })));
        }
        let t = Instant::now();
        while n.load(Ordering::Acquire) < 100 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(n.load(Ordering::Acquire), 100);
        w.stop();
        assert!(!w.submit(Box::new(|| {})));
    }
}
