//! `acl/acl_rt.h`: events.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use super::stream::millis;
use crate::config;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::{
    ACL_ERROR_RT_EVENT_NOT_COMPLETE, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_PARAM_INVALID,
};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::{aclrtEvent, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, release, resolve, to_c};
use crate::ffi::ptr::Out;
use crate::profile::Product;
use crate::runtime::context::{self, EVENTS};
use crate::runtime::event::{self, Event, Origin};
use crate::runtime::share;

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

/// Bytes in an `aclrtIpcEventHandle`.
pub const ACL_IPC_EVENT_HANDLE_SIZE: usize = 64;

/// `aclrtRecordEventWithFlag` flag: an ordinary record.
pub const ACL_EVENT_RECORD_DEFAULT: u32 = 0x0u32;
/// `aclrtRecordEventWithFlag` flag: a record for a captured model's external event.
pub const ACL_EVENT_RECORD_EXTERNAL: u32 = 0x01u32;
/// `aclrtStreamWaitEventWithFlag` flag: an ordinary wait.
pub const ACL_EVENT_WAIT_DEFAULT: u32 = 0x0u32;
/// `aclrtStreamWaitEventWithFlag` flag: a wait for a captured model's external event.
pub const ACL_EVENT_WAIT_EXTERNAL: u32 = 0x01u32;

/// An IPC event's handle: 64 bytes of plain data (a marker and the export's key) that may be
/// written to a file or a socket and opened by another process with `aclrtIpcOpenEventHandle`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtIpcEventHandle {
    pub reserved: [c_char; ACL_IPC_EVENT_HANDLE_SIZE],
}

/// What the deprecated `aclrtQueryEvent` reports.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum aclrtEventStatus {
    ACL_EVENT_STATUS_COMPLETE = 0,
    ACL_EVENT_STATUS_NOT_READY = 1,
    ACL_EVENT_STATUS_RESERVED = 2,
}

/// What `aclrtQueryEventStatus` reports (note: 1 is complete here).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
}

/// What `aclrtQueryEventWaitStatus` reports (0 is complete here).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum aclrtEventWaitStatus {
    ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
    ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
    ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF,
}

const KNOWN_FLAGS: u32 = ACL_EVENT_SYNC
    | ACL_EVENT_CAPTURE_STREAM_PROGRESS
    | ACL_EVENT_TIME_LINE
    | ACL_EVENT_DEVICE_USE_ONLY
    | ACL_EVENT_EXTERNAL;

/// Flags `aclrtCreateEventExWithFlag` combines (ACL_EVENT_IPC goes alone).
const EX_FLAGS: u32 = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE;

/// Events of the pool a device holds on `product` (the vendor's per-product limits).
fn event_limit(product: Product) -> u32 {
    match product {
        Product::AtlasInference => 1023,
        Product::AtlasTraining => 65535,
        _ => 65536,
    }
}

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

fn not_supported(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, message)
}

/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
unsafe fn create(event: *mut aclrtEvent, flag: u32) -> AclResult<()> {
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { Out::new(event, "event") }?;
    if flag == ACL_EVENT_IPC {
        return Err(invalid("ACL_EVENT_IPC is a flag of aclrtCreateEventExWithFlag only"));
    }
    if flag & !KNOWN_FLAGS != 0 {
        return Err(invalid(format!("unknown event flag bits {:#x}", flag & !KNOWN_FLAGS)));
    }
    if flag & ACL_EVENT_EXTERNAL != 0 && flag != ACL_EVENT_EXTERNAL {
        return Err(invalid(format!(
            "event flag {flag:#x}: ACL_EVENT_EXTERNAL cannot be OR-ed with other flags"
        )));
    }
    context::current()?;
    let limit = event_limit(config::settings().product);
    if event::pooled_live() >= limit {
        return Err(AclError::new(
            ACL_ERROR_RT_NO_EVENT_RESOURCE,
            format!(
                "{limit} events exist already, the product's limit; destroy some, or use aclrtCreateEventExWithFlag"
            ),
        ));
    }
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

/// Destroys an event. Waits already queued on streams still complete. For an IPC event's
/// creator it withdraws the handle (later opens fail with 107000; opened events keep working);
/// for a process that opened one it ends that import only.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    acl_call("aclrtDestroyEvent", || {
        let e = release::<Event>(event, "event")?;
        share::withdraw_event(&e);
        Ok(())
    })
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
        let e = resolve::<Event>(event, "event")?;
        no_ex(&e, "aclrtResetEvent")?;
        e.reset(&*context::stream_for_work(raw(stream))?)
    })
}

/// Blocks until the latest record of `event` has run (at once if never recorded); 107023 when
/// that record was discarded by `aclrtStreamAbort` or a forced destroy of its stream.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    acl_call("aclrtSynchronizeEvent", || resolve::<Event>(event, "event")?.synchronize(None))
}

/// As `aclrtSynchronizeEvent`, giving up after `timeout` ms (-1: no limit; 0: check now) with
/// 507047.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError {
    acl_call("aclrtSynchronizeEventWithTimeout", || {
        // 0 checks whether the event is complete now, as the vendor's header says.
        let limit = if timeout == 0 { Some(Duration::ZERO) } else { millis(timeout)? };
        resolve::<Event>(event, "event")?.synchronize(limit)
    })
}

/// Makes `stream` wait, before its later tasks, for the latest record of `event` queued so far
/// (on any stream). One record releases every waiting stream.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    acl_call("aclrtStreamWaitEvent", || wait(stream, event, None))
}

/// Queues a wait of `stream` for `event` (bounded by `timeout`, else by `aclrtSetOpWaitTimeout`).
fn wait(stream: aclrtStream, event: aclrtEvent, timeout: Option<Duration>) -> AclResult<()> {
    let e = resolve::<Event>(event, "event")?;
    if e.origin == Origin::Ex && e.ipc.is_none() && e.flags & ACL_EVENT_SYNC == 0 {
        return Err(invalid(
            "this event was created by aclrtCreateEventExWithFlag without ACL_EVENT_SYNC: streams cannot wait on it",
        ));
    }
    e.wait_on(&*context::stream_for_work(raw(stream))?, timeout)
}

/// Refuses what events of `aclrtCreateEventExWithFlag` do not support (207000, the vendor's).
fn no_ex(e: &Event, what: &str) -> AclResult<()> {
    if e.origin == Origin::Ex {
        return Err(not_supported(format!(
            "{what} is not supported on events of aclrtCreateEventExWithFlag"
        )));
    }
    Ok(())
}

/// Refuses what IPC events do not support (207000, the vendor's).
fn no_ipc(e: &Event, what: &str) -> AclResult<()> {
    if e.ipc.is_some() {
        return Err(not_supported(format!("{what} is not supported on IPC events (ACL_EVENT_IPC)")));
    }
    Ok(())
}

/// Creates an event outside the device's pool. `flag`: `ACL_EVENT_SYNC`,
/// `ACL_EVENT_CAPTURE_STREAM_PROGRESS` and `ACL_EVENT_TIME_LINE` OR-ed (at least one), or
/// `ACL_EVENT_IPC` alone (an event another process may open); anything else 107000. Without
/// `ACL_EVENT_SYNC` streams cannot wait on it (an IPC event they can).
///
/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    acl_call("aclrtCreateEventExWithFlag", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(event, "event") }?;
        if flag & ACL_EVENT_IPC != 0 && flag != ACL_EVENT_IPC {
            return Err(invalid(format!(
                "event flag {flag:#x}: ACL_EVENT_IPC cannot be OR-ed with other flags"
            )));
        }
        if flag != ACL_EVENT_IPC && (flag == 0 || flag & !EX_FLAGS != 0) {
            return Err(invalid(format!(
                "event flag {flag:#x}: use ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS and ACL_EVENT_TIME_LINE \
                 OR-ed together, or ACL_EVENT_IPC alone"
            )));
        }
        context::current()?;
        let ipc = if flag == ACL_EVENT_IPC {
            let s = config::settings();
            if s.virtual_instance || !s.product.supports_ipc_import() {
                return Err(not_supported(
                    "IPC events are not supported on this product or in a virtual instance",
                ));
            }
            Some(share::new_ipc_event()?)
        } else {
            None
        };
        out.write(to_c(EVENTS.insert(Event::with(flag, Origin::Ex, ipc))));
        Ok(())
    })
}

/// Shares an IPC event: writes the 64-byte handle another process of the same user opens with
/// `aclrtIpcOpenEventHandle`. Only events of `aclrtCreateEventExWithFlag(ACL_EVENT_IPC)`, by
/// their creator (107000 otherwise); asking again gives the same handle.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclrtIpcEventHandle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcGetEventHandle(
    event: aclrtEvent,
    handle: *mut aclrtIpcEventHandle,
) -> aclError {
    acl_call("aclrtIpcGetEventHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        let e = resolve::<Event>(event, "event")?;
        let bytes = share::export_event(&e, config::settings())?;
        out.write(aclrtIpcEventHandle { reserved: bytes.map(|b| b as c_char) });
        Ok(())
    })
}

/// Opens the IPC event of another process's handle as an event of this one: streams here may
/// wait on what the creator records, and record it too. Waits end with 507022 once the creator
/// has died (at most about 20 ms later). A handle not written by `aclrtIpcGetEventHandle`, or
/// withdrawn by the creator's destroy: 107000; another user's: 207006.
///
/// # Safety
/// `event` is NULL or valid for a write of an `aclrtEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcOpenEventHandle(
    handle: aclrtIpcEventHandle,
    event: *mut aclrtEvent,
) -> aclError {
    acl_call("aclrtIpcOpenEventHandle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(event, "event") }?;
        let bytes = handle.reserved.map(|c| c as u8);
        let e = share::open_event(&bytes, config::settings())?;
        out.write(to_c(EVENTS.insert(e)));
        Ok(())
    })
}

/// Queues a record; `flag` `ACL_EVENT_RECORD_DEFAULT` (0) records as `aclrtRecordEvent`;
/// `ACL_EVENT_RECORD_EXTERNAL` records, in a stream being captured, a record that every replay
/// makes visible outside the graph (the event made by `aclrtCreateEventExWithFlag` with
/// `ACL_EVENT_SYNC` alone); elsewhere 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordEventWithFlag(event: aclrtEvent, stream: aclrtStream, flag: u32) -> aclError {
    acl_call("aclrtRecordEventWithFlag", || match flag {
        ACL_EVENT_RECORD_DEFAULT => {
            resolve::<Event>(event, "event")?.record(&*context::stream_for_work(raw(stream))?)
        }
        ACL_EVENT_RECORD_EXTERNAL => {
            let (e, s) = external(event, stream, "ACL_EVENT_RECORD_EXTERNAL")?;
            e.record(&s)
        }
        f => Err(invalid(format!("record flag {f:#x}: use ACL_EVENT_RECORD_DEFAULT (0)"))),
    })
}

/// The event and the captured stream of an `*_EXTERNAL` record or wait, as the vendor
/// documents them: the stream is being captured, and the event was made by
/// `aclrtCreateEventExWithFlag` with `ACL_EVENT_SYNC` alone (107000 otherwise). In a graph
/// such a record or wait is recorded as any other is: a replay's wait waits for the latest
/// record queued before it, wherever it was recorded, and a replay's record is seen by every
/// stream that waits on the event.
fn external(
    event: aclrtEvent,
    stream: aclrtStream,
    what: &str,
) -> AclResult<(Arc<Event>, context::StreamRef)> {
    let e = resolve::<Event>(event, "event")?;
    let s = context::stream_for_work(raw(stream))?;
    if !s.is_capturing() {
        return Err(invalid(format!("{what} is for a stream being captured (aclmdlRICaptureBegin)")));
    }
    if e.origin != Origin::Ex || e.flags != ACL_EVENT_SYNC {
        return Err(invalid(format!(
            "{what} takes an event made by aclrtCreateEventExWithFlag with ACL_EVENT_SYNC alone"
        )));
    }
    Ok((e, s))
}

/// Queues a wait; `flag` `ACL_EVENT_WAIT_DEFAULT` (0) with `timeout` in ms (0: no limit);
/// `ACL_EVENT_WAIT_EXTERNAL` records, in a stream being captured, a wait for a record made
/// outside the graph (timeout 0 only; the event as for `ACL_EVENT_RECORD_EXTERNAL`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEventWithFlag(
    stream: aclrtStream,
    event: aclrtEvent,
    timeout: u32,
    flag: u32,
) -> aclError {
    acl_call("aclrtStreamWaitEventWithFlag", || match flag {
        ACL_EVENT_WAIT_DEFAULT => {
            wait(stream, event, (timeout > 0).then(|| Duration::from_millis(u64::from(timeout))))
        }
        ACL_EVENT_WAIT_EXTERNAL => {
            if timeout != 0 {
                return Err(invalid(format!(
                    "ACL_EVENT_WAIT_EXTERNAL waits without limit: timeout must be 0, not {timeout}"
                )));
            }
            let (e, s) = external(event, stream, "ACL_EVENT_WAIT_EXTERNAL")?;
            e.wait_on(&s, None)
        }
        f => Err(invalid(format!("wait flag {f:#x}: use ACL_EVENT_WAIT_DEFAULT (0)"))),
    })
}

/// Queues a wait bounded by `timeout` ms (0: no limit; negative: 107000). A wait that times out
/// fails its task with 107019, which the stream's synchronisation reports.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEventWithTimeout(
    stream: aclrtStream,
    event: aclrtEvent,
    timeout: i32,
) -> aclError {
    acl_call("aclrtStreamWaitEventWithTimeout", || {
        let t = u64::try_from(timeout)
            .map_err(|_| invalid(format!("timeout {timeout} ms: use 0 (no limit) or more")))?;
        wait(stream, event, (t > 0).then(|| Duration::from_millis(t)))
    })
}

/// Bounds, in seconds, every later stream wait queued without a time-out of its own (event
/// waits); 0 removes the bound. A wait past it fails its task with 107019.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetOpWaitTimeout(timeout: u32) -> aclError {
    acl_call("aclrtSetOpWaitTimeout", || {
        event::set_op_wait_timeout(timeout);
        Ok(())
    })
}

/// Deprecated query: `ACL_EVENT_STATUS_COMPLETE` once every record queued has run. Not on
/// events of `aclrtCreateEventExWithFlag` (207000).
///
/// # Safety
/// `status` is NULL or valid for a write of an `aclrtEventStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEvent(event: aclrtEvent, status: *mut aclrtEventStatus) -> aclError {
    acl_call("aclrtQueryEvent", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let e = resolve::<Event>(event, "event")?;
        no_ex(&e, "aclrtQueryEvent")?;
        e.refuse_if_captured("querying the event")?;
        out.write(if e.is_complete() {
            aclrtEventStatus::ACL_EVENT_STATUS_COMPLETE
        } else {
            aclrtEventStatus::ACL_EVENT_STATUS_NOT_READY
        });
        Ok(())
    })
}

/// `ACL_EVENT_RECORDED_STATUS_COMPLETE` (1) once every record queued (in any process, for an
/// IPC event) has run; never recorded counts as complete.
///
/// # Safety
/// `status` is NULL or valid for a write of an `aclrtEventRecordedStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(
    event: aclrtEvent,
    status: *mut aclrtEventRecordedStatus,
) -> aclError {
    acl_call("aclrtQueryEventStatus", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let e = resolve::<Event>(event, "event")?;
        e.refuse_if_captured("querying the event")?;
        out.write(if e.is_complete() {
            aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_COMPLETE
        } else {
            aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY
        });
        Ok(())
    })
}

/// `ACL_EVENT_WAIT_STATUS_COMPLETE` (0) once every stream wait queued for the event has run.
/// Not on events of `aclrtCreateEventExWithFlag` (207000).
///
/// # Safety
/// `status` is NULL or valid for a write of an `aclrtEventWaitStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventWaitStatus(
    event: aclrtEvent,
    status: *mut aclrtEventWaitStatus,
) -> aclError {
    acl_call("aclrtQueryEventWaitStatus", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let e = resolve::<Event>(event, "event")?;
        no_ex(&e, "aclrtQueryEventWaitStatus")?;
        out.write(if e.waits_complete() {
            aclrtEventWaitStatus::ACL_EVENT_WAIT_STATUS_COMPLETE
        } else {
            aclrtEventWaitStatus::ACL_EVENT_WAIT_STATUS_NOT_READY
        });
        Ok(())
    })
}

/// Milliseconds between the runs of the latest records of `startEvent` and `endEvent` (host
/// monotonic clock). Both must have been recorded and have completed (507006 otherwise); not on
/// IPC events (207000).
///
/// # Safety
/// `ms` is NULL or valid for a write of a `float`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(
    ms: *mut f32,
    startEvent: aclrtEvent,
    endEvent: aclrtEvent,
) -> aclError {
    acl_call("aclrtEventElapsedTime", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(ms, "ms") }?;
        let start = resolve::<Event>(startEvent, "startEvent")?;
        let end = resolve::<Event>(endEvent, "endEvent")?;
        no_ipc(&start, "aclrtEventElapsedTime")?;
        no_ipc(&end, "aclrtEventElapsedTime")?;
        let (a, b) = (stamp(&start, "startEvent")?, stamp(&end, "endEvent")?);
        out.write(((b as f64 - a as f64) / 1e6) as f32);
        Ok(())
    })
}

fn stamp(e: &Arc<Event>, name: &str) -> AclResult<u64> {
    e.timestamp_ns().ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_EVENT_NOT_COMPLETE,
            format!("{name} has not been recorded, or its record has not run yet: synchronise it first"),
        )
    })
}

/// The time the latest record of `event` ran, in nanoseconds of the host's monotonic clock
/// (since the library's first use of it): 507006 while not recorded or not run; not on IPC
/// events (207000).
///
/// # Safety
/// `timestamp` is NULL or valid for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) -> aclError {
    acl_call("aclrtEventGetTimestamp", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(timestamp, "timestamp") }?;
        let e = resolve::<Event>(event, "event")?;
        no_ipc(&e, "aclrtEventGetTimestamp")?;
        out.write(stamp(&e, "event")?);
        Ok(())
    })
}

/// The event's id, unique in the process; not on IPC events (207000).
///
/// # Safety
/// `eventId` is NULL or valid for a write of a `uint32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetEventId(event: aclrtEvent, eventId: *mut u32) -> aclError {
    acl_call("aclrtGetEventId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(eventId, "eventId") }?;
        let e = resolve::<Event>(event, "event")?;
        no_ipc(&e, "aclrtGetEventId")?;
        out.write(e.id);
        Ok(())
    })
}

/// How many more events `aclrtCreateEvent` / `aclrtCreateEventWithFlag` can make: the
/// product's limit (65536; 1023 on Atlas inference; 65535 on Atlas training) less those alive.
///
/// # Safety
/// `eventCount` is NULL or valid for a write of a `uint32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetEventAvailNum(eventCount: *mut u32) -> aclError {
    acl_call("aclrtGetEventAvailNum", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(eventCount, "eventCount") }?;
        context::current()?;
        out.write(event_limit(config::settings().product).saturating_sub(event::pooled_live()));
        Ok(())
    })
}
