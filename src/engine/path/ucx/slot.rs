//! A link's UCX state: whether the link uses UCX, its endpoint to the peer and the keys of the
//! peer's regions. The link keeps it and hands it the peer's announcements; the transport
//! ([`super::on`]) fills and uses it. A leaf below both, so the link does not import the
//! transport that uses the link.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::wire::{Message, UcxKey};
use crate::logging::TARGET;
use crate::sync::lock;
use crate::sys::ucx::{Endpoint, RemoteKey};

/// One region of the peer as UCX reaches it.
pub struct Key {
    pub addr: u64,
    pub len: u64,
    pub base: u64,
    pub rkey: RemoteKey,
}

/// A link's UCX endpoint to its peer and the keys of the peer's regions.
pub struct Peer {
    pub ep: Endpoint,
    /// Sorted by `addr`.
    pub keys: Mutex<Vec<Arc<Key>>>,
}

impl Peer {
    /// The key holding each remote range (address, length); `None` if one is not covered.
    pub fn cover(&self, ranges: impl Iterator<Item = (u64, u64)>) -> Option<Vec<Arc<Key>>> {
        let keys = lock(&self.keys);
        ranges
            .map(|(addr, len)| {
                let i = keys.partition_point(|k| k.addr <= addr);
                let k = keys.get(i.checked_sub(1)?)?;
                (addr.checked_add(len)? <= k.addr + k.len).then(|| k.clone())
            })
            .collect()
    }

    pub fn set_keys(&self, keys: &[UcxKey], remote: &str) {
        let mut unpacked: Vec<Arc<Key>> = keys
            .iter()
            .filter_map(|k| match self.ep.unpack(&k.rkey) {
                Ok(rkey) => Some(Arc::new(Key { addr: k.addr, len: k.len, base: k.base, rkey })),
                Err(e) => {
                    log::warn!(target: TARGET, "{remote}: UCX key of {:#x} + {} bytes unusable ({e}); TCP there", k.addr, k.len);
                    None
                }
            })
            .collect();
        unpacked.sort_by_key(|k| k.addr);
        *lock(&self.keys) = unpacked;
    }
}

/// A link's UCX state: whether it uses UCX and its current endpoint (none after a failure
/// until the next call makes one).
#[derive(Default)]
pub struct PeerSlot {
    pub(super) in_use: AtomicBool,
    pub(super) peer: Mutex<Option<Arc<Peer>>>,
    /// The peer announced memory since its keys were read.
    pub(super) stale: AtomicBool,
}

impl PeerSlot {
    /// Drops the endpoint (Disconnect, a link replaced or dropped). When the peer is gone it is
    /// force-closed: a flush close would wait for a dead peer for ever.
    pub fn clear(&self, peer_gone: bool) {
        let peer = lock(&self.peer).take();
        if let (Some(p), true) = (peer, peer_gone) {
            p.ep.abandon("the peer is gone");
        }
    }

    /// Whether the link moves its transfers with UCX.
    pub fn in_use(&self) -> bool {
        self.in_use.load(Ordering::Acquire)
    }

    pub(super) fn current(&self) -> Option<Arc<Peer>> {
        lock(&self.peer).clone().filter(|p| p.ep.failed().is_none())
    }

    /// Forgets `peer` if it is still the current one (its endpoint failed or was closed).
    pub(super) fn forget(&self, peer: &Arc<Peer>) {
        let mut slot = lock(&self.peer);
        if slot.as_ref().is_some_and(|p| Arc::ptr_eq(p, peer)) {
            *slot = None;
        }
    }

    /// A peer's announcement: new memory makes the keys stale; removed memory loses its keys at
    /// once, so no later call puts into it.
    pub fn note(&self, message: &Message) {
        match message {
            Message::MemAdd { .. } => self.stale.store(true, Ordering::Release),
            Message::MemRemove { regions } => {
                if let Some(p) = lock(&self.peer).clone() {
                    lock(&p.keys).retain(|k| !regions.iter().any(|r| r.addr == k.addr && r.len == k.len));
                }
            }
            _ => {}
        }
    }
}
