//! `acl/acl_rt.h`: stream attributes (`aclrtSetStreamAttribute` / `aclrtGetStreamAttribute`).
//!
//! The failure mode and the priority are the stream's own (the failure mode is honoured, see
//! `aclrtSetStreamFailureMode`); the overflow check, the overflow group tag and the operator
//! information cache concern device kernels, which do not run here: they are kept and answered
//! so a framework that sets and reads them back sees its values.

#![allow(non_snake_case)]

use std::sync::atomic::Ordering;

use crate::config::settings;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::stream::{LEAST_PRIORITY, set_failure_mode};
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::profile::Product;
use crate::runtime::context;

/// An `aclrtStreamAttr` value as received (any integer).
pub type StreamAttrArg = i32;

/// A stream attribute.
#[repr(C)]
pub enum aclrtStreamAttr {
    /// `failureMode`: `ACL_CONTINUE_ON_FAILURE` or `ACL_STOP_ON_FAILURE` (not on a default
    /// stream).
    ACL_STREAM_ATTR_FAILURE_MODE = 1,
    /// `overflowSwitch`: 0 or 1 (kept; no kernel runs here to overflow).
    ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2,
    /// `userCustomTag`: any value (kept).
    ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3,
    /// `cacheOpInfoSwitch`: 0 or 1 (kept).
    ACL_STREAM_ATTR_CACHE_OP_INFO = 4,
    /// `streamPriority`: 0 (highest) .. 7 (lowest).
    ACL_STREAM_ATTR_PRIORITY = 5,
}

/// The value of a stream attribute, read as its `aclrtStreamAttr` says.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtStreamAttrValue {
    pub failureMode: u64,
    pub overflowSwitch: u32,
    pub userCustomTag: u32,
    pub cacheOpInfoSwitch: u32,
    pub streamPriority: u32,
    pub reserve: [u32; 4],
}

const FAILURE_MODE: i32 = aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE as i32;
const OVERFLOW: i32 = aclrtStreamAttr::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK as i32;
const TAG: i32 = aclrtStreamAttr::ACL_STREAM_ATTR_USER_CUSTOM_TAG as i32;
const CACHE_OP: i32 = aclrtStreamAttr::ACL_STREAM_ATTR_CACHE_OP_INFO as i32;
const PRIORITY: i32 = aclrtStreamAttr::ACL_STREAM_ATTR_PRIORITY as i32;

fn unknown(attr: i32) -> AclError {
    AclError::new(
        ACL_ERROR_RT_PARAM_INVALID,
        format!("stream attribute {attr} is not an aclrtStreamAttr (1..=5)"),
    )
}

/// The default stream (NULL) is taken on Atlas A2, A3 and Ascend 950 only, as the vendor's.
fn check_default(stream: aclrtStream) -> AclResult<()> {
    if stream.is_null()
        && !matches!(settings().product, Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950)
    {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "stream must not be NULL on this product: name a stream (aclrtCtxGetCurrentDefaultStream gives the default one)",
        ));
    }
    Ok(())
}

fn switch(what: &str, v: u32) -> AclResult<u32> {
    if v > 1 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("{what} {v}: use 0 (off) or 1 (on)")));
    }
    Ok(v)
}

/// Sets attribute `stmAttrType` of `stream` (NULL: the default stream, see above) from the
/// member of `*value` it names. Out-of-range values are 107000.
///
/// # Safety
/// `value` is NULL or points to a readable `aclrtStreamAttrValue`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamAttribute(
    stream: aclrtStream,
    stmAttrType: StreamAttrArg,
    value: *mut aclrtStreamAttrValue,
) -> aclError {
    acl_call("aclrtSetStreamAttribute", || {
        // SAFETY: one readable value by this function's contract (checked non-NULL, aligned).
        let v = unsafe { crate::ffi::ptr::slice(value.cast_const(), 1, "value") }?[0];
        check_default(stream)?;
        if stmAttrType == FAILURE_MODE {
            // SAFETY: every member is plain integers; `failureMode` is the one this attribute uses.
            return set_failure_mode(stream, unsafe { v.failureMode }, false);
        }
        // SAFETY: the other attributes read a `u32` member; all members are plain integers.
        let word = unsafe { v.reserve[0] };
        let s = context::stream(raw(stream))?;
        match stmAttrType {
            OVERFLOW => s.attrs.overflow_check.store(switch("overflowSwitch", word)?, Ordering::Release),
            TAG => s.attrs.user_custom_tag.store(word, Ordering::Release),
            CACHE_OP => s.attrs.cache_op_info.store(switch("cacheOpInfoSwitch", word)?, Ordering::Release),
            PRIORITY => {
                if word > LEAST_PRIORITY {
                    return Err(AclError::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("streamPriority {word}: use 0 (highest) .. {LEAST_PRIORITY} (lowest)"),
                    ));
                }
                s.attrs.priority.store(word, Ordering::Release)
            }
            other => return Err(unknown(other)),
        }
        Ok(())
    })
}

/// Reads attribute `stmAttrType` of `stream` (NULL: the default stream) into the member of
/// `*value` it names; the rest of `*value` is zeroed.
///
/// # Safety
/// `value` is NULL or valid for a write of an `aclrtStreamAttrValue`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamAttribute(
    stream: aclrtStream,
    stmAttrType: StreamAttrArg,
    value: *mut aclrtStreamAttrValue,
) -> aclError {
    acl_call("aclrtGetStreamAttribute", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        check_default(stream)?;
        let s = context::stream(raw(stream))?;
        let word = |w: u32| aclrtStreamAttrValue { reserve: [w, 0, 0, 0] };
        let v = match stmAttrType {
            FAILURE_MODE => {
                let mut v = aclrtStreamAttrValue { reserve: [0; 4] };
                v.failureMode = s.failure_mode();
                v
            }
            OVERFLOW => word(s.attrs.overflow_check.load(Ordering::Acquire)),
            TAG => word(s.attrs.user_custom_tag.load(Ordering::Acquire)),
            CACHE_OP => word(s.attrs.cache_op_info.load(Ordering::Acquire)),
            PRIORITY => word(s.attrs.priority.load(Ordering::Acquire)),
            other => return Err(unknown(other)),
        };
        out.write(v);
        Ok(())
    })
}
