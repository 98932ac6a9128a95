//! `acl/acl_prof.h` (the vendor's libmsprofiler.so): profiling on the host
//! (`runtime/profiling`). Handles (`aclprofConfig *`, stamps, step infos, subscription
//! configurations) are handle values, never addresses. The header's tensor structures and
//! macros are written by hand (tests/generated_headers.rs); their Rust layouts are here.

#![allow(non_snake_case, non_camel_case_types)]

use std::ffi::{c_char, c_void};

use serde_json::json;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::ffi::{acl_call, boundary};
use crate::runtime::context;
use crate::runtime::device;
use crate::runtime::profiling::subscribe::{self, Text};
use crate::runtime::profiling::{config, session, tx};

/// An `aclprofAicoreMetrics` value as received (any integer).
pub type AicoreMetricsArg = u32;
/// An `aclprofConfigType` value as received.
pub type ProfConfigTypeArg = u32;
/// An `aclprofStepTag` value as received.
pub type StepTagArg = u32;
/// An `aclprofSubscribeOpAttri` value as received.
pub type SubscribeOpAttriArg = u32;
/// An `aclprofSubscribeOpFlag` value as returned.
pub type SubscribeOpFlagArg = u32;

#[repr(C)]
pub enum aclprofAicoreMetrics {
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
    ACL_AICORE_PIPE_UTILIZATION = 1,
    ACL_AICORE_MEMORY_BANDWIDTH = 2,
    ACL_AICORE_L0B_AND_WIDTH = 3,
    ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
    ACL_AICORE_MEMORY_UB = 5,
    ACL_AICORE_L2_CACHE = 6,
    ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,
    ACL_AICORE_MEMORY_ACCESS = 8,
    ACL_AICORE_NONE = 0xFF,
}

#[repr(C)]
pub enum aclprofStepTag {
    ACL_STEP_START = 0,
    ACL_STEP_END = 1,
}

#[repr(C)]
pub enum aclprofSubscribeOpFlag {
    ACL_SUBSCRIBE_OP = 0,
    ACL_SUBSCRIBE_SUBGRAPH = 1,
    ACL_SUBSCRIBE_OP_THREAD = 2,
    ACL_SUBSCRIBE_NONE = 0xFF,
}

#[repr(C)]
pub enum aclprofSubscribeOpAttri {
    ACL_SUBSCRIBE_ATTRI_THREADID = 0,
    ACL_SUBSCRIBE_ATTRI_NONE,
}

#[repr(C)]
pub enum aclprofConfigType {
    ACL_PROF_ARGS_MIN = 0,
    ACL_PROF_STORAGE_LIMIT = 1,
    ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3,
    ACL_PROF_LLC_MODE = 4,
    ACL_PROF_SYS_IO_FREQ = 5,
    ACL_PROF_SYS_INTERCONNECTION_FREQ = 6,
    ACL_PROF_DVPP_FREQ = 7,
    ACL_PROF_HOST_SYS = 8,
    ACL_PROF_HOST_SYS_USAGE = 9,
    ACL_PROF_HOST_SYS_USAGE_FREQ = 10,
    ACL_PROF_LOW_POWER_FREQ = 11,
    ACL_PROF_SYS_MEM_SERVICEFLOW = 12,
    ACL_PROF_SYS_CPU_FREQ = 13,
    ACL_PROF_OPTYPE = 14,
    ACL_PROF_NTS_METRICS = 15,
    ACL_PROF_PATH = 16,
    ACL_PROF_ARGS_MAX = 17,
}

#[repr(C)]
pub enum aclprofMessageType {
    ACL_PROF_MESSAGE_TYPE_TENSOR_INFO = 0,
}

/// A profiling configuration (opaque to C).
pub struct aclprofConfig {
    _opaque: u8,
}
/// Declared by the vendor, used by no function.
pub struct aclprofStopConfig {
    _opaque: u8,
}
/// AI Core events: only NULL is accepted, as the vendor's.
pub struct aclprofAicoreEvents {
    _opaque: u8,
}
/// A model subscription's configuration (opaque to C).
pub struct aclprofSubscribeConfig {
    _opaque: u8,
}
/// A step of a training loop (opaque to C).
pub struct aclprofStepInfo {
    _opaque: u8,
}

/// `ACL_PROF_TENSOR_DATA_SHAPE_LEN`.
const SHAPE_LEN: usize = 8;

/// cbindgen:ignore
#[repr(C)]
pub struct aclprofTensor {
    pub r#type: u32,
    pub format: u32,
    pub dataType: u32,
    pub shapeDim: u32,
    pub shape: [u32; SHAPE_LEN],
}

/// cbindgen:ignore
#[repr(C)]
pub struct aclprofTensorInfo {
    pub opNameId: u64,
    pub opTypeId: u64,
    pub resv: u32,
    pub tensorNum: u32,
    pub kernelType: u32,
    pub blockNums: u32,
    pub stream: *mut c_void,
    pub tensors: *mut aclprofTensor,
}

/// cbindgen:ignore
#[repr(C)]
pub struct aclprofEventAttributes {
    pub version: u16,
    pub size: u16,
    pub messageType: u32,
    pub tensorInfo: *mut aclprofTensorInfo,
}

/// `ACL_PROF_EVENT_ATTR_VERSION`.
const EVENT_ATTR_VERSION: u16 = 1;
/// Most tensors one `aclprofRangePushEx` describes.
const MAX_TENSORS: u32 = 1024;

fn make(api: &str, body: impl FnOnce() -> AclResult<u64>) -> u64 {
    let mut made = 0;
    acl_call(api, || {
        made = body()?;
        Ok(())
    });
    made
}

/// Sets the result path (`length`: the path's bytes, its NUL not counted; counting it is
/// accepted too). Before `aclprofStart`; 100002 when already initialised.
///
/// # Safety
/// `profilerResultPath` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofInit(profilerResultPath: *const c_char, length: usize) -> aclError {
    acl_call("aclprofInit", || {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { ptr::required_str(profilerResultPath, "profilerResultPath") }?;
        if length == 0 || length > session::MAX_PATH_LEN {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("length {length}: 1 to 4096 bytes")));
        }
        if path.len() != length && path.len() + 1 != length {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("length {length} is not the length of profilerResultPath ({} bytes)", path.len()),
            ));
        }
        session::init(path)
    })
}

/// Ends the session: stops what is started (writing its data) and forgets the settings.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofFinalize() -> aclError {
    acl_call("aclprofFinalize", session::finalize)
}

/// Starts recording what `profilerConfig` asks for, into a new `PROF_*` directory.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofStart(profilerConfig: *const aclprofConfig) -> aclError {
    acl_call("aclprofStart", || session::start(raw(profilerConfig.cast_mut().cast())).map(drop))
}

/// A configuration of devices (ids below the device count, each once, at most 64; none only
/// with `ACL_PROF_MSPROFTX`), AI Core metrics (kept; no counters here) and data types; NULL on
/// bad input, with the reason in `aclGetRecentErrMsg`.
///
/// # Safety
/// `deviceIdList` is NULL or points to `deviceNums` readable ids.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofCreateConfig(
    deviceIdList: *mut u32,
    deviceNums: u32,
    aicoreMetrics: AicoreMetricsArg,
    aicoreEvents: *const aclprofAicoreEvents,
    dataTypeConfig: u64,
) -> *mut aclprofConfig {
    to_c(make("aclprofCreateConfig", || {
        if deviceNums > 0 && deviceIdList.is_null() {
            return Err(ptr::null_argument("deviceIdList"));
        }
        if deviceNums as usize > config::MAX_DEVICES {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("deviceNums {deviceNums}: at most 64"),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let ids = unsafe { ptr::slice(deviceIdList.cast_const(), deviceNums as usize, "deviceIdList") }?;
        let count = device::count(settings())?;
        config::create(ids, aicoreMetrics, !aicoreEvents.is_null(), dataTypeConfig, count)
    }))
    .cast()
}

/// Destroys a configuration (a started one stays started).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroyConfig(profilerConfig: *const aclprofConfig) -> aclError {
    acl_call("aclprofDestroyConfig", || {
        config::CONFIGS
            .remove(raw(profilerConfig.cast_mut().cast()))
            .map(drop)
            .map_err(|e| AclError::new(ACL_ERROR_INVALID_PARAM, format!("profilerConfig: {e}")))
    })
}

/// Stops the started configuration with the same devices, metrics and data types, writing
/// what it recorded; 100010 when none matches.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofStop(profilerConfig: *const aclprofConfig) -> aclError {
    acl_call("aclprofStop", || session::stop(raw(profilerConfig.cast_mut().cast())))
}

/// A setting (`aclprofConfigType`) of at most 256 bytes, written into each start's `info.json`;
/// `ACL_PROF_PATH` replaces the result path (and may be set before `aclprofInit`).
///
/// # Safety
/// `config` is NULL or points to `configLength` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofSetConfig(
    configType: ProfConfigTypeArg,
    config: *const c_char,
    configLength: usize,
) -> aclError {
    acl_call("aclprofSetConfig", || {
        if config.is_null() {
            return Err(ptr::null_argument("config"));
        }
        if configLength == 0 || configLength > config::MAX_SETTING_LEN {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("configLength {configLength}: 1 to 256 bytes"),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { ptr::slice(config.cast::<u8>(), configLength, "config") }?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let value = std::str::from_utf8(&bytes[..end])
            .map_err(|_| AclError::new(ACL_ERROR_INVALID_PARAM, "config is not UTF-8"))?;
        session::set_config(configType, value)
    })
}

/// Subscribes to the op records of model `modelId` (`aclmdlRIGetId`'s, or one named by
/// `MsprofSetDeviceIdByGeModelIdx`): each task of its runs is written to the config's pipe.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofModelSubscribe(
    modelId: u32,
    profSubscribeConfig: *const aclprofSubscribeConfig,
) -> aclError {
    acl_call("aclprofModelSubscribe", || {
        subscribe::subscribe(modelId, raw(profSubscribeConfig.cast_mut().cast()))
    })
}

/// Ends a subscription and closes its pipe (unless another subscription writes to it).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofModelUnSubscribe(modelId: u32) -> aclError {
    acl_call("aclprofModelUnSubscribe", || subscribe::unsubscribe(modelId))
}

/// A subscription configuration: time info on or off, AI Core metrics, and `fd`, the address
/// of the pipe's write end (read now). NULL on bad input.
///
/// # Safety
/// `fd` is NULL or points to a readable `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofCreateSubscribeConfig(
    timeInfoSwitch: i8,
    aicoreMetrics: AicoreMetricsArg,
    fd: *mut c_void,
) -> *mut aclprofSubscribeConfig {
    to_c(make("aclprofCreateSubscribeConfig", || {
        // SAFETY: forwarded from this function's contract.
        let n = unsafe { ptr::slice(fd.cast_const().cast::<i32>(), 1, "fd") }?;
        subscribe::create_config(timeInfoSwitch, aicoreMetrics, n[0])
    }))
    .cast()
}

#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroySubscribeConfig(
    profSubscribeConfig: *const aclprofSubscribeConfig,
) -> aclError {
    acl_call("aclprofDestroySubscribeConfig", || {
        subscribe::destroy_config(raw(profSubscribeConfig.cast_mut().cast()))
    })
}

/// The size of one op record in a subscription's pipe (80 bytes, the vendor's `ProfOpDesc`).
///
/// # Safety
/// `opDescSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpDescSize(opDescSize: *mut usize) -> aclError {
    acl_call("aclprofGetOpDescSize", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(opDescSize, "opDescSize") }?;
        out.write(subscribe::OP_DESC_SIZE);
        Ok(())
    })
}

/// The records of `opInfo`.
///
/// # Safety
/// `opInfo` is NULL or points to `opInfoLen` readable bytes.
unsafe fn records<'a>(opInfo: *const c_void, opInfoLen: usize) -> AclResult<&'a [u8]> {
    if opInfo.is_null() {
        return Err(ptr::null_argument("opInfo"));
    }
    // SAFETY: forwarded from this function's contract.
    Ok(unsafe { ptr::slice(opInfo.cast::<u8>(), opInfoLen, "opInfo") }?)
}

/// The number of records in `opInfo` (its length a multiple of the record size, each record's
/// signature right: else 100000).
///
/// # Safety
/// `opInfo` is NULL or points to `opInfoLen` readable bytes; `opNumber` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpNum(
    opInfo: *const c_void,
    opInfoLen: usize,
    opNumber: *mut u32,
) -> aclError {
    acl_call("aclprofGetOpNum", || {
        // SAFETY: forwarded from this function's contract.
        let (data, out) = unsafe { (records(opInfo, opInfoLen)?, Out::new(opNumber, "opNumber")?) };
        out.write(subscribe::count(data)?);
        Ok(())
    })
}

/// # Safety
/// As [`aclprofGetOpNum`]; `len` NULL or writable.
unsafe fn text_len(
    api: &str,
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    len: *mut usize,
    which: Text,
) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let (data, out) = unsafe { (records(opInfo, opInfoLen)?, Out::new(len, "length")?) };
        out.write(subscribe::text_len(data, index, which)?);
        Ok(())
    })
}

/// # Safety
/// As [`aclprofGetOpNum`]; `buf` NULL or writable for `cap` bytes.
unsafe fn text(
    api: &str,
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    buf: *mut c_char,
    cap: usize,
    which: Text,
) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { records(opInfo, opInfoLen) }?;
        if buf.is_null() {
            return Err(ptr::null_argument("the string buffer"));
        }
        let bytes = subscribe::text(data, index, which, cap)?;
        // SAFETY: `buf` is non-NULL and writable for `cap` bytes by the contract; `bytes` holds
        // exactly `cap` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), cap) };
        Ok(())
    })
}

/// The length of record `index`'s op type, with its NUL.
///
/// # Safety
/// As [`aclprofGetOpNum`]; `opTypeLen` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpTypeLen(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opTypeLen: *mut usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { text_len("aclprofGetOpTypeLen", opInfo, opInfoLen, index, opTypeLen, Text::Type) }
}

/// Record `index`'s op type (the task's kind), NUL-terminated; each is read once, as the
/// vendor's.
///
/// # Safety
/// As [`aclprofGetOpNum`]; `opType` NULL or writable for `opTypeLen` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpType(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opType: *mut c_char,
    opTypeLen: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { text("aclprofGetOpType", opInfo, opInfoLen, index, opType, opTypeLen, Text::Type) }
}

/// The length of record `index`'s op name, with its NUL.
///
/// # Safety
/// As [`aclprofGetOpNum`]; `opNameLen` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpNameLen(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opNameLen: *mut usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { text_len("aclprofGetOpNameLen", opInfo, opInfoLen, index, opNameLen, Text::Name) }
}

/// Record `index`'s op name (`model<id>/task<seq>`), NUL-terminated; read once.
///
/// # Safety
/// As [`aclprofGetOpNum`]; `opName` NULL or writable for `opNameLen` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpName(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    opName: *mut c_char,
    opNameLen: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { text("aclprofGetOpName", opInfo, opInfoLen, index, opName, opNameLen, Text::Name) }
}

/// # Safety
/// As [`aclprofGetOpNum`].
unsafe fn field(
    api: &str,
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    f: fn(&subscribe::OpDesc) -> u64,
) -> u64 {
    let mut v = 0;
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { records(opInfo, opInfoLen) }?;
        v = f(&subscribe::record(data, index)?);
        Ok(())
    });
    v
}

/// Record `index`'s start, in microseconds since the Unix epoch; 0 on failure.
///
/// # Safety
/// `opInfo` is NULL or points to `opInfoLen` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpStart(opInfo: *const c_void, opInfoLen: usize, index: u32) -> u64 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field("aclprofGetOpStart", opInfo, opInfoLen, index, |d| d.start) }
}

/// Record `index`'s end, in microseconds since the Unix epoch; 0 on failure.
///
/// # Safety
/// As [`aclprofGetOpStart`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpEnd(opInfo: *const c_void, opInfoLen: usize, index: u32) -> u64 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field("aclprofGetOpEnd", opInfo, opInfoLen, index, |d| d.end) }
}

/// Record `index`'s duration in microseconds; 0 on failure.
///
/// # Safety
/// As [`aclprofGetOpStart`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpDuration(opInfo: *const c_void, opInfoLen: usize, index: u32) -> u64 {
    // SAFETY: forwarded from this function's contract.
    unsafe { field("aclprofGetOpDuration", opInfo, opInfoLen, index, |d| d.duration) }
}

/// Record `index`'s model id; 0 on failure.
///
/// # Safety
/// As [`aclprofGetOpStart`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetModelId(opInfo: *const c_void, opInfoLen: usize, index: u32) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { field("aclprofGetModelId", opInfo, opInfoLen, index, |d| u64::from(d.model_id)) as usize }
}

/// Record `index`'s flag (`ACL_SUBSCRIBE_OP` for a task); `ACL_SUBSCRIBE_NONE` on failure.
///
/// # Safety
/// As [`aclprofGetOpStart`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpFlag(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
) -> SubscribeOpFlagArg {
    let mut flag = aclprofSubscribeOpFlag::ACL_SUBSCRIBE_NONE as u32;
    acl_call("aclprofGetOpFlag", || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { records(opInfo, opInfoLen) }?;
        flag = subscribe::record(data, index)?.flag;
        Ok(())
    });
    flag
}

thread_local! {
    static ATTRI: std::cell::RefCell<std::ffi::CString> = std::cell::RefCell::new(std::ffi::CString::default());
}

/// An attribute of record `index`: its thread id, for a record flagged
/// `ACL_SUBSCRIBE_OP_THREAD` (the vendor's rule; task records are `ACL_SUBSCRIBE_OP`, so NULL).
/// The text stays valid until this thread's next call.
///
/// # Safety
/// As [`aclprofGetOpStart`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofGetOpAttriValue(
    opInfo: *const c_void,
    opInfoLen: usize,
    index: u32,
    attri: SubscribeOpAttriArg,
) -> *const c_char {
    let mut out = std::ptr::null();
    acl_call("aclprofGetOpAttriValue", || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { records(opInfo, opInfoLen) }?;
        let r = subscribe::record(data, index)?;
        if attri != aclprofSubscribeOpAttri::ACL_SUBSCRIBE_ATTRI_THREADID as u32 {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("attri {attri}: only ACL_SUBSCRIBE_ATTRI_THREADID"),
            ));
        }
        if r.flag != subscribe::FLAG_OP_THREAD {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "record {index} has flag {}, not ACL_SUBSCRIBE_OP_THREAD: it has no thread attribute",
                    r.flag
                ),
            ));
        }
        let text = std::ffi::CString::new(r.thread_id.to_string()).unwrap_or_default();
        out = ATTRI.with(|a| {
            *a.borrow_mut() = text;
            a.borrow().as_ptr()
        });
        Ok(())
    });
    out
}

/// Takes a step's start (`ACL_STEP_START`) or end once each, when `stream` (NULL: the
/// default stream) reaches it; recorded into `host/step_trace.jsonl` while profiling is
/// started.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofGetStepTimestamp(
    stepInfo: *mut aclprofStepInfo,
    tag: StepTagArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclprofGetStepTimestamp", || {
        if stepInfo.is_null() {
            return Err(ptr::null_argument("stepInfo"));
        }
        let s = context::stream_for_work(raw(stream))?;
        tx::step_timestamp(raw(stepInfo.cast()), tag, &s)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn aclprofCreateStepInfo() -> *mut aclprofStepInfo {
    boundary("aclprofCreateStepInfo", std::ptr::null_mut(), || to_c(tx::create_step()).cast())
}

/// Destroys a step info (NULL or stale: nothing, with a message).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroyStepInfo(stepinfo: *mut aclprofStepInfo) {
    acl_call("aclprofDestroyStepInfo", || tx::destroy_step(raw(stepinfo.cast())));
}

/// A stamp: NULL unless a configuration with `ACL_PROF_MSPROFTX` is started.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofCreateStamp() -> *mut c_void {
    to_c(make("aclprofCreateStamp", tx::create_stamp))
}

#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroyStamp(stamp: *mut c_void) {
    acl_call("aclprofDestroyStamp", || tx::destroy_stamp(raw(stamp)));
}

/// Pushes the stamp's message on this thread's stack, with the time.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofPush(stamp: *mut c_void) -> aclError {
    acl_call("aclprofPush", || tx::push(raw(stamp)))
}

/// Pops this thread's latest push: one `push_pop` record from the push to now.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofPop() -> aclError {
    acl_call("aclprofPop", tx::pop)
}

/// Opens a range with the stamp's message; its id, for `aclprofRangeStop` from any thread.
///
/// # Safety
/// `rangeId` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofRangeStart(stamp: *mut c_void, rangeId: *mut u32) -> aclError {
    acl_call("aclprofRangeStart", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(rangeId, "rangeId") }?;
        out.write(tx::range_start(raw(stamp))?);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn aclprofRangeStop(rangeId: u32) -> aclError {
    acl_call("aclprofRangeStop", || tx::range_stop(rangeId))
}

/// Sets the stamp's message (`msgLen` bytes, less than 128).
///
/// # Safety
/// `msg` is NULL or points to `msgLen` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofSetStampTraceMessage(
    stamp: *mut c_void,
    msg: *const c_char,
    msgLen: u32,
) -> aclError {
    acl_call("aclprofSetStampTraceMessage", || {
        if msg.is_null() {
            return Err(ptr::null_argument("msg"));
        }
        if msgLen as usize >= tx::MAX_MESSAGE_LEN {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("msgLen {msgLen} must be less than 128"),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { ptr::slice(msg.cast::<u8>(), msgLen as usize, "msg") }?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        tx::set_message(raw(stamp), &bytes[..end])
    })
}

/// An instant with the stamp's message.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofMark(stamp: *mut c_void) -> aclError {
    acl_call("aclprofMark", || tx::mark(raw(stamp)))
}

/// An instant taken when `stream` reaches it, with `msg` (`msgLen` bytes, its whole length,
/// 1 to 127); `stream` must not be NULL, as the vendor's.
///
/// # Safety
/// `msg` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofMarkEx(msg: *const c_char, msgLen: usize, stream: aclrtStream) -> aclError {
    acl_call("aclprofMarkEx", || {
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { ptr::required_str(msg, "msg") }?;
        if stream.is_null() {
            return Err(ptr::null_argument("stream"));
        }
        if text.len() != msgLen {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("msgLen {msgLen} is not the message's length {}", text.len()),
            ));
        }
        let s = context::stream_for_work(raw(stream))?;
        tx::mark_ex(text, &s)
    })
}

/// A 64-bit id of `message` (FNV-1a, never 0, the same in every process); 0 for NULL.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofStr2Id(message: *const c_char) -> u64 {
    let mut id = 0;
    acl_call("aclprofStr2Id", || {
        if message.is_null() {
            return Err(ptr::null_argument("message"));
        }
        // SAFETY: non-NULL, NUL-terminated by the contract.
        let bytes = unsafe { std::ffi::CStr::from_ptr(message) }.to_bytes();
        id = tx::str2id(&String::from_utf8_lossy(bytes));
        Ok(())
    });
    id
}

/// Pushes a range carrying tensor information (version 1 or later; `size` at least the
/// version-1 structure's; `messageType` `ACL_PROF_MESSAGE_TYPE_TENSOR_INFO`).
///
/// # Safety
/// `attr` is NULL or a valid `aclprofEventAttributes` whose `tensorInfo` is NULL or valid, and
/// whose `tensors` hold `tensorNum` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofRangePushEx(attr: *mut aclprofEventAttributes) -> aclError {
    acl_call("aclprofRangePushEx", || {
        // SAFETY: forwarded from this function's contract.
        let a = unsafe { ptr::slice(attr.cast_const(), 1, "attr") }?;
        let a = &a[0];
        if a.version < EVENT_ATTR_VERSION
            || usize::from(a.size) < std::mem::size_of::<aclprofEventAttributes>()
        {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("attr version {} size {}: not a version-1 structure", a.version, a.size),
            ));
        }
        if a.messageType != aclprofMessageType::ACL_PROF_MESSAGE_TYPE_TENSOR_INFO as u32 {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("messageType {}: only ACL_PROF_MESSAGE_TYPE_TENSOR_INFO", a.messageType),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let info = unsafe { ptr::slice(a.tensorInfo.cast_const(), 1, "attr->message.tensorInfo") }?;
        let info = &info[0];
        if info.tensorNum > MAX_TENSORS {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("tensorNum {}: at most {MAX_TENSORS}", info.tensorNum),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let tensors = unsafe { ptr::slice(info.tensors.cast_const(), info.tensorNum as usize, "tensors") }?;
        let tensors: Vec<_> = tensors
            .iter()
            .map(|t| {
                let dims = (t.shapeDim as usize).min(SHAPE_LEN);
                json!({ "type": t.r#type, "format": t.format, "data_type": t.dataType, "shape": &t.shape[..dims] })
            })
            .collect();
        tx::range_push_ex(json!({
            "op_name_id": info.opNameId, "op_type_id": info.opTypeId, "kernel_type": info.kernelType,
            "block_nums": info.blockNums, "tensors": tensors,
        }))
    })
}

/// Pops this thread's latest `aclprofRangePushEx`.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofRangePop() -> aclError {
    acl_call("aclprofRangePop", tx::range_pop)
}
