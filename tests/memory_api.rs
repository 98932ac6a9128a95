//! Device and pinned host memory through the C entry points: a vendor-sample flow with async
//! copies ordered by events, the bad-input table, the capacity limit and strict mode. The last
//! two need their own settings, so they run in a child process with the environment set.

use std::ffi::c_void;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::ptr::{null, null_mut};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::stream::*;

const H2H: i32 = 0;
const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const DEFAULT: i32 = 4;
const HUGE_FIRST: u32 = 0;
const NORMAL_ONLY: u32 = 2;
const MIB2: usize = 2 << 20;

fn malloc(size: usize, policy: u32) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, policy) }, ACL_SUCCESS);
    p
}

fn malloc_host(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, ACL_SUCCESS);
    p
}

fn on_device<R: Send + 'static>(device: i32, f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(move || {
        assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
        let r = f();
        assert_eq!(aclrtResetDevice(device), ACL_SUCCESS);
        r
    })
    .join()
    .unwrap()
}

#[test]
fn a_vendor_sample_flow_moves_the_data() {
    on_device(2, || {
        let size = 4 << 20;
        let mut s1 = null_mut();
        let mut s2 = null_mut();
        let mut e = null_mut();
        // SAFETY: valid pointers; host buffers outlive the synchronised copies.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s1), ACL_SUCCESS);
            assert_eq!(aclrtCreateStream(&mut s2), ACL_SUCCESS);
            assert_eq!(aclrtCreateEvent(&mut e), ACL_SUCCESS);
            let host_in = malloc_host(size);
            let host_out = malloc_host(size);
            let dev_a = malloc(size, HUGE_FIRST);
            let dev_b = malloc(size, NORMAL_ONLY);
            assert_eq!(dev_a.addr() % MIB2, 0, "huge-page policies are 2 MiB aligned");
            assert_eq!(dev_b.addr() % 4096, 0);
            let input = std::slice::from_raw_parts_mut(host_in.cast::<u8>(), size);
            for (i, b) in input.iter_mut().enumerate() {
                *b = (i * 31 % 251) as u8;
            }
            assert_eq!(aclrtMemsetAsync(host_out, size, 0xAB, size, s2), ACL_SUCCESS);
            assert_eq!(aclrtMemcpyAsync(dev_a, size, host_in, size, H2D, s1), ACL_SUCCESS);
            assert_eq!(aclrtMemcpyAsync(dev_b, size, dev_a, size, D2D, s1), ACL_SUCCESS);
            assert_eq!(aclrtRecordEvent(e, s1), ACL_SUCCESS);
            assert_eq!(aclrtStreamWaitEvent(s2, e), ACL_SUCCESS);
            assert_eq!(aclrtMemcpyAsync(host_out, size, dev_b, size / 2, D2H, s2), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s2), ACL_SUCCESS);
            let output = std::slice::from_raw_parts(host_out.cast::<u8>(), size);
            assert_eq!(output[..size / 2], input[..size / 2]);
            assert!(output[size / 2..].iter().all(|&b| b == 0xAB));

            // Synchronous forms, and DEFAULT finding out where each end is.
            let mut local = vec![0u8; 1000];
            assert_eq!(aclrtMemset(dev_a, size, 7, 1000), ACL_SUCCESS);
            assert_eq!(aclrtMemcpy(local.as_mut_ptr().cast(), 1000, dev_a, 1000, DEFAULT), ACL_SUCCESS);
            assert!(local.iter().all(|&b| b == 7));
            assert_eq!(aclrtMemcpy(host_in, size, local.as_ptr().cast(), 1000, H2H), ACL_SUCCESS);

            let (mut free, mut total) = (0usize, 0usize);
            assert_eq!(aclrtGetMemInfo(1, &mut free, &mut total), ACL_SUCCESS);
            assert_eq!(total, 64 << 30);
            assert!(free <= total - 2 * size, "the two device buffers count");

            for p in [dev_a, dev_b] {
                assert_eq!(aclrtFree(p), ACL_SUCCESS);
            }
            for p in [host_in, host_out] {
                assert_eq!(aclrtFreeHost(p), ACL_SUCCESS);
            }
            assert_eq!(aclrtDestroyEvent(e), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s1), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s2), ACL_SUCCESS);
        }
    });
}

#[test]
fn bad_inputs_get_the_documented_numbers() {
    // SAFETY: every pointer passed is NULL, valid, or refused before use.
    let without_device = unsafe { aclrtMalloc(&mut null_mut(), 64, 0) };
    assert_eq!(without_device, ACL_ERROR_RT_CONTEXT_NULL);
    on_device(3, || {
        let dev = malloc(1 << 16, NORMAL_ONLY);
        let host = malloc_host(1 << 16);
        let mut buf = vec![0u8; 1 << 16];
        let b = buf.as_mut_ptr().cast::<c_void>();
        // SAFETY: as above.
        unsafe {
            let cases: Vec<(&str, aclError, aclError)> = vec![
                ("aclrtMalloc(NULL)", aclrtMalloc(null_mut(), 64, 0), ACL_ERROR_INVALID_PARAM),
                ("aclrtMalloc size 0", aclrtMalloc(&mut null_mut(), 0, 0), ACL_ERROR_INVALID_PARAM),
                ("aclrtMalloc policy 8", aclrtMalloc(&mut null_mut(), 64, 8), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtMalloc policy bits", aclrtMalloc(&mut null_mut(), 64, 0x100 | 2), ACL_SUCCESS),
                ("aclrtMallocHost size 0", aclrtMallocHost(&mut null_mut(), 0), ACL_ERROR_INVALID_PARAM),
                ("aclrtFree(NULL)", aclrtFree(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("aclrtFree(host memory)", aclrtFree(host), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtFree(stack)", aclrtFree(b), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtFree(interior)", aclrtFree(dev.byte_add(64)), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtFreeHost(device)", aclrtFreeHost(dev), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtMemcpy count > destMax", aclrtMemcpy(dev, 10, b, 11, H2D), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtMemcpy kind 9", aclrtMemcpy(dev, 10, b, 10, 9), ACL_ERROR_RT_PARAM_INVALID),
                ("aclrtMemcpy H2D into host", aclrtMemcpy(b, 10, host, 10, H2D), ACL_ERROR_RT_PARAM_INVALID),
                (
                    "aclrtMemcpy D2H from host",
                    aclrtMemcpy(b, 10, b.byte_add(100), 10, D2H),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                (
                    "aclrtMemcpy H2D from device",
                    aclrtMemcpy(dev, 10, dev.byte_add(100), 10, H2D),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                (
                    "aclrtMemcpy past the end",
                    aclrtMemcpy(dev.byte_add((1 << 16) - 8), 16, b, 16, H2D),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                (
                    "aclrtMemcpy overlap",
                    aclrtMemcpy(dev, 100, dev.byte_add(50), 100, D2D),
                    ACL_ERROR_RT_PARAM_INVALID,
                ),
                ("aclrtMemcpy NULL src", aclrtMemcpy(dev, 10, null(), 10, H2D), ACL_ERROR_INVALID_PARAM),
                ("aclrtMemcpy count 0", aclrtMemcpy(null_mut(), 0, null(), 0, H2D), ACL_SUCCESS),
                ("aclrtMemset count > max", aclrtMemset(dev, 10, 0, 11), ACL_ERROR_RT_PARAM_INVALID),
                (
                    "aclrtMemcpyAsync bad stream",
                    aclrtMemcpyAsync(dev, 10, b, 10, H2D, 0x42 as *mut c_void),
                    ACL_ERROR_RT_INVALID_HANDLE,
                ),
                (
                    "aclrtGetMemInfo attr 18",
                    aclrtGetMemInfo(18, &mut 0, &mut 0),
                    ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                ),
                ("aclrtGetMemInfo(NULL)", aclrtGetMemInfo(0, null_mut(), &mut 0), ACL_ERROR_INVALID_PARAM),
            ];
            let wrong: Vec<_> = cases.iter().filter(|(_, got, want)| got != want).collect();
            assert!(wrong.is_empty(), "{wrong:#?}");

            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            assert_eq!(aclrtFree(dev), ACL_ERROR_RT_PARAM_INVALID, "double free");
            assert_eq!(aclrtMemcpy(b, 10, dev, 10, D2H), ACL_ERROR_RT_PARAM_INVALID, "freed memory");
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
        }
    });
}

const CHILD: &str = "ASCENDLESS_MEMORY_API_CHILD";

/// Runs `test` of this binary in a child process with `env`; returns its exit status and output.
fn child(test: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (out.status, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn child_capacity() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    on_device(0, || {
        let a = malloc(48 << 20, NORMAL_ONLY);
        // SAFETY: valid out-pointer.
        let rc = unsafe { aclrtMalloc(&mut null_mut(), 32 << 20, NORMAL_ONLY) };
        assert_eq!(rc, ACL_ERROR_RT_MEMORY_ALLOCATION);
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        assert_eq!(unsafe { aclrtGetMemInfo(0, &mut free, &mut total) }, ACL_SUCCESS);
        assert_eq!((free, total), (16 << 20, 64 << 20));
        assert_eq!(aclrtFree(a), ACL_SUCCESS);
        malloc(64 << 20, NORMAL_ONLY);
    });
    on_device(0, || {
        malloc(64 << 20, NORMAL_ONLY); // the reset freed it
    });
    println!("capacity ok");
}

#[test]
fn device_memory_is_limited_by_the_configured_capacity() {
    let (status, out) = child("child_capacity", &[("ASCENDLESS_DEVICE_MEMORY", "64M")]);
    assert!(status.success() && out.contains("capacity ok"), "{status:?}\n{out}");
}

#[test]
fn child_strict() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: setrlimit reads the struct; it affects only this child.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
    assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
    let dev = malloc(4096, NORMAL_ONLY);
    let mut out = [0u8; 5];
    // SAFETY: valid pointers; the runtime goes through its own view of the device memory.
    unsafe {
        assert_eq!(aclrtMemcpy(dev, 4096, b"hello".as_ptr().cast(), 5, H2D), ACL_SUCCESS);
        assert_eq!(aclrtMemcpy(out.as_mut_ptr().cast(), 5, dev, 5, D2H), ACL_SUCCESS);
    }
    assert_eq!(&out, b"hello");
    println!("api ok");
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    // SAFETY: deliberately not: strict device memory is not host-accessible, so this read
    // must fault, as it would on an NPU. The parent expects the child to die here.
    let byte = unsafe { std::ptr::read_volatile(dev.cast::<u8>()) };
    println!("read {byte} without a fault");
}

#[test]
fn strict_mode_faults_on_host_access_not_on_api_use() {
    let (status, out) = child("child_strict", &[("ASCENDLESS_STRICT_DEVICE_MEMORY", "1")]);
    assert!(out.contains("api ok"), "{out}");
    assert!(!out.contains("without a fault"), "{out}");
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}");
}
