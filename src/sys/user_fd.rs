//! Descriptors a C caller hands over by number (a model subscription's pipe): writing records
//! to one with a bound on how long a full pipe may hold the writer, and closing it.

use std::io;
use std::os::fd::{BorrowedFd, RawFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};

/// Writes all of `data` to `fd`, waiting at most `timeout` in all for a full pipe to drain.
pub fn write_all(fd: RawFd, data: &[u8], timeout: Duration) -> io::Result<()> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: the descriptor is the caller's, open for as long as its subscription lasts (the
    // subscription's lock is held across this call and the close); a closed or foreign number
    // only makes the calls below fail with EBADF or write where the user said.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let deadline = Instant::now() + timeout;
    let mut rest = data;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::from(io::ErrorKind::TimedOut));
        }
        let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
        let spec = rustix::event::Timespec::try_from(left)
            .unwrap_or(rustix::event::Timespec { tv_sec: 1, tv_nsec: 0 });
        match poll(&mut fds, Some(&spec)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        match rustix::io::write(fd, rest) {
            Ok(n) => rest = &rest[n..],
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Closes `fd`, which the caller gave up to us.
pub fn close(fd: RawFd) -> io::Result<()> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: the caller handed the descriptor over for us to close, and no owned descriptor of
    // this process holds that number for us (it was never wrapped in an `OwnedFd`).
    unsafe { rustix::io::close(fd) };
    Ok(())
}
