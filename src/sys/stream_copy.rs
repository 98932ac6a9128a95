//! Large copies that write around the cache (non-temporal stores).
//!
//! A plain store to a line that is not in the cache first reads the line from memory (the
//! read-for-ownership), then writes it back when it is evicted: a copy much larger than the
//! caches moves three bytes over the memory bus for each byte copied. A non-temporal store
//! writes the whole line without reading it, so the same copy moves two. glibc switches to
//! such stores only above a threshold taken from the last-level cache, which in a VM is the
//! host's (260 MiB here), so its memcpy never does for the transfers an engine makes.
//! Measured on this 2-CPU VM (C, memfd buffers like the runtime's, medians of 15): a 64 MiB
//! copy with 64-byte streaming stores 9.3 GB/s against glibc memcpy's 5.8; 32-byte stores 6.9,
//! 16-byte stores 6.4 (a store narrower than a line leaves the write-combining buffer half
//! full when it is flushed). So only 64-byte stores (AVX-512) stream; without them, off
//! x86-64, or built by a compiler older than 1.89 (whose AVX-512 intrinsics were unstable:
//! `build.rs` sets `streaming_stores`), the copy is a plain memcpy.
//!
//! The destination is written back to memory, not kept in this CPU's caches: right for a copy
//! much larger than them (another process reads it, or it would be evicted anyway), wrong for
//! a small one, which the callers keep on plain copies.

use std::sync::OnceLock;

/// Whether copies here stream (the CPU has 64-byte stores); read once.
pub fn streams() -> bool {
    static STREAMS: OnceLock<bool> = OnceLock::new();
    *STREAMS.get_or_init(|| {
        #[cfg(all(target_arch = "x86_64", streaming_stores))]
        {
            std::arch::is_x86_feature_detected!("avx512f")
        }
        #[cfg(not(all(target_arch = "x86_64", streaming_stores)))]
        {
            false
        }
    })
}

/// Copies `len` bytes from `src` to `dst`, the bulk with streaming stores when [`streams`].
/// Streaming stores are not ordered with the thread's later stores: call [`fence`] after the
/// last copy, before anything tells another thread or process that the bytes are there. (One
/// fence per copy would wait for every copy's stores to reach memory: 4096 copies of 4 KiB
/// were then slower than plain ones.)
///
/// # Safety
/// `src` must be readable and `dst` writable for `len` bytes, and the two ranges must not
/// overlap.
pub unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", streaming_stores))]
    if streams() {
        // SAFETY: the caller's promise, and `streams` says the CPU has AVX-512F.
        unsafe { copy_avx512(dst, src, len) };
        return;
    }
    // SAFETY: the caller's promise.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
}

/// Orders the streaming stores of this thread's earlier [`copy`]s before its later stores.
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    if streams() {
        // SAFETY: SSE, which every x86-64 CPU has; the fence only orders stores.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }
}

/// Plain copies up to the first 64-byte boundary of `dst` and after the last, 64-byte
/// streaming stores between (four lines per round while they last).
///
/// # Safety
/// As [`copy`]; the CPU must have AVX-512F.
#[cfg(all(target_arch = "x86_64", streaming_stores))]
#[target_feature(enable = "avx512f")]
#[allow(clippy::incompatible_msrv)] // `streaming_stores`: built by Rust 1.89 or later
unsafe fn copy_avx512(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_stream_si512};
    const LINE: usize = 64;
    let head = dst.align_offset(LINE).min(len);
    let body = (len - head) / LINE * LINE;
    // SAFETY: offsets stay inside `[0, len)` of both ranges, which the caller promises are
    // readable/writable and disjoint; `dst + head` is 64-byte aligned (as `align_offset`
    // computed, and `head + k * LINE` keeps it so), which streaming stores need; loads are
    // unaligned ones.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let (s, d) = (src.add(head), dst.add(head));
        let mut i = 0;
        while i + 4 * LINE <= body {
            let a = _mm512_loadu_si512(s.add(i) as *const __m512i);
            let b = _mm512_loadu_si512(s.add(i + LINE) as *const __m512i);
            let c = _mm512_loadu_si512(s.add(i + 2 * LINE) as *const __m512i);
            let e = _mm512_loadu_si512(s.add(i + 3 * LINE) as *const __m512i);
            _mm512_stream_si512(d.add(i) as *mut __m512i, a);
            _mm512_stream_si512(d.add(i + LINE) as *mut __m512i, b);
            _mm512_stream_si512(d.add(i + 2 * LINE) as *mut __m512i, c);
            _mm512_stream_si512(d.add(i + 3 * LINE) as *mut __m512i, e);
            i += 4 * LINE;
        }
        while i < body {
            let a = _mm512_loadu_si512(s.add(i) as *const __m512i);
            _mm512_stream_si512(d.add(i) as *mut __m512i, a);
            i += LINE;
        }
        std::ptr::copy_nonoverlapping(s.add(body), d.add(body), len - head - body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the line and round sizes, at every alignment of both ends, lands
    /// byte for byte, and nothing outside the destination range is touched.
    #[test]
    fn every_length_and_alignment_lands_exactly() {
        let src: Vec<u8> = (0..8192u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut dst = vec![0u8; 8192 + 256];
        let lens = (0..=300).chain([511, 512, 513, 1023, 4096, 4097, 6000]);
        for len in lens {
            for (so, doff) in [(0, 0), (1, 0), (0, 1), (13, 63), (63, 1), (64, 64), (7, 33)] {
                dst.fill(0xEE);
                // SAFETY: both ranges lie inside their vectors (offsets < 64, len <= 6000 of
                // 8192), and two vectors never overlap.
                unsafe { copy(dst.as_mut_ptr().add(doff), src.as_ptr().add(so), len) };
                fence();
                assert_eq!(&dst[doff..doff + len], &src[so..so + len], "len {len}, offsets {so}/{doff}");
                assert!(dst[..doff].iter().all(|&b| b == 0xEE), "written before, len {len}");
                assert!(dst[doff + len..].iter().all(|&b| b == 0xEE), "written after, len {len}");
            }
        }
    }
}
