//! `acl/acl_rt.h`: model run instances (`aclmdlRI*`): stream capture, building a model from
//! bound streams, replay, task queries and updates, conditional tasks. The core is
//! `runtime::capture`; docs/capture.md describes the behaviour.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::callback::aclrtCallback;
use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CONTEXT,
};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::{aclmdlRITask, aclrtEvent, aclrtStream, aclrtTaskGrp};
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, resolve, to_c};
use crate::ffi::ptr::{self, Out};
use crate::logging::TARGET;
use crate::runtime::capture::cond::CondHandle;
use crate::runtime::capture::graph::{Graph, Group, ModelStream, RecordedTask};
use crate::runtime::capture::{self, mode, print};
use crate::runtime::context::{self, StreamRef};
use crate::runtime::event::Event;
use crate::runtime::memory::{self, Limits};
use crate::runtime::task::{Params, TaskInfo, TaskType};
use crate::runtime::value;

/// A model run instance: a graph of tasks captured from streams (or built), run again with
/// `aclmdlRIExecuteAsync`.
pub type aclmdlRI = *mut c_void;
/// A condition handle of a model run instance: a 64-bit word of device memory read by
/// conditional tasks.
pub type aclmdlRICondHandle = *mut c_void;

/// An `aclmdlRICaptureMode` value as received (any integer).
pub type CaptureModeArg = i32;
/// An `aclmdlRICondHandleFlag` value as received (any integer).
pub type CondHandleFlagArg = i32;
/// An `aclmdlRICondTaskType` value as received (any integer).
pub type CondTaskTypeArg = i32;
/// An `aclmdlRITaskType` value (its C definition is written by hand in the header, with
/// `aclmdlRITaskParams`).
pub type TaskTypeArg = i32;

/// Who may make calls a capture cannot hold (`aclmdlRICaptureBegin`,
/// `aclmdlRICaptureThreadExchangeMode`).
#[repr(C)]
pub enum aclmdlRICaptureMode {
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2,
}

/// A stream's capture status (`aclmdlRICaptureGetInfo`).
#[repr(C)]
pub enum aclmdlRICaptureStatus {
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1,
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2,
}

/// `aclmdlRICondHandleCreate` flag.
#[repr(C)]
pub enum aclmdlRICondHandleFlag {
    /// The condition is set to the default at the start of each run of the model.
    ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT = 1,
}

/// The kind of a conditional task.
#[repr(C)]
pub enum aclmdlRICondTaskType {
    ACL_MODEL_RI_COND_TYPE_IF = 0,
    ACL_MODEL_RI_COND_TYPE_WHILE = 1,
    ACL_MODEL_RI_COND_TYPE_SWITCH = 2,
}

/// `aclmdlRIDebugJsonPrint` flag: the graph's streams and tasks.
pub const ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY: u64 = 0x0 as u64;
/// `aclmdlRIDebugJsonPrint` flag: also every task's parameters and the branch graphs.
pub const ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE: u64 = 0x1 as u64;

/// A conditional task (`aclmdlRIAddCondTask`): the condition, its kind, and `size` branch
/// models the call makes and returns in `modelRIArray` (room for `size`).
#[repr(C)]
pub struct aclmdlRICondTaskParams {
    pub handle: aclmdlRICondHandle,
    pub r#type: CondTaskTypeArg,
    pub size: u32,
    pub modelRIArray: *mut aclmdlRI,
}

/// The parameters of a kernel task (no kernels run here: never filled).
/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclmdlRIKernelTaskParams {
    pub funcHandle: *mut c_void,
    pub cfg: *mut c_void,
    pub args: *mut c_void,
    pub isHostArgs: u32,
    pub argsSize: usize,
    pub numBlocks: u32,
    pub rsv: [u32; 10],
}

/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclmdlRIEventTaskParams {
    pub event: aclrtEvent,
    pub eventFlag: u32,
    /// recordFlag, waitFlag or resetFlag.
    pub flag: u32,
}

/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclmdlRIValueWriteTaskParams {
    pub devAddr: *mut c_void,
    pub value: u64,
}

/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclmdlRIValueWaitTaskParams {
    pub devAddr: *mut c_void,
    pub value: u64,
    pub flag: u32,
}

/// The union of `aclmdlRITaskParams` (anonymous in C: the header is written by hand, see
/// `tests/generated_headers.rs`).
/// cbindgen:ignore
#[repr(C)]
#[derive(Clone, Copy)]
pub union TaskParamsUnion {
    pub rsv2: [u8; 128],
    pub kernel: aclmdlRIKernelTaskParams,
    pub event: aclmdlRIEventTaskParams,
    pub valueWrite: aclmdlRIValueWriteTaskParams,
    pub valueWait: aclmdlRIValueWaitTaskParams,
}

/// `aclmdlRITaskParams`, laid out as the vendor's (its C definition, with the anonymous union,
/// is written by hand in the header).
/// cbindgen:ignore
#[repr(C)]
pub struct aclmdlRITaskParams {
    pub r#type: TaskTypeArg,
    pub rsv0: [u32; 3],
    pub taskGrp: aclrtTaskGrp,
    pub opInfoPtr: *mut c_void,
    pub opInfoSize: usize,
    pub rsv1: [u8; 32],
    pub u: TaskParamsUnion,
}

// The vendor's layouts (tests/c/acl_codes_match_spec.c checks the C side).
const _: () = assert!(std::mem::size_of::<aclmdlRITaskParams>() == 200);
const _: () = assert!(std::mem::offset_of!(aclmdlRITaskParams, u) == 72);
const _: () = assert!(std::mem::size_of::<aclmdlRIKernelTaskParams>() == 88);
const _: () = assert!(std::mem::size_of::<aclmdlRICondTaskParams>() == 24);

fn model(h: aclmdlRI) -> AclResult<Arc<Graph>> {
    resolve::<Graph>(h, "modelRI")
}

fn limits() -> Limits {
    Limits::of(settings())
}

/// A captured stream must be one the caller created: the default stream cannot be captured.
fn created(s: &StreamRef) -> AclResult<()> {
    if let StreamRef::Default(_) = s {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "the default stream cannot be captured or bound to a model: use a stream from aclrtCreateStream",
        ));
    }
    Ok(())
}

fn mode_arg(mode: CaptureModeArg) -> AclResult<u32> {
    let m = u32::try_from(mode)
        .map_err(|_| AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("capture mode {mode}")))?;
    mode::check(m)?;
    Ok(m)
}

fn begin_capture(stream: aclrtStream, into: Option<Arc<Graph>>, m: CaptureModeArg) -> AclResult<()> {
    let m = mode_arg(m)?;
    let s = context::stream_for_work(raw(stream))?;
    created(&s)?;
    capture::begin(&s, m, into, s.device, s.context)?;
    Ok(())
}

/// Begins capturing `stream` in `mode`: from now on the work submitted to it (copies, fills,
/// event records and waits, notify records and waits, value writes and waits, host functions,
/// callbacks) is recorded into a new model run instance instead of run, until
/// `aclmdlRICaptureEnd`. A stream waiting on an event recorded by the capture joins it. Work a
/// model cannot hold fails with 107030 and invalidates the capture. Already captured: 107027.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureBegin(stream: aclrtStream, mode: CaptureModeArg) -> aclError {
    acl_call("aclmdlRICaptureBegin", || begin_capture(stream, None, mode))
}

/// Begins capturing `stream` into `modelRI`, a branch model of a conditional task
/// (`aclmdlRIAddCondTask`) not captured yet (107026 otherwise); ended by `aclmdlRICaptureEnd`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureToModelRIBegin(
    stream: aclrtStream,
    modelRI: aclmdlRI,
    mode: CaptureModeArg,
) -> aclError {
    acl_call("aclmdlRICaptureToModelRIBegin", || begin_capture(stream, Some(model(modelRI)?), mode))
}

/// The capture status of `stream` and, while it is captured (active or invalidated), its
/// model (NULL otherwise; `modelRI` may be NULL when not wanted).
///
/// # Safety
/// `status` is NULL or valid for a write of an `aclmdlRICaptureStatus`; `modelRI` is NULL or
/// valid for a write of an `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureGetInfo(
    stream: aclrtStream,
    status: *mut aclmdlRICaptureStatus,
    modelRI: *mut aclmdlRI,
) -> aclError {
    acl_call("aclmdlRICaptureGetInfo", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        // SAFETY: forwarded from this function's contract.
        let out_model = unsafe { Out::optional(modelRI, "modelRI") }?;
        let s = context::stream(raw(stream))?;
        let (st, g) = capture::info(&s);
        out.write(match st {
            capture::STATUS_ACTIVE => aclmdlRICaptureStatus::ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
            capture::STATUS_INVALIDATED => aclmdlRICaptureStatus::ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
            _ => aclmdlRICaptureStatus::ACL_MODEL_RI_CAPTURE_STATUS_NONE,
        });
        if let Some(o) = out_model {
            o.write(g.map_or(std::ptr::null_mut(), |g| to_c(g.handle.load(Ordering::Acquire))));
        }
        Ok(())
    })
}

/// Ends the capture begun on `stream` and hands out its model, ready to run. Not captured:
/// 107029; not the stream the capture began on: 107036; another thread than the one that
/// began a non-RELAXED capture: 107038; invalidated: 507903; a branch capture still open:
/// 107045; a stream that joined and did not join back: 107025. On the last four errors the
/// capture is discarded (a branch model goes back to empty).
///
/// # Safety
/// `modelRI` is NULL or valid for a write of an `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureEnd(stream: aclrtStream, modelRI: *mut aclmdlRI) -> aclError {
    acl_call("aclmdlRICaptureEnd", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(modelRI, "modelRI") }?;
        let s = context::stream(raw(stream))?;
        let g = capture::end(&s)?;
        out.write(to_c(g.handle.load(Ordering::Acquire)));
        Ok(())
    })
}

/// Sets the calling thread's capture mode to `*mode` and returns the previous one in `*mode`.
///
/// # Safety
/// `mode` is NULL or valid for a read and a write of an `aclmdlRICaptureMode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureThreadExchangeMode(mode: *mut aclmdlRICaptureMode) -> aclError {
    acl_call("aclmdlRICaptureThreadExchangeMode", || {
        // SAFETY: forwarded from this function's contract (read as an integer: any value may
        // come from C).
        let wanted = unsafe { ptr::slice(mode.cast::<i32>().cast_const(), 1, "mode") }?[0];
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(mode.cast::<i32>(), "mode") }?;
        let old = mode::exchange(mode_arg(wanted)?)?;
        out.write(old as i32);
        Ok(())
    })
}

/// Runs `modelRI` once on `stream` (NULL: the default stream), queued behind the stream's
/// work: one stream task runs the recorded tasks in the order they were recorded. A stream
/// being captured: 107027; a model being captured: 107026.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIExecuteAsync(modelRI: aclmdlRI, stream: aclrtStream) -> aclError {
    acl_call("aclmdlRIExecuteAsync", || {
        let g = model(modelRI)?;
        let s = context::stream_for_work(raw(stream))?;
        capture::replay::launch(&g, &s)
    })
}

/// Runs `modelRI` once and waits for it, at most `timeout` ms (-1: without limit; time-out:
/// 507046, the run goes on).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIExecute(modelRI: aclmdlRI, timeout: i32) -> aclError {
    acl_call("aclmdlRIExecute", || {
        let limit = match timeout {
            -1 => None,
            t if t > 0 => Some(Duration::from_millis(t as u64)),
            t => {
                return Err(AclError::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("timeout {t}: pass -1 to wait without limit or a number of milliseconds > 0"),
                ));
            }
        };
        capture::execute(&model(modelRI)?, limit)
    })
}

/// Stops the runs of `modelRI` queued so far: each ends at its next task (a waiting task is
/// cancelled; a run not started does nothing). Runs queued later are not affected.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIAbort(modelRI: aclmdlRI) -> aclError {
    acl_call("aclmdlRIAbort", || {
        capture::abort(&*model(modelRI)?);
        Ok(())
    })
}

/// Destroys `modelRI`: the handle is stale at once; the model's resources (and its destroy
/// callbacks) go when its queued runs are done. Being captured: 107026.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDestroy(modelRI: aclmdlRI) -> aclError {
    acl_call("aclmdlRIDestroy", || capture::destroy(raw(modelRI)))
}

/// Registers `func(userData)` to be called when `modelRI` is destroyed (once its resources
/// go); registering the same `func` again replaces its `userData`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDestroyRegisterCallback(
    modelRI: aclmdlRI,
    func: aclrtCallback,
    userData: *mut c_void,
) -> aclError {
    acl_call("aclmdlRIDestroyRegisterCallback", || {
        let f = func.ok_or_else(|| AclError::new(ACL_ERROR_INVALID_PARAM, "func must not be NULL"))?;
        let g = model(modelRI)?;
        let arg = userData.expose_provenance();
        g.on_destroy(
            f as usize,
            Box::new(move || {
                let arg = std::ptr::with_exposed_provenance_mut::<c_void>(arg);
                // SAFETY: the caller's function for its argument, called once, as registered.
                if catch_unwind(AssertUnwindSafe(|| unsafe { f(arg) })).is_err() {
                    log::error!(target: TARGET, "a destroy callback of a model run instance did not return normally");
                }
            }),
        );
        Ok(())
    })
}

/// Unregisters the destroy callback `func` of `modelRI` (107000 if it is not registered).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDestroyUnregisterCallback(modelRI: aclmdlRI, func: aclrtCallback) -> aclError {
    acl_call("aclmdlRIDestroyUnregisterCallback", || {
        let f = func.ok_or_else(|| AclError::new(ACL_ERROR_INVALID_PARAM, "func must not be NULL"))?;
        model(modelRI)?.forget_destroy(f as usize)
    })
}

/// Opens a task group on the captured `stream`: its next tasks, until
/// `aclmdlRICaptureTaskGrpEnd`, can later be replaced together. One open at a time: 107033.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskGrpBegin(stream: aclrtStream) -> aclError {
    acl_call("aclmdlRICaptureTaskGrpBegin", || capture::group_begin(&*context::stream(raw(stream))?))
}

/// Closes the task group of the captured `stream` and hands out its handle.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclrtTaskGrp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpEnd(
    stream: aclrtStream,
    handle: *mut aclrtTaskGrp,
) -> aclError {
    acl_call("aclmdlRICaptureTaskGrpEnd", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        out.write(to_c(capture::group_end(&*context::stream(raw(stream))?)?));
        Ok(())
    })
}

/// Begins replacing the tasks of group `handle`: the work submitted to `stream` (not
/// captured) until `aclmdlRICaptureTaskUpdateEnd` is collected instead of run.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskUpdateBegin(stream: aclrtStream, handle: aclrtTaskGrp) -> aclError {
    acl_call("aclmdlRICaptureTaskUpdateBegin", || {
        let group = resolve::<Group>(handle, "handle")?;
        let s = context::stream_for_work(raw(stream))?;
        created(&s)?;
        capture::update_begin(&s, group)
    })
}

/// Replaces the group's tasks with the ones collected on `stream`, one for one (same number
/// and types, else 107040 and nothing changes); later runs use them.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskUpdateEnd(stream: aclrtStream) -> aclError {
    acl_call("aclmdlRICaptureTaskUpdateEnd", || capture::update_end(&*context::stream(raw(stream))?))
}

/// Begins building a model from bound streams (`aclmdlRIBindStream`); `flag` is reserved: 0.
///
/// # Safety
/// `modelRI` is NULL or valid for a write of an `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIBuildBegin(modelRI: *mut aclmdlRI, flag: u32) -> aclError {
    acl_call("aclmdlRIBuildBegin", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(modelRI, "modelRI") }?;
        if flag != 0 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flag {flag} is reserved: pass 0"),
            ));
        }
        let ctx = context::current()?;
        let g = Graph::create(capture::graph::State::Building, ctx.device, ctx.handle);
        out.write(to_c(g.handle.load(Ordering::Acquire)));
        Ok(())
    })
}

/// Binds `stream` to `modelRI` (being built): its work is recorded into the model until
/// unbound. `flag`: `ACL_MODEL_STREAM_FLAG_HEAD` (0) or `ACL_MODEL_STREAM_FLAG_DEFAULT` (1);
/// the streams of a model run in one order here, so both mean the same.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIBindStream(modelRI: aclmdlRI, stream: aclrtStream, flag: u32) -> aclError {
    acl_call("aclmdlRIBindStream", || {
        if flag > 1 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "flag {flag}: use ACL_MODEL_STREAM_FLAG_HEAD (0) or ACL_MODEL_STREAM_FLAG_DEFAULT (1)"
                ),
            ));
        }
        let g = model(modelRI)?;
        let s = context::stream_for_work(raw(stream))?;
        created(&s)?;
        if s.context != g.context {
            return Err(AclError::new(
                ACL_ERROR_RT_STREAM_CONTEXT,
                "the stream and the model belong to different contexts",
            ));
        }
        capture::bind(&g, &s)
    })
}

/// Adds the end-of-graph task to bound `stream` (107005 if not bound to `modelRI`).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIEndTask(modelRI: aclmdlRI, stream: aclrtStream) -> aclError {
    acl_call("aclmdlRIEndTask", || capture::end_task(&model(modelRI)?, &*context::stream(raw(stream))?))
}

/// Ends the build of `modelRI`: it may run. `reserve` must be NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIBuildEnd(modelRI: aclmdlRI, reserve: *mut c_void) -> aclError {
    acl_call("aclmdlRIBuildEnd", || {
        if !reserve.is_null() {
            return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "reserve must be NULL"));
        }
        capture::build_end(&model(modelRI)?)
    })
}

/// Unbinds `stream` from `modelRI`: its work runs again (107005 if not bound to it).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIUnbindStream(modelRI: aclmdlRI, stream: aclrtStream) -> aclError {
    acl_call("aclmdlRIUnbindStream", || capture::unbind(&model(modelRI)?, &*context::stream(raw(stream))?))
}

/// Drops the tasks a stream bound to a model (`aclmdlRIBindStream`) recorded there; on a
/// stream that is not bound nothing is kept, and nothing is done.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPersistentTaskClean(stream: aclrtStream) -> aclError {
    acl_call("aclrtPersistentTaskClean", || capture::persistent_clean(&*context::stream(raw(stream))?))
}

/// Names `modelRI` (shown by the debug prints).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRISetName(modelRI: aclmdlRI, name: *const c_char) -> aclError {
    acl_call("aclmdlRISetName", || {
        // SAFETY: forwarded from this function's contract.
        let n = unsafe { ptr::required_str(name, "name") }?;
        *crate::sync::lock(&model(modelRI)?.name) = n.to_owned();
        Ok(())
    })
}

/// Copies the name of `modelRI` into `name` (room for `maxLen` bytes, the NUL included;
/// too small: 107000).
///
/// # Safety
/// `name` is NULL or valid for writes of `maxLen` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetName(modelRI: aclmdlRI, maxLen: u32, name: *mut c_char) -> aclError {
    acl_call("aclmdlRIGetName", || {
        if name.is_null() {
            return Err(crate::ffi::ptr::null_argument("name"));
        }
        let g = model(modelRI)?;
        let n = crate::sync::lock(&g.name).clone();
        if n.len() + 1 > maxLen as usize {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("maxLen {maxLen} has no room for the name ({} bytes and its NUL)", n.len()),
            ));
        }
        // SAFETY: `name` holds `maxLen` >= len + 1 bytes by the contract and the check above.
        unsafe {
            std::ptr::copy_nonoverlapping(n.as_ptr(), name.cast::<u8>(), n.len());
            name.add(n.len()).write(0);
        }
        Ok(())
    })
}

/// The id of `modelRI`.
///
/// # Safety
/// `modelRIId` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetId(modelRI: aclmdlRI, modelRIId: *mut u32) -> aclError {
    acl_call("aclmdlRIGetId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(modelRIId, "modelRIId") }?;
        out.write(model(modelRI)?.id);
        Ok(())
    })
}

/// Reads `*n` (an array's capacity) and returns it with the out-parameter that takes the count.
///
/// # Safety
/// `n` is NULL or valid for a read and a write of a `uint32_t`.
unsafe fn in_out<'a>(n: *mut u32, what: &'static str) -> AclResult<(u32, Out<'a, u32>)> {
    // SAFETY: forwarded contract.
    let cap = unsafe { ptr::slice(n.cast_const(), 1, what) }?[0];
    // SAFETY: forwarded contract.
    Ok((cap, unsafe { Out::new(n, what) }?))
}

/// Fills `array` (capacity `cap`) with `items`: NULL asks for the count only; too small: 107039.
///
/// # Safety
/// `array` is NULL or valid for writes of `cap` pointers.
unsafe fn fill(array: *mut *mut c_void, cap: u32, items: &[u64], what: &str) -> AclResult<()> {
    if array.is_null() {
        return Ok(());
    }
    if items.len() > cap as usize {
        return Err(AclError::new(
            ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
            format!("the array has room for {cap} {what} but there are {}", items.len()),
        ));
    }
    for (i, h) in items.iter().enumerate() {
        // SAFETY: i < items.len() <= cap, within the caller's array.
        unsafe { array.add(i).write(to_c(*h)) };
    }
    Ok(())
}

/// The streams of `modelRI` (each stream whose work it recorded; these handles name the
/// model's streams for `aclmdlRIGetTasksByStream`, not streams to queue work on). `*numStreams`
/// is the array's room on entry and the count on return; `streams` NULL asks for the count.
///
/// # Safety
/// `numStreams` is NULL or valid for a read and a write; `streams` is NULL or valid for
/// writes of `*numStreams` handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetStreams(
    modelRI: aclmdlRI,
    streams: *mut aclrtStream,
    numStreams: *mut u32,
) -> aclError {
    acl_call("aclmdlRIGetStreams", || {
        // SAFETY: forwarded from this function's contract.
        let (cap, out) = unsafe { in_out(numStreams, "numStreams") }?;
        let handles: Vec<u64> = model(modelRI)?.streams().iter().map(|s| s.handle).collect();
        // SAFETY: forwarded from this function's contract.
        unsafe { fill(streams, cap, &handles, "streams") }?;
        out.write(handles.len() as u32);
        Ok(())
    })
}

/// The tasks of a model's stream (from `aclmdlRIGetStreams`), in order; as for
/// `aclmdlRIGetStreams`, `*numTasks` is the room on entry and the count on return.
///
/// # Safety
/// `numTasks` is NULL or valid for a read and a write; `tasks` is NULL or valid for writes of
/// `*numTasks` handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetTasksByStream(
    stream: aclrtStream,
    tasks: *mut aclmdlRITask,
    numTasks: *mut u32,
) -> aclError {
    acl_call("aclmdlRIGetTasksByStream", || {
        // SAFETY: forwarded from this function's contract.
        let (cap, out) = unsafe { in_out(numTasks, "numTasks") }?;
        let ms = resolve::<ModelStream>(stream, "stream")?;
        let g = ms
            .graph
            .upgrade()
            .ok_or_else(|| AclError::new(ACL_ERROR_RT_PARAM_INVALID, "the model was destroyed"))?;
        let handles: Vec<u64> =
            g.tasks_of(ms.index).iter().map(|t| t.handle.load(Ordering::Acquire)).collect();
        // SAFETY: forwarded from this function's contract.
        unsafe { fill(tasks, cap, &handles, "tasks") }?;
        out.write(handles.len() as u32);
        Ok(())
    })
}

fn task_of(h: aclmdlRITask) -> AclResult<Arc<RecordedTask>> {
    resolve::<RecordedTask>(h, "task")
}

/// The type of `task` (`aclmdlRITaskType`: copies, fills, notify tasks and host functions are
/// `ACL_MODEL_RI_TASK_DEFAULT`).
///
/// # Safety
/// `type` is NULL or valid for a write of an `aclmdlRITaskType`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetType(task: aclmdlRITask, r#type: *mut TaskTypeArg) -> aclError {
    acl_call("aclmdlRITaskGetType", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(r#type, "type") }?;
        out.write(task_of(task)?.kind() as i32);
        Ok(())
    })
}

/// The sequence id of `task`: its place in the order the model recorded its tasks.
///
/// # Safety
/// `id` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetSeqId(task: aclmdlRITask, id: *mut u32) -> aclError {
    acl_call("aclmdlRITaskGetSeqId", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(id, "id") }?;
        out.write(task_of(task)?.seq);
        Ok(())
    })
}

fn event_handle(event: &Arc<dyn std::any::Any + Send + Sync>) -> *mut c_void {
    let h =
        Arc::clone(event).downcast::<Event>().ok().and_then(|e| context::EVENTS.handle_of(&e)).unwrap_or(0);
    to_c(h)
}

/// The parameters of `task` (those set by `aclmdlRITaskSetParams` if not applied yet); the
/// type's member of the union is filled, the rest zero.
///
/// # Safety
/// `params` is NULL or valid for a write of an `aclmdlRITaskParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetParams(
    task: aclmdlRITask,
    params: *mut aclmdlRITaskParams,
) -> aclError {
    acl_call("aclmdlRITaskGetParams", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(params, "params") }?;
        let t = task_of(task)?;
        let info = t.info();
        let mut u = TaskParamsUnion { rsv2: [0; 128] };
        match &info.params {
            Params::Event { event, event_flags, flag } => {
                u.event = aclmdlRIEventTaskParams {
                    event: event_handle(event),
                    eventFlag: *event_flags,
                    flag: *flag,
                };
            }
            Params::ValueWrite { addr, value } => {
                u.valueWrite = aclmdlRIValueWriteTaskParams {
                    devAddr: std::ptr::with_exposed_provenance_mut(*addr),
                    value: *value,
                };
            }
            Params::ValueWait { addr, value, flag } => {
                u.valueWait = aclmdlRIValueWaitTaskParams {
                    devAddr: std::ptr::with_exposed_provenance_mut(*addr),
                    value: *value,
                    flag: *flag,
                };
            }
            Params::None => {}
        }
        out.write(aclmdlRITaskParams {
            r#type: info.kind as i32,
            rsv0: [0; 3],
            taskGrp: std::ptr::null_mut(),
            opInfoPtr: std::ptr::null_mut(),
            opInfoSize: 0,
            rsv1: [0; 32],
            u,
        });
        Ok(())
    })
}

/// Sets new parameters for `task`, applied by the next `aclmdlRIUpdate` of its model. Only the
/// event and value tasks have parameters to set; `params->type` must be the task's type.
///
/// # Safety
/// `params` is NULL or valid for a read of an `aclmdlRITaskParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskSetParams(
    task: aclmdlRITask,
    params: *mut aclmdlRITaskParams,
) -> aclError {
    acl_call("aclmdlRITaskSetParams", || {
        // SAFETY: forwarded from this function's contract.
        let p = &unsafe { ptr::slice(params.cast_const(), 1, "params") }?[0];
        let t = task_of(task)?;
        let kind = t.kind();
        if p.r#type != kind as i32 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("params->type {} differs from the task's type {}", p.r#type, kind as i32),
            ));
        }
        // SAFETY: the member read is the one `type` selects; all are plain data.
        let (info, op) = unsafe {
            match kind {
                TaskType::EventRecord | TaskType::EventWait | TaskType::EventReset => {
                    let e = resolve::<Event>(p.u.event.event, "params->event")?;
                    if e.ipc.is_some() {
                        return Err(AclError::new(
                            ACL_ERROR_RT_PARAM_INVALID,
                            "an IPC event cannot be part of a model",
                        ));
                    }
                    let (mut info, op) = match kind {
                        TaskType::EventRecord => e.record_op(),
                        TaskType::EventWait => e.wait_op(crate::runtime::event::op_wait_timeout()),
                        _ => e.reset_op(),
                    };
                    if let Params::Event { flag, .. } = &mut info.params {
                        *flag = p.u.event.flag;
                    }
                    (info, op)
                }
                TaskType::ValueWrite => value::write_op(p.u.valueWrite.devAddr.addr(), p.u.valueWrite.value)?,
                TaskType::ValueWait => {
                    value::wait_op(p.u.valueWait.devAddr.addr(), p.u.valueWait.value, p.u.valueWait.flag)?
                }
                _ => {
                    return Err(AclError::new(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("{} tasks have no parameters to set", print::type_name(kind)),
                    ));
                }
            }
        };
        t.set_pending(TaskInfo { name: info.name, ..info }, op)
    })
}

/// Applies the parameters and disables set on the tasks of `modelRI` since the last update;
/// runs queued before keep the old ones.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIUpdate(modelRI: aclmdlRI) -> aclError {
    acl_call("aclmdlRIUpdate", || {
        let g = model(modelRI)?;
        g.check_runnable()?;
        g.update();
        Ok(())
    })
}

/// Marks `task` disabled: after the next `aclmdlRIUpdate` runs of its model skip it. A task
/// of type `ACL_MODEL_RI_TASK_DEFAULT` cannot be disabled (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRITaskDisable(task: aclmdlRITask) -> aclError {
    acl_call("aclmdlRITaskDisable", || task_of(task)?.disable())
}

/// Prints `modelRI` to the log (info level): its id, name, state and each task.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDebugPrint(modelRI: aclmdlRI) -> aclError {
    acl_call("aclmdlRIDebugPrint", || {
        print::to_log(&*model(modelRI)?);
        Ok(())
    })
}

/// Writes `modelRI` as JSON to the file `path`: `ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY` lists
/// its streams and tasks, `_VERBOSE` adds the tasks' parameters and the branch models.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIDebugJsonPrint(
    modelRI: aclmdlRI,
    path: *const c_char,
    flags: u32,
) -> aclError {
    acl_call("aclmdlRIDebugJsonPrint", || {
        // SAFETY: forwarded from this function's contract.
        let p = unsafe { ptr::required_str(path, "path") }?;
        print::to_file(&*model(modelRI)?, p, flags)
    })
}

/// Creates a condition for conditional tasks of `modelRI`: a 64-bit word of device memory set
/// to `defaultLaunchValue` now and, with `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`, at the start
/// of each run of the model. Freed with the model.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `aclmdlRICondHandle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleCreate(
    modelRI: aclmdlRI,
    defaultLaunchValue: u32,
    flag: CondHandleFlagArg,
    handle: *mut aclmdlRICondHandle,
) -> aclError {
    acl_call("aclmdlRICondHandleCreate", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        let g = model(modelRI)?;
        let flag = u32::try_from(flag)
            .map_err(|_| AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flag {flag}: use 0 or 1")))?;
        if flag > 1 {
            return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flag {flag}: use 0 or 1")));
        }
        let addr = memory::alloc_device(g.device, 8, 0, &limits())?;
        match capture::cond_create(&g, addr, defaultLaunchValue, flag) {
            Ok(h) => {
                out.write(to_c(h));
                Ok(())
            }
            Err(e) => {
                let _ = memory::free(addr, memory::AllocKind::Device);
                Err(e)
            }
        }
    })
}

/// The device address of the condition word of `handle` (8 bytes, 8-aligned): write it with
/// copies, value writes or from a mapped host pointer to steer the conditional tasks.
///
/// # Safety
/// `ptr` is NULL or valid for a write of a `uint64_t *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleGetCondPtr(
    handle: aclmdlRICondHandle,
    ptr: *mut *mut u64,
) -> aclError {
    acl_call("aclmdlRICondHandleGetCondPtr", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(ptr, "ptr") }?;
        let c = resolve::<CondHandle>(handle, "handle")?;
        out.write(std::ptr::with_exposed_provenance_mut(c.addr));
        Ok(())
    })
}

/// Records on the captured `stream` a conditional task over `params.handle` and makes
/// `params.size` empty branch models, handed out in `params.modelRIArray`; capture each with
/// `aclmdlRICaptureToModelRIBegin` (on another stream) before ending this capture. `flags` is
/// reserved: 0.
///
/// # Safety
/// `params.modelRIArray` is NULL or valid for writes of `params.size` handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIAddCondTask(
    params: aclmdlRICondTaskParams,
    stream: aclrtStream,
    flags: u32,
) -> aclError {
    acl_call("aclmdlRIAddCondTask", || {
        if flags != 0 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flags {flags} is reserved: pass 0"),
            ));
        }
        if params.modelRIArray.is_null() {
            return Err(crate::ffi::ptr::null_argument("params.modelRIArray"));
        }
        let cond = resolve::<CondHandle>(params.handle, "params.handle")?;
        let s = context::stream(raw(stream))?;
        let kind = u32::try_from(params.r#type).unwrap_or(u32::MAX);
        let branches = capture::add_cond_task(&s, cond, kind, params.size)?;
        for (i, b) in branches.iter().enumerate() {
            // SAFETY: i < size, within the caller's array by this function's contract.
            unsafe { params.modelRIArray.add(i).write(to_c(b.handle.load(Ordering::Acquire))) };
        }
        Ok(())
    })
}
