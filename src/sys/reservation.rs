//! Reserved address space: a range of the process's addresses that nothing may use and no
//! access may touch (`PROT_NONE`, no memory behind it), into which files are mapped later at
//! chosen offsets (`aclrtReserveMemAddress` / `aclrtMapMem`).
//!
//! A [`Reservation`] owns its whole range for as long as it lives: [`Reservation::map_file`]
//! replaces part of it with a shared mapping of a [`MemFd`] (`MAP_FIXED`, which is atomic and
//! cannot touch anything outside the range), [`Reservation::unmap`] puts inaccessible address
//! space back (again `MAP_FIXED`, so the addresses are never free for another `mmap` to take),
//! and dropping it unmaps everything. Nothing in the library dereferences these addresses:
//! the runtime reaches the bytes through its own [`Mapping`](super::mapping::Mapping)s of the
//! same files (each one a reservation of its own with one file mapped over all of it), so a
//! reservation holds integers, not pointers.

use std::ffi::c_void;
use std::io;

use rustix::io::Errno;
use rustix::mm;

use super::memfd::MemFd;
use super::page_size;

/// What the process's own code may do with a mapped part of a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    NoAccess,
    Read,
    ReadWrite,
}

impl Protection {
    fn prot(self) -> mm::ProtFlags {
        match self {
            Protection::NoAccess => mm::ProtFlags::empty(),
            Protection::Read => mm::ProtFlags::READ,
            Protection::ReadWrite => mm::ProtFlags::READ | mm::ProtFlags::WRITE,
        }
    }

    fn mprotect(self) -> mm::MprotectFlags {
        match self {
            Protection::NoAccess => mm::MprotectFlags::empty(),
            Protection::Read => mm::MprotectFlags::READ,
            Protection::ReadWrite => mm::MprotectFlags::READ | mm::MprotectFlags::WRITE,
        }
    }
}

/// A reserved range of addresses, unmapped on drop.
#[derive(Debug)]
pub struct Reservation {
    addr: usize,
    len: usize,
}

fn invalid(why: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

impl Reservation {
    /// Reserves `len` bytes (whole pages) at an address aligned to `align` (a power of two;
    /// at least the page size is always given). Reserving costs address space only: no memory
    /// is committed (`MAP_NORESERVE`).
    pub fn new(len: usize, align: usize) -> io::Result<Reservation> {
        let page = page_size();
        let align = align.max(page);
        if len == 0 || len % page != 0 || !align.is_power_of_two() {
            return Err(invalid("a reservation is a positive number of pages, aligned to a power of two"));
        }
        let over = len.checked_add(align - page).ok_or_else(|| invalid("reservation too large"))?;
        let base = anonymous_none(0, over, mm::MapFlags::empty())?;
        let aligned = base.next_multiple_of(align);
        let head = aligned - base;
        let tail = over - head - len;
        // SAFETY: the slack before and after [aligned, aligned + len) is the rest of the range
        // just reserved, which nothing else knows of; both parts are whole pages.
        unsafe {
            if head > 0 {
                let _ = mm::munmap(base as *mut c_void, head);
            }
            if tail > 0 {
                let _ = mm::munmap((aligned + len) as *mut c_void, tail);
            }
        }
        Ok(Reservation { addr: aligned, len })
    }

    /// Reserves `len` bytes exactly at `addr` (page aligned), failing with `AlreadyExists` if
    /// any of those addresses is in use: an existing mapping is never replaced.
    pub fn at(addr: usize, len: usize) -> io::Result<Reservation> {
        let page = page_size();
        if len == 0 || len % page != 0 || addr == 0 || addr % page != 0 || addr.checked_add(len).is_none() {
            return Err(invalid(
                "a fixed reservation is a positive number of pages at a page-aligned address",
            ));
        }
        let got = anonymous_none(addr, len, mm::MapFlags::FIXED_NOREPLACE)?;
        if got != addr {
            // Kernels before 4.17 ignore MAP_FIXED_NOREPLACE and treat the address as a hint.
            // SAFETY: the kernel just gave us this range; nothing else refers to it.
            let _ = unsafe { mm::munmap(got as *mut c_void, len) };
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "the requested addresses are in use"));
        }
        Ok(Reservation { addr, len })
    }

    pub fn addr(&self) -> usize {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true (reservations are at least a page); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn check(&self, offset: usize, len: usize) -> io::Result<usize> {
        let page = page_size();
        let end = offset.checked_add(len).ok_or_else(|| invalid("range overflows"))?;
        if len == 0 || offset % page != 0 || len % page != 0 || end > self.len {
            return Err(invalid("the range is not whole pages inside the reservation"));
        }
        Ok(self.addr + offset)
    }

    /// Maps `len` bytes of `file` from `file_offset` shared at `offset` of the reservation,
    /// with protection `prot`, replacing what was there. The file must be at least that long
    /// (checked: mapping past its end would turn accesses into SIGBUS).
    pub fn map_file(
        &self,
        offset: usize,
        len: usize,
        file: &MemFd,
        file_offset: u64,
        prot: Protection,
    ) -> io::Result<()> {
        let at = self.check(offset, len)?;
        if file_offset % page_size() as u64 != 0 {
            return Err(invalid("the file offset is not a whole number of pages"));
        }
        if file.size()? < file_offset.saturating_add(len as u64) {
            return Err(invalid("file is shorter than the mapping"));
        }
        if i64::try_from(file_offset).is_err() {
            return Err(invalid("file offset too large"));
        }
        // SAFETY: [at, at + len) lies inside this reservation (checked), which we own; nothing
        // in the library dereferences it, and MAP_FIXED replaces exactly that range.
        unsafe {
            mm::mmap(
                at as *mut c_void,
                len,
                prot.prot(),
                mm::MapFlags::SHARED | mm::MapFlags::FIXED,
                file,
                file_offset,
            )
        }?;
        Ok(())
    }

    /// Puts inaccessible, uncommitted address space back over `[offset, offset + len)`: the
    /// file's pages are no longer reachable there, and the addresses stay reserved.
    pub fn unmap(&self, offset: usize, len: usize) -> io::Result<()> {
        let at = self.check(offset, len)?;
        anonymous_none(at, len, mm::MapFlags::FIXED).map(|_| ())
    }

    /// Changes what the process's own code may do with `[offset, offset + len)`.
    pub fn protect(&self, offset: usize, len: usize, prot: Protection) -> io::Result<()> {
        let at = self.check(offset, len)?;
        // SAFETY: the range lies inside this reservation, which we own; mprotect only changes
        // which accesses fault, and nothing in the library dereferences these addresses.
        unsafe { mm::mprotect(at as *mut c_void, len, prot.mprotect()) }.map_err(io::Error::from)
    }
}

/// An anonymous, inaccessible, uncommitted mapping of `len` bytes at `addr` (0: anywhere)
/// with the extra mmap flags `fixed`; its address.
fn anonymous_none(addr: usize, len: usize, fixed: mm::MapFlags) -> io::Result<usize> {
    // SAFETY: with `fixed` empty the kernel picks free addresses; with MAP_FIXED_NOREPLACE it
    // never replaces a mapping; with MAP_FIXED the callers pass only ranges of their own
    // reservation.
    let got = unsafe {
        mm::mmap_anonymous(
            addr as *mut c_void,
            len,
            mm::ProtFlags::empty(),
            mm::MapFlags::PRIVATE | mm::MapFlags::NORESERVE | fixed,
        )
    };
    match got {
        Ok(p) => Ok(p as usize),
        Err(Errno::EXIST) => {
            Err(io::Error::new(io::ErrorKind::AlreadyExists, "the requested addresses are in use"))
        }
        Err(e) => Err(e.into()),
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the whole range is ours. The library dereferences a reservation only when it
        // is the range of a [`Mapping`](super::mapping::Mapping), which owns it privately and
        // is kept alive by every RawSpan into it (an Arc); other reservations are never
        // dereferenced (the runtime reaches their files through mappings of its own).
        let _ = unsafe { mm::munmap(self.addr as *mut c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::mapping::Mapping;
    use crate::sys::span::RawSpan;
    use std::sync::Arc;

    #[test]
    fn reservations_are_aligned_and_fixed_ones_never_replace() {
        let page = page_size();
        let r = Reservation::new(4 * page, 2 << 20).unwrap();
        assert_eq!(r.addr() % (2 << 20), 0);
        let taken = Reservation::at(r.addr() + page, page).unwrap_err();
        assert_eq!(taken.kind(), io::ErrorKind::AlreadyExists);
        let addr = r.addr();
        drop(r);
        let again = Reservation::at(addr, 4 * page).unwrap();
        assert_eq!(again.addr(), addr);
        assert!(Reservation::new(0, 0).is_err());
        assert!(Reservation::new(page + 1, 0).is_err());
    }

    #[test]
    fn a_mapped_file_shares_its_bytes_and_unmapping_keeps_the_addresses() {
        let page = page_size();
        let f = MemFd::create("ascendless-test", 2 * page).unwrap();
        let r = Reservation::new(8 * page, 0).unwrap();
        r.map_file(2 * page, 2 * page, &f, 0, Protection::ReadWrite).unwrap();
        let view = Arc::new(Mapping::shared_rw(&f, 2 * page, 0).unwrap());
        RawSpan::of_mapping(&view, 10, 4).unwrap().fill(9);
        // SAFETY: the range was just mapped read-write and stays mapped during the read.
        let seen = unsafe { RawSpan::new(r.addr() + 2 * page + 10, 4) };
        let mut out = [0u8; 4];
        seen.read_into(&mut out);
        assert_eq!(out, [9; 4]);
        r.protect(2 * page, 2 * page, Protection::Read).unwrap();
        r.unmap(2 * page, 2 * page).unwrap();
        assert_eq!(
            Reservation::at(r.addr() + 2 * page, page).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(r.map_file(7 * page, 2 * page, &f, 0, Protection::ReadWrite).is_err(), "past the end");
        assert!(r.map_file(0, 3 * page, &f, 0, Protection::ReadWrite).is_err(), "file too short");
    }
}
