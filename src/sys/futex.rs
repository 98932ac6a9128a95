//! Futex wait and wake on a 32-bit word in shared memory, across processes.
//!
//! The shared (not `FUTEX_PRIVATE_FLAG`) operations key the wait queue on the underlying page,
//! so a waiter in one process is woken by a wake in another that maps the same file.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitResult {
    /// Woken by a wake (or spuriously): re-check the word.
    Woken,
    /// The word did not hold the expected value when the wait began.
    Changed,
    TimedOut,
    /// A signal interrupted the wait: re-check and wait again.
    Interrupted,
}

/// Sleeps while `*word == expected`, for at most `timeout` (`None`: without limit).
pub fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> WaitResult {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit word (a reference); FUTEX_WAIT only reads it and
    // the timespec, which lives on this stack frame for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0,
        )
    };
    if rc == 0 {
        return WaitResult::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => WaitResult::Changed,
        Some(libc::ETIMEDOUT) => WaitResult::TimedOut,
        _ => WaitResult::Interrupted,
    }
}

/// Wakes up to `n` waiters on `word`; returns how many were woken.
pub fn wake(word: &AtomicU32, n: u32) -> usize {
    // SAFETY: `word` is a live, aligned 32-bit word; FUTEX_WAKE does not access its memory
    // beyond using the address as the queue key.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n.min(i32::MAX as u32),
            std::ptr::null::<u8>(),
            std::ptr::null::<u32>(),
            0,
        )
    };
    usize::try_from(rc).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    #[test]
    fn a_changed_word_does_not_sleep_and_a_timeout_ends_the_wait() {
        let w = AtomicU32::new(1);
        assert_eq!(wait(&w, 0, None), WaitResult::Changed);
        let t = Instant::now();
        assert_eq!(wait(&w, 1, Some(Duration::from_millis(20))), WaitResult::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(15));
    }

    #[test]
    fn wake_releases_a_waiter() {
        let w = Arc::new(AtomicU32::new(0));
        let w2 = Arc::clone(&w);
        let waiter = std::thread::spawn(move || {
            while w2.load(Ordering::Acquire) == 0 {
                wait(&w2, 0, Some(Duration::from_secs(5)));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        w.store(1, Ordering::Release);
        wake(&w, 1);
        waiter.join().unwrap();
    }
}
