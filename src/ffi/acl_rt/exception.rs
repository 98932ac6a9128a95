//! `acl/acl_rt.h`: errors as the vendor's runtime reports them besides return codes: this
//! thread's last error (`aclrtGetLastError`, `aclrtPeekAtLastError`), the exception callbacks
//! told of every failed stream task with its ids, and the device's error details
//! (`aclrtGetErrorVerbose`).

#![allow(non_snake_case)]

use std::ffi::c_void;
use std::sync::Arc;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, peek_last, take_last};
use crate::ffi::ptr::Out;
use crate::ffi::{acl_call, boundary};
use crate::runtime::exception::{self, TaskFailure};

/// An `aclrtLastErrLevel` value as received (any integer).
pub type LastErrLevelArg = i32;
/// An `aclrtErrorType` value as stored (any integer).
pub type ErrorTypeArg = i32;
/// An `aclrtAicoreErrorType` value as stored (any integer).
pub type AicoreErrorTypeArg = i32;

/// Whose last error `aclrtGetLastError` reads: the calling thread's (the only level).
#[repr(C)]
pub enum aclrtLastErrLevel {
    ACL_RT_THREAD_LEVEL = 0,
}

/// What a failed task's exception callback is told: read it with the
/// `aclrtGet*FromExceptionInfo` accessors, during the callback only.
pub struct rtExceptionInfo {
    failure: TaskFailure,
}

/// The exception information a callback receives.
pub type aclrtExceptionInfo = rtExceptionInfo;

/// A process-wide exception callback: called on the failing stream's worker thread.
pub type aclrtExceptionInfoCallback = Option<unsafe extern "C" fn(exceptionInfo: *mut aclrtExceptionInfo)>;

/// Entries of `aclrtMemUceInfo.reserved`.
pub const UCE_INFO_RESERVED_SIZE: usize = 14;
/// Entries of `aclrtMemUceInfoArray.memUceInfoArray`.
pub const ACL_RT_MEM_UCE_INFO_MAX_NUM: usize = 20;

/// A range of device memory hit by an uncorrectable error.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtMemUceInfo {
    pub addr: *mut c_void,
    pub len: usize,
    pub reserved: [usize; UCE_INFO_RESERVED_SIZE],
}

/// Up to `ACL_RT_MEM_UCE_INFO_MAX_NUM` ranges hit by uncorrectable errors.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtMemUceInfoArray {
    pub arraySize: usize,
    pub memUceInfoArray: [aclrtMemUceInfo; ACL_RT_MEM_UCE_INFO_MAX_NUM],
}

/// The kind of a device error.
#[repr(C)]
pub enum aclrtErrorType {
    ACL_RT_NO_ERROR = 0,
    ACL_RT_ERROR_MEMORY = 1,
    ACL_RT_ERROR_L2 = 2,
    ACL_RT_ERROR_AICORE = 3,
    ACL_RT_ERROR_LINK = 4,
    ACL_RT_ERROR_L3_PORT = 5,
    ACL_RT_ERROR_OTHERS = 0xFFFF,
}

/// Where an AI Core error most likely comes from.
#[repr(C)]
pub enum aclrtAicoreErrorType {
    ACL_RT_AICORE_ERROR_UNKNOWN = 0,
    ACL_RT_AICORE_ERROR_SW = 1,
    ACL_RT_AICORE_ERROR_HW_LOCAL = 2,
}

/// Details of a device error, as its `errorType` says.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtErrorInfoDetail {
    pub uceInfo: aclrtMemUceInfoArray,
    pub aicoreErrType: AicoreErrorTypeArg,
}

/// A device error, as `aclrtGetErrorVerbose` reports it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtErrorInfo {
    pub tryRepair: u8,
    pub hasDetail: u8,
    pub reserved: [u8; 2],
    pub errorType: ErrorTypeArg,
    pub detail: aclrtErrorInfoDetail,
}

fn last_error(api: &str, level: LastErrLevelArg, read: fn() -> aclError) -> aclError {
    boundary(api, crate::error::acl_codes::ACL_ERROR_INTERNAL_ERROR, || {
        if level != aclrtLastErrLevel::ACL_RT_THREAD_LEVEL as i32 {
            crate::error::record_recent(&format!(
                "{api}: level {level}: only ACL_RT_THREAD_LEVEL (0) exists"
            ));
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        read()
    })
}

/// The code of the last AscendCL call that failed on this thread (ACL_SUCCESS if none since
/// the last `aclrtGetLastError`), left in place. `level` must be `ACL_RT_THREAD_LEVEL` (else
/// 107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPeekAtLastError(level: LastErrLevelArg) -> aclError {
    last_error("aclrtPeekAtLastError", level, peek_last)
}

/// As `aclrtPeekAtLastError`, then clears it: until a call fails again on this thread, the
/// next read is ACL_SUCCESS.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetLastError(level: LastErrLevelArg) -> aclError {
    last_error("aclrtGetLastError", level, take_last)
}

/// The hook that calls C callback `cb` with a failure's information.
fn hook(cb: unsafe extern "C" fn(*mut aclrtExceptionInfo)) -> exception::Hook {
    Arc::new(move |failure: &TaskFailure| {
        let mut info = rtExceptionInfo { failure: *failure };
        // SAFETY: the caller registered `cb` as an `aclrtExceptionInfoCallback` and keeps its
        // code valid while registered; `info` lives for the call, as documented.
        unsafe { cb(&mut info) }
    })
}

/// Sets the one process-wide callback of this older interface (NULL clears it); callbacks
/// registered with `aclrtExceptionInfoCallbackRegister` are kept apart (one function set here
/// and registered there is called twice).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetExceptionInfoCallback(callback: aclrtExceptionInfoCallback) -> aclError {
    acl_call("aclrtSetExceptionInfoCallback", || {
        exception::set_legacy(callback.map(hook));
        Ok(())
    })
}

/// Adds a process-wide callback told of every failed stream task (NULL: 100000). Registering
/// the same function again is a success that adds nothing.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtExceptionInfoCallbackRegister(callback: aclrtExceptionInfoCallback) -> aclError {
    acl_call("aclrtExceptionInfoCallbackRegister", || {
        let cb =
            callback.ok_or_else(|| AclError::new(ACL_ERROR_INVALID_PARAM, "callback must not be NULL"))?;
        exception::register(cb as usize, hook(cb));
        Ok(())
    })
}

/// Removes a callback added by `aclrtExceptionInfoCallbackRegister` (NULL: 100000; one not
/// registered: success, nothing done). A report already under way may still call it.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtExceptionInfoCallbackUnregister(callback: aclrtExceptionInfoCallback) -> aclError {
    acl_call("aclrtExceptionInfoCallbackUnregister", || {
        let cb =
            callback.ok_or_else(|| AclError::new(ACL_ERROR_INVALID_PARAM, "callback must not be NULL"))?;
        exception::unregister(cb as usize);
        Ok(())
    })
}

/// Reads a field of `info`; 0xFFFFFFFF when `info` is NULL.
///
/// # Safety
/// `info` is NULL or the pointer an exception callback received, during the callback.
unsafe fn field(info: *const aclrtExceptionInfo, get: fn(&TaskFailure) -> u32) -> u32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe { info.as_ref() }.map_or(u32::MAX, |i| get(&i.failure))
}

/// The failed task's id: its place among the tasks queued on its stream, from 0.
///
/// # Safety
/// `info` is NULL or the pointer an exception callback received, during the callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetTaskIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field(info, |f| f.task_id) }
}

/// The id of the failed task's stream (`aclrtStreamGetId`).
///
/// # Safety
/// As for `aclrtGetTaskIdFromExceptionInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field(info, |f| f.stream_id) }
}

/// The kernel's id of the thread that queued the failed task.
///
/// # Safety
/// As for `aclrtGetTaskIdFromExceptionInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetThreadIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field(info, |f| f.thread_id) }
}

/// The device of the failed task's stream.
///
/// # Safety
/// As for `aclrtGetTaskIdFromExceptionInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceIdFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field(info, |f| f.device_id) }
}

/// The failed task's error code (what the stream's next synchronisation returns).
///
/// # Safety
/// As for `aclrtGetTaskIdFromExceptionInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetErrorCodeFromExceptionInfo(info: *const aclrtExceptionInfo) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field(info, |f| f.error_code as u32) }
}

/// The device's error details after a fault. Here a device has no hardware to fail: every
/// device reports `ACL_RT_NO_ERROR`, no repair and no detail; task failures are reported by
/// the stream calls and the exception callbacks. An invalid device is 107001.
///
/// # Safety
/// `errorInfo` is NULL or valid for a write of an `aclrtErrorInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut aclrtErrorInfo) -> aclError {
    acl_call("aclrtGetErrorVerbose", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(errorInfo, "errorInfo") }?;
        crate::runtime::device::check_id(deviceId, settings())?;
        let none =
            aclrtMemUceInfo { addr: std::ptr::null_mut(), len: 0, reserved: [0; UCE_INFO_RESERVED_SIZE] };
        out.write(aclrtErrorInfo {
            tryRepair: 0,
            hasDetail: 0,
            reserved: [0; 2],
            errorType: aclrtErrorType::ACL_RT_NO_ERROR as i32,
            detail: aclrtErrorInfoDetail {
                uceInfo: aclrtMemUceInfoArray {
                    arraySize: 0,
                    memUceInfoArray: [none; ACL_RT_MEM_UCE_INFO_MAX_NUM],
                },
            },
        });
        Ok(())
    })
}
