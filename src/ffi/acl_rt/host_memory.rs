//! `acl/acl_rt.h`: registering the caller's host memory with the runtime.
//!
//! Registered memory stays the caller's: the runtime never frees or unmaps it, and the caller
//! keeps it valid until `aclrtHostUnregister` (and until every copy queued on it has run). Its
//! device pointer is the host address itself (the vendor's driver gives the same on machines
//! with shared virtual addressing), and a mapped registration may be the device end of
//! `aclrtMemcpy`/`aclrtMemcpyAsync`.

use std::ffi::c_void;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_call;
use crate::ffi::ptr::{Out, null_argument};
use crate::runtime::memory::{self, HostFlags};
use crate::runtime::{context, device};

/// An `aclrtHostRegisterType` value as received (any integer).
pub type HostRegisterTypeArg = u32;
/// An `aclrtHacType` value as received (any integer).
pub type HacTypeArg = u32;

/// How `aclrtHostRegister` maps host memory for the device.
#[repr(C)]
pub enum aclrtHostRegisterType {
    /// Mapped for the device to read and write.
    ACL_HOST_REGISTER_MAPPED = 0,
    /// A third-party PCIe device's IO space (reserved: not supported).
    ACL_HOST_REGISTER_IOMEMORY = 0x04,
    /// Mapped for the device to read only (reserved: not supported).
    ACL_HOST_REGISTER_READONLY = 0x08,
}

/// A hardware engine of the device, for `aclrtHostMemMapCapabilities`.
#[repr(C)]
pub enum aclrtHacType {
    ACL_RT_HAC_TYPE_STARS = 0,
    ACL_RT_HAC_TYPE_AICPU = 1,
    ACL_RT_HAC_TYPE_AIC = 2,
    ACL_RT_HAC_TYPE_AIV = 3,
    ACL_RT_HAC_TYPE_PCIEDMA = 4,
    ACL_RT_HAC_TYPE_RDMA = 5,
    ACL_RT_HAC_TYPE_SDMA = 6,
    ACL_RT_HAC_TYPE_DVPP = 7,
    ACL_RT_HAC_TYPE_UDMA = 8,
    ACL_RT_HAC_TYPE_CCU = 9,
}

/// Whether an engine can reach registered host memory.
#[repr(C)]
pub enum aclrtHostMemMapCapability {
    ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
    ACL_RT_HOST_MEM_MAP_SUPPORTED = 1,
}

/// `aclrtHostRegisterV2` flag: map the memory for the device (then `aclrtHostGetDevicePointer`).
pub const ACL_HOST_REG_MAPPED: u64 = 0x2 as u64;
/// `aclrtHostRegisterV2` flag: a third-party PCIe device's IO space (reserved: not supported).
pub const ACL_HOST_REG_IOMEMORY: u64 = 0x4 as u64;
/// `aclrtHostRegisterV2` flag: read-only for the device (reserved: not supported).
pub const ACL_HOST_REG_READONLY: u64 = 0x8 as u64;
/// `aclrtHostRegisterV2` flag: page-lock pageable memory (not memory from `aclrtMallocHost`).
pub const ACL_HOST_REG_PINNED: u64 = 0x10000000 as u64;

/// The size of a registration as an address-space length (107000 if it cannot be one).
fn length(size: u64) -> AclResult<usize> {
    if size == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
    }
    usize::try_from(size).map_err(|_| {
        AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("size {size} is larger than the address space"))
    })
}

/// Registers `size` bytes of the caller's host memory at `ptr` (4 KiB-aligned: `malloc`'d
/// with `posix_memalign`, `mmap`'d, or from `aclrtMallocHost`) as mapped for the current
/// device, and gives its device address in `devPtr` (the same address). A range overlapping a
/// registered one: `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`; `type` other than
/// `ACL_HOST_REGISTER_MAPPED`: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`; `ptr` stays valid memory of `size`
/// bytes until `aclrtHostUnregister`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegister(
    ptr: *mut c_void,
    size: u64,
    r#type: HostRegisterTypeArg,
    devPtr: *mut *mut c_void,
) -> aclError {
    acl_call("aclrtHostRegister", || {
        if ptr.is_null() {
            return Err(null_argument("ptr"));
        }
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        let len = length(size)?;
        let flags = memory::flags_v1(r#type)?;
        let device = context::current_device()?;
        memory::register_host(ptr.addr(), len, flags, device)?;
        // The device address is the host address (see the module documentation).
        out.write(ptr);
        Ok(())
    })
}

/// Registers `size` bytes of the caller's host memory at `ptr` (4 KiB-aligned) for the current
/// device: `flag` is an OR of `ACL_HOST_REG_MAPPED` (then `aclrtHostGetDevicePointer` gives its
/// device address) and `ACL_HOST_REG_PINNED` (for pageable memory; memory from
/// `aclrtMallocHost` is pinned already: 107000). 0 or another bit: 107000; the reserved
/// `ACL_HOST_REG_IOMEMORY`/`ACL_HOST_REG_READONLY`: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
///
/// # Safety
/// `ptr` stays valid memory of `size` bytes until `aclrtHostUnregister`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError {
    acl_call("aclrtHostRegisterV2", || {
        if ptr.is_null() {
            return Err(null_argument("ptr"));
        }
        let len = length(size)?;
        let flags: HostFlags = memory::flags_v2(flag)?;
        let device = context::current_device()?;
        memory::register_host(ptr.addr(), len, flags, device)
    })
}

/// The device address of `pHost`, host memory registered as mapped (any address inside the
/// registration); `flag` must be 0. Memory not registered, or registered without
/// `ACL_HOST_REG_MAPPED`: 107000. The device address is `pHost` itself.
///
/// # Safety
/// `pDevice` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostGetDevicePointer(
    pHost: *mut c_void,
    pDevice: *mut *mut c_void,
    flag: u32,
) -> aclError {
    acl_call("aclrtHostGetDevicePointer", || {
        if pHost.is_null() {
            return Err(null_argument("pHost"));
        }
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(pDevice, "pDevice") }?;
        if flag != 0 {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("flag is reserved and must be 0, not {flag}"),
            ));
        }
        context::current_device()?;
        let addr = memory::host_device_pointer(pHost.addr())?;
        out.write(pHost.with_addr(addr));
        Ok(())
    })
}

/// Ends the registration that starts at `ptr` (the address that was registered); anything
/// else: `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED`. The memory stays the caller's.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> aclError {
    acl_call("aclrtHostUnregister", || {
        if ptr.is_null() {
            return Err(null_argument("ptr"));
        }
        context::current_device()?;
        memory::unregister_host(ptr.addr())
    })
}

/// Whether engine `hacType` of device `deviceId` can reach registered host memory: the stream
/// scheduler and the copy engines (STARS, PCIe DMA, SDMA) can; no kernel, DVPP, RDMA, UDMA or
/// CCU engine runs on this machine. A bad device: 107001; a bad `hacType`: 107000.
///
/// # Safety
/// `capabilities` is NULL or valid for a write of an `aclrtHostMemMapCapability`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostMemMapCapabilities(
    deviceId: u32,
    hacType: HacTypeArg,
    capabilities: *mut aclrtHostMemMapCapability,
) -> aclError {
    acl_call("aclrtHostMemMapCapabilities", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(capabilities, "capabilities") }?;
        let id = i32::try_from(deviceId).map_err(|_| {
            AclError::new(ACL_ERROR_RT_INVALID_DEVICEID, format!("device id {deviceId} is invalid"))
        })?;
        device::check_id(id, settings())?;
        let reached = memory::engine_reaches_registered_memory(hacType)?;
        context::current_device()?;
        out.write(if reached {
            aclrtHostMemMapCapability::ACL_RT_HOST_MEM_MAP_SUPPORTED
        } else {
            aclrtHostMemMapCapability::ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED
        });
        Ok(())
    })
}
