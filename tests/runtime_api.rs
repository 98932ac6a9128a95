//! Devices, contexts, streams and events through the C entry points, including a table of bad
//! inputs and their exact error numbers. Tests share the process, so each uses its own device.

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::context::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::stream::*;

type Handle = *mut c_void;

fn stream() -> Handle {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

fn event() -> Handle {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEvent(&mut e) }, ACL_SUCCESS);
    e
}

fn current_device() -> Result<i32, aclError> {
    let mut d = -1;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetDevice(&mut d) } {
        ACL_SUCCESS => Ok(d),
        e => Err(e),
    }
}

#[test]
fn devices_are_counted_and_named() {
    let mut n = 0;
    // SAFETY: valid out-pointers throughout.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut n), ACL_SUCCESS);
        assert_eq!(n, 8);
        let name = CStr::from_ptr(aclrtGetSocName()).to_str().unwrap();
        assert_eq!(name, "Ascend910B1");
        let mut pid = 0;
        assert_eq!(aclrtDeviceGetBareTgid(&mut pid), ACL_SUCCESS);
        assert_eq!(pid as u32, std::process::id());
    }
}

#[test]
fn set_device_is_per_thread_and_counted() {
    std::thread::spawn(|| {
        assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(1));
        std::thread::spawn(|| assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL))).join().unwrap();
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let s = stream();
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(1), "one use is left");
        assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
        assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL), "released at zero");
        assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE, "its streams went with it");
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS, "resetting an unused device is a no-op");
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(aclrtResetDeviceForce(1), ACL_SUCCESS);
        assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL), "force ignores the count");
    })
    .join()
    .unwrap();
}

#[test]
fn contexts_carry_to_other_threads() {
    std::thread::spawn(|| {
        let mut ctx = null_mut();
        // SAFETY: valid out-pointers throughout.
        unsafe {
            assert_eq!(aclrtCreateContext(&mut ctx, 2), ACL_SUCCESS);
            assert_eq!(current_device(), Ok(2), "a new context becomes current");
            let mut got = null_mut();
            assert_eq!(aclrtGetCurrentContext(&mut got), ACL_SUCCESS);
            assert_eq!(got, ctx);
        }
        let s = stream();
        let ctx_value = ctx as usize;
        let s_value = s as usize;
        std::thread::spawn(move || {
            let ctx = ctx_value as Handle;
            let s = s_value as Handle;
            assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL), "no context yet");
            assert_eq!(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
            assert_eq!(current_device(), Ok(2));
            let e = event();
            assert_eq!(aclrtRecordEvent(e, s), ACL_SUCCESS, "the stream's context is current");
            assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS);
            assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
        })
        .join()
        .unwrap();
        assert_eq!(aclrtDestroyContext(ctx), ACL_SUCCESS);
        assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        assert_eq!(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(aclrtDestroyContext(ctx), ACL_ERROR_RT_INVALID_HANDLE);
    })
    .join()
    .unwrap();
}

#[test]
fn a_stream_of_another_context_is_refused_for_work() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
        let s3 = stream();
        let mut ctx = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateContext(&mut ctx, 3) }, ACL_SUCCESS);
        let e = event();
        assert_eq!(aclrtRecordEvent(e, s3), ACL_ERROR_RT_STREAM_CONTEXT);
        assert_eq!(aclrtStreamWaitEvent(s3, e), ACL_ERROR_RT_STREAM_CONTEXT);
        assert_eq!(aclrtSynchronizeStream(s3), ACL_SUCCESS, "synchronising is allowed from anywhere");
        assert_eq!(aclrtDestroyContext(ctx), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
        assert_eq!(aclrtRecordEvent(e, s3), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s3), ACL_SUCCESS);
        assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
        assert_eq!(aclrtResetDeviceForce(3), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn events_order_work_across_streams() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
        let producer = stream();
        let consumers = [stream(), stream(), stream()];
        let e = event();
        let gate = event();
        let gate_stream = stream();
        assert_eq!(aclrtRecordEvent(gate, gate_stream), ACL_SUCCESS);
        assert_eq!(aclrtStreamWaitEvent(producer, gate), ACL_SUCCESS);
        assert_eq!(aclrtRecordEvent(e, producer), ACL_SUCCESS);
        for c in consumers {
            assert_eq!(aclrtStreamWaitEvent(c, e), ACL_SUCCESS);
        }
        for c in consumers {
            assert_eq!(aclrtSynchronizeStreamWithTimeout(c, 5000), ACL_SUCCESS);
        }
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 5000), ACL_SUCCESS);
        assert_eq!(aclrtResetEvent(e, producer), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(producer), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEvent(e), ACL_SUCCESS, "a reset event is not pending");
        for s in [producer, gate_stream] {
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        for c in consumers {
            assert_eq!(aclrtDestroyStreamForce(c), ACL_SUCCESS);
        }
        assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

/// `aclrtSynchronizeEventWithTimeout(event, 0)` checks and returns at once, as the vendor's
/// header says: success for a complete event, the time-out code for a pending one.
#[test]
fn a_zero_event_timeout_checks_without_waiting() {
    use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtMalloc};
    use ascendless::ffi::acl_rt::value::{ACL_STREAM_WAIT_VALUE_EQ, aclrtValueWait, aclrtValueWrite};
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let (held, other) = (stream(), stream());
        let mut word: *mut c_void = null_mut();
        // SAFETY: a live out-pointer.
        assert_eq!(unsafe { aclrtMalloc(&mut word, 8, 0) }, ACL_SUCCESS);
        let e = event();
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 0), ACL_SUCCESS, "never recorded: complete");
        // The record waits behind a value wait that only `other` releases.
        assert_eq!(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, held), ACL_SUCCESS);
        assert_eq!(aclrtRecordEvent(e, held), ACL_SUCCESS);
        let t = std::time::Instant::now();
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 0), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        assert!(t.elapsed() < std::time::Duration::from_millis(500), "{:?}", t.elapsed());
        assert_eq!(aclrtValueWrite(word, 1, 0, other), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 5000), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 0), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(other, 5000), ACL_SUCCESS);
        assert_eq!(aclrtFree(word), ACL_SUCCESS);
        assert_eq!(aclrtResetDeviceForce(2), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

/// Time-outs themselves are tested where a task can be held (the stream and event modules);
/// here: the argument rules and that a finished stream or event returns at once.
#[test]
fn timeouts_are_milliseconds_or_minus_one() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        let a = stream();
        let e = event();
        assert_eq!(aclrtRecordEvent(e, a), ACL_SUCCESS);
        // Finish the work first: a 1 ms limit on a busy machine could expire before the task runs.
        assert_eq!(aclrtSynchronizeStream(a), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(a, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(a, -1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, -1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(a, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(a, -2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtSynchronizeEventWithTimeout(e, -2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtResetDeviceForce(5), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn peer_access_is_one_direction() {
    std::thread::spawn(|| {
        let mut v = -1;
        // SAFETY: valid out-pointers throughout.
        unsafe {
            assert_eq!(aclrtDeviceCanAccessPeer(&mut v, 6, 7), ACL_SUCCESS);
            assert_eq!(v, 1);
            assert_eq!(aclrtDeviceCanAccessPeer(&mut v, 6, 6), ACL_SUCCESS);
            assert_eq!(v, 0);
            assert_eq!(aclrtDeviceEnablePeerAccess(7, 0), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
            assert_eq!(aclrtDeviceEnablePeerAccess(7, 1), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtDeviceEnablePeerAccess(6, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtDeviceEnablePeerAccess(7, 0), ACL_SUCCESS);
            assert_eq!(aclrtDevicePeerAccessStatus(6, 7, &mut v), ACL_SUCCESS);
            assert_eq!(v, 1);
            assert_eq!(aclrtDevicePeerAccessStatus(7, 6, &mut v), ACL_SUCCESS);
            assert_eq!(v, 0, "one direction only");
            assert_eq!(aclrtDeviceDisablePeerAccess(7), ACL_SUCCESS);
            assert_eq!(aclrtDevicePeerAccessStatus(6, 7, &mut v), ACL_SUCCESS);
            assert_eq!(v, 0);
            assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn bad_inputs_get_the_documented_numbers() {
    std::thread::spawn(|| {
        // SAFETY: every pointer passed is NULL or valid.
        unsafe {
            let cases: Vec<(&str, aclError, aclError)> = vec![
                ("aclrtSetDevice(-1)", aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID),
                ("aclrtSetDevice(8)", aclrtSetDevice(8), ACL_ERROR_RT_INVALID_DEVICEID),
                ("aclrtResetDevice(99)", aclrtResetDevice(99), ACL_ERROR_RT_INVALID_DEVICEID),
                ("aclrtGetDevice before set", aclrtGetDevice(&mut 0), ACL_ERROR_RT_CONTEXT_NULL),
                ("aclrtGetDeviceCount(NULL)", aclrtGetDeviceCount(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtDeviceGetBareTgid(NULL)", aclrtDeviceGetBareTgid(null_mut()), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtCreateStream without device",
                    aclrtCreateStream(&mut null_mut()),
                    ACL_ERROR_RT_CONTEXT_NULL,
                ),
                (
                    "aclrtCreateEvent without device",
                    aclrtCreateEvent(&mut null_mut()),
                    ACL_ERROR_RT_CONTEXT_NULL,
                ),
                (
                    "aclrtGetCurrentContext without one",
                    aclrtGetCurrentContext(&mut null_mut()),
                    ACL_ERROR_RT_CONTEXT_NULL,
                ),
                (
                    "aclrtCreateContext bad device",
                    aclrtCreateContext(&mut null_mut(), 42),
                    ACL_ERROR_RT_INVALID_DEVICEID,
                ),
                ("aclrtCreateContext(NULL)", aclrtCreateContext(null_mut(), 0), ACL_ERROR_INVALID_PARAM),
                ("aclrtSetCurrentContext(NULL)", aclrtSetCurrentContext(null_mut()), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtSetCurrentContext(garbage)",
                    aclrtSetCurrentContext(0x1234 as Handle),
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
                (
                    "aclrtDeviceCanAccessPeer bad id",
                    aclrtDeviceCanAccessPeer(&mut 0, 0, 8),
                    ACL_ERROR_RT_INVALID_DEVICEID,
                ),
                (
                    "aclrtDeviceCanAccessPeer(NULL)",
                    aclrtDeviceCanAccessPeer(null_mut(), 0, 1),
                    ACL_ERROR_INVALID_PARAM,
                ),
                (
                    "aclrtDevicePeerAccessStatus(NULL)",
                    aclrtDevicePeerAccessStatus(0, 1, null_mut()),
                    ACL_ERROR_INVALID_PARAM,
                ),
            ];
            let wrong: Vec<_> = cases.iter().filter(|(_, got, want)| got != want).collect();
            assert!(wrong.is_empty(), "{wrong:#?}");

            assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
            let s = stream();
            let e = event();
            let cases: Vec<(&str, aclError, aclError)> = vec![
                ("aclrtCreateStream(NULL)", aclrtCreateStream(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtCreateEvent(NULL)", aclrtCreateEvent(null_mut()), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtCreateEventWithFlag bad flag",
                    aclrtCreateEventWithFlag(&mut null_mut(), 0x8000),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                ("aclrtDestroyStream(NULL)", aclrtDestroyStream(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtRecordEvent(NULL, s)", aclrtRecordEvent(null_mut(), s), ACL_ERROR_INVALID_PARAM),
                ("aclrtRecordEvent(stream as event)", aclrtRecordEvent(s, s), ACL_ERROR_RT_INVALID_HANDLE),
                (
                    "aclrtStreamWaitEvent(event as stream)",
                    aclrtStreamWaitEvent(e, e),
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
                (
                    "aclrtSynchronizeStream(garbage)",
                    aclrtSynchronizeStream(0xdead_beef as Handle),
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
                ("aclrtSynchronizeEvent(NULL)", aclrtSynchronizeEvent(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtDestroyEvent(NULL)", aclrtDestroyEvent(null_mut()), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtDestroyContext(default)",
                    {
                        let mut c = null_mut();
                        aclrtGetCurrentContext(&mut c);
                        aclrtDestroyContext(c)
                    },
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
            ];
            let wrong: Vec<_> = cases.iter().filter(|(_, got, want)| got != want).collect();
            assert!(wrong.is_empty(), "{wrong:#?}");

            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE, "destroyed twice");
            assert_eq!(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE, "used after destroy");
            assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
            assert_eq!(aclrtRecordEvent(e, null_mut()), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS, "NULL is the default stream");
            let msg = ascendless::ffi::acl::aclGetRecentErrMsg();
            assert!(!msg.is_null());
            assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        }
    })
    .join()
    .unwrap();
}
