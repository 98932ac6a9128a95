//! Notifies within one process through the C entry points: record/wait semantics on streams of
//! different threads, time-outs, ids, batch reset, the per-device limit and bad inputs.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;

fn notify() -> *mut c_void {
    let mut n = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateNotify(&mut n, 0) }, ACL_SUCCESS);
    n
}

fn stream() -> *mut c_void {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

#[test]
fn one_record_releases_one_wait_across_threads() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let ping = notify();
        let pong = notify();
        let waiter = stream();
        let ping_v = ping as usize;
        // The other side records `ping` 100 times, before, during and after the waits.
        let other = std::thread::spawn(move || {
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            let s = stream();
            for _ in 0..100 {
                assert_eq!(aclrtRecordNotify(ping_v as *mut c_void, s), ACL_SUCCESS);
            }
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
        });
        for _ in 0..100 {
            assert_eq!(aclrtWaitAndResetNotify(ping, waiter, 10), ACL_SUCCESS);
        }
        assert_eq!(aclrtSynchronizeStreamWithTimeout(waiter, 10_000), ACL_SUCCESS, "100 records, 100 waits");
        other.join().unwrap();
        // No record left: one more wait times out, and the stream reports it.
        let started = Instant::now();
        assert_eq!(aclrtWaitAndResetNotify(ping, waiter, 1), ACL_SUCCESS, "queueing succeeds");
        assert_eq!(aclrtSynchronizeStream(waiter), ACL_ERROR_RT_TASK_TIMEOUT);
        assert!(started.elapsed() >= Duration::from_millis(900));
        let msg = ascendless::ffi::acl::aclGetRecentErrMsg();
        assert!(!msg.is_null());
        assert_eq!(aclrtSynchronizeStream(waiter), ACL_SUCCESS, "reported once");

        // Records pile up and a batch reset forgets them.
        assert_eq!(aclrtRecordNotify(pong, waiter), ACL_SUCCESS);
        assert_eq!(aclrtRecordNotify(pong, waiter), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(waiter), ACL_SUCCESS);
        let mut both = [ping, pong];
        // SAFETY: a live array of two handles.
        assert_eq!(unsafe { aclrtNotifyBatchReset(both.as_mut_ptr(), 2) }, ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(pong, waiter, 1), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(waiter), ACL_ERROR_RT_TASK_TIMEOUT, "reset dropped the records");

        let (mut a, mut b) = (0u32, 0u32);
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtGetNotifyId(ping, &mut a), ACL_SUCCESS);
            assert_eq!(aclrtGetNotifyId(pong, &mut b), ACL_SUCCESS);
        }
        assert_ne!(a, b);
        for n in [ping, pong] {
            assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
        }
        assert_eq!(aclrtDestroyStream(waiter), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn bad_inputs_and_the_device_limit() {
    std::thread::spawn(|| {
        // SAFETY: NULL or valid pointers throughout.
        unsafe {
            assert_eq!(aclrtCreateNotify(&mut null_mut(), 0), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
            let n = notify();
            let s = stream();
            let cases: Vec<(&str, aclError, aclError)> = vec![
                ("aclrtCreateNotify(NULL)", aclrtCreateNotify(null_mut(), 0), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtCreateNotify flag 2",
                    aclrtCreateNotify(&mut null_mut(), 2),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                ("aclrtDestroyNotify(NULL)", aclrtDestroyNotify(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtRecordNotify(NULL)", aclrtRecordNotify(null_mut(), s), ACL_ERROR_INVALID_PARAM),
                ("aclrtRecordNotify(stream)", aclrtRecordNotify(s, s), ACL_ERROR_RT_INVALID_HANDLE),
                (
                    "aclrtWaitAndResetNotify(garbage)",
                    aclrtWaitAndResetNotify(0x77 as *mut c_void, s, 0),
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
                ("aclrtGetNotifyId(NULL id)", aclrtGetNotifyId(n, null_mut()), ACL_ERROR_INVALID_PARAM),
                (
                    "aclrtNotifyBatchReset(NULL)",
                    aclrtNotifyBatchReset(null_mut(), 1),
                    ACL_ERROR_INVALID_PARAM,
                ),
                (
                    "aclrtNotifyBatchReset(stale)",
                    {
                        let mut v = [n, s];
                        aclrtNotifyBatchReset(v.as_mut_ptr(), 2)
                    },
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
            ];
            let wrong: Vec<_> = cases.iter().filter(|(_, got, want)| got != want).collect();
            assert!(wrong.is_empty(), "{wrong:#?}");
            assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
            assert_eq!(aclrtDestroyNotify(n), ACL_ERROR_RT_INVALID_HANDLE, "destroyed twice");
            assert_eq!(aclrtRecordNotify(n, s), ACL_ERROR_RT_INVALID_HANDLE, "used after destroy");

            // The Atlas A2 limit: 8192 notifies per device, then 207009; freeing one makes room.
            let mut all: Vec<*mut c_void> = (0..8192).map(|_| notify()).collect();
            assert_eq!(aclrtCreateNotify(&mut null_mut(), 0), ACL_ERROR_RT_NO_NOTIFY_RESOURCE);
            assert_eq!(aclrtDestroyNotify(all.pop().unwrap()), ACL_SUCCESS);
            all.push(notify());
            // A bad out-pointer fails before anything is created: with room for one more, a
            // misaligned one is refused, and the room is still there afterwards.
            assert_eq!(aclrtDestroyNotify(all.pop().unwrap()), ACL_SUCCESS);
            let mut slots = [null_mut::<c_void>(); 2];
            let misaligned = (slots.as_mut_ptr() as *mut u8).wrapping_add(1) as *mut *mut c_void;
            assert_eq!(aclrtCreateNotify(misaligned, 0), ACL_ERROR_INVALID_PARAM);
            all.push(notify());
            for n in all.drain(..100) {
                assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
            }
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
            // Resetting the device destroys the rest, and gives the device its full count back.
            assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
            assert_eq!(aclrtDestroyNotify(all[0]), ACL_ERROR_RT_INVALID_HANDLE, "released with the device");
            assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
            let again: Vec<*mut c_void> = (0..8192).map(|_| notify()).collect();
            assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
            assert_eq!(aclrtRecordNotify(again[0], null_mut()), ACL_ERROR_RT_INVALID_HANDLE);
        }
    })
    .join()
    .unwrap();
}

/// The environment variable that makes [`a_wait_nobody_ends_sleeps_on_the_kernel`] the child
/// measuring itself.
const IDLE_CHILD: &str = "ASCENDLESS_TEST_IDLE_WAIT_CHILD";

/// CPU time of the process over a stream's 1 s wait on a notify that nobody records, and the
/// wall time it took; synchronised without a time-out (the calling thread runs the wait) or
/// with one (the stream worker runs it, the calling thread sleeps until it ends).
fn idle_wait(with_timeout: bool) -> (Duration, Duration) {
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let n = notify();
    let s = stream();
    // Everything made and warm before the measurement: it covers the wait only.
    assert_eq!(aclrtRecordNotify(n, s), ACL_SUCCESS);
    assert_eq!(aclrtWaitAndResetNotify(n, s, 1), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    let (cpu, wall) = (ascendless::sys::cpu_time(), Instant::now());
    assert_eq!(aclrtWaitAndResetNotify(n, s, 1), ACL_SUCCESS);
    let rc =
        if with_timeout { aclrtSynchronizeStreamWithTimeout(s, 10_000) } else { aclrtSynchronizeStream(s) };
    let used = (ascendless::sys::cpu_time() - cpu, wall.elapsed());
    assert_eq!(rc, ACL_ERROR_RT_TASK_TIMEOUT, "nobody records: the wait times out");
    assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    used
}

/// A wait that no record ends soon sleeps on the kernel after a short spin: a process whose
/// stream waits 1 s on a notify nobody records uses < 2% of a core, whichever thread waits.
/// Measured in a process of its own (this test binary again, running only this test), so
/// that the CPU time of `getrusage` is the wait's alone and not that of tests running beside
/// it; CPU time, not wall time, so a busy machine slows the test but does not fail it.
#[test]
fn a_wait_nobody_ends_sleeps_on_the_kernel() {
    if std::env::var_os(IDLE_CHILD).is_some() {
        for with_timeout in [false, true] {
            let (cpu, wall) = idle_wait(with_timeout);
            println!("idle-wait {with_timeout} {} {}", cpu.as_micros(), wall.as_micros());
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["a_wait_nobody_ends_sleeps_on_the_kernel", "--exact", "--nocapture", "--test-threads=1"])
        .env(IDLE_CHILD, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the measuring process failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Vec<&str>> =
        text.lines().filter_map(|l| l.find("idle-wait ").map(|at| l[at..].split(' ').collect())).collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in lines {
        let (cpu, wall): (f64, f64) = (l[2].parse().unwrap(), l[3].parse().unwrap());
        assert!(wall >= 900_000.0, "the wait lasted its second: {wall} us");
        let share = cpu / wall;
        assert!(
            share < 0.02,
            "waiting 1 s on a notify nobody records (time-out on the synchronisation: {}) used {:.1}% of a core",
            l[1],
            share * 100.0
        );
    }
}
