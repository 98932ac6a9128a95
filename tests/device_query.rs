//! Device and platform queries, versions, limits, settings and the runtime's lifecycle
//! callbacks, through the C entry points.
//!
//! In-process tests share the process (default settings: 8 Atlas A2 devices, Ascend910B1), so
//! each uses its own device or filters what it observes by device and handle. What depends on
//! process-wide state that other tests would see (`aclInit`/`aclFinalize`, other products) runs
//! in a child process: this binary again, with a scenario named in an environment variable.

use std::ffi::{CStr, CString, c_char, c_void};
use std::process::Command;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::callbacks_state::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::device_query::*;
use ascendless::ffi::acl_rt::group::*;
use ascendless::ffi::acl_rt::limits::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::overflow::*;
use ascendless::ffi::acl_rt::snapshot::*;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::version::*;

type Handle = *mut c_void;

const SCENARIO: &str = "ASCENDLESS_DEVQ_SCENARIO";

fn stream() -> Handle {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn info(device: u32, attr: i32) -> (i32, i64) {
    let mut v = -7;
    // SAFETY: valid out-pointer.
    let rc = unsafe { aclrtGetDeviceInfo(device, attr, &mut v) };
    (rc, v)
}

fn version_str(pkg: &str) -> (i32, String) {
    let name = CString::new(pkg).unwrap();
    let mut buf = [0 as c_char; ACL_PKG_VERSION_MAX_SIZE];
    // SAFETY: a NUL-terminated name and a buffer of the documented size.
    let rc = unsafe { aclsysGetVersionStr(name.as_ptr().cast_mut(), buf.as_mut_ptr()) };
    // SAFETY: the buffer is zeroed, so NUL-terminated whatever happened.
    (rc, unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned())
}

fn text(chars: &[c_char]) -> String {
    // SAFETY: the arrays the library fills are NUL-terminated within their size.
    unsafe { CStr::from_ptr(chars.as_ptr()) }.to_str().unwrap().to_owned()
}

#[test]
fn versions_are_the_emulated_toolkit_s() {
    assert_eq!(version_str("runtime"), (ACL_SUCCESS, "9.0.0".to_owned()));
    assert_eq!(version_str("opp-kernel"), (ACL_SUCCESS, "9.0.0".to_owned()));
    assert_eq!(version_str("driver"), (ACL_SUCCESS, "25.5.0".to_owned()));
    assert_eq!(version_str("no-such-package").0, ACL_ERROR_INVALID_FILE);
    let mut num = 0;
    let name = CString::new("cann").unwrap();
    // SAFETY: valid name and out-pointers; NULL pointers are refused before any use.
    unsafe {
        assert_eq!(aclsysGetVersionNum(name.as_ptr().cast_mut(), &mut num), ACL_SUCCESS);
        assert_eq!(num, 90_000_000);
        assert_eq!(aclsysGetVersionNum(null_mut(), &mut num), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclsysGetVersionNum(name.as_ptr().cast_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclsysGetVersionStr(name.as_ptr().cast_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    // SAFETY: a struct of byte arrays, for which all zeros is a value.
    let mut v: aclCANNPackageVersion = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclsysGetCANNVersion(aclCANNPackageName::ACL_PKG_NAME_DRIVER as i32, &mut v), ACL_SUCCESS);
        assert_eq!(
            (text(&v.version), text(&v.majorVersion), text(&v.minorVersion), text(&v.releaseVersion)),
            ("25.5.0".into(), "25".into(), "5".into(), "0".into())
        );
        assert_eq!(text(&v.patchVersion), "0");
        assert_eq!(aclsysGetCANNVersion(1, &mut v), ACL_SUCCESS);
        assert_eq!(text(&v.version), version_str("runtime").1);
        assert_eq!(aclsysGetCANNVersion(8, &mut v), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclsysGetCANNVersion(0, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    let (mut ma, mut mi, mut pa) = (0, 0, 0);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetVersion(&mut ma, &mut mi, &mut pa), ACL_SUCCESS);
        assert_eq!(aclrtGetVersion(&mut ma, null_mut(), &mut pa), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!((ma, mi, pa), (ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION));
    assert_eq!((ma, mi, pa), (1, 17, 0));
}

#[test]
fn run_mode_and_task_scheduler() {
    let mut mode = aclrtRunMode::ACL_DEVICE;
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(aclrtGetRunMode(&mut mode), ACL_SUCCESS);
        assert_eq!(aclrtGetRunMode(null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert!(matches!(mode, aclrtRunMode::ACL_HOST));
    assert_eq!(aclrtSetTsDevice(aclrtTsId::ACL_TS_ID_AIVECTOR as i32), ACL_SUCCESS);
    assert_eq!(aclrtSetTsDevice(aclrtTsId::ACL_TS_ID_AICORE as i32), ACL_SUCCESS);
    assert_eq!(aclrtSetTsDevice(aclrtTsId::ACL_TS_ID_RESERVED as i32), ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn device_info_answers_from_the_product_profile() {
    use aclrtDevAttr::*;
    let a = |attr: aclrtDevAttr| attr as i32;
    assert_eq!(info(0, a(ACL_DEV_ATTR_AICORE_CORE_NUM)), (ACL_SUCCESS, 24));
    assert_eq!(info(0, a(ACL_DEV_ATTR_CUBE_CORE_NUM)), (ACL_SUCCESS, 24));
    assert_eq!(info(0, a(ACL_DEV_ATTR_VECTOR_CORE_NUM)), (ACL_SUCCESS, 48));
    assert_eq!(info(0, a(ACL_DEV_ATTR_AICPU_CORE_NUM)), (ACL_SUCCESS, 6));
    assert_eq!(info(0, a(ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE)), (ACL_SUCCESS, 64 << 30));
    assert_eq!(info(0, a(ACL_DEV_ATTR_L2_CACHE_SIZE)), (ACL_SUCCESS, 192 << 20));
    assert_eq!(info(0, a(ACL_DEV_ATTR_NPU_ARCH)), (ACL_SUCCESS, 2201));
    assert_eq!(info(0, a(ACL_DEV_ATTR_WARP_SIZE)), (ACL_SUCCESS, 0), "SIMT figures are 950-only");
    assert_eq!(info(0, a(ACL_DEV_ATTR_IS_VIRTUAL)), (ACL_SUCCESS, 0));
    assert_eq!(info(3, a(ACL_DEV_ATTR_PHY_CHIP_ID)), (ACL_SUCCESS, 3));
    assert_eq!(info(3, a(ACL_DEV_ATTR_SMP_ID)), info(5, a(ACL_DEV_ATTR_SMP_ID)), "one OS for all");
    assert_eq!(info(0, a(ACL_DEV_ATTR_HD_CONNECT_TYPE)).0, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(info(0, a(ACL_DEV_ATTR_SUPER_POD_ID)).0, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(info(0, 999).0, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(info(8, a(ACL_DEV_ATTR_AICORE_CORE_NUM)).0, ACL_ERROR_RT_INVALID_DEVICEID);
    // SAFETY: NULL is refused before any work.
    assert_eq!(unsafe { aclrtGetDeviceInfo(0, 101, null_mut()) }, ACL_ERROR_INVALID_PARAM);
    // The same answer every time, and the resource limits' defaults are these counts.
    assert_eq!(info(0, a(ACL_DEV_ATTR_AICORE_CORE_NUM)), info(7, a(ACL_DEV_ATTR_AICORE_CORE_NUM)));
    let mut cores = 0;
    assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceResLimit(4, 0, &mut cores) }, ACL_SUCCESS);
    assert_eq!(i64::from(cores), info(4, a(ACL_DEV_ATTR_CUBE_CORE_NUM)).1);
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceResLimit(4, 1, &mut cores) }, ACL_SUCCESS);
    assert_eq!(i64::from(cores), info(4, a(ACL_DEV_ATTR_VECTOR_CORE_NUM)).1);
    assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
}

#[test]
fn capabilities_status_and_utilisation() {
    let mut v = -1;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetDeviceCapability(0, 1, &mut v), ACL_SUCCESS);
        assert_eq!(v, ACL_DEV_FEATURE_NOT_SUPPORT);
        assert_eq!(aclrtGetDeviceCapability(0, 21, &mut v), ACL_SUCCESS);
        assert_eq!(v, ACL_DEV_FEATURE_NOT_SUPPORT);
        assert_eq!(aclrtGetDeviceCapability(0, 2, &mut v), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtGetDeviceCapability(9, 1, &mut v), ACL_ERROR_RT_INVALID_DEVICEID);
    }
    let mut status = aclrtDeviceStatus::ACL_RT_DEVICE_STATUS_ABNORMAL;
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(aclrtQueryDeviceStatus(2, &mut status), ACL_SUCCESS);
        assert_eq!(aclrtQueryDeviceStatus(99, &mut status), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(aclrtQueryDeviceStatus(2, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert!(matches!(status, aclrtDeviceStatus::ACL_RT_DEVICE_STATUS_NORMAL));
    let mut u = aclrtUtilizationInfo {
        cubeUtilization: 55,
        vectorUtilization: 55,
        aicpuUtilization: 55,
        memoryUtilization: 55,
        utilizationExtend: null_mut(),
    };
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceUtilizationRate(1, &mut u) }, ACL_SUCCESS);
    assert_eq!(
        (u.cubeUtilization, u.vectorUtilization, u.aicpuUtilization, u.memoryUtilization),
        (0, 0, 0, -1)
    );
    // SAFETY: an invalid device is refused before the write.
    assert_eq!(unsafe { aclrtGetDeviceUtilizationRate(8, &mut u) }, ACL_ERROR_RT_INVALID_DEVICEID);
}

#[test]
fn uuids_topology_and_pci_addresses() {
    let uuid = |d: i32| {
        let mut u = aclrtUuid { bytes: [0; 16] };
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtDeviceGetUuid(d, &mut u) }, ACL_SUCCESS);
        u.bytes
    };
    assert_eq!(uuid(1), uuid(1));
    let all: std::collections::HashSet<[c_char; 16]> = (0..8).map(uuid).collect();
    assert_eq!(all.len(), 8, "one UUID per device");
    // SAFETY: NULL is refused; an invalid device too.
    unsafe {
        assert_eq!(aclrtDeviceGetUuid(0, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtDeviceGetUuid(8, &mut aclrtUuid { bytes: [0; 16] }), ACL_ERROR_RT_INVALID_DEVICEID);
    }

    let mut topo = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetDevicesTopo(0, 7, &mut topo), ACL_SUCCESS);
        assert_eq!(topo, ACL_RT_DEVS_TOPOLOGY_HCCS, "an Atlas A2 server links every pair by HCCS");
        assert_eq!(aclrtGetDevicesTopo(3, 3, &mut topo), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtGetDevicesTopo(3, 8, &mut topo), ACL_ERROR_RT_INVALID_DEVICEID);
    }

    for d in 0..8 {
        let mut buf = [0 as c_char; 13];
        // SAFETY: a 13-byte buffer.
        assert_eq!(unsafe { aclrtDeviceGetPCIBusId(d, buf.as_mut_ptr(), 13) }, ACL_SUCCESS);
        let id = text(&buf);
        assert_eq!(id, format!("0000:{:02x}:00.0", d + 1));
        let mut back = -1;
        // SAFETY: NUL-terminated string and valid out-pointer.
        assert_eq!(unsafe { aclrtDeviceGetByPCIBusId(buf.as_ptr(), &mut back) }, ACL_SUCCESS);
        assert_eq!(back, d);
    }
    let mut buf = [0 as c_char; 12];
    let mut back = -1;
    let unknown = CString::new("0000:ff:00.0").unwrap();
    let garbage = CString::new("pci0").unwrap();
    // SAFETY: buffers of the lengths given; valid strings.
    unsafe {
        assert_eq!(aclrtDeviceGetPCIBusId(0, buf.as_mut_ptr(), 12), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtDeviceGetPCIBusId(0, null_mut(), 13), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtDeviceGetByPCIBusId(unknown.as_ptr(), &mut back), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtDeviceGetByPCIBusId(garbage.as_ptr(), &mut back), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtDeviceGetByPCIBusId(null(), &mut back), ACL_ERROR_INVALID_PARAM);
    }
}

#[test]
fn atomic_capabilities() {
    use aclrtAtomicOperation::*;
    let signed_unsigned_32_64 = (aclrtAtomicOperationCapability::ACL_RT_ATOMIC_CAPABILITY_SIGNED as u32)
        | aclrtAtomicOperationCapability::ACL_RT_ATOMIC_CAPABILITY_UNSIGNED as u32
        | aclrtAtomicOperationCapability::ACL_RT_ATOMIC_CAPABILITY_SCALAR32 as u32
        | aclrtAtomicOperationCapability::ACL_RT_ATOMIC_CAPABILITY_SCALAR64 as u32;
    let ops = [
        ACL_RT_ATOMIC_OPERATION_INTEGER_ADD as i32,
        ACL_RT_ATOMIC_OPERATION_CAS as i32,
        ACL_RT_ATOMIC_OPERATION_FLOAT_ADD as i32,
        ACL_RT_ATOMIC_OPERATION_DMA_ADD as i32,
    ];
    let mut caps = [u32::MAX; 4];
    let mut p2p = [u32::MAX; 4];
    // SAFETY: arrays of 4 each.
    unsafe {
        assert_eq!(aclrtDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 4, 0), ACL_SUCCESS);
        assert_eq!(aclrtDeviceGetP2PAtomicCapabilities(p2p.as_mut_ptr(), ops.as_ptr(), 4, 0, 1), ACL_SUCCESS);
    }
    assert_eq!(caps[0], signed_unsigned_32_64);
    assert_eq!(caps[1], signed_unsigned_32_64);
    assert_eq!(caps[2], (1 << 5) | (1 << 6));
    assert_eq!(caps[3], 0, "no DMA engine");
    assert_eq!(caps, p2p);
    let bad = [99i32];
    // SAFETY: arrays of the counts given; NULL and 0 are refused.
    unsafe {
        assert_eq!(
            aclrtDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), bad.as_ptr(), 1, 0),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            aclrtDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 0, 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            aclrtDeviceGetHostAtomicCapabilities(null_mut(), ops.as_ptr(), 1, 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            aclrtDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 1, 8),
            ACL_ERROR_RT_INVALID_DEVICEID
        );
        assert_eq!(
            aclrtDeviceGetP2PAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 1, 0, 8),
            ACL_ERROR_RT_INVALID_DEVICEID
        );
    }
}

#[test]
fn primary_context_follows_set_and_reset() {
    let state = || {
        let mut active = -1;
        // SAFETY: valid out-pointer; flags must be NULL.
        assert_eq!(unsafe { aclrtGetPrimaryCtxState(5, null_mut(), &mut active) }, ACL_SUCCESS);
        active
    };
    let mut flags = 0u32;
    // SAFETY: non-NULL flags are refused before any write.
    assert_eq!(unsafe { aclrtGetPrimaryCtxState(5, &mut flags, &mut 0) }, ACL_ERROR_INVALID_PARAM);
    assert_eq!(state(), 0);
    assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
    assert_eq!(state(), 1);
    let mut active = -1;
    // SAFETY: flags may be NULL; active may not.
    unsafe {
        assert_eq!(aclrtGetPrimaryCtxState(5, null_mut(), &mut active), ACL_SUCCESS);
        assert_eq!(aclrtGetPrimaryCtxState(5, null_mut(), null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetPrimaryCtxState(8, null_mut(), &mut active), ACL_ERROR_RT_INVALID_DEVICEID);
    }
    assert_eq!(active, 1);
    assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
    assert_eq!(state(), 0);
}

#[test]
fn arch_compatibility_compares_npu_architectures() {
    let check = |soc: &str| {
        let soc = CString::new(soc).unwrap();
        let mut ok = -1;
        // SAFETY: NUL-terminated string, valid out-pointer.
        assert_eq!(unsafe { aclrtCheckArchCompatibility(soc.as_ptr(), &mut ok) }, ACL_SUCCESS);
        ok
    };
    assert_eq!(check("Ascend910B1"), 1);
    assert_eq!(check("Ascend910_9391"), 1, "Atlas A3 shares the A2 architecture (2201)");
    assert_eq!(check("Ascend310P3"), 0);
    assert_eq!(check("Pentium"), 0);
    // SAFETY: NULL is refused.
    assert_eq!(unsafe { aclrtCheckArchCompatibility(null(), &mut 0) }, ACL_ERROR_INVALID_PARAM);
}

#[test]
fn device_limits_are_checked_rounded_and_read_back() {
    use aclrtDeviceLimit::*;
    let get = |l: aclrtDeviceLimit| {
        let mut v = 0usize;
        // SAFETY: valid out-pointer.
        let rc = unsafe { aclrtDeviceGetLimit(l as i32, &mut v) };
        (rc, v)
    };
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), (ACL_SUCCESS, 32768), "the vendor's default");
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE), (ACL_SUCCESS, 32768));
    assert_eq!(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE as i32, 40_000), ACL_SUCCESS);
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), (ACL_SUCCESS, 48 << 10), "up to 16 KiB multiples");
    assert_eq!(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE as i32, 100), ACL_SUCCESS);
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE), (ACL_SUCCESS, 32 << 10));
    assert_eq!(
        aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE as i32, 200 << 10),
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(
        aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE as i32, 1025),
        ACL_SUCCESS
    );
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE), (ACL_SUCCESS, 1032));
    assert_eq!(
        aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE as i32, 1000),
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(
        aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE as i32, 256),
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        "SIMT limits are Ascend 950's"
    );
    assert_eq!(get(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE).0, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtDeviceSetLimit(5, 1), ACL_ERROR_RT_PARAM_INVALID);
    // SAFETY: NULL is refused.
    assert_eq!(unsafe { aclrtDeviceGetLimit(2, null_mut()) }, ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE as i32, 0), ACL_SUCCESS);
}

#[test]
fn resource_limits_take_stream_then_process_then_hardware() {
    const CUBE: i32 = aclrtDevResLimitType::ACL_RT_DEV_RES_CUBE_CORE as i32;
    const VECTOR: i32 = aclrtDevResLimitType::ACL_RT_DEV_RES_VECTOR_CORE as i32;
    let dev = |kind| {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetDeviceResLimit(6, kind, &mut v) }, ACL_SUCCESS);
        v
    };
    let on_stream = |s: Handle, kind| {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetStreamResLimit(s, kind, &mut v) }, ACL_SUCCESS);
        v
    };
    let thread = |kind| {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetResInCurrentThread(kind, &mut v) }, ACL_SUCCESS);
        v
    };
    let mut v = 0;
    // SAFETY: valid out-pointer.
    let rc = unsafe { aclrtGetDeviceResLimit(6, CUBE, &mut v) };
    assert_eq!(rc, ACL_ERROR_RT_DEV_SETUP_ERROR, "not in use");
    assert_eq!(aclrtSetDeviceResLimit(6, CUBE, 1), ACL_ERROR_RT_DEV_SETUP_ERROR);
    assert_eq!(aclrtResetDeviceResLimit(6), ACL_ERROR_RT_DEV_SETUP_ERROR);
    assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
    assert_eq!((dev(CUBE), dev(VECTOR)), (24, 48));
    assert_eq!(aclrtSetDeviceResLimit(6, CUBE, 25), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtSetDeviceResLimit(6, 2, 1), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtSetDeviceResLimit(8, CUBE, 1), ACL_ERROR_RT_INVALID_DEVICEID);
    assert_eq!(aclrtSetDeviceResLimit(6, CUBE, 12), ACL_SUCCESS);
    assert_eq!((dev(CUBE), dev(VECTOR)), (12, 48));
    let s = stream();
    assert_eq!(on_stream(s, CUBE), 12, "the process's limit");
    assert_eq!(on_stream(null_mut(), VECTOR), 48, "the hardware's, on the default stream");
    assert_eq!(aclrtSetStreamResLimit(s, VECTOR, 8), ACL_SUCCESS);
    assert_eq!(aclrtSetStreamResLimit(s, VECTOR, 49), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(on_stream(s, VECTOR), 8);
    assert_eq!(thread(VECTOR), 48, "not used by this thread yet");
    assert_eq!(thread(CUBE), 12);
    assert_eq!(aclrtUseStreamResInCurrentThread(s), ACL_SUCCESS);
    assert_eq!(thread(VECTOR), 8);
    assert_eq!(thread(CUBE), 12, "the stream sets no cube limit: the process's");
    let other = std::thread::spawn(move || {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        unsafe { aclrtGetResInCurrentThread(VECTOR, &mut v) }
    });
    assert_eq!(other.join().unwrap(), ACL_ERROR_RT_CONTEXT_NULL, "another thread has no device");
    assert_eq!(aclrtUnuseStreamResInCurrentThread(s), ACL_SUCCESS);
    assert_eq!(thread(VECTOR), 48);
    assert_eq!(aclrtResetStreamResLimit(s), ACL_SUCCESS);
    assert_eq!(on_stream(s, VECTOR), 48);
    assert_eq!(aclrtResetDeviceResLimit(6), ACL_SUCCESS);
    assert_eq!(on_stream(s, CUBE), 24);
    // SAFETY: NULL out-pointers are refused.
    unsafe {
        assert_eq!(aclrtGetStreamResLimit(s, CUBE, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetResInCurrentThread(CUBE, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_ne!(aclrtSetStreamResLimit(s, CUBE, 1), ACL_SUCCESS, "a destroyed stream is refused");
    assert_eq!(aclrtSetDeviceResLimit(6, VECTOR, 0), ACL_SUCCESS, "0 is a count like another");
    assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
    assert_eq!(dev(VECTOR), 48, "the limits went with the device's last reset");
    assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
}

#[test]
fn system_parameters_per_process_and_per_context() {
    use aclSysParamOpt::*;
    let mut v = -1;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL as i32, &mut v), ACL_SUCCESS);
        assert_eq!(v, 0, "0 until set");
        assert_eq!(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC as i32, 3), ACL_SUCCESS);
        assert_eq!(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC as i32, &mut v), ACL_SUCCESS);
        assert_eq!(v, 3);
        assert_eq!(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC as i32, 4), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL as i32, 2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSetSysParamOpt(9, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtGetSysParamOpt(0, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(
            aclrtCtxGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY as i32, &mut v),
            ACL_ERROR_RT_SYSPARAMOPT_NOT_SET
        );
        assert_eq!(aclrtCtxSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY as i32, 1), ACL_SUCCESS);
        assert_eq!(aclrtCtxGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY as i32, &mut v), ACL_SUCCESS);
        assert_eq!(v, 1);
        assert_eq!(
            aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START as i32, 5),
            ACL_ERROR_RT_PARAM_INVALID
        );
    }
    assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
    let other = std::thread::spawn(|| {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        unsafe { aclrtCtxGetSysParamOpt(0, &mut v) }
    });
    assert_eq!(other.join().unwrap(), ACL_ERROR_RT_CONTEXT_NULL);
}

#[test]
fn operator_time_outs_round_to_the_product_s_steps() {
    // Atlas A2: steps of 4 294 967 us, at most 254 (1091 s), the default.
    let mut interval = 0;
    let mut ms = 0;
    let mut actual = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetOpTimeOutInterval(&mut interval), ACL_SUCCESS);
        assert_eq!(interval, 4_294_967);
        assert_eq!(aclrtSetOpExecuteTimeOutV2(1, &mut actual), ACL_SUCCESS);
        assert_eq!(actual, interval);
        assert_eq!(aclrtGetOpExecuteTimeout(&mut ms), ACL_SUCCESS);
        assert_eq!(u64::from(ms), interval / 1000);
        assert_eq!(aclrtSetOpExecuteTimeOut(10), ACL_SUCCESS);
        assert_eq!(aclrtGetOpExecuteTimeout(&mut ms), ACL_SUCCESS);
        assert_eq!(u64::from(ms), 3 * interval / 1000, "10 s is 3 steps");
        assert_eq!(aclrtSetOpExecuteTimeOutWithMs(0), ACL_SUCCESS);
        assert_eq!(aclrtGetOpExecuteTimeout(&mut ms), ACL_SUCCESS);
        assert_eq!(u64::from(ms), 254 * interval / 1000, "0 is the longest");
        assert_eq!(aclrtSetOpExecuteTimeOutV2(u64::MAX, &mut actual), ACL_SUCCESS);
        assert_eq!(actual, 254 * interval);
        assert_eq!(aclrtSetOpExecuteTimeOutV2(5, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetOpTimeOutInterval(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetOpExecuteTimeout(null_mut()), ACL_ERROR_INVALID_PARAM);
    }
}

#[test]
fn saturation_mode_per_device() {
    let get = || {
        let mut m = aclrtFloatOverflowMode::ACL_RT_OVERFLOW_MODE_UNDEF;
        // SAFETY: valid out-pointer.
        let rc = unsafe { aclrtGetDeviceSatMode(&mut m) };
        (rc, m as i32)
    };
    let other = std::thread::spawn(get);
    assert_eq!(other.join().unwrap().0, ACL_ERROR_RT_CONTEXT_NULL);
    assert_eq!(aclrtSetDevice(7), ACL_SUCCESS);
    assert_eq!(get(), (ACL_SUCCESS, 1), "Inf/NaN by default on Atlas A2");
    assert_eq!(aclrtSetDeviceSatMode(0), ACL_SUCCESS);
    assert_eq!(get(), (ACL_SUCCESS, 0));
    assert_eq!(aclrtSetDeviceSatMode(2), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(get(), (ACL_SUCCESS, 0));
    // SAFETY: NULL is refused.
    assert_eq!(unsafe { aclrtGetDeviceSatMode(null_mut()) }, ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtResetDevice(7), ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(7), ACL_SUCCESS);
    assert_eq!(get(), (ACL_SUCCESS, 1), "a reset device starts with the default mode");
    assert_eq!(aclrtResetDevice(7), ACL_SUCCESS);
}

#[test]
fn overflow_is_never_set_and_reads_as_zeros() {
    assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
    let s = stream();
    let mut flag = 9;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetStreamOverflowSwitch(s, &mut flag), ACL_SUCCESS);
        assert_eq!(flag, 0);
        assert_eq!(aclrtSetStreamOverflowSwitch(s, 1), ACL_SUCCESS);
        assert_eq!(aclrtGetStreamOverflowSwitch(s, &mut flag), ACL_SUCCESS);
        assert_eq!(flag, 1);
        assert_eq!(aclrtSetStreamOverflowSwitch(s, 2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtGetStreamOverflowSwitch(s, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    let mut dev = null_mut();
    let mut host = [0xffu8; 64];
    // SAFETY: a 64-byte device buffer filled with 0xff, read back after the stream ran.
    unsafe {
        assert_eq!(aclrtMalloc(&mut dev, 64, 0), ACL_SUCCESS);
        for get in [
            |d, s| aclrtGetOverflowStatus(d, 64, s),
            |d, s| aclrtGetFloatOverflowStatus(d, 64, s),
            |d, s| aclrtNpuGetFloatOverFlowStatus(d, 64, 0, s),
        ] {
            assert_eq!(aclrtMemset(dev, 64, 0xff, 64), ACL_SUCCESS);
            assert_eq!(get(dev, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(aclrtMemcpy(host.as_mut_ptr().cast(), 64, dev, 64, 2), ACL_SUCCESS);
            assert_eq!(host, [0u8; 64], "no overflow");
            host = [0xff; 64];
        }
        assert_eq!(aclrtGetOverflowStatus(null_mut(), 64, s), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
    }
    assert_eq!(aclrtResetOverflowStatus(s), ACL_SUCCESS);
    assert_eq!(aclrtResetFloatOverflowStatus(s), ACL_SUCCESS);
    assert_eq!(aclrtNpuClearFloatOverFlowStatus(0, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_ne!(aclrtResetOverflowStatus(s), ACL_SUCCESS, "a destroyed stream is refused");
    assert_eq!(aclrtResetDevice(3), ACL_SUCCESS);
}

#[test]
fn the_one_core_group_describes_the_device() {
    assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
    let mut count = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetGroupCount(&mut count) }, ACL_SUCCESS);
    assert_eq!(count, 1);
    let g = aclrtCreateGroupInfo();
    assert!(!g.is_null());
    let detail = |attr: aclrtGroupAttr| {
        let (mut v, mut size) = (-1i32, 0usize);
        // SAFETY: a 4-byte value and a size out-pointer.
        let rc = unsafe { aclrtGetGroupInfoDetail(g, 0, attr as i32, (&raw mut v).cast(), 4, &mut size) };
        (rc, v, size)
    };
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_AICORE_INT).0, ACL_ERROR_RT_PARAM_INVALID, "not filled yet");
    // SAFETY: a block of this library.
    assert_eq!(unsafe { aclrtGetAllGroupInfo(g) }, ACL_SUCCESS);
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_AICORE_INT), (ACL_SUCCESS, 24, 4));
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_AIV_INT), (ACL_SUCCESS, 48, 4));
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_AIC_INT), (ACL_SUCCESS, 6, 4));
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_SDMANUM_INT), (ACL_SUCCESS, 4, 4));
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_ASQNUM_INT), (ACL_SUCCESS, 32, 4));
    assert_eq!(detail(aclrtGroupAttr::ACL_GROUP_GROUPID_INT), (ACL_SUCCESS, 0, 4));
    let (mut v, mut size) = (0i32, 0usize);
    // SAFETY: buffers of the sizes given; bad arguments are refused before any write.
    unsafe {
        assert_eq!(
            aclrtGetGroupInfoDetail(g, 1, 0, (&raw mut v).cast(), 4, &mut size),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            aclrtGetGroupInfoDetail(g, 0, 6, (&raw mut v).cast(), 4, &mut size),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            aclrtGetGroupInfoDetail(g, 0, 0, (&raw mut v).cast(), 2, &mut size),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(aclrtGetGroupInfoDetail(g, 0, 0, null_mut(), 4, &mut size), ACL_ERROR_INVALID_PARAM);
        let mut not_a_block = 0u64;
        assert_eq!(aclrtGetAllGroupInfo((&raw mut not_a_block).cast()), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtDestroyGroupInfo(g), ACL_SUCCESS);
        assert_eq!(aclrtDestroyGroupInfo(g), ACL_ERROR_RT_PARAM_INVALID, "destroyed already");
        assert_eq!(aclrtDestroyGroupInfo(null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(aclrtSetGroup(0), ACL_SUCCESS);
    assert_eq!(aclrtSetGroup(1), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtResetDevice(2), ACL_SUCCESS);
    let other = std::thread::spawn(|| aclrtSetGroup(0));
    assert_eq!(other.join().unwrap(), ACL_ERROR_RT_CONTEXT_NULL);
}

/// (device, state, user data) seen by the device state callback.
static DEVICE_EVENTS: Mutex<Vec<(i32, i32, usize)>> = Mutex::new(Vec::new());
static MARK: u8 = 0;

unsafe extern "C" fn on_device(device: i32, state: aclrtDeviceState, args: *mut c_void) {
    let mut active = -1;
    // SAFETY: valid out-pointer; a callback may call the runtime.
    assert_eq!(unsafe { aclrtGetPrimaryCtxState(device, null_mut(), &mut active) }, ACL_SUCCESS);
    DEVICE_EVENTS.lock().unwrap().push((device, state as i32, args.addr()));
}

#[test]
fn device_state_callbacks_bracket_set_and_reset() {
    let name = CString::new("devq-device").unwrap();
    let mark = (&raw const MARK).cast_mut().cast::<c_void>();
    // SAFETY: a NUL-terminated name and a callback that stays valid.
    unsafe {
        assert_eq!(aclrtRegDeviceStateCallback(name.as_ptr(), Some(on_device), mark), ACL_SUCCESS);
        assert_eq!(
            aclrtRegDeviceStateCallback(name.as_ptr(), Some(on_device), mark),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(aclrtRegDeviceStateCallback(null(), Some(on_device), mark), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtRegDeviceStateCallback(c"".as_ptr(), Some(on_device), mark), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS, "a second use opens nothing");
    assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    assert_eq!(aclrtResetDevice(1), ACL_SUCCESS, "the last reset closes the device");
    assert_eq!(aclrtResetDevice(1), ACL_SUCCESS, "a device not in use: nothing");
    assert_eq!(aclrtSetDevice(9), ACL_ERROR_RT_INVALID_DEVICEID, "no callback for an invalid device");
    // SAFETY: NULL unregisters.
    assert_eq!(unsafe { aclrtRegDeviceStateCallback(name.as_ptr(), None, null_mut()) }, ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
    assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    let seen: Vec<(i32, i32, usize)> =
        DEVICE_EVENTS.lock().unwrap().iter().copied().filter(|e| e.0 == 1 || e.0 == 9).collect();
    let m = mark.addr();
    assert_eq!(
        seen,
        vec![(1, 0, m), (1, 1, m), (1, 2, m), (1, 3, m)],
        "SET_PRE, SET_POST, RESET_PRE, RESET_POST"
    );
}

static STREAM_EVENTS: Mutex<Vec<(usize, i32)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_stream(stm: Handle, state: aclrtStreamState, args: *mut c_void) {
    assert_eq!(args.addr(), (&raw const MARK).addr());
    // A callback may call the runtime: no lock of it is held (a default stream is announced
    // from inside aclrtSetDevice).
    let mut active = -1;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetPrimaryCtxState(0, null_mut(), &mut active) }, ACL_SUCCESS);
    STREAM_EVENTS.lock().unwrap().push((stm.addr(), state as i32));
}

#[test]
fn stream_state_callbacks_see_creation_and_destruction() {
    let name = CString::new("devq-stream").unwrap();
    let mark = (&raw const MARK).cast_mut().cast::<c_void>();
    // SAFETY: a NUL-terminated name and a callback that stays valid.
    assert_eq!(unsafe { aclrtRegStreamStateCallback(name.as_ptr(), Some(on_stream), mark) }, ACL_SUCCESS);
    let again = {
        // SAFETY: as above.
        unsafe { aclrtRegStreamStateCallback(name.as_ptr(), Some(on_stream), mark) }
    };
    assert_eq!(again, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let mut default = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCtxGetCurrentDefaultStream(&mut default) }, ACL_SUCCESS);
    let s = stream();
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    // SAFETY: NULL unregisters.
    assert_eq!(unsafe { aclrtRegStreamStateCallback(name.as_ptr(), None, null_mut()) }, ACL_SUCCESS);
    let after = stream();
    assert_eq!(aclrtDestroyStream(after), ACL_SUCCESS);
    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    let seen: Vec<(usize, i32)> = STREAM_EVENTS.lock().unwrap().clone();
    let of = |h: Handle| seen.iter().filter(|e| e.0 == h.addr()).map(|e| e.1).collect::<Vec<_>>();
    assert_eq!(of(s), vec![1, 2], "CREATE_POST then DESTROY_PRE");
    assert_eq!(of(default), vec![1, 2], "the default stream comes and goes with its device");
    assert!(of(after).is_empty(), "unregistered");
}

static ABORT_EVENTS: Mutex<Vec<(i32, i32, u32)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_abort(
    device: i32,
    stage: aclrtDeviceTaskAbortStage,
    timeout: u32,
    _: *mut c_void,
) -> i32 {
    ABORT_EVENTS.lock().unwrap().push((device, stage as i32, timeout));
    0
}

#[test]
fn task_abort_callbacks_run_before_and_after_the_abort() {
    let name = CString::new("devq-abort").unwrap();
    let rc = {
        // SAFETY: a NUL-terminated name and a callback that stays valid.
        unsafe { aclrtSetDeviceTaskAbortCallback(name.as_ptr(), Some(on_abort), null_mut()) }
    };
    assert_eq!(rc, ACL_SUCCESS);
    assert_eq!(aclrtDeviceTaskAbort(7, 250), ACL_SUCCESS);
    // SAFETY: NULL unregisters.
    assert_eq!(unsafe { aclrtSetDeviceTaskAbortCallback(name.as_ptr(), None, null_mut()) }, ACL_SUCCESS);
    assert_eq!(aclrtDeviceTaskAbort(7, 251), ACL_SUCCESS);
    let seen: Vec<(i32, i32, u32)> =
        ABORT_EVENTS.lock().unwrap().iter().copied().filter(|e| e.0 == 7).collect();
    assert_eq!(seen, vec![(7, 0, 250), (7, 1, 250)]);
}

#[test]
fn the_last_task_id_is_the_thread_s() {
    assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
    let s = stream();
    let mut dev = null_mut();
    let mut id = 99;
    // SAFETY: a device buffer filled asynchronously, then a valid out-pointer.
    unsafe {
        assert_eq!(aclrtMalloc(&mut dev, 64, 0), ACL_SUCCESS);
        for _ in 0..3 {
            assert_eq!(aclrtMemsetAsync(dev, 64, 1, 64, s), ACL_SUCCESS);
        }
        assert_eq!(aclrtGetThreadLastTaskId(&mut id), ACL_SUCCESS);
        assert_eq!(aclrtGetThreadLastTaskId(null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(id, 2, "the third task of the stream");
    let other = std::thread::spawn(|| {
        let mut id = 99;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetThreadLastTaskId(&mut id) }, ACL_SUCCESS);
        id
    });
    assert_eq!(other.join().unwrap(), 0, "a thread that queued nothing");
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtFree(dev), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
}

#[test]
fn snapshots_and_profiler_records_are_not_supported() {
    assert_eq!(
        aclrtSnapShotProcessLock(std::process::id() as i32, null_mut()),
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    );
    assert_eq!(
        aclrtSnapShotProcessUnlock(std::process::id() as i32, null_mut()),
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    );
    assert_eq!(aclrtSnapShotProcessBackup(0, null_mut()), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtSnapShotProcessRestore(0, null_mut()), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtSnapShotCallbackRegister(0, None, null_mut()), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtSnapShotCallbackUnregister(0, None), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtCacheLastTaskOpInfo(null(), 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtCacheLastTaskExtendInfo(null(), 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtCtxGetFloatOverflowAddr(null_mut()), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}

#[test]
fn the_header_s_numbers_and_layouts_are_the_vendor_s_in_c_and_cxx() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = root.join("tests/c/device_query_spec.c");
    for (compiler, lang) in [("cc", "-std=c11"), ("c++", "-std=c++11")] {
        let mut cmd = Command::new(compiler);
        if compiler == "c++" {
            cmd.args(["-x", "c++"]);
        }
        let out = cmd
            .args([lang, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
            .arg(root.join("include"))
            .arg(&spec)
            .output()
            .unwrap();
        assert!(out.status.success(), "{compiler}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

// ---- child scenarios ----

/// Runs scenario `name` in a child process with `env`; it must pass.
fn run_scenario(name: &str, env: &[(&str, &str)]) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1", "--quiet"])
        .env(SCENARIO, name)
        .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scenario {name} {env:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn child() {
    match std::env::var(SCENARIO).as_deref() {
        Ok("init_callbacks") => init_callbacks(),
        Ok("product") => product_answers(),
        _ => {}
    }
}

static INIT_CALLS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn init_a(config: *const c_char, len: usize, data: *mut c_void) -> aclError {
    // SAFETY: the library passes `len` readable bytes.
    let text = unsafe { std::slice::from_raw_parts(config.cast::<u8>(), len) };
    // SAFETY: the user data is a NUL-terminated tag.
    let tag = unsafe { CStr::from_ptr(data.cast::<c_char>()) }.to_str().unwrap().to_owned();
    INIT_CALLS.lock().unwrap().push((tag, String::from_utf8(text.to_vec()).unwrap()));
    ACL_SUCCESS
}

unsafe extern "C" fn init_fails(_: *const c_char, _: usize, _: *mut c_void) -> aclError {
    ACL_ERROR_FAILURE
}

unsafe extern "C" fn finalize_cb(data: *mut c_void) -> aclError {
    // SAFETY: the user data is a NUL-terminated tag.
    let tag = unsafe { CStr::from_ptr(data.cast::<c_char>()) }.to_str().unwrap().to_owned();
    INIT_CALLS.lock().unwrap().push((tag, "finalize".to_owned()));
    ACL_ERROR_FAILURE
}

fn init_callbacks() {
    use ascendless::ffi::acl::*;
    let other = aclRegisterCallbackType::ACL_REG_TYPE_OTHER as i32;
    let model = aclRegisterCallbackType::ACL_REG_TYPE_ACL_MODEL as i32;
    let tag = |t: &'static CStr| t.as_ptr().cast_mut().cast::<c_void>();
    let config = std::env::temp_dir().join(format!("devq-config-{}.json", std::process::id()));
    std::fs::write(&config, br#"{"dump":{}}"#).unwrap();
    let path = CString::new(config.to_str().unwrap()).unwrap();
    // SAFETY: callbacks that stay valid, NUL-terminated tags and path.
    unsafe {
        assert_eq!(aclInitCallbackRegister(other, Some(init_a), tag(c"other")), ACL_SUCCESS);
        assert_eq!(aclInitCallbackRegister(model, Some(init_a), tag(c"model")), ACL_SUCCESS);
        assert_eq!(aclInitCallbackRegister(model, None, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclInitCallbackRegister(42, Some(init_a), null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclInitCallbackRegister(3, Some(init_fails), null_mut()), ACL_SUCCESS);
        assert_eq!(aclInit(path.as_ptr()), ACL_ERROR_FAILURE, "a failing init callback fails aclInit");
        assert_eq!(aclFinalize(), ACL_ERROR_UNINITIALIZE, "and leaves AscendCL uninitialised");
        assert_eq!(aclInitCallbackUnRegister(3, Some(init_fails)), ACL_SUCCESS);
        assert_eq!(aclInitCallbackUnRegister(3, None), ACL_ERROR_INVALID_PARAM);
        INIT_CALLS.lock().unwrap().clear();
        assert_eq!(aclFinalizeCallbackRegister(other, Some(finalize_cb), tag(c"fin")), ACL_SUCCESS);
        assert_eq!(aclFinalizeCallbackRegister(other, None, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclInit(path.as_ptr()), ACL_SUCCESS);
        let text = r#"{"dump":{}}"#.to_owned();
        assert_eq!(
            *INIT_CALLS.lock().unwrap(),
            vec![("model".to_owned(), text.clone()), ("other".to_owned(), text.clone())],
            "by type, OTHER last, with the file's text"
        );
        // Registered after aclInit: runs at once.
        assert_eq!(aclInitCallbackRegister(5, Some(init_a), tag(c"late")), ACL_SUCCESS);
        assert_eq!(INIT_CALLS.lock().unwrap().last().unwrap(), &("late".to_owned(), text.clone()));
        assert_eq!(aclInitCallbackRegister(6, Some(init_fails), null_mut()), ACL_ERROR_FAILURE);
        assert_eq!(aclInitCallbackUnRegister(6, Some(init_fails)), ACL_SUCCESS);
        INIT_CALLS.lock().unwrap().clear();
        assert_eq!(aclFinalize(), ACL_SUCCESS, "a failing finalize callback is only logged");
        assert_eq!(*INIT_CALLS.lock().unwrap(), vec![("fin".to_owned(), "finalize".to_owned())]);
        assert_eq!(aclFinalizeCallbackUnRegister(other, Some(finalize_cb)), ACL_SUCCESS);
        assert_eq!(aclFinalizeCallbackUnRegister(other, None), ACL_ERROR_INVALID_PARAM);
        INIT_CALLS.lock().unwrap().clear();
        assert_eq!(aclInitCallbackUnRegister(other, Some(init_a)), ACL_SUCCESS);
        assert_eq!(aclInit(null()), ACL_SUCCESS);
        assert_eq!(
            *INIT_CALLS.lock().unwrap(),
            vec![("model".to_owned(), String::new()), ("late".to_owned(), String::new())]
        );
        assert_eq!(aclFinalize(), ACL_SUCCESS);
        assert_eq!(INIT_CALLS.lock().unwrap().len(), 2, "the finalize callback is gone");
    }
    std::fs::remove_file(&config).unwrap();
}

#[test]
fn init_and_finalize_callbacks() {
    run_scenario("init_callbacks", &[]);
}

/// One product's figures, as docs/device.md's table gives them.
#[derive(Debug)]
struct Row {
    soc: String,
    values: Vec<i64>,
}

/// The attributes the table's columns hold, in order.
const TABLE_ATTRS: [i32; 6] = [101, 102, 201, 1, 302, 601];

fn table() -> Vec<Row> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/device.md")).unwrap();
    let start = doc.find("<!-- figures -->").expect("docs/device.md has its figures table");
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let soc = cells[0].trim_matches('`').to_owned();
            let values = cells[2..8]
                .iter()
                .map(|c| {
                    let c = c.replace('*', "");
                    match c.strip_suffix(" MiB") {
                        Some(mib) => mib.parse::<i64>().unwrap() << 20,
                        None => c.parse().unwrap(),
                    }
                })
                .collect();
            Row { soc, values }
        })
        .collect()
}

fn product_answers() {
    let expected: Vec<i64> =
        std::env::var("DEVQ_EXPECT").unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    let got: Vec<i64> = TABLE_ATTRS
        .iter()
        .map(|&a| {
            let (rc, v) = info(0, a);
            assert_eq!(rc, ACL_SUCCESS, "attribute {a}");
            v
        })
        .collect();
    assert_eq!(got, expected, "docs/device.md's row for {}", std::env::var("ASCENDLESS_SOC").unwrap());
    // Checks that differ per product.
    let soc = std::env::var("ASCENDLESS_SOC").unwrap();
    let mut interval = 0;
    let mut ms = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetOpTimeOutInterval(&mut interval), ACL_SUCCESS);
        assert_eq!(aclrtGetOpExecuteTimeout(&mut ms), ACL_SUCCESS);
    }
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let mut mode = aclrtFloatOverflowMode::ACL_RT_OVERFLOW_MODE_UNDEF;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceSatMode(&mut mode) }, ACL_SUCCESS);
    let simd = aclrtDeviceSetLimit(aclrtDeviceLimit::ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE as i32, 64 << 10);
    let simt = aclrtDeviceSetLimit(aclrtDeviceLimit::ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE as i32, 256);
    let (warp, _) = (info(0, 202).1, ());
    if soc.starts_with("Ascend950") {
        assert_eq!((simd, simt, warp, mode as i32), (ACL_SUCCESS, ACL_SUCCESS, 32, 1));
        let mut v = 0;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtDeviceGetLimit(0, &mut v) }, ACL_SUCCESS);
        assert_eq!(v, 256 * 32, "the SIMT stack reads per warp");
        assert_eq!(aclrtSetDeviceSatMode(0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Inf/NaN only");
        assert_eq!(info(0, 408), (ACL_SUCCESS, 0));
        assert_eq!(info(0, 403), (ACL_SUCCESS, 0));
    } else if soc.starts_with("Ascend910_93") {
        assert_eq!((simd, simt, warp, mode as i32), (ACL_SUCCESS, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 0, 1));
        let mut topo = 0;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtGetDevicesTopo(0, 1, &mut topo), ACL_SUCCESS);
            assert_eq!(topo, ACL_RT_DEVS_TOPOLOGY_SIO, "two dies of one chip");
            assert_eq!(aclrtGetDevicesTopo(0, 2, &mut topo), ACL_SUCCESS);
            assert_eq!(topo, ACL_RT_DEVS_TOPOLOGY_HCCS_SW);
        }
        assert_eq!((interval, ms), (4_294_967, 1_090_921));
    } else if soc.starts_with("Ascend910B") && soc.len() > "Ascend910B".len() {
        assert_eq!((simd, simt, mode as i32), (ACL_SUCCESS, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 1));
        assert_eq!((interval, ms), (4_294_967, 1_090_921));
    } else {
        // The older products: no device limits, saturation only.
        assert_eq!(
            (simd, simt, mode as i32),
            (ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 0)
        );
        assert_eq!(aclrtSetDeviceSatMode(1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        if soc.starts_with("Ascend310P") {
            assert_eq!(ms, 547_000);
        }
        if soc == "Ascend910A" {
            assert_eq!(ms, 68_000);
            let mut u = aclrtUtilizationInfo {
                cubeUtilization: 1,
                vectorUtilization: 1,
                aicpuUtilization: 1,
                memoryUtilization: 1,
                utilizationExtend: null_mut(),
            };
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclrtGetDeviceUtilizationRate(0, &mut u) }, ACL_SUCCESS);
            assert_eq!(u.vectorUtilization, -1, "no Vector Cores");
        }
    }
    assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
}

#[test]
fn every_product_answers_as_docs_device_md_says() {
    let rows = table();
    assert!(rows.len() >= 8, "docs/device.md lists every product: {rows:?}");
    for row in rows {
        let expect: Vec<String> = row.values.iter().map(i64::to_string).collect();
        run_scenario("product", &[("ASCENDLESS_SOC", row.soc.as_str()), ("DEVQ_EXPECT", &expect.join(","))]);
    }
}

/// `aclGetDeviceCapability` (`acl_base_rt.h`) answers the same figures as `aclrtGetDeviceInfo`.
#[test]
fn the_base_capability_query_agrees_with_the_device_info() {
    use ascendless::ffi::acl_base_data::aclGetDeviceCapability;
    for (which, attr) in [(0, 101), (1, 201), (2, 302)] {
        let mut v = -7i64;
        // SAFETY: a live out-pointer.
        assert_eq!(unsafe { aclGetDeviceCapability(0, which, &mut v) }, ACL_SUCCESS);
        assert_eq!((ACL_SUCCESS, v), info(0, attr), "aclDeviceInfo {which}");
    }
    let mut v = 0i64;
    // SAFETY: a live out-pointer, or NULL on purpose.
    unsafe {
        assert_eq!(aclGetDeviceCapability(0, 3, &mut v), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclGetDeviceCapability(0, -1, &mut v), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclGetDeviceCapability(0, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_ne!(aclGetDeviceCapability(1000, 0, &mut v), ACL_SUCCESS);
    }
}
