//! `acl/acl_rt.h`: events.

use super::stream::millis;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::{aclrtEvent, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, release, resolve, to_c};
use crate::ffi::ptr::Out;
use crate::runtime::context::{self, EVENTS};
use crate::runtime::event::Event;

/// `aclrtCreateEventWithFlag` flag: the event can be synchronised from the host.
pub const ACL_EVENT_SYNC: u32 = 0x00000001u32;
/// `aclrtCreateEventWithFlag` flag: the event captures stream progress.
pub const ACL_EVENT_CAPTURE_STREAM_PROGRESS: u32 = 0x00000002u32;
/// `aclrtCreateEventWithFlag` flag: the event records a time stamp.
pub const ACL_EVENT_TIME_LINE: u32 = 0x00000008u32;
/// `aclrtCreateEventWithFlag` flag: the event is used on the device only.
pub const ACL_EVENT_DEVICE_USE_ONLY: u32 = 0x00000010u32;
/// `aclrtCreateEventWithFlag` flag: the event is shared with an external component.
pub const ACL_EVENT_EXTERNAL: u32 = 0x00000020u32;
/// `aclrtCreateEventWithFlag` flag: the event can be shared with another process.
pub const ACL_EVENT_IPC: u32 = 0x00000040u32;

const KNOWN_FLAGS: u32 = ACL_EVENT_SYNC
    | ACL_EVENT_CAPTURE_STREAM_PROGRESS
    | ACL_EVENT_TIME_LINE
    | ACL_EVENT_DEVICE_USE_ONLY
    | ACL_EVENT_EXTERNAL
    | ACL_EVENT_IPC;

/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
unsafe fn create(event: *mut aclrtEvent, flag: u32) -> AclResult<()> {
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { Out::new(event, "event") }?;
    if flag & !KNOWN_FLAGS != 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("unknown event flag bits {:#x}", flag & !KNOWN_FLAGS),
        ));
    }
    context::current()?;
    out.write(to_c(EVENTS.insert(Event::new(flag))));
    Ok(())
}

/// Creates an event (with `ACL_EVENT_SYNC`). Needs a current context.
///
/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtCreateEvent", || unsafe { create(event, ACL_EVENT_SYNC) })
}

/// Creates an event with `ACL_EVENT_*` flags OR-ed together; unknown bits: 107000.
///
/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtCreateEventWithFlag", || unsafe { create(event, flag) })
}

/// Destroys an event. Waits already queued on streams still complete.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    acl_call("aclrtDestroyEvent", || release::<Event>(event, "event").map(drop))
}

/// Queues a record of `event` on `stream` (NULL: the default stream).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    acl_call("aclrtRecordEvent", || {
        resolve::<Event>(event, "event")?.record(&*context::stream_for_work(raw(stream))?)
    })
}

/// Queues a reset of `event` on `stream`: when it runs, the event is back to not recorded.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    acl_call("aclrtResetEvent", || {
        resolve::<Event>(event, "event")?.reset(&*context::stream_for_work(raw(stream))?)
    })
}

/// Blocks until the latest record of `event` has run (at once if never recorded); 107023 when
/// that record was discarded by `aclrtStreamAbort` or a forced destroy of its stream.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    acl_call("aclrtSynchronizeEvent", || resolve::<Event>(event, "event")?.synchronize(None))
}

/// As `aclrtSynchronizeEvent`, giving up after `timeout` ms (-1: no limit) with 507047.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError {
    acl_call("aclrtSynchronizeEventWithTimeout", || {
        let limit = millis(timeout)?;
        resolve::<Event>(event, "event")?.synchronize(limit)
    })
}

/// Makes `stream` wait, before its later tasks, for the latest record of `event` queued so far
/// (on any stream). One record releases every waiting stream.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    acl_call("aclrtStreamWaitEvent", || {
        resolve::<Event>(event, "event")?.wait_on(&*context::stream_for_work(raw(stream))?)
    })
}
