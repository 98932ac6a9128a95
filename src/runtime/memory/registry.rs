//! The table of live allocations: what each address range is, who may free it, and the
//! mappings through which the runtime reaches its bytes.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::allocation::{Allocation, Origin, invalid, map_file, map_new, map_view};
use super::host_register::HostRegistrations;
use super::limits::Limits;
use super::placement::{AllocKind, Placement};
use super::policy;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::ACL_ERROR_RT_MEMORY_ALLOCATION;
use crate::error::{AclError, AclResult};
use crate::sync;
use crate::sys::mapping::HUGE_PAGE;
use crate::sys::memfd::MemFd;
use crate::sys::page_size;

/// How many freed ranges are remembered, so that a double free or a copy from freed memory can
/// be reported as such rather than as an unknown address.
const FREED_MEMORY: usize = 4096;

/// A range that was freed recently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freed {
    pub start: usize,
    pub len: usize,
    pub placement: Placement,
    /// An import closed with `aclrtIpcMemClose` is not this process's to free: errors about it
    /// must not call a later `aclrtFree` of it a double free.
    pub origin: Origin,
}

/// What backs an allocation, for exporting it to another process.
#[derive(Debug, Clone)]
pub struct Backing {
    pub placement: Placement,
    /// Start and length of the whole allocation (user addresses).
    pub start: usize,
    pub len: usize,
    /// The file holding its bytes; `start` is at `file_offset` of it.
    pub fd: Arc<MemFd>,
    pub file_offset: u64,
    pub imported: bool,
}

struct Inner {
    /// Live allocations by user start address; they never overlap.
    live: BTreeMap<usize, Arc<Allocation>>,
    /// Bytes of owned device memory in use, by device.
    usage: BTreeMap<i32, u64>,
    /// The most `usage` has been, by device (`aclrtGetMemUsageInfo`).
    peak: BTreeMap<i32, u64>,
    freed: VecDeque<Freed>,
}

/// The registry (one per process in use; tests make their own).
pub struct Registry {
    inner: Mutex<Inner>,
    /// Host memory the user registered (`aclrtHostRegister`): the user's own memory, so it has
    /// a table (and lock) of its own beside the allocations.
    pub(super) host: HostRegistrations,
}

impl Registry {
    pub const fn new() -> Self {
        Registry {
            inner: Mutex::new(Inner {
                live: BTreeMap::new(),
                usage: BTreeMap::new(),
                peak: BTreeMap::new(),
                freed: VecDeque::new(),
            }),
            host: HostRegistrations::new(),
        }
    }

    pub fn alloc_device(&self, device: i32, size: usize, policy: u32, limits: &Limits) -> AclResult<usize> {
        self.alloc_device_aligned(device, size, policy::alignment(policy)?, limits)
    }

    /// Device memory aligned (and its size rounded) to `align`, a power of two of at least a page.
    pub fn alloc_device_aligned(
        &self,
        device: i32,
        size: usize,
        align: usize,
        limits: &Limits,
    ) -> AclResult<usize> {
        let len = rounded(size, align)?;
        self.reserve(device, len as u64, limits.capacity)?;
        let placement = Placement::Device(device);
        match map_new(placement, len, align, limits.strict) {
            Ok(alloc) => Ok(self.insert(alloc)),
            Err(e) => {
                self.unreserve(device, len as u64);
                Err(e)
            }
        }
    }

    pub fn alloc_host(&self, size: usize) -> AclResult<usize> {
        let len = rounded(size, page_size())?;
        Ok(self.insert(map_new(Placement::Host, len, page_size(), false)?))
    }

    /// Managed memory (`aclrtMemAllocManaged`): 2 MiB-aligned, sizes rounded to 2 MiB, never
    /// inaccessible to host code (strict mode does not apply) and counted against no capacity.
    pub fn alloc_managed(&self, device: i32, size: usize) -> AclResult<usize> {
        let len = rounded(size, HUGE_PAGE)?;
        Ok(self.insert(map_new(Placement::Managed(device), len, HUGE_PAGE, false)?))
    }

    /// Runs `f` with the table of live allocations locked once: planning a batch of copies
    /// resolves every address under one lock, not one lock per block.
    pub fn with_live<R>(&self, f: impl FnOnce(&Live<'_>) -> R) -> R {
        let inner = sync::lock(&self.inner);
        f(&Live { live: &inner.live, freed: &inner.freed, host: &self.host })
    }

    /// Counts `len` more bytes against `device`'s capacity, or explains why not.
    fn reserve(&self, device: i32, len: u64, capacity: u64) -> AclResult<()> {
        let mut inner = sync::lock(&self.inner);
        let used = inner.usage.entry(device).or_insert(0);
        if used.checked_add(len).is_none_or(|total| total > capacity) {
            return Err(AclError::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "device {device} is out of memory: {used} bytes in use, {len} requested, \
                     capacity {capacity}"
                ),
            ));
        }
        *used += len;
        let now = *used;
        let peak = inner.peak.entry(device).or_insert(0);
        *peak = (*peak).max(now);
        Ok(())
    }

    /// Counts a physical allocation (`aclrtMallocPhysical`) of `len` bytes against `device`'s
    /// capacity, as `aclrtMalloc` memory is; [`Registry::uncharge`] gives it back.
    pub fn charge(&self, device: i32, len: u64, capacity: u64) -> AclResult<()> {
        self.reserve(device, len, capacity)
    }

    pub fn uncharge(&self, device: i32, len: u64) {
        self.unreserve(device, len);
    }

    /// Records `len` bytes of `fd` shown to the user at `start` (inside a reservation) as memory
    /// of `placement` with pages of `page_size` (the allocation's granularity), so copies, fills,
    /// IPC export and the engine treat it as such. 107000 if
    /// the range overlaps a live allocation.
    pub fn register_mapped(
        &self,
        placement: Placement,
        imported: bool,
        fd: Arc<MemFd>,
        len: usize,
        start: usize,
        page_size: usize,
    ) -> AclResult<()> {
        let end =
            start.checked_add(len).ok_or_else(|| invalid(format!("{len} bytes at {start:#x} overflow")))?;
        let alloc = map_view(placement, imported, fd, len, start, page_size)?;
        let mut inner = sync::lock(&self.inner);
        if let Some((_, a)) = inner.live.range(..end).next_back().filter(|(_, a)| a.end() > start) {
            return Err(invalid(format!("{start:#x}..{end:#x} overlaps the allocation at {:#x}", a.start)));
        }
        inner.live.insert(start, Arc::new(alloc));
        Ok(())
    }

    /// Forgets a range recorded by [`Registry::register_mapped`] (`aclrtUnmapMem`); the
    /// runtime's view is unmapped once no queued copy holds it.
    pub fn unregister_mapped(&self, start: usize) -> AclResult<()> {
        let mut inner = sync::lock(&self.inner);
        match inner.live.get(&start) {
            Some(a) if matches!(a.origin, Origin::Mapped { .. }) => {}
            _ => return Err(invalid(format!("{start:#x} is not the start of a virtual memory mapping"))),
        }
        let alloc = remove(&mut inner, start);
        drop(inner);
        drop(alloc);
        Ok(())
    }

    fn unreserve(&self, device: i32, len: u64) {
        if let Some(used) = sync::lock(&self.inner).usage.get_mut(&device) {
            *used = used.saturating_sub(len);
        }
    }

    fn insert(&self, alloc: Allocation) -> usize {
        let start = alloc.start;
        sync::lock(&self.inner).live.insert(start, Arc::new(alloc));
        start
    }

    /// `aclrtFree` (`kind` Device) or `aclrtFreeHost` (`kind` Host) of `addr`.
    pub fn free(&self, addr: usize, kind: AllocKind) -> AclResult<()> {
        let (api, from) = match kind {
            AllocKind::Device => ("aclrtFree", "aclrtMalloc"),
            AllocKind::Host => ("aclrtFreeHost", "aclrtMallocHost"),
        };
        if addr == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "the pointer to free must not be NULL"));
        }
        let mut inner = sync::lock(&self.inner);
        let Some(alloc) = containing(&inner.live, addr) else {
            return Err(invalid(match freed_at(&inner.freed, addr) {
                Some(f) if matches!(f.origin, Origin::Mapped { .. }) => format!(
                    "{addr:#x} was virtual memory mapped with aclrtMapMem and already unmapped with \
                     aclrtUnmapMem; it is not an allocation of aclrtMalloc"
                ),
                Some(f) if f.origin == Origin::Imported => format!(
                    "{addr:#x} was IPC memory imported with aclrtIpcMemImportByKey and already released \
                     with aclrtIpcMemClose; this process never allocated it, so there is nothing to free"
                ),
                Some(f) if f.start == addr => format!("{addr:#x} was already freed (double free)"),
                Some(f) => {
                    format!("{addr:#x} lies in memory that was already freed (allocation at {:#x})", f.start)
                }
                None => format!("{addr:#x} is not an address returned by {from}"),
            }));
        };
        if alloc.origin == Origin::Imported {
            return Err(invalid(format!(
                "{addr:#x} is IPC memory imported with aclrtIpcMemImportByKey (mapped at {:#x}), not \
                 an allocation of this process: release it with aclrtIpcMemClose(key), not {api}",
                alloc.start
            )));
        }
        if let Origin::Mapped { .. } = alloc.origin {
            return Err(invalid(format!(
                "{addr:#x} is virtual memory mapped with aclrtMapMem (mapping at {:#x}), not an \
                 allocation of {from}: unmap it with aclrtUnmapMem, then release the physical memory \
                 with aclrtFreePhysical and the addresses with aclrtReleaseMemAddress",
                alloc.start
            )));
        }
        if alloc.start != addr {
            return Err(invalid(format!(
                "{addr:#x} points {} bytes into the allocation at {:#x}; pass the address {from} returned",
                addr - alloc.start,
                alloc.start
            )));
        }
        match (kind, alloc.placement) {
            (AllocKind::Device, Placement::Host) => {
                return Err(invalid(format!(
                    "{addr:#x} is host memory from aclrtMallocHost, passed to {api}; free it with aclrtFreeHost"
                )));
            }
            (AllocKind::Host, Placement::Device(_)) => {
                return Err(invalid(format!(
                    "{addr:#x} is device memory from aclrtMalloc, passed to {api}; free it with aclrtFree"
                )));
            }
            (AllocKind::Host, Placement::Managed(_)) => {
                return Err(invalid(format!(
                    "{addr:#x} is managed memory from aclrtMemAllocManaged, passed to {api}; free it with aclrtFree"
                )));
            }
            _ => {}
        }
        let alloc = remove(&mut inner, addr);
        drop(inner);
        // Unmapped here, outside the lock (unless a queued copy still holds the runtime view).
        drop(alloc);
        Ok(())
    }

    /// Frees every allocation of `device` this process made (a device reset); returns how many.
    /// Imported memory is left to the IPC layer, which knows its keys.
    pub fn release_device(&self, device: i32) -> usize {
        let mut inner = sync::lock(&self.inner);
        let doomed: Vec<usize> = inner
            .live
            .values()
            .filter(|a| a.placement == Placement::Device(device) && a.origin == Origin::Owned)
            .map(|a| a.start)
            .collect();
        let released: Vec<_> = doomed.iter().map(|&start| remove(&mut inner, start)).collect();
        drop(inner);
        released.len()
    }

    pub fn usage(&self, device: i32) -> u64 {
        sync::lock(&self.inner).usage.get(&device).copied().unwrap_or(0)
    }

    /// The most device memory `device` has had allocated at once.
    pub fn peak_usage(&self, device: i32) -> u64 {
        sync::lock(&self.inner).peak.get(&device).copied().unwrap_or(0)
    }

    /// Maps `len` bytes of another process's exported memory (`fd`) as device memory of
    /// `device`, inaccessible to host code if `strict`; returns the address for the user.
    pub fn register_import(
        &self,
        device: i32,
        fd: MemFd,
        offset: u64,
        len: usize,
        strict: bool,
    ) -> AclResult<usize> {
        if len == 0 || len % page_size() != 0 {
            return Err(invalid(format!("imported length {len} is not a positive number of pages")));
        }
        let alloc = map_file(
            Placement::Device(device),
            Origin::Imported,
            Arc::new(fd),
            offset,
            len,
            page_size(),
            strict,
        )?;
        Ok(self.insert(alloc))
    }

    /// Unmaps memory mapped by [`Registry::register_import`] (`aclrtIpcMemClose`).
    pub fn close_import(&self, addr: usize) -> AclResult<()> {
        let mut inner = sync::lock(&self.inner);
        match inner.live.get(&addr) {
            Some(a) if a.origin == Origin::Imported => {}
            _ => return Err(invalid(format!("{addr:#x} is not the address of imported IPC memory"))),
        }
        let alloc = remove(&mut inner, addr);
        drop(inner);
        drop(alloc);
        Ok(())
    }

    /// The allocation containing `addr`, if any.
    pub fn find(&self, addr: usize) -> Option<Arc<Allocation>> {
        containing(&sync::lock(&self.inner).live, addr).cloned()
    }

    #[cfg(test)]
    pub fn freed_remembered(&self) -> usize {
        sync::lock(&self.inner).freed.len()
    }

    pub fn backing(&self, addr: usize) -> Option<Backing> {
        self.find(addr).map(|a| Backing {
            placement: a.placement,
            start: a.start,
            len: a.len,
            fd: a.file(),
            file_offset: a.file_offset,
            imported: matches!(a.origin, Origin::Imported | Origin::Mapped { imported: true }),
        })
    }
}

/// The live allocations, seen under the registry's lock (see [`Registry::with_live`]).
pub struct Live<'a> {
    live: &'a BTreeMap<usize, Arc<Allocation>>,
    freed: &'a VecDeque<Freed>,
    /// Registered host memory (its own lock, taken after the allocations' when both are).
    host: &'a HostRegistrations,
}

impl Live<'_> {
    /// Whether `[addr, addr + len)` lies in one registration of host memory as mapped.
    pub fn host_mapped_holding(&self, addr: usize, len: usize) -> bool {
        self.host.mapped_holding(addr, len).is_some()
    }

    /// The allocation containing `addr`, if any.
    pub fn find(&self, addr: usize) -> Option<&Arc<Allocation>> {
        containing(self.live, addr)
    }

    /// A live device allocation sharing at least one byte with `[addr, addr + len)`.
    pub fn device_overlapping(&self, addr: usize, len: usize) -> Option<&Arc<Allocation>> {
        let end = addr.saturating_add(len);
        self.live
            .range(..end)
            .rev()
            .take_while(|(_, a)| a.end() > addr)
            .map(|(_, a)| a)
            .find(|a| a.is_device())
    }

    /// The recently freed range containing `addr`, if it is remembered.
    pub fn freed_at(&self, addr: usize) -> Option<Freed> {
        freed_at(self.freed, addr)
    }

    /// The allocation containing `addr`, or else the gap between allocations it lies in
    /// (`[end of the one before, start of the one after)`), so a caller resolving many nearby
    /// addresses can answer the next ones without a lookup.
    pub fn find_or_gap(&self, addr: usize) -> Result<&Arc<Allocation>, (usize, usize)> {
        let before = self.live.range(..=addr).next_back().map(|(_, a)| a);
        match before {
            Some(a) if addr < a.end() => Ok(a),
            _ => {
                let from = before.map_or(0, |a| a.end());
                let to = self.live.range(addr..).next().map_or(usize::MAX, |(&start, _)| start);
                Err((from, to))
            }
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// `size` rounded up to `align`; size 0 is the caller's error (`ACL_ERROR_INVALID_PARAM`, as
/// the vendor reports it at the API edge).
fn rounded(size: usize, align: usize) -> AclResult<usize> {
    if size == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
    }
    size.checked_next_multiple_of(align).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("size {size} is larger than any allocation can be"),
        )
    })
}

fn containing(live: &BTreeMap<usize, Arc<Allocation>>, addr: usize) -> Option<&Arc<Allocation>> {
    live.range(..=addr).next_back().map(|(_, a)| a).filter(|a| addr < a.end())
}

fn freed_at(freed: &VecDeque<Freed>, addr: usize) -> Option<Freed> {
    // Newest first: an address reused and freed again reports its latest allocation.
    freed.iter().rev().find(|f| addr >= f.start && addr - f.start < f.len).copied()
}

/// Takes `start` out of the table, returns its capacity and remembers it as freed. The caller
/// drops the allocation (unmapping it) after releasing the lock.
fn remove(inner: &mut Inner, start: usize) -> Arc<Allocation> {
    let alloc = inner.live.remove(&start).expect("the caller found this allocation under the same lock");
    if let (Placement::Device(d), Origin::Owned) = (alloc.placement, alloc.origin) {
        if let Some(used) = inner.usage.get_mut(&d) {
            *used = used.saturating_sub(alloc.len as u64);
        }
    }
    if inner.freed.len() == FREED_MEMORY {
        inner.freed.pop_front();
    }
    inner.freed.push_back(Freed {
        start: alloc.start,
        len: alloc.len,
        placement: alloc.placement,
        origin: alloc.origin,
    });
    alloc
}
