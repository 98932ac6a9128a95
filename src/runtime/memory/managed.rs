//! Managed (unified) memory: what `aclrtMemManagedAdvise` advised and where
//! `aclrtMemManagedPrefetchAsync` last prefetched, per 2 MiB chunk of each managed allocation.
//!
//! Managed memory here is one mapping that host code and every copy use alike (see
//! [`super::Placement::Managed`]), so advice and prefetches move no bytes: they are recorded,
//! and `aclrtMemManagedGetAttr` answers from the record, as CUDA's `cudaMemRangeGetAttribute`
//! (which the vendor's API mirrors) does:
//! - `READ_MOSTLY`: an `int`, 1 if every chunk of the range is read-mostly, else 0;
//! - `PREFERRED_LOCATION` / `LAST_PREFETCH_LOCATION`: an `int`, the device id, -1 for the host,
//!   or -2 ("invalid") when unset or not the same over the whole range;
//! - `..._TYPE`: an `int`, the `aclrtMemManagedLocationType` (0, invalid, in those cases);
//! - `..._ID`: an `int`, the device or NUMA id, -2 when there is none;
//! - `ACCESSED_BY`: `dataSize / 4` `int`s, the devices every chunk of the range is advised to be
//!   accessed by, in increasing order, then -2 for the rest.
//!
//! # Rules (codes)
//! A range must lie inside one live managed allocation and its size be a multiple of 2 MiB
//! (advise, prefetch), a location type must be one of `aclrtMemManagedLocationType` and a device
//! id below the device count, an advice one of `aclrtMemManagedAdviseType`, an attribute one of
//! `aclrtMemManagedRangeAttribute` with the data size it needs: 107000 otherwise. NULL pointers,
//! sizes of 0 and non-zero reserved flags are the FFI layer's `ACL_ERROR_INVALID_PARAM`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use super::copy::invalid;
use super::placement::Placement;
use super::registry::Registry;
use crate::error::AclResult;
use crate::sync;
use crate::sys::mapping::HUGE_PAGE;

/// `aclrtMemManagedLocationType` values.
pub const LOCATION_INVALID: u32 = 0;
pub const LOCATION_DEVICE: u32 = 1;
pub const LOCATION_HOST: u32 = 2;
pub const LOCATION_HOST_NUMA: u32 = 3;
pub const LOCATION_HOST_NUMA_CURRENT: u32 = 4;

/// `aclrtMemManagedAdviseType` values.
const SET_READ_MOSTLY: u32 = 0;
const UNSET_READ_MOSTLY: u32 = 1;
const SET_PREFERRED_LOCATION: u32 = 2;
const UNSET_PREFERRED_LOCATION: u32 = 3;
const SET_ACCESSED_BY: u32 = 4;
const UNSET_ACCESSED_BY: u32 = 5;

/// `aclrtMemManagedRangeAttribute` values.
pub const ATTR_READ_MOSTLY: i32 = 1;
pub const ATTR_PREFERRED_LOCATION: i32 = 2;
pub const ATTR_ACCESSED_BY: i32 = 3;
pub const ATTR_PREFERRED_LOCATION_TYPE: i32 = 4;
pub const ATTR_PREFERRED_LOCATION_ID: i32 = 5;
pub const ATTR_LAST_PREFETCH_LOCATION: i32 = 6;
pub const ATTR_LAST_PREFETCH_LOCATION_TYPE: i32 = 7;
pub const ATTR_LAST_PREFETCH_LOCATION_ID: i32 = 8;

/// The host, as a location `int`.
const HOST_ID: i32 = -1;
/// No (or no single) location.
const INVALID_ID: i32 = -2;

/// An `aclrtMemManagedLocation` as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub kind: u32,
    pub id: i32,
}

impl Location {
    /// Checks the location against a machine of `device_count` devices.
    pub fn check(self, device_count: u32) -> AclResult<Location> {
        match self.kind {
            LOCATION_DEVICE if self.id < 0 || self.id as u32 >= device_count => Err(invalid(format!(
                "location device id {} is not a device of this machine (0..{})",
                self.id,
                device_count.saturating_sub(1)
            ))),
            LOCATION_DEVICE | LOCATION_HOST | LOCATION_HOST_NUMA | LOCATION_HOST_NUMA_CURRENT => Ok(self),
            LOCATION_INVALID => {
                Err(invalid("location type ACL_MEM_LOCATIONTYPE_INVALID names no memory".into()))
            }
            other => {
                Err(invalid(format!("location type {other} is not an aclrtMemManagedLocationType (0..=4)")))
            }
        }
    }

    /// The location as one `int`: a device id, or -1 for any host location.
    fn as_int(self) -> i32 {
        if self.kind == LOCATION_DEVICE { self.id } else { HOST_ID }
    }

    /// The id that means something for this type (a device's or a NUMA node's).
    fn id_int(self) -> i32 {
        if matches!(self.kind, LOCATION_DEVICE | LOCATION_HOST_NUMA) { self.id } else { INVALID_ID }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Chunk {
    read_mostly: bool,
    preferred: Option<Location>,
    accessed_by: BTreeSet<i32>,
    last_prefetch: Option<Location>,
}

#[derive(Debug)]
struct Record {
    len: usize,
    chunks: Vec<Chunk>,
}

/// The records of live managed allocations, by start address.
pub struct ManagedState {
    records: Mutex<BTreeMap<usize, Record>>,
}

/// A checked range of managed memory: its allocation and the chunks it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagedRange {
    start: usize,
    len: usize,
    first: usize,
    end: usize,
}

impl ManagedState {
    pub const fn new() -> Self {
        ManagedState { records: Mutex::new(BTreeMap::new()) }
    }

    /// Starts the record of a new managed allocation (replacing any of a freed one there).
    pub fn created(&self, start: usize, len: usize) {
        let chunks = vec![Chunk::default(); len.div_ceil(HUGE_PAGE)];
        sync::lock(&self.records).insert(start, Record { len, chunks });
    }

    /// Forgets the record of a freed allocation.
    pub fn freed(&self, start: usize) {
        sync::lock(&self.records).remove(&start);
    }

    /// Applies `aclrtMemManagedAdvise(range, advise, location)`.
    pub fn advise(
        &self,
        range: ManagedRange,
        advise: u32,
        location: Location,
        device_count: u32,
    ) -> AclResult<()> {
        let change: Box<dyn Fn(&mut Chunk)> = match advise {
            SET_READ_MOSTLY => Box::new(|c| c.read_mostly = true),
            UNSET_READ_MOSTLY => Box::new(|c| c.read_mostly = false),
            SET_PREFERRED_LOCATION => {
                let l = location.check(device_count)?;
                Box::new(move |c| c.preferred = Some(l))
            }
            UNSET_PREFERRED_LOCATION => Box::new(|c| c.preferred = None),
            SET_ACCESSED_BY | UNSET_ACCESSED_BY => {
                let l = location.check(device_count)?;
                let id = l.as_int();
                if advise == SET_ACCESSED_BY {
                    Box::new(move |c| {
                        c.accessed_by.insert(id);
                    })
                } else {
                    Box::new(move |c| {
                        c.accessed_by.remove(&id);
                    })
                }
            }
            other => {
                return Err(invalid(format!("advice {other} is not an aclrtMemManagedAdviseType (0..=5)")));
            }
        };
        self.update(range, |c| change(c))
    }

    /// Records that `range` was prefetched to `location` (when the prefetch task runs).
    pub fn prefetched(&self, range: ManagedRange, location: Location) {
        // The allocation may have been freed since the prefetch was queued: nothing to record.
        let _ = self.update(range, |c| c.last_prefetch = Some(location));
    }

    fn update(&self, range: ManagedRange, f: impl Fn(&mut Chunk)) -> AclResult<()> {
        let mut records = sync::lock(&self.records);
        let record = records
            .get_mut(&range.start)
            .filter(|r| r.len == range.len)
            .ok_or_else(|| invalid(format!("{:#x} is no longer managed memory (freed?)", range.start)))?;
        record.chunks[range.first..range.end].iter_mut().for_each(f);
        Ok(())
    }

    /// The value of `attribute` over `range`, written into `out` (`data_size` bytes of `int`s).
    pub fn attribute(&self, range: ManagedRange, attribute: i32, data_size: usize) -> AclResult<Vec<i32>> {
        let scalar = |v: i32| -> AclResult<Vec<i32>> {
            if data_size != 4 {
                return Err(invalid(format!(
                    "attribute {attribute} is one int: dataSize must be 4, not {data_size}"
                )));
            }
            Ok(vec![v])
        };
        let records = sync::lock(&self.records);
        let record = records
            .get(&range.start)
            .filter(|r| r.len == range.len)
            .ok_or_else(|| invalid(format!("{:#x} is no longer managed memory (freed?)", range.start)))?;
        let chunks = &record.chunks[range.first..range.end];
        let uniform = |f: &dyn Fn(&Chunk) -> Option<Location>| -> Option<Location> {
            let first = f(&chunks[0]);
            chunks.iter().all(|c| f(c) == first).then_some(first).flatten()
        };
        match attribute {
            ATTR_READ_MOSTLY => scalar(i32::from(chunks.iter().all(|c| c.read_mostly))),
            ATTR_PREFERRED_LOCATION => scalar(uniform(&|c| c.preferred).map_or(INVALID_ID, Location::as_int)),
            ATTR_PREFERRED_LOCATION_TYPE => {
                scalar(uniform(&|c| c.preferred).map_or(LOCATION_INVALID as i32, |l| l.kind as i32))
            }
            ATTR_PREFERRED_LOCATION_ID => {
                scalar(uniform(&|c| c.preferred).map_or(INVALID_ID, Location::id_int))
            }
            ATTR_LAST_PREFETCH_LOCATION => {
                scalar(uniform(&|c| c.last_prefetch).map_or(INVALID_ID, Location::as_int))
            }
            ATTR_LAST_PREFETCH_LOCATION_TYPE => {
                scalar(uniform(&|c| c.last_prefetch).map_or(LOCATION_INVALID as i32, |l| l.kind as i32))
            }
            ATTR_LAST_PREFETCH_LOCATION_ID => {
                scalar(uniform(&|c| c.last_prefetch).map_or(INVALID_ID, Location::id_int))
            }
            ATTR_ACCESSED_BY => {
                if data_size == 0 || data_size % 4 != 0 {
                    return Err(invalid(format!(
                        "ACCESSED_BY answers ints: dataSize must be a positive multiple of 4, not {data_size}"
                    )));
                }
                let mut common = chunks[0].accessed_by.clone();
                for c in &chunks[1..] {
                    common.retain(|d| c.accessed_by.contains(d));
                }
                let mut out: Vec<i32> = common.into_iter().take(data_size / 4).collect();
                out.resize(data_size / 4, INVALID_ID);
                Ok(out)
            }
            other => {
                Err(invalid(format!("attribute {other} is not an aclrtMemManagedRangeAttribute (1..=8)")))
            }
        }
    }
}

impl Default for ManagedState {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// Checks that `[addr, addr + size)` lies inside one live managed allocation (`aligned`:
    /// and that `size` is a whole number of 2 MiB chunks, as advice and prefetches need).
    pub fn managed_range(&self, addr: usize, size: usize, aligned: bool) -> AclResult<ManagedRange> {
        if aligned && size % HUGE_PAGE != 0 {
            return Err(invalid(format!("size {size} is not a multiple of 2 MiB")));
        }
        let a = self
            .find(addr)
            .filter(|a| matches!(a.placement, Placement::Managed(_)))
            .ok_or_else(|| invalid(format!("{addr:#x} is not memory from aclrtMemAllocManaged")))?;
        if !a.holds(addr, size) {
            return Err(invalid(format!(
                "{addr:#x} + {size} bytes runs past the end of its managed allocation ({:#x}, {} bytes)",
                a.start, a.len
            )));
        }
        let first = (addr - a.start) / HUGE_PAGE;
        let end = (addr - a.start + size).div_ceil(HUGE_PAGE);
        Ok(ManagedRange { start: a.start, len: a.len, first, end: end.max(first + 1) })
    }
}
