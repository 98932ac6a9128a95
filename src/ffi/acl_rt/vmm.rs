//! `acl/acl_rt.h`: virtual memory management (reserve address space, allocate physical memory,
//! map it, set its access) and shareable handles of physical memory between processes.
//!
//! An `aclrtDrvMemHandle` is a handle-table value (kind `PhysicalMemory`), never an address.
//! Enum-typed parameters and struct fields arrive as plain integers (`*Arg`, renamed to the
//! vendor's enum names in the header) and are checked by the core. The rules where the vendor
//! is silent are in `runtime/memory/vmm.rs` and `runtime/share.rs`.

use std::ffi::c_void;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_call;
use crate::ffi::acl_rt::ipc::read_pids;
use crate::ffi::acl_rt::location::aclrtMemLocation;
use crate::ffi::acl_rt::memory::MemAttrArg;
use crate::ffi::handles::{resolve, to_c};
use crate::ffi::ptr::{Out, slice};
use crate::runtime::context;
use crate::runtime::memory::{self, Limits, Location, Physical, Props};
use crate::runtime::share::{self, FABRIC_HANDLE_SIZE, Shareable};

/// An `aclrtMemHandleType` value as received (any integer).
pub type MemHandleTypeArg = i32;
/// An `aclrtMemAllocationType` value as received (any integer).
pub type MemAllocationTypeArg = i32;
/// An `aclrtMemSharedHandleType` value as received (any integer).
pub type MemSharedHandleTypeArg = i32;
/// An `aclrtMemGranularityOptions` value as received (any integer).
pub type MemGranularityOptionsArg = i32;
/// An `aclrtMemAccessFlags` value as received (any integer).
pub type MemAccessFlagsArg = i32;

/// A physical memory allocation (`aclrtMallocPhysical`, or imported from a shareable handle).
pub type aclrtDrvMemHandle = *mut c_void;

/// How physical memory is allocated.
#[repr(C)]
pub enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
}

/// The handle type of a physical allocation.
#[repr(C)]
pub enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    ACL_MEM_HANDLE_TYPE_POSIX = 2,
}

/// The kind of shareable handle `aclrtMemExportToShareableHandleV2` writes.
#[repr(C)]
pub enum aclrtMemSharedHandleType {
    /// A `uint64_t`.
    ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1,
    /// An `aclrtMemFabricHandle`.
    ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2,
}

/// A fabric shareable handle of physical memory: 128 bytes of plain data another process can
/// import (the vendor's layout). `adxl::ShareableHandle` is this type.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtMemFabricHandle {
    pub data: [u8; 128],
}

/// The properties of a physical allocation.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct aclrtPhysicalMemProp {
    pub handleType: MemHandleTypeArg,
    pub allocationType: MemAllocationTypeArg,
    pub memAttr: MemAttrArg,
    pub location: aclrtMemLocation,
    pub reserve: u64,
}

/// Which granularity `aclrtMemGetAllocationGranularity` reports.
#[repr(C)]
pub enum aclrtMemGranularityOptions {
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
}

/// Access rights of a mapping for one location.
#[repr(C)]
pub enum aclrtMemAccessFlags {
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3,
}

/// One location's access rights, for `aclrtMemSetAccess`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtMemAccessDesc {
    pub flags: MemAccessFlagsArg,
    pub location: aclrtMemLocation,
    pub rsv: [u8; 12],
}

/// `aclrtMemExportToShareableHandle` flag: only whitelisted processes may import.
pub const ACL_RT_VMM_EXPORT_FLAG_DEFAULT: u64 = 0x0 as u64;
/// `aclrtMemExportToShareableHandle` flag: any process of the same user may import.
pub const ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x1 as u64;

const SHARE_DEFAULT: i32 = 0x1;
const SHARE_FABRIC: i32 = 0x2;

fn limits() -> Limits {
    Limits::of(settings())
}

fn location(l: &aclrtMemLocation) -> Location {
    // The C enum's bits as the core's integer: an undeclared value is refused there.
    Location { kind: l.r#type as i32, id: l.id }
}

fn props(p: &aclrtPhysicalMemProp) -> Props {
    Props {
        handle_type: p.handleType,
        allocation_type: p.allocationType,
        attr: p.memAttr,
        location: location(&p.location),
    }
}

/// Reads the one `T` at `p`.
///
/// # Safety
/// `p` is NULL or points to a readable `T`.
unsafe fn read_one<T: Copy>(p: *const T, what: &'static str) -> AclResult<T> {
    // SAFETY: forwarded contract; one element.
    Ok(unsafe { slice(p, 1, what) }?[0])
}

fn share_type(t: MemSharedHandleTypeArg) -> AclResult<bool> {
    match t {
        SHARE_DEFAULT => Ok(false),
        SHARE_FABRIC => Ok(true),
        other => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "shareType {other} is not ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) or ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (2)"
            ),
        )),
    }
}

/// Reads a shareable handle of type `t` at `p` (a `uint64_t` or an `aclrtMemFabricHandle`).
///
/// # Safety
/// `p` is NULL or points to a readable value of the type `t` names.
unsafe fn read_shareable(p: *const c_void, t: MemSharedHandleTypeArg) -> AclResult<Shareable> {
    if share_type(t)? {
        // SAFETY: forwarded contract: a fabric handle.
        let f = unsafe { read_one(p.cast::<aclrtMemFabricHandle>(), "shareableHandle") }?;
        let bytes: &[u8; FABRIC_HANDLE_SIZE] = &f.data;
        Shareable::from_fabric(bytes)
    } else {
        // SAFETY: forwarded contract: a uint64_t.
        Ok(Shareable::Id(unsafe { read_one(p.cast::<u64>(), "shareableHandle") }?))
    }
}

fn address(p: *mut c_void) -> *mut c_void {
    // An address the runtime reserved: exposed, as C code receives it.
    std::ptr::with_exposed_provenance_mut::<c_void>(p.addr())
}

/// Reserves `size` bytes of address space (rounded up to whole pages; nothing is accessible
/// until memory is mapped there) and writes its start to `*virPtr`: 2 MiB aligned (1 GiB from
/// 1 GiB up), or `alignment` if larger (0 or a power of two), or exactly at `expectPtr` if not
/// NULL (refused if those addresses are in use). `flags`: 0 (1 is accepted as a page-type hint).
///
/// # Safety
/// `virPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    acl_call("aclrtReserveMemAddress", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(virPtr, "virPtr") }?;
        let addr = memory::reserve_address(size, alignment, expectPtr.addr(), flags, false)?;
        out.write(address(std::ptr::without_provenance_mut(addr)));
        Ok(())
    })
}

/// As `aclrtReserveMemAddress`, for memory that operators must not use uncached; the caller
/// chooses the address (`expectPtr` NULL: 207000) and `size` is a positive multiple of 1 GiB.
///
/// # Safety
/// `virPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddressNoUCMemory(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    acl_call("aclrtReserveMemAddressNoUCMemory", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(virPtr, "virPtr") }?;
        let addr = memory::reserve_address(size, alignment, expectPtr.addr(), flags, true)?;
        out.write(address(std::ptr::without_provenance_mut(addr)));
        Ok(())
    })
}

/// Releases address space from `aclrtReserveMemAddress`; every mapping in it must have been
/// unmapped first (107000 otherwise).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError {
    acl_call("aclrtReleaseMemAddress", || {
        if virPtr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
        }
        memory::release_address(virPtr.addr())
    })
}

/// Allocates `size` bytes of physical memory (rounded up to the granularity of `prop`) and
/// writes its handle to `*handle`. Device memory counts against the device's capacity like
/// `aclrtMalloc` memory; `flags` must be 0.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclrtDrvMemHandle`; `prop` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const aclrtPhysicalMemProp,
    flags: u64,
) -> aclError {
    acl_call("aclrtMallocPhysical", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        // SAFETY: forwarded from this function's contract.
        let p = unsafe { read_one(prop, "prop") }?;
        out.write(to_c(memory::malloc_physical(size, &props(&p), flags, &limits(), settings())?));
        Ok(())
    })
}

/// Releases a physical memory handle (one call per `aclrtMallocPhysical`, import or
/// `aclrtMemRetainAllocationHandle`). Memory still mapped stays usable until unmapped; an
/// export is withdrawn (later imports fail, existing ones keep their pages).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError {
    acl_call("aclrtFreePhysical", || resolve::<Physical>(handle, "handle")?.free())
}

/// Maps the physical memory `handle` at `virPtr`, inside a reservation: `size` a multiple of the
/// granularity and at most the allocation's size, `offset` and `flags` 0. The range then is
/// device memory of the handle's device for every runtime API, and readable and writable by
/// host code (unless `ASCENDLESS_STRICT_DEVICE_MEMORY=1`).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    acl_call("aclrtMapMem", || map(virPtr, size, offset, handle, flags, false))
}

/// As `aclrtMapMem`, without access: every location has `ACL_RT_MEM_ACCESS_FLAGS_NONE` until
/// `aclrtMemSetAccess` grants some.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapNoAccess(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    acl_call("aclrtMemMapNoAccess", || map(virPtr, size, offset, handle, flags, true))
}

fn map(
    at: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
    no_access: bool,
) -> AclResult<()> {
    if at.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
    }
    let p = resolve::<Physical>(handle, "handle")?;
    memory::map_mem(at.addr(), size, offset, &p, flags, no_access, limits().strict)
}

/// Unmaps what `aclrtMapMem` mapped at `virPtr`; the addresses stay reserved.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError {
    acl_call("aclrtUnmapMem", || {
        if virPtr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
        }
        memory::unmap_mem(virPtr.addr())
    })
}

/// Sets the access rights of `count` locations (`desc`) for the mapping at `virPtr` (`size`
/// its whole size). Host code may use the mapping as the most permissive location allows
/// (never, in strict mode); runtime copies are not affected.
///
/// # Safety
/// `desc` is NULL or points to `count` readable descriptors.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetAccess(
    virPtr: *mut c_void,
    size: usize,
    desc: *mut aclrtMemAccessDesc,
    count: usize,
) -> aclError {
    acl_call("aclrtMemSetAccess", || {
        if virPtr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
        }
        if count == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "desc must be a non-empty array (count > 0)"));
        }
        // SAFETY: forwarded from this function's contract.
        let descs = unsafe { slice(desc.cast_const(), count, "desc") }?;
        let pairs: Vec<(u32, Location)> =
            descs.iter().map(|d| (d.flags as u32, location(&d.location))).collect();
        memory::set_access(virPtr.addr(), size, &pairs, limits().strict, settings())
    })
}

/// Writes the access rights of `*location` for the mapping at `virPtr` to `*flag`.
///
/// # Safety
/// `location` is NULL or readable; `flag` is NULL or valid for a write of a `uint64_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAccess(
    virPtr: *mut c_void,
    location: *mut aclrtMemLocation,
    flag: *mut u64,
) -> aclError {
    acl_call("aclrtMemGetAccess", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(flag, "flag") }?;
        // SAFETY: forwarded from this function's contract.
        let loc = unsafe { read_one(location.cast_const(), "location") }?;
        if virPtr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
        }
        out.write(u64::from(memory::get_access(virPtr.addr(), self::location(&loc), settings())?));
        Ok(())
    })
}

/// Writes to `*handle` the handle of the physical memory mapped at `virPtr` (the address
/// `aclrtMapMem` used); each call owes one more `aclrtFreePhysical`.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclrtDrvMemHandle`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemRetainAllocationHandle(
    virPtr: *mut c_void,
    handle: *mut aclrtDrvMemHandle,
) -> aclError {
    acl_call("aclrtMemRetainAllocationHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        if virPtr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "virPtr must not be NULL"));
        }
        out.write(to_c(memory::retain_handle(virPtr.addr())?));
        Ok(())
    })
}

/// Writes the properties of the physical memory `handle` to `*prop` (an imported handle
/// reports the exporter's `memAttr` and the device it was imported on).
///
/// # Safety
/// `prop` is NULL or valid for a write of an `aclrtPhysicalMemProp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationPropertiesFromHandle(
    handle: aclrtDrvMemHandle,
    prop: *mut aclrtPhysicalMemProp,
) -> aclError {
    acl_call("aclrtMemGetAllocationPropertiesFromHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(prop, "prop") }?;
        let p = resolve::<Physical>(handle, "handle")?;
        out.write(aclrtPhysicalMemProp {
            handleType: p.props.handle_type,
            allocationType: p.props.allocation_type,
            memAttr: p.props.attr,
            location: aclrtMemLocation { id: p.props.location.id, r#type: p.props.location.kind as u32 },
            reserve: 0,
        });
        Ok(())
    })
}

/// Writes the start and size of the memory block holding `ptr` (an `aclrtMalloc` or
/// `aclrtMallocHost` allocation, imported IPC memory, or a virtual-memory mapping).
///
/// # Safety
/// `pbase` and `psize` are NULL or valid for a write of their types.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAddressRange(
    ptr: *mut c_void,
    pbase: *mut *mut c_void,
    psize: *mut usize,
) -> aclError {
    acl_call("aclrtMemGetAddressRange", || {
        // SAFETY: forwarded from this function's contract.
        let (base, size) = unsafe { (Out::new(pbase, "pbase")?, Out::new(psize, "psize")?) };
        if ptr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "ptr must not be NULL"));
        }
        let (start, len) = memory::address_range(ptr.addr())?;
        base.write(std::ptr::with_exposed_provenance_mut::<c_void>(start));
        size.write(len);
        Ok(())
    })
}

/// Writes to `*granularity` the size unit of allocations with `prop` (2 MiB for device
/// memory, 1 GiB for the 1 GiB kinds, the page size for normal host memory).
///
/// # Safety
/// `prop` is NULL or readable; `granularity` is NULL or valid for a write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut aclrtPhysicalMemProp,
    option: MemGranularityOptionsArg,
    granularity: *mut usize,
) -> aclError {
    acl_call("aclrtMemGetAllocationGranularity", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(granularity, "granularity") }?;
        // SAFETY: forwarded from this function's contract.
        let p = unsafe { read_one(prop.cast_const(), "prop") }?;
        out.write(memory::granularity(&props(&p), option)?);
        Ok(())
    })
}

/// Exports the physical memory `handle` (this process's own allocation, once) and
/// writes its 64-bit shareable handle, plain data another process imports with
/// `aclrtMemImportFromShareableHandle`. `handleType`: `ACL_MEM_HANDLE_TYPE_NONE` (or `_POSIX`);
/// `flags`: `ACL_RT_VMM_EXPORT_FLAG_DEFAULT` (whitelist with `aclrtMemSetPidToShareableHandle`)
/// or `..._DISABLE_PID_VALIDATION` (any process of the same user).
///
/// # Safety
/// `shareableHandle` is NULL or valid for a write of a `uint64_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemExportToShareableHandle(
    handle: aclrtDrvMemHandle,
    handleType: MemHandleTypeArg,
    flags: u64,
    shareableHandle: *mut u64,
) -> aclError {
    acl_call("aclrtMemExportToShareableHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(shareableHandle, "shareableHandle") }?;
        if handleType != 0 && handleType != 2 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("handleType {handleType}: use ACL_MEM_HANDLE_TYPE_NONE (0)"),
            ));
        }
        let p = resolve::<Physical>(handle, "handle")?;
        match share::export_physical(&p, flags, false, settings())? {
            Shareable::Id(id) => out.write(id),
            Shareable::Fabric(_) => unreachable!("a default export is an id"),
        }
        Ok(())
    })
}

/// As `aclrtMemExportToShareableHandle`, writing a handle of `shareType` to `shareableHandle`:
/// a `uint64_t` (`ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT`) or an `aclrtMemFabricHandle`
/// (`..._FABRIC`).
///
/// # Safety
/// `shareableHandle` is NULL or valid for a write of the type `shareType` names.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemExportToShareableHandleV2(
    handle: aclrtDrvMemHandle,
    flags: u64,
    shareType: MemSharedHandleTypeArg,
    shareableHandle: *mut c_void,
) -> aclError {
    acl_call("aclrtMemExportToShareableHandleV2", || {
        let fabric = share_type(shareType)?;
        if fabric {
            // SAFETY: forwarded from this function's contract: a fabric handle.
            let out = unsafe { Out::new(shareableHandle.cast::<aclrtMemFabricHandle>(), "shareableHandle") }?;
            let p = resolve::<Physical>(handle, "handle")?;
            match share::export_physical(&p, flags, true, settings())? {
                Shareable::Fabric(key) => {
                    out.write(aclrtMemFabricHandle { data: Shareable::fabric_bytes(&key) })
                }
                Shareable::Id(_) => unreachable!("a fabric export is a key"),
            }
        } else {
            // SAFETY: forwarded from this function's contract: a uint64_t.
            let out = unsafe { Out::new(shareableHandle.cast::<u64>(), "shareableHandle") }?;
            let p = resolve::<Physical>(handle, "handle")?;
            match share::export_physical(&p, flags, false, settings())? {
                Shareable::Id(id) => out.write(id),
                Shareable::Fabric(_) => unreachable!("a default export is an id"),
            }
        }
        Ok(())
    })
}

/// Imports the physical memory another process exported as `shareableHandle`, as a handle of
/// this process on `deviceId`, written to `*handle`. Not whitelisted: 207006; exporter gone:
/// 507022; freed by its exporter or unknown: 107000; a handle this process exported: 207000.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclrtDrvMemHandle`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandle(
    shareableHandle: u64,
    deviceId: i32,
    handle: *mut aclrtDrvMemHandle,
) -> aclError {
    acl_call("aclrtMemImportFromShareableHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        out.write(to_c(share::import_physical(Shareable::Id(shareableHandle), Some(deviceId), settings())?));
        Ok(())
    })
}

/// As `aclrtMemImportFromShareableHandle` for a handle of `shareType` at `shareableHandle`,
/// imported on the current device (the exporter's device without a current context); `flags`
/// must be 0.
///
/// # Safety
/// `shareableHandle` is NULL or points to a readable value of the type `shareType` names;
/// `handle` is NULL or valid for a write of an `aclrtDrvMemHandle`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: MemSharedHandleTypeArg,
    flags: u64,
    handle: *mut aclrtDrvMemHandle,
) -> aclError {
    acl_call("aclrtMemImportFromShareableHandleV2", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        // SAFETY: forwarded from this function's contract.
        let sh = unsafe { read_shareable(shareableHandle.cast_const(), shareType) }?;
        if flags != 0 {
            return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flags {flags:#x}: use 0")));
        }
        let device = context::current_device().ok();
        out.write(to_c(share::import_physical(sh, device, settings())?));
        Ok(())
    })
}

/// Allows the processes `pid[0..pidNum]` to import `shareableHandle` (an export of this
/// process made with pid validation).
///
/// # Safety
/// `pid` is NULL or points to `pidNum` readable `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareableHandle: u64,
    pid: *mut i32,
    pidNum: usize,
) -> aclError {
    acl_call("aclrtMemSetPidToShareableHandle", || {
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_pids(pid, pidNum) }?;
        share::allow_shareable_pids(Shareable::Id(shareableHandle), pids)
    })
}

/// As `aclrtMemSetPidToShareableHandle` for a handle of `shareType` at `shareableHandle`.
///
/// # Safety
/// `shareableHandle` is NULL or points to a readable value of the type `shareType` names;
/// `pid` is NULL or points to `pidNum` readable `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: MemSharedHandleTypeArg,
    pid: *mut i32,
    pidNum: usize,
) -> aclError {
    acl_call("aclrtMemSetPidToShareableHandleV2", || {
        // SAFETY: forwarded from this function's contract.
        let sh = unsafe { read_shareable(shareableHandle.cast_const(), shareType) }?;
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_pids(pid, pidNum) }?;
        share::allow_shareable_pids(sh, pids)
    })
}
