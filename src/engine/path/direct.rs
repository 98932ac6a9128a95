//! The same-host paths of TransferSync, chosen per call before TCP:
//!
//! 1. **direct**: every remote range lies in the peer's shareable memory, mapped here: the
//!    caller's thread copies (no message, no system call). A call of at least [`SPLIT_MIN`]
//!    bytes is split over two threads (the caller's and one more) when a CPU is idle (see
//!    [`idle_core`]): on this 2-CPU machine, idle, a 16 MiB copy then ran about 1.7 times
//!    faster than on one thread, and below a few MiB the thread start costs more than it saves.
//! 2. **kernel copy**: every remote range is registered memory of the peer that is not
//!    shareable (e.g. `malloc`): `process_vm_readv`/`process_vm_writev` on the peer's pid. If
//!    the kernel refuses (ptrace rules: `EPERM`), the link stops trying and TCP is used.
//! 3. otherwise `None`: the caller goes on with TCP (and the relay rule).
//!
//! Local ranges must be registered (an unregistered one keeps the call on TCP, where the relay
//! rule applies to the whole call). The peer's regions are held for reading during the copy,
//! so a REMOVE from the peer (its DeregisterMem) waits until the copy has ended.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::conn::link::Link;
use crate::engine::path::tcp::{Local, TransferOp};
use crate::engine::wire::MemKind;
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sys::safe_copy::{PeerDirection, peer_copy};
use crate::sys::span::RawSpan;

/// Calls of at least this many bytes copy on two threads (measured: see `benches/adxl_shm.rs`).
pub const SPLIT_MIN: usize = 4 << 20;

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

/// Whether a CPU is idle now: fewer runnable threads on the machine (this one included, the
/// fourth field of `/proc/loadavg`, an instantaneous count) than CPUs this process may use. A
/// second copying thread only helps when it does not take a CPU from someone else (measured:
/// on a busy 2-CPU machine the split copy was slower than one thread).
fn idle_core() -> bool {
    let cores = cores();
    cores > 1
        && std::fs::read_to_string("/proc/loadavg").is_ok_and(|s| {
            s.split_whitespace()
                .nth(3)
                .and_then(|f| f.split('/').next())
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|running| running < cores)
        })
}

/// Copies one pair (`dst` from `src`), parts `[from, to)` of the call's bytes only.
fn copy_pairs(pairs: &[(&RawSpan, &RawSpan)], from: usize, to: usize) {
    let mut at = 0;
    for (dst, src) in pairs {
        let len = dst.len();
        let (start, end) = (from.max(at), to.min(at + len));
        if start < end {
            dst.copy_part_from(start - at, src, start - at, end - start);
        }
        at += len;
        if at >= to {
            break;
        }
    }
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
        if total >= SPLIT_MIN && idle_core() {
            let half = total / 2;
            std::thread::scope(|s| {
                let pairs = &pairs;
                s.spawn(move || copy_pairs(pairs, half, total));
                copy_pairs(pairs, 0, half);
            });
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
