//! Opaque handles: the values C callers hold for runtime objects (streams, events, contexts,
//! notifies, engines, transfer requests).
//!
//! A handle is never a pointer to a Rust object: a C caller can pass one that is stale (already
//! destroyed), of the wrong kind, freed twice, or plain garbage, and dereferencing any of those
//! would crash or corrupt the host. Instead a handle is a number that names an entry of a table;
//! anything that does not name a live entry of the right kind is reported as an error.
//!
//! Layout of the 64-bit value: `0xA5` in the top byte (so it is never a valid user-space
//! address and cannot be mistaken for real memory), the kind in the next byte, then a 48-bit
//! id that is never reused within a process (so a stale handle cannot name a newer object).

use crate::sync;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

const MAGIC: u64 = 0xA5;
const ID_BITS: u32 = 48;
const ID_MASK: u64 = (1 << ID_BITS) - 1;

/// What a handle stands for; part of its value, so a handle of one kind never resolves as
/// another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum HandleKind {
    Context = 1,
    Stream = 2,
    Event = 3,
    Notify = 4,
    Engine = 5,
    TransferRequest = 6,
    Memory = 7,
}

/// Why a value did not resolve to a live object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    #[error("the handle is NULL")]
    Null,
    #[error("the value is not a handle of this library")]
    Foreign,
    #[error("the handle is of another kind (expected {expected:?})")]
    WrongKind { expected: HandleKind },
    #[error("the handle does not name a live object (already destroyed?)")]
    Stale,
}

/// A table of live objects of one kind, addressed by handle value.
pub struct HandleTable<T> {
    kind: HandleKind,
    inner: Mutex<Entries<T>>,
}

struct Entries<T> {
    next_id: u64,
    live: BTreeMap<u64, Arc<T>>,
}

impl<T> HandleTable<T> {
    pub const fn new(kind: HandleKind) -> Self {
        HandleTable { kind, inner: Mutex::new(Entries { next_id: 1, live: BTreeMap::new() }) }
    }

    fn lock(&self) -> MutexGuard<'_, Entries<T>> {
        // A panic elsewhere while holding the lock leaves the map itself consistent (every
        // mutation is a single insert or remove), so a poisoned lock is safe to keep using.
        sync::lock(&self.inner)
    }

    /// Stores `value` and returns the handle that names it.
    pub fn insert(&self, value: T) -> u64 {
        self.insert_arc(Arc::new(value))
    }

    pub fn insert_arc(&self, value: Arc<T>) -> u64 {
        let raw = self.reserve();
        self.fill(raw, value);
        raw
    }

    /// Allocates a handle that names nothing yet, for an object that must know its own handle
    /// before it exists; it resolves as stale until [`HandleTable::fill`].
    pub fn reserve(&self) -> u64 {
        let mut e = self.lock();
        let id = e.next_id;
        e.next_id += 1;
        assert!(id <= ID_MASK, "handle ids exhausted");
        (MAGIC << 56) | ((self.kind as u64) << ID_BITS) | id
    }

    /// Makes a reserved handle name `value`.
    pub fn fill(&self, raw: u64, value: Arc<T>) {
        let id = self.id_of(raw).expect("fill takes a handle from reserve");
        self.lock().live.insert(id, value);
    }

    fn id_of(&self, raw: u64) -> Result<u64, HandleError> {
        if raw == 0 {
            return Err(HandleError::Null);
        }
        if raw >> 56 != MAGIC {
            return Err(HandleError::Foreign);
        }
        if (raw >> ID_BITS) & 0xFF != self.kind as u64 {
            return Err(HandleError::WrongKind { expected: self.kind });
        }
        Ok(raw & ID_MASK)
    }

    /// The live object `raw` names.
    pub fn get(&self, raw: u64) -> Result<Arc<T>, HandleError> {
        let id = self.id_of(raw)?;
        self.lock().live.get(&id).cloned().ok_or(HandleError::Stale)
    }

    /// Removes the object `raw` names; the handle is stale from then on. Holders of the `Arc`
    /// returned by earlier `get`s keep the object alive until they are done.
    pub fn remove(&self, raw: u64) -> Result<Arc<T>, HandleError> {
        let id = self.id_of(raw)?;
        self.lock().live.remove(&id).ok_or(HandleError::Stale)
    }

    /// Removes and returns the live objects `pred` selects (for a device's teardown).
    pub fn remove_where(&self, pred: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut e = self.lock();
        let ids: Vec<u64> = e.live.iter().filter(|(_, v)| pred(v)).map(|(&id, _)| id).collect();
        ids.iter().filter_map(|id| e.live.remove(id)).collect()
    }

    /// Removes and returns every live object (for process-wide teardown).
    pub fn drain(&self) -> Vec<Arc<T>> {
        std::mem::take(&mut self.lock().live).into_values().collect()
    }

    pub fn len(&self) -> usize {
        self.lock().live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_resolves_until_removed_then_is_stale() {
        let t = HandleTable::new(HandleKind::Stream);
        let h = t.insert(7u32);
        assert_eq!(*t.get(h).unwrap(), 7);
        assert_eq!(*t.remove(h).unwrap(), 7);
        assert_eq!(t.get(h), Err(HandleError::Stale));
        assert_eq!(t.remove(h), Err(HandleError::Stale));
    }

    #[test]
    fn ids_are_never_reused() {
        let t = HandleTable::new(HandleKind::Event);
        let a = t.insert(1u8);
        t.remove(a).unwrap();
        let b = t.insert(2u8);
        assert_ne!(a, b);
        assert_eq!(t.get(a), Err(HandleError::Stale));
    }

    #[test]
    fn null_foreign_and_other_kinds_are_refused() {
        let streams: HandleTable<()> = HandleTable::new(HandleKind::Stream);
        let events = HandleTable::new(HandleKind::Event);
        let e = events.insert(());
        assert_eq!(streams.get(0), Err(HandleError::Null));
        assert_eq!(streams.get(0x7fff_1234_5678), Err(HandleError::Foreign));
        assert_eq!(streams.get(e), Err(HandleError::WrongKind { expected: HandleKind::Stream }));
    }

    #[test]
    fn handles_are_not_user_space_addresses() {
        let t = HandleTable::new(HandleKind::Notify);
        let h = t.insert(());
        assert!(h > 0x0000_7fff_ffff_ffff);
    }

    #[test]
    fn a_reserved_handle_resolves_once_filled() {
        let t = HandleTable::new(HandleKind::Context);
        let h = t.reserve();
        assert_eq!(t.get(h), Err(HandleError::Stale));
        t.fill(h, Arc::new(3));
        assert_eq!(*t.get(h).unwrap(), 3);
    }

    #[test]
    fn remove_where_takes_only_the_selected() {
        let t = HandleTable::new(HandleKind::Notify);
        let a = t.insert(1);
        let b = t.insert(2);
        assert_eq!(t.remove_where(|&v| v == 2).len(), 1);
        assert!(t.get(a).is_ok());
        assert_eq!(t.get(b), Err(HandleError::Stale));
    }

    #[test]
    fn drain_empties_the_table() {
        let t = HandleTable::new(HandleKind::Context);
        let h = t.insert(1);
        t.insert(2);
        assert_eq!(t.drain().len(), 2);
        assert!(t.is_empty());
        assert_eq!(t.get(h), Err(HandleError::Stale));
    }
}
