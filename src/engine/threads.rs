//! The threads engines block on: serving a connection, waiting for connections
//! ([`crate::engine::acceptor`]) and following a same-host peer's registrations. They are one
//! pool for the whole process that keeps idle threads for the next jobs rather than a thread
//! started per job: starting and joining a thread costs more than the rest of a loopback
//! Connect's work, and Initialize, Connect, Disconnect, Finalize, again, is what a process sees
//! most (`cargo bench --bench engine_setup`).

use std::sync::OnceLock;
use std::time::Duration;

use crate::logging::TARGET;
use crate::sync::{Job, Pool, PoolOptions};

/// Idle threads kept for the next jobs (as many as a burst of connections to the engines of a
/// process usually needs at once).
const KEEP_IDLE: usize = 64;
/// Idle threads end after this long (well within the time tests give a server's thread count
/// to settle after a flood).
const IDLE_EXIT: Duration = Duration::from_secs(2);
/// Threads at most, over all engines: far above what engines admit (each bounds its own
/// connections, served and in their handshake); a job beyond waits for a thread.
const MAX_THREADS: usize = 16384;

/// Runs `job` on one of the process's engine threads; `false` if refused (the pool could not
/// be made, or its queue is full).
pub fn run(job: Job) -> bool {
    static THREADS: OnceLock<Option<Pool>> = OnceLock::new();
    let pool = THREADS.get_or_init(|| {
        Pool::new(PoolOptions {
            name: "adxl-serve".into(),
            min_workers: 0,
            max_workers: MAX_THREADS,
            capacity: MAX_THREADS,
            idle_exit: Some(IDLE_EXIT),
            max_idle: KEEP_IDLE,
            watch: Duration::ZERO,
        })
        .inspect_err(|e| log::warn!(target: TARGET, "cannot make the engine threads' pool: {e}"))
        .ok()
    });
    pool.as_ref().is_some_and(|p| p.submit(job).is_ok())
}
