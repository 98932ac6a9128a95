//! `acl/acl_rt.h`: stream configuration handles and `aclrtCreateStreamV2`, and the stream
//! control-flow tasks of captured models (`aclrtActiveStream`, `aclrtSwitchStream`).
//!
//! A configuration handle is a plain C struct the caller may read; this layer allocates it and
//! remembers which addresses it handed out, so destroying or using anything else is an error
//! code, not a wild free.

#![allow(non_snake_case)]

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::stream::{LEAST_PRIORITY, check_flags};
use crate::ffi::handles::to_c;
use crate::ffi::ptr::{Out, slice};
use crate::runtime::context;
use crate::sync;

/// An `aclrtStreamConfigAttr` value as received (any integer).
pub type StreamConfigAttrArg = i32;
/// An `aclrtCondition` value as received (any integer).
pub type ConditionArg = i32;
/// An `aclrtCompareDataType` value as received (any integer).
pub type CompareDataTypeArg = i32;

/// What `aclrtSetStreamConfigOpt` sets.
#[repr(C)]
pub enum aclrtStreamConfigAttr {
    /// `workptr` (a `void *`): work memory for model tasks; kept (no model runs here).
    ACL_RT_STREAM_WORK_ADDR_PTR = 0,
    /// `workSize` (a `size_t`): its size; kept.
    ACL_RT_STREAM_WORK_SIZE = 1,
    /// `flag` (a `uint32_t` of `ACL_STREAM_*`), checked as `aclrtCreateStreamWithConfig` does.
    ACL_RT_STREAM_FLAG = 2,
    /// `priority` (a `uint32_t`, 0 highest .. 7 lowest).
    ACL_RT_STREAM_PRIORITY = 3,
}

/// A stream configuration, filled by `aclrtSetStreamConfigOpt`.
#[repr(C)]
pub struct aclrtStreamConfigHandle {
    pub workptr: *mut c_void,
    pub workSize: usize,
    pub flag: usize,
    pub priority: u32,
}

/// A comparison of `aclrtSwitchStream`.
#[repr(C)]
pub enum aclrtCondition {
    ACL_RT_EQUAL = 0,
    ACL_RT_NOT_EQUAL = 1,
    ACL_RT_GREATER = 2,
    ACL_RT_GREATER_OR_EQUAL = 3,
    ACL_RT_LESS = 4,
    ACL_RT_LESS_OR_EQUAL = 5,
}

/// The type of the values `aclrtSwitchStream` compares.
#[repr(C)]
pub enum aclrtCompareDataType {
    ACL_RT_SWITCH_INT32 = 0,
    ACL_RT_SWITCH_INT64 = 1,
}

/// Addresses of the configuration handles handed out and not destroyed.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn is_live(h: *const aclrtStreamConfigHandle) -> bool {
    sync::lock(&LIVE).as_ref().is_some_and(|l| l.contains(&h.addr()))
}

fn checked<'a>(h: *const aclrtStreamConfigHandle) -> AclResult<&'a aclrtStreamConfigHandle> {
    if h.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "handle must not be NULL"));
    }
    if !is_live(h) {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            "handle is not a stream configuration from aclrtCreateStreamConfigHandle (or was destroyed)",
        ));
    }
    // SAFETY: a live handle is a `Box` this module leaked and has not freed.
    Ok(unsafe { &*h })
}

/// A new stream configuration: no work memory, no flag, priority 0. NULL if memory ran out.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCreateStreamConfigHandle() -> *mut aclrtStreamConfigHandle {
    crate::ffi::boundary("aclrtCreateStreamConfigHandle", std::ptr::null_mut(), || {
        let h = Box::into_raw(Box::new(aclrtStreamConfigHandle {
            workptr: std::ptr::null_mut(),
            workSize: 0,
            flag: 0,
            priority: 0,
        }));
        sync::lock(&LIVE).get_or_insert_with(HashSet::new).insert(h.addr());
        h
    })
}

/// Destroys a configuration from `aclrtCreateStreamConfigHandle`; anything else (NULL, an
/// unknown or destroyed one) is 100000.
///
/// # Safety
/// `handle` is not in use by another thread's call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamConfigHandle(handle: *mut aclrtStreamConfigHandle) -> aclError {
    acl_call("aclrtDestroyStreamConfigHandle", || {
        checked(handle)?;
        if let Some(l) = sync::lock(&LIVE).as_mut() {
            l.remove(&handle.addr());
        }
        // SAFETY: live until now (checked), made by `Box::into_raw`, forgotten above so never
        // freed twice.
        drop(unsafe { Box::from_raw(handle) });
        Ok(())
    })
}

/// Reads a `valueSize`-byte unsigned value (4 or 8 bytes).
///
/// # Safety
/// `value` is NULL or points to `valueSize` readable bytes.
unsafe fn read_uint(value: *const c_void, size: usize, what: &'static str) -> AclResult<u64> {
    match size {
        4 => {
            // SAFETY: 4 readable bytes by the caller's contract.
            Ok(u64::from(unsafe { slice(value.cast::<u32>(), 1, what) }?[0]))
        }
        8 => {
            // SAFETY: 8 readable bytes by the caller's contract.
            Ok(unsafe { slice(value.cast::<u64>(), 1, what) }?[0])
        }
        n => Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("valueSize {n}: {what} is 4 or 8 bytes"))),
    }
}

/// Sets one field of a stream configuration from `attrValue` (`valueSize` bytes: 8 for the
/// work pointer and size, 4 or 8 for the flag and priority). The flag is checked as
/// `aclrtCreateStreamWithConfig` checks it; a priority above 7 is 107000.
///
/// # Safety
/// `handle` came from `aclrtCreateStreamConfigHandle` or is checked and refused; `attrValue`
/// is NULL or points to `valueSize` readable bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamConfigOpt(
    handle: *mut aclrtStreamConfigHandle,
    attr: StreamConfigAttrArg,
    attrValue: *const c_void,
    valueSize: usize,
) -> aclError {
    acl_call("aclrtSetStreamConfigOpt", || {
        checked(handle)?;
        // SAFETY: forwarded from this function's contract.
        let value = unsafe { read_uint(attrValue, valueSize, "attrValue") }?;
        // SAFETY: a live handle (checked above) is this module's box; the caller does not use
        // it from another thread meanwhile.
        let h = unsafe { &mut *handle };
        match attr {
            0 | 1 if valueSize != 8 => {
                return Err(AclError::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!("valueSize {valueSize}: a pointer or size_t is 8 bytes"),
                ));
            }
            0 => h.workptr = std::ptr::without_provenance_mut(value as usize),
            1 => h.workSize = value as usize,
            2 => {
                let flag = u32::try_from(value).map_err(|_| {
                    AclError::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("flag {value:#x} is not a 32-bit ACL_STREAM_* set"),
                    )
                })?;
                check_flags(flag, settings().product)?;
                h.flag = flag as usize;
            }
            3 => {
                if value > u64::from(LEAST_PRIORITY) {
                    return Err(AclError::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("priority {value}: use 0 (highest) .. {LEAST_PRIORITY} (lowest)"),
                    ));
                }
                h.priority = value as u32;
            }
            other => {
                return Err(AclError::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("attr {other} is not an aclrtStreamConfigAttr (0..=3)"),
                ));
            }
        }
        Ok(())
    })
}

/// Creates a stream in the current context with the flag and priority of `handle` (a
/// configuration from `aclrtCreateStreamConfigHandle`); the work memory fields are kept in the
/// configuration only, since no model task runs here to use them.
///
/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`; `handle` as for
/// `aclrtSetStreamConfigOpt`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamV2(
    stream: *mut aclrtStream,
    handle: *const aclrtStreamConfigHandle,
) -> aclError {
    acl_call("aclrtCreateStreamV2", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(stream, "stream") }?;
        let h = checked(handle)?;
        let flag = check_flags(h.flag as u32, settings().product)?;
        let ctx = context::current()?;
        out.write(to_c(ctx.create_stream(
            flag,
            h.priority.min(LEAST_PRIORITY),
            settings().product.stream_limit(),
        )?));
        Ok(())
    })
}

fn model_streams_only(api: &str) -> AclError {
    AclError::new(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        format!(
            "{api} works on streams bound to a model run instance (aclmdlRIBindStream), which this runtime does \
             not have: order ordinary streams with events or notifies instead"
        ),
    )
}

/// Not supported (207000): it activates a stream bound to a model run instance, and this
/// runtime has no model run instances.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtActiveStream(activeStream: aclrtStream, stream: aclrtStream) -> aclError {
    acl_call("aclrtActiveStream", || {
        let _ = (activeStream, stream);
        Err(model_streams_only("aclrtActiveStream"))
    })
}

/// Not supported (207000): a conditional jump between streams bound to a model run instance,
/// which this runtime does not have.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSwitchStream(
    leftValue: *mut c_void,
    cond: ConditionArg,
    rightValue: *mut c_void,
    dataType: CompareDataTypeArg,
    trueStream: aclrtStream,
    falseStream: aclrtStream,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtSwitchStream", || {
        let _ = (leftValue, cond, rightValue, dataType, trueStream, falseStream, stream);
        Err(model_streams_only("aclrtSwitchStream"))
    })
}
