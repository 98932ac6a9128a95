//! `acl/acl_rt.h`: process snapshots. The vendor's snapshot locks every runtime call of the
//! process, copies the devices' memory and state to the host and restores them later (on the
//! same device); it exists for checkpointing NPU processes. An emulated device's state is
//! already host memory of the process, which any process checkpointer saves, and blocking every
//! entry point of the runtime would need a gate in all of them: each call answers 207000.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_void};

use crate::error::AclError;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use crate::ffi::acl_call;

/// A stage of a snapshot, when its callbacks run.
#[repr(C)]
pub enum aclrtSnapShotStage {
    ACL_RT_SNAPSHOT_LOCK_PRE = 0,
    ACL_RT_SNAPSHOT_BACKUP_PRE = 1,
    ACL_RT_SNAPSHOT_BACKUP_POST = 2,
    ACL_RT_SNAPSHOT_RESTORE_PRE = 3,
    ACL_RT_SNAPSHOT_RESTORE_POST = 4,
    ACL_RT_SNAPSHOT_UNLOCK_POST = 5,
}

/// An `aclrtSnapShotStage` value as received (any integer).
pub type SnapShotStageArg = i32;

/// A snapshot callback.
pub type aclrtSnapShotCallBack = Option<unsafe extern "C" fn(deviceId: i32, args: *mut c_void) -> u32>;

/// Options of `aclrtSnapShotProcessBackup` (reserved).
#[repr(C)]
pub struct aclrtSnapShotBackupArgs {
    pub backupFlags: u32,
    pub reserved: [c_char; 60],
}

/// Options of `aclrtSnapShotProcessRestore` (reserved).
#[repr(C)]
pub struct aclrtSnapShotRestoreArgs {
    pub restoreFlags: u32,
    pub reserved: [c_char; 60],
}

fn unsupported(api: &str) -> AclError {
    AclError::new(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        format!(
            "{api}: process snapshots back up and restore NPU device state; the emulated devices' \
             state is this process's host memory, which a process checkpointer saves as it is"
        ),
    )
}

/// Not supported here (207000): see the module documentation.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotProcessLock(pid: c_int, reserve: *mut c_void) -> aclError {
    acl_call("aclrtSnapShotProcessLock", || {
        let _ = (pid, reserve);
        Err(unsupported("aclrtSnapShotProcessLock"))
    })
}

/// Not supported here (207000): see the module documentation.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotProcessUnlock(pid: c_int, reserve: *mut c_void) -> aclError {
    acl_call("aclrtSnapShotProcessUnlock", || {
        let _ = (pid, reserve);
        Err(unsupported("aclrtSnapShotProcessUnlock"))
    })
}

/// Not supported here (207000): see the module documentation.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotProcessBackup(pid: c_int, args: *mut aclrtSnapShotBackupArgs) -> aclError {
    acl_call("aclrtSnapShotProcessBackup", || {
        let _ = (pid, args);
        Err(unsupported("aclrtSnapShotProcessBackup"))
    })
}

/// Not supported here (207000): see the module documentation.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotProcessRestore(pid: c_int, args: *mut aclrtSnapShotRestoreArgs) -> aclError {
    acl_call("aclrtSnapShotProcessRestore", || {
        let _ = (pid, args);
        Err(unsupported("aclrtSnapShotProcessRestore"))
    })
}

/// Not supported here (207000): no snapshot stage is ever reached.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotCallbackRegister(
    stage: SnapShotStageArg,
    callback: aclrtSnapShotCallBack,
    args: *mut c_void,
) -> aclError {
    acl_call("aclrtSnapShotCallbackRegister", || {
        let _ = (stage, callback, args);
        Err(unsupported("aclrtSnapShotCallbackRegister"))
    })
}

/// Not supported here (207000): no snapshot stage is ever reached.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSnapShotCallbackUnregister(
    stage: SnapShotStageArg,
    callback: aclrtSnapShotCallBack,
) -> aclError {
    acl_call("aclrtSnapShotCallbackUnregister", || {
        let _ = (stage, callback);
        Err(unsupported("aclrtSnapShotCallbackUnregister"))
    })
}

/// Not supported here (207000): the information is attached to a task of a captured model run
/// instance for the profiler and `aclmdlRIDebugJsonPrint`; no profiler collects it here.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCacheLastTaskOpInfo(infoPtr: *const c_void, infoSize: usize) -> aclError {
    acl_call("aclrtCacheLastTaskOpInfo", || {
        let _ = (infoPtr, infoSize);
        Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "aclrtCacheLastTaskOpInfo: operator information of captured tasks feeds the NPU profiler, which is not here",
        ))
    })
}

/// Not supported here (207000), as `aclrtCacheLastTaskOpInfo`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCacheLastTaskExtendInfo(extendInfoPtr: *const c_char, infoSize: usize) -> aclError {
    acl_call("aclrtCacheLastTaskExtendInfo", || {
        let _ = (extendInfoPtr, infoSize);
        Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "aclrtCacheLastTaskExtendInfo: extended information of captured tasks feeds the NPU profiler, which is not here",
        ))
    })
}

/// Not supported here (207000): the address is the AI Core's overflow flag area of the
/// context, written by kernels; there is no AI Core (use `aclrtGetFloatOverflowStatus`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCtxGetFloatOverflowAddr(overflowAddr: *mut *mut c_void) -> aclError {
    acl_call("aclrtCtxGetFloatOverflowAddr", || {
        let _ = overflowAddr;
        Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "aclrtCtxGetFloatOverflowAddr: the overflow flag area belongs to the AI Core, which is not here",
        ))
    })
}
