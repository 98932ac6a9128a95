//! One rank's end of a communicator: its engine, the other ranks' engine names, and the
//! messages they send it.
//!
//! Ranks tell each other what they do with the engine's notifies (`SendNotify`), named
//! [`NOTIFY`], text `"<from rank> <key> <kind> <hex numbers>"`: the key names the operation
//! (`c<n>` the n-th collective, `s<n>` the n-th point-to-point transfer from a sender to a
//! receiver) and the kind the step (`R`: here are the ranges to read, with their addresses and
//! lengths; `A`: done reading yours, and here is my result; `D`: done; `E`: I failed). A pump
//! thread moves the engine's notifies into an inbox keyed by (rank, key, kind), which the
//! operations wait on. Data moves with `TransferSync` reads, the engine's links: same-host
//! memory between processes of one host, TCP or UCX between hosts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::engine::{Engine, MemType, Notified, Offer, TransferDesc, TransferOp};
use crate::error::EngineError;
use crate::error::engine_status::{ADXL_RESOURCE_EXHAUSTED, ADXL_TIMEOUT};
use crate::error::hccl_codes::{HCCL_E_INTERNAL, HCCL_E_PARA, HCCL_E_REMOTE, HCCL_E_TIMEOUT, HcclError};
use crate::runtime::memory as runtime_memory;
use crate::runtime::memory::Placement;
use crate::sync::{lock, spawn_named};
use crate::sys::memfd::MemFd;
use crate::sys::span::{HostRange, RawSpan};

const TARGET: &str = "ascendless::hccl";

/// How the FFI layer vouches for a caller's host memory that is not the runtime's (see
/// [`crate::sys::span`]); the core never calls it for runtime memory.
pub type Vouch = fn(HostRange) -> RawSpan;

/// The name of every notify the ranks of a communicator send each other.
pub const NOTIFY: &str = "hccl";
/// The name of the liveness probe a waiting rank sends a silent peer (dropped on arrival).
const PING: &str = "hccl.ping";
/// How long a rank waits for a peer before asking whether it is still there.
const PROBE_AFTER: Duration = Duration::from_millis(500);

type Key = (u32, String, char);

/// The messages received and not yet taken.
#[derive(Default)]
struct Inbox {
    messages: Mutex<HashMap<Key, Vec<u64>>>,
    arrived: Condvar,
    stop: AtomicBool,
}

impl Inbox {
    fn put(&self, n: &Notified) {
        if n.name != NOTIFY {
            return;
        }
        match parse(&n.msg) {
            Some((key, args)) => {
                lock(&self.messages).insert(key, args);
                self.arrived.notify_all();
            }
            None => log::warn!(target: TARGET, "dropped a malformed HCCL message {:?}", n.msg),
        }
    }
}

fn parse(msg: &str) -> Option<(Key, Vec<u64>)> {
    let mut words = msg.split(' ');
    let from = words.next()?.parse().ok()?;
    let key = words.next()?.to_owned();
    let mut kind = words.next()?.chars();
    let k = kind.next().filter(|_| kind.next().is_none())?;
    let args = words.map(|w| u64::from_str_radix(w, 16).ok()).collect::<Option<Vec<_>>>()?;
    Some(((from, key, k), args))
}

fn format(from: u32, key: &str, kind: char, args: &[u64]) -> String {
    let mut s = format!("{from} {key} {kind}");
    for a in args {
        s.push_str(&format!(" {a:x}"));
    }
    s
}

/// The remote engine could not be reached or answered with an error: the peer's fault.
fn peer_error(rank: u32, name: &str, what: &str, e: EngineError) -> HcclError {
    if e.status == ADXL_TIMEOUT {
        return HcclError::new(HCCL_E_TIMEOUT, format!("{what} rank {rank} ({name}): {}", e.message));
    }
    HcclError::new(HCCL_E_REMOTE, format!("{what} rank {rank} ({name}) failed: {}", e.message))
}

/// What is left of `deadline`, as the engine's time-outs take it (at least 1 ms).
pub fn ms_left(deadline: Instant) -> i32 {
    let left = deadline.saturating_duration_since(Instant::now()).as_millis();
    left.clamp(1, i32::MAX as u128) as i32
}

/// A rank's engine and what it knows of the others.
pub struct Endpoint {
    pub engine: Arc<Engine>,
    pub rank: u32,
    pub names: Vec<String>,
    inbox: Arc<Inbox>,
    /// Runtime allocations registered whole, oldest first (see [`Endpoint::keep`]).
    kept: Mutex<Vec<Kept>>,
    /// Per rank, why the last message to it could not be delivered (its engine is gone).
    gone: Mutex<Vec<Option<String>>>,
}

/// A runtime allocation registered with the engine for as long as the communicator lives (or
/// until [`MAX_KEPT`] newer ones push it out): registering, and the peers' mapping of it, is
/// paid once, not at every operation. The file is held, so an allocation freed and another
/// made at the same address is told apart (and the old registration dropped).
struct Kept {
    start: usize,
    len: usize,
    file: Arc<MemFd>,
    handle: u64,
}

/// How many runtime allocations a communicator keeps registered.
const MAX_KEPT: usize = 64;

impl Endpoint {
    /// Starts the pump; `early` are messages received before (while joining).
    pub fn new(
        engine: Arc<Engine>,
        rank: u32,
        names: Vec<String>,
        early: Vec<Notified>,
    ) -> Result<Endpoint, HcclError> {
        let inbox = Arc::new(Inbox::default());
        for n in &early {
            inbox.put(n);
        }
        let (e, i) = (engine.clone(), inbox.clone());
        spawn_named("hccl-inbox", move || {
            while !i.stop.load(Ordering::Acquire) {
                match e.wait_notifies(Duration::from_millis(100)) {
                    Ok(list) => list.iter().for_each(|n| i.put(n)),
                    Err(_) => break,
                }
            }
        })
        .map_err(|e| HcclError::new(HCCL_E_INTERNAL, format!("cannot start the HCCL inbox thread: {e}")))?;
        let gone = Mutex::new(vec![None; names.len()]);
        Ok(Endpoint { engine, rank, names, inbox, kept: Mutex::new(Vec::new()), gone })
    }

    pub fn size(&self) -> u32 {
        self.names.len() as u32
    }

    /// Sends `kind` for `key` to `to`, once the peer has queued it.
    pub fn send(
        &self,
        to: u32,
        key: &str,
        kind: char,
        args: &[u64],
        deadline: Instant,
    ) -> Result<(), HcclError> {
        let name = &self.names[to as usize];
        let msg = format(self.rank, key, kind, args);
        match self.engine.send_notify(name, NOTIFY, &msg, ms_left(deadline)) {
            Ok(()) => {
                lock(&self.gone)[to as usize] = None;
                Ok(())
            }
            Err(e) if e.status == ADXL_TIMEOUT => Err(peer_error(to, name, "cannot tell", e)),
            // The peer's engine closed the connection: it left (destroyed its communicator, its
            // operations done: a peer that finished first may have been told its last message
            // and left before answering) or it died. Not an error of this operation unless it
            // waits for that peer and finds nothing it sent before leaving (see `wait`).
            Err(e) => {
                log::debug!(target: TARGET, "rank {to} ({name}) is gone: {}", e.message);
                lock(&self.gone)[to as usize] = Some(e.message);
                Ok(())
            }
        }
    }

    /// Waits for `kind` of `key` from `from`, until `deadline` (HCCL_E_TIMEOUT); a peer that
    /// stops answering the probe, or says it failed (`E`), is HCCL_E_REMOTE at once.
    pub fn wait(&self, from: u32, key: &str, kind: char, deadline: Instant) -> Result<Vec<u64>, HcclError> {
        let want: Key = (from, key.to_owned(), kind);
        let failed: Key = (from, key.to_owned(), 'E');
        let mut probe_at = Instant::now() + PROBE_AFTER;
        let mut messages = lock(&self.inbox.messages);
        loop {
            if let Some(args) = messages.remove(&want) {
                return Ok(args);
            }
            if messages.contains_key(&failed) {
                return Err(HcclError::new(HCCL_E_REMOTE, format!("rank {from} failed in operation {key}")));
            }
            if let Some(why) = lock(&self.gone)[from as usize].clone() {
                let name = &self.names[from as usize];
                return Err(HcclError::new(HCCL_E_REMOTE, format!("rank {from} ({name}) is gone: {why}")));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(HcclError::new(
                    HCCL_E_TIMEOUT,
                    format!(
                        "rank {} waited for rank {from} in operation {key} until HCCL_EXEC_TIMEOUT",
                        self.rank
                    ),
                ));
            }
            if now >= probe_at {
                drop(messages);
                self.probe(from)?;
                probe_at = Instant::now() + PROBE_AFTER;
                messages = lock(&self.inbox.messages);
                continue;
            }
            let until = probe_at.min(deadline);
            messages =
                self.inbox.arrived.wait_timeout(messages, until - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Whether `peer` still answers: a busy peer (time-out, full queue) is alive.
    fn probe(&self, peer: u32) -> Result<(), HcclError> {
        let name = &self.names[peer as usize];
        match self.engine.send_notify(name, PING, "", PROBE_AFTER.as_millis() as i32) {
            Ok(()) => Ok(()),
            Err(e) if e.status == ADXL_TIMEOUT || e.status == ADXL_RESOURCE_EXHAUSTED => Ok(()),
            Err(e) => {
                Err(HcclError::new(HCCL_E_REMOTE, format!("rank {peer} ({name}) is gone: {}", e.message)))
            }
        }
    }

    /// Tells every other rank that this one failed in `key` (best effort, in the background:
    /// a dead peer must not hold up the error).
    pub fn fail(self: &Arc<Self>, key: &str) {
        let (me, key) = (self.clone(), key.to_owned());
        let _ = spawn_named("hccl-fail", move || {
            for to in (0..me.size()).filter(|&k| k != me.rank) {
                let _ = me.send(to, &key, 'E', &[], Instant::now() + Duration::from_secs(1));
            }
        });
    }

    /// Reads `len` bytes at `remote` of rank `from` into local `local` (registered).
    pub fn read(
        &self,
        from: u32,
        remote: usize,
        local: usize,
        len: usize,
        deadline: Instant,
        vouch: Vouch,
    ) -> Result<(), HcclError> {
        if len == 0 {
            return Ok(());
        }
        let name = &self.names[from as usize];
        let desc = TransferDesc { local_addr: local, remote_addr: remote, len };
        self.engine
            .transfer_sync(name, TransferOp::Read, &[desc], ms_left(deadline), vouch)
            .map_err(|e| peer_error(from, name, "reading from", e))
    }

    /// Runs `f` on rank `from`'s bytes at `remote` where this host maps them (a same-host
    /// peer): `None` when it does not, for the caller to [`Endpoint::read`] them instead.
    pub fn with_peer<R>(
        &self,
        from: u32,
        remote: usize,
        len: usize,
        deadline: Instant,
        f: impl FnOnce(&RawSpan) -> R,
    ) -> Result<Option<R>, HcclError> {
        let name = &self.names[from as usize];
        self.engine
            .with_peer_memory(name, remote, len, ms_left(deadline), f)
            .map_err(|e| peer_error(from, name, "reading from", e))
    }

    /// Stops the pump and the engine: later operations fail, peers see this rank gone.
    pub fn close(&self) {
        self.inbox.stop.store(true, Ordering::Release);
        self.engine.finalize();
    }
}

/// A span of local memory: the runtime's view of it, or the caller's word.
pub fn local_span(addr: usize, len: usize, writable: bool, vouch: Vouch) -> RawSpan {
    runtime_memory::runtime_span(addr, len).unwrap_or_else(|| vouch(HostRange { addr, len, writable }))
}

impl Endpoint {
    /// Keeps the runtime allocation holding `[addr, addr + len)` registered (offered to the
    /// peers): whether it is one. Memory that is not the runtime's is registered per operation.
    fn keep(&self, addr: usize, len: usize, vouch: Vouch) -> Result<bool, HcclError> {
        let Some(b) = runtime_memory::backing(addr) else { return Ok(false) };
        if addr + len > b.start + b.len {
            return Ok(false);
        }
        let mut kept = lock(&self.kept);
        if let Some(i) =
            kept.iter().position(|k| k.start == b.start && k.len == b.len && Arc::ptr_eq(&k.file, &b.fd))
        {
            let k = kept.remove(i);
            kept.push(k);
            return Ok(true);
        }
        // An allocation freed since, where this one is now: its registration goes first.
        let (stale, mut live): (Vec<Kept>, Vec<Kept>) = std::mem::take(&mut *kept)
            .into_iter()
            .partition(|k| k.start < b.start + b.len && b.start < k.start + k.len);
        if live.len() >= MAX_KEPT {
            let oldest = live.remove(0);
            let _ = self.engine.deregister_mem(oldest.handle);
        }
        for k in stale {
            let _ = self.engine.deregister_mem(k.handle);
        }
        *kept = live;
        let device = matches!(b.placement, Placement::Device(_));
        let mem_type = if device { MemType::Device } else { MemType::Host };
        let handle =
            self.engine.register_mem_with(b.start, b.len, mem_type, Offer::default(), vouch).map_err(
                |e| HcclError::new(HCCL_E_PARA, format!("memory {addr:#x} + {len} bytes: {}", e.message)),
            )?;
        kept.push(Kept { start: b.start, len: b.len, file: b.fd.clone(), handle });
        Ok(true)
    }
}

/// Memory registered with the engine for one operation (what is not kept: the caller's own
/// memory): deregistered when dropped.
pub struct Lease<'a> {
    engine: &'a Engine,
    handles: Vec<u64>,
}

impl<'a> Lease<'a> {
    /// Registers `ranges` (address, length, offered to peers), overlapping ones together.
    pub fn cover(
        ep: &'a Endpoint,
        ranges: &[(usize, usize, bool)],
        vouch: Vouch,
    ) -> Result<Lease<'a>, HcclError> {
        let mut sorted: Vec<(usize, usize, bool)> = ranges.iter().copied().filter(|r| r.1 > 0).collect();
        sorted.sort();
        let mut merged: Vec<(usize, usize, bool)> = Vec::new();
        for (addr, len, offered) in sorted {
            match merged.last_mut() {
                Some(last) if addr < last.0 + last.1 => {
                    last.1 = last.1.max(addr + len - last.0);
                    last.2 |= offered;
                }
                _ => merged.push((addr, len, offered)),
            }
        }
        let mut lease = Lease { engine: &ep.engine, handles: Vec::new() };
        for (addr, len, offered) in merged {
            if ep.keep(addr, len, vouch)? {
                continue;
            }
            let offer = Offer { local_only: !offered, ..Offer::default() };
            let h = ep.engine.register_mem_with(addr, len, MemType::Host, offer, vouch).map_err(|e| {
                HcclError::new(HCCL_E_PARA, format!("memory {addr:#x} + {len} bytes: {}", e.message))
            })?;
            lease.handles.push(h);
        }
        Ok(lease)
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        for h in self.handles.drain(..) {
            let _ = self.engine.deregister_mem(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_malformed_ones_are_refused() {
        let m = format(3, "c7", 'R', &[0x1000, 42]);
        assert_eq!(parse(&m), Some(((3, "c7".to_owned(), 'R'), vec![0x1000, 42])));
        assert_eq!(parse(&format(0, "s1", 'D', &[])), Some(((0, "s1".to_owned(), 'D'), vec![])));
        for bad in ["", "x c1 R", "1 c1 RR", "1 c1 R zz", "1"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
