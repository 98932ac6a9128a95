//! `acl/acl_rt.h`: what a pointer is (`aclrtPointerGetAttributes`, `aclrtCheckMemType`) and who
//! holds device memory (`aclrtGetMemUsageInfo`).

use std::ffi::{c_char, c_void};

use super::location::{aclrtMemLocation, aclrtMemLocationType};
use crate::config::settings;
use crate::error::AclError;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_call;
use crate::ffi::ptr::{self, Out, null_argument};
use crate::runtime::memory::{self, Component, PtrLocation};
use crate::runtime::{context, device};

/// `aclrtCheckMemType` type: device memory (`aclrtMalloc`, imported IPC memory).
pub const ACL_RT_MEM_TYPE_DEV: u32 = 0x2u32;
/// `aclrtCheckMemType` type: DVPP memory (there is none on this machine).
pub const ACL_RT_MEM_TYPE_DVPP: u32 = 0x8u32;
/// `aclrtCheckMemType` type: address space reserved with `aclrtReserveMemAddress`.
pub const ACL_RT_MEM_TYPE_RSVD: u32 = 0x10u32;

/// What `aclrtPointerGetAttributes` reports.
#[repr(C)]
#[allow(non_snake_case)]
pub struct aclrtPtrAttributes {
    /// Where the memory lives; the id means nothing for host memory.
    pub location: aclrtMemLocation,
    /// The page size the memory is mapped with, in bytes.
    pub pageSize: u32,
    /// Reserved: 0.
    pub rsv: [u32; 4],
}

/// One component's device memory, for `aclrtGetMemUsageInfo`.
#[repr(C)]
#[allow(non_snake_case)]
pub struct aclrtMemUsageInfo {
    /// The component's name, NUL-terminated.
    pub name: [c_char; 32],
    /// Bytes it holds now.
    pub curMemSize: u64,
    /// The most it has held at once.
    pub memPeakSize: u64,
    /// Reserved: 0.
    pub reserved: [usize; 8],
}

impl aclrtMemUsageInfo {
    fn of(c: &Component) -> aclrtMemUsageInfo {
        let mut name = [0 as c_char; 32];
        // Names are short ASCII constants; one byte is kept for the NUL.
        for (dst, &b) in name.iter_mut().zip(c.name.as_bytes().iter().take(31)) {
            *dst = b as c_char;
        }
        aclrtMemUsageInfo { name, curMemSize: c.current, memPeakSize: c.peak, reserved: [0; 8] }
    }
}

/// Where the memory at `ptr` lives and its page size: `aclrtMalloc` and imported IPC memory are
/// `ACL_MEM_LOCATION_TYPE_DEVICE` with the device id; `aclrtMallocHost` and registered host
/// memory are `ACL_MEM_LOCATION_TYPE_HOST`; `aclrtMemAllocManaged` memory is
/// `ACL_MEM_LOCATION_TYPE_MANAGED` with the device it was made on; anything else (`malloc`, the stack, freed memory)
/// is `ACL_MEM_LOCATION_TYPE_UNREGISTERED`, with the system page size.
///
/// # Safety
/// `attributes` is NULL or valid for a write of an `aclrtPtrAttributes`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtPointerGetAttributes(
    ptr: *const c_void,
    attributes: *mut aclrtPtrAttributes,
) -> aclError {
    acl_call("aclrtPointerGetAttributes", || {
        if ptr.is_null() {
            return Err(null_argument("ptr"));
        }
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(attributes, "attributes") }?;
        let info = memory::attributes_of(ptr.addr());
        let location = match info.kind.location() {
            PtrLocation::Host => aclrtMemLocation::new(aclrtMemLocationType::ACL_MEM_LOCATION_TYPE_HOST, 0),
            PtrLocation::Device(d) => {
                aclrtMemLocation::new(aclrtMemLocationType::ACL_MEM_LOCATION_TYPE_DEVICE, d.unsigned_abs())
            }
            PtrLocation::Managed(d) => {
                aclrtMemLocation::new(aclrtMemLocationType::ACL_MEM_LOCATION_TYPE_MANAGED, d.unsigned_abs())
            }
            PtrLocation::Unregistered => {
                aclrtMemLocation::new(aclrtMemLocationType::ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0)
            }
        };
        let pageSize = u32::try_from(info.page_size).unwrap_or(u32::MAX);
        out.write(aclrtPtrAttributes { location, pageSize, rsv: [0; 4] });
        Ok(())
    })
}

/// Sets `*checkResult` to 1 if every one of the `size` addresses in `addrList` is memory of a
/// type in `memType` (an OR of `ACL_RT_MEM_TYPE_*`), else 0. `size` 0, another bit in
/// `memType` or `reserve` other than 0: 107000. Needs a current device, as the vendor's.
///
/// # Safety
/// `addrList` is NULL or holds `size` pointers; `checkResult` is NULL or valid for a write of
/// a `uint32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCheckMemType(
    addrList: *mut *mut c_void,
    size: u32,
    memType: u32,
    checkResult: *mut u32,
    reserve: u32,
) -> aclError {
    acl_call("aclrtCheckMemType", || {
        if addrList.is_null() {
            return Err(null_argument("addrList"));
        }
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(checkResult, "checkResult") }?;
        context::current_device()?;
        // SAFETY: `addrList` holds `size` pointers (this function's contract).
        let list = unsafe { ptr::slice(addrList.cast_const(), size as usize, "addrList") }?;
        let addrs: Vec<usize> = list.iter().map(|p| p.addr()).collect();
        let all = memory::check_mem_type(&addrs, memType, reserve)?;
        out.write(u32::from(all));
        Ok(())
    })
}

/// Fills `memUsageInfo` (room for `inputNum` entries) with the components holding memory of
/// device `deviceId`, largest first, and their number in `*outputNum`. Every byte here is the
/// application's (`aclrtMalloc`): one component, `APP`, listed while it holds memory.
/// `inputNum` 0: 107000; a bad device: 107001.
///
/// # Safety
/// `memUsageInfo` is NULL or valid for writes of `inputNum` entries; `outputNum` is NULL or
/// valid for a write of a `size_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemUsageInfo(
    deviceId: i32,
    memUsageInfo: *mut aclrtMemUsageInfo,
    inputNum: usize,
    outputNum: *mut usize,
) -> aclError {
    acl_call("aclrtGetMemUsageInfo", || {
        // SAFETY: forwarded from this function's contract; used only to check NULL and alignment.
        unsafe { Out::new(memUsageInfo, "memUsageInfo") }?;
        // SAFETY: forwarded from this function's contract.
        let count = unsafe { Out::new(outputNum, "outputNum") }?;
        if inputNum == 0 {
            return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "inputNum must not be 0"));
        }
        device::check_id(deviceId, settings())?;
        let components = memory::usage_by_component(deviceId);
        let n = components.len().min(inputNum);
        for (i, c) in components.iter().take(n).enumerate() {
            // SAFETY: `memUsageInfo` is non-NULL and aligned (checked above) and has room for
            // `inputNum` entries (this function's contract); i < n <= inputNum.
            unsafe { memUsageInfo.add(i).write(aclrtMemUsageInfo::of(c)) };
        }
        count.write(n);
        Ok(())
    })
}
