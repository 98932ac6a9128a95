//! `acl/acl_rt.h`: counting notifies (`aclrtCntNotify*`), Ascend 950 only as on the vendor's
//! (207000 on the other products). The rules are the core's (`runtime::notify::counting`).

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, release, resolve, to_c};
use crate::ffi::ptr::{Out, slice};
use crate::profile::Product;
use crate::runtime::context;
use crate::runtime::notify::counting::{self, CntNotify, RecordMode, WaitMode};

/// A counting notify: a 32-bit count that stream tasks set, add to, OR or AND, and wait on.
pub type aclrtCntNotify = *mut c_void;
/// An `aclrtCntNotifyRecordMode` value as received (any integer).
pub type CntNotifyRecordModeArg = i32;
/// An `aclrtCntNotifyWaitMode` value as received (any integer).
pub type CntNotifyWaitModeArg = i32;

/// How `aclrtCntNotifyRecord` changes the count with its value.
#[repr(C)]
pub enum aclrtCntNotifyRecordMode {
    /// The count becomes the value.
    ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0,
    /// The value is added (the count stops at `UINT32_MAX`).
    ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 1,
    /// The value's bits are OR-ed in.
    ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE = 2,
    /// The count is AND-ed with the value.
    ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 4,
}

/// What `aclrtCntNotifyWaitWithTimeout` waits for, comparing the count with its value.
#[repr(C)]
pub enum aclrtCntNotifyWaitMode {
    /// count < value.
    ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE = 0,
    /// count == value.
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1,
    /// count > value.
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE = 2,
    /// count >= value.
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE = 3,
    /// Every bit of the value is set in the count.
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE = 4,
}

/// A record's mode and value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtCntNotifyRecordInfo {
    pub mode: CntNotifyRecordModeArg,
    pub value: u32,
}

/// A wait's mode and value, its time-out in seconds (0: none) and whether the count is set to
/// 0 when the wait passes (`isClear` 1).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtCntNotifyWaitInfo {
    pub mode: CntNotifyWaitModeArg,
    pub value: u32,
    pub timeout: u32,
    pub isClear: u8,
    pub rsv: [u8; 3],
}

fn supported() -> AclResult<()> {
    if settings().product != Product::Ascend950 {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "counting notifies need Ascend 950 (ASCENDLESS_SOC=Ascend950PR_...), as on the vendor's runtime",
        ));
    }
    Ok(())
}

/// Creates a counting notify on the current device, its count 0. `flag` is reserved: 0.
///
/// # Safety
/// `cntNotify` is NULL or valid for a write of an `aclrtCntNotify`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCntNotifyCreate(cntNotify: *mut aclrtCntNotify, flag: u64) -> aclError {
    acl_call("aclrtCntNotifyCreate", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(cntNotify, "cntNotify") }?;
        supported()?;
        let device = context::current_device()?;
        out.write(to_c(counting::create(device, flag)?));
        Ok(())
    })
}

/// Destroys a counting notify; tasks already queued with it still run.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCntNotifyDestroy(cntNotify: aclrtCntNotify) -> aclError {
    acl_call("aclrtCntNotifyDestroy", || {
        counting::destroy(release::<CntNotify>(cntNotify, "cntNotify")?);
        Ok(())
    })
}

/// Queues on `stream` (NULL: the default stream) a change of the count as `info` says.
///
/// # Safety
/// `info` is NULL or points to a readable `aclrtCntNotifyRecordInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCntNotifyRecord(
    cntNotify: aclrtCntNotify,
    stream: aclrtStream,
    info: *mut aclrtCntNotifyRecordInfo,
) -> aclError {
    acl_call("aclrtCntNotifyRecord", || {
        // SAFETY: one readable value by this function's contract.
        let info = unsafe { slice(info.cast_const(), 1, "info") }?[0];
        let mode = RecordMode::from_raw(info.mode).ok_or_else(|| {
            AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("info.mode {}: not an aclrtCntNotifyRecordMode (0, 1, 2, 4)", info.mode),
            )
        })?;
        let n = resolve::<CntNotify>(cntNotify, "cntNotify")?;
        counting::record(&n, &*context::stream_for_work(raw(stream))?, mode, info.value)
    })
}

/// Queues on `stream` (NULL: the default stream) a wait until the count passes `info`'s
/// comparison; later tasks of the stream run after it. A time-out fails the task (107020 at
/// the next synchronisation, and to the exception callbacks).
///
/// # Safety
/// `info` is NULL or points to a readable `aclrtCntNotifyWaitInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCntNotifyWaitWithTimeout(
    cntNotify: aclrtCntNotify,
    stream: aclrtStream,
    info: *mut aclrtCntNotifyWaitInfo,
) -> aclError {
    acl_call("aclrtCntNotifyWaitWithTimeout", || {
        // SAFETY: one readable value by this function's contract.
        let info = unsafe { slice(info.cast_const(), 1, "info") }?[0];
        let mode = WaitMode::from_raw(info.mode).ok_or_else(|| {
            AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("info.mode {}: not an aclrtCntNotifyWaitMode (0..=4)", info.mode),
            )
        })?;
        if info.isClear > 1 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("info.isClear {}: use 0 or 1", info.isClear),
            ));
        }
        let n = resolve::<CntNotify>(cntNotify, "cntNotify")?;
        counting::wait(
            &n,
            &*context::stream_for_work(raw(stream))?,
            mode,
            info.value,
            info.timeout,
            info.isClear == 1,
        )
    })
}

/// Queues on `stream` (NULL: the default stream) the reset of the count to 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCntNotifyReset(cntNotify: aclrtCntNotify, stream: aclrtStream) -> aclError {
    acl_call("aclrtCntNotifyReset", || {
        let n = resolve::<CntNotify>(cntNotify, "cntNotify")?;
        counting::reset(&n, &*context::stream_for_work(raw(stream))?)
    })
}

/// The counting notify's id, unique in the process.
///
/// # Safety
/// `notifyId` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCntNotifyGetId(cntNotify: aclrtCntNotify, notifyId: *mut u32) -> aclError {
    acl_call("aclrtCntNotifyGetId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(notifyId, "notifyId") }?;
        if cntNotify.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "cntNotify must not be NULL"));
        }
        out.write(resolve::<CntNotify>(cntNotify, "cntNotify")?.id);
        Ok(())
    })
}
