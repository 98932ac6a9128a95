//! `Hixl::ConnectAsync` / `DisconnectAsync` / `GetAsyncConnectStatus`: connect and disconnect
//! tasks run by a small bounded pool of workers, with the state of each remote's latest task.
//!
//! Tasks for one remote run one at a time, in submission order (a remote has its own queue,
//! drained by one pool job at a time); different remotes run concurrently, up to
//! [`PoolSize::threads`] at once. At most [`PoolSize::queue_capacity`]
//! tasks wait at once: one more is RESOURCE_EXHAUSTED.
//!
//! The reported state is that of the latest task submitted for the remote: a task that is not
//! the latest any more runs but leaves the state alone. (The vendor's rule, "a pending
//! disconnect is not overwritten by an earlier connect's progress, nor a pending connect by an
//! earlier disconnect's", is the special case of this for alternating tasks.) A remote whose
//! latest task is a finished disconnect is dropped from the table: NOT_CONNECT.
//!
//! The task itself (what Connect and Disconnect do) is the caller's [`Runner`], so this file
//! knows nothing of links or the engine's core.

use super::options::ConnectPool as PoolSize;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::engine_status::{ADXL_ALREADY_CONNECTED, ADXL_FAILED, ADXL_RESOURCE_EXHAUSTED};
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sync::{Pool, PoolOptions, Refused, lock};

/// The values of `hixl::AsyncConnectStatus` (the vendor's enum class, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum AsyncConnectStatus {
    NotConnect = 0,
    ConnectPending = 1,
    Connecting = 2,
    Connected = 3,
    ConnectFailed = 4,
    DisconnectPending = 5,
    Disconnecting = 6,
}

/// What a task does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    Connect,
    Disconnect,
}

/// Runs one task: Connect or Disconnect to the remote with the time-out.
pub type Runner = Arc<dyn Fn(TaskKind, &str, Duration) -> EngineResult<()> + Send + Sync>;

struct Task {
    seq: u64,
    kind: TaskKind,
    timeout: Duration,
}

/// One remote with a state other than NOT_CONNECT, or with tasks still to run.
struct Remote {
    /// The sequence number of the latest task submitted.
    latest: u64,
    status: AsyncConnectStatus,
    waiting: VecDeque<Task>,
    /// A pool job is draining `waiting`.
    draining: bool,
}

#[derive(Default)]
struct Table {
    remotes: BTreeMap<String, Remote>,
    /// Tasks submitted and not yet started, over all remotes.
    waiting: usize,
    next_seq: u64,
}

struct Shared {
    table: Mutex<Table>,
    runner: Runner,
    capacity: usize,
}

/// The async connect service of one engine.
pub struct ConnectPool {
    shared: Arc<Shared>,
    workers: Pool,
}

impl ConnectPool {
    /// A pool of `config.threads` workers (started on demand) running tasks with `runner`.
    pub fn new(config: PoolSize, runner: Runner) -> io::Result<ConnectPool> {
        let capacity = config.queue_capacity.max(1);
        let workers = Pool::new(PoolOptions {
            name: "hixl-connect".into(),
            min_workers: 0,
            max_workers: config.threads.max(1),
            // A pool job drains one remote, and a remote is drained only while it has tasks
            // waiting, so the jobs never outnumber the waiting tasks.
            capacity,
            idle_exit: Some(Duration::from_secs(5)),
            max_idle: usize::MAX,
            watch: Duration::ZERO,
        })?;
        let shared = Arc::new(Shared { table: Mutex::default(), runner, capacity });
        Ok(ConnectPool { shared, workers })
    }

    /// Queues a task for `remote`; its state becomes CONNECT_PENDING or DISCONNECT_PENDING.
    /// [`PoolSize::queue_capacity`] tasks waiting: RESOURCE_EXHAUSTED; after
    /// [`ConnectPool::stop`]: FAILED.
    pub fn submit(&self, remote: &str, kind: TaskKind, timeout: Duration) -> EngineResult<()> {
        let mut table = lock(&self.shared.table);
        if table.waiting >= self.shared.capacity {
            return Err(EngineError::new(
                ADXL_RESOURCE_EXHAUSTED,
                format!("{} connect/disconnect tasks are waiting already", self.shared.capacity),
            ));
        }
        table.next_seq += 1;
        let seq = table.next_seq;
        let pending = match kind {
            TaskKind::Connect => AsyncConnectStatus::ConnectPending,
            TaskKind::Disconnect => AsyncConnectStatus::DisconnectPending,
        };
        let start = {
            let r = table.remotes.entry(remote.to_owned()).or_insert_with(|| Remote {
                latest: 0,
                status: AsyncConnectStatus::NotConnect,
                waiting: VecDeque::new(),
                draining: false,
            });
            r.waiting.push_back(Task { seq, kind, timeout });
            r.latest = seq;
            r.status = pending;
            !std::mem::replace(&mut r.draining, true)
        };
        table.waiting += 1;
        if start {
            let shared = self.shared.clone();
            let name = remote.to_owned();
            if let Err(refused) = self.workers.submit(Box::new(move || drain(&shared, &name))) {
                // Undo: the remote has no other task, since nothing was draining it.
                table.remotes.remove(remote);
                table.waiting -= 1;
                return Err(match refused {
                    Refused::Stopped => EngineError::new(ADXL_FAILED, "the engine is finalizing"),
                    Refused::Full => EngineError::new(ADXL_RESOURCE_EXHAUSTED, "the connect queue is full"),
                });
            }
        }
        Ok(())
    }

    /// The state of `remote`'s latest task (NOT_CONNECT when it has none).
    pub fn status(&self, remote: &str) -> AsyncConnectStatus {
        lock(&self.shared.table).remotes.get(remote).map_or(AsyncConnectStatus::NotConnect, |r| r.status)
    }

    /// Every remote whose state is not NOT_CONNECT, by name.
    pub fn statuses(&self) -> Vec<(String, AsyncConnectStatus)> {
        lock(&self.shared.table)
            .remotes
            .iter()
            .filter(|(_, r)| r.status != AsyncConnectStatus::NotConnect)
            .map(|(n, r)| (n.clone(), r.status))
            .collect()
    }

    /// Finalize: tasks not started are dropped, new ones refused, and the table emptied; a
    /// task running finishes (its time-out bounds it).
    pub fn stop(&self) {
        self.workers.clear();
        self.workers.stop();
        let mut table = lock(&self.shared.table);
        table.remotes.clear();
        table.waiting = 0;
    }
}

/// A pool job: runs `remote`'s waiting tasks one after another, then ends.
fn drain(shared: &Shared, remote: &str) {
    loop {
        let task = {
            let mut table = lock(&shared.table);
            let Some(r) = table.remotes.get_mut(remote) else { return };
            let Some(task) = r.waiting.pop_front() else {
                r.draining = false;
                return;
            };
            if task.seq == r.latest {
                r.status = match task.kind {
                    TaskKind::Connect => AsyncConnectStatus::Connecting,
                    TaskKind::Disconnect => AsyncConnectStatus::Disconnecting,
                };
            }
            table.waiting -= 1;
            task
        };
        // A task that panics is reported failed rather than leaving the remote stuck.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (shared.runner)(task.kind, remote, task.timeout)
        }))
        .unwrap_or_else(|_| Err(EngineError::new(ADXL_FAILED, "the connect task panicked")));
        let done = match (task.kind, &result) {
            (TaskKind::Connect, Ok(())) => AsyncConnectStatus::Connected,
            (TaskKind::Connect, Err(e)) if e.status == ADXL_ALREADY_CONNECTED => {
                AsyncConnectStatus::Connected
            }
            (TaskKind::Connect, Err(e)) => {
                log::debug!(target: TARGET, "ConnectAsync to {remote} failed ({}): {}", e.status, e.message);
                AsyncConnectStatus::ConnectFailed
            }
            (TaskKind::Disconnect, _) => AsyncConnectStatus::NotConnect,
        };
        let mut table = lock(&shared.table);
        let Some(r) = table.remotes.get_mut(remote) else { return };
        if task.seq == r.latest {
            if done == AsyncConnectStatus::NotConnect {
                // The latest task, so nothing waits behind it.
                table.remotes.remove(remote);
                return;
            }
            r.status = done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    use AsyncConnectStatus::*;

    /// A runner whose tasks block until the test lets them go (one message each), recording
    /// what ran.
    /// What ran, in order.
    type Ran = Arc<Mutex<Vec<(TaskKind, String)>>>;

    fn gated() -> (Runner, mpsc::Sender<EngineResult<()>>, Ran) {
        let (tx, rx) = mpsc::channel::<EngineResult<()>>();
        let rx = Mutex::new(rx);
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = log.clone();
        let runner: Runner = Arc::new(move |kind, remote: &str, _| {
            lock(&seen).push((kind, remote.to_owned()));
            lock(&rx).recv_timeout(Duration::from_secs(10)).unwrap_or(Ok(()))
        });
        (runner, tx, log)
    }

    fn wait_until(pool: &ConnectPool, remote: &str, want: AsyncConnectStatus) {
        let t = Instant::now();
        while pool.status(remote) != want && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(pool.status(remote), want, "{remote}");
    }

    const T: Duration = Duration::from_millis(100);

    #[test]
    fn connect_goes_pending_connecting_connected_and_disconnect_removes() {
        let (runner, go, _) = gated();
        let pool = ConnectPool::new(PoolSize::DEFAULT, runner).unwrap();
        assert_eq!(pool.status("a"), NotConnect);
        pool.submit("a", TaskKind::Connect, T).unwrap();
        wait_until(&pool, "a", Connecting);
        go.send(Ok(())).unwrap();
        wait_until(&pool, "a", Connected);
        assert_eq!(pool.statuses(), vec![("a".to_owned(), Connected)]);
        pool.submit("a", TaskKind::Disconnect, T).unwrap();
        wait_until(&pool, "a", Disconnecting);
        go.send(Err(EngineError::new(ADXL_FAILED, "whatever"))).unwrap();
        wait_until(&pool, "a", NotConnect);
        assert!(pool.statuses().is_empty());
        pool.stop();
    }

    #[test]
    fn failures_and_already_connected() {
        let (runner, go, _) = gated();
        let pool = ConnectPool::new(PoolSize::DEFAULT, runner).unwrap();
        pool.submit("a", TaskKind::Connect, T).unwrap();
        go.send(Err(EngineError::new(crate::error::engine_status::ADXL_TIMEOUT, "slow"))).unwrap();
        wait_until(&pool, "a", ConnectFailed);
        pool.submit("a", TaskKind::Connect, T).unwrap();
        go.send(Err(EngineError::new(ADXL_ALREADY_CONNECTED, "there"))).unwrap();
        wait_until(&pool, "a", Connected);
        pool.stop();
    }

    #[test]
    fn the_latest_task_wins_and_tasks_of_one_remote_run_in_order() {
        let (runner, go, log) = gated();
        let pool = ConnectPool::new(PoolSize::DEFAULT, runner).unwrap();
        pool.submit("a", TaskKind::Connect, T).unwrap();
        wait_until(&pool, "a", Connecting);
        // A disconnect queued behind the running connect: its pending state is not overwritten
        // by the connect's result.
        pool.submit("a", TaskKind::Disconnect, T).unwrap();
        assert_eq!(pool.status("a"), DisconnectPending);
        go.send(Ok(())).unwrap();
        wait_until(&pool, "a", Disconnecting);
        // And a connect behind the disconnect: the disconnect's end does not remove the remote.
        pool.submit("a", TaskKind::Connect, T).unwrap();
        assert_eq!(pool.status("a"), ConnectPending);
        go.send(Ok(())).unwrap();
        wait_until(&pool, "a", Connecting);
        go.send(Ok(())).unwrap();
        wait_until(&pool, "a", Connected);
        let ran: Vec<TaskKind> = lock(&log).iter().map(|(k, _)| *k).collect();
        assert_eq!(ran, vec![TaskKind::Connect, TaskKind::Disconnect, TaskKind::Connect]);
        pool.stop();
    }

    #[test]
    fn a_full_queue_is_resource_exhausted() {
        let (runner, go, _) = gated();
        let pool = ConnectPool::new(PoolSize { threads: 1, queue_capacity: 3 }, runner).unwrap();
        pool.submit("busy", TaskKind::Connect, T).unwrap();
        wait_until(&pool, "busy", Connecting);
        for r in ["b", "c", "d"] {
            pool.submit(r, TaskKind::Connect, T).unwrap();
        }
        let e = pool.submit("e", TaskKind::Connect, T).unwrap_err();
        assert_eq!(e.status, ADXL_RESOURCE_EXHAUSTED);
        assert_eq!(pool.status("e"), NotConnect);
        for _ in 0..4 {
            go.send(Ok(())).unwrap();
        }
        for r in ["busy", "b", "c", "d"] {
            wait_until(&pool, r, Connected);
        }
        pool.submit("e", TaskKind::Connect, T).unwrap();
        go.send(Ok(())).unwrap();
        wait_until(&pool, "e", Connected);
        pool.stop();
        assert_eq!(pool.submit("f", TaskKind::Connect, T).unwrap_err().status, ADXL_FAILED);
    }

    #[test]
    fn remotes_run_concurrently_up_to_the_worker_count() {
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (r, m) = (running.clone(), most.clone());
        let runner: Runner = Arc::new(move |_, _: &str, _| {
            use std::sync::atomic::Ordering::AcqRel;
            let now = r.fetch_add(1, AcqRel) + 1;
            m.fetch_max(now, AcqRel);
            std::thread::sleep(Duration::from_millis(20));
            r.fetch_sub(1, AcqRel);
            Ok(())
        });
        let pool = ConnectPool::new(PoolSize { threads: 4, queue_capacity: 64 }, runner).unwrap();
        let names: Vec<String> = (0..16).map(|i| format!("peer{i}")).collect();
        for n in &names {
            pool.submit(n, TaskKind::Connect, T).unwrap();
        }
        for n in &names {
            wait_until(&pool, n, Connected);
        }
        let most = most.load(std::sync::atomic::Ordering::Acquire);
        assert!((2..=4).contains(&most), "{most} tasks ran at once");
        pool.stop();
    }

    #[test]
    fn a_panicking_task_is_a_failed_connect() {
        let runner: Runner = Arc::new(|_, _: &str, _| panic!("a bug in a connect task"));
        let pool = ConnectPool::new(PoolSize::DEFAULT, runner).unwrap();
        pool.submit("a", TaskKind::Connect, T).unwrap();
        wait_until(&pool, "a", ConnectFailed);
        pool.stop();
    }
}
