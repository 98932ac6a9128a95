//! Host work on a stream through the C entry points: `aclrtLaunchHostFunc`, the report
//! callbacks (`aclrtLaunchCallback` with a thread subscribed by `aclrtSubscribeReport` that
//! loops on `aclrtProcessReport`) and host-function threads (`aclrtSubscribeHostFunc`).
//!
//! Tests run in parallel threads of one process: each uses its own device, and its own
//! threads (subscriptions are per thread).

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::callback::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::stream::*;

type Handle = *mut c_void;

const SIZE: usize = 4096;
const H2D: i32 = 1;
const D2H: i32 = 2;
const BLOCK: i32 = aclrtCallbackBlockType::ACL_CALLBACK_BLOCK as i32;
const NO_BLOCK: i32 = aclrtCallbackBlockType::ACL_CALLBACK_NO_BLOCK as i32;

fn this_thread() -> u64 {
    // SAFETY: no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

fn setup(device: i32) -> Handle {
    assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
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

/// What a test callback does; its address is the callback's argument. Leaked: a callback may
/// run (or be dropped) after its test has looked.
#[derive(Default)]
struct Probe {
    /// Ids of the callbacks run, in order.
    log: Mutex<Vec<u32>>,
    /// The threads they ran in.
    threads: Mutex<Vec<u64>>,
    /// Callbacks wait for this before returning (bounded).
    gate: AtomicBool,
    started: AtomicU64,
}

struct Call {
    probe: &'static Probe,
    id: u32,
    gated: bool,
    /// A byte the callback checks, and the value it must have (else it logs 999).
    check: Option<(usize, u8)>,
}

fn probe() -> &'static Probe {
    Box::leak(Box::default())
}

fn call(probe: &'static Probe, id: u32, gated: bool, check: Option<(usize, u8)>) -> Handle {
    Box::leak(Box::new(Call { probe, id, gated, check })) as *mut Call as Handle
}

extern "C-unwind" fn record(arg: *mut c_void) {
    // SAFETY: the tests pass a leaked `Call`.
    let c = unsafe { &*(arg as *const Call) };
    c.probe.started.fetch_add(1, Ordering::SeqCst);
    if c.gated {
        let start = Instant::now();
        while !c.probe.gate.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let mut id = c.id;
    if let Some((addr, want)) = c.check {
        // SAFETY: the test's buffer, live for the test (device memory is host memory here).
        if unsafe { *(addr as *const u8) } != want {
            id = 999;
        }
    }
    c.probe.threads.lock().unwrap().push(this_thread());
    c.probe.log.lock().unwrap().push(id);
}

extern "C-unwind" fn boom(_: *mut c_void) {
    panic!("a callback bug");
}

const RECORD: Option<unsafe extern "C-unwind" fn(*mut c_void)> = Some(record);
const BOOM: Option<unsafe extern "C-unwind" fn(*mut c_void)> = Some(boom);

/// A report thread as the vendor's samples write it: loops on `process(timeout)` until told to
/// stop. Gives its thread id and, at the end, the codes it got.
struct Reporter {
    id: u64,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<aclError>>,
}

impl Reporter {
    fn start(process: extern "C" fn(i32) -> aclError) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let s = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            tx.send(this_thread()).unwrap();
            let mut codes = Vec::new();
            while !s.load(Ordering::SeqCst) {
                let rc = process(20);
                if codes.last() != Some(&rc) {
                    codes.push(rc);
                }
                if rc == ACL_ERROR_RT_THREAD_SUBSCRIBE {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            codes
        });
        Reporter { id: rx.recv().unwrap(), stop, handle }
    }

    fn stop(self) -> Vec<aclError> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap()
    }
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Queues a copy of `value` bytes into `dst`; the source is leaked so it outlives the copy.
fn queue_fill(dst: Handle, value: u8, stream: Handle) {
    let src: &'static [u8] = Vec::leak(vec![value; SIZE]);
    // SAFETY: both buffers hold SIZE bytes and outlive the copy.
    let rc = unsafe { aclrtMemcpyAsync(dst, SIZE, src.as_ptr() as Handle, SIZE, H2D, stream) };
    assert_eq!(rc, ACL_SUCCESS);
}

#[test]
fn host_functions_run_in_stream_order_with_copies_and_events_and_hold_later_tasks() {
    let s = setup(0);
    let dev = device_buffer();
    let host: &'static mut [u8] = Vec::leak(vec![0u8; SIZE]);
    let host_addr = host.as_mut_ptr() as usize;
    let p = probe();
    queue_fill(dev, 7, s);
    // Runs after the copy (it sees its bytes) and holds the copy back behind it.
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 1, true, Some((dev as usize, 7)))), ACL_SUCCESS);
    // SAFETY: both buffers hold SIZE bytes and outlive the copy.
    assert_eq!(unsafe { aclrtMemcpyAsync(host_addr as Handle, SIZE, dev, SIZE, D2H, s) }, ACL_SUCCESS);
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 2, false, Some((host_addr, 7)))), ACL_SUCCESS);
    let mut ev = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEvent(&mut ev) }, ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(ev, s), ACL_SUCCESS);

    wait_until("the host function to start", || p.started.load(Ordering::SeqCst) == 1);
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: the buffer is ours; the copy into it is held back.
    let first = unsafe { *(host_addr as *const u8) };
    assert_eq!(first, 0, "a task after a host function ran before it returned");
    let mut status = aclrtEventStatus::ACL_EVENT_STATUS_RESERVED;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEvent(ev, &mut status) }, ACL_SUCCESS);
    assert!(
        matches!(status, aclrtEventStatus::ACL_EVENT_STATUS_NOT_READY),
        "the event after the host function is complete before the function returned"
    );
    p.gate.store(true, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![1, 2]);
    // The stream's own worker ran them, not the caller.
    assert!(p.threads.lock().unwrap().iter().all(|&t| t != this_thread()));
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn launch_host_func_on_the_default_stream_and_a_null_function() {
    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
    let p = probe();
    assert_eq!(aclrtLaunchHostFunc(null_mut(), RECORD, call(p, 5, false, None)), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![5]);
    assert_eq!(aclrtLaunchHostFunc(null_mut(), None, null_mut()), ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn a_panicking_host_function_fails_its_task_and_the_stream_goes_on() {
    let s = setup(2);
    assert_eq!(aclrtLaunchHostFunc(s, BOOM, null_mut()), ACL_SUCCESS);
    let p = probe();
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 3, false, None)), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
    assert_eq!(*p.log.lock().unwrap(), vec![3], "later tasks still ran");
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 4, false, None)), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![3, 4]);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn blocking_and_non_blocking_callbacks_run_in_the_subscribed_thread() {
    let s = setup(3);
    let r = Reporter::start(aclrtProcessReport);
    assert_eq!(aclrtSubscribeReport(r.id, s), ACL_SUCCESS);
    let dev = device_buffer();

    // Non-blocking: the stream goes on while the callback is still held at its gate.
    let nb = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(nb, 1, true, None), NO_BLOCK, s), ACL_SUCCESS);
    queue_fill(dev, 9, s);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 5000), ACL_SUCCESS);
    // SAFETY: our buffer; the copy has run.
    assert_eq!(unsafe { *(dev as *const u8) }, 9);
    wait_until("the non-blocking callback to start", || nb.started.load(Ordering::SeqCst) == 1);
    assert!(nb.log.lock().unwrap().is_empty());
    nb.gate.store(true, Ordering::SeqCst);
    wait_until("the non-blocking callback to end", || nb.log.lock().unwrap().len() == 1);

    // Blocking: the copy behind it waits until the report thread has run it.
    let b = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(b, 2, true, Some((dev as usize, 9))), BLOCK, s), ACL_SUCCESS);
    queue_fill(dev, 4, s);
    wait_until("the blocking callback to start", || b.started.load(Ordering::SeqCst) == 1);
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: our buffer.
    assert_eq!(unsafe { *(dev as *const u8) }, 9, "a task after a blocking callback ran before it");
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    b.gate.store(true, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 5000), ACL_SUCCESS);
    // SAFETY: our buffer.
    assert_eq!(unsafe { *(dev as *const u8) }, 4);
    assert_eq!(*b.log.lock().unwrap(), vec![2]);

    // Every callback ran in the report thread, once per launch.
    let p = probe();
    for i in 0..5 {
        assert_eq!(aclrtLaunchCallback(RECORD, call(p, i, false, None), BLOCK, s), ACL_SUCCESS);
    }
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    for t in [&nb.threads, &b.threads, &p.threads] {
        assert!(t.lock().unwrap().iter().all(|&t| t == r.id));
    }
    assert_eq!(aclrtUnSubscribeReport(r.id, s), ACL_SUCCESS);
    let codes = r.stop();
    assert_eq!(codes.last(), Some(&ACL_ERROR_RT_THREAD_SUBSCRIBE), "{codes:?}");
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn process_report_codes_time_out_bad_time_out_and_no_subscription() {
    let s = setup(4);
    // Not subscribed: 107012 at once.
    let start = Instant::now();
    assert_eq!(aclrtProcessReport(1000), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert!(start.elapsed() < Duration::from_millis(500));
    assert_eq!(aclrtProcessHostFunc(1000), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    // Time-out values: -1 or > 0.
    assert_eq!(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtProcessHostFunc(0), ACL_ERROR_RT_PARAM_INVALID);
    // Subscribed with nothing to run: the time-out code after the time-out.
    assert_eq!(aclrtSubscribeReport(this_thread(), s), ACL_SUCCESS);
    let start = Instant::now();
    assert_eq!(aclrtProcessReport(60), ACL_ERROR_RT_REPORT_TIMEOUT);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(60) && took < Duration::from_secs(5), "{took:?}");
    // Callbacks queued before the call run in it, in order.
    let p = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 1, false, None), NO_BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 2, false, None), NO_BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtProcessReport(1000), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![1, 2]);
    assert_eq!(*p.threads.lock().unwrap(), vec![this_thread(), this_thread()]);
    assert_eq!(aclrtUnSubscribeReport(this_thread(), s), ACL_SUCCESS);
    assert_eq!(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn subscription_rules_and_a_stream_without_subscriber() {
    let s = setup(5);
    let p = probe();
    // No subscriber: 107015, and nothing is queued.
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 1, false, None), BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);
    assert_eq!(aclrtUnSubscribeReport(this_thread(), s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    // Bad arguments.
    assert_eq!(aclrtSubscribeReport(this_thread(), s), ACL_SUCCESS);
    assert_eq!(aclrtLaunchCallback(RECORD, null_mut(), 2, s), ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtLaunchCallback(None, null_mut(), BLOCK, s), ACL_ERROR_RT_PARAM_INVALID);
    // One thread per stream; one device per thread.
    assert_eq!(aclrtSubscribeReport(this_thread(), s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_eq!(aclrtSubscribeReport(this_thread() ^ 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_eq!(aclrtUnSubscribeReport(this_thread() ^ 1, s), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    let mut s2 = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s2) }, ACL_SUCCESS);
    assert_eq!(aclrtSubscribeReport(this_thread(), s2), ACL_SUCCESS, "several streams of one device");
    assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
    let mut other = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut other) }, ACL_SUCCESS);
    assert_eq!(aclrtSubscribeReport(this_thread(), other), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_eq!(aclrtDestroyStream(other), ACL_SUCCESS);
    assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
    // The host-function family: NULL stream refused.
    assert_eq!(aclrtSubscribeHostFunc(this_thread(), null_mut()), ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtUnSubscribeHostFunc(this_thread(), s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_eq!(aclrtUnSubscribeReport(this_thread(), s2), ACL_SUCCESS);
    assert_eq!(aclrtUnSubscribeReport(this_thread(), s), ACL_SUCCESS);
    // A destroyed stream's subscription does not outlive it.
    assert_eq!(aclrtSubscribeReport(this_thread(), s2), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s2), ACL_SUCCESS);
    assert_eq!(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn unsubscribing_releases_queued_callbacks_and_a_waiting_report_thread() {
    let s = setup(7);
    // The subscribed thread is this one, which does not process: the callbacks stay queued.
    let me = this_thread();
    assert_eq!(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    let p = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 1, false, None), NO_BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 2, false, None), BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_eq!(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    let start = Instant::now();
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 5000), ACL_ERROR_RT_STREAM_NO_CB_REG);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(p.log.lock().unwrap().is_empty(), "withdrawn callbacks never run");
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS, "the stream goes on");

    // A report thread waiting without limit returns when its last stream is unsubscribed.
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        tx.send(this_thread()).unwrap();
        aclrtProcessReport(-1)
    });
    let id = rx.recv().unwrap();
    assert_eq!(aclrtSubscribeReport(id, s), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(aclrtUnSubscribeReport(id, s), ACL_SUCCESS);
    // It may have called before the subscription (107012 at once) or waited: 107012 either way.
    assert_eq!(waiter.join().unwrap(), ACL_ERROR_RT_THREAD_SUBSCRIBE);

    // Likewise when its only stream is destroyed without being unsubscribed.
    let (tx, rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let waiter = std::thread::spawn(move || {
        tx.send(this_thread()).unwrap();
        go_rx.recv().unwrap();
        aclrtProcessReport(-1)
    });
    assert_eq!(aclrtSubscribeReport(rx.recv().unwrap(), s), ACL_SUCCESS);
    go_tx.send(()).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    let start = Instant::now();
    assert_eq!(waiter.join().unwrap(), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn abort_and_forced_destroy_release_a_blocked_callback() {
    let s = setup(0);
    let me = this_thread();
    assert_eq!(aclrtSubscribeReport(me, s), ACL_SUCCESS);
    let p = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 1, false, None), BLOCK, s), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(30));
    let start = Instant::now();
    assert_eq!(aclrtStreamAbort(s), ACL_SUCCESS);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 2000), ACL_SUCCESS);
    // The aborted callback is skipped when the thread processes: nothing runs.
    let rc = aclrtProcessReport(20);
    assert!(rc == ACL_SUCCESS || rc == ACL_ERROR_RT_REPORT_TIMEOUT, "{rc}");
    assert!(p.log.lock().unwrap().is_empty());
    // The stream still serves callbacks after the abort.
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 2, false, None), NO_BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtProcessReport(1000), ACL_SUCCESS);
    assert_eq!(*p.log.lock().unwrap(), vec![2]);

    // A callback running when its stream is aborted: the abort does not wait for it.
    let r = Reporter::start(aclrtProcessReport);
    assert_eq!(aclrtUnSubscribeReport(me, s), ACL_SUCCESS);
    assert_eq!(aclrtSubscribeReport(r.id, s), ACL_SUCCESS);
    let held = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(held, 3, true, None), BLOCK, s), ACL_SUCCESS);
    wait_until("the callback to start", || held.started.load(Ordering::SeqCst) == 1);
    let start = Instant::now();
    assert_eq!(aclrtStreamAbort(s), ACL_SUCCESS);
    assert!(start.elapsed() < Duration::from_secs(2));
    held.gate.store(true, Ordering::SeqCst);

    // Forced destroy with a blocked callback returns at once.
    let held2 = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(held2, 4, true, None), BLOCK, s), ACL_SUCCESS);
    wait_until("the callback to start", || held2.started.load(Ordering::SeqCst) == 1);
    let start = Instant::now();
    assert_eq!(aclrtDestroyStreamForce(s), ACL_SUCCESS);
    assert!(start.elapsed() < Duration::from_secs(2));
    held2.gate.store(true, Ordering::SeqCst);
    r.stop();
}

#[test]
fn a_panicking_callback_is_reported_not_a_crash() {
    let s = setup(1);
    let r = Reporter::start(aclrtProcessReport);
    assert_eq!(aclrtSubscribeReport(r.id, s), ACL_SUCCESS);
    assert_eq!(aclrtLaunchCallback(BOOM, null_mut(), BLOCK, s), ACL_SUCCESS);
    let p = probe();
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 1, false, None), BLOCK, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
    assert_eq!(*p.log.lock().unwrap(), vec![1]);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtUnSubscribeReport(r.id, s), ACL_SUCCESS);
    let codes = r.stop();
    assert!(codes.contains(&ACL_ERROR_RT_INTERNAL_ERROR), "the report thread saw the failure: {codes:?}");
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

#[test]
fn host_functions_of_a_subscribed_stream_run_in_the_subscribed_thread() {
    let s = setup(2);
    let r = Reporter::start(aclrtProcessHostFunc);
    assert_eq!(aclrtSubscribeHostFunc(r.id, s), ACL_SUCCESS);
    assert_eq!(aclrtSubscribeHostFunc(r.id, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    let dev = device_buffer();
    let p = probe();
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 1, true, None)), ACL_SUCCESS);
    queue_fill(dev, 5, s);
    wait_until("the host function to start", || p.started.load(Ordering::SeqCst) == 1);
    std::thread::sleep(Duration::from_millis(30));
    // SAFETY: our buffer.
    assert_eq!(unsafe { *(dev as *const u8) }, 0, "the host function holds the stream");
    p.gate.store(true, Ordering::SeqCst);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(*p.threads.lock().unwrap(), vec![r.id]);
    // A report subscription is a different family: callbacks still need aclrtSubscribeReport.
    assert_eq!(aclrtLaunchCallback(RECORD, call(p, 2, false, None), BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);
    // Unsubscribed: host functions run on the stream's worker again.
    assert_eq!(aclrtUnSubscribeHostFunc(r.id, s), ACL_SUCCESS);
    assert_eq!(aclrtLaunchHostFunc(s, RECORD, call(p, 3, false, None)), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    let threads = p.threads.lock().unwrap().clone();
    assert_eq!(threads.len(), 2);
    assert_ne!(threads[1], r.id);
    r.stop();
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
}

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's output directory for this build (holds libascendless.so next to `deps/`).
fn lib_dir() -> std::path::PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().to_path_buf()
}

/// tests/c/callback.c, built against the generated headers and the shared library (which
/// `cargo build --lib` makes), runs the vendor sample's report-thread pattern in C.
#[test]
fn a_c_program_runs_callbacks_in_its_report_thread() {
    use std::process::Command;
    let lib = lib_dir().join("libascendless.so");
    assert!(lib.exists(), "{} was not built: run `cargo build --lib` (or `make test`)", lib.display());
    let dir = lib_dir().join("host-func-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(&lib, &so).unwrap();
    let exe = dir.join("callback");
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread", "-I"])
        .arg(root().join("include"))
        .arg(root().join("tests/c/callback.c"))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).env("ASCEND_GLOBAL_LOG_LEVEL", "4").output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("0 failures"),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
