//! Futex wait and wake on a 32-bit word that may live in memory shared between processes.
//!
//! The futex operations here are the *shared* (non-private) ones: the kernel keys the wait
//! queue by the page behind the address, not by this process's address space, so a waiter in
//! one process is woken by a waker in another that maps the same file at any address. That is
//! what lets a notify cell in a shared mapping synchronise processes with no broker and no
//! system call on the uncontended path. The word must only ever be touched through atomics.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::io::Errno;
use rustix::thread::futex;

/// How a [`wait`] ended. Callers re-check the word in every case: a futex wake-up is a hint,
/// never a promise (another waiter may already have consumed what woke us).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitResult {
    /// Woken by [`wake`] (or spuriously).
    Woken,
    /// The word did not hold `expected` when the kernel looked (`EAGAIN`): nothing to wait for.
    ValueChanged,
    /// The timeout elapsed (`ETIMEDOUT`).
    TimedOut,
    /// A signal handler ran (`EINTR`); the caller decides whether to wait again.
    Interrupted,
}

/// Sleeps while `word` holds `expected`, for at most `timeout` (measured on the monotonic
/// clock; `None` waits until woken).
pub fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> WaitResult {
    // A timeout beyond what a timespec holds is "practically forever": no timeout.
    let ts = timeout.and_then(|t| futex::Timespec::try_from(t).ok());
    // No `Flags::PRIVATE`: the wait is keyed by the backing page, as shared memory requires.
    match futex::wait(word, futex::Flags::empty(), expected, ts.as_ref()) {
        Ok(()) => WaitResult::Woken,
        Err(Errno::AGAIN) => WaitResult::ValueChanged,
        Err(Errno::TIMEDOUT) => WaitResult::TimedOut,
        Err(Errno::INTR) => WaitResult::Interrupted,
        Err(other) => {
            // Cannot happen with a valid word and a well-formed timeout; report it as an
            // interruption so the caller re-checks and keeps its own deadline.
            log::warn!(target: crate::logging::TARGET, "futex wait failed unexpectedly (errno {})", other.raw_os_error());
            WaitResult::Interrupted
        }
    }
}

/// Wakes up to `n` waiters sleeping on `word` (in any process); returns how many were woken.
/// A wake that woke someone is noted for the calling thread (see [`spin_for`]).
pub fn wake(word: &AtomicU32, n: u32) -> usize {
    // The kernel reads the count as a signed int: saturate as before.
    let n = n.min(i32::MAX as u32);
    let woken = futex::wake(word, futex::Flags::empty(), n).unwrap_or(0);
    if woken > 0 {
        WOKE.set(true);
    }
    woken
}

thread_local! {
    /// Whether this thread's [`wake`] woke someone since its last [`spin_for`].
    static WOKE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Spins [`spin_for`] has left out on this thread, to probe every [`PROBE_EVERY`]th.
    static SKIPPED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Of the waits after a wake that woke a sleeper, one in this many still spins (see
/// [`spin_for`]).
const PROBE_EVERY: u32 = 8;

/// How long a thread about to wait should spin before it sleeps: `spin`, or, when a [`wake`]
/// of this thread woke a sleeper since its last wait, nothing seven times in eight. The kernel
/// tends to run the thread it wakes on the waker's CPU (two threads signalling each other in
/// turn are pulled together), and there a waker that spins only keeps the peer it has just
/// woken, whose answer it waits for, off the CPU (perf sched: two stream workers of an IPC
/// event ping-pong sharing one CPU, each running 10-13 us, its 4 us spin included, before the
/// other could run). Every eighth such wait spins all the same: when the peer was woken on
/// another CPU and answers within the spin, nobody sleeps and both sides spin again from then
/// on, as a ping-pong on two free CPUs should (without the probe, once one side slept, both
/// slept for good: 11-30 us round trips on a quiet machine where spinning ones take 0.2 us). A
/// waiter that woke nobody spins as before.
pub fn spin_for(spin: Duration) -> Duration {
    if WOKE.replace(false) {
        let skipped = SKIPPED.get().wrapping_add(1);
        SKIPPED.set(skipped);
        if skipped % PROBE_EVERY != 0 {
            return Duration::ZERO;
        }
    }
    spin
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    use crate::sys::mapping::Mapping;
    use crate::sys::memfd::MemFd;

    #[test]
    fn a_changed_value_returns_at_once() {
        let word = AtomicU32::new(5);
        assert_eq!(wait(&word, 4, None), WaitResult::ValueChanged);
    }

    #[test]
    fn a_wait_times_out() {
        let word = AtomicU32::new(0);
        let start = Instant::now();
        assert_eq!(wait(&word, 0, Some(Duration::from_millis(30))), WaitResult::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(25));
    }

    #[test]
    fn wake_with_no_waiters_wakes_nobody() {
        assert_eq!(wake(&AtomicU32::new(0), 10), 0);
    }

    #[test]
    fn a_waiter_on_one_view_is_woken_through_another_view_of_the_same_file() {
        // Two mappings of one file stand in for two processes: only a shared futex (keyed by
        // the page, not the address) can connect them.
        let file = MemFd::create("ascendless-futex-test", 4096).unwrap();
        let a = Arc::new(Mapping::shared_rw(&file, 4096, 0).unwrap());
        let b = Mapping::shared_rw(&file, 4096, 0).unwrap();
        let waiter = std::thread::spawn({
            let a = Arc::clone(&a);
            move || {
                let word = a.atomic_u32(64).unwrap();
                let deadline = Instant::now() + Duration::from_secs(5);
                while word.load(Ordering::Acquire) == 0 && Instant::now() < deadline {
                    wait(word, 0, Some(Duration::from_secs(5)));
                }
                word.load(Ordering::Acquire)
            }
        });
        let word = b.atomic_u32(64).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        word.store(7, Ordering::Release);
        wake(word, 1);
        assert_eq!(waiter.join().unwrap(), 7);
    }

    #[test]
    fn a_thread_that_woke_a_sleeper_does_not_spin_before_its_next_wait() {
        let spin = Duration::from_micros(4);
        assert_eq!(spin_for(spin), spin, "no wake yet");
        wake(&AtomicU32::new(0), 1);
        assert_eq!(spin_for(spin), spin, "a wake that woke nobody");
        let word = Arc::new(AtomicU32::new(0));
        let waiter = std::thread::spawn({
            let word = Arc::clone(&word);
            move || {
                while word.load(Ordering::Acquire) == 0 {
                    wait(&word, 0, Some(Duration::from_secs(5)));
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        // Until the waiter sleeps and a wake finds it (it sees 0 and sleeps again).
        while wake(&word, 1) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        word.store(1, Ordering::Release);
        wake(&word, 1);
        waiter.join().unwrap();
        assert_eq!(spin_for(spin), Duration::ZERO, "the wake woke the waiter");
        assert_eq!(spin_for(spin), spin, "noted once: the next wait spins again");
        // Of the waits after such wakes, every PROBE_EVERY-th spins all the same.
        let spun = (1..PROBE_EVERY)
            .map(|_| {
                WOKE.set(true);
                spin_for(spin)
            })
            .filter(|d| !d.is_zero())
            .count();
        assert_eq!(spun, 1, "the eighth wait after a wake probes with a spin");
    }
}
