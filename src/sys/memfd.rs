//! Anonymous shareable files (`memfd_create`): the backing of every allocation.
//!
//! Memory backed by a file descriptor can be mapped twice (strict mode's inaccessible user view
//! plus the runtime's own view) and passed to another process over a Unix socket (IPC memory),
//! which plain anonymous memory cannot.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, OnceLock};

use rustix::fs;

/// An anonymous file of a fixed size, closed on drop (close-on-exec, so children never inherit it).
#[derive(Debug)]
pub struct MemFd(OwnedFd, Sleepers);

/// What [`crate::sys::sleepers`] needs of a file: the file of the page that counts sleepers on
/// its words when another process handed one on with it, and the file's identity.
#[derive(Debug, Default)]
struct Sleepers {
    page: OnceLock<Arc<MemFd>>,
    id: OnceLock<u64>,
}

impl MemFd {
    /// Creates a file named `name` (shown as `/memfd:<name>` in `/proc/<pid>/maps`, which helps
    /// when debugging) of `len` bytes, all zero.
    pub fn create(name: &str, len: usize) -> io::Result<MemFd> {
        let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let size = i64::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let file =
            MemFd::from(fs::memfd_create(&name, fs::MemfdFlags::CLOEXEC | fs::MemfdFlags::ALLOW_SEALING)?);
        fs::ftruncate(&file.0, size as u64)?;
        // The size never changes again: sealed, so a process it is passed to can check that
        // its mapping can never lose pages under it (a shrink would turn accesses into SIGBUS).
        fs::fcntl_add_seals(&file.0, fs::SealFlags::SHRINK | fs::SealFlags::GROW)?;
        Ok(file)
    }

    /// Whether the file is sealed against shrinking (every file made by [`MemFd::create`] is),
    /// so a mapping of it within its current size can never fault with SIGBUS.
    pub fn cannot_shrink(&self) -> bool {
        fs::fcntl_get_seals(&self.0).is_ok_and(|seals| seals.contains(fs::SealFlags::SHRINK))
    }

    /// The descriptor, e.g. to pass to another process.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// The file of the sleeper page handed on with this file by the process that exported it
    /// (`None` for a file of this process's own).
    pub fn sleeper_page(&self) -> Option<&Arc<MemFd>> {
        self.1.page.get()
    }

    /// Records `page` as this file's sleeper page (an import); ignored if one is recorded.
    pub fn adopt_sleeper_page(&self, page: MemFd) {
        let _ = self.1.page.set(Arc::new(page));
    }

    /// The file's identity, the same in every process that has it (its inode number).
    pub fn id(&self) -> io::Result<u64> {
        if let Some(id) = self.1.id.get() {
            return Ok(*id);
        }
        let id = fs::fstat(&self.0)?.st_ino;
        Ok(*self.1.id.get_or_init(|| id))
    }

    /// The file's current size in bytes.
    pub fn size(&self) -> io::Result<u64> {
        // A negative size cannot happen; it would read as "too short" to every check.
        Ok(u64::try_from(fs::fstat(&self.0)?.st_size).unwrap_or(0))
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
        MemFd(fd, Sleepers::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

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
        assert!(rustix::io::fcntl_getfd(&f).unwrap().contains(rustix::io::FdFlags::CLOEXEC));
    }
}
