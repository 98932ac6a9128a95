//! Shared mappings of a [`MemFd`] at a chosen alignment.
//!
//! `mmap` only promises page alignment, but huge-page allocation policies promise 2 MiB. To get
//! an aligned address without guessing, we reserve `len + align` bytes of inaccessible address
//! space, map the file with `MAP_FIXED` at the first aligned address inside the reservation
//! (which atomically replaces that part of it), and give back the slack on either side.

use std::ffi::c_void;
use std::io;
use std::sync::atomic::AtomicU32;

use rustix::mm;

use super::memfd::MemFd;
use super::page_size;

/// Size (and alignment) of a transparent huge page on x86-64 and arm64.
pub const HUGE_PAGE: usize = 2 << 20;

/// What the process may do with a mapping's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// Any load or store faults (`PROT_NONE`): strict mode's user view of device memory.
    NoAccess,
}

/// A mapped region, unmapped on drop.
///
/// The address is kept as an integer, not a pointer: nothing dereferences it except through a
/// [`RawSpan`](super::span::RawSpan) made by `RawSpan::of_mapping`, so the mapping is plainly
/// `Send` and `Sync`.
#[derive(Debug)]
pub struct Mapping {
    addr: usize,
    len: usize,
    access: Access,
}

impl Mapping {
    /// Maps `len` bytes of `file` shared and read-write at an address aligned to `align` (a power
    /// of two; at least page alignment is always given). Mappings of at least [`HUGE_PAGE`]
    /// alignment and size ask the kernel for huge pages (best effort: where transparent huge
    /// pages for shared memory are off, ordinary pages are used).
    pub fn shared_rw(file: &MemFd, len: usize, align: usize) -> io::Result<Mapping> {
        Self::shared_rw_at(file, 0, len, align)
    }

    /// As [`Mapping::shared_rw`], for the bytes of `file` from `offset` (a multiple of the page
    /// size): how an importer maps the part of another process's allocation it was given.
    pub fn shared_rw_at(file: &MemFd, offset: u64, len: usize, align: usize) -> io::Result<Mapping> {
        let m = Self::map(file, offset, len, align, Access::ReadWrite)?;
        if align >= HUGE_PAGE && len % HUGE_PAGE == 0 {
            // SAFETY: the range is exactly our own live mapping; madvise only changes how the
            // kernel backs it. Failure (no THP support) is harmless and ignored.
            let _ = unsafe { mm::madvise(m.addr as *mut c_void, len, mm::Advice::LinuxHugepage) };
        }
        Ok(m)
    }

    /// Maps `len` bytes of `file` shared but inaccessible: every host load or store faults, as a
    /// host dereference of device memory does on a real NPU. The runtime reaches the same bytes
    /// through a second, read-write mapping of the same file.
    pub fn shared_no_access(file: &MemFd, len: usize, align: usize) -> io::Result<Mapping> {
        Self::shared_no_access_at(file, 0, len, align)
    }

    /// As [`Mapping::shared_no_access`], for the bytes of `file` from `offset`.
    pub fn shared_no_access_at(file: &MemFd, offset: u64, len: usize, align: usize) -> io::Result<Mapping> {
        Self::map(file, offset, len, align, Access::NoAccess)
    }

    fn map(file: &MemFd, offset: u64, len: usize, align: usize, access: Access) -> io::Result<Mapping> {
        let page = page_size();
        let align = align.max(page);
        if len == 0 || len % page != 0 || !align.is_power_of_two() || offset % page as u64 != 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "offset and length must be whole pages"));
        }
        if i64::try_from(offset).is_err() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "offset too large"));
        }
        // Mapping past the end of the file would turn accesses into SIGBUS: refuse up front
        // (matters for descriptors received from other processes).
        if file.size()? < offset.saturating_add(len as u64) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "file is shorter than the mapping"));
        }
        let reserve = len
            .checked_add(align - page)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
        // SAFETY: a fresh anonymous PROT_NONE reservation at an address the kernel chooses; it
        // cannot overlap anything that exists.
        let base = unsafe {
            mm::mmap_anonymous(
                std::ptr::null_mut(),
                reserve,
                mm::ProtFlags::empty(),
                mm::MapFlags::PRIVATE | mm::MapFlags::NORESERVE,
            )
        }? as usize;
        let aligned = base.next_multiple_of(align);
        let prot = match access {
            Access::ReadWrite => mm::ProtFlags::READ | mm::ProtFlags::WRITE,
            Access::NoAccess => mm::ProtFlags::empty(),
        };
        // SAFETY: [aligned, aligned + len) lies inside the reservation made above, which we own
        // and nothing uses; MAP_FIXED replaces exactly that part of it.
        let mapped = unsafe {
            mm::mmap(
                aligned as *mut c_void,
                len,
                prot,
                mm::MapFlags::SHARED | mm::MapFlags::FIXED,
                file,
                offset,
            )
        };
        let head = aligned - base;
        let tail = reserve - head - len;
        // SAFETY: on failure the whole reservation, else the slack before and after the mapping,
        // is the rest of our own reservation; nothing refers to it. All ranges are page aligned
        // (base, aligned and len are). Unmapping our own range cannot fail.
        unsafe {
            if let Err(err) = mapped {
                let _ = mm::munmap(base as *mut c_void, reserve);
                return Err(err.into());
            }
            if head > 0 {
                let _ = mm::munmap(base as *mut c_void, head);
            }
            if tail > 0 {
                let _ = mm::munmap((aligned + len) as *mut c_void, tail);
            }
        }
        Ok(Mapping { addr: aligned, len, access })
    }

    pub fn addr(&self) -> usize {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true (mappings are at least a page); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn access(&self) -> Access {
        self.access
    }

    /// The 32-bit word at `offset` of a read-write mapping, as an atomic (the cell of a notify,
    /// shared with other processes that map the same file). `None` if the word does not fit,
    /// `offset` is not a multiple of 4, or the mapping is inaccessible.
    ///
    /// Those bytes must then only be accessed atomically (by every process): a plain copy over
    /// them through a [`RawSpan`] while the atomic is in use would be a data race.
    pub fn atomic_u32(&self, offset: usize) -> Option<&AtomicU32> {
        let end = offset.checked_add(4)?;
        if self.access != Access::ReadWrite || end > self.len || offset % 4 != 0 {
            return None;
        }
        // SAFETY: [addr + offset, addr + offset + 4) lies inside this live read-write shared
        // mapping, which stays mapped as long as `&self` is borrowed (only Drop unmaps it); the
        // address is 4-aligned (mappings are page-aligned, offset % 4 == 0), which is
        // AtomicU32's alignment, and any bit pattern is a valid u32. Other processes and views
        // may change the bytes concurrently, which is exactly what atomics permit.
        Some(unsafe { AtomicU32::from_ptr((self.addr + offset) as *mut u32) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range is our own mapping. Every RawSpan into it holds an Arc of this
        // mapping (see `span`), so none can outlive it; nothing else dereferences it.
        let _ = unsafe { mm::munmap(self.addr as *mut c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::span::RawSpan;
    use std::sync::Arc;

    fn file(len: usize) -> MemFd {
        MemFd::create("ascendless-test", len).unwrap()
    }

    #[test]
    fn mappings_are_aligned_as_asked() {
        let page = page_size();
        for align in [page, 64 << 10, HUGE_PAGE] {
            let f = file(HUGE_PAGE);
            let m = Mapping::shared_rw(&f, HUGE_PAGE, align).unwrap();
            assert_eq!(m.addr() % align, 0, "align {align}");
            assert_eq!(m.len(), HUGE_PAGE);
        }
    }

    #[test]
    fn two_views_of_one_file_share_their_bytes() {
        let f = file(8192);
        let a = Arc::new(Mapping::shared_rw(&f, 8192, 0).unwrap());
        let b = Arc::new(Mapping::shared_rw(&f, 8192, 0).unwrap());
        assert_ne!(a.addr(), b.addr());
        RawSpan::of_mapping(&a, 100, 4).unwrap().fill(7);
        let mut out = [0u8; 4];
        // SAFETY: `out` is a live local buffer of 4 bytes.
        let dst = unsafe { RawSpan::new(out.as_mut_ptr() as usize, 4) };
        dst.copy_from(&RawSpan::of_mapping(&b, 100, 4).unwrap());
        assert_eq!(out, [7; 4]);
    }

    #[test]
    fn bad_lengths_and_short_files_are_refused() {
        let f = file(4096);
        assert!(Mapping::shared_rw(&f, 0, 0).is_err());
        assert!(Mapping::shared_rw(&f, 100, 0).is_err());
        assert!(Mapping::shared_rw(&f, 2 * 4096, 0).is_err());
        assert!(Mapping::shared_rw(&f, 4096, 3 * 4096).is_err());
    }

    #[test]
    fn inaccessible_mappings_give_no_spans_and_ranges_are_checked() {
        let f = file(4096);
        let none = Arc::new(Mapping::shared_no_access(&f, 4096, 0).unwrap());
        assert_eq!(none.access(), Access::NoAccess);
        assert!(RawSpan::of_mapping(&none, 0, 1).is_none());
        let rw = Arc::new(Mapping::shared_rw(&f, 4096, 0).unwrap());
        assert!(RawSpan::of_mapping(&rw, 4000, 96).is_some());
        assert!(RawSpan::of_mapping(&rw, 4000, 97).is_none());
        assert!(RawSpan::of_mapping(&rw, usize::MAX, 2).is_none());
    }

    #[test]
    fn atomic_words_are_checked_and_shared_between_views() {
        use std::sync::atomic::Ordering;
        let f = file(4096);
        let a = Mapping::shared_rw(&f, 4096, 0).unwrap();
        let b = Mapping::shared_rw(&f, 4096, 0).unwrap();
        a.atomic_u32(4092).unwrap().store(0xdead_beef, Ordering::Release);
        assert_eq!(b.atomic_u32(4092).unwrap().load(Ordering::Acquire), 0xdead_beef);
        assert!(a.atomic_u32(4093).is_none(), "unaligned");
        assert!(a.atomic_u32(4096).is_none(), "out of bounds");
        assert!(a.atomic_u32(usize::MAX - 3).is_none(), "overflow");
        let none = Mapping::shared_no_access(&f, 4096, 0).unwrap();
        assert!(none.atomic_u32(0).is_none(), "inaccessible");
    }

    #[test]
    fn a_span_keeps_its_mapping_alive() {
        let f = file(4096);
        let m = Arc::new(Mapping::shared_rw(&f, 4096, 0).unwrap());
        let span = RawSpan::of_mapping(&m, 0, 16).unwrap();
        drop(m);
        span.fill(1); // would fault if the mapping had been unmapped
        let mut out = [0u8; 16];
        // SAFETY: `out` is a live local buffer of 16 bytes.
        unsafe { RawSpan::new(out.as_mut_ptr() as usize, 16) }.copy_from(&span);
        assert_eq!(out, [1; 16]);
    }
}
