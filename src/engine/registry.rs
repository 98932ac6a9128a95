//! The engine's registered memory: which ranges peers may use directly, and how to reach
//! their bytes.
//!
//! Each registration keeps a [`RawSpan`] made when it was registered: device (and pinned host)
//! memory of the runtime through the runtime's own view, so it works when host code may not
//! touch device memory (strict mode); other memory as the caller vouched for it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::engine::wire::{MAX_REGIONS, MemKind, NO_TAG, Region};
use crate::error::EngineError;
use crate::handle::Handle;
use crate::sync::lock;
use crate::sys::span::RawSpan;

/// One registration.
#[derive(Debug)]
pub struct Registered {
    pub handle: u64,
    /// The caller's address (for device memory in strict mode not where `span` points).
    pub addr: usize,
    pub len: usize,
    pub kind: MemKind,
    /// The bytes of `[addr, addr + len)`, through whatever view may touch them.
    pub span: RawSpan,
    /// `MemDesc::local_only`: for this engine's own transfers only. Never announced, listed
    /// in HELLO, mapped for same-host peers or registered with UCX; a peer's request into it
    /// is served as if the range were not registered.
    pub local_only: bool,
    /// Announced with the region ([`Region::tag`]; [`NO_TAG`]: none).
    pub tag: u32,
}

/// How a registration is offered to peers: kept from them (`local_only`), or announced with a
/// tag their faces can find it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub local_only: bool,
    pub tag: u32,
}

impl Default for Offer {
    fn default() -> Offer {
        Offer { local_only: false, tag: NO_TAG }
    }
}

impl Registered {
    pub fn region(&self) -> Region {
        Region { addr: self.addr as u64, len: self.len as u64, kind: self.kind, tag: self.tag }
    }

    pub fn holds(&self, addr: usize, len: usize) -> bool {
        addr >= self.addr && addr.checked_add(len).is_some_and(|end| end <= self.addr + self.len)
    }
}

crate::handle_kind!(
    /// Memory handles are numbers from one process-wide sequence, so a handle of one engine never
    /// names a registration of another.
    static HANDLES: Memory => MemoryHandle, target (), EngineError);

/// The kind of a registration's handle. A registration lives in its engine's [`Registry`];
/// the table only hands out the numbers (reserved, never filled), so it keeps them unique and
/// of their kind, and a handle never resolves through it.
pub struct MemoryHandle;

#[derive(Default)]
pub struct Registry {
    /// By start address, then handle (several registrations may overlap or repeat).
    by_addr: Mutex<BTreeMap<(usize, u64), Arc<Registered>>>,
}

impl Registry {
    /// Records `[addr, addr + span.len())`, reached through `span`, as `kind`.
    #[cfg(test)]
    pub fn add(&self, addr: usize, span: RawSpan, kind: MemKind) -> Arc<Registered> {
        self.add_with(addr, span, kind, Offer::default())
    }

    /// [`Registry::add`], offered to peers as `offer` says.
    pub fn add_with(&self, addr: usize, span: RawSpan, kind: MemKind, offer: Offer) -> Arc<Registered> {
        let handle = MemoryHandle::table().reserve();
        let Offer { local_only, tag } = offer;
        let r = Arc::new(Registered { handle, addr, len: span.len(), kind, span, local_only, tag });
        lock(&self.by_addr).insert((r.addr, handle), r.clone());
        r
    }

    /// Removes the registration `handle`; `None` if it is not one of this engine's.
    pub fn remove(&self, handle: u64) -> Option<Arc<Registered>> {
        let mut map = lock(&self.by_addr);
        let key = map.iter().find(|(_, r)| r.handle == handle).map(|(k, _)| *k)?;
        map.remove(&key)
    }

    /// The registration wholly containing `[addr, addr + len)`, if any.
    pub fn find(&self, addr: usize, len: usize) -> Option<Arc<Registered>> {
        lock(&self.by_addr)
            .range(..=(addr, u64::MAX))
            .rev()
            .map(|(_, r)| r)
            .find(|r| r.holds(addr, len))
            .cloned()
    }

    /// The registration wholly containing `[addr, addr + len)` that peers may use: a
    /// local-only one is not (a peer's request is then served as for unregistered memory).
    pub fn find_shared(&self, addr: usize, len: usize) -> Option<Arc<Registered>> {
        lock(&self.by_addr)
            .range(..=(addr, u64::MAX))
            .rev()
            .map(|(_, r)| r)
            .find(|r| !r.local_only && r.holds(addr, len))
            .cloned()
    }

    /// The registrations to announce in HELLO: at most [`MAX_REGIONS`], the protocol's limit
    /// (the list is informational; every request is decided with the registry itself).
    /// Local-only ones are left out.
    pub fn regions(&self) -> Vec<Region> {
        lock(&self.by_addr).values().filter(|r| !r.local_only).take(MAX_REGIONS).map(|r| r.region()).collect()
    }

    /// Every registration peers may use (for a same-host peer's first list: no limit).
    pub fn all(&self) -> Vec<Arc<Registered>> {
        lock(&self.by_addr).values().filter(|r| !r.local_only).cloned().collect()
    }

    /// How many registrations there are (local-only ones included).
    pub fn len(&self) -> usize {
        lock(&self.by_addr).len()
    }

    pub fn clear(&self) {
        lock(&self.by_addr).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::memory;

    /// Pinned host memory of the runtime: memory the tests can span without `unsafe`.
    fn span(len: usize) -> (usize, RawSpan) {
        let addr = memory::alloc_host(len).unwrap();
        (addr, memory::runtime_span(addr, len).unwrap())
    }

    #[test]
    fn ranges_are_found_inside_registrations_only() {
        let reg = Registry::default();
        let (a, s) = span(100);
        let r = reg.add(a, s, MemKind::Host);
        let base = r.addr;
        assert_eq!(reg.find(base, 100).unwrap().handle, r.handle);
        assert_eq!(reg.find(base + 10, 90).unwrap().handle, r.handle);
        assert!(reg.find(base + 10, 91).is_none());
        assert!(reg.find(base - 1, 2).is_none());
        assert_eq!(
            reg.regions(),
            vec![Region { addr: base as u64, len: 100, kind: MemKind::Host, tag: NO_TAG }]
        );
        assert!(reg.remove(r.handle + 1).is_none());
        assert!(reg.remove(r.handle).is_some());
        assert!(reg.find(base, 1).is_none());
        memory::free(base, memory::AllocKind::Host).unwrap();
    }

    #[test]
    fn handles_differ_between_registries() {
        let (a, b) = (Registry::default(), Registry::default());
        let ((x, s1), (y, s2)) = (span(8), span(8));
        let (h1, h2) = (a.add(x, s1, MemKind::Host).handle, b.add(y, s2, MemKind::Device).handle);
        assert_ne!(h1, h2);
        assert!(b.remove(h1).is_none());
    }

    #[test]
    fn local_only_registrations_are_kept_from_peers() {
        let reg = Registry::default();
        let ((x, s1), (y, s2)) = (span(64), span(64));
        let mine = reg.add_with(x, s1, MemKind::Host, Offer { local_only: true, tag: NO_TAG });
        let shared = reg.add(y, s2, MemKind::Host);
        assert_eq!(reg.find(x, 64).unwrap().handle, mine.handle);
        assert!(reg.find_shared(x, 64).is_none());
        assert_eq!(reg.find_shared(y, 64).unwrap().handle, shared.handle);
        assert_eq!(reg.regions(), vec![shared.region()]);
        assert_eq!(reg.all().len(), 1);
        for a in [x, y] {
            memory::free(a, memory::AllocKind::Host).unwrap();
        }
    }
}
