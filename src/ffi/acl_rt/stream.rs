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
use crate::runtime::lifecycle_callbacks;
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

/// `aclrtSetStreamFailureMode`: a failed task does not stop the ones after it (the default).
pub const ACL_CONTINUE_ON_FAILURE: u32 = 0x00000000u32;
/// `aclrtSetStreamFailureMode`: the first failed task stops the stream: later tasks are
/// dropped, new ones refused; for every stream of the context.
pub const ACL_STOP_ON_FAILURE: u32 = 0x00000001u32;

/// The lowest stream priority (`aclrtDeviceGetStreamPriorityRange`); 0 is the highest.
pub(crate) const LEAST_PRIORITY: u32 = 7;

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
        let ctx = context::current()?;
        let limit = settings().product.stream_limit();
        out.write(to_c(ctx.create_stream(known, priority.min(LEAST_PRIORITY), limit)?));
        Ok(())
    })
}

/// The known bits of `aclrtCreateStreamWithConfig`'s `flag` if this machine can honour them.
pub(crate) fn check_flags(flag: u32, product: Product) -> AclResult<u32> {
    let known = flag & flags::KNOWN;
    if known & flags::DEVICE_USE_ONLY != 0 && known != flags::DEVICE_USE_ONLY {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag:#x}: ACL_STREAM_DEVICE_USE_ONLY cannot be combined with other flags"),
        ));
    }
    let unsupported =
        |what: &str| Err(AclError::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, format!("flag {flag:#x}: {what}")));
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
    out.write(to_c(ctx.create_stream(0, 0, settings().product.stream_limit())?));
    Ok(())
}

fn destroy(stream: aclrtStream, force: bool) -> AclResult<()> {
    if stream.is_null() {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            "stream must not be NULL (the default stream cannot be destroyed)",
        ));
    }
    let s = context::stream(raw(stream))?;
    if let Ok(ctx) = CONTEXTS.get(s.context) {
        if ctx.default_handle == raw(stream) {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "this is a context's default stream (aclrtCtxGetCurrentDefaultStream): it goes with its context",
            ));
        }
    }
    s.refuse_if_captured("destroying the stream")?;
    drop(s);
    lifecycle_callbacks::stream_changed(raw(stream), lifecycle_callbacks::stream_state::DESTROY_PRE);
    let s = release::<Stream>(stream, "stream")?;
    crate::runtime::limits::forget_stream(s.id);
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
    acl_call("aclrtSynchronizeStream", || synchronize(stream, None))
}

/// As `aclrtSynchronizeStream`, giving up after `timeout` ms (-1: no limit) with 507046.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    acl_call("aclrtSynchronizeStreamWithTimeout", || synchronize(stream, millis(timeout)?))
}

/// The stream flags whose streams the host does not synchronise with: the vendor documents
/// that both synchronisations return success at once for them, doing nothing.
const NOT_HOST_SYNCED: u32 = flags::PERSISTENT | flags::DEVICE_USE_ONLY | flags::CPU_SCHEDULE;

fn synchronize(stream: aclrtStream, limit: Option<Duration>) -> AclResult<()> {
    let s = context::stream(raw(stream))?;
    if s.flags & NOT_HOST_SYNCED != 0 {
        return Ok(());
    }
    s.synchronize(limit)
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
        s.refuse_if_captured("querying the stream")?;
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

/// Stops the task running on `stream` (not the default stream: 100000) and holds the queued
/// ones, not run and not discarded, until `aclrtStreamAbort` (or `aclrtDeviceTaskAbort`)
/// discards them; a synchronisation meanwhile waits for that abort (107023) or its time-out.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamStop(stream: aclrtStream) -> aclError {
    acl_call("aclrtStreamStop", || {
        if stream.is_null() {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "stream must not be NULL: the default stream cannot be stopped",
            ));
        }
        let s = context::stream(raw(stream))?;
        if CONTEXTS.get(s.context).is_ok_and(|c| c.default_handle == raw(stream)) {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "a default stream cannot be stopped"));
        }
        s.stop()
    })
}

/// The stream's id (NULL: the current context's default stream), unique in the process.
///
/// # Safety
/// `streamId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetId(stream: aclrtStream, streamId: *mut i32) -> aclError {
    acl_call("aclrtStreamGetId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(streamId, "streamId") }?;
        out.write(context::stream(raw(stream))?.id as i32);
        Ok(())
    })
}

/// The `ACL_STREAM_*` flags the stream was created with, OR-ed (0 for none and for a default
/// stream).
///
/// # Safety
/// `flags` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) -> aclError {
    acl_call("aclrtStreamGetFlags", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(flags, "flags") }?;
        out.write(context::stream(raw(stream))?.flags);
        Ok(())
    })
}

/// The stream's priority (0 highest .. 7 lowest; 0 for a default stream), as created or last
/// set with `ACL_STREAM_ATTR_PRIORITY`. Priorities are kept and answered; the host's scheduler
/// runs every stream's worker alike.
///
/// # Safety
/// `priority` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) -> aclError {
    acl_call("aclrtStreamGetPriority", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(priority, "priority") }?;
        out.write(context::stream(raw(stream))?.attrs.priority.load(std::sync::atomic::Ordering::Acquire));
        Ok(())
    })
}

/// The stream priorities the device takes: `*leastPriority` 7, `*greatestPriority` 0 (a
/// smaller number is a higher priority).
///
/// # Safety
/// Both are NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetStreamPriorityRange(
    leastPriority: *mut i32,
    greatestPriority: *mut i32,
) -> aclError {
    acl_call("aclrtDeviceGetStreamPriorityRange", || {
        // SAFETY: forwarded from this function's contract.
        let least = unsafe { Out::new(leastPriority, "leastPriority") }?;
        // SAFETY: forwarded from this function's contract.
        let greatest = unsafe { Out::new(greatestPriority, "greatestPriority") }?;
        least.write(LEAST_PRIORITY as i32);
        greatest.write(0);
        Ok(())
    })
}

/// Sets what a failed task does to `stream` and every other stream of its context:
/// `ACL_CONTINUE_ON_FAILURE` (the default) or `ACL_STOP_ON_FAILURE` (else 107000). NULL (the
/// default stream) is taken on Atlas A2, A3 and Ascend 950 only (107000 on the others), as
/// the vendor's.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    acl_call("aclrtSetStreamFailureMode", || set_failure_mode(stream, mode, true))
}

/// `aclrtSetStreamFailureMode` and `ACL_STREAM_ATTR_FAILURE_MODE`; the attribute never takes
/// the default stream (`default_ok` false).
pub(crate) fn set_failure_mode(stream: aclrtStream, mode: u64, default_ok: bool) -> AclResult<()> {
    if mode > u64::from(ACL_STOP_ON_FAILURE) {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("failure mode {mode}: use ACL_CONTINUE_ON_FAILURE (0) or ACL_STOP_ON_FAILURE (1)"),
        ));
    }
    let default_ok =
        default_ok && matches!(settings().product, Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950);
    let s = context::stream(raw(stream))?;
    let is_default =
        stream.is_null() || CONTEXTS.get(s.context).is_ok_and(|c| c.default_handle == raw(stream));
    if is_default && !default_ok {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "the failure mode of a default stream cannot be set here: set it on a stream you created (it then holds for the whole context)",
        ));
    }
    s.set_failure_mode(mode);
    Ok(())
}

/// How many more streams the current device takes: the product's limit (1984 on Atlas A2, A3
/// and Ascend 950, 512 on Atlas 200I/500 A2, 1024 on Atlas inference, 2048 on Atlas training)
/// less the streams of every context on it, default streams included.
///
/// # Safety
/// `streamCount` is NULL or valid for a write of a `uint32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamAvailableNum(streamCount: *mut u32) -> aclError {
    acl_call("aclrtGetStreamAvailableNum", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(streamCount, "streamCount") }?;
        let device = context::current_device()?;
        out.write(settings().product.stream_limit().saturating_sub(context::streams_on(device)));
        Ok(())
    })
}

/// The current context's default stream as a handle of its own, usable wherever a stream is
/// (NULL means the same stream while this context is current). It cannot be destroyed.
///
/// # Safety
/// `stream` is NULL or valid for a write of an `aclrtStream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) -> aclError {
    acl_call("aclrtCtxGetCurrentDefaultStream", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(stream, "stream") }?;
        out.write(to_c(context::current()?.default_handle));
        Ok(())
    })
}

/// The longest `aclrtDeviceTaskAbort` waits (the vendor's: 36 minutes); `timeout` 0 means it.
const DEVICE_ABORT_MAX: Duration = Duration::from_secs(36 * 60);

/// Aborts every stream of every context on `deviceId`: queued tasks are discarded, running
/// ones stopped and threads synchronising released (107023). `timeout` in ms bounds the wait
/// for running tasks to end (107019 after); 0 waits up to the vendor's maximum, 36 minutes.
/// An invalid device is 107001.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceTaskAbort(deviceId: i32, timeout: u32) -> aclError {
    acl_call("aclrtDeviceTaskAbort", || {
        crate::runtime::device::check_id(deviceId, settings())?;
        let limit = if timeout == 0 {
            DEVICE_ABORT_MAX
        } else {
            Duration::from_millis(u64::from(timeout)).min(DEVICE_ABORT_MAX)
        };
        lifecycle_callbacks::around_task_abort(deviceId, timeout, || context::abort_device(deviceId, limit))
    })
}
