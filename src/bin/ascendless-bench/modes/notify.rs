//! Notify ping-pong between two processes through streams: each side records the other's
//! (imported) notify and waits on its own, as stream tasks; the parent time-stamps every round
//! trip from a task on its stream.

use std::ffi::{CStr, CString, c_char, c_void};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::ptr::null_mut;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::ipc::{aclrtNotifyGetExportKey, aclrtNotifyImportByKey};
use ascendless::ffi::acl_rt::notify::{aclrtCreateNotify, aclrtRecordNotify, aclrtWaitAndResetNotify};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtSynchronizeStream};

const NO_PID_VALIDATION: u64 = 2;

fn check(rc: i32, what: &str) {
    if rc != ACL_SUCCESS {
        eprintln!("ascendless-bench notify: {what} failed with {rc}");
        std::process::exit(1);
    }
}

fn export(notify: *mut c_void) -> String {
    let mut buf = [0 as c_char; 65];
    // SAFETY: a 65-byte buffer.
    check(unsafe { aclrtNotifyGetExportKey(notify, buf.as_mut_ptr(), 65, NO_PID_VALIDATION) }, "export");
    // SAFETY: the call wrote a NUL-terminated key.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

fn import(key: &str) -> *mut c_void {
    let mut n = null_mut();
    let key = CString::new(key).expect("a key without NUL");
    // SAFETY: valid out-pointer and C string.
    check(unsafe { aclrtNotifyImportByKey(&mut n, key.as_ptr(), 2) }, "aclrtNotifyImportByKey");
    n
}

fn setup(device: i32) -> (*mut c_void, *mut c_void) {
    check(aclrtSetDevice(device), "aclrtSetDevice");
    let (mut stream, mut own) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtCreateNotify(&mut own, 0), "aclrtCreateNotify");
    }
    (stream, own)
}

/// `n` round trips with a child process; returns the round-trip times in microseconds.
pub fn parent(n: usize) -> Vec<f64> {
    let (stream, own) = setup(0);
    let own_key = export(own);
    let mut child = Command::new(std::env::current_exe().expect("this program's path"))
        .args(["__notify-child", &own_key, &n.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the notify child");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("child stdout")).read_line(&mut line).expect("child's key");
    let peer = import(line.trim());
    let origin = Instant::now();
    let stamps: Arc<Vec<AtomicU64>> = Arc::new((0..=n).map(|_| AtomicU64::new(0)).collect());
    let s = ascendless::runtime::context::stream(stream.addr() as u64).expect("the stream just made");
    let stamp = |i: usize| {
        let stamps = Arc::clone(&stamps);
        s.submit(Box::new(move |_| {
            stamps[i].store(origin.elapsed().as_nanos() as u64, Ordering::Relaxed);
            Ok(())
        }))
        .expect("submit a time stamp");
    };
    stamp(0);
    for i in 1..=n {
        check(aclrtRecordNotify(peer, stream), "aclrtRecordNotify");
        check(aclrtWaitAndResetNotify(own, stream, 10), "aclrtWaitAndResetNotify");
        stamp(i);
    }
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    assert!(child.wait().expect("wait for the notify child").success(), "the notify child failed");
    let ns: Vec<u64> = stamps.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    ns.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e3).collect()
}

pub fn child(owner_key: &str, n: usize) {
    let (stream, own) = setup(1);
    let owner = import(owner_key);
    println!("{}", export(own));
    std::io::stdout().flush().expect("flush the key");
    for _ in 0..n {
        check(aclrtWaitAndResetNotify(own, stream, 10), "aclrtWaitAndResetNotify");
        check(aclrtRecordNotify(owner, stream), "aclrtRecordNotify");
    }
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
}
