//! IPC events and stream value waits between real processes, and the complete event API,
//! through the C entry points. The child is this test binary re-run with a role variable; it
//! obeys one command per line (see `common::Scripted`), and the test process is the other side.

use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr::null_mut;
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::ipc::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::value::*;
use common::Scripted;

const ROLE: &str = "ASCENDLESS_IPC_EVENT_TEST_CHILD";
const SIZE: usize = 4096;

type Ev = *mut c_void;

fn new_stream() -> *mut c_void {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn ipc_event() -> Ev {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_IPC) }, ACL_SUCCESS);
    e
}

/// Writes the event's handle to `path` as the vendor's sample does (the raw 64 bytes).
fn save_handle(e: Ev, path: &str) -> i32 {
    let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
    // SAFETY: valid out-pointer.
    let rc = unsafe { aclrtIpcGetEventHandle(e, &mut h) };
    let bytes: Vec<u8> = h.reserved.iter().map(|&c| c as u8).collect();
    std::fs::write(path, bytes).unwrap();
    rc
}

fn open_handle(path: &str) -> (i32, Ev) {
    let bytes = std::fs::read(path).unwrap();
    let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
    for (d, s) in h.reserved.iter_mut().zip(bytes) {
        *d = s as c_char;
    }
    let mut e = null_mut();
    // SAFETY: valid out-pointer; the handle is passed by value.
    let rc = unsafe { aclrtIpcOpenEventHandle(h, &mut e) };
    (rc, e)
}

fn status(e: Ev) -> aclrtEventRecordedStatus {
    let mut s = aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEventStatus(e, &mut s) }, ACL_SUCCESS);
    s
}

fn first_error(codes: &[i32]) -> i32 {
    codes.iter().copied().find(|&c| c != 0).unwrap_or(0)
}

// ---- the child ----

fn child_main() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let stream = new_stream();
    let mut event: Ev = null_mut();
    let mut mem: *mut c_void = null_mut();
    common::obey(|words| {
        Some(match words {
            ["export_event", path] => {
                event = ipc_event();
                format!("{}", save_handle(event, path))
            }
            ["open_event", path] => {
                let (rc, e) = open_handle(path);
                event = e;
                format!("{rc}")
            }
            ["record"] => {
                format!("{}", first_error(&[aclrtRecordEvent(event, stream), aclrtSynchronizeStream(stream)]))
            }
            ["wait"] => format!(
                "{}",
                first_error(&[
                    aclrtStreamWaitEvent(stream, event),
                    aclrtSynchronizeStreamWithTimeout(stream, 10_000)
                ])
            ),
            ["sync_event"] => format!("{}", aclrtSynchronizeEvent(event)),
            ["status"] => format!("0 {}", status(event) as i32),
            ["destroy_event"] => format!("{}", aclrtDestroyEvent(event)),
            ["export_mem"] => {
                let mut key = [0 as c_char; 65];
                // SAFETY: valid out-pointers; a 65-byte key buffer.
                let rc = unsafe {
                    first_error(&[
                        aclrtMalloc(&mut mem, SIZE, 0),
                        aclrtIpcMemGetExportKey(mem, SIZE, key.as_mut_ptr(), 65, 1),
                    ])
                };
                // SAFETY: the library wrote a NUL-terminated key.
                format!("{rc} {}", unsafe { CStr::from_ptr(key.as_ptr()) }.to_str().unwrap())
            }
            // Holds the stream on the word (until it reads 1), then records the event behind it:
            // a record that stays pending.
            ["block_then_record"] => format!(
                "{}",
                first_error(&[
                    aclrtValueWait(mem, 1, ACL_STREAM_WAIT_VALUE_EQ, stream),
                    aclrtRecordEvent(event, stream)
                ])
            ),
            ["value_write", v] => format!(
                "{}",
                first_error(&[
                    aclrtValueWrite(mem, v.parse().unwrap(), 0, stream),
                    aclrtSynchronizeStream(stream)
                ])
            ),
            ["value_wait", v, flag] => format!(
                "{}",
                first_error(&[
                    aclrtValueWait(mem, v.parse().unwrap(), flag.parse().unwrap(), stream),
                    aclrtSynchronizeStreamWithTimeout(stream, 10_000)
                ])
            ),
            ["pid"] => format!("0 {}", std::process::id()),
            ["exit"] => return None,
            other => panic!("unknown command {other:?}"),
        })
    });
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

// ---- the parent's side ----

fn peer() -> Scripted {
    Scripted::spawn(ROLE, &[])
}

fn code(p: &mut Scripted, command: &str) -> i32 {
    p.send(command);
    p.reply_words(command)[0].parse().unwrap()
}

fn handle_path(tag: &str) -> String {
    let dir = std::env::temp_dir();
    dir.join(format!("ascendless-ipc-event-{tag}-{}", std::process::id())).to_string_lossy().into_owned()
}

#[test]
fn an_event_recorded_in_one_process_releases_waits_in_the_other_both_ways() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let path = handle_path("both-ways");
    let mut a = peer();
    assert_eq!(code(&mut a, &format!("export_event {path}")), 0);
    let (rc, e) = open_handle(&path);
    assert_eq!(rc, ACL_SUCCESS);
    let s = new_stream();
    // Never recorded: complete everywhere.
    assert_eq!(status(e), aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_COMPLETE);
    // The exporter records; the importer's stream waits on it and its synchronisation sees it.
    assert_eq!(code(&mut a, "record"), 0);
    assert_eq!(aclrtStreamWaitEvent(s, e), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    // The importer records behind a held stream; the exporter's wait blocks until it runs.
    let mem = device_word();
    assert_eq!(aclrtValueWait(mem, 1, ACL_STREAM_WAIT_VALUE_EQ, s), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    assert_eq!(status(e), aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY);
    a.send("status");
    assert_eq!(a.reply_words("status")[1], "0", "the exporter sees the importer's pending record");
    a.send("wait");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(aclrtValueWrite(mem, 1, 0, null_mut()), ACL_SUCCESS);
    assert_eq!(a.reply_words("wait")[0], "0", "the exporter's stream waited for the importer's record");
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(code(&mut a, "sync_event"), 0);
    a.send("status");
    assert_eq!(a.reply_words("status")[1], "1");
    // Restrictions of IPC events (207000), and of the export.
    let mut t = 0u64;
    let mut id = 0u32;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtEventGetTimestamp(e, &mut t), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(aclrtGetEventId(e, &mut id), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
        assert_eq!(
            aclrtIpcGetEventHandle(e, &mut h),
            ACL_ERROR_RT_PARAM_INVALID,
            "an opened event is not re-exported"
        );
        assert_eq!(aclrtIpcGetEventHandle(e, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(aclrtResetEvent(e, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    // The exporter's destroy withdraws the handle: a new open fails; the open event still works.
    assert_eq!(code(&mut a, "destroy_event"), 0);
    assert_eq!(open_handle(&path).0, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    a.finish();
    free_word(mem);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    let _ = std::fs::remove_file(path);
}

fn device_word() -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMalloc(&mut p, SIZE, 0) }, ACL_SUCCESS);
    p
}

fn free_word(p: *mut c_void) {
    assert_eq!(aclrtFree(p), ACL_SUCCESS);
}

#[test]
fn a_killed_exporter_ends_the_importers_waits_with_an_error_quickly() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let path = handle_path("killed");
    let mut a = peer();
    assert_eq!(code(&mut a, &format!("export_event {path}")), 0);
    a.send("export_mem");
    assert_eq!(a.reply_words("export_mem")[0], "0");
    assert_eq!(code(&mut a, "block_then_record"), 0, "a record that stays pending");
    let (rc, e) = open_handle(&path);
    assert_eq!(rc, ACL_SUCCESS);
    let s = new_stream();
    assert_eq!(aclrtStreamWaitEvent(s, e), ACL_SUCCESS);
    let (tx, rx) = mpsc::channel();
    let (raw_e, raw_s) = (e as usize, s as usize);
    std::thread::spawn(move || {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        let stream = aclrtSynchronizeStreamWithTimeout(raw_s as *mut c_void, 20_000);
        let event = aclrtSynchronizeEvent(raw_e as *mut c_void);
        tx.send((stream, event)).unwrap();
    });
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "the waits block while the exporter lives");
    a.child.kill().unwrap();
    let _ = a.child.wait();
    let killed = Instant::now();
    let (stream, event) = rx.recv_timeout(Duration::from_secs(5)).expect("the waits ended after the kill");
    assert!(killed.elapsed() < Duration::from_secs(2), "promptly: {:?}", killed.elapsed());
    assert_eq!(stream, ACL_ERROR_RT_IPC_ERROR);
    assert_eq!(event, ACL_ERROR_RT_IPC_ERROR);
    assert_eq!(aclrtRecordEvent(e, s), ACL_ERROR_RT_IPC_ERROR, "a record would reach no one");
    assert_eq!(aclrtStreamWaitEvent(s, e), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 5_000), ACL_ERROR_RT_IPC_ERROR, "a later wait too");
    assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_killed_opener_ends_the_creators_waits_without_limit_when_none_is_left() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let path = handle_path("killed-opener");
    let e = ipc_event();
    assert_eq!(save_handle(e, &path), ACL_SUCCESS);
    let mut b = peer();
    assert_eq!(code(&mut b, &format!("open_event {path}")), 0);
    b.send("export_mem");
    assert_eq!(b.reply_words("export_mem")[0], "0");
    assert_eq!(code(&mut b, "block_then_record"), 0, "the opener's record stays pending");
    assert_eq!(status(e), aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY);
    let (tx, rx) = mpsc::channel();
    let raw_e = e as usize;
    std::thread::spawn(move || tx.send(aclrtSynchronizeEvent(raw_e as *mut c_void)).unwrap());
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err(), "the creator waits while the opener lives");
    b.child.kill().unwrap();
    let _ = b.child.wait();
    let killed = Instant::now();
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(ACL_ERROR_RT_IPC_ERROR));
    assert!(killed.elapsed() < Duration::from_secs(2), "promptly: {:?}", killed.elapsed());
    // A wait with a time-out is governed by its time-out, as for notifies.
    assert_eq!(aclrtSynchronizeEventWithTimeout(e, 50), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    let _ = std::fs::remove_file(path);
}

#[test]
fn another_users_process_is_refused_the_handle() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: needs root to start a process of another user");
        return;
    }
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let path = handle_path("other-user");
    let e = ipc_event();
    assert_eq!(save_handle(e, &path), ACL_SUCCESS);
    let mut other =
        Scripted::spawn_via(&["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], ROLE, &[]);
    assert_eq!(code(&mut other, &format!("open_event {path}")), ACL_ERROR_RT_NO_PERMISSION);
    let mut same = peer();
    assert_eq!(code(&mut same, &format!("open_event {path}")), 0, "the creator's user may open it");
    other.finish();
    same.finish();
    assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    let _ = std::fs::remove_file(path);
}

#[test]
fn value_waits_on_ipc_memory_are_released_by_the_other_process_for_each_comparison() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let mut a = peer();
    a.send("export_mem");
    let reply = a.reply_words("export_mem");
    assert_eq!(reply[0], "0");
    let key = CString::new(reply[1].as_str()).unwrap();
    let mut mem = null_mut();
    // SAFETY: valid out-pointer and C string.
    assert_eq!(unsafe { aclrtIpcMemImportByKey(&mut mem, key.as_ptr(), 0) }, ACL_SUCCESS);
    let s = new_stream();
    // (comparison, value waited for, value the other process writes to release it, a value
    // written before that must not release it)
    let cases = [
        (ACL_STREAM_WAIT_VALUE_GEQ, 10, 12, 9),
        (ACL_STREAM_WAIT_VALUE_EQ, 42, 42, 41),
        (ACL_STREAM_WAIT_VALUE_AND, 0b100, 0b110, 0b011),
        (ACL_STREAM_WAIT_VALUE_NOR, 0b1, 0b10, !0u64),
    ];
    for (flag, value, release, not_yet) in cases {
        assert_eq!(code(&mut a, &format!("value_write {not_yet}")), 0);
        assert_eq!(aclrtValueWait(mem, value, flag, s), ACL_SUCCESS);
        let (tx, rx) = mpsc::channel();
        let raw_s = s as usize;
        std::thread::spawn(move || {
            tx.send(aclrtSynchronizeStreamWithTimeout(raw_s as *mut c_void, 10_000)).unwrap()
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(150)).is_err(),
            "flag {flag}: released by {not_yet:#x}"
        );
        let written = Instant::now();
        assert_eq!(code(&mut a, &format!("value_write {release}")), 0);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(ACL_SUCCESS), "flag {flag}");
        assert!(written.elapsed() < Duration::from_secs(1));
    }
    // The other way: the exporter's stream waits on the word, this process's write releases it.
    a.send(&format!("value_wait 7 {ACL_STREAM_WAIT_VALUE_EQ}"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(aclrtValueWrite(mem, 7, 0, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(a.reply_words("value_wait")[0], "0");
    // Bad arguments.
    assert_eq!(aclrtValueWait(null_mut(), 0, 0, s), ACL_ERROR_INVALID_PARAM);
    assert_eq!(aclrtValueWrite(mem, 0, 1, s), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtValueWait(mem, 0, 4, s), ACL_ERROR_RT_PARAM_INVALID);
    // SAFETY: an address inside the word, never dereferenced by the call.
    assert_eq!(aclrtValueWait(unsafe { mem.byte_add(4) }, 0, 0, s), ACL_ERROR_RT_PARAM_INVALID);
    let mut host = 0u64;
    assert_eq!(aclrtValueWrite((&raw mut host).cast(), 0, 0, s), ACL_ERROR_RT_PARAM_INVALID);
    // SAFETY: a C string.
    assert_eq!(unsafe { aclrtIpcMemClose(key.as_ptr()) }, ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    a.finish();
}

#[test]
fn a_value_wait_ends_when_its_stream_is_aborted() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let mem = device_word();
    let s = new_stream();
    assert_eq!(aclrtValueWait(mem, 5, ACL_STREAM_WAIT_VALUE_EQ, s), ACL_SUCCESS);
    let started = Instant::now();
    assert_eq!(aclrtStreamAbort(s), ACL_SUCCESS);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    free_word(mem);
}

// ---- the complete event API, in one process ----

#[test]
fn creation_flags_combine_as_documented() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let mut e = null_mut();
    // SAFETY: valid out-pointers (or NULL on purpose).
    unsafe {
        for ok in [
            ACL_EVENT_SYNC,
            ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS,
            ACL_EVENT_IPC,
        ] {
            assert_eq!(aclrtCreateEventExWithFlag(&mut e, ok), ACL_SUCCESS, "{ok:#x}");
            assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
        }
        for bad in [0, ACL_EVENT_IPC | ACL_EVENT_SYNC, ACL_EVENT_EXTERNAL, ACL_EVENT_DEVICE_USE_ONLY, 0x80] {
            assert_eq!(aclrtCreateEventExWithFlag(&mut e, bad), ACL_ERROR_RT_PARAM_INVALID, "{bad:#x}");
        }
        assert_eq!(aclrtCreateEventExWithFlag(null_mut(), ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtCreateEventWithFlag(&mut e, ACL_EVENT_IPC), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            aclrtCreateEventWithFlag(&mut e, ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC),
            ACL_ERROR_RT_PARAM_INVALID
        );
        // Without ACL_EVENT_SYNC an Ex event cannot be waited on; a plain event's handle cannot be shared.
        assert_eq!(aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
        let s = new_stream();
        assert_eq!(aclrtStreamWaitEvent(s, e), ACL_ERROR_RT_PARAM_INVALID);
        let mut st = aclrtEventStatus::ACL_EVENT_STATUS_RESERVED;
        assert_eq!(aclrtQueryEvent(e, &mut st), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
        assert_eq!(aclrtIpcGetEventHandle(e, &mut h), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        // Bytes not written by aclrtIpcGetEventHandle.
        h.reserved[0] = b'x' as c_char;
        assert_eq!(aclrtIpcOpenEventHandle(h, &mut e), ACL_ERROR_RT_PARAM_INVALID);
    }
}

#[test]
fn statuses_timestamps_ids_and_counts() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let s = new_stream();
    let held = new_stream();
    let mem = device_word();
    let (mut a, mut b) = (null_mut(), null_mut());
    let mut avail = [0u32; 2];
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetEventAvailNum(&mut avail[0]), ACL_SUCCESS);
        assert_eq!(aclrtCreateEvent(&mut a), ACL_SUCCESS);
        assert_eq!(aclrtCreateEvent(&mut b), ACL_SUCCESS);
        assert_eq!(aclrtGetEventAvailNum(&mut avail[1]), ACL_SUCCESS);
    }
    assert!(avail[1] < avail[0] && avail[0] <= 65536, "{avail:?}");
    let (mut ia, mut ib) = (0, 0);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtGetEventId(a, &mut ia), ACL_SUCCESS);
        assert_eq!(aclrtGetEventId(b, &mut ib), ACL_SUCCESS);
    }
    assert_ne!(ia, ib);
    // Not recorded: no timestamp yet.
    let mut t = 0u64;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtEventGetTimestamp(a, &mut t) }, ACL_ERROR_RT_EVENT_NOT_COMPLETE);
    // A record held behind a value wait: not ready, and the wait status of a stream wait too.
    assert_eq!(aclrtValueWait(mem, 1, ACL_STREAM_WAIT_VALUE_EQ, held), ACL_SUCCESS);
    assert_eq!(aclrtRecordEventWithFlag(a, held, ACL_EVENT_RECORD_DEFAULT), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEventWithFlag(s, a, 0, ACL_EVENT_WAIT_DEFAULT), ACL_SUCCESS);
    let mut old = aclrtEventStatus::ACL_EVENT_STATUS_RESERVED;
    let mut wait = aclrtEventWaitStatus::ACL_EVENT_WAIT_STATUS_RESERVED;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtQueryEvent(a, &mut old), ACL_SUCCESS);
        assert_eq!(aclrtQueryEventWaitStatus(a, &mut wait), ACL_SUCCESS);
    }
    assert_eq!(old, aclrtEventStatus::ACL_EVENT_STATUS_NOT_READY);
    assert_eq!(wait, aclrtEventWaitStatus::ACL_EVENT_WAIT_STATUS_NOT_READY);
    assert_eq!(status(a), aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_NOT_READY);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(aclrtValueWrite(mem, 1, 0, null_mut()), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(held), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtQueryEvent(a, &mut old), ACL_SUCCESS);
        assert_eq!(aclrtQueryEventWaitStatus(a, &mut wait), ACL_SUCCESS);
    }
    assert_eq!(old, aclrtEventStatus::ACL_EVENT_STATUS_COMPLETE);
    assert_eq!(wait, aclrtEventWaitStatus::ACL_EVENT_WAIT_STATUS_COMPLETE);
    assert_eq!(status(a), aclrtEventRecordedStatus::ACL_EVENT_RECORDED_STATUS_COMPLETE);
    // Elapsed time between two records 50 ms apart, on the real clock.
    assert_eq!(aclrtRecordEvent(a, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(aclrtRecordEvent(b, s), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeEvent(b), ACL_SUCCESS);
    let mut ms = 0f32;
    let (mut ta, mut tb) = (0u64, 0u64);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtEventElapsedTime(&mut ms, a, b), ACL_SUCCESS);
        assert_eq!(aclrtEventGetTimestamp(a, &mut ta), ACL_SUCCESS);
        assert_eq!(aclrtEventGetTimestamp(b, &mut tb), ACL_SUCCESS);
        assert_eq!(aclrtEventElapsedTime(null_mut(), a, b), ACL_ERROR_INVALID_PARAM);
    }
    assert!((45.0..2000.0).contains(&ms), "{ms} ms");
    assert!(tb - ta >= 45_000_000, "{ta} {tb}");
    // Flags of record and wait.
    // The EXTERNAL flags are for a stream being captured (tests/capture.rs): 107000 here.
    assert_eq!(aclrtRecordEventWithFlag(a, s, ACL_EVENT_RECORD_EXTERNAL), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtRecordEventWithFlag(a, s, 7), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtStreamWaitEventWithFlag(s, a, 0, ACL_EVENT_WAIT_EXTERNAL), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtStreamWaitEventWithFlag(s, a, 0, 9), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(aclrtStreamWaitEventWithTimeout(s, a, -1), ACL_ERROR_RT_PARAM_INVALID);
    for e in [a, b] {
        assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    }
    for st in [s, held] {
        assert_eq!(aclrtDestroyStream(st), ACL_SUCCESS);
    }
    free_word(mem);
}

#[test]
fn a_wait_with_a_time_out_fails_its_stream_and_the_op_wait_bound_applies() {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let held = new_stream();
    let s = new_stream();
    let mem = device_word();
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEvent(&mut e) }, ACL_SUCCESS);
    assert_eq!(aclrtValueWait(mem, 1, ACL_STREAM_WAIT_VALUE_EQ, held), ACL_SUCCESS);
    assert_eq!(aclrtRecordEvent(e, held), ACL_SUCCESS);
    let started = Instant::now();
    assert_eq!(aclrtStreamWaitEventWithTimeout(s, e, 100), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_WAIT_TIMEOUT);
    assert!(started.elapsed() >= Duration::from_millis(90));
    // A with-flag wait bounded in ms, too.
    assert_eq!(aclrtStreamWaitEventWithFlag(s, e, 50, ACL_EVENT_WAIT_DEFAULT), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_WAIT_TIMEOUT);
    // The op-wait bound (seconds) governs plain waits; 0 removes it.
    assert_eq!(aclrtSetOpWaitTimeout(1), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEvent(s, e), ACL_SUCCESS);
    assert_eq!(aclrtSetOpWaitTimeout(0), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_ERROR_RT_WAIT_TIMEOUT);
    assert_eq!(aclrtValueWrite(mem, 1, 0, null_mut()), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(held), ACL_SUCCESS);
    assert_eq!(aclrtStreamWaitEventWithTimeout(s, e, 100), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS, "a recorded event releases at once");
    assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
    for st in [s, held] {
        assert_eq!(aclrtDestroyStream(st), ACL_SUCCESS);
    }
    free_word(mem);
}
