//! Device and pinned-host memory: `aclrtMalloc`, `aclrtFree`, `aclrtMallocHost`,
//! `aclrtFreeHost`, the checks behind `aclrtMemcpy`/`aclrtMemset`, `aclrtGetMemInfo`, host
//! memory registration and pointer attributes; and, each in a file of its own with its rules,
//! batches of copies (`batch`), 2D copies (`copy2d`), 32-bit fills (`fill32`), the allocation
//! variants (`variants`) and managed memory (`managed`).
//!
//! # Allocations
//! Every allocation is its own memfd mapped shared ([`crate::sys`]), so a later IPC layer can
//! pass the descriptor ([`backing`]) to another process without copying. A process-wide
//! registry records each live range: its placement (a device, or pinned host), the file, and
//! the *runtime view*, the read-write mapping every runtime copy and fill goes through.
//! Normally the user's address is the runtime view itself. In strict mode
//! (`ASCENDLESS_STRICT_DEVICE_MEMORY=1`, passed in as [`Limits::strict`]) the user instead gets
//! a second, `PROT_NONE` mapping of the same file: host code that dereferences device memory
//! faults, as on an NPU, while every runtime API still works.
//!
//! Huge-page policies give 2 MiB-aligned memory (the 1 GiB ones too: see
//! `policy::alignment`), the others page-aligned; sizes are rounded up to the alignment and
//! the rounded size counts against the device's capacity. Pinned host memory is page-aligned
//! and counts against nothing. Freed ranges are remembered (the last 4096), so errors can say
//! "already freed" rather than "unknown pointer".
//!
//! # Copies: who vouches for which memory
//! The core is safe Rust: it moves bytes only through [`RawSpan`]s. A copy is made in two steps.
//! 1. [`plan_copy`] / [`plan_memset`] check everything the runtime can know and resolve each
//!    end the registry owns (device memory, pinned host memory) to a span of its runtime view.
//!    Such a span holds the mapping alive, so a plan queued on a stream survives a racing
//!    `aclrtFree`: the user's address is released at once, the bytes when the copy is done.
//! 2. An end in other host memory is left as a [`HostRange`] that only the C caller's contract
//!    makes valid. The FFI layer completes the plan with [`CopyPlan::vouch`], passing
//!    `|r| unsafe { r.vouch() }`: that closure is the single `unsafe` step of a copy, with the
//!    caller's contract (for the async variants: the buffer stays valid until the stream has
//!    run the task) as its SAFETY argument. The result, [`ReadyCopy`] / [`ReadyFill`], is
//!    `Send` and runs now or later on a stream's thread.
//!
//! # Rules (error numbers)
//! - `aclrtMalloc`/`aclrtMallocHost` size 0: `ACL_ERROR_INVALID_PARAM` (100000), as the vendor
//!   reports it at the API edge; a policy other than 0..=7 with the bits 0x100, 0x1000,
//!   0x100000: `ACL_ERROR_RT_PARAM_INVALID` (107000); beyond the capacity, or the system refusing
//!   memory: `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001).
//! - free: NULL is 100000; anything but the start of a live allocation of the right kind is
//!   107000, saying why (unknown, interior, already freed, host memory to `aclrtFree`, device
//!   memory to `aclrtFreeHost`, imported IPC memory, live or already closed: the vendor leaves
//!   that case undocumented, and the message says to use `aclrtIpcMemClose`).
//! - copy: a kind outside 0..=7, `count > destMax`, overlapping ranges, a device end (as the
//!   kind says, or for `ACL_MEMCPY_DEFAULT` as the registry says) that is not wholly inside one
//!   live device allocation, or a host end touching device memory: 107000. NULL `dst`/`src`
//!   with `count > 0`: 100000. `count` 0 succeeds and does nothing (NULL allowed).
//!   `HOST_TO_BUF_TO_DEVICE` is `HOST_TO_DEVICE`; `INNER_`/`INTER_DEVICE_TO_DEVICE` are
//!   `DEVICE_TO_DEVICE` (which devices the two ends are on is not checked).
//! - memset: as copy, with the address deciding host or device (the vendor's rule).
//! - mem info: every `aclrtMemAttr` (0..=17) reports the device's one pool: free is capacity minus
//!   usage; other attributes `ACL_ERROR_RT_INVALID_MEMORY_TYPE` (107016), as the vendor.
//!
//! # Registered host memory and what an address is
//! `aclrtHostRegister*` records ranges of the caller's own memory in a table of their own
//! (`host_register.rs`); the runtime never maps or frees them. A mapped registration's device
//! pointer is the host address, and it may be the device end of a copy (the vendor leaves that
//! undefined). [`attributes_of`] answers for every kind of range (device, imported, pinned,
//! registered, unknown) and is what `aclrtPointerGetAttributes` and `aclrtCheckMemType` read;
//! a new kind of range is one more variant of [`RangeKind`]. The choices where the vendor is
//! silent are in `docs/memory.md`.
//!
//! # Managed memory
//! `aclrtMemAllocManaged` memory is a third placement, [`Placement::Managed`]: one mapping
//! (never made inaccessible by strict mode) that host code uses directly and that copies take
//! as device memory when their kind says device and as host memory otherwise. It is freed with
//! `aclrtFree`, 2 MiB-aligned, and counts against no capacity. Advice and prefetches are
//! recorded per 2 MiB chunk (`managed`), as there are no bytes to move.
//!
//! # Batches
//! A batch is planned as one: every copy is checked, under one lock of the registry, before
//! any byte moves, so a refused batch copies nothing; the failure index names the copy whose
//! location or direction was wrong. A ready batch holds one span per buffer it touches and runs
//! as one stream task in the asynchronous form.
//!
//! Device ids are not checked here: the device layer resolves and validates them first.
//!
//! # Virtual memory
//! Reservations, physical allocations and their mappings (`aclrtReserveMemAddress`,
//! `aclrtMallocPhysical`, `aclrtMapMem`, ...) are in `vmm.rs` and `physical.rs`; a mapped range
//! is recorded in the same registry as device memory of its allocation's device (pinned host
//! memory for host allocations), so every API above treats it as such. Its rules are in
//! `vmm.rs`.

mod allocation;
mod batch;
mod copy;
mod copy2d;
mod fill32;
mod host_register;
mod limits;
mod managed;
mod physical;
mod placement;
mod policy;
mod ranges;
mod registration;
mod registry;
#[cfg(test)]
mod tests;
mod usage;
mod variants;
mod vmm;

pub use batch::{BatchArgs, BatchAttr, BatchError, BatchForm, BatchPlan, MAX_SYNC_BATCH, MemLoc, ReadyBatch};
pub use copy::{CopyPlan, FillPlan, ReadyCopy, ReadyFill};
pub use copy2d::{Plan2d, Ready2d, Shape};
pub use fill32::ReadyFill32;
pub use host_register::HostFlags;
pub use limits::Limits;
pub use managed::{Location as ManagedLocation, ManagedRange};
pub use physical::{Location, PHYSICALS, Physical, Props};
pub use placement::{AllocKind, Placement};
pub use ranges::{Location as PtrLocation, MEM_TYPE_DEV, MEM_TYPE_DVPP, MEM_TYPE_RSVD, RangeInfo, RangeKind};
pub use registration::{engine_reaches_registered_memory, flags_v1, flags_v2};
pub use registry::Backing;
pub use usage::Component;
pub use variants::{CfgAttr, Variant};
pub use vmm::{ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE};

pub use crate::sys::memfd::MemFd;
pub use crate::sys::span::{HostRange, RawSpan};

use crate::error::AclResult;
use managed::ManagedState;
use registry::Registry;

static REGISTRY: Registry = Registry::new();
static MANAGED: ManagedState = ManagedState::new();

/// `aclrtMalloc(size, policy)` on `device`: the address for the user.
pub fn alloc_device(device: i32, size: usize, policy: u32, limits: &Limits) -> AclResult<usize> {
    super::device::on_release("allocation(s)", release_device);
    REGISTRY.alloc_device(device, size, policy, limits)
}

/// `aclrtMallocHost(size)`: page-aligned, always host-accessible, not counted against any device.
pub fn alloc_host(size: usize) -> AclResult<usize> {
    REGISTRY.alloc_host(size)
}

/// `aclrtFree` (`AllocKind::Device`) or `aclrtFreeHost` (`AllocKind::Host`).
pub fn free(addr: usize, kind: AllocKind) -> AclResult<()> {
    REGISTRY.free(addr, kind)?;
    MANAGED.freed(addr);
    Ok(())
}

/// `aclrtMallocAlign32` / `aclrtMallocCached` / `aclrtMallocWithCfg` on `device` (see
/// `variants` for how each reads `policy`; `aclrtMallocWithCfg`'s attributes are checked
/// first with [`check_device_cfg`]).
pub fn alloc_device_variant(
    device: i32,
    size: usize,
    variant: Variant,
    policy: u32,
    limits: &Limits,
) -> AclResult<usize> {
    super::device::on_release("allocation(s)", release_device);
    REGISTRY.alloc_device_aligned(device, size, variants::alignment(variant, policy, size), limits)
}

pub use variants::{check_device_cfg, check_host_cfg};

/// `aclrtMemAllocManaged(size)` while `device` is current: the address, 2 MiB-aligned.
pub fn alloc_managed(device: i32, size: usize) -> AclResult<usize> {
    let addr = REGISTRY.alloc_managed(device, size)?;
    let len = backing(addr).map_or(size, |b| b.len);
    MANAGED.created(addr, len);
    Ok(addr)
}

/// Checks a range of managed memory (`aligned`: a whole number of 2 MiB chunks).
pub fn managed_range(addr: usize, size: usize, aligned: bool) -> AclResult<ManagedRange> {
    REGISTRY.managed_range(addr, size, aligned)
}

/// `aclrtMemManagedAdvise` on a checked range (`device_count` bounds device ids).
pub fn managed_advise(
    range: ManagedRange,
    advise: u32,
    location: ManagedLocation,
    device_count: u32,
) -> AclResult<()> {
    MANAGED.advise(range, advise, location, device_count)
}

/// Records a prefetch of `range` to `location` (the prefetch task calls it when it runs).
pub fn managed_prefetched(range: ManagedRange, location: ManagedLocation) {
    MANAGED.prefetched(range, location);
}

/// `aclrtMemManagedGetAttr`: the `int`s to hand out for `attribute` over `range`.
pub fn managed_attribute(range: ManagedRange, attribute: i32, data_size: usize) -> AclResult<Vec<i32>> {
    MANAGED.attribute(range, attribute, data_size)
}

/// Bytes of device memory `device` has allocated (rounded sizes; imports excluded).
pub fn usage(device: i32) -> u64 {
    REGISTRY.usage(device)
}

/// Frees every allocation this process made on `device` (`aclrtResetDevice` at reference count
/// 0); returns how many. Imported memory stays mapped until the IPC layer closes it.
pub fn release_device(device: i32) -> usize {
    REGISTRY.release_device(device)
}

/// Maps another process's exported memory (`len` bytes of `fd` from `offset`, whole pages) as
/// device memory of `device`; returns the user's address. Copies treat it as device memory;
/// `aclrtFree` refuses it; [`close_import`] unmaps it. It does not count against the capacity.
pub fn register_import(device: i32, fd: MemFd, offset: u64, len: usize, strict: bool) -> AclResult<usize> {
    REGISTRY.register_import(device, fd, offset, len, strict)
}

/// Unmaps memory mapped by [`register_import`] (once any queued copy touching it has run).
pub fn close_import(addr: usize) -> AclResult<()> {
    REGISTRY.close_import(addr)
}

/// The allocation containing `addr` and the file behind it (for exporting it).
pub fn backing(addr: usize) -> Option<Backing> {
    REGISTRY.backing(addr)
}

/// Checks `aclrtMemcpy(dst, dest_max, src, count, kind)` and resolves what the registry owns.
pub fn plan_copy(dst: usize, dest_max: usize, src: usize, count: usize, kind: i32) -> AclResult<CopyPlan> {
    REGISTRY.plan_copy(dst, dest_max, src, count, kind)
}

/// Checks `aclrtMemset(dev, max_count, value, count)` and resolves what the registry owns.
pub fn plan_memset(dev: usize, max_count: usize, value: i32, count: usize) -> AclResult<FillPlan> {
    REGISTRY.plan_memset(dev, max_count, value, count)
}

/// Checks an `aclrtMemAttr` value (0..=17; else `ACL_ERROR_RT_INVALID_MEMORY_TYPE`).
pub fn check_mem_attr(attr: i32) -> AclResult<()> {
    policy::check_mem_attr(attr)
}

/// Checks a batch of copies (`aclrtMemcpyBatch` and its forms); `Ok(None)` when every size
/// is 0. See `batch` for the rules and the failure index.
pub fn plan_batch(args: &BatchArgs<'_>, form: BatchForm) -> Result<Option<BatchPlan>, BatchError> {
    REGISTRY.plan_batch(args, form)
}

/// Checks `aclrtMemcpy2d` (`asynchronous`: `aclrtMemcpy2dAsync`) and resolves what the
/// registry owns.
pub fn plan_copy2d(dst: usize, src: usize, shape: Shape, kind: i32, asynchronous: bool) -> AclResult<Plan2d> {
    REGISTRY.plan_copy2d(dst, src, shape, kind, asynchronous)
}

/// Checks `aclrtMemsetD32(ptr, mem_size, value, n)`.
pub fn plan_memset_d32(ptr: usize, mem_size: usize, value: u32, n: usize) -> AclResult<ReadyFill32> {
    REGISTRY.plan_memset_d32(ptr, mem_size, value, n)
}

/// `aclrtGetMemInfo(attr)` for `device`: `(free, total)` bytes.
pub fn mem_info(device: i32, attr: i32, limits: &Limits) -> AclResult<(u64, u64)> {
    policy::check_mem_attr(attr)?;
    Ok((limits.capacity.saturating_sub(usage(device)), limits.capacity))
}

/// Registers the caller's host memory `[addr, addr + len)` (`aclrtHostRegister*`) while
/// `device` is current; a reset of that device ends the registration.
pub fn register_host(addr: usize, len: usize, flags: HostFlags, device: i32) -> AclResult<()> {
    super::device::on_release("host registration(s)", release_host_registrations);
    REGISTRY.register_host(addr, len, flags, device)
}

/// `aclrtHostUnregister(addr)`.
pub fn unregister_host(addr: usize) -> AclResult<()> {
    REGISTRY.unregister_host(addr)
}

/// `aclrtHostGetDevicePointer(addr)`.
pub fn host_device_pointer(addr: usize) -> AclResult<usize> {
    REGISTRY.host_device_pointer(addr)
}

/// Ends the host registrations made while `device` was current; returns how many.
pub fn release_host_registrations(device: i32) -> usize {
    REGISTRY.host.release_device(device)
}

/// What `addr` is, for every kind of range the runtime keeps (`aclrtPointerGetAttributes`).
pub fn attributes_of(addr: usize) -> RangeInfo {
    REGISTRY.attributes_of(addr)
}

/// `aclrtCheckMemType`: whether every address is memory of a type in `mem_type`.
pub fn check_mem_type(addrs: &[usize], mem_type: u32, reserve: u32) -> AclResult<bool> {
    REGISTRY.check_mem_type(addrs, mem_type, reserve)
}

/// `aclrtGetMemUsageInfo`: the components holding memory of `device`, largest first.
pub fn usage_by_component(device: i32) -> Vec<Component> {
    REGISTRY.usage_by_component(device)
}

/// The runtime view of `[addr, addr + len)` when the range lies inside one live allocation
/// (device or pinned host), else `None`. This is how other layers (the ADXL engine) move bytes
/// of device memory, which host code cannot touch in strict mode; the span keeps the memory
/// mapped while it exists.
pub fn runtime_span(addr: usize, len: usize) -> Option<RawSpan> {
    REGISTRY.find(addr)?.runtime_span(addr, len)
}

// ---- virtual memory management ----

/// `aclrtMemGetAllocationGranularity`.
pub fn granularity(props: &Props, option: i32) -> AclResult<usize> {
    vmm::granularity(props, option)
}

/// `aclrtMallocPhysical` on the machine `s` describes: returns the new handle.
pub fn malloc_physical(
    size: usize,
    props: &Props,
    flags: u64,
    limits: &Limits,
    s: &crate::config::Settings,
) -> AclResult<u64> {
    vmm::malloc_physical(&REGISTRY, size, props, flags, limits.capacity, s)
}

/// Makes another process's physical allocation (`len` bytes of `fd`) a handle of this process
/// on `device` (`None`: host memory); the import's lifeline goes with it. Returns the handle and
/// the allocation.
pub fn adopt_physical(
    device: Option<i32>,
    attr: i32,
    fd: MemFd,
    len: usize,
    link: crate::ipc::ImportLink,
) -> AclResult<(u64, std::sync::Arc<Physical>)> {
    vmm::adopt_physical(device, attr, fd, len, link)
}

/// `aclrtReserveMemAddress` (`no_uc` false) or `aclrtReserveMemAddressNoUCMemory` (true).
pub fn reserve_address(
    size: usize,
    alignment: usize,
    expect: usize,
    flags: u64,
    no_uc: bool,
) -> AclResult<usize> {
    vmm::reserve(size, alignment, expect, flags, no_uc)
}

/// `aclrtReleaseMemAddress`.
pub fn release_address(addr: usize) -> AclResult<()> {
    vmm::release(addr)
}

/// `aclrtMapMem` (`no_access` false) or `aclrtMemMapNoAccess` (true); `strict` as
/// [`Limits::strict`].
#[allow(clippy::too_many_arguments)]
pub fn map_mem(
    addr: usize,
    size: usize,
    offset: usize,
    phys: &std::sync::Arc<Physical>,
    flags: u64,
    no_access: bool,
    strict: bool,
) -> AclResult<()> {
    vmm::map(&REGISTRY, addr, size, offset, phys, flags, no_access, strict)
}

/// `aclrtUnmapMem`.
pub fn unmap_mem(addr: usize) -> AclResult<()> {
    vmm::unmap(&REGISTRY, addr)
}

/// `aclrtMemSetAccess`: `(flags, location)` pairs for the mapping at `addr`.
pub fn set_access(
    addr: usize,
    size: usize,
    descs: &[(u32, Location)],
    strict: bool,
    s: &crate::config::Settings,
) -> AclResult<()> {
    vmm::set_access(addr, size, descs, strict, s)
}

/// `aclrtMemGetAccess`.
pub fn get_access(addr: usize, location: Location, s: &crate::config::Settings) -> AclResult<u32> {
    vmm::get_access(addr, location, s)
}

/// `aclrtMemRetainAllocationHandle`.
pub fn retain_handle(addr: usize) -> AclResult<u64> {
    vmm::retain(addr)
}

/// `aclrtMemGetAddressRange`: the start and length of the allocation or mapping holding
/// `addr` (`aclrtMalloc`, `aclrtMallocHost`, imported IPC memory, or a virtual-memory mapping).
pub fn address_range(addr: usize) -> AclResult<(usize, usize)> {
    REGISTRY.find(addr).map(|a| (a.start, a.len)).ok_or_else(|| {
        crate::error::AclError::new(
            crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID,
            format!("{addr:#x} is not inside memory of this runtime (aclrtMalloc, aclrtMallocHost, a mapped reservation)"),
        )
    })
}
