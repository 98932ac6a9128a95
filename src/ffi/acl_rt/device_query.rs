//! `acl/acl_rt.h`: what a device and the platform say about themselves. The answers come from
//! the emulated product (`ASCENDLESS_SOC`, `profile::Figures`) and the settings, through
//! `runtime/device_info.rs`; docs/device.md lists them per product.

#![allow(non_snake_case)]

use std::ffi::c_char;

use crate::config::settings;
use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_call;
use crate::ffi::ptr::{self, Out, required_str};
use crate::profile::Product;
use crate::runtime::{device, device_info, sys_params};

/// Where the AI software stack runs: on the device's control CPU or on a host.
#[repr(C)]
pub enum aclrtRunMode {
    ACL_DEVICE = 0,
    ACL_HOST = 1,
}

/// A task scheduler of the device (`aclrtSetTsDevice`).
#[repr(C)]
pub enum aclrtTsId {
    ACL_TS_ID_AICORE = 0,
    ACL_TS_ID_AIVECTOR = 1,
    ACL_TS_ID_RESERVED = 2,
}

/// An `aclrtTsId` value as received (any integer).
pub type TsIdArg = i32;

/// Whether a device is usable (`aclrtQueryDeviceStatus`).
#[repr(C)]
pub enum aclrtDeviceStatus {
    ACL_RT_DEVICE_STATUS_NORMAL = 0,
    ACL_RT_DEVICE_STATUS_ABNORMAL = 1,
    ACL_RT_DEVICE_STATUS_END = 0xFFFF,
}

/// `aclrtGetDeviceCapability`: the feature is there.
pub const ACL_DEV_FEATURE_SUPPORT: i32 = 0x00000001;
/// `aclrtGetDeviceCapability`: the feature is not there.
pub const ACL_DEV_FEATURE_NOT_SUPPORT: i32 = 0x00000000;

/// `ACL_DEV_ATTR_DEVICE_FORM_FACTOR`: a pod.
pub const ACL_DEVICE_FORM_FACTOR_POD: i32 = 0;
/// `ACL_DEV_ATTR_DEVICE_FORM_FACTOR`: an Ascend + Kunpeng server.
pub const ACL_DEVICE_FORM_FACTOR_A_K: i32 = 1;
/// `ACL_DEV_ATTR_DEVICE_FORM_FACTOR`: an Ascend + other processor server.
pub const ACL_DEVICE_FORM_FACTOR_A_X: i32 = 2;
/// `ACL_DEV_ATTR_DEVICE_FORM_FACTOR`: a PCIe card.
pub const ACL_DEVICE_FORM_FACTOR_PCIE_CARD: i32 = 3;
/// `ACL_DEV_ATTR_HD_CONNECT_TYPE`: PCIe.
pub const ACL_HOST_DEVICE_CONNECT_TYPE_PCIE: i32 = 0;
/// `ACL_DEV_ATTR_HD_CONNECT_TYPE`: HCCS.
pub const ACL_HOST_DEVICE_CONNECT_TYPE_HCCS: i32 = 1;
/// `ACL_DEV_ATTR_HD_CONNECT_TYPE`: Unified Bus.
pub const ACL_HOST_DEVICE_CONNECT_TYPE_UB: i32 = 2;

/// `aclrtGetDevicesTopo`: linked by HCCS.
pub const ACL_RT_DEVS_TOPOLOGY_HCCS: u64 = 0x01 as u64;
/// `aclrtGetDevicesTopo`: under one PCIe switch.
pub const ACL_RT_DEVS_TOPOLOGY_PIX: u64 = 0x02 as u64;
/// `aclrtGetDevicesTopo`: across PCIe switches.
pub const ACL_RT_DEVS_TOPOLOGY_PIB: u64 = 0x04 as u64;
/// `aclrtGetDevicesTopo`: through a PCIe host bridge.
pub const ACL_RT_DEVS_TOPOLOGY_PHB: u64 = 0x08 as u64;
/// `aclrtGetDevicesTopo`: across NUMA nodes (SMP).
pub const ACL_RT_DEVS_TOPOLOGY_SYS: u64 = 0x10 as u64;
/// `aclrtGetDevicesTopo`: two dies of one chip.
pub const ACL_RT_DEVS_TOPOLOGY_SIO: u64 = 0x20 as u64;
/// `aclrtGetDevicesTopo`: through an HCCS switch.
pub const ACL_RT_DEVS_TOPOLOGY_HCCS_SW: u64 = 0x40 as u64;

/// A device attribute (`aclrtGetDeviceInfo`).
#[repr(C)]
pub enum aclrtDevAttr {
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
    ACL_DEV_ATTR_WARP_SIZE = 202,
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
    ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
    ACL_DEV_ATTR_SMP_ID = 401,
    ACL_DEV_ATTR_PHY_CHIP_ID = 402,
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
    ACL_DEV_ATTR_SUPER_POD_ID = 405,
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
    ACL_DEV_ATTR_MAINBOARD_ID = 407,
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409,
    ACL_DEV_ATTR_IS_VIRTUAL = 501,
    ACL_DEV_ATTR_NPU_ARCH = 601,
}

/// The vendor's deprecated spelling of `ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE`.
pub const ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE: aclrtDevAttr =
    aclrtDevAttr::ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE;
/// The vendor's deprecated spelling of `ACL_DEV_ATTR_SUPER_POD_DEVICE_ID`.
pub const ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID: aclrtDevAttr = aclrtDevAttr::ACL_DEV_ATTR_SUPER_POD_DEVICE_ID;

/// An `aclrtDevAttr` value as received (any integer).
pub type DevAttrArg = i32;

/// A device feature (`aclrtGetDeviceCapability`).
#[repr(C)]
pub enum aclrtDevFeatureType {
    ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1,
    ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21,
}

/// An `aclrtDevFeatureType` value as received (any integer).
pub type DevFeatureTypeArg = i32;

/// What an atomic operation can do, bit by bit (`aclrtDeviceGetHostAtomicCapabilities`).
#[repr(C)]
pub enum aclrtAtomicOperationCapability {
    ACL_RT_ATOMIC_CAPABILITY_SIGNED = 1 << 0,
    ACL_RT_ATOMIC_CAPABILITY_UNSIGNED = 1 << 1,
    ACL_RT_ATOMIC_CAPABILITY_REDUCTION = 1 << 2,
    ACL_RT_ATOMIC_CAPABILITY_SCALAR8 = 1 << 3,
    ACL_RT_ATOMIC_CAPABILITY_SCALAR16 = 1 << 4,
    ACL_RT_ATOMIC_CAPABILITY_SCALAR32 = 1 << 5,
    ACL_RT_ATOMIC_CAPABILITY_SCALAR64 = 1 << 6,
    ACL_RT_ATOMIC_CAPABILITY_SCALAR128 = 1 << 7,
    ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4 = 1 << 8,
}

/// The vendor's deprecated spelling of `ACL_RT_ATOMIC_CAPABILITY_REDUCTION`.
pub const ACL_RT_ATOMIC_CAPABILITY_REDUCATION: aclrtAtomicOperationCapability =
    aclrtAtomicOperationCapability::ACL_RT_ATOMIC_CAPABILITY_REDUCTION;

/// An atomic operation (`aclrtDeviceGetHostAtomicCapabilities`).
#[repr(C)]
pub enum aclrtAtomicOperation {
    ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0,
    ACL_RT_ATOMIC_OPERATION_INTEGER_MIN = 1,
    ACL_RT_ATOMIC_OPERATION_INTEGER_MAX = 2,
    ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT = 3,
    ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT = 4,
    ACL_RT_ATOMIC_OPERATION_AND = 5,
    ACL_RT_ATOMIC_OPERATION_OR = 6,
    ACL_RT_ATOMIC_OPERATION_XOR = 7,
    ACL_RT_ATOMIC_OPERATION_EXCHANGE = 8,
    ACL_RT_ATOMIC_OPERATION_CAS = 9,
    ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10,
    ACL_RT_ATOMIC_OPERATION_FLOAT_MIN = 11,
    ACL_RT_ATOMIC_OPERATION_FLOAT_MAX = 12,
    ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30,
    ACL_RT_ATOMIC_OPERATION_DMA_MIN = 31,
    ACL_RT_ATOMIC_OPERATION_DMA_MAX = 32,
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD = 40,
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN = 41,
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX = 42,
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS = 43,
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH = 44,
}

/// An `aclrtAtomicOperation` value as received (any integer).
pub type AtomicOperationArg = i32;

/// A device's 16-byte unique id.
#[repr(C)]
pub struct aclrtUuid {
    pub bytes: [c_char; 16],
}

/// Reserved extension of `aclrtUtilizationInfo` (opaque; the pointer is NULL).
pub struct aclrtUtilizationExtendInfo {
    _private: (),
}

/// Utilisation of a device's units, in percent (-1: not there / not measured).
#[repr(C)]
pub struct aclrtUtilizationInfo {
    pub cubeUtilization: i32,
    pub vectorUtilization: i32,
    pub aicpuUtilization: i32,
    pub memoryUtilization: i32,
    pub utilizationExtend: *mut aclrtUtilizationExtendInfo,
}

/// Always `ACL_HOST`: the application runs on a host, never on a device's control CPU.
///
/// # Safety
/// `runMode` is NULL or valid for a write of an `aclrtRunMode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(runMode: *mut aclrtRunMode) -> aclError {
    acl_call("aclrtGetRunMode", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(runMode, "runMode") }?.write(aclrtRunMode::ACL_HOST);
        Ok(())
    })
}

/// Chooses the task scheduler of this thread's later work: `ACL_TS_ID_AICORE` or
/// `ACL_TS_ID_AIVECTOR` (kept per thread; tasks here run on host threads either way); another
/// value is 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetTsDevice(tsId: TsIdArg) -> aclError {
    acl_call("aclrtSetTsDevice", || sys_params::set_ts(tsId))
}

/// Attribute `attr` of device `deviceId`, from the emulated product: core counts, memory size
/// (`ASCENDLESS_DEVICE_MEMORY`), L2 size, ids, NPU architecture (docs/device.md). An unknown
/// attribute is 107000; one the product lacks is 207000; SIMT figures are 0 except on Ascend
/// 950, as the vendor documents.
///
/// # Safety
/// `value` is NULL or valid for a write of an `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceInfo(deviceId: u32, attr: DevAttrArg, value: *mut i64) -> aclError {
    acl_call("aclrtGetDeviceInfo", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let id = i32::try_from(deviceId).unwrap_or(i32::MAX);
        out.write(device_info::info(id, attr, settings())?);
        Ok(())
    })
}

/// Whether device `deviceId` has feature `devFeatureType`: `ACL_DEV_FEATURE_NOT_SUPPORT` for
/// both defined features (they concern kernel task updates and shared queues, which are not
/// here); another value is 107000.
///
/// # Safety
/// `value` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCapability(
    deviceId: i32,
    devFeatureType: DevFeatureTypeArg,
    value: *mut i32,
) -> aclError {
    acl_call("aclrtGetDeviceCapability", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let has = device_info::capability(deviceId, devFeatureType, settings())?;
        out.write(if has { ACL_DEV_FEATURE_SUPPORT } else { ACL_DEV_FEATURE_NOT_SUPPORT });
        Ok(())
    })
}

/// Device `deviceId`'s UUID: the same in every process of this machine, different per device.
///
/// # Safety
/// `uuid` is NULL or valid for a write of an `aclrtUuid`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetUuid(deviceId: i32, uuid: *mut aclrtUuid) -> aclError {
    acl_call("aclrtDeviceGetUuid", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(uuid, "uuid") }?;
        let bytes = device_info::uuid(deviceId, settings())?;
        out.write(aclrtUuid { bytes: bytes.map(|b| b as c_char) });
        Ok(())
    })
}

/// How devices `deviceId` and `otherDeviceId` are linked (`ACL_RT_DEVS_TOPOLOGY_*`), as on the
/// product's usual server (docs/device.md); the same device twice is 107000.
///
/// # Safety
/// `value` is NULL or valid for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevicesTopo(deviceId: u32, otherDeviceId: u32, value: *mut u64) -> aclError {
    acl_call("aclrtGetDevicesTopo", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let id = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        out.write(device_info::topology(id(deviceId), id(otherDeviceId), settings())?);
        Ok(())
    })
}

/// Device `deviceId`'s PCI address, `0000:BB:00.0` with bus = physical id + 1, into `pciBusId`
/// (`len` at least 13, else 107000).
///
/// # Safety
/// `pciBusId` is NULL or valid for writes of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetPCIBusId(deviceId: i32, pciBusId: *mut c_char, len: i32) -> aclError {
    acl_call("aclrtDeviceGetPCIBusId", || {
        if pciBusId.is_null() {
            return Err(ptr::null_argument("pciBusId"));
        }
        let text = device_info::pci_bus_id(deviceId, settings())?;
        let room = usize::try_from(len).unwrap_or(0);
        if room < text.len() + 1 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("len {len} is too small: a PCI bus id takes {} bytes with its NUL", text.len() + 1),
            ));
        }
        for (i, b) in text.bytes().chain(std::iter::once(0)).enumerate() {
            // SAFETY: `pciBusId` is valid for `len` bytes by this function's contract, and
            // `i` < text.len() + 1 <= len.
            unsafe { pciBusId.add(i).write(b as c_char) };
        }
        Ok(())
    })
}

/// The device whose PCI address is `pciBusId` (`domain:bus:device.function`, hexadecimal; the
/// form `aclrtDeviceGetPCIBusId` gives); an address of no visible device is 107000.
///
/// # Safety
/// `pciBusId` is NULL or a NUL-terminated string; `deviceId` is NULL or valid for a write of
/// an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetByPCIBusId(pciBusId: *const c_char, deviceId: *mut i32) -> aclError {
    acl_call("aclrtDeviceGetByPCIBusId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(deviceId, "deviceId") }?;
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { required_str(pciBusId, "pciBusId") }?;
        out.write(device_info::by_pci_bus_id(text, settings())?);
        Ok(())
    })
}

/// Fills `capabilities[i]` for `operations[i]`, `count` of each.
///
/// # Safety
/// `capabilities` is NULL or valid for `count` writes of `uint32_t`; `operations` is NULL or
/// points to `count` readable values.
unsafe fn atomic_caps(
    capabilities: *mut u32,
    operations: *const AtomicOperationArg,
    count: u32,
) -> crate::error::AclResult<()> {
    let n = count as usize;
    if n == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "count must be at least 1"));
    }
    // SAFETY: forwarded from the caller's contract.
    let ops = unsafe { ptr::slice(operations, n, "operations") }?;
    if capabilities.is_null() || !capabilities.is_aligned() {
        return Err(ptr::null_argument("capabilities"));
    }
    let caps: Vec<u32> =
        ops.iter().map(|&op| device_info::atomic_capability(op)).collect::<Result<_, _>>()?;
    for (i, c) in caps.into_iter().enumerate() {
        // SAFETY: `capabilities` is non-NULL, aligned and valid for `count` writes by the
        // caller's contract; i < count.
        unsafe { capabilities.add(i).write(c) };
    }
    Ok(())
}

/// What each of `operations` can do between the host and device `deviceId`
/// (`aclrtAtomicOperationCapability` bits): device memory is host memory here, so the
/// processor's 32/64-bit atomics serve the integer (signed and unsigned) and float operations;
/// DMA and SIMD operations have no unit (0). An unknown operation is 107000; `count` 0 is
/// 100000.
///
/// # Safety
/// `capabilities` is NULL or valid for `count` writes of `uint32_t`; `operations` is NULL or
/// points to `count` readable values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetHostAtomicCapabilities(
    capabilities: *mut u32,
    operations: *const AtomicOperationArg,
    count: u32,
    deviceId: i32,
) -> aclError {
    acl_call("aclrtDeviceGetHostAtomicCapabilities", || {
        device::check_id(deviceId, settings())?;
        // SAFETY: forwarded from this function's contract.
        unsafe { atomic_caps(capabilities, operations, count) }
    })
}

/// As `aclrtDeviceGetHostAtomicCapabilities`, between devices `srcDeviceId` and `dstDeviceId`
/// (the same answers: every device's memory is the same host memory).
///
/// # Safety
/// As for `aclrtDeviceGetHostAtomicCapabilities`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetP2PAtomicCapabilities(
    capabilities: *mut u32,
    operations: *const AtomicOperationArg,
    count: u32,
    srcDeviceId: i32,
    dstDeviceId: i32,
) -> aclError {
    acl_call("aclrtDeviceGetP2PAtomicCapabilities", || {
        device::check_id(srcDeviceId, settings())?;
        device::check_id(dstDeviceId, settings())?;
        // SAFETY: forwarded from this function's contract.
        unsafe { atomic_caps(capabilities, operations, count) }
    })
}

/// Whether device `deviceId`'s default context is active (1: the device is set and not reset,
/// 0: not). `flags` is reserved and must be NULL (100000 otherwise, as the vendor).
///
/// # Safety
/// `active` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetPrimaryCtxState(
    deviceId: i32,
    flags: *mut u32,
    active: *mut i32,
) -> aclError {
    acl_call("aclrtGetPrimaryCtxState", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(active, "active") }?;
        if !flags.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "flags is reserved and must be NULL"));
        }
        let on = device::primary_active(deviceId, settings())?;
        out.write(i32::from(on));
        Ok(())
    })
}

/// Utilisation of device `deviceId`: cube, vector and AI CPU 0 (no kernel runs on them here),
/// vector -1 on products without Vector Cores, memory -1 (not measured, as the vendor).
///
/// # Safety
/// `utilizationInfo` is NULL or valid for reads and writes of an `aclrtUtilizationInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceUtilizationRate(
    deviceId: i32,
    utilizationInfo: *mut aclrtUtilizationInfo,
) -> aclError {
    acl_call("aclrtGetDeviceUtilizationRate", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(utilizationInfo, "utilizationInfo") }?;
        let [cube, vector, aicpu, memory] = device_info::utilization(deviceId, settings())?;
        out.write(aclrtUtilizationInfo {
            cubeUtilization: cube,
            vectorUtilization: vector,
            aicpuUtilization: aicpu,
            memoryUtilization: memory,
            utilizationExtend: std::ptr::null_mut(),
        });
        Ok(())
    })
}

/// `ACL_RT_DEVICE_STATUS_NORMAL` for every device this process sees (an emulated device does not
/// fail); an unknown id is 107001.
///
/// # Safety
/// `deviceStatus` is NULL or valid for a write of an `aclrtDeviceStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryDeviceStatus(
    deviceId: i32,
    deviceStatus: *mut aclrtDeviceStatus,
) -> aclError {
    acl_call("aclrtQueryDeviceStatus", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(deviceStatus, "deviceStatus") }?;
        device::check_id(deviceId, settings())?;
        out.write(aclrtDeviceStatus::ACL_RT_DEVICE_STATUS_NORMAL);
        Ok(())
    })
}

/// Whether code built for SoC `socVersion` runs on the emulated device: 1 when both are of one
/// NPU architecture (e.g. any Atlas A2 or A3 SoC on an Ascend910B1), 0 otherwise; a name of
/// no known SoC is 0 too.
///
/// # Safety
/// `socVersion` is NULL or a NUL-terminated string; `canCompatible` is NULL or valid for a
/// write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCheckArchCompatibility(
    socVersion: *const c_char,
    canCompatible: *mut i32,
) -> aclError {
    acl_call("aclrtCheckArchCompatibility", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(canCompatible, "canCompatible") }?;
        // SAFETY: forwarded from this function's contract.
        let soc = unsafe { required_str(socVersion, "socVersion") }?;
        let mine = settings().product.npu_arch();
        out.write(i32::from(Product::from_soc(soc).is_some_and(|p| p.npu_arch() == mine)));
        Ok(())
    })
}
