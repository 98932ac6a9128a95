//! `acl/acl_rt.h`: floating-point overflow detection. The AI Core and Vector Core set an
//! overflow flag when a kernel's result overflows; no kernel runs here, so the flag is never
//! set: the status queries write "no overflow" (zeros) into the caller's buffer, in stream
//! order as the vendor's do, and the resets are stream tasks with nothing to clear. The
//! per-stream switch is kept (`ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK` is the same switch).

#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::runtime::{context, memory};

/// Turns overflow detection of `stream`'s later tasks on (1) or off (0; another value is
/// 107000); the same switch as the stream attribute `ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetStreamOverflowSwitch(stream: aclrtStream, flag: u32) -> aclError {
    acl_call("aclrtSetStreamOverflowSwitch", || {
        if flag > 1 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag {flag}: use 0 (off) or 1 (on)"),
            ));
        }
        context::stream(raw(stream))?.attrs.overflow_check.store(flag, Ordering::Release);
        Ok(())
    })
}

/// `stream`'s overflow detection switch (0 until set).
///
/// # Safety
/// `flag` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamOverflowSwitch(stream: aclrtStream, flag: *mut u32) -> aclError {
    acl_call("aclrtGetStreamOverflowSwitch", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(flag, "flag") }?;
        out.write(context::stream(raw(stream))?.attrs.overflow_check.load(Ordering::Acquire));
        Ok(())
    })
}

/// Queues on `stream` (of the current context) a task writing "no overflow" (`size` zero
/// bytes) at `addr`, memory the runtime knows (device, or host as `aclrtMemsetAsync` takes).
///
/// # Safety
/// `addr` is valid for `size` bytes until the task has run.
unsafe fn queue_status(addr: *mut c_void, size: usize, stream: aclrtStream) -> AclResult<()> {
    if addr.is_null() || size == 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "outputAddr must not be NULL and outputSize not 0",
        ));
    }
    let s = context::stream_for_work(raw(stream))?;
    let plan = memory::plan_memset(addr.addr(), size, 0, size)?;
    // SAFETY: the C caller promises the range is valid memory until the task has run.
    let fill = plan.vouch(|r| unsafe { r.vouch() });
    s.submit(Box::new(move |_| {
        fill.run();
        Ok(())
    }))
}

/// Queues on `stream` a task that checks `stream` exists and clears nothing (no flag is ever set).
fn queue_reset(stream: aclrtStream) -> AclResult<()> {
    context::stream_for_work(raw(stream))?.submit(Box::new(|_| Ok(())))
}

/// Writes the current device's overflow status into `outputAddr` (`outputSize` bytes, the
/// vendor's 64) in `stream`'s order: all zeros, as no kernel overflows here.
///
/// # Safety
/// `outputAddr` is valid for `outputSize` bytes until the task has run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetOverflowStatus(
    outputAddr: *mut c_void,
    outputSize: usize,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtGetOverflowStatus", || unsafe { queue_status(outputAddr, outputSize, stream) })
}

/// Clears the current device's overflow status in `stream`'s order (there is none to clear).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetOverflowStatus(stream: aclrtStream) -> aclError {
    acl_call("aclrtResetOverflowStatus", || queue_reset(stream))
}

/// As `aclrtGetOverflowStatus` (the saturation-mode query).
///
/// # Safety
/// As for `aclrtGetOverflowStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetFloatOverflowStatus(
    outputAddr: *mut c_void,
    outputSize: u64,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtGetFloatOverflowStatus", || {
        let size = usize::try_from(outputSize).unwrap_or(usize::MAX);
        // SAFETY: forwarded from this function's contract.
        unsafe { queue_status(outputAddr, size, stream) }
    })
}

/// As `aclrtResetOverflowStatus`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetFloatOverflowStatus(stream: aclrtStream) -> aclError {
    acl_call("aclrtResetFloatOverflowStatus", || queue_reset(stream))
}

/// As `aclrtGetOverflowStatus`, for check mode `checkMode` (any: no mode sees an overflow).
///
/// # Safety
/// As for `aclrtGetOverflowStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNpuGetFloatOverFlowStatus(
    outputAddr: *mut c_void,
    outputSize: u64,
    checkMode: u32,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtNpuGetFloatOverFlowStatus", || {
        let _ = checkMode;
        let size = usize::try_from(outputSize).unwrap_or(usize::MAX);
        // SAFETY: forwarded from this function's contract.
        unsafe { queue_status(outputAddr, size, stream) }
    })
}

/// As `aclrtResetOverflowStatus`, for check mode `checkMode`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtNpuClearFloatOverFlowStatus(checkMode: u32, stream: aclrtStream) -> aclError {
    acl_call("aclrtNpuClearFloatOverFlowStatus", || {
        let _ = checkMode;
        queue_reset(stream)
    })
}
