//! The threads engines block on: serving a connection, the accept loops of a listening engine
//! (TCP and same host) and the reader that follows a same-host peer's registrations. They are
//! one pool for the whole process that keeps idle threads for the next jobs rather than a
//! thread started per job: starting and joining a thread costs more than the rest of a
//! loopback Connect's work, and Initialize, Connect, Disconnect, Finalize, again, is what a
//! process sees most (`cargo bench --bench engine_setup`).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::logging::TARGET;
use crate::sync::{Job, Pool, PoolOptions, lock};

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
        })
        .inspect_err(|e| log::warn!(target: TARGET, "cannot make the engine threads' pool: {e}"))
        .ok()
    });
    pool.as_ref().is_some_and(|p| p.submit(job).is_ok())
}

/// Runs `then(value)` on another engine thread; `value` back if no thread can take it. What
/// a loop calls to go on elsewhere while this thread does the work it just found (an accept
/// loop that serves the connection it accepted: no hand-off, so no wake-up, between the two).
pub fn hand_over<T: Send + 'static>(value: T, then: fn(T)) -> Result<(), T> {
    let cell = Arc::new(Mutex::new(Some(value)));
    let taken = cell.clone();
    let handed = run(Box::new(move || {
        let value = lock(&taken).take();
        if let Some(value) = value {
            then(value);
        }
    }));
    if handed {
        return Ok(());
    }
    // Refused: the job was dropped without running, so the value is still in the cell.
    match lock(&cell).take() {
        Some(value) => Err(value),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop handed over runs each step on another thread than the step before, and a value
    /// handed over is never dropped on the way.
    #[test]
    fn a_loop_handed_over_moves_from_thread_to_thread() {
        struct Steps {
            left: u32,
            threads: Vec<std::thread::ThreadId>,
            done: std::sync::mpsc::Sender<Vec<std::thread::ThreadId>>,
        }
        fn step(mut s: Steps) {
            s.threads.push(std::thread::current().id());
            s.left -= 1;
            if s.left == 0 {
                let _ = s.done.send(std::mem::take(&mut s.threads));
                return;
            }
            if let Err(s) = hand_over(s, step) {
                panic!("refused with {} steps left", s.left);
            }
            // Keeps this thread busy a moment, so the next step needs another one.
            std::thread::sleep(Duration::from_millis(5));
        }
        let (done, finished) = std::sync::mpsc::channel();
        step(Steps { left: 5, threads: vec![], done });
        let seen = finished.recv_timeout(Duration::from_secs(10)).expect("the last step ran");
        assert_eq!(seen.len(), 5);
        assert!(
            seen.windows(2).all(|w| w[0] != w[1]),
            "each step on another thread than the one before: {seen:?}"
        );
    }
}
