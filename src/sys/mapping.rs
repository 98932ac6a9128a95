//! Shared mappings of a [`MemFd`] at a chosen alignment.
//!
//! `mmap` only promises page alignment, but huge-page allocation policies promise 2 MiB. To get
//! an aligned address without guessing, a mapping is a [`Reservation`] at that alignment (which
//! reserves `len + align` bytes and gives back the slack on either side) with the file mapped
//! over all of it (`MAP_FIXED`, which atomically replaces the reservation's pages).

use std::ffi::c_void;
use std::io;
use std::sync::atomic::AtomicU32;

use rustix::mm;

use super::memfd::MemFd;
use super::page_size;
use super::reservation::{Protection, Reservation};

/// Size (and alignment) of a transparent huge page on x86-64 and arm64.
pub const HUGE_PAGE: usize = 2 << 20;

/// What the process may do with a mapping's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// Any load or store faults (`PROT_NONE`): strict mode's user view of device memory.
    NoAccess,
}

/// A mapped region, unmapped on drop (by the reservation it owns).
///
/// The address is kept as an integer, not a pointer: nothing dereferences it except through a
/// [`RawSpan`](super::span::RawSpan) made by `RawSpan::of_mapping`, so the mapping is plainly
/// `Send` and `Sync`.
#[derive(Debug)]
pub struct Mapping {
    range: Reservation,
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
            let _ = unsafe { mm::madvise(m.addr() as *mut c_void, len, mm::Advice::LinuxHugepage) };
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
        let prot = match access {
            Access::ReadWrite => Protection::ReadWrite,
            Access::NoAccess => Protection::NoAccess,
        };
        let range = Reservation::new(len, align)?;
        // Checks that the file is long enough: mapping past its end would turn accesses into
        // SIGBUS (matters for descriptors received from other processes).
        range.map_file(0, len, file, offset, prot)?;
        Ok(Mapping { range, access })
    }

    pub fn addr(&self) -> usize {
        self.range.addr()
    }

    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Never true (mappings are at least a page); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
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
        if self.access != Access::ReadWrite || end > self.len() || offset % 4 != 0 {
            return None;
        }
        // SAFETY: [addr + offset, addr + offset + 4) lies inside this live read-write shared
        // mapping, which stays mapped as long as `&self` is borrowed (only dropping the mapping,
        // and with it the reservation it owns, unmaps it; nothing else can reach that); the
        // address is 4-aligned (mappings are page-aligned, offset % 4 == 0), which is
        // AtomicU32's alignment, and any bit pattern is a valid u32. Other processes and views
        // may change the bytes concurrently, which is exactly what atomics permit.
        Some(unsafe { AtomicU32::from_ptr((self.addr() + offset) as *mut u32) })
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
