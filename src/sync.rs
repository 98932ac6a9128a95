//! The crate's one way to lock, wait, start a thread and run jobs in the background.
//!
//! A leaf module: it uses nothing of the crate but the log target, so every layer may use it.
//!
//! # Poisoned locks are kept
//! A `Mutex` is poisoned when a thread panics while holding it. Every lock of this crate guards
//! state whose updates are single inserts, removes or field stores, so a panic (a bug, already
//! caught and logged at the FFI edge or by the thread that hit it) cannot leave it half
//! changed. Refusing every later call of the process would turn one bug into an outage, so
//! [`lock`], [`wait`] and the others take the guard out of the poison error and go on.
//!
//! # Threads end by returning, never by unwinding
//! A panic that unwinds out of a thread the library started kills that thread silently: its
//! queue stops, and callers waiting on it block forever. [`spawn_named`] and [`Pool`] catch the
//! panic and log it with the thread's name, so a bug is visible and a pool keeps its workers.

use std::any::Any;
use std::collections::VecDeque;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::logging::TARGET;

/// Locks `m`, keeping the guard of a poisoned lock (see the module doc).
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Locks `m` if no one holds it (`None` when someone does), keeping the guard of a poisoned lock.
pub fn try_lock<T: ?Sized>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The value of a mutex held exclusively (no locking needed), keeping a poisoned one's.
pub fn get_mut<T: ?Sized>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut().unwrap_or_else(|e| e.into_inner())
}

/// Locks `l` for reading, keeping the guard of a poisoned lock.
pub fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Locks `l` for writing, keeping the guard of a poisoned lock.
pub fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv`, keeping the guard of a poisoned lock.
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv` for at most `timeout`; the guard and whether the time ran out.
pub fn wait_timeout<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> (MutexGuard<'a, T>, bool) {
    let (guard, result) = cv.wait_timeout(guard, timeout).unwrap_or_else(|e| e.into_inner());
    (guard, result.timed_out())
}

/// The text of a panic's payload, for the log.
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Runs `body` and logs a panic out of it as an error naming `what`; whether it returned.
fn run_logged(what: &str, body: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(()) => true,
        Err(payload) => {
            log::error!(target: TARGET, "{what} panicked: {}", panic_message(payload.as_ref()));
            false
        }
    }
}

/// Starts a thread called `name` that runs `body`; a panic out of `body` is logged, not
/// propagated (joining the thread then succeeds).
pub fn spawn_named(
    name: impl Into<String>,
    body: impl FnOnce() + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    let name = name.into();
    let what = format!("thread {name}");
    std::thread::Builder::new().name(name).spawn(move || {
        run_logged(&what, body);
    })
}

/// How long a waiter spins for its condition before it sleeps on the kernel (see [`spin_until`]).
///
/// Measured (docs/performance.md, issue 37): on the 2-core VM the futex wake-up of a sleeper in
/// another process takes 3-7 µs, and a record from another process comes after at least one of
/// those, so a spin long enough to catch it burns the core the peer needs to send it; 2000
/// rounds of `pause` (what waits spun before) were 48 µs there, and with a caller thread and a
/// stream worker in each of two processes that was every core. A few µs catch a signal that is
/// already on its way (a record queued just before on another stream of the process) and cost
/// little when it is not.
pub const SPIN: Duration = Duration::from_micros(4);

/// Spins until `ready()` or `limit` has passed (the clock is read every 32 rounds, so the
/// bound holds on every CPU whatever one `pause` costs); whether `ready()` turned true.
pub fn spin_until(limit: Duration, ready: impl Fn() -> bool) -> bool {
    if ready() {
        return true;
    }
    if limit.is_zero() {
        return false;
    }
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            std::hint::spin_loop();
            if ready() {
                return true;
            }
        }
        if start.elapsed() >= limit {
            return false;
        }
    }
}

/// A job for a [`Pool`].
pub type Job = Box<dyn FnOnce() + Send>;

/// How a [`Pool`] is sized.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// The workers' thread name.
    pub name: String,
    /// Workers started with the pool and never retired.
    pub min_workers: usize,
    /// Workers at most; more are started on demand while none is idle.
    pub max_workers: usize,
    /// Jobs queued (not yet started) at most; a submit beyond is refused.
    pub capacity: usize,
    /// How long a worker above `min_workers` stays idle before it ends; `None`: never.
    pub idle_exit: Option<Duration>,
    /// Idle workers kept at most: one more that runs out of work ends at once (a pool whose
    /// jobs come in bursts keeps a few threads warm, not one per job of the last burst).
    pub max_idle: usize,
    /// How long a worker that ran out of work watches the queue before it sleeps (zero: it
    /// sleeps at once), when no other worker is running a job. A job submitted meanwhile is
    /// taken without waking anyone: for a caller that submits its next job as soon as the
    /// last one ended, this saves a thread's wake-up per job (tens of µs on a small VM) for a
    /// few µs of watching. With other jobs running, the CPU is theirs: it sleeps at once.
    pub watch: Duration,
}

/// Why a [`Pool`] did not take a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the pool's queue is full")]
    Full,
    #[error("the pool is stopping")]
    Stopped,
}

/// Named worker threads over one bounded FIFO queue.
///
/// With one worker, jobs run in submission order. A job that panics is logged and the worker
/// takes the next one. Dropping the pool stops it without waiting (the workers finish the
/// queued jobs and end); [`Pool::join`] also waits for them.
pub struct Pool {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    options: PoolOptions,
    state: Mutex<State>,
    /// Signalled when a job is queued or the pool stops.
    work: Condvar,
    /// The jobs queued, for watching workers to read without the lock.
    queued: AtomicUsize,
}

struct State {
    jobs: VecDeque<Job>,
    workers: usize,
    /// Workers asleep on `work`.
    idle: usize,
    /// Workers watching `queued` (see [`PoolOptions::watch`]).
    watching: usize,
    /// Workers running a job.
    running: usize,
    stopping: bool,
}

impl Pool {
    /// Starts the pool and its `min_workers` workers.
    pub fn new(options: PoolOptions) -> io::Result<Pool> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                workers: 0,
                idle: 0,
                watching: 0,
                running: 0,
                stopping: false,
            }),
            work: Condvar::new(),
            queued: AtomicUsize::new(0),
            options,
        });
        let pool = Pool { shared, threads: Mutex::new(Vec::new()) };
        for _ in 0..pool.shared.options.min_workers {
            let mut state = lock(&pool.shared.state);
            if let Err(e) = pool.start_worker(&mut state) {
                drop(state);
                pool.join();
                return Err(e);
            }
        }
        Ok(pool)
    }

    fn start_worker(&self, state: &mut State) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let thread = spawn_named(self.shared.options.name.clone(), move || work(&shared))?;
        state.workers += 1;
        let mut threads = lock(&self.threads);
        threads.retain(|t| !t.is_finished());
        threads.push(thread);
        Ok(())
    }

    /// Queues `job` behind the queued ones; starts a worker when none is idle and fewer than
    /// `max_workers` run.
    pub fn submit(&self, job: Job) -> Result<(), Refused> {
        let mut state = lock(&self.shared.state);
        if state.stopping {
            return Err(Refused::Stopped);
        }
        if state.jobs.len() >= self.shared.options.capacity {
            return Err(Refused::Full);
        }
        state.jobs.push_back(job);
        self.shared.queued.store(state.jobs.len(), Ordering::Release);
        let waiting = state.idle + state.watching;
        if waiting < state.jobs.len() && state.workers < self.shared.options.max_workers {
            // A pool that cannot grow now still runs the job on the workers it has.
            if let Err(e) = self.start_worker(&mut state) {
                log::warn!(target: TARGET, "cannot start a {} worker: {e}", self.shared.options.name);
            }
        }
        // A watching worker takes the job without being woken, and so does a running one when
        // its job ends: a notify is a system call even with nobody asleep.
        let wake = state.idle > 0 && state.jobs.len() > state.watching;
        drop(state);
        if wake {
            self.shared.work.notify_one();
        }
        Ok(())
    }

    /// Jobs queued and not yet started.
    pub fn queued(&self) -> usize {
        lock(&self.shared.state).jobs.len()
    }

    /// Drops the queued jobs that have not started; how many.
    pub fn clear(&self) -> usize {
        let mut state = lock(&self.shared.state);
        self.shared.queued.store(0, Ordering::Release);
        std::mem::take(&mut state.jobs).len()
    }

    /// Refuses new jobs; the workers run the queued ones and end. Idempotent.
    pub fn stop(&self) {
        lock(&self.shared.state).stopping = true;
        self.shared.work.notify_all();
    }

    /// Stops the pool and waits for its workers to end, except the calling thread when it is
    /// one of them (a job stopping its own pool), which ends after its job.
    pub fn join(&self) {
        self.stop();
        let threads = std::mem::take(&mut *lock(&self.threads));
        let me = std::thread::current().id();
        for t in threads {
            if t.thread().id() != me {
                // The workers catch and log their panics, so a join cannot fail.
                let _ = t.join();
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop();
    }
}

fn work(shared: &Shared) {
    let options = &shared.options;
    let what = format!("a job of {}", options.name);
    let mut state = lock(&shared.state);
    let mut watched = false;
    loop {
        if let Some(job) = state.jobs.pop_front() {
            shared.queued.store(state.jobs.len(), Ordering::Release);
            state.running += 1;
            drop(state);
            run_logged(&what, job);
            state = lock(&shared.state);
            state.running -= 1;
            watched = false;
            continue;
        }
        if state.stopping {
            break;
        }
        if !watched && !options.watch.is_zero() && state.running == 0 {
            // Once per run out of work: watch, then look again under the lock.
            watched = true;
            state.watching += 1;
            drop(state);
            let start = Instant::now();
            while shared.queued.load(Ordering::Acquire) == 0 && start.elapsed() < options.watch {
                std::hint::spin_loop();
            }
            state = lock(&shared.state);
            state.watching -= 1;
            continue;
        }
        if state.idle >= options.max_idle && state.workers > options.min_workers {
            break;
        }
        state.idle += 1;
        let retire = match options.idle_exit {
            None => {
                state = wait(&shared.work, state);
                false
            }
            Some(idle) => {
                let (next, timed_out) = wait_timeout(&shared.work, state, idle);
                state = next;
                timed_out && state.jobs.is_empty() && state.workers > options.min_workers
            }
        };
        state.idle -= 1;
        if retire {
            break;
        }
    }
    state.workers -= 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    fn options(name: &str, min: usize, max: usize, capacity: usize) -> PoolOptions {
        PoolOptions {
            name: name.into(),
            min_workers: min,
            max_workers: max,
            capacity,
            idle_exit: Some(Duration::from_millis(50)),
            max_idle: usize::MAX,
            watch: Duration::ZERO,
        }
    }

    fn wait_until(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !done() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(2));
        }
        done()
    }

    /// Jobs submitted one at a time as the last one ends, and in bursts, all run, whether a
    /// worker is watching, waking or asleep: none is lost between the three.
    #[test]
    fn a_watching_pool_runs_every_job() {
        let pool = Pool::new(PoolOptions {
            watch: Duration::from_millis(2),
            ..options("sync-test-watch", 0, 4, 1024)
        })
        .unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let job = |done: &Arc<AtomicUsize>| -> Job {
            let done = done.clone();
            Box::new(move || {
                done.fetch_add(1, Ordering::SeqCst);
            })
        };
        for i in 0..500 {
            pool.submit(job(&done)).unwrap();
            assert!(wait_until(|| done.load(Ordering::SeqCst) == i + 1), "job {i} did not run");
            if i % 50 == 0 {
                // Past the watch: the worker sleeps and must be woken.
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        for _ in 0..300 {
            pool.submit(job(&done)).unwrap();
        }
        assert!(wait_until(|| done.load(Ordering::SeqCst) == 800));
        pool.join();
    }

    #[test]
    fn a_poisoned_lock_is_still_usable() {
        let m = Arc::new(Mutex::new(1));
        let holder = Arc::clone(&m);
        let _ = std::thread::spawn(move || {
            let _g = holder.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
        let held = try_lock(&m).expect("a poisoned, unheld lock is taken");
        assert!(try_lock(&m).is_none(), "a held lock is not");
        drop(held);
    }

    #[test]
    fn a_named_thread_that_panics_is_joined_without_error() {
        let t = spawn_named("sync-test-panic", || panic!("a bug")).unwrap();
        assert_eq!(t.thread().name(), Some("sync-test-panic"));
        assert!(t.join().is_ok());
    }

    #[test]
    fn one_worker_runs_jobs_in_submission_order() {
        let pool = Pool::new(options("sync-test-order", 1, 1, 1000)).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let seen = Arc::clone(&seen);
            pool.submit(Box::new(move || lock(&seen).push(i))).unwrap();
        }
        pool.join();
        assert_eq!(*lock(&seen), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn idle_workers_above_max_idle_end_at_once() {
        let mut o = options("sync-test-idle", 0, 8, 100);
        (o.idle_exit, o.max_idle) = (Some(Duration::from_secs(60)), 2);
        let pool = Pool::new(o).unwrap();
        let gate = Arc::new(Mutex::new(()));
        let held = lock(&gate);
        let started = Arc::new(AtomicUsize::new(0));
        for _ in 0..6 {
            let (gate, started) = (Arc::clone(&gate), Arc::clone(&started));
            pool.submit(Box::new(move || {
                started.fetch_add(1, Ordering::SeqCst);
                drop(lock(&gate));
            }))
            .unwrap();
        }
        assert!(wait_until(|| started.load(Ordering::SeqCst) == 6));
        assert_eq!(lock(&pool.shared.state).workers, 6, "one worker per job while none is idle");
        drop(held);
        // Two stay for the next jobs (well before their idle time-out); the rest end.
        assert!(wait_until(|| {
            let s = lock(&pool.shared.state);
            s.workers == 2 && s.idle == 2
        }));
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        pool.submit(Box::new(move || _ = r.fetch_add(1, Ordering::SeqCst))).unwrap();
        assert!(wait_until(|| ran.load(Ordering::SeqCst) == 1));
        assert_eq!(lock(&pool.shared.state).workers, 2, "a kept worker took the job");
    }

    #[test]
    fn a_panicking_job_does_not_kill_its_worker() {
        let pool = Pool::new(options("sync-test-panic-job", 1, 1, 10)).unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        pool.submit(Box::new(|| panic!("job bug"))).unwrap();
        let r = Arc::clone(&ran);
        pool.submit(Box::new(move || _ = r.fetch_add(1, Ordering::SeqCst))).unwrap();
        assert!(wait_until(|| ran.load(Ordering::SeqCst) == 1));
    }

    #[test]
    fn a_full_queue_refuses_and_a_stopped_pool_refuses() {
        let pool = Pool::new(options("sync-test-full", 1, 1, 2)).unwrap();
        let gate = Arc::new(Mutex::new(()));
        let held = lock(&gate);
        let started = Arc::new(AtomicUsize::new(0));
        let (g, s) = (Arc::clone(&gate), Arc::clone(&started));
        pool.submit(Box::new(move || {
            s.fetch_add(1, Ordering::SeqCst);
            drop(lock(&g));
        }))
        .unwrap();
        assert!(wait_until(|| started.load(Ordering::SeqCst) == 1));
        pool.submit(Box::new(|| {})).unwrap();
        pool.submit(Box::new(|| {})).unwrap();
        assert_eq!(pool.submit(Box::new(|| {})), Err(Refused::Full));
        assert_eq!(pool.clear(), 2);
        drop(held);
        pool.stop();
        assert_eq!(pool.submit(Box::new(|| {})), Err(Refused::Stopped));
        pool.join();
    }

    #[test]
    fn an_elastic_pool_grows_under_load_and_idle_workers_retire() {
        let pool = Pool::new(options("sync-test-elastic", 0, 4, 100)).unwrap();
        let gate = Arc::new(Mutex::new(()));
        let held = lock(&gate);
        let running = Arc::new(AtomicUsize::new(0));
        for _ in 0..4 {
            let (g, r) = (Arc::clone(&gate), Arc::clone(&running));
            pool.submit(Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                drop(lock(&g));
            }))
            .unwrap();
        }
        assert!(wait_until(|| running.load(Ordering::SeqCst) == 4), "four jobs run at once");
        drop(held);
        assert!(wait_until(|| lock(&pool.shared.state).workers == 0), "idle workers end");
        pool.submit(Box::new(|| {})).unwrap();
        pool.join();
        assert_eq!(pool.queued(), 0);
    }

    #[test]
    fn a_job_may_join_its_own_pool() {
        let pool = Arc::new(Pool::new(options("sync-test-self", 1, 1, 10)).unwrap());
        let done = Arc::new(AtomicUsize::new(0));
        let (p, d) = (Arc::clone(&pool), Arc::clone(&done));
        pool.submit(Box::new(move || {
            p.join();
            d.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();
        assert!(wait_until(|| done.load(Ordering::SeqCst) == 1));
    }
}
