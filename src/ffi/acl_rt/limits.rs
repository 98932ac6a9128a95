//! `acl/acl_rt.h`: limits and settings a process puts on its devices, kept and answered by
//! `runtime/limits.rs` and `runtime/sys_params.rs` (no kernel runs here to consume them; the
//! checks, roundings and precedence are the vendor's).

#![allow(non_snake_case)]

use crate::config::settings;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_DEV_SETUP_ERROR;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::profile::Figures;
use crate::runtime::limits::{self, StreamKey};
use crate::runtime::{context, device, sys_params};

/// A kernel resource `aclrtDeviceSetLimit` sizes.
#[repr(C)]
pub enum aclrtDeviceLimit {
    ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0,
    ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1,
    ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2,
    ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3,
    ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4,
}

/// An `aclrtDeviceLimit` value as received (any integer).
pub type DeviceLimitArg = i32;

/// The cores a resource limit counts.
#[repr(C)]
pub enum aclrtDevResLimitType {
    ACL_RT_DEV_RES_CUBE_CORE = 0,
    ACL_RT_DEV_RES_VECTOR_CORE = 1,
}

/// An `aclrtDevResLimitType` value as received (any integer).
pub type DevResLimitTypeArg = i32;

/// A system parameter (`aclrtSetSysParamOpt`).
#[repr(C)]
pub enum aclSysParamOpt {
    ACL_OPT_DETERMINISTIC = 0,
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
    ACL_OPT_STRONG_CONSISTENCY = 2,
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3,
}

/// An `aclSysParamOpt` value as received (any integer).
pub type SysParamOptArg = i32;

/// How floating-point overflow shows in results (`aclrtSetDeviceSatMode`).
#[repr(C)]
pub enum aclrtFloatOverflowMode {
    ACL_RT_OVERFLOW_MODE_SATURATION = 0,
    ACL_RT_OVERFLOW_MODE_INFNAN = 1,
    ACL_RT_OVERFLOW_MODE_UNDEF = 2,
}

/// An `aclrtFloatOverflowMode` value as received (any integer).
pub type FloatOverflowModeArg = i32;

/// The device resource limits belong to an open device, as the vendor's: 507033 otherwise.
fn open_device(device: i32) -> AclResult<()> {
    if device::primary_active(device, settings())? {
        Ok(())
    } else {
        Err(AclError::new(
            ACL_ERROR_RT_DEV_SETUP_ERROR,
            format!(
                "device {device} is not in use: call aclrtSetDevice first (its limits go with its last reset)"
            ),
        ))
    }
}

fn figures() -> Figures {
    let s = settings();
    Figures::of(s.soc.to_str().unwrap_or_default(), s.product)
}

/// Sets kernel resource `limit` for the whole process (every device): checked, rounded and
/// kept as the vendor does (SIMT sizes up to 128-byte multiples; the SIMD stack above 32 KiB up
/// to 16 KiB multiples, at most 192 KiB on Atlas A2/A3 and 128 KiB on Ascend 950; printf
/// buffers up to 8-byte multiples within their ranges: 107000 outside). A limit the product
/// lacks is 207000 (SIMT ones on Atlas A2/A3; all on the older products).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceSetLimit(limit: DeviceLimitArg, value: usize) -> aclError {
    acl_call("aclrtDeviceSetLimit", || {
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        limits::set_device_limit(limit, value, settings().product)
    })
}

/// The process's value of kernel resource `limit` (the vendor's default until set); the SIMT
/// stack size is reported for a warp (×32), as the vendor does.
///
/// # Safety
/// `value` is NULL or valid for a write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetLimit(limit: DeviceLimitArg, value: *mut usize) -> aclError {
    acl_call("aclrtDeviceGetLimit", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        out.write(limits::device_limit(limit, settings().product)?);
        Ok(())
    })
}

/// The cores of kind `type` kernels of this process may use on device `deviceId` (in use, else
/// 507033): the value set, else the hardware's count (`ACL_DEV_ATTR_CUBE_CORE_NUM` /
/// `..._VECTOR_CORE_NUM`).
///
/// # Safety
/// `value` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceResLimit(
    deviceId: i32,
    r#type: DevResLimitTypeArg,
    value: *mut u32,
) -> aclError {
    acl_call("aclrtGetDeviceResLimit", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        open_device(deviceId)?;
        out.write(limits::device_res(deviceId, r#type, &figures())?);
        Ok(())
    })
}

/// Limits the cores of kind `type` this process's kernels may use on device `deviceId` (in use,
/// else 507033) to `value` (at most the hardware's count, else 107000); the last call wins, and
/// the limit lasts until the device's last reset.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDeviceResLimit(deviceId: i32, r#type: DevResLimitTypeArg, value: u32) -> aclError {
    acl_call("aclrtSetDeviceResLimit", || {
        open_device(deviceId)?;
        limits::set_device_res(deviceId, r#type, value, &figures())
    })
}

/// Drops the limits set on device `deviceId`: the hardware's counts again.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceResLimit(deviceId: i32) -> aclError {
    acl_call("aclrtResetDeviceResLimit", || {
        open_device(deviceId)?;
        limits::reset_device_res(deviceId);
        Ok(())
    })
}

/// The stream `stream` names (NULL: the current context's default stream) as a limits key.
fn key(stream: aclrtStream) -> AclResult<StreamKey> {
    let s = context::stream(raw(stream))?;
    Ok(StreamKey { id: s.id, device: s.device })
}

/// The cores of kind `type` work on `stream` (NULL: the default stream) may use: the stream's
/// limit, else its device's, else the hardware's.
///
/// # Safety
/// `value` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamResLimit(
    stream: aclrtStream,
    r#type: DevResLimitTypeArg,
    value: *mut u32,
) -> aclError {
    acl_call("aclrtGetStreamResLimit", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        out.write(limits::stream_res(key(stream)?, r#type, &figures())?);
        Ok(())
    })
}

/// Limits the cores of kind `type` for work on `stream` (NULL: the default stream) to `value`
/// (at most the hardware's count, else 107000). Threads use it after
/// `aclrtUseStreamResInCurrentThread`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetStreamResLimit(
    stream: aclrtStream,
    r#type: DevResLimitTypeArg,
    value: u32,
) -> aclError {
    acl_call("aclrtSetStreamResLimit", || limits::set_stream_res(key(stream)?, r#type, value, &figures()))
}

/// Drops the limits set on `stream` (NULL: the default stream).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetStreamResLimit(stream: aclrtStream) -> aclError {
    acl_call("aclrtResetStreamResLimit", || {
        limits::reset_stream_res(key(stream)?);
        Ok(())
    })
}

/// This thread uses `stream`'s limits from now on (the last call wins).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUseStreamResInCurrentThread(stream: aclrtStream) -> aclError {
    acl_call("aclrtUseStreamResInCurrentThread", || {
        limits::use_in_thread(key(stream)?);
        Ok(())
    })
}

/// This thread stops using `stream`'s limits (nothing if it uses another stream's).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnuseStreamResInCurrentThread(stream: aclrtStream) -> aclError {
    acl_call("aclrtUnuseStreamResInCurrentThread", || {
        limits::unuse_in_thread(key(stream)?);
        Ok(())
    })
}

/// The cores of kind `type` this thread's work may use: the limits of the stream it uses, else
/// its current device's, else the hardware's; 107002 without a current device.
///
/// # Safety
/// `value` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetResInCurrentThread(r#type: DevResLimitTypeArg, value: *mut u32) -> aclError {
    acl_call("aclrtGetResInCurrentThread", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let device = context::current_device()?;
        out.write(limits::thread_res(device, r#type, &figures())?);
        Ok(())
    })
}

/// Sets system parameter `opt` for the whole process (deterministic computing 0..=3, the others
/// 0 or 1; else 107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetSysParamOpt(opt: SysParamOptArg, value: i64) -> aclError {
    acl_call("aclrtSetSysParamOpt", || sys_params::set_process_param(opt, value))
}

/// The process's value of system parameter `opt`: 0 until set.
///
/// # Safety
/// `value` is NULL or valid for a write of an `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSysParamOpt(opt: SysParamOptArg, value: *mut i64) -> aclError {
    acl_call("aclrtGetSysParamOpt", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        out.write(sys_params::process_param(opt)?);
        Ok(())
    })
}

/// Sets system parameter `opt` on the current context (107002 without one).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCtxSetSysParamOpt(opt: SysParamOptArg, value: i64) -> aclError {
    acl_call("aclrtCtxSetSysParamOpt", || {
        sys_params::set_context_param(context::current()?.handle, opt, value)
    })
}

/// The current context's value of system parameter `opt`; one never set on it is 107021 (a
/// context parameter has no default, as the vendor documents).
///
/// # Safety
/// `value` is NULL or valid for a write of an `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCtxGetSysParamOpt(opt: SysParamOptArg, value: *mut i64) -> aclError {
    acl_call("aclrtCtxGetSysParamOpt", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        out.write(sys_params::context_param(context::current()?.handle, opt)?);
        Ok(())
    })
}

fn set_timeout(us: u64) -> u64 {
    sys_params::set_op_timeout_us(us, settings().product)
}

/// Sets the process's operator time-out to `timeout` seconds (0: the longest), rounded up to
/// the product's step (`aclrtGetOpTimeOutInterval`), at most 254 steps.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetOpExecuteTimeOut(timeout: u32) -> aclError {
    acl_call("aclrtSetOpExecuteTimeOut", || {
        set_timeout(u64::from(timeout) * 1_000_000);
        Ok(())
    })
}

/// As `aclrtSetOpExecuteTimeOut`, in milliseconds.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetOpExecuteTimeOutWithMs(timeout: u32) -> aclError {
    acl_call("aclrtSetOpExecuteTimeOutWithMs", || {
        set_timeout(u64::from(timeout) * 1_000);
        Ok(())
    })
}

/// As `aclrtSetOpExecuteTimeOut`, in microseconds; `actualTimeout` receives the time-out in
/// effect after rounding.
///
/// # Safety
/// `actualTimeout` is NULL or valid for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOutV2(timeout: u64, actualTimeout: *mut u64) -> aclError {
    acl_call("aclrtSetOpExecuteTimeOutV2", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(actualTimeout, "actualTimeout") }?;
        out.write(set_timeout(timeout));
        Ok(())
    })
}

/// The step, in microseconds, operator time-outs are whole multiples of (4 294 967 us on Atlas
/// A2/A3, Ascend 950 and Atlas 200I/500 A2: 254 steps make the 1091 s maximum).
///
/// # Safety
/// `interval` is NULL or valid for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetOpTimeOutInterval(interval: *mut u64) -> aclError {
    acl_call("aclrtGetOpTimeOutInterval", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(interval, "interval") }?.write(settings().product.op_timeout().interval_us);
        Ok(())
    })
}

/// The operator time-out in effect, in milliseconds: the product's default until one is set,
/// then the rounded value.
///
/// # Safety
/// `timeoutMs` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetOpExecuteTimeout(timeoutMs: *mut u32) -> aclError {
    acl_call("aclrtGetOpExecuteTimeout", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(timeoutMs, "timeoutMs") }?.write(sys_params::op_timeout_ms(settings().product));
        Ok(())
    })
}

/// Sets the current device's floating-point overflow mode: Atlas A2/A3 take both, Ascend 950
/// only Inf/NaN, the older products only saturation (207000 otherwise); another value is 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDeviceSatMode(mode: FloatOverflowModeArg) -> aclError {
    acl_call("aclrtSetDeviceSatMode", || {
        sys_params::set_sat_mode(context::current_device()?, mode, settings().product)
    })
}

/// The current device's floating-point overflow mode: the one set, else the product's default
/// (Inf/NaN on Atlas A2/A3 and Ascend 950, saturation on the older products).
///
/// # Safety
/// `mode` is NULL or valid for a write of an `aclrtFloatOverflowMode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceSatMode(mode: *mut aclrtFloatOverflowMode) -> aclError {
    acl_call("aclrtGetDeviceSatMode", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(mode, "mode") }?;
        let m = sys_params::sat_mode(context::current_device()?, settings().product);
        out.write(if m == sys_params::SATURATION {
            aclrtFloatOverflowMode::ACL_RT_OVERFLOW_MODE_SATURATION
        } else {
            aclrtFloatOverflowMode::ACL_RT_OVERFLOW_MODE_INFNAN
        });
        Ok(())
    })
}
