//! `acl/acl_rt.h`: streams.

use std::time::Duration;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, release, to_c};
use crate::ffi::ptr::Out;
use crate::runtime::context::{self, CONTEXTS};
use crate::runtime::stream::Stream;

/// A `timeout` in milliseconds where -1 means without limit.
pub(crate) fn millis(timeout: i32) -> AclResult<Option<Duration>> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(Duration::from_millis(t as u64))),
        t => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("timeout {t} ms: use -1 (no limit) or > 0"),
        )),
    }
}

/// Creates a stream in the current context.
///
/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtCreateStream", || unsafe { create(stream) })
}

/// Creates a stream in the current context. `priority` (0 highest .. 7) is clamped to that
/// range and `flag` (`ACL_STREAM_FAST_LAUNCH`, `ACL_STREAM_FAST_SYNC`, ...) accepted; neither
/// changes how tasks run here.
///
/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(
    stream: *mut aclrtStream,
    priority: u32,
    flag: u32,
) -> aclError {
    acl_call("aclrtCreateStreamWithConfig", || {
        log::debug!(target: crate::logging::TARGET, "stream priority {} flag {flag:#x}", priority.min(7));
        // SAFETY: forwarded from this function's contract.
        unsafe { create(stream) }
    })
}

/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`.
unsafe fn create(stream: *mut aclrtStream) -> AclResult<()> {
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { Out::new(stream, "stream") }?;
    let ctx = context::current()?;
    out.write(to_c(ctx.create_stream()?));
    Ok(())
}

fn destroy(stream: aclrtStream, force: bool) -> AclResult<()> {
    if stream.is_null() {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            "stream must not be NULL (the default stream cannot be destroyed)",
        ));
    }
    let s = release::<Stream>(stream, "stream")?;
    if let Ok(ctx) = CONTEXTS.get(s.context) {
        ctx.forget_stream(raw(stream));
    }
    s.close(force);
    Ok(())
}

/// Destroys a stream after its pending tasks have run.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    acl_call("aclrtDestroyStream", || destroy(stream, false))
}

/// Destroys a stream at once: pending tasks are dropped and waiting tasks cancelled.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    acl_call("aclrtDestroyStreamForce", || destroy(stream, true))
}

/// Waits for every task queued on `stream` (NULL: the default stream) and reports the first
/// task failure since the last synchronisation.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError {
    acl_call("aclrtSynchronizeStream", || context::stream(raw(stream))?.synchronize(None))
}

/// As `aclrtSynchronizeStream`, giving up after `timeout` ms (-1: no limit) with 507046.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    acl_call("aclrtSynchronizeStreamWithTimeout", || {
        let limit = millis(timeout)?;
        context::stream(raw(stream))?.synchronize(limit)
    })
}
