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
pub fn wake(word: &AtomicU32, n: u32) -> usize {
    // The kernel reads the count as a signed int: saturate as before.
    let n = n.min(i32::MAX as u32);
    futex::wake(word, futex::Flags::empty(), n).unwrap_or(0)
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
}
