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
//! id: a slot's generation (high 24 bits) and its index in the table (low 24 bits, the lowest 4
//! of them choosing the slot's shard). Removing an
//! object moves its slot to the next generation, so a stale handle never names a newer object;
//! a slot whose generations are used up is retired, so an id is never reused within a process.
//!
//! # Lookups run in parallel
//! Every record, wait, synchronise and engine call resolves a handle, from many threads at
//! once. The slots sit in 16 shards, each behind its own `RwLock` on its own cache lines: a
//! lookup is an index and a generation compare under one shard's read lock, so lookups do not
//! queue behind each other, and lookups of objects in different shards share no memory they
//! write. Only creating and destroying objects take a (shard's) write lock.
//!
//! # One trait per kind
//! [`Handle`] ties a kind to its table and to the error family its callers report in, so the
//! FFI edge resolves every kind with one function (`ffi::handles::resolve`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use crate::sync;

const MAGIC: u64 = 0xA5;
/// Bits of a handle that name the object (the rest are the magic byte and the kind).
pub const ID_BITS: u32 = 48;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
const LAST_GENERATION: u32 = (1 << (ID_BITS - INDEX_BITS)) - 1;
/// The low bits of a slot index choose its shard.
const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;

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
    /// A physical allocation of virtual memory management (`aclrtDrvMemHandle`).
    PhysicalMemory = 8,
    /// A counting notify (`aclrtCntNotify`).
    CntNotify = 9,
    /// An HCCL communicator (`HcclComm`).
    HcclComm = 10,
    /// A shared buffer (`aclrtMbuf`).
    Mbuf = 20,
    /// A label (`aclrtLabel`).
    Label = 21,
    /// A list of labels (`aclrtLabelList`).
    LabelList = 22,
    /// A user allocator's description (`aclrtAllocatorDesc`).
    AllocatorDesc = 23,
    /// A kernel argument block (`aclrtArgsHandle`).
    KernelArgs = 24,
    /// A model run instance (`aclmdlRI`): a captured or built task graph.
    ModelRi = 25,
    /// A task of a model run instance (`aclmdlRITask`).
    ModelTask = 26,
    /// A task group of a capture (`aclrtTaskGrp`).
    TaskGroup = 27,
    /// A condition handle of a model run instance (`aclmdlRICondHandle`).
    CondHandle = 28,
    /// A stream of a model run instance, as `aclmdlRIGetStreams` names it.
    ModelStream = 29,
    /// A TDT data item (`acltdtDataItem`).
    TdtDataItem = 64,
    /// A TDT dataset (`acltdtDataset`).
    TdtDataset = 65,
    /// A TDT channel handle (`acltdtChannelHandle`).
    TdtChannel = 66,
    /// A TDT queue's attributes (`acltdtQueueAttr`).
    TdtQueueAttr = 67,
    /// A TDT queue route (`acltdtQueueRoute`).
    TdtQueueRoute = 68,
    /// A list of TDT queue routes (`acltdtQueueRouteList`).
    TdtQueueRouteList = 69,
    /// A TDT queue route query (`acltdtQueueRouteQueryInfo`).
    TdtQueueRouteQuery = 70,
    /// A profiling configuration (`aclprofConfig`).
    ProfConfig = 40,
    /// A msproftx stamp (`aclprofStamp`, a `void *` in the vendor's header).
    ProfStamp = 41,
    /// A step of a training loop (`aclprofStepInfo`).
    ProfStepInfo = 42,
    /// A model subscription's configuration (`aclprofSubscribeConfig`).
    ProfSubscribeConfig = 43,
}

/// The handle of `kind` with the 48-bit `id`: for a kind whose ids are given out by a table
/// of its own rather than a [`HandleTable`] (transfer requests: an engine's slab of request
/// slots), so its handles look and are checked like every other.
pub const fn compose(kind: HandleKind, id: u64) -> u64 {
    (MAGIC << 56) | ((kind as u64) << ID_BITS) | (id & ID_MASK)
}

/// The 48-bit id of `raw`, if it is a handle of `kind` ([`compose`]'s inverse).
pub fn id_of(raw: u64, kind: HandleKind) -> Result<u64, HandleError> {
    if raw == 0 {
        return Err(HandleError::Null);
    }
    if raw >> 56 != MAGIC {
        return Err(HandleError::Foreign);
    }
    if (raw >> ID_BITS) & 0xFF != kind as u64 {
        return Err(HandleError::WrongKind { expected: kind });
    }
    Ok(raw & ID_MASK)
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

/// An error family (one per C API) that can say why a handle did not resolve, in its own codes.
pub trait FromHandleError {
    /// The error for handle `what` (e.g. "stream") failing with `e`.
    fn from_handle_error(what: &str, e: HandleError) -> Self;
}

/// A kind of handle: its table, and the error family its C API reports failures in.
///
/// Declared with [`handle_kind!`](crate::handle_kind), which makes the table and the impl from
/// one line, so the kind the table stamps into its handles cannot drift from the type.
pub trait Handle {
    /// The object a handle of this kind names.
    type Target: Send + Sync + 'static;
    /// The error its API reports a bad handle with.
    type Error: FromHandleError;
    fn table() -> &'static HandleTable<Self::Target>;

    /// The live object `raw` names, or the family's error for handle `what`.
    fn resolve(raw: u64, what: &str) -> Result<Arc<Self::Target>, Self::Error> {
        Self::table().get(raw).map_err(|e| Self::Error::from_handle_error(what, e))
    }

    /// Removes the object `raw` names (the handle is stale from then on), or the family's
    /// error for handle `what`.
    fn release(raw: u64, what: &str) -> Result<Arc<Self::Target>, Self::Error> {
        Self::table().remove(raw).map_err(|e| Self::Error::from_handle_error(what, e))
    }
}

/// Declares the static table of one handle kind and makes `$handle` its [`Handle`]:
///
/// `handle_kind!(pub static STREAMS: Stream => Stream, AclError);` — a table of `Stream`s whose
/// handles are of kind `HandleKind::Stream`, resolved as `Stream`, reported in `AclError`.
/// `$handle` may be a marker type whose `Target` is another (e.g. `()` for handles that are
/// only numbers).
#[macro_export]
macro_rules! handle_kind {
    ($(#[$meta:meta])* $vis:vis static $table:ident: $kind:ident => $handle:ty, target $target:ty, $error:ty) => {
        $(#[$meta])*
        $vis static $table: $crate::handle::HandleTable<$target> =
            $crate::handle::HandleTable::new($crate::handle::HandleKind::$kind);

        impl $crate::handle::Handle for $handle {
            type Target = $target;
            type Error = $error;
            fn table() -> &'static $crate::handle::HandleTable<$target> {
                &$table
            }
        }
    };
    ($(#[$meta:meta])* $vis:vis static $table:ident: $kind:ident => $handle:ty, $error:ty) => {
        $crate::handle_kind!($(#[$meta])* $vis static $table: $kind => $handle, target $handle, $error);
    };
}

/// A table of live objects of one kind, addressed by handle value.
pub struct HandleTable<T> {
    kind: HandleKind,
    shards: [Shard<T>; SHARDS],
    /// The shard the next object goes to: round robin, so objects spread over the shards.
    next: AtomicUsize,
}

/// One lock's share of a table, alone on its cache lines: a read lock is a write to the lock's
/// word, and lookups of objects in different shards must not touch the same line.
#[repr(align(128))]
struct Shard<T>(RwLock<Slots<T>>);

struct Slots<T> {
    entries: Vec<Slot<T>>,
    /// Free indices, oldest first: reusing the longest-free slot spreads generations evenly.
    free: VecDeque<u32>,
    live: usize,
}

struct Slot<T> {
    generation: u32,
    state: State<T>,
}

enum State<T> {
    Free,
    /// Handed out by [`HandleTable::reserve`], not filled yet.
    Reserved,
    Live(Arc<T>),
}

/// Where a handle's object lives: its shard, its index there, and the generation it names.
#[derive(Clone, Copy)]
struct Place {
    shard: usize,
    index: usize,
    generation: u32,
}

impl<T> HandleTable<T> {
    pub const fn new(kind: HandleKind) -> Self {
        HandleTable {
            kind,
            shards: [const { Shard(RwLock::new(Slots::new())) }; SHARDS],
            next: AtomicUsize::new(0),
        }
    }

    /// Stores `value` and returns the handle that names it.
    pub fn insert(&self, value: T) -> u64 {
        self.insert_arc(Arc::new(value))
    }

    pub fn insert_arc(&self, value: Arc<T>) -> u64 {
        self.place(State::Live(value))
    }

    /// Allocates a handle that names nothing yet, for an object that must know its own handle
    /// before it exists; it resolves as stale until [`HandleTable::fill`]. Removing it frees it.
    pub fn reserve(&self) -> u64 {
        self.place(State::Reserved)
    }

    fn place(&self, state: State<T>) -> u64 {
        let shard = self.next.fetch_add(1, Ordering::Relaxed) % SHARDS;
        let mut slots = sync::write(&self.shards[shard].0);
        let (index, generation) = slots.take_free();
        if matches!(state, State::Live(_)) {
            slots.live += 1;
        }
        slots.entries[index as usize].state = state;
        self.handle(Place { shard, index: index as usize, generation })
    }

    /// Makes a reserved handle name `value`.
    pub fn fill(&self, raw: u64, value: Arc<T>) {
        let at = self.decode(raw).expect("fill takes a handle from reserve");
        let mut slots = sync::write(&self.shards[at.shard].0);
        let slot = slots.entries.get_mut(at.index).expect("fill takes a handle from reserve");
        assert!(
            slot.generation == at.generation && matches!(slot.state, State::Reserved),
            "fill takes a handle from reserve"
        );
        slot.state = State::Live(value);
        slots.live += 1;
    }

    fn handle(&self, at: Place) -> u64 {
        let index = ((at.index as u64) << SHARD_BITS) | at.shard as u64;
        compose(self.kind, (u64::from(at.generation) << INDEX_BITS) | index)
    }

    /// Where the object `raw` names lives, if it is a handle of this table's kind.
    fn decode(&self, raw: u64) -> Result<Place, HandleError> {
        let id = id_of(raw, self.kind)?;
        let index = id & INDEX_MASK;
        Ok(Place {
            shard: (index as usize) % SHARDS,
            index: (index >> SHARD_BITS) as usize,
            generation: (id >> INDEX_BITS) as u32,
        })
    }

    /// The live object `raw` names.
    pub fn get(&self, raw: u64) -> Result<Arc<T>, HandleError> {
        let at = self.decode(raw)?;
        match sync::read(&self.shards[at.shard].0).entries.get(at.index) {
            Some(Slot { generation, state: State::Live(v) }) if *generation == at.generation => {
                Ok(Arc::clone(v))
            }
            _ => Err(HandleError::Stale),
        }
    }

    /// Removes the object `raw` names; the handle is stale from then on. Holders of the `Arc`
    /// returned by earlier `get`s keep the object alive until they are done.
    pub fn remove(&self, raw: u64) -> Result<Arc<T>, HandleError> {
        let at = self.decode(raw)?;
        let mut slots = sync::write(&self.shards[at.shard].0);
        let Some(slot) = slots.entries.get_mut(at.index).filter(|s| s.generation == at.generation) else {
            return Err(HandleError::Stale);
        };
        match std::mem::replace(&mut slot.state, State::Free) {
            State::Live(v) => {
                slots.release(at.index);
                slots.live -= 1;
                Ok(v)
            }
            State::Reserved => {
                slots.release(at.index);
                Err(HandleError::Stale)
            }
            State::Free => Err(HandleError::Stale),
        }
    }

    /// Removes and returns the live objects `pred` selects (for a device's teardown).
    pub fn remove_where(&self, pred: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut gone = Vec::new();
        for shard in &self.shards {
            let mut slots = sync::write(&shard.0);
            let chosen: Vec<usize> = (slots.entries.iter().enumerate())
                .filter(|(_, s)| matches!(&s.state, State::Live(v) if pred(v)))
                .map(|(i, _)| i)
                .collect();
            gone.extend(chosen.into_iter().filter_map(|i| slots.take_live(i)));
        }
        gone
    }

    /// The live objects `pred` selects, left in the table (e.g. every stream of a device).
    pub fn live_where(&self, pred: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut found = Vec::new();
        for shard in &self.shards {
            let slots = sync::read(&shard.0);
            found.extend(slots.entries.iter().filter_map(|s| match &s.state {
                State::Live(v) if pred(v) => Some(Arc::clone(v)),
                _ => None,
            }));
        }
        found
    }

    /// The handle that names `obj`, if it is live in this table (a scan: for rare queries,
    /// such as `aclmdlRITaskGetParams` naming the event a recorded task holds).
    pub fn handle_of(&self, obj: &Arc<T>) -> Option<u64> {
        for (shard, s) in self.shards.iter().enumerate() {
            let slots = sync::read(&s.0);
            for (index, slot) in slots.entries.iter().enumerate() {
                if matches!(&slot.state, State::Live(v) if Arc::ptr_eq(v, obj)) {
                    return Some(self.handle(Place { shard, index, generation: slot.generation }));
                }
            }
        }
        None
    }

    /// Removes and returns every live object (for process-wide teardown).
    pub fn drain(&self) -> Vec<Arc<T>> {
        self.remove_where(|_| true)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| sync::read(&s.0).live).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Slots<T> {
    const fn new() -> Self {
        Slots { entries: Vec::new(), free: VecDeque::new(), live: 0 }
    }

    /// A free slot's index and generation: the oldest free one, else a new one.
    fn take_free(&mut self) -> (u32, u32) {
        if let Some(index) = self.free.pop_front() {
            return (index, self.entries[index as usize].generation);
        }
        let index = self.entries.len() as u64;
        assert!(index <= INDEX_MASK >> SHARD_BITS, "handle slots exhausted");
        self.entries.push(Slot { generation: 0, state: State::Free });
        (index as u32, 0)
    }

    /// Moves a slot just emptied to its next generation, and back to the free list unless its
    /// generations are used up.
    fn release(&mut self, index: usize) {
        let slot = &mut self.entries[index];
        if slot.generation < LAST_GENERATION {
            slot.generation += 1;
            self.free.push_back(index as u32);
        } else {
            // Retired: its next generation would repeat an id already handed out.
            slot.generation = u32::MAX;
        }
    }

    fn take_live(&mut self, index: usize) -> Option<Arc<T>> {
        if !matches!(self.entries[index].state, State::Live(_)) {
            return None;
        }
        let State::Live(v) = std::mem::replace(&mut self.entries[index].state, State::Free) else {
            unreachable!("checked above")
        };
        self.release(index);
        self.live -= 1;
        Some(v)
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
    fn a_removed_reservation_is_stale_and_its_slot_is_reused_under_a_new_id() {
        let t: HandleTable<u8> = HandleTable::new(HandleKind::Context);
        let h = t.reserve();
        assert_eq!(t.remove(h), Err(HandleError::Stale));
        let next = t.insert(1);
        assert_ne!(next, h);
        assert_eq!(t.get(h), Err(HandleError::Stale));
        assert_eq!(*t.get(next).unwrap(), 1);
    }

    #[test]
    fn a_slot_whose_generations_are_used_up_is_never_handed_out_again() {
        let mut slots: Slots<u8> = Slots::new();
        assert_eq!(slots.take_free(), (0, 0));
        slots.entries[0].generation = LAST_GENERATION;
        slots.release(0);
        assert_eq!(slots.take_free(), (1, 0), "a new slot, not the retired one");
        slots.release(1);
        assert_eq!(slots.take_free(), (1, 1), "a slot with generations left is reused");
    }

    #[test]
    fn objects_spread_over_the_shards_and_all_resolve() {
        let t = HandleTable::new(HandleKind::Event);
        let handles: Vec<u64> = (0..100u32).map(|i| t.insert(i)).collect();
        let shards: std::collections::BTreeSet<usize> =
            handles.iter().map(|&h| t.decode(h).unwrap().shard).collect();
        assert_eq!(shards.len(), SHARDS);
        for (i, &h) in handles.iter().enumerate() {
            assert_eq!(*t.get(h).unwrap(), i as u32);
        }
        assert_eq!(t.len(), 100);
        assert_eq!(t.remove_where(|&v| v % 2 == 0).len(), 50);
        assert_eq!(t.len(), 50);
    }

    #[test]
    fn many_threads_resolve_while_others_create_and_destroy() {
        let t: Arc<HandleTable<u64>> = Arc::new(HandleTable::new(HandleKind::Stream));
        let kept: Vec<u64> = (0..16).map(|i| t.insert(i)).collect();
        let threads: Vec<_> = (0..4)
            .map(|n| {
                let (t, kept) = (Arc::clone(&t), kept.clone());
                std::thread::spawn(move || {
                    for round in 0..if cfg!(miri) { 50 } else { 2000u64 } {
                        if n % 2 == 0 {
                            let h = t.insert(round);
                            assert_eq!(*t.remove(h).unwrap(), round);
                        }
                        let i = (round % 16) as usize;
                        assert_eq!(*t.get(kept[i]).unwrap(), i as u64);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|th| th.join().unwrap());
        assert_eq!(t.len(), 16);
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
