//! Anonymous shareable files (`memfd_create`): the backing of every allocation.
//!
//! Memory backed by a file descriptor can be mapped twice (strict mode's inaccessible user view
//! plus the runtime's own view) and passed to another process over a Unix socket (IPC memory),
//! which plain anonymous memory cannot.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// An anonymous file of a fixed size, closed on drop (close-on-exec, so children never inherit it).
#[derive(Debug)]
pub struct MemFd(OwnedFd);

impl MemFd {
    /// Creates a file named `name` (shown as `/memfd:<name>` in `/proc/<pid>/maps`, which helps
    /// when debugging) of `len` bytes, all zero.
    pub fn create(name: &str, len: usize) -> io::Result<MemFd> {
        let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let size = libc::off_t::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `name` is a valid NUL-terminated string that outlives the call.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: memfd_create just returned this descriptor; nothing else owns it.
        let file = MemFd(unsafe { OwnedFd::from_raw_fd(fd) });
        // SAFETY: the descriptor is open (owned by `file`); ftruncate has no memory preconditions.
        if unsafe { libc::ftruncate(file.0.as_raw_fd(), size) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // The size never changes again: sealed, so a process it is passed to can check that
        // its mapping can never lose pages under it (a shrink would turn accesses into SIGBUS).
        // SAFETY: fcntl(F_ADD_SEALS) takes an open descriptor and an integer.
        if unsafe {
            libc::fcntl(file.0.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK | libc::F_SEAL_GROW)
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(file)
    }

    /// Whether the file is sealed against shrinking (every file made by [`MemFd::create`] is),
    /// so a mapping of it within its current size can never fault with SIGBUS.
    pub fn cannot_shrink(&self) -> bool {
        // SAFETY: fcntl(F_GET_SEALS) takes an open descriptor and returns an integer.
        let seals = unsafe { libc::fcntl(self.0.as_raw_fd(), libc::F_GET_SEALS) };
        seals >= 0 && seals & libc::F_SEAL_SHRINK != 0
    }

    /// The descriptor, e.g. to pass to another process.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// The file's current size in bytes.
    pub fn size(&self) -> io::Result<u64> {
        std::fs::File::from(self.0.try_clone()?).metadata().map(|m| m.len())
    }
}

impl AsFd for MemFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// A descriptor received from elsewhere (another process's export). Mapping it checks its size,
/// so a short file cannot turn into a fault on access.
impl From<OwnedFd> for MemFd {
    fn from(fd: OwnedFd) -> Self {
        MemFd(fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memfd_has_the_requested_size() {
        let f = MemFd::create("ascendless-test", 3 * 4096).unwrap();
        assert!(f.cannot_shrink());
        assert_eq!(f.size().unwrap(), 3 * 4096);
        assert!(f.as_fd().as_raw_fd() >= 0);
    }

    #[test]
    fn names_with_nul_are_refused() {
        let e = MemFd::create("a\0b", 4096).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn the_descriptor_is_close_on_exec() {
        let f = MemFd::create("ascendless-test", 4096).unwrap();
        // SAFETY: F_GETFD on an open descriptor only reads its flags.
        let flags = unsafe { libc::fcntl(f.as_fd().as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    }
}
