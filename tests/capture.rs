//! Stream capture and replay through the C entry points (`aclmdlRI*`): a captured graph of
//! copies, a fill, a notify wait recorded by another thread, an event record and a host
//! function replayed 1000 times; capture errors; the capture modes; cross-stream capture;
//! task groups, task queries and updates; built models; destroy callbacks; conditional
//! tasks; abort.
//!
//! Capture modes are per context: each test makes a context of its own (`aclrtCreateContext`),
//! so tests running in parallel threads never see each other's captures.

use std::ffi::{c_char, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::callback::*;
use ascendless::ffi::acl_rt::capture::*;
use ascendless::ffi::acl_rt::context::*;
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::memory_batch::aclrtMemcpy2dAsync;
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::value::*;

type Handle = *mut c_void;

const SIZE: usize = 4096;
const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const GLOBAL: i32 = 0;
const THREAD_LOCAL: i32 = 1;
const RELAXED: i32 = 2;

/// A context of its own on `device`, current on this thread.
fn context(device: i32) -> Handle {
    let mut c = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateContext(&mut c, device) }, ACL_SUCCESS);
    c
}

fn stream() -> Handle {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn device_buffer(size: usize) -> Handle {
    let mut p = null_mut();
    // SAFETY: valid out-pointer; the memset covers the allocation.
    unsafe {
        assert_eq!(aclrtMalloc(&mut p, size, 0), ACL_SUCCESS);
        assert_eq!(aclrtMemset(p, size, 0, size), ACL_SUCCESS);
    }
    p
}

fn host_buffer(size: usize) -> Handle {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, ACL_SUCCESS);
    p
}

/// The bytes of device memory `dev` (synchronous copy: the caller is not capturing in a
/// strict mode).
fn read(dev: Handle, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` holds `len` bytes; `dev` is device memory of at least `len`.
    let r = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, dev, len, D2H) };
    assert_eq!(r, ACL_SUCCESS);
    out
}

fn write_u64(dev: Handle, v: u64) {
    // SAFETY: 8 bytes each side.
    let r = unsafe { aclrtMemcpy(dev, 8, (&v as *const u64).cast(), 8, H2D) };
    assert_eq!(r, ACL_SUCCESS);
}

fn begin(s: Handle, mode: i32) {
    assert_eq!(aclmdlRICaptureBegin(s, mode), ACL_SUCCESS);
}

fn end(s: Handle) -> Handle {
    let mut m = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICaptureEnd(s, &mut m) }, ACL_SUCCESS);
    assert!(!m.is_null());
    m
}

fn end_err(s: Handle) -> aclError {
    let mut m = null_mut();
    // SAFETY: valid out-pointer.
    unsafe { aclmdlRICaptureEnd(s, &mut m) }
}

fn status(s: Handle) -> (i32, Handle) {
    let mut st = aclmdlRICaptureStatus::ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    let mut m = null_mut();
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { aclmdlRICaptureGetInfo(s, &mut st, &mut m) }, ACL_SUCCESS);
    (st as i32, m)
}

fn exchange(mode: i32) -> i32 {
    let mut m = mode;
    // SAFETY: a valid aclmdlRICaptureMode cell (read as an integer).
    let r = unsafe { aclmdlRICaptureThreadExchangeMode((&mut m as *mut i32).cast()) };
    assert_eq!(r, ACL_SUCCESS);
    m
}

fn memset_async(dev: Handle, value: i32, len: usize, s: Handle) -> aclError {
    // SAFETY: device memory of `len` bytes.
    unsafe { aclrtMemsetAsync(dev, len, value, len, s) }
}

/// A host function that adds one to the counter its argument points to.
unsafe extern "C-unwind" fn count(arg: *mut c_void) {
    // SAFETY: the tests pass a leaked `AtomicU64`.
    unsafe { &*arg.cast::<AtomicU64>() }.fetch_add(1, Ordering::SeqCst);
}

fn counter() -> &'static AtomicU64 {
    Box::leak(Box::new(AtomicU64::new(0)))
}

fn launch_count(s: Handle, c: &'static AtomicU64) -> aclError {
    aclrtLaunchHostFunc(s, Some(count), (c as *const AtomicU64).cast_mut().cast())
}

fn notify() -> Handle {
    let mut n = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateNotify(&mut n, 0) }, ACL_SUCCESS);
    n
}

fn event() -> Handle {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEvent(&mut e) }, ACL_SUCCESS);
    e
}

fn event_done(e: Handle) -> bool {
    let mut st = aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEventStatus(e, &mut st) }, ACL_SUCCESS);
    matches!(st, aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_COMPLETE)
}

#[test]
fn a_captured_graph_replays_a_thousand_times_byte_for_byte() {
    let ctx = context(0);
    let s = stream();
    let host = host_buffer(SIZE);
    let a = device_buffer(SIZE);
    let b = device_buffer(SIZE);
    let n = notify();
    let e = event();
    let calls = counter();

    // Another thread records the notify once for each replay, when told to.
    let (go, told) = mpsc::channel::<bool>();
    let (ctx_v, n_v) = (ctx as usize, n as usize);
    let recorder = std::thread::spawn(move || {
        assert_eq!(aclrtSetCurrentContext(ctx_v as Handle), ACL_SUCCESS);
        let other = stream();
        while told.recv().unwrap_or(false) {
            assert_eq!(aclrtRecordNotify(n_v as Handle, other), ACL_SUCCESS);
        }
        assert_eq!(aclrtSynchronizeStream(other), ACL_SUCCESS);
    });

    begin(s, GLOBAL);
    // SAFETY: pinned host and device buffers of SIZE bytes.
    unsafe {
        assert_eq!(aclrtMemcpyAsync(a, SIZE, host, SIZE, H2D, s), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(n, s, 10), ACL_SUCCESS);
        assert_eq!(aclrtMemcpyAsync(b, SIZE, a, SIZE, D2D, s), ACL_SUCCESS);
    }
    assert_eq!(memset_async(a, 0x5A, SIZE, s), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    assert_eq!(launch_count(s, calls), ACL_SUCCESS);
    assert_eq!(status(s).0, 1, "ACTIVE");
    let (_, during) = status(s);
    let model = end(s);
    assert_eq!(model, during, "GetInfo named the model the end hands out");
    assert_eq!(status(s), (0, null_mut()), "NONE after the end");

    // Nothing ran while capturing.
    assert!(read(b, SIZE).iter().all(|&x| x == 0));
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let started = Instant::now();
    for i in 0..1000u32 {
        let pattern = (i % 251) as u8;
        // SAFETY: `host` is SIZE pinned bytes, not in use (the last replay was synchronised).
        unsafe { std::ptr::write_bytes(host.cast::<u8>(), pattern, SIZE) };
        assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
        go.send(true).unwrap();
        assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS, "replay {i}");
        assert!(read(b, SIZE).iter().all(|&x| x == pattern), "replay {i}: the copies");
        assert!(read(a, SIZE).iter().all(|&x| x == 0x5A), "replay {i}: the fill");
        assert_eq!(calls.load(Ordering::SeqCst), u64::from(i) + 1, "replay {i}: the host function");
        assert!(event_done(e), "replay {i}: the event record");
    }
    go.send(false).unwrap();
    recorder.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60));

    // The model runs on any stream, and synchronously.
    let other = stream();
    assert_eq!(aclrtRecordNotify(n, s), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(model, other), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(other), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 1001);
    assert_eq!(aclrtRecordNotify(n, s), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecute(model, 10_000), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 1002);
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
    assert_ne!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS, "the handle is stale");
}

#[test]
fn work_a_graph_cannot_hold_is_refused_and_invalidates_the_capture() {
    let _ctx = context(1);
    let s = stream();
    let dev = device_buffer(SIZE);
    let e = event();
    assert_eq!(end_err(s), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    assert_eq!(aclmdlRICaptureBegin(s, 9), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(
        aclmdlRICaptureBegin(null_mut(), GLOBAL),
        ACL_ERROR_RT_PARAM_INVALID,
        "not the default stream"
    );

    begin(s, GLOBAL);
    assert_eq!(aclmdlRICaptureBegin(s, GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED);
    assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
    let mut st = aclrtStreamStatus::ACL_STREAM_STATUS_COMPLETE;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtStreamQuery(s, &mut st) }, ACL_ERROR_RT_STREAM_CAPTURED);
    assert_eq!(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeEvent(e), ACL_ERROR_RT_EVENT_CAPTURED);
    let (_, model) = status(s);
    assert_eq!(aclmdlRIExecuteAsync(model, stream()), ACL_ERROR_RT_MODEL_CAPTURED);
    assert_eq!(aclmdlRIDestroy(model), ACL_ERROR_RT_MODEL_CAPTURED);
    // Ending from another thread than the one that began a GLOBAL capture.
    let sv = s as usize;
    let wrong = std::thread::spawn(move || end_err(sv as Handle)).join().unwrap();
    assert_eq!(wrong, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
    assert_eq!(status(s).0, 0, "the capture is over");
    assert_ne!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS, "the failed capture's model is gone");
    assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS, "no longer captured");

    // An IPC event cannot be recorded in a capture (207000, as the vendor; the capture goes on).
    let mut ipc = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEventExWithFlag(&mut ipc, ACL_EVENT_IPC) }, ACL_SUCCESS);
    begin(s, GLOBAL);
    assert_eq!(aclrtRecordEvent(ipc, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(aclrtStreamWaitEvent(s, ipc), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(status(s).0, 1, "still ACTIVE");
    // A 2D copy is recorded.
    // SAFETY: device memory of SIZE bytes, 2 rows of 16.
    let r = unsafe {
        aclrtMemcpy2dAsync(dev, 32, dev.cast_const().cast::<u8>().add(64).cast(), 32, 16, 2, D2D, s)
    };
    assert_eq!(r, ACL_SUCCESS);
    // A synchronous copy on the capturing thread in GLOBAL mode: refused (107030), and the
    // capture is invalidated: later work is refused (507903), and so is its end.
    let mut out = [0u8; 8];
    // SAFETY: 8 bytes each side.
    let r = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), 8, dev, 8, D2H) };
    assert_eq!(r, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    assert_eq!(status(s).0, 2, "INVALIDATED");
    assert_eq!(memset_async(dev, 1, 8, s), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    let mut grp = null_mut();
    assert_eq!(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut grp) }, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    assert_eq!(end_err(s), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    assert_eq!(status(s).0, 0);
    // The stream runs its work again.
    assert_eq!(memset_async(dev, 3, SIZE, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert!(read(dev, SIZE).iter().all(|&x| x == 3));
}

/// Whether a synchronous fill from a new thread of `ctx` in exchange mode `mode` is allowed.
fn sync_fill_from_thread(ctx: Handle, dev: Handle, mode: i32) -> aclError {
    let (c, d) = (ctx as usize, dev as usize);
    std::thread::spawn(move || {
        assert_eq!(aclrtSetCurrentContext(c as Handle), ACL_SUCCESS);
        exchange(mode);
        // SAFETY: 8 bytes of device memory.
        unsafe { aclrtMemset(d as Handle, 8, 0, 8) }
    })
    .join()
    .unwrap()
}

#[test]
fn capture_modes_follow_the_vendors_rules() {
    let ctx = context(2);
    let s = stream();
    let dev = device_buffer(SIZE);
    // A GLOBAL capture forbids other GLOBAL threads of the context...
    begin(s, GLOBAL);
    assert_eq!(sync_fill_from_thread(ctx, dev, GLOBAL), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    assert_eq!(end_err(s), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    // ...but not THREAD_LOCAL or RELAXED ones.
    begin(s, GLOBAL);
    assert_eq!(sync_fill_from_thread(ctx, dev, THREAD_LOCAL), ACL_SUCCESS);
    assert_eq!(sync_fill_from_thread(ctx, dev, RELAXED), ACL_SUCCESS);
    // The capturing thread itself may once it is RELAXED (the vendor's sample).
    assert_eq!(exchange(RELAXED), GLOBAL);
    assert!(read(dev, 8).iter().all(|&x| x == 0));
    assert_eq!(exchange(GLOBAL), RELAXED);
    end(s);
    // A THREAD_LOCAL capture forbids only its own thread.
    begin(s, THREAD_LOCAL);
    assert_eq!(sync_fill_from_thread(ctx, dev, GLOBAL), ACL_SUCCESS);
    // SAFETY: 8 bytes of device memory.
    assert_eq!(unsafe { aclrtMemset(dev, 8, 0, 8) }, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    assert_eq!(end_err(s), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    // A RELAXED capture forbids nothing, and may be ended by another thread.
    begin(s, RELAXED);
    // SAFETY: 8 bytes of device memory.
    assert_eq!(unsafe { aclrtMemset(dev, 8, 0, 8) }, ACL_SUCCESS);
    let sv = s as usize;
    let ended = std::thread::spawn(move || {
        let mut m = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclmdlRICaptureEnd(sv as Handle, &mut m) };
        (r, m as usize)
    })
    .join()
    .unwrap();
    assert_eq!(ended.0, ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroy(ended.1 as Handle), ACL_SUCCESS);
    let mut bad = 7;
    // SAFETY: a valid cell.
    let r = unsafe { aclmdlRICaptureThreadExchangeMode((&mut bad as *mut i32).cast()) };
    assert_eq!(r, ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn a_stream_waiting_on_a_captured_event_joins_the_capture() {
    let _ctx = context(3);
    let (main, side) = (stream(), stream());
    let dev = device_buffer(SIZE);
    let (fork, join) = (event(), event());
    begin(main, GLOBAL);
    assert_eq!(memset_async(dev, 1, 16, main), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(fork, main), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEvent(side, fork), ACL_SUCCESS);
    assert_eq!(status(side).0, 1, "the side stream joined");
    // SAFETY: device memory of SIZE bytes.
    assert_eq!(unsafe { aclrtMemsetAsync(dev.cast::<u8>().add(16).cast(), 16, 2, 16, side) }, ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(join, side), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEvent(main, join), ACL_SUCCESS);
    assert_eq!(end_err(side), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED);
    let model = end(main);
    assert_eq!(status(side).0, 0, "the side stream left with the end");
    assert_eq!(aclmdlRIExecuteAsync(model, main), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(main), ACL_SUCCESS);
    let got = read(dev, 32);
    assert!(got[..16].iter().all(|&x| x == 1) && got[16..].iter().all(|&x| x == 2));
    let mut n = 0u32;
    // SAFETY: NULL array asks for the count.
    assert_eq!(unsafe { aclmdlRIGetStreams(model, null_mut(), &mut n) }, ACL_SUCCESS);
    assert_eq!(n, 2);

    // A stream that joins and does not join back: 107025.
    begin(main, GLOBAL);
    assert_eq!(aclrtRecordEvent(fork, main), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEvent(side, fork), ACL_SUCCESS);
    assert_eq!(memset_async(dev, 9, 16, side), ACL_SUCCESS);
    assert_eq!(end_err(main), ACL_ERROR_RT_STREAM_UNJOINED);
    assert_eq!(status(side).0, 0);
    assert_eq!(memset_async(dev, 4, 16, side), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(side), ACL_SUCCESS);
    assert!(read(dev, 16).iter().all(|&x| x == 4));
}

unsafe extern "C-unwind" fn on_destroy(arg: *mut c_void) {
    // SAFETY: the tests pass a leaked `AtomicU64`.
    unsafe { &*arg.cast::<AtomicU64>() }.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C-unwind" fn other_destroy(arg: *mut c_void) {
    // SAFETY: the tests pass a leaked `AtomicU64`.
    unsafe { &*arg.cast::<AtomicU64>() }.fetch_add(100, Ordering::SeqCst);
}

/// A host function that holds its stream until the gate (a leaked `AtomicU64`) is non-zero.
unsafe extern "C-unwind" fn gate(arg: *mut c_void) {
    // SAFETY: the tests pass a leaked `AtomicU64`.
    let g = unsafe { &*arg.cast::<AtomicU64>() };
    let start = Instant::now();
    while g.load(Ordering::SeqCst) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn destroy_callbacks_run_once_after_the_last_queued_run() {
    let _ctx = context(4);
    let s = stream();
    let opened = counter();
    let destroyed = counter();
    begin(s, GLOBAL);
    assert_eq!(
        aclrtLaunchHostFunc(s, Some(gate), (opened as *const AtomicU64).cast_mut().cast()),
        ACL_SUCCESS
    );
    let model = end(s);
    let arg = (destroyed as *const AtomicU64).cast_mut().cast();
    assert_eq!(aclmdlRIDestroyRegisterCallback(model, Some(on_destroy), arg), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroyRegisterCallback(model, Some(other_destroy), arg), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroyUnregisterCallback(model, Some(other_destroy)), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroyUnregisterCallback(model, Some(other_destroy)), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
    assert_ne!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS, "the handle is stale");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(destroyed.load(Ordering::SeqCst), 0, "the queued run still holds the model");
    opened.store(1, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    let start = Instant::now();
    while destroyed.load(Ordering::SeqCst) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(destroyed.load(Ordering::SeqCst), 1);
}

fn cond_ptr(c: Handle) -> Handle {
    let mut p: *mut u64 = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICondHandleGetCondPtr(c, &mut p) }, ACL_SUCCESS);
    p.cast()
}

/// Adds a conditional task on `s` (capturing) and captures each branch on `side`: branch `i`
/// fills `dev` with `i + 1`.
fn cond_task(s: Handle, side: Handle, cond: Handle, kind: i32, size: u32, dev: Handle) -> Vec<Handle> {
    let mut branches = vec![null_mut(); size as usize];
    let params =
        aclmdlRICondTaskParams { handle: cond, r#type: kind, size, modelRIArray: branches.as_mut_ptr() };
    // SAFETY: `branches` has room for `size` handles.
    assert_eq!(unsafe { aclmdlRIAddCondTask(params, s, 0) }, ACL_SUCCESS);
    for (i, &b) in branches.iter().enumerate() {
        assert_eq!(aclmdlRICaptureToModelRIBegin(side, b, GLOBAL), ACL_SUCCESS);
        assert_eq!(memset_async(dev, i as i32 + 1, 64, side), ACL_SUCCESS);
        assert_eq!(end(side), b);
    }
    branches
}

#[test]
fn conditional_tasks_read_their_word_at_replay() {
    let _ctx = context(5);
    let (s, side) = (stream(), stream());
    let dev = device_buffer(64);
    let dev2 = device_buffer(64);
    // An IF and a SWITCH in one model, each over its own condition.
    begin(s, GLOBAL);
    let (_, model) = status(s);
    let (mut c_if, mut c_sw) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclmdlRICondHandleCreate(model, 1, 0, &mut c_if), ACL_SUCCESS);
        assert_eq!(aclmdlRICondHandleCreate(model, 0, 0, &mut c_sw), ACL_SUCCESS);
    }
    cond_task(s, side, c_if, 0, 2, dev);
    cond_task(s, side, c_sw, 2, 3, dev2);
    assert_eq!(end(s), model);
    let run = || {
        assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
        (read(dev, 1)[0], read(dev2, 1)[0])
    };
    assert_eq!(run(), (1, 1), "IF true (1) runs branch 0; SWITCH 0 runs branch 0");
    write_u64(cond_ptr(c_if), 0);
    write_u64(cond_ptr(c_sw), 2);
    assert_eq!(run(), (2, 3), "IF false runs branch 1; SWITCH 2 runs branch 2");
    write_u64(cond_ptr(c_if), 5);
    write_u64(cond_ptr(c_sw), 7);
    write_u64(dev2, 0);
    assert_eq!(run(), (1, 0), "a SWITCH out of range runs no branch");

    // A WHILE whose body counts and clears the condition (a value write): the model sets the
    // condition to 1 at each run (ASSIGN_DEFAULT), so the body runs once per run.
    let calls = counter();
    begin(s, GLOBAL);
    let (_, wm) = status(s);
    let mut c_wh = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICondHandleCreate(wm, 1, 1, &mut c_wh) }, ACL_SUCCESS);
    let mut body = [null_mut()];
    let params = aclmdlRICondTaskParams { handle: c_wh, r#type: 1, size: 1, modelRIArray: body.as_mut_ptr() };
    // SAFETY: room for one handle.
    assert_eq!(unsafe { aclmdlRIAddCondTask(params, s, 0) }, ACL_SUCCESS);
    assert_eq!(aclmdlRICaptureToModelRIBegin(side, body[0], GLOBAL), ACL_SUCCESS);
    assert_eq!(launch_count(side, calls), ACL_SUCCESS);
    assert_eq!(aclrtValueWrite(cond_ptr(c_wh), 0, 0, side), ACL_SUCCESS);
    end(side);
    assert_eq!(end(s), wm);
    for i in 1..=3 {
        assert_eq!(aclmdlRIExecuteAsync(wm, s), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
        assert_eq!(calls.load(Ordering::SeqCst), i);
    }
}

#[test]
fn ending_a_capture_with_a_branch_still_open_is_refused() {
    let _ctx = context(5);
    let (s, side) = (stream(), stream());
    begin(s, GLOBAL);
    let (_, m) = status(s);
    let mut c = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICondHandleCreate(m, 0, 0, &mut c) }, ACL_SUCCESS);
    let mut b = [null_mut()];
    let params = aclmdlRICondTaskParams { handle: c, r#type: 0, size: 1, modelRIArray: b.as_mut_ptr() };
    // SAFETY: room for one handle.
    assert_eq!(unsafe { aclmdlRIAddCondTask(params, s, 0) }, ACL_SUCCESS);
    let bad = aclmdlRICondTaskParams { handle: c, r#type: 1, size: 2, modelRIArray: b.as_mut_ptr() };
    // SAFETY: room for one handle (refused before any write).
    assert_eq!(unsafe { aclmdlRIAddCondTask(bad, s, 0) }, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclmdlRICaptureToModelRIBegin(side, b[0], GLOBAL), ACL_SUCCESS);
    assert_eq!(end_err(s), ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING);
    assert_eq!(end(side), b[0]);
}

#[test]
fn abort_stops_a_run_and_later_runs_go_on() {
    let _ctx = context(6);
    let s = stream();
    let word = device_buffer(8);
    let calls = counter();
    begin(s, GLOBAL);
    // Waits until the word is at least 1, then counts.
    assert_eq!(aclrtValueWait(word, 1, 0, s), ACL_SUCCESS);
    assert_eq!(launch_count(s, calls), ACL_SUCCESS);
    let model = end(s);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    assert_eq!(aclmdlRIAbort(model), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert!(start.elapsed() < Duration::from_secs(5), "the waiting task was cancelled");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the rest of the run was not run");
    write_u64(word, 1);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // aclmdlRIExecute gives up after its time-out.
    write_u64(word, 0);
    assert_eq!(aclmdlRIExecute(model, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_eq!(aclmdlRIAbort(model), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecute(model, 0), ACL_ERROR_RT_PARAM_INVALID);
}

fn tasks_of(model: Handle) -> Vec<Handle> {
    let mut n = 8u32;
    let mut streams = vec![null_mut(); 8];
    // SAFETY: room for 8.
    assert_eq!(unsafe { aclmdlRIGetStreams(model, streams.as_mut_ptr(), &mut n) }, ACL_SUCCESS);
    assert_eq!(n, 1);
    let mut count = 0u32;
    // SAFETY: NULL asks for the count.
    assert_eq!(unsafe { aclmdlRIGetTasksByStream(streams[0], null_mut(), &mut count) }, ACL_SUCCESS);
    let mut tasks = vec![null_mut(); count as usize];
    let mut small = count - 1;
    // SAFETY: room for `small`.
    let r = unsafe { aclmdlRIGetTasksByStream(streams[0], tasks.as_mut_ptr(), &mut small) };
    assert_eq!(r, ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY);
    // SAFETY: room for `count`.
    assert_eq!(unsafe { aclmdlRIGetTasksByStream(streams[0], tasks.as_mut_ptr(), &mut count) }, ACL_SUCCESS);
    tasks
}

#[test]
fn tasks_are_queried_updated_disabled_and_printed() {
    let _ctx = context(7);
    let (s, upd) = (stream(), stream());
    let word = device_buffer(8);
    let other = device_buffer(8);
    let buf = device_buffer(64);
    let e = event();
    begin(s, GLOBAL);
    assert_eq!(aclrtValueWrite(word, 7, 0, s), ACL_SUCCESS);
    assert_eq!(aclmdlRICaptureTaskGrpBegin(s), ACL_SUCCESS);
    assert_eq!(aclmdlRICaptureTaskGrpBegin(s), ACL_ERROR_STREAM_TASK_GROUP_STATUS);
    assert_eq!(memset_async(buf, 1, 64, s), ACL_SUCCESS);
    let mut grp = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut grp) }, ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    let model = end(s);
    let name = c"replayed";
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { aclmdlRISetName(model, name.as_ptr()) }, ACL_SUCCESS);
    let mut got = [0 as c_char; 16];
    // SAFETY: room for 16 bytes.
    assert_eq!(unsafe { aclmdlRIGetName(model, 16, got.as_mut_ptr()) }, ACL_SUCCESS);
    // SAFETY: NUL-terminated by the call.
    assert_eq!(unsafe { std::ffi::CStr::from_ptr(got.as_ptr()) }, name);
    // SAFETY: room for 4 bytes only.
    assert_eq!(unsafe { aclmdlRIGetName(model, 4, got.as_mut_ptr()) }, ACL_ERROR_RT_PARAM_INVALID);
    let mut id = u32::MAX;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRIGetId(model, &mut id) }, ACL_SUCCESS);
    assert_ne!(id, u32::MAX);

    let tasks = tasks_of(model);
    assert_eq!(tasks.len(), 3);
    let types: Vec<i32> = tasks
        .iter()
        .map(|&t| {
            let mut ty = -1;
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclmdlRITaskGetType(t, &mut ty) }, ACL_SUCCESS);
            ty
        })
        .collect();
    assert_eq!(types, [5, 0, 2], "value write, default (a fill), event record");
    let mut seq = 9;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRITaskGetSeqId(tasks[2], &mut seq) }, ACL_SUCCESS);
    assert_eq!(seq, 2);
    // SAFETY: zeroed params are a valid aclmdlRITaskParams.
    let mut p: aclmdlRITaskParams = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer; the union member read is the one the type selects.
    unsafe {
        assert_eq!(aclmdlRITaskGetParams(tasks[0], &mut p), ACL_SUCCESS);
        assert_eq!((p.r#type, p.u.valueWrite.devAddr, p.u.valueWrite.value), (5, word, 7));
        assert_eq!(aclmdlRITaskGetParams(tasks[2], &mut p), ACL_SUCCESS);
        assert_eq!(p.u.event.event, e);
        // Point the value write elsewhere, with another value; applied by the update.
        let mut q: aclmdlRITaskParams = std::mem::zeroed();
        q.r#type = 5;
        q.u.valueWrite = aclmdlRIValueWriteTaskParams { devAddr: other, value: 11 };
        assert_eq!(aclmdlRITaskSetParams(tasks[0], &mut q), ACL_SUCCESS);
        q.r#type = 3;
        assert_eq!(aclmdlRITaskSetParams(tasks[0], &mut q), ACL_ERROR_RT_PARAM_INVALID);
    }
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(u64::from_le_bytes(read(word, 8).try_into().unwrap()), 7, "not applied before the update");
    assert_eq!(aclmdlRIUpdate(model), ACL_SUCCESS);
    assert_eq!(aclmdlRITaskDisable(tasks[1]), ACL_ERROR_RT_PARAM_INVALID, "a fill cannot be disabled");
    assert_eq!(aclmdlRITaskDisable(tasks[2]), ACL_SUCCESS);
    write_u64(word, 0);
    // Replace the group (the fill of 1) with a fill of 7, through another stream.
    assert_eq!(aclmdlRICaptureTaskUpdateBegin(upd, grp), ACL_SUCCESS);
    assert_eq!(memset_async(buf, 7, 64, upd), ACL_SUCCESS);
    assert_eq!(aclmdlRICaptureTaskUpdateEnd(upd), ACL_SUCCESS);
    assert_eq!(aclmdlRIUpdate(model), ACL_SUCCESS);
    let before = event_done(e);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert!(before && event_done(e));
    assert_eq!(u64::from_le_bytes(read(other, 8).try_into().unwrap()), 11);
    assert_eq!(u64::from_le_bytes(read(word, 8).try_into().unwrap()), 0);
    assert!(read(buf, 64).iter().all(|&x| x == 7));
    // An update with another number of tasks changes nothing.
    assert_eq!(aclmdlRICaptureTaskUpdateBegin(upd, grp), ACL_SUCCESS);
    assert_eq!(aclmdlRICaptureTaskUpdateEnd(upd), ACL_ERROR_RT_MODEL_UPDATE_FAILED);
    assert_eq!(aclmdlRICaptureTaskUpdateEnd(upd), ACL_ERROR_STREAM_TASK_GROUP_STATUS);

    // The JSON print.
    let path = std::env::temp_dir().join(format!("ascendless-capture-{}.json", std::process::id()));
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { aclmdlRIDebugJsonPrint(model, cpath.as_ptr(), 1) }, ACL_SUCCESS);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(json["name"], "replayed");
    assert_eq!(json["taskNum"], 3);
    let listed = &json["streams"][0]["tasks"];
    assert_eq!(listed[0]["type"], "ACL_MODEL_RI_TASK_VALUE_WRITE");
    assert_eq!(listed[0]["params"]["value"], 11);
    assert_eq!(listed[2]["disabled"], true);
    assert_eq!(aclmdlRIDebugPrint(model), ACL_SUCCESS);
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { aclmdlRIDebugJsonPrint(model, cpath.as_ptr(), 2) }, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
}

#[test]
fn a_model_built_from_bound_streams_runs() {
    let _ctx = context(0);
    let (bound, run) = (stream(), stream());
    let buf = device_buffer(64);
    let calls = counter();
    let mut model = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclmdlRIBuildBegin(&mut model, 0) }, ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(model, run), ACL_ERROR_RT_PARAM_INVALID, "not built yet");
    assert_eq!(aclmdlRIBindStream(model, bound, 0), ACL_SUCCESS);
    assert_eq!(memset_async(buf, 6, 64, bound), ACL_SUCCESS);
    assert_eq!(launch_count(bound, calls), ACL_SUCCESS);
    assert_eq!(aclmdlRIEndTask(model, bound), ACL_SUCCESS);
    assert_eq!(aclmdlRIEndTask(model, run), ACL_ERROR_RT_STREAM_MODEL);
    assert_eq!(aclmdlRIBuildEnd(model, null_mut()), ACL_SUCCESS);
    for _ in 0..3 {
        assert_eq!(aclmdlRIExecuteAsync(model, run), ACL_SUCCESS);
    }
    assert_eq!(aclrtSynchronizeStream(run), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(read(buf, 64).iter().all(|&x| x == 6));
    // Cleaning the bound stream's persistent tasks leaves an empty model.
    assert_eq!(aclrtPersistentTaskClean(bound), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(model, run), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(run), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(aclmdlRIUnbindStream(model, bound), ACL_SUCCESS);
    assert_eq!(aclmdlRIUnbindStream(model, bound), ACL_ERROR_RT_STREAM_MODEL);
    assert_eq!(aclrtPersistentTaskClean(bound), ACL_SUCCESS);
    assert_eq!(launch_count(bound, calls), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(bound), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 4, "the unbound stream runs its work again");
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
}

#[test]
fn a_replay_takes_its_event_records_and_wait_targets_when_queued() {
    let _ctx = context(6);
    let (s, other) = (stream(), stream());
    let e = event();
    let opened = counter();
    let arg = (opened as *const AtomicU64).cast_mut().cast();
    begin(s, GLOBAL);
    assert_eq!(aclrtLaunchHostFunc(s, Some(gate), arg), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    let model = end(s);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    assert!(!event_done(e), "the replay's record is pending from the moment it is queued");
    opened.store(1, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    assert!(event_done(e));

    // A recorded wait on an event recorded outside the graph waits, at each replay, for the
    // event's latest record queued before the replay.
    let ext = event();
    let calls = counter();
    begin(s, GLOBAL);
    assert_eq!(aclrtStreamWaitEvent(s, ext), ACL_SUCCESS);
    assert_eq!(launch_count(s, calls), ACL_SUCCESS);
    let waits = end(s);
    let held = counter();
    let harg = (held as *const AtomicU64).cast_mut().cast();
    assert_eq!(aclrtLaunchHostFunc(other, Some(gate), harg), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(ext, other), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(waits, s), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the replay waits for the record");
    held.store(1, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(aclrtSynchronizeStream(other), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroy(waits), ACL_SUCCESS);
}

/// The `*_EXTERNAL` record and wait flags (graphs synchronising with streams outside them):
/// a replay's external wait waits for a record made outside, and its external record is seen
/// by a stream outside; both only in a stream being captured, on an event made with
/// `ACL_EVENT_SYNC` alone.
#[test]
fn external_records_and_waits_link_a_graph_to_the_streams_outside_it() {
    let _ctx = context(7);
    let (s, other) = (stream(), stream());
    let ex_event = || {
        let mut e = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC) }, ACL_SUCCESS);
        e
    };
    let (inbound, outbound) = (ex_event(), ex_event());
    let plain = event();
    // Outside a capture, or with another kind of event, or a time limit: 107000.
    assert_eq!(
        aclrtStreamWaitEventWithFlag(s, inbound, 0, ACL_EVENT_WAIT_EXTERNAL),
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(aclrtRecordEventWithFlag(outbound, s, ACL_EVENT_RECORD_EXTERNAL), ACL_ERROR_RT_PARAM_INVALID);
    begin(s, GLOBAL);
    assert_eq!(
        aclrtStreamWaitEventWithFlag(s, plain, 0, ACL_EVENT_WAIT_EXTERNAL),
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(
        aclrtStreamWaitEventWithFlag(s, inbound, 5, ACL_EVENT_WAIT_EXTERNAL),
        ACL_ERROR_RT_PARAM_INVALID
    );
    let calls = counter();
    assert_eq!(aclrtStreamWaitEventWithFlag(s, inbound, 0, ACL_EVENT_WAIT_EXTERNAL), ACL_SUCCESS);
    assert_eq!(launch_count(s, calls), ACL_SUCCESS);
    assert_eq!(aclrtRecordEventWithFlag(outbound, s, ACL_EVENT_RECORD_EXTERNAL), ACL_SUCCESS);
    let model = end(s);
    // Outside: a held stream records `inbound`; another waits on the graph's `outbound`.
    let held = counter();
    let harg = (held as *const AtomicU64).cast_mut().cast();
    assert_eq!(aclrtLaunchHostFunc(other, Some(gate), harg), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(inbound, other), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
    let after = stream();
    let later = counter();
    assert_eq!(aclrtStreamWaitEvent(after, outbound), ACL_SUCCESS);
    assert_eq!(launch_count(after, later), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the replay waits for the record made outside");
    assert_eq!(later.load(Ordering::SeqCst), 0, "the stream outside waits for the replay's record");
    held.store(1, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeStream(after), ACL_SUCCESS);
    assert_eq!((calls.load(Ordering::SeqCst), later.load(Ordering::SeqCst)), (1, 1));
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(other), ACL_SUCCESS);
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
}
