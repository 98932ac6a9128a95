//! Streams complete (ids, flags, priorities, attributes, configuration handles, failure mode,
//! stop, device task abort), errors as the vendor reports them (last error per thread,
//! exception callbacks with the failed task's ids) and counting notifies, through the C entry
//! points.
//!
//! The process emulates an Ascend 950 (counting notifies exist on it only): every test calls
//! [`init`] before any AscendCL call. Each test uses a device of its own.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::cnt_notify::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::exception::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::stream_attr::*;
use ascendless::ffi::acl_rt::stream_config::*;

type Handle = *mut c_void;

const SIZE: usize = 4096;
const H2D: i32 = 1;
const D2H: i32 = 2;

fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: runs once, before any test thread has made an AscendCL call (every test
        // calls `init` first and waits here), so nothing reads the environment meanwhile.
        unsafe { std::env::set_var("ASCENDLESS_SOC", "Ascend950PR_9579") };
    });
}

/// Runs `body` on a thread of its own with device `device` set.
fn on_device(device: i32, body: impl FnOnce() + Send + 'static) {
    init();
    std::thread::spawn(move || {
        assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
        body();
        assert_eq!(aclrtResetDeviceForce(device), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

fn stream() -> Handle {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn stream_id(s: Handle) -> i32 {
    let mut id = -1;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtStreamGetId(s, &mut id) }, ACL_SUCCESS);
    id
}

fn priority(s: Handle) -> u32 {
    let mut p = 99;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtStreamGetPriority(s, &mut p) }, ACL_SUCCESS);
    p
}

fn available() -> u32 {
    let mut n = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetStreamAvailableNum(&mut n) }, ACL_SUCCESS);
    n
}

fn set_attr(s: Handle, attr: aclrtStreamAttr, word: u64) -> aclError {
    let mut v = aclrtStreamAttrValue { failureMode: word };
    // SAFETY: a valid value.
    unsafe { aclrtSetStreamAttribute(s, attr as i32, &mut v) }
}

fn get_attr(s: Handle, attr: aclrtStreamAttr) -> u64 {
    let mut v = aclrtStreamAttrValue { reserve: [0xAB; 4] };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtGetStreamAttribute(s, attr as i32, &mut v) }, ACL_SUCCESS);
    // SAFETY: plain integers; the failure mode fills 8 bytes, the others 4 and zero the rest.
    unsafe { v.failureMode }
}

fn device_buffer() -> Handle {
    let mut p = null_mut();
    // SAFETY: valid out-pointer; the memset covers the allocation.
    unsafe {
        assert_eq!(aclrtMalloc(&mut p, SIZE, 0), ACL_SUCCESS);
        assert_eq!(aclrtMemset(p, SIZE, 0, SIZE), ACL_SUCCESS);
    }
    p
}

fn queue_fill(dst: Handle, value: u8, stream: Handle) -> aclError {
    let src: &'static [u8] = Vec::leak(vec![value; SIZE]);
    // SAFETY: `src` lives forever; `dst` is a live device allocation of SIZE bytes.
    unsafe { aclrtMemcpyAsync(dst, SIZE, src.as_ptr().cast(), SIZE, H2D, stream) }
}

fn first_byte(p: Handle) -> u8 {
    let mut out = vec![0xEEu8; SIZE];
    // SAFETY: a live buffer of SIZE bytes.
    assert_eq!(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), SIZE, p, SIZE, D2H) }, ACL_SUCCESS);
    out[0]
}

fn notify() -> Handle {
    let mut n = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateNotify(&mut n, 0) }, ACL_SUCCESS);
    n
}

fn is_complete(s: Handle) -> bool {
    let mut status = aclrtStreamStatus::ACL_STREAM_STATUS_RESERVED;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtStreamQuery(s, &mut status) }, ACL_SUCCESS);
    matches!(status, aclrtStreamStatus::ACL_STREAM_STATUS_COMPLETE)
}

// ---- streams ----

#[test]
fn ids_flags_priorities_and_attributes_round_trip() {
    on_device(0, || {
        let (mut least, mut greatest) = (-1, -1);
        // SAFETY: valid out-pointers.
        assert_eq!(unsafe { aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest) }, ACL_SUCCESS);
        assert_eq!((least, greatest), (7, 0));

        // A configuration handle: flag and priority reach the stream.
        let cfg = aclrtCreateStreamConfigHandle();
        assert!(!cfg.is_null());
        let (flag, prio) = (ACL_STREAM_FAST_LAUNCH, 3u32);
        // SAFETY: a live configuration and 4-byte values; the handle is a plain struct.
        unsafe {
            assert_eq!(aclrtSetStreamConfigOpt(cfg, 2, (&flag as *const u32).cast(), 4), ACL_SUCCESS);
            assert_eq!(aclrtSetStreamConfigOpt(cfg, 3, (&prio as *const u32).cast(), 4), ACL_SUCCESS);
            assert_eq!((*cfg).flag, 1);
            assert_eq!((*cfg).priority, 3);
            let bad = 8u32;
            assert_eq!(
                aclrtSetStreamConfigOpt(cfg, 3, (&bad as *const u32).cast(), 4),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtSetStreamConfigOpt(cfg, 3, (&prio as *const u32).cast(), 3),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtSetStreamConfigOpt(cfg, 9, (&prio as *const u32).cast(), 4),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        let before = available();
        let mut s = null_mut();
        // SAFETY: valid out-pointer and live configuration.
        assert_eq!(unsafe { aclrtCreateStreamV2(&mut s, cfg) }, ACL_SUCCESS);
        assert_eq!(available(), before - 1, "a stream counts against the product's limit");
        // SAFETY: a live configuration, then a destroyed one.
        unsafe {
            assert_eq!(aclrtDestroyStreamConfigHandle(cfg), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStreamConfigHandle(cfg), ACL_ERROR_INVALID_PARAM, "destroyed already");
        }
        let mut flags = 99;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtStreamGetFlags(s, &mut flags) }, ACL_SUCCESS);
        assert_eq!(flags, ACL_STREAM_FAST_LAUNCH);
        assert_eq!(priority(s), 3);
        assert_eq!(priority(null_mut()), 0, "a default stream has priority 0");

        // Attributes: each one set is read back; out-of-range values are refused.
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_PRIORITY, 6), ACL_SUCCESS);
        assert_eq!(priority(s), 6);
        assert_eq!(get_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_PRIORITY), 6);
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_PRIORITY, 8), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, 1), ACL_SUCCESS);
        assert_eq!(get_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK), 1);
        assert_eq!(
            set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, 2),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_USER_CUSTOM_TAG, 0xABCD), ACL_SUCCESS);
        assert_eq!(get_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_USER_CUSTOM_TAG), 0xABCD);
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_CACHE_OP_INFO, 1), ACL_SUCCESS);
        assert_eq!(get_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_CACHE_OP_INFO), 1);
        // The failure mode is the context's: set on one stream, read on another.
        let other = stream();
        assert_eq!(get_attr(other, aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE), 0);
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE, 1), ACL_SUCCESS);
        assert_eq!(get_attr(other, aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE), 1);
        assert_eq!(set_attr(s, aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE, 2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            set_attr(null_mut(), aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE, 0),
            ACL_ERROR_RT_PARAM_INVALID,
            "not on a default stream through the attribute"
        );
        assert_eq!(aclrtSetStreamFailureMode(s, u64::from(ACL_CONTINUE_ON_FAILURE)), ACL_SUCCESS);
        assert_eq!(get_attr(other, aclrtStreamAttr::ACL_STREAM_ATTR_FAILURE_MODE), 0);
        let mut v = aclrtStreamAttrValue { reserve: [0; 4] };
        // SAFETY: a valid value.
        assert_eq!(unsafe { aclrtSetStreamAttribute(s, 9, &mut v) }, ACL_ERROR_RT_PARAM_INVALID);

        // Ids: distinct; the default stream has one, also through its own handle.
        assert_ne!(stream_id(s), stream_id(other));
        let mut def = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) }, ACL_SUCCESS);
        assert!(!def.is_null());
        assert_eq!(stream_id(def), stream_id(null_mut()));
        assert_eq!(
            aclrtDestroyStream(def),
            ACL_ERROR_INVALID_PARAM,
            "the default stream goes with its context"
        );
        assert_eq!(aclrtSynchronizeStream(def), ACL_SUCCESS);

        // Model control flow is not there: the documented code.
        assert_eq!(aclrtActiveStream(s, other), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(
            aclrtSwitchStream(null_mut(), 0, null_mut(), 0, s, null_mut(), other),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );

        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(other), ACL_SUCCESS);
        assert_eq!(available(), before, "destroyed streams are available again");
    });
}

#[test]
fn stop_on_failure_drops_later_work_and_refuses_new_until_an_abort() {
    on_device(1, || {
        let (a, b, n, buf) = (stream(), stream(), notify(), device_buffer());
        assert_eq!(aclrtSetStreamFailureMode(a, u64::from(ACL_STOP_ON_FAILURE)), ACL_SUCCESS);
        // `b` shares the context's mode: its failing wait stops it.
        assert_eq!(aclrtWaitAndResetNotify(n, b, 1), ACL_SUCCESS);
        assert_eq!(queue_fill(buf, 7, b), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(b, 10_000), ACL_ERROR_RT_TASK_TIMEOUT);
        assert_eq!(first_byte(buf), 0, "the copy after the failure was dropped");
        assert_eq!(queue_fill(buf, 8, b), ACL_ERROR_RT_TASK_TIMEOUT, "no new task after a stop on failure");
        assert_eq!(aclrtStreamAbort(b), ACL_SUCCESS);
        assert_eq!(aclrtSetStreamFailureMode(a, u64::from(ACL_CONTINUE_ON_FAILURE)), ACL_SUCCESS);
        assert_eq!(queue_fill(buf, 9, b), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(b, 10_000), ACL_SUCCESS);
        assert_eq!(first_byte(buf), 9);
        assert_eq!(aclrtSetStreamFailureMode(a, 3), ACL_ERROR_RT_PARAM_INVALID);
    });
}

#[test]
fn stop_holds_queued_work_and_a_device_task_abort_discards_it() {
    on_device(2, || {
        let (s, n, buf) = (stream(), notify(), device_buffer());
        assert_eq!(aclrtStreamStop(null_mut()), ACL_ERROR_INVALID_PARAM);
        let mut def = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) }, ACL_SUCCESS);
        assert_eq!(aclrtStreamStop(def), ACL_ERROR_INVALID_PARAM, "nor through its own handle");
        // A wait nobody records, then a copy behind it.
        assert_eq!(aclrtWaitAndResetNotify(n, s, 0), ACL_SUCCESS);
        assert_eq!(queue_fill(buf, 7, s), ACL_SUCCESS);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(aclrtStreamStop(s), ACL_SUCCESS);
        std::thread::sleep(Duration::from_millis(200));
        assert!(!is_complete(s), "the queued copy is held, not run and not discarded");
        assert_eq!(first_byte(buf), 0);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 200), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        let started = Instant::now();
        assert_eq!(aclrtDeviceTaskAbort(2, 5_000), ACL_SUCCESS);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(is_complete(s));
        assert_eq!(first_byte(buf), 0, "discarded by the abort");
        assert_eq!(queue_fill(buf, 4, s), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_SUCCESS);
        assert_eq!(first_byte(buf), 4, "the stream runs new work");
        assert_eq!(aclrtDeviceTaskAbort(999, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    });
}

// ---- errors ----

#[test]
fn last_error_is_per_thread_peek_keeps_it_get_clears_it() {
    on_device(3, || {
        let level = aclrtLastErrLevel::ACL_RT_THREAD_LEVEL as i32;
        let _ = aclrtGetLastError(level);
        assert_eq!(aclrtPeekAtLastError(level), ACL_SUCCESS);
        // SAFETY: NULL out-pointer, refused before any write.
        assert_eq!(unsafe { aclrtStreamGetFlags(null_mut(), null_mut()) }, ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtPeekAtLastError(level), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtPeekAtLastError(level), ACL_ERROR_INVALID_PARAM, "peek leaves it");
        // Another thread has its own.
        std::thread::spawn(move || {
            assert_eq!(aclrtPeekAtLastError(level), ACL_SUCCESS);
            assert_eq!(aclrtSetStreamFailureMode(null_mut(), 9), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtGetLastError(level), ACL_ERROR_RT_PARAM_INVALID);
        })
        .join()
        .unwrap();
        // A success does not clear it.
        assert!(stream_id(null_mut()) >= 0);
        assert_eq!(aclrtGetLastError(level), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtGetLastError(level), ACL_SUCCESS, "get cleared it");
        assert_eq!(aclrtPeekAtLastError(1), ACL_ERROR_RT_PARAM_INVALID, "only the thread level exists");

        // SAFETY: every field of aclrtErrorInfo is plain integers or a NULL-able pointer.
        let mut info: aclrtErrorInfo = unsafe { std::mem::zeroed() };
        info.errorType = 7;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetErrorVerbose(3, &mut info) }, ACL_SUCCESS);
        assert_eq!(info.errorType, aclrtErrorType::ACL_RT_NO_ERROR as i32);
        assert_eq!((info.tryRepair, info.hasDetail), (0, 0));
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtGetErrorVerbose(999, &mut info) }, ACL_ERROR_RT_INVALID_DEVICEID);
    });
}

/// What the callbacks saw for the stream under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    task: u32,
    stream: u32,
    thread: u32,
    device: u32,
    code: u32,
}

static WATCHED: AtomicU32 = AtomicU32::new(u32::MAX);
static REGISTERED_SAW: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
static LEGACY_SAW: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// # Safety
/// `info` is the pointer the runtime passes, valid during the call.
unsafe fn seen(info: *mut aclrtExceptionInfo) -> Option<Seen> {
    // SAFETY: forwarded contract.
    let s = unsafe {
        Seen {
            task: aclrtGetTaskIdFromExceptionInfo(info),
            stream: aclrtGetStreamIdFromExceptionInfo(info),
            thread: aclrtGetThreadIdFromExceptionInfo(info),
            device: aclrtGetDeviceIdFromExceptionInfo(info),
            code: aclrtGetErrorCodeFromExceptionInfo(info),
        }
    };
    (s.stream == WATCHED.load(Ordering::SeqCst)).then_some(s)
}

unsafe extern "C" fn registered(info: *mut aclrtExceptionInfo) {
    // SAFETY: the runtime's pointer, during the call.
    if let Some(s) = unsafe { seen(info) } {
        REGISTERED_SAW.lock().unwrap().push(s);
    }
}

unsafe extern "C" fn legacy(info: *mut aclrtExceptionInfo) {
    // SAFETY: the runtime's pointer, during the call.
    if let Some(s) = unsafe { seen(info) } {
        LEGACY_SAW.lock().unwrap().push(s);
    }
}

#[test]
fn exception_callbacks_hear_of_a_failed_task_with_its_ids() {
    on_device(4, || {
        assert_eq!(aclrtExceptionInfoCallbackRegister(None), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtExceptionInfoCallbackUnregister(None), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            aclrtExceptionInfoCallbackUnregister(Some(registered)),
            ACL_SUCCESS,
            "not registered: nothing"
        );
        assert_eq!(aclrtExceptionInfoCallbackRegister(Some(registered)), ACL_SUCCESS);
        assert_eq!(aclrtExceptionInfoCallbackRegister(Some(registered)), ACL_SUCCESS, "twice: once");
        assert_eq!(aclrtSetExceptionInfoCallback(Some(legacy)), ACL_SUCCESS);
        let (s, n) = (stream(), notify());
        WATCHED.store(stream_id(s) as u32, Ordering::SeqCst);
        // Tasks 0 and 1 pass; task 2 (a wait nobody records) times out.
        assert_eq!(aclrtRecordNotify(n, s), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(n, s, 5), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(n, s, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_ERROR_RT_TASK_TIMEOUT);
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u32;
        let want = Seen {
            task: 2,
            stream: stream_id(s) as u32,
            thread: me,
            device: 4,
            code: ACL_ERROR_RT_TASK_TIMEOUT as u32,
        };
        assert_eq!(*REGISTERED_SAW.lock().unwrap(), vec![want]);
        assert_eq!(*LEGACY_SAW.lock().unwrap(), vec![want]);
        // SAFETY: NULL is allowed and answered with the documented value.
        unsafe {
            assert_eq!(aclrtGetTaskIdFromExceptionInfo(std::ptr::null()), u32::MAX);
            assert_eq!(aclrtGetErrorCodeFromExceptionInfo(std::ptr::null()), u32::MAX);
        }
        // Unregistered and cleared: the next failure reaches neither.
        assert_eq!(aclrtExceptionInfoCallbackUnregister(Some(registered)), ACL_SUCCESS);
        assert_eq!(aclrtSetExceptionInfoCallback(None), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(n, s, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_ERROR_RT_TASK_TIMEOUT);
        assert_eq!(REGISTERED_SAW.lock().unwrap().len(), 1);
        assert_eq!(LEGACY_SAW.lock().unwrap().len(), 1);
    });
}

// ---- counting notifies ----

fn cnt_record(c: Handle, s: Handle, mode: aclrtCntNotifyRecordMode, value: u32) -> aclError {
    let mut info = aclrtCntNotifyRecordInfo { mode: mode as i32, value };
    // SAFETY: a valid info.
    unsafe { aclrtCntNotifyRecord(c, s, &mut info) }
}

fn cnt_wait(
    c: Handle,
    s: Handle,
    mode: aclrtCntNotifyWaitMode,
    value: u32,
    timeout: u32,
    clear: bool,
) -> aclError {
    let mut info =
        aclrtCntNotifyWaitInfo { mode: mode as i32, value, timeout, isClear: clear as u8, rsv: [0; 3] };
    // SAFETY: a valid info.
    unsafe { aclrtCntNotifyWaitWithTimeout(c, s, &mut info) }
}

#[test]
fn counting_notifies_count_compare_and_clear() {
    use aclrtCntNotifyRecordMode::*;
    use aclrtCntNotifyWaitMode::*;
    on_device(5, || {
        let (producer, consumer) = (stream(), stream());
        let mut c = null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtCntNotifyCreate(&mut c, 1), ACL_ERROR_RT_PARAM_INVALID, "flag is reserved");
            assert_eq!(aclrtCntNotifyCreate(&mut c, 0), ACL_SUCCESS);
            let (mut id, mut id2) = (u32::MAX, u32::MAX);
            assert_eq!(aclrtCntNotifyGetId(c, &mut id), ACL_SUCCESS);
            let mut c2 = null_mut();
            assert_eq!(aclrtCntNotifyCreate(&mut c2, 0), ACL_SUCCESS);
            assert_eq!(aclrtCntNotifyGetId(c2, &mut id2), ACL_SUCCESS);
            assert_ne!(id, id2);
            assert_eq!(aclrtCntNotifyDestroy(c2), ACL_SUCCESS);
            assert_eq!(aclrtCntNotifyGetId(c2, &mut id2), ACL_ERROR_RT_INVALID_HANDLE);
        }
        // The consumer waits for a count of at least 3, clearing it.
        assert_eq!(
            cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 3, 10, true),
            ACL_SUCCESS
        );
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1), ACL_SUCCESS);
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(producer, 10_000), ACL_SUCCESS);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!is_complete(consumer), "2 < 3: still waiting");
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        // Cleared: equal to 0 passes at once.
        assert_eq!(cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, 1, false), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        // Bits: OR-ed in, waited on as a mask; AND and set change the count as named.
        assert_eq!(
            cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0b101, 10, false),
            ACL_SUCCESS
        );
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0b100), ACL_SUCCESS);
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0b011), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0b110), ACL_SUCCESS);
        assert_eq!(cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0b110, 10, false), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        assert_eq!(cnt_record(c, producer, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 10), ACL_SUCCESS);
        assert_eq!(cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 9, 10, false), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        // A reset queued on the producer; less-than then passes.
        assert_eq!(aclrtCntNotifyReset(c, producer), ACL_SUCCESS);
        assert_eq!(cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 1, 10, false), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_SUCCESS);
        // A wait that never passes times out into the stream's error.
        assert_eq!(cnt_wait(c, consumer, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 99, 1, false), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(consumer, 10_000), ACL_ERROR_RT_TASK_TIMEOUT);
        // Bad modes.
        let mut bad = aclrtCntNotifyRecordInfo { mode: 3, value: 1 };
        // SAFETY: a valid info.
        assert_eq!(unsafe { aclrtCntNotifyRecord(c, producer, &mut bad) }, ACL_ERROR_RT_PARAM_INVALID);
        let mut bad = aclrtCntNotifyWaitInfo { mode: 5, value: 1, timeout: 1, isClear: 0, rsv: [0; 3] };
        // SAFETY: a valid info.
        let code = unsafe { aclrtCntNotifyWaitWithTimeout(c, consumer, &mut bad) };
        assert_eq!(code, ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: NULL info is refused.
        assert_eq!(unsafe { aclrtCntNotifyRecord(c, producer, null_mut()) }, ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtCntNotifyDestroy(c), ACL_SUCCESS);
    });
}
