//! `acl/acl_rt.h`: streams.

use std::time::Duration;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, release, to_c};
use crate::ffi::ptr::Out;
use crate::profile::Product;
use crate::runtime::context::{self, CONTEXTS};
use crate::runtime::stream::{ABORT_TIMEOUT, Stream, flags};

/// `aclrtCreateStreamWithConfig` flag: the stream's resources are taken at creation, so tasks
/// are queued faster (here every stream queues alike).
pub const ACL_STREAM_FAST_LAUNCH: u32 = 0x00000001u32;
/// `aclrtCreateStreamWithConfig` flag: synchronising polls instead of sleeping (here every
/// synchronisation wakes as soon as the work is done).
pub const ACL_STREAM_FAST_SYNC: u32 = 0x00000002u32;
/// `aclrtCreateStreamWithConfig` flag: tasks are kept for a model run instance
/// (`aclmdlRIBindStream`); not supported here (207000).
pub const ACL_STREAM_PERSISTENT: u32 = 0x00000004u32;
/// `aclrtCreateStreamWithConfig` flag: room for more tasks (a stream here has no task limit);
/// 207000 on Atlas inference products, as on the vendor's.
pub const ACL_STREAM_HUGE: u32 = 0x00000008u32;
/// `aclrtCreateStreamWithConfig` flag: AI CPU scheduling of queue-based models; not supported
/// here (207000).
pub const ACL_STREAM_CPU_SCHEDULE: u32 = 0x00000010u32;
/// `aclrtCreateStreamWithConfig` flag: the stream is used from the device only. It cannot be
/// combined with another flag (107000); on Atlas 200I/500 A2 and Atlas training products 207000.
pub const ACL_STREAM_DEVICE_USE_ONLY: u32 = 0x00000020u32;

/// What `aclrtStreamQuery` reports.
#[repr(C)]
pub enum aclrtStreamStatus {
    /// Every task queued on the stream has run.
    ACL_STREAM_STATUS_COMPLETE = 0,
    /// Tasks are queued or running.
    ACL_STREAM_STATUS_NOT_READY = 1,
    ACL_STREAM_STATUS_RESERVED = 0xFFFF,
}

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

/// Creates a stream in the current context with `flag` (`ACL_STREAM_*`, OR-ed; bits the
/// vendor does not define are ignored). `priority` is accepted as the vendor does (clamped to
/// 0..7, the vendor reserves it). `ACL_STREAM_DEVICE_USE_ONLY` combined with another flag is
/// 107000; `ACL_STREAM_PERSISTENT` and `ACL_STREAM_CPU_SCHEDULE` (model execution, which this
/// runtime has not) are 207000, as are flags the emulated product lacks.
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
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(stream, "stream") }?;
        let known = check_flags(flag, settings().product)?;
        log::debug!(target: crate::logging::TARGET, "stream priority {} flag {known:#x}", priority.min(7));
        let ctx = context::current()?;
        out.write(to_c(ctx.create_stream(known)?));
        Ok(())
    })
}

/// The known bits of `aclrtCreateStreamWithConfig`'s `flag` if this machine can honour them.
fn check_flags(flag: u32, product: Product) -> AclResult<u32> {
    let known = flag & flags::KNOWN;
    if known & flags::DEVICE_USE_ONLY != 0 && known != flags::DEVICE_USE_ONLY {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag:#x}: ACL_STREAM_DEVICE_USE_ONLY cannot be combined with other flags"),
        ));
    }
    let unsupported =
        |what: &str| Err(AclError::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, format!("flag {flag:#x}: {what}")));
    if known & flags::PERSISTENT != 0 {
        return unsupported(
            "ACL_STREAM_PERSISTENT streams hold tasks for model run instances (aclmdlRI*), which this runtime does not have",
        );
    }
    if known & flags::CPU_SCHEDULE != 0 {
        return unsupported(
            "ACL_STREAM_CPU_SCHEDULE streams carry AI CPU scheduling of queue-based models, which this runtime does not have",
        );
    }
    if known & flags::HUGE != 0 && product == Product::AtlasInference {
        return unsupported("ACL_STREAM_HUGE is not supported on Atlas inference products");
    }
    if known & flags::DEVICE_USE_ONLY != 0
        && matches!(product, Product::Atlas200I500A2 | Product::AtlasTraining)
    {
        return unsupported("ACL_STREAM_DEVICE_USE_ONLY is not supported on this product");
    }
    Ok(known)
}

/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`.
unsafe fn create(stream: *mut aclrtStream) -> AclResult<()> {
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { Out::new(stream, "stream") }?;
    let ctx = context::current()?;
    out.write(to_c(ctx.create_stream(0)?));
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
/// task failure since the last synchronisation; 107023 if the stream is aborted meanwhile.
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

/// Whether every task queued on `stream` (NULL: the default stream) has run: `*status` is
/// `ACL_STREAM_STATUS_COMPLETE` or `ACL_STREAM_STATUS_NOT_READY`, and the call succeeds either
/// way. A task failure is left for the next synchronisation to report.
///
/// # Safety
/// `status` is NULL or valid for a write of an `aclrtStreamStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) -> aclError {
    acl_call("aclrtStreamQuery", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let s = context::stream(raw(stream))?;
        out.write(if s.pending() == 0 {
            aclrtStreamStatus::ACL_STREAM_STATUS_COMPLETE
        } else {
            aclrtStreamStatus::ACL_STREAM_STATUS_NOT_READY
        });
        Ok(())
    })
}

/// Discards the tasks queued on `stream` (of the current context, else 107003; NULL: its
/// default stream, as the vendor's runtime does on these products although its header says
/// NULL is refused) and stops the running one; threads synchronising with the stream or with
/// an event recorded on it return 107023, and so do tasks queued on it while the abort runs.
/// The stream then takes new work. Streams waiting on this one (events, notifies) are not
/// released: abort them too. Atlas A2, A3 and Ascend 950 only (207000 on the other products,
/// as the vendor).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamAbort(stream: aclrtStream) -> aclError {
    acl_call("aclrtStreamAbort", || {
        if !matches!(settings().product, Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950) {
            return Err(AclError::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "stream abort needs Atlas A2, Atlas A3 or Ascend 950 (ASCENDLESS_SOC)",
            ));
        }
        context::stream_for_work(raw(stream))?.abort(ABORT_TIMEOUT)
    })
}
