//! A same-host copy cut into pieces that several threads take in turn: the thread running the
//! call, a helper thread of a large TransferSync, and the caller's threads polling a
//! TransferAsync request in a tight loop (`Requests::poll`), whose CPU would otherwise spin.
//!
//! A thread takes the next piece with one atomic add and copies it; nothing is guessed about
//! who gets a CPU. The thread that runs the call copies until no piece is left, then waits for
//! the pieces others took ([`Pieces::wait_landed`]): nobody writes the call's memory once the
//! call has returned or its request has ended.

use std::borrow::Borrow;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::sys::span::RawSpan;
use crate::sys::stream_copy;

/// The copy: each pair's destination from its source, in order, cut into `piece`-byte pieces
/// of the pairs' bytes taken end to end. The spans are borrowed (`&RawSpan`: the threads of one
/// call) or owned (`RawSpan`: a request's, which polls hold beyond the worker's frame; owning
/// costs a span per descriptor, which a TransferSync of 4096 small ones would notice).
pub struct Pieces<S = RawSpan> {
    pairs: Vec<(S, S)>,
    /// Where each pair starts in the copy's bytes, so a piece finds its first pair at once
    /// (4096 small descriptors are a common call).
    starts: Vec<usize>,
    total: usize,
    piece: usize,
    /// Written around the cache ([`stream_copy`]): for copies much larger than the caches.
    stream: bool,
    /// The next piece to take (past the last: none left).
    next: AtomicUsize,
    /// Pieces copied (or abandoned by a panic): all taken have landed when it equals those
    /// taken.
    landed: AtomicUsize,
}

impl<S: Borrow<RawSpan>> Pieces<S> {
    /// The copy of `pairs` (`dst`, `src`, of equal lengths), in pieces of `piece` bytes.
    pub fn new(pairs: Vec<(S, S)>, piece: usize, stream: bool) -> Pieces<S> {
        let mut total = 0;
        let starts = pairs
            .iter()
            .map(|(dst, _)| {
                let start = total;
                total += dst.borrow().len();
                start
            })
            .collect();
        Pieces {
            pairs,
            starts,
            total,
            piece: piece.max(1),
            stream,
            next: AtomicUsize::new(0),
            landed: AtomicUsize::new(0),
        }
    }

    /// The bytes of the copy.
    pub fn total(&self) -> usize {
        self.total
    }

    fn count(&self) -> usize {
        self.total.div_ceil(self.piece)
    }

    /// Whether a piece is left to take.
    pub fn left(&self) -> bool {
        self.next.load(Ordering::Relaxed) < self.count()
    }

    /// Copies the next pieces until none is left or at least `budget` bytes have been copied;
    /// the bytes copied.
    pub fn take(&self, budget: usize) -> usize {
        let mut copied = 0;
        while copied < budget {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            if n >= self.count() {
                break;
            }
            // Counted landed even if the copy panics (a bug): the waiting thread must not spin
            // for ever on a piece nobody is copying.
            let _landed = Landed(&self.landed);
            let from = n * self.piece;
            let to = self.total.min(from + self.piece);
            self.copy(from, to);
            copied += to - from;
        }
        copied
    }

    /// Waits until every piece taken has landed: what another thread copies takes
    /// microseconds, so this spins, yielding the CPU to that thread now and then.
    pub fn wait_landed(&self) {
        let taken = self.next.load(Ordering::Acquire).min(self.count());
        let mut spins = 0u32;
        while self.landed.load(Ordering::Acquire) < taken {
            spins += 1;
            if spins % 64 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Copies bytes `[from, to)` of the copy.
    fn copy(&self, from: usize, to: usize) {
        let first = self.starts.partition_point(|&s| s <= from) - 1;
        let mut at = self.starts[first];
        for (dst, src) in &self.pairs[first..] {
            let (dst, src) = (dst.borrow(), src.borrow());
            let len = dst.len();
            let (start, end) = (from.max(at), to.min(at + len));
            if start < end {
                if self.stream {
                    dst.stream_part_from(start - at, src, start - at, end - start);
                } else {
                    dst.copy_part_from(start - at, src, start - at, end - start);
                }
            }
            at += len;
            if at >= to {
                break;
            }
        }
        if self.stream {
            stream_copy::fence();
        }
    }
}

/// Counts a piece landed when dropped (after its copy, or as its copy unwinds).
struct Landed<'a>(&'a AtomicUsize);

impl Drop for Landed<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sys::mapping::Mapping;
    use crate::sys::memfd::MemFd;

    const PIECE: usize = 64 << 10;

    fn mapping(len: usize) -> Arc<Mapping> {
        let len = len.next_multiple_of(1 << 12);
        Arc::new(Mapping::shared_rw(&MemFd::create("pieces-test", len).unwrap(), len, 1).unwrap())
    }

    /// Pieces cross pair boundaries, pairs shorter and longer than a piece, empty ones: every
    /// byte arrives once, at its place, whichever thread took its piece, with and without
    /// streaming stores.
    #[test]
    fn every_byte_of_every_pair_lands_at_its_place_whoever_takes_the_pieces() {
        let lens = [0, 3 * PIECE + 17, 5, 0, PIECE, 4096, 2 * PIECE - 1, 1, 0];
        let total: usize = lens.iter().sum();
        for (stream, threads) in [(false, 1), (false, 3), (true, 3)] {
            let (src, dst) = (mapping(total), mapping(total));
            let bytes: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
            RawSpan::of_mapping(&src, 0, total).unwrap().write_slice(&bytes);
            // Each pair copies its source range into the mirror place of the destination, so
            // a byte copied by the wrong pair or at the wrong offset shows.
            let mut at = 0;
            let pairs = lens
                .iter()
                .map(|&len| {
                    let d = RawSpan::of_mapping(&dst, total - at - len, len).unwrap();
                    let s = RawSpan::of_mapping(&src, at, len).unwrap();
                    at += len;
                    (d, s)
                })
                .collect();
            let p = Pieces::new(pairs, PIECE, stream);
            assert_eq!(p.total(), total);
            std::thread::scope(|s| {
                for _ in 1..threads {
                    s.spawn(|| p.take(usize::MAX));
                }
                p.take(usize::MAX);
                p.wait_landed();
            });
            assert!(!p.left());
            let mut out = vec![0u8; total];
            RawSpan::of_mapping(&dst, 0, total).unwrap().read_into(&mut out);
            let mut expected = Vec::with_capacity(total);
            let mut end = total;
            for &len in lens.iter().rev() {
                expected.extend_from_slice(&bytes[end - len..end]);
                end -= len;
            }
            // `expected` lists the sources last pair first, which is the destination's order.
            assert!(out == expected, "stream {stream}, {threads} threads: bytes misplaced");
        }
    }

    /// A budget stops a thread after the piece that reaches it, leaving the rest to others.
    #[test]
    fn a_budget_stops_after_the_piece_that_reaches_it() {
        let total = 4 * PIECE;
        let (src, dst) = (mapping(total), mapping(total));
        let pairs = vec![(
            RawSpan::of_mapping(&dst, 0, total).unwrap(),
            RawSpan::of_mapping(&src, 0, total).unwrap(),
        )];
        let p = Pieces::new(pairs, PIECE, false);
        assert_eq!(p.take(1), PIECE);
        assert_eq!(p.take(PIECE + 1), 2 * PIECE);
        assert!(p.left());
        assert_eq!(p.take(usize::MAX), PIECE);
        assert!(!p.left());
        assert_eq!(p.take(usize::MAX), 0);
        p.wait_landed();
    }
}
