//! The same-host paths of TransferSync, chosen per call before TCP:
//!
//! 1. **direct**: every remote range lies in the peer's shareable memory, mapped here: the
//!    caller's thread copies (no message, no system call). A call of at least [`SPLIT_MIN`]
//!    bytes is shared with one more thread, piece by piece (see [`copy_pieces`]), and written
//!    around the cache (`sys::stream_copy`: memory bandwidth is the limit, and a cached store
//!    first reads each line it writes): on this 2-CPU machine a 64 MiB copy then runs 2.5-2.8x
//!    as fast as a one-thread memcpy, 2.1-2.2x beside a busy thread; below a few MiB the thread
//!    start costs more than it saves, and the copy fits the caches. The copy of a TransferAsync
//!    request of at least [`POLLED_SPLIT_MIN`] bytes is also shared with the threads polling
//!    it in a tight loop, which would otherwise spin beside it.
//! 2. **kernel copy**: every remote range is registered memory of the peer that is not
//!    shareable (e.g. `malloc`): `process_vm_readv`/`process_vm_writev` on the peer's pid. If
//!    the kernel refuses (ptrace rules: `EPERM`), the link stops trying and TCP is used.
//! 3. otherwise `None`: the caller goes on with TCP (and the relay rule).
//!
//! Local ranges must be registered (an unregistered one keeps the call on TCP, where the relay
//! rule applies to the whole call). The peer's regions are held for reading during the copy,
//! so a REMOVE from the peer (its DeregisterMem) waits until the copy has ended.

use std::borrow::Borrow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::conn::link::Link;
use crate::engine::path::pieces::Pieces;
use crate::engine::path::tcp::{Local, TransferOp};
use crate::engine::wire::MemKind;
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sys::safe_copy::{PeerDirection, peer_copy};
use crate::sys::span::RawSpan;

/// Calls of at least this many bytes copy on two threads, with streaming stores (measured: see
/// `benches/adxl_shm.rs`).
pub const SPLIT_MIN: usize = 4 << 20;

/// What a thread of a shared copy takes at a time: small enough that the caller waits little
/// for a helper's last piece, large enough that taking one is nothing beside copying it.
const PIECE: usize = 256 << 10;

/// A TransferAsync request of at least this many bytes, in descriptors of [`POLLED_PIECE`] or
/// more on average, is copied in pieces of [`POLLED_PIECE`] that the threads polling it may
/// take (see `Requests::poll`): a thread spinning on GetTransferStatus then copies instead.
/// Below, the copy is over before a poll would join it.
pub const POLLED_SPLIT_MIN: usize = 2 * POLLED_PIECE;
/// Smaller than [`PIECE`]: a poller joins a copy already under way, and one request of 1 MiB
/// should still split evenly between two threads.
const POLLED_PIECE: usize = 64 << 10;

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

/// Who may take pieces of a same-host copy besides the thread that runs the call.
pub enum Helpers<'a> {
    /// TransferSync: one more thread for a call of at least [`SPLIT_MIN`] bytes, when there is
    /// more than one CPU.
    Thread,
    /// A TransferAsync request's worker: that thread too, and the caller's threads polling
    /// the request, to which `offer` hands the pieces of a copy of at least
    /// [`POLLED_SPLIT_MIN`] bytes (and `None` once they have all landed).
    Pollers(&'a dyn Fn(Option<Arc<Pieces>>)),
}

/// Copies `pieces` on the caller's thread and, when the copy is large and there is more than
/// one CPU, on a helper thread; other threads (the polls of a request) may take pieces too.
/// Nothing is guessed about the machine's load: a helper that gets no CPU takes few pieces (or
/// none) and the caller copies the rest, so the call is never much slower than one thread; what
/// it can lose is a helper's last piece, which the caller must wait for (no helper may write
/// after the call has returned).
fn copy_pieces<S: Borrow<RawSpan> + Sync>(pieces: &Pieces<S>) {
    std::thread::scope(|s| {
        // A thread the system refuses (a limit reached) leaves the others copying.
        if pieces.total() >= SPLIT_MIN && cores() > 1 {
            let helper = || pieces.take(usize::MAX);
            if let Err(e) = std::thread::Builder::new().name("adxl-copy".into()).spawn_scoped(s, helper) {
                log::debug!(target: TARGET, "no second thread for a large copy ({e}): one thread copies");
            }
        }
        pieces.take(usize::MAX);
    });
    pieces.wait_landed();
}

/// A copy's destination and source: READ copies the remote side into the local one.
fn dst_src<S>(op: TransferOp, local: S, remote: S) -> (S, S) {
    match op {
        TransferOp::Read => (local, remote),
        TransferOp::Write => (remote, local),
    }
}

/// Tries the same-host paths; `None` means "use TCP".
pub fn try_run(
    counters: &Counters,
    link: &Link,
    op: TransferOp,
    locals: &[Local],
    helpers: &Helpers,
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
        let stream = total >= SPLIT_MIN;
        let piece = if stream { PIECE } else { POLLED_PIECE };
        match helpers {
            // Descriptors a piece long or longer on average: owning a span per descriptor
            // costs little beside copying it (4096 x 4 KiB lost a fifth of their speed).
            Helpers::Pollers(offer) if total >= POLLED_SPLIT_MIN && total / locals.len() >= POLLED_PIECE => {
                // The pieces own their spans (a poll holds them after this call's frame): the
                // locals' are sub-spans of the same memory, under the same promise.
                let owned = |l: &Local| l.span.sub(0, l.span.len()).expect("a span holds itself");
                let pairs = locals.iter().zip(remote).map(|(l, r)| dst_src(op, owned(l), r)).collect();
                let pieces = Arc::new(Pieces::new(pairs, piece, stream));
                offer(Some(Arc::clone(&pieces)));
                copy_pieces(&*pieces);
                // Withdrawn here, under the peer's regions, not when the request ends: the
                // spans hold the peer's mappings, which its DeregisterMem unmaps.
                offer(None);
            }
            _ if stream => {
                let pairs = locals.iter().zip(&remote).map(|(l, r)| dst_src(op, &l.span, r)).collect();
                copy_pieces(&Pieces::new(pairs, piece, stream));
            }
            _ => {
                for (l, r) in locals.iter().zip(&remote) {
                    let (dst, src) = dst_src(op, &l.span, r);
                    dst.copy_from(src);
                }
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
