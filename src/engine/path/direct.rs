//! The same-host paths of TransferSync, chosen per call before TCP:
//!
//! 1. **direct**: every remote range lies in the peer's shareable memory, mapped here: the
//!    caller's thread copies (no message, no system call). A call of at least [`SPLIT_MIN`]
//!    bytes is shared with one more thread, piece by piece (see [`copy_shared`]), and written
//!    around the cache ([`stream_copy`]: memory bandwidth is the limit, and a cached store
//!    first reads each line it writes): on this 2-CPU machine a 64 MiB copy then runs 2.5-2.8x
//!    as fast as a one-thread memcpy, 2.1-2.2x beside a busy thread; below a few MiB the thread
//!    start costs more than it saves, and the copy fits the caches.
//! 2. **kernel copy**: every remote range is registered memory of the peer that is not
//!    shareable (e.g. `malloc`): `process_vm_readv`/`process_vm_writev` on the peer's pid. If
//!    the kernel refuses (ptrace rules: `EPERM`), the link stops trying and TCP is used.
//! 3. otherwise `None`: the caller goes on with TCP (and the relay rule).
//!
//! Local ranges must be registered (an unregistered one keeps the call on TCP, where the relay
//! rule applies to the whole call). The peer's regions are held for reading during the copy,
//! so a REMOVE from the peer (its DeregisterMem) waits until the copy has ended.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::engine::conn::link::Link;
use crate::engine::path::tcp::{Local, TransferOp};
use crate::engine::wire::MemKind;
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sys::safe_copy::{PeerDirection, peer_copy};
use crate::sys::span::RawSpan;
use crate::sys::stream_copy;

/// Calls of at least this many bytes copy on two threads, with streaming stores (measured: see
/// `benches/adxl_shm.rs`).
pub const SPLIT_MIN: usize = 4 << 20;

/// What a thread of a shared copy takes at a time: small enough that the caller waits little
/// for a helper's last piece, large enough that taking one is nothing beside copying it.
const PIECE: usize = 256 << 10;

/// Bytes and calls per path, for `ascendless_engine_get_counters`.
#[derive(Debug, Default)]
pub struct Counters {
    pub direct_calls: AtomicU64,
    pub direct_bytes: AtomicU64,
    pub kernel_calls: AtomicU64,
    pub kernel_bytes: AtomicU64,
    pub tcp_calls: AtomicU64,
    pub tcp_bytes: AtomicU64,
    pub ucx_calls: AtomicU64,
    pub ucx_bytes: AtomicU64,
}

/// A snapshot of [`Counters`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CounterValues {
    pub direct_calls: u64,
    pub direct_bytes: u64,
    pub kernel_calls: u64,
    pub kernel_bytes: u64,
    pub tcp_calls: u64,
    pub tcp_bytes: u64,
    /// Calls and bytes moved as UCX puts and gets (the `ucx` build feature).
    pub ucx_calls: u64,
    pub ucx_bytes: u64,
}

impl Counters {
    pub fn get(&self) -> CounterValues {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CounterValues {
            direct_calls: r(&self.direct_calls),
            direct_bytes: r(&self.direct_bytes),
            kernel_calls: r(&self.kernel_calls),
            kernel_bytes: r(&self.kernel_bytes),
            tcp_calls: r(&self.tcp_calls),
            tcp_bytes: r(&self.tcp_bytes),
            ucx_calls: r(&self.ucx_calls),
            ucx_bytes: r(&self.ucx_bytes),
        }
    }

    fn count(calls: &AtomicU64, bytes: &AtomicU64, n: usize) {
        calls.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn tcp(&self, n: usize) {
        Self::count(&self.tcp_calls, &self.tcp_bytes, n);
    }

    #[cfg_attr(not(feature = "ucx"), allow(dead_code))] // used by the UCX transport only
    pub fn ucx(&self, n: usize) {
        Self::count(&self.ucx_calls, &self.ucx_bytes, n);
    }
}

/// CPUs this process may run on (read once).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Copies `total` bytes of `pairs` on the caller's thread and, with more than one CPU, one more,
/// each taking the next [`PIECE`] in turn until none is left. Nothing is guessed about the machine's load: a helper
/// that gets no CPU takes few pieces (or none) and the caller copies the rest, so the call is
/// never much slower than one thread; what it can lose is the helper's last piece, which the
/// caller must wait for (the helper may not write after the call has returned).
fn copy_shared(pairs: &[(&RawSpan, &RawSpan)], total: usize) {
    // Where each pair starts in the call's bytes, so a piece finds its first pair at once
    // (4096 small descriptors are a common call).
    let starts: Vec<usize> = pairs
        .iter()
        .scan(0, |at, (dst, _)| {
            let start = *at;
            *at += dst.len();
            Some(start)
        })
        .collect();
    let next = AtomicUsize::new(0);
    let take = || {
        loop {
            let from = next.fetch_add(1, Ordering::Relaxed).saturating_mul(PIECE);
            if from >= total {
                break;
            }
            let first = starts.partition_point(|&s| s <= from) - 1;
            copy_part(&pairs[first..], starts[first], from, total.min(from + PIECE));
        }
    };
    std::thread::scope(|s| {
        // A thread the system refuses (a limit reached) leaves the caller copying alone.
        if cores() > 1 {
            if let Err(e) = std::thread::Builder::new().name("adxl-copy".into()).spawn_scoped(s, take) {
                log::debug!(target: TARGET, "no second thread for a large copy ({e}): one thread copies");
            }
        }
        take();
    });
}

/// Copies bytes `[from, to)` of a call whose `pairs` (`dst` from `src`) start at byte `at`.
fn copy_part(pairs: &[(&RawSpan, &RawSpan)], mut at: usize, from: usize, to: usize) {
    for (dst, src) in pairs {
        let len = dst.len();
        let (start, end) = (from.max(at), to.min(at + len));
        if start < end {
            dst.stream_part_from(start - at, src, start - at, end - start);
        }
        at += len;
        if at >= to {
            break;
        }
    }
    stream_copy::fence();
}

/// Tries the same-host paths; `None` means "use TCP".
pub fn try_run(
    counters: &Counters,
    link: &Link,
    op: TransferOp,
    locals: &[Local],
) -> Option<EngineResult<()>> {
    let shm = link.shm()?;
    if !shm.alive() {
        return Some(Err(EngineError::new(
            ADXL_FAILED,
            format!("transfer with {}: the peer is gone (its same-host channel closed)", link.remote),
        )));
    }
    if locals.iter().any(|l| l.desc.local_kind == MemKind::Unregistered) {
        return None;
    }
    let regions = shm.regions();
    let total: usize = locals.iter().map(|l| l.span.len()).sum();
    let mut remote = Vec::with_capacity(locals.len());
    let mut last = None;
    for l in locals {
        match regions.span(&link.remote, l.desc.remote_addr as usize, l.span.len(), &mut last) {
            Some(s) => remote.push(s),
            None => break,
        }
    }
    if remote.len() == locals.len() {
        let pairs: Vec<(&RawSpan, &RawSpan)> = locals
            .iter()
            .zip(&remote)
            .map(|(l, r)| match op {
                TransferOp::Read => (&l.span, r),
                TransferOp::Write => (r, &l.span),
            })
            .collect();
        if total >= SPLIT_MIN {
            copy_shared(&pairs, total);
        } else {
            for (dst, src) in &pairs {
                dst.copy_from(src);
            }
        }
        Counters::count(&counters.direct_calls, &counters.direct_bytes, total);
        log::debug!(target: TARGET, "{op:?} of {total} bytes with {}: direct copy", link.remote);
        return Some(Ok(()));
    }
    drop(remote);
    if !shm.kernel_copy.load(Ordering::Relaxed)
        || !locals.iter().all(|l| regions.holds(l.desc.remote_addr as usize, l.span.len()))
    {
        return None;
    }
    let dir = match op {
        TransferOp::Read => PeerDirection::Read,
        TransferOp::Write => PeerDirection::Write,
    };
    for l in locals {
        if let Err(e) = peer_copy(shm.pid, dir, &l.span, l.desc.remote_addr as usize) {
            if e.raw_os_error() == Some(libc::EPERM) || e.raw_os_error() == Some(libc::ENOSYS) {
                shm.kernel_copy.store(false, Ordering::Relaxed);
            }
            log::debug!(target: TARGET, "kernel copy with {} refused ({e}): TCP instead", link.remote);
            return None;
        }
    }
    Counters::count(&counters.kernel_calls, &counters.kernel_bytes, total);
    log::debug!(target: TARGET, "{op:?} of {total} bytes with {}: kernel copy", link.remote);
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sys::mapping::Mapping;
    use crate::sys::memfd::MemFd;

    fn mapping(len: usize) -> Arc<Mapping> {
        let len = len.next_multiple_of(1 << 12);
        Arc::new(Mapping::shared_rw(&MemFd::create("direct-test", len).unwrap(), len, 1).unwrap())
    }

    /// Pieces cross pair boundaries, pairs shorter and longer than a piece, empty ones: every
    /// byte arrives once, at its place, whichever thread took its piece.
    #[test]
    fn a_shared_copy_moves_every_byte_of_every_pair_to_its_place() {
        let lens = [0, 3 * PIECE + 17, 5, 0, PIECE, 4096, 2 * PIECE - 1, 1, 0];
        let total: usize = lens.iter().sum();
        let (src, dst) = (mapping(total), mapping(total));
        let bytes: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
        RawSpan::of_mapping(&src, 0, total).unwrap().write_slice(&bytes);
        // Each pair copies its source range into the mirror place of the destination, so a
        // byte copied by the wrong pair or at the wrong offset shows.
        let mut at = 0;
        let spans: Vec<(RawSpan, RawSpan)> = lens
            .iter()
            .map(|&len| {
                let d = RawSpan::of_mapping(&dst, total - at - len, len).unwrap();
                let s = RawSpan::of_mapping(&src, at, len).unwrap();
                at += len;
                (d, s)
            })
            .collect();
        let pairs: Vec<(&RawSpan, &RawSpan)> = spans.iter().map(|(d, s)| (d, s)).collect();
        copy_shared(&pairs, total);
        let mut out = vec![0u8; total];
        RawSpan::of_mapping(&dst, 0, total).unwrap().read_into(&mut out);
        let mut expected = Vec::with_capacity(total);
        let mut end = total;
        for &len in lens.iter().rev() {
            expected.extend_from_slice(&bytes[end - len..end]);
            end -= len;
        }
        // `expected` lists the pairs' sources last pair first, which is the destination's order.
        assert_eq!(out, expected);
    }
}
