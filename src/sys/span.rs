//! Byte ranges the safe core may read and write without `unsafe`.
//!
//! The core plans copies with plain addresses (integers) and moves bytes only through
//! [`RawSpan`]s. A span is made in one of two ways, and each says who vouches for its memory:
//! - [`RawSpan::of_mapping`] (safe): a range of one of the library's
//!   own read-write mappings; the span holds the mapping, so the memory cannot be unmapped under
//!   it, even by a free racing with a queued copy;
//! - [`RawSpan::new`] / [`HostRange::vouch`] (`unsafe`): user memory, vouched for by the FFI
//!   layer on the strength of the C caller's contract (a valid buffer of `count` bytes).

use std::sync::Arc;

use super::mapping::{Access, Mapping};
use super::stream_copy;

/// A byte range its maker promises is valid (see the module documentation).
///
/// Not `Clone`: a span cannot be duplicated beyond what its maker vouched for. The address is
/// an integer and nothing in the span is a reference, so it is `Send` and `Sync` by
/// construction; the constructors' contracts say the memory is valid from any thread.
#[derive(Debug)]
pub struct RawSpan {
    addr: usize,
    len: usize,
    writable: bool,
    /// The library mapping the range lies in, kept alive as long as the span; `None` for user
    /// memory, whose lifetime is the caller's promise.
    _mapping: Option<Arc<Mapping>>,
}

impl RawSpan {
    /// A span of `len` bytes at `addr` that may be read and written.
    ///
    /// # Safety
    /// For as long as the returned span exists, `[addr, addr + len)` must be memory that any
    /// thread may read and write (as `memcpy` would), and no Rust reference may point into it.
    /// Concurrent access by C code is that code's own race, as with the vendor's runtime.
    pub unsafe fn new(addr: usize, len: usize) -> RawSpan {
        Self::checked(addr, len, true, None)
    }

    /// A span of `len` bytes at `addr` that is only ever read (the source of a copy, which may
    /// be constant data).
    ///
    /// # Safety
    /// As [`RawSpan::new`], but the memory need only be readable.
    pub unsafe fn new_read_only(addr: usize, len: usize) -> RawSpan {
        Self::checked(addr, len, false, None)
    }

    /// The bytes `[offset, offset + len)` of a read-write mapping, as a span that keeps the
    /// mapping alive for as long as it exists (so a queued copy survives a racing free).
    /// `None` if the range does not fit or the mapping is inaccessible.
    pub fn of_mapping(mapping: &Arc<Mapping>, offset: usize, len: usize) -> Option<RawSpan> {
        let end = offset.checked_add(len)?;
        if mapping.access() != Access::ReadWrite || end > mapping.len() {
            return None;
        }
        Some(Self::checked(mapping.addr() + offset, len, true, Some(Arc::clone(mapping))))
    }

    fn checked(addr: usize, len: usize, writable: bool, mapping: Option<Arc<Mapping>>) -> RawSpan {
        assert!(len == 0 || addr != 0, "a non-empty span at address 0");
        assert!(addr.checked_add(len).is_some(), "a span wrapping the address space");
        RawSpan { addr, len, writable, _mapping: mapping }
    }

    pub fn addr(&self) -> usize {
        self.addr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Copies all of `src` into this span. Panics if the lengths differ or this span is
    /// read-only (bugs in the caller, not user errors). Overlapping spans are copied as
    /// `memmove` does, though the memory registry refuses overlapping copies before this.
    pub fn copy_from(&self, src: &RawSpan) {
        assert_eq!(self.len, src.len, "copy between spans of different lengths");
        assert!(self.writable, "copy into a read-only span");
        if self.len == 0 {
            return;
        }
        // SAFETY: by the constructors' contracts `src` is readable and `self` writable for
        // `len` bytes while the spans exist (library mappings are held alive by the spans);
        // both are non-NULL (checked at construction) and u8 needs no alignment. ptr::copy is
        // memmove, so overlap is defined.
        unsafe { std::ptr::copy(src.addr as *const u8, self.addr as *mut u8, self.len) };
    }

    /// The bytes `[offset, offset + len)` of this span, as a span of their own (keeping the same
    /// mapping alive, with the same promise and writability). `None` if they do not fit.
    pub fn sub(&self, offset: usize, len: usize) -> Option<RawSpan> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        Some(Self::checked(self.addr + offset, len, self.writable, self._mapping.clone()))
    }

    /// Copies `len` bytes of `src` from `src_offset` into this span at `offset` (part of a
    /// copy, e.g. one thread's half). Panics if a range does not fit or this span is read-only.
    pub fn copy_part_from(&self, offset: usize, src: &RawSpan, src_offset: usize, len: usize) {
        let (from, to) = self.part(offset, src, src_offset, len);
        if len == 0 {
            return;
        }
        // SAFETY: as `copy_from`, on sub-ranges checked to lie inside both spans.
        unsafe { std::ptr::copy(from as *const u8, to as *mut u8, len) };
    }

    /// Combines `len` bytes of `src` from `src_offset` into this span at `offset`: `f` gets
    /// the destination and the source as slices (a reduction, `dst = dst op src`). Panics as
    /// [`RawSpan::copy_part_from`]. Overlapping ranges are combined from a copy of the source.
    pub fn combine_part_from(
        &self,
        offset: usize,
        src: &RawSpan,
        src_offset: usize,
        len: usize,
        f: impl FnOnce(&mut [u8], &[u8]),
    ) {
        let (from, to) = self.part(offset, src, src_offset, len);
        if len == 0 {
            return;
        }
        if from.abs_diff(to) < len {
            let mut copy = vec![0u8; len];
            // SAFETY: `from` lies inside `src` (checked by `part`), readable by its contract;
            // `copy` is a fresh vector of `len` bytes.
            unsafe { std::ptr::copy(from as *const u8, copy.as_mut_ptr(), len) };
            // SAFETY: `to` lies inside this writable span (checked); no Rust reference points
            // into it (constructors' contracts), and `copy` is a separate allocation.
            let dst = unsafe { std::slice::from_raw_parts_mut(to as *mut u8, len) };
            return f(dst, &copy);
        }
        // SAFETY: both ranges lie inside their spans (checked by `part`), which the
        // constructors' contracts make valid with no Rust reference into them; they do not
        // overlap (checked just above), so the shared and the exclusive slice are disjoint.
        // Both slices live only for the call of `f`.
        let (dst, from) = unsafe {
            (
                std::slice::from_raw_parts_mut(to as *mut u8, len),
                std::slice::from_raw_parts(from as *const u8, len),
            )
        };
        f(dst, from)
    }

    /// As [`RawSpan::copy_part_from`], writing around the cache ([`stream_copy`]): for the
    /// parts of a copy much larger than the caches. The bytes are ordered before this
    /// thread's later stores only after [`stream_copy::fence`].
    pub fn stream_part_from(&self, offset: usize, src: &RawSpan, src_offset: usize, len: usize) {
        let (from, to) = self.part(offset, src, src_offset, len);
        if from.abs_diff(to) < len {
            // Overlapping (the registry refuses such copies before this): memmove's order.
            return self.copy_part_from(offset, src, src_offset, len);
        }
        // SAFETY: sub-ranges checked to lie inside both spans, which the constructors'
        // contracts make readable (`src`) and writable (`self`); checked just above not to
        // overlap.
        unsafe { stream_copy::copy(to as *mut u8, from as *const u8, len) };
    }

    /// The addresses of a part copy's source and destination, after checking that both
    /// ranges fit and this span is writable (panics otherwise: bugs in the caller).
    fn part(&self, offset: usize, src: &RawSpan, src_offset: usize, len: usize) -> (usize, usize) {
        assert!(self.writable, "copy into a read-only span");
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.len), "copy past the end of the span");
        assert!(src_offset.checked_add(len).is_some_and(|e| e <= src.len), "copy past the end of the source");
        (src.addr + src_offset, self.addr + offset)
    }

    /// Copies `data` (exactly this span's length) into the span. Panics if the lengths differ
    /// or the span is read-only.
    pub fn write_slice(&self, data: &[u8]) {
        assert_eq!(self.len, data.len(), "write of a slice of another length");
        assert!(self.writable, "write into a read-only span");
        if self.len > 0 {
            // SAFETY: the span is writable for `len` bytes (constructors' contracts) and, by
            // the same contracts, no Rust reference (so not `data`) points into it; `data` is a
            // valid slice of that length.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.addr as *mut u8, self.len) };
        }
    }

    /// Copies `data` into the span at `offset`. Panics if it does not fit or the span is
    /// read-only.
    pub fn write_at(&self, offset: usize, data: &[u8]) {
        assert!(
            offset.checked_add(data.len()).is_some_and(|e| e <= self.len),
            "write past the end of the span"
        );
        assert!(self.writable, "write into a read-only span");
        if !data.is_empty() {
            // SAFETY: the range lies inside the span (asserted), which is writable with no Rust
            // reference into it (constructors' contracts), so not `data`.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), (self.addr + offset) as *mut u8, data.len())
            };
        }
    }

    /// Copies the span's bytes into `out` (exactly this span's length). Panics if the lengths
    /// differ.
    pub fn read_into(&self, out: &mut [u8]) {
        assert_eq!(self.len, out.len(), "read into a slice of another length");
        if self.len > 0 {
            // SAFETY: the span is readable for `len` bytes and no Rust reference (so not
            // `out`) points into it; `out` is a valid, exclusively borrowed slice.
            unsafe { std::ptr::copy_nonoverlapping(self.addr as *const u8, out.as_mut_ptr(), self.len) };
        }
    }

    /// Sets every byte of this span to `byte`. Panics if the span is read-only.
    pub fn fill(&self, byte: u8) {
        assert!(self.writable, "fill of a read-only span");
        if self.len == 0 {
            return;
        }
        // SAFETY: writable for `len` bytes by the constructors' contracts; non-NULL.
        unsafe { std::ptr::write_bytes(self.addr as *mut u8, byte, self.len) };
    }
}

/// A range of user memory the core wants to copy to or from, waiting for the FFI layer to vouch
/// for it. `writable` says whether the copy writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostRange {
    pub addr: usize,
    pub len: usize,
    pub writable: bool,
}

impl HostRange {
    /// Turns the range into a span (read-write or read-only, as `writable` says).
    ///
    /// # Safety
    /// As [`RawSpan::new`] (or [`RawSpan::new_read_only`] when `writable` is false): the memory
    /// stays valid for as long as the span, or any copy plan holding it, exists.
    pub unsafe fn vouch(self) -> RawSpan {
        if self.writable {
            // SAFETY: forwarded contract.
            unsafe { RawSpan::new(self.addr, self.len) }
        } else {
            // SAFETY: forwarded contract.
            unsafe { RawSpan::new_read_only(self.addr, self.len) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span_of(buf: &mut [u8]) -> RawSpan {
        // SAFETY: each test keeps `buf` alive and unborrowed while the span is used.
        unsafe { RawSpan::new(buf.as_mut_ptr() as usize, buf.len()) }
    }

    #[test]
    fn copy_and_fill_move_bytes() {
        let mut a = [1u8, 2, 3, 4];
        let mut b = [0u8; 4];
        span_of(&mut b).copy_from(&span_of(&mut a));
        assert_eq!(b, [1, 2, 3, 4]);
        span_of(&mut a).fill(9);
        assert_eq!(a, [9; 4]);
    }

    #[test]
    fn overlapping_copies_behave_as_memmove() {
        let mut buf = [1u8, 2, 3, 4, 5, 6];
        let base = buf.as_mut_ptr() as usize;
        // SAFETY: both ranges lie inside `buf`, alive and unborrowed while used.
        let (dst, src) = unsafe { (RawSpan::new(base + 2, 4), RawSpan::new(base, 4)) };
        dst.copy_from(&src);
        assert_eq!(buf, [1, 2, 1, 2, 3, 4]);
    }

    #[test]
    fn slices_go_in_and_out() {
        let mut buf = [0u8; 3];
        let span = span_of(&mut buf);
        span.write_slice(&[4, 5, 6]);
        let mut out = [0u8; 3];
        span.read_into(&mut out);
        assert_eq!(out, [4, 5, 6]);
        span.write_at(1, &[9, 9]);
        span.read_into(&mut out);
        assert_eq!(out, [4, 9, 9]);
    }

    #[test]
    fn empty_spans_do_nothing() {
        // SAFETY: an empty span is never dereferenced.
        let (a, b) = unsafe { (RawSpan::new(0, 0), RawSpan::new_read_only(0, 0)) };
        a.copy_from(&b);
        a.fill(1);
        assert!(a.is_empty());
    }

    #[test]
    #[should_panic(expected = "read-only")]
    fn read_only_spans_are_never_written() {
        let mut buf = [0u8; 2];
        // SAFETY: `buf` is alive; the write is refused before any access.
        unsafe { HostRange { addr: buf.as_mut_ptr() as usize, len: 2, writable: false }.vouch() }.fill(1);
    }

    #[test]
    #[should_panic(expected = "different lengths")]
    fn lengths_must_match() {
        let mut a = [0u8; 2];
        let mut b = [0u8; 3];
        span_of(&mut a).copy_from(&span_of(&mut b));
    }

    #[test]
    fn spans_can_cross_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<RawSpan>();
    }
}
