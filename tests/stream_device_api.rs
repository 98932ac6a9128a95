//! Streams a transfer engine relies on (abort, query, flags, device-wide synchronisation) and
//! device ids under `ASCEND_RT_VISIBLE_DEVICES`, through the C entry points.
//!
//! In-process tests share the process, so each uses its own device. The variable is read once
//! per process, so each setting is tried in a child process (this test binary run again with a
//! role variable, obeying one command per line), and two children with different settings
//! share IPC memory to show that what crosses processes names the same device in both.

use std::ffi::{CStr, CString, c_char, c_void};
use std::io::{BufRead, Write};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

mod common;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::context::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::ipc::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::value::{ACL_STREAM_WAIT_VALUE_EQ, aclrtValueWait};
use common::Scripted;

type Handle = *mut c_void;

const SIZE: usize = 4096;
const H2D: i32 = 1;
const D2H: i32 = 2;

fn stream() -> Handle {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn notify() -> Handle {
    let mut n = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateNotify(&mut n, 0) }, ACL_SUCCESS);
    n
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

/// Queues a copy of `value` bytes into `dst` on `stream`; the source is leaked so that it
/// outlives the copy whenever (or whether) it runs.
fn queue_fill(dst: Handle, value: u8, stream: Handle) -> aclError {
    let src: &'static [u8] = Vec::leak(vec![value; SIZE]);
    // SAFETY: `src` lives forever; `dst` is a live device allocation of SIZE bytes.
    unsafe { aclrtMemcpyAsync(dst, SIZE, src.as_ptr().cast(), SIZE, H2D, stream) }
}

fn read(p: Handle) -> Vec<u8> {
    let mut out = vec![0xEEu8; SIZE];
    // SAFETY: a live buffer of SIZE bytes.
    assert_eq!(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), SIZE, p, SIZE, D2H) }, ACL_SUCCESS);
    out
}

fn query(s: Handle) -> aclrtStreamStatus {
    let mut status = aclrtStreamStatus::ACL_STREAM_STATUS_RESERVED;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtStreamQuery(s, &mut status) }, ACL_SUCCESS);
    status
}

fn is_complete(s: Handle) -> bool {
    matches!(query(s), aclrtStreamStatus::ACL_STREAM_STATUS_COMPLETE)
}

fn current_context() -> Handle {
    let mut c = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetCurrentContext(&mut c) }, ACL_SUCCESS);
    c
}

/// Runs `body` on a thread of its own (a test's device and context stay its own).
fn on_thread(body: impl FnOnce() + Send + 'static) {
    std::thread::spawn(body).join().unwrap();
}

// ---- streams ----

#[test]
fn abort_discards_queued_work_releases_waiters_and_the_stream_runs_new_work() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
        let (s, n, buf) = (stream(), notify(), device_buffer());
        // A task blocked on a notify nobody records, and a copy queued behind it.
        assert_eq!(aclrtWaitAndResetNotify(n, s, 0), ACL_SUCCESS);
        assert_eq!(queue_fill(buf, 7, s), ACL_SUCCESS);
        let mut e = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateEvent(&mut e) }, ACL_SUCCESS);
        assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
        assert!(!is_complete(s), "the stream is busy");
        let (raw_s, raw_e, ctx) = (s as usize, e as usize, current_context() as usize);
        let waiter = std::thread::spawn(move || {
            assert_eq!(aclrtSetCurrentContext(ctx as Handle), ACL_SUCCESS);
            aclrtSynchronizeStream(raw_s as Handle)
        });
        let event_waiter = std::thread::spawn(move || aclrtSynchronizeEvent(raw_e as Handle));
        // Time for both to be waiting (a late one would find the stream idle).
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        assert_eq!(aclrtStreamAbort(s), ACL_SUCCESS);
        assert!(started.elapsed() < Duration::from_secs(5), "the blocked wait was cancelled");
        assert_eq!(waiter.join().unwrap(), ACL_ERROR_RT_STREAM_ABORT, "the waiter is released");
        assert_eq!(event_waiter.join().unwrap(), ACL_ERROR_RT_STREAM_ABORT, "so is the event's");
        assert!(is_complete(s), "nothing is left on the stream");
        assert!(read(buf).iter().all(|&b| b == 0), "the queued copy was discarded");
        assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS, "a new record completes");
        assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
        // The stream runs new work, and the aborted work leaves no error behind.
        assert_eq!(queue_fill(buf, 9, s), ACL_SUCCESS);
        assert_eq!(aclrtRecordNotify(n, s), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(n, s, 5), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10_000), ACL_SUCCESS);
        assert!(read(buf).iter().all(|&b| b == 9));
        // An idle stream aborts at once; bad arguments get their codes.
        assert_eq!(aclrtStreamAbort(s), ACL_SUCCESS);
        // NULL is the default stream, as in the vendor's runtime.
        assert_eq!(aclrtWaitAndResetNotify(n, null_mut(), 0), ACL_SUCCESS);
        assert_eq!(queue_fill(buf, 5, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtStreamAbort(null_mut()), ACL_SUCCESS);
        assert!(is_complete(null_mut()));
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert!(read(buf).iter().all(|&b| b == 9), "the default stream's copy was discarded");
        let mut other = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateContext(&mut other, 4) }, ACL_SUCCESS);
        assert_eq!(aclrtStreamAbort(s), ACL_ERROR_RT_STREAM_CONTEXT, "a stream of another context");
        assert_eq!(aclrtSetCurrentContext(ctx as Handle), ACL_SUCCESS);
        assert_eq!(aclrtDestroyContext(other), ACL_SUCCESS);
        assert_eq!(aclrtFree(buf), ACL_SUCCESS);
        assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtStreamAbort(s), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
    });
    on_thread(|| assert_eq!(aclrtStreamAbort(1 as Handle), ACL_ERROR_RT_CONTEXT_NULL));
}

#[test]
fn query_tells_complete_from_not_ready() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        let (s, n) = (stream(), notify());
        assert!(is_complete(s), "a new stream has nothing to do");
        assert!(is_complete(null_mut()), "NULL is the default stream");
        assert_eq!(aclrtWaitAndResetNotify(n, s, 0), ACL_SUCCESS);
        assert!(!is_complete(s));
        assert!(is_complete(null_mut()), "other streams are not concerned");
        assert_eq!(aclrtRecordNotify(n, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
        assert!(is_complete(s));
        // SAFETY: NULL out-pointer, refused before use.
        assert_eq!(unsafe { aclrtStreamQuery(s, null_mut()) }, ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
    });
}

#[test]
fn synchronize_device_covers_every_stream_of_the_device_within_its_time_limit() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
        let default_ctx = current_context();
        let (s, n) = (stream(), notify());
        assert_eq!(aclrtSynchronizeDevice(), ACL_SUCCESS, "an idle device");
        assert_eq!(aclrtWaitAndResetNotify(n, s, 0), ACL_SUCCESS);
        let started = Instant::now();
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(100), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(5), "{took:?}");
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtRecordNotify(n, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(10_000), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeDevice(), ACL_SUCCESS);
        assert!(is_complete(s));

        // A stream of another context on the same device counts too.
        let mut other = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateContext(&mut other, 6) }, ACL_SUCCESS);
        let (s2, n2) = (stream(), notify());
        assert_eq!(aclrtWaitAndResetNotify(n2, s2, 0), ACL_SUCCESS);
        assert_eq!(aclrtSetCurrentContext(default_ctx), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert_eq!(aclrtRecordNotify(n2, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(10_000), ACL_SUCCESS);

        // A task's failure on any of them is reported.
        assert_eq!(aclrtWaitAndResetNotify(n, s, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeDevice(), ACL_ERROR_RT_TASK_TIMEOUT);
        assert_eq!(aclrtSynchronizeDevice(), ACL_SUCCESS, "reported once");

        assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
        assert_eq!(aclrtDestroyNotify(n2), ACL_SUCCESS);
        assert_eq!(aclrtDestroyContext(other), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
    });
    on_thread(|| {
        assert_eq!(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(10), ACL_ERROR_RT_CONTEXT_NULL);
    });
}

#[test]
fn stream_flags_have_the_vendor_s_values_and_rules() {
    assert_eq!(
        [
            ACL_STREAM_FAST_LAUNCH,
            ACL_STREAM_FAST_SYNC,
            ACL_STREAM_PERSISTENT,
            ACL_STREAM_HUGE,
            ACL_STREAM_CPU_SCHEDULE,
            ACL_STREAM_DEVICE_USE_ONLY
        ],
        [0x1, 0x2, 0x4, 0x8, 0x10, 0x20]
    );
    let header =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/acl/acl_rt.h")).unwrap();
    for line in [
        "#define ACL_STREAM_FAST_LAUNCH 1u",
        "#define ACL_STREAM_FAST_SYNC 2u",
        "ACL_STREAM_STATUS_NOT_READY = 1",
    ] {
        assert!(header.contains(line), "the installed header defines {line:?}");
    }
    on_thread(|| {
        assert_eq!(aclrtSetDevice(7), ACL_SUCCESS);
        let accepted = [
            0,
            ACL_STREAM_FAST_LAUNCH,
            ACL_STREAM_FAST_SYNC,
            ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC,
            ACL_STREAM_HUGE | ACL_STREAM_FAST_SYNC,
            ACL_STREAM_DEVICE_USE_ONLY,
            0x40,
            0x8000_0000 | ACL_STREAM_FAST_LAUNCH,
        ];
        let buf = device_buffer();
        for (i, flag) in accepted.into_iter().enumerate() {
            let mut s = null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclrtCreateStreamWithConfig(&mut s, 3, flag) }, ACL_SUCCESS, "{flag:#x}");
            assert_eq!(queue_fill(buf, i as u8 + 1, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            if flag == ACL_STREAM_DEVICE_USE_ONLY {
                // The host does not synchronise with a device-use-only stream (the vendor's
                // synchronisations return success at once for it): its work is seen when done.
                let t = std::time::Instant::now();
                while !read(buf).iter().all(|&b| b == i as u8 + 1) {
                    assert!(t.elapsed() < std::time::Duration::from_secs(5), "the fill never ran");
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            assert!(read(buf).iter().all(|&b| b == i as u8 + 1), "a stream with {flag:#x} runs work");
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        // A device-use-only stream held by a wait nothing ends: both synchronisations return
        // success at once, as the vendor documents (the runtime sample that stops such a
        // stream and then synchronises relies on it).
        // Persistent streams (those a model binds, aclmdlRIBindStream) likewise.
        for flag in [
            ACL_STREAM_DEVICE_USE_ONLY,
            ACL_STREAM_PERSISTENT,
            ACL_STREAM_PERSISTENT | ACL_STREAM_FAST_LAUNCH,
        ] {
            let mut held = null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclrtCreateStreamWithConfig(&mut held, 0, flag) }, ACL_SUCCESS, "{flag:#x}");
            assert_eq!(aclrtValueWait(buf, 0xdead, ACL_STREAM_WAIT_VALUE_EQ, held), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(held), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStreamWithTimeout(held, 1), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStreamForce(held), ACL_SUCCESS);
        }
        let refused = [
            (ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_SYNC, ACL_ERROR_RT_PARAM_INVALID),
            (ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_HUGE, ACL_ERROR_RT_PARAM_INVALID),
            (ACL_STREAM_CPU_SCHEDULE, ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        ];
        for (flag, code) in refused {
            let mut s = null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, flag) }, code, "{flag:#x}");
            assert!(s.is_null(), "nothing is handed out");
        }
        // Priority is reserved: any value is accepted.
        let mut s = null_mut();
        // SAFETY: valid out-pointer; then NULL, refused before use.
        unsafe {
            assert_eq!(aclrtCreateStreamWithConfig(&mut s, 100, 0), ACL_SUCCESS);
            assert_eq!(aclrtCreateStreamWithConfig(null_mut(), 0, 0), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtFree(buf), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(7), ACL_SUCCESS);
    });
    on_thread(|| {
        let mut s = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, 1) }, ACL_ERROR_RT_CONTEXT_NULL);
    });
}

#[test]
fn without_the_variable_the_three_ids_agree() {
    for id in 0..8 {
        for f in [
            aclrtGetLogicDevIdByUserDevId,
            aclrtGetUserDevIdByLogicDevId,
            aclrtGetLogicDevIdByPhyDevId,
            aclrtGetPhyDevIdByLogicDevId,
            aclrtGetUserDevIdByPhyDevId,
            aclrtGetPhyDevIdByUserDevId,
        ] {
            let mut out = -1;
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { f(id, &mut out) }, ACL_SUCCESS);
            assert_eq!(out, id);
        }
    }
    let mut out = -1;
    // SAFETY: valid out-pointers, and NULL refused before use.
    unsafe {
        assert_eq!(aclrtGetPhyDevIdByUserDevId(8, &mut out), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(aclrtGetUserDevIdByPhyDevId(-1, &mut out), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtGetLogicDevIdByUserDevId(0, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(out, -1, "a failed call writes nothing");
}

// ---- child processes ----

const ROLE: &str = "ASCENDLESS_STREAM_DEVICE_TEST_CHILD";

/// The conversions by name, for the child's "conv" command.
fn conversion(name: &str) -> unsafe extern "C" fn(i32, *mut i32) -> aclError {
    match name {
        "logic_by_user" => aclrtGetLogicDevIdByUserDevId,
        "user_by_logic" => aclrtGetUserDevIdByLogicDevId,
        "logic_by_phy" => aclrtGetLogicDevIdByPhyDevId,
        "phy_by_logic" => aclrtGetPhyDevIdByLogicDevId,
        "user_by_phy" => aclrtGetUserDevIdByPhyDevId,
        "phy_by_user" => aclrtGetPhyDevIdByUserDevId,
        other => panic!("unknown conversion {other}"),
    }
}

fn child_main() {
    let mut mem: Handle = null_mut();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["count"] => {
                let mut n = 0;
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtGetDeviceCount(&mut n) };
                format!("{rc} {n}")
            }
            ["conv", name, id] => {
                let mut v = -100;
                // SAFETY: valid out-pointer.
                let rc = unsafe { conversion(name)(id.parse().unwrap(), &mut v) };
                format!("{rc} {v}")
            }
            ["set", id] => format!("{}", aclrtSetDevice(id.parse().unwrap())),
            ["get"] => {
                let mut d = -1;
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtGetDevice(&mut d) };
                format!("{rc} {d}")
            }
            ["peer_status", dev, peer] => {
                let mut v = -1;
                // SAFETY: valid out-pointer.
                let rc = unsafe {
                    aclrtDevicePeerAccessStatus(dev.parse().unwrap(), peer.parse().unwrap(), &mut v)
                };
                format!("{rc} {v}")
            }
            ["export", value] => {
                let mut key = [0 as c_char; 65];
                // SAFETY: valid out-pointers; a 65-byte key buffer.
                let rc = unsafe {
                    assert_eq!(aclrtMalloc(&mut mem, SIZE, 0), ACL_SUCCESS);
                    assert_eq!(aclrtMemset(mem, SIZE, value.parse().unwrap(), SIZE), ACL_SUCCESS);
                    aclrtIpcMemGetExportKey(mem, SIZE, key.as_mut_ptr(), 65, 1)
                };
                // SAFETY: the library wrote a NUL-terminated key.
                format!("{rc} {}", unsafe { CStr::from_ptr(key.as_ptr()) }.to_str().unwrap())
            }
            ["import", key, flags] => {
                let key = CString::new(*key).unwrap();
                // SAFETY: valid out-pointer and C string.
                format!("{}", unsafe {
                    aclrtIpcMemImportByKey(&mut mem, key.as_ptr(), flags.parse().unwrap())
                })
            }
            ["read"] => format!("0 {}", read(mem)[SIZE / 2]),
            ["create_flag", flag] => {
                let mut s = null_mut();
                // SAFETY: valid out-pointer.
                format!("{}", unsafe { aclrtCreateStreamWithConfig(&mut s, 0, flag.parse().unwrap()) })
            }
            ["abort"] => format!("{}", aclrtStreamAbort(stream())),
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

/// A child process seeing `visible` (`None`: the variable unset) among 8 devices.
fn with_visible(visible: Option<&str>) -> Scripted {
    let mut env = vec![("ASCENDLESS_DEVICE_COUNT", "8")];
    env.extend(visible.map(|v| ("ASCEND_RT_VISIBLE_DEVICES", v)));
    Scripted::spawn(ROLE, &env)
}

/// The reply to `command` as (code, value).
fn ask(child: &mut Scripted, command: &str) -> (i32, i64) {
    child.send(command);
    let words = child.reply_words(command);
    (words[0].parse().unwrap(), words.get(1).map_or(0, |w| w.parse().unwrap()))
}

fn code(child: &mut Scripted, command: &str) -> i32 {
    ask(child, command).0
}

#[test]
fn the_visible_list_selects_and_renumbers_devices() {
    let mut c = with_visible(Some("2,5,7"));
    assert_eq!(ask(&mut c, "count"), (ACL_SUCCESS, 3));
    // User id u is device [2, 5, 7][u]; physical = logical on this machine.
    for (user, phy) in [(0, 2), (1, 5), (2, 7)] {
        assert_eq!(ask(&mut c, &format!("conv logic_by_user {user}")), (ACL_SUCCESS, phy));
        assert_eq!(ask(&mut c, &format!("conv phy_by_user {user}")), (ACL_SUCCESS, phy));
        assert_eq!(ask(&mut c, &format!("conv user_by_logic {phy}")), (ACL_SUCCESS, user));
        assert_eq!(ask(&mut c, &format!("conv user_by_phy {phy}")), (ACL_SUCCESS, user));
        // The vendor's "logical" in these two is the user id, as it documents.
        assert_eq!(ask(&mut c, &format!("conv phy_by_logic {user}")), (ACL_SUCCESS, phy));
        assert_eq!(ask(&mut c, &format!("conv logic_by_phy {phy}")), (ACL_SUCCESS, user));
    }
    // Round trips through every pair.
    for user in 0..3 {
        let (_, phy) = ask(&mut c, &format!("conv phy_by_user {user}"));
        assert_eq!(ask(&mut c, &format!("conv user_by_phy {phy}")).1, user);
        let (_, logical) = ask(&mut c, &format!("conv logic_by_user {user}"));
        assert_eq!(ask(&mut c, &format!("conv user_by_logic {logical}")).1, user);
        let (_, phy) = ask(&mut c, &format!("conv phy_by_logic {user}"));
        assert_eq!(ask(&mut c, &format!("conv logic_by_phy {phy}")).1, user);
    }
    // Hidden, absent and negative ids.
    for command in
        ["conv user_by_phy 3", "conv user_by_logic 0", "conv logic_by_user 3", "conv phy_by_user 3"]
    {
        assert_eq!(ask(&mut c, command), (ACL_ERROR_RT_INVALID_DEVICEID, -100), "{command}");
    }
    assert_eq!(code(&mut c, "conv user_by_phy 8"), ACL_ERROR_RT_INVALID_DEVICEID);
    assert_eq!(code(&mut c, "conv phy_by_user -1"), ACL_ERROR_RT_PARAM_INVALID);
    // Every device id check follows the visible set.
    assert_eq!(code(&mut c, "set 3"), ACL_ERROR_RT_INVALID_DEVICEID);
    assert_eq!(code(&mut c, "set 2"), ACL_SUCCESS);
    assert_eq!(ask(&mut c, "get"), (ACL_SUCCESS, 2), "aclrtGetDevice answers the user id");
    assert_eq!(ask(&mut c, "peer_status 0 2"), (ACL_SUCCESS, 0));
    assert_eq!(code(&mut c, "peer_status 0 5"), ACL_ERROR_RT_INVALID_DEVICEID);
    c.finish();
}

#[test]
fn the_vendor_s_parsing_rules_for_the_variable() {
    // Reading stops at a character other than a digit or comma, and at an id too large.
    for (value, count) in [("1, 2,3", 1), ("1,3,8", 2), ("4,,5", 1), ("6", 1), ("0,1,2,3,4,5,6,7", 8)] {
        let mut c = with_visible(Some(value));
        assert_eq!(ask(&mut c, "count"), (ACL_SUCCESS, count), "{value:?}");
        c.finish();
    }
    // A descending, repeated or empty list leaves the process without devices.
    for value in ["3,1", "2,2", "x", "9", ""] {
        let mut c = with_visible(Some(value));
        assert_eq!(code(&mut c, "count"), ACL_ERROR_RT_NO_DEVICE, "{value:?}");
        assert_eq!(code(&mut c, "set 0"), ACL_ERROR_RT_INVALID_DEVICEID, "{value:?}");
        assert_eq!(code(&mut c, "conv logic_by_user 0"), ACL_ERROR_RT_INVALID_DEVICEID, "{value:?}");
        c.finish();
    }
    let mut c = with_visible(None);
    assert_eq!(ask(&mut c, "count"), (ACL_SUCCESS, 8));
    assert_eq!(ask(&mut c, "conv logic_by_user 7"), (ACL_SUCCESS, 7));
    c.finish();
}

#[test]
fn ipc_memory_names_the_same_device_in_processes_that_number_it_differently() {
    // The exporter calls physical device 5 "1"; the importer calls it "0" and sits on "1"
    // (physical 6); a third process does not see it at all.
    let mut exporter = with_visible(Some("2,5"));
    let mut importer = with_visible(Some("5,6"));
    let mut outsider = with_visible(Some("6,7"));
    assert_eq!(code(&mut exporter, "set 1"), ACL_SUCCESS);
    exporter.send("export 42");
    let words = exporter.reply_words("export");
    assert_eq!(words[0], "0");
    let key = words[1].clone();

    assert_eq!(code(&mut importer, "set 1"), ACL_SUCCESS);
    assert_eq!(ask(&mut importer, "peer_status 1 0"), (ACL_SUCCESS, 0));
    // ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS: access from the importer's device to the
    // exporter's, which this process calls 0.
    assert_eq!(code(&mut importer, &format!("import {key} 1")), ACL_SUCCESS);
    assert_eq!(ask(&mut importer, "read"), (ACL_SUCCESS, 42));
    assert_eq!(ask(&mut importer, "peer_status 1 0"), (ACL_SUCCESS, 1), "peer access to physical 5");

    assert_eq!(code(&mut outsider, "set 0"), ACL_SUCCESS);
    assert_eq!(code(&mut outsider, &format!("import {key} 1")), ACL_SUCCESS, "an unseen device's memory");
    assert_eq!(ask(&mut outsider, "read"), (ACL_SUCCESS, 42));
    assert_eq!(ask(&mut outsider, "peer_status 0 1"), (ACL_SUCCESS, 0), "physical 7 was not the exporter's");

    importer.finish();
    outsider.finish();
    exporter.finish();
}

#[test]
fn products_without_stream_abort_or_huge_streams_refuse_them() {
    let mut c = Scripted::spawn(ROLE, &[("ASCENDLESS_SOC", "Ascend310P3")]);
    assert_eq!(code(&mut c, "set 0"), ACL_SUCCESS);
    assert_eq!(code(&mut c, "abort"), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(code(&mut c, &format!("create_flag {ACL_STREAM_HUGE}")), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(code(&mut c, &format!("create_flag {ACL_STREAM_DEVICE_USE_ONLY}")), ACL_SUCCESS);
    c.finish();
    let mut c = Scripted::spawn(ROLE, &[("ASCENDLESS_SOC", "Ascend310B1")]);
    assert_eq!(code(&mut c, "set 0"), ACL_SUCCESS);
    assert_eq!(code(&mut c, &format!("create_flag {ACL_STREAM_HUGE}")), ACL_SUCCESS);
    assert_eq!(
        code(&mut c, &format!("create_flag {ACL_STREAM_DEVICE_USE_ONLY}")),
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    );
    c.finish();
    let mut c = Scripted::spawn(ROLE, &[("ASCENDLESS_SOC", "Ascend910_9391")]);
    assert_eq!(code(&mut c, "set 0"), ACL_SUCCESS);
    assert_eq!(code(&mut c, "abort"), ACL_SUCCESS, "Atlas A3 aborts streams");
    c.finish();
}
