//! The rounds of the notify ping-pong, shared by `cargo bench --bench notify` and
//! `ascendless-bench notify` (both include this file), so that both print the same figures.
//!
//! Each side records the other's (imported) notify and waits on its own, as stream tasks; the
//! parent timestamps every round trip on its stream (`benches/common/stamps.rs`). Each side
//! queues every task behind a gate first and then opens it, so its host thread is idle during
//! the exchange, as the baseline's are. The baseline does the same exchange with two futex
//! words in a shared page and nothing else (the same spin-then-sleep waiting):
//! `benches/common/futex_pingpong.rs`. Children are the same executable started with [`ROLE`]
//! set; its `main` first calls [`child_main`].

use std::ffi::{CString, c_char, c_void};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::ptr::null_mut;
use std::time::Duration;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::ipc::{aclrtNotifyGetExportKey, aclrtNotifyImportByKey};
use ascendless::ffi::acl_rt::memory::aclrtMalloc;
use ascendless::ffi::acl_rt::notify::{aclrtCreateNotify, aclrtRecordNotify, aclrtWaitAndResetNotify};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtSynchronizeStream};
use ascendless::ffi::acl_rt::value::{ACL_STREAM_WAIT_VALUE_EQ, aclrtValueWait, aclrtValueWrite};

use super::futex_pingpong::{raw_child, raw_parent};
use super::rounds::{Row, case_lines, header, side_by_side};
use super::stamps;

/// The environment variable that makes the executable a child: `kind:arg:rounds`.
pub const ROLE: &str = "ASCENDLESS_BENCH_NOTIFY_ROLE";
const NO_PID_VALIDATION: u64 = 2;

/// Runs the child's half if this process was started as one; false otherwise.
pub fn child_main() -> bool {
    let Ok(role) = std::env::var(ROLE) else { return false };
    let mut parts = role.splitn(2, ':');
    let (kind, rest) = (parts.next().unwrap(), parts.next().unwrap());
    let (arg, n) = rest.rsplit_once(':').unwrap();
    match kind {
        "raw" => raw_child(arg, n.parse().unwrap()),
        _ => notify_child(arg, n.parse().unwrap()),
    }
    true
}

/// `reps` rounds of `n` round trips of the raw and the notify exchange side by side (the first
/// tenth of each dropped as warm-up).
pub fn measure(reps: usize, n: usize) -> Vec<Row<2>> {
    side_by_side(reps, n / 10, |i| if i == 0 { raw_parent(ROLE, n) } else { notify_parent(n) })
}

/// The report of [`measure`]'s rounds, as both programs print it.
pub fn report(rows: &[Row<2>], n: usize) -> String {
    let each = |p99: bool| {
        let ratio = |r: &Row<2>| if p99 { r[1].1 / r[0].1 } else { r[1].0 / r[0].0 };
        rows.iter().map(|r| format!("{:.2}", ratio(r))).collect::<Vec<_>>().join(" ")
    };
    let [title, raw] = header("notify", rows, n, 25);
    let [notify, ratio] = case_lines(
        rows,
        1,
        ["ascendless notify+stream", "ratio (ascendless / raw)"],
        25,
        "",
        "(target: p50 <= 1.2x, p99 <= 3x)",
    );
    [title, raw, notify, ratio, format!("  ratios of the rounds: p50 {}; p99 {}", each(false), each(true))]
        .join("\n")
}

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

fn export(notify: *mut c_void) -> String {
    let mut buf = [0 as c_char; 65];
    // SAFETY: a 65-byte buffer.
    check(unsafe { aclrtNotifyGetExportKey(notify, buf.as_mut_ptr(), 65, NO_PID_VALIDATION) }, "export");
    // SAFETY: the call wrote a NUL-terminated key.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
}

fn import(key: &str) -> *mut c_void {
    let mut n = null_mut();
    let key = CString::new(key).unwrap();
    // SAFETY: valid out-pointer and C string.
    check(unsafe { aclrtNotifyImportByKey(&mut n, key.as_ptr(), 2) }, "import");
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

/// Holds `stream` (a value wait on a word of device memory) until [`open`]: each side queues
/// every task first, so that its host thread is idle while the streams ping-pong, as in the
/// baseline (queuing alongside put three busy threads on the two CPUs).
fn gate(stream: *mut c_void) -> *mut c_void {
    let mut word = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtMalloc(&mut word, 4096, 0) }, "aclrtMalloc");
    check(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), "aclrtValueWait");
    word
}

fn open(word: *mut c_void) {
    check(aclrtValueWrite(word, 1, 0, null_mut()), "aclrtValueWrite");
}

pub fn notify_parent(n: usize) -> Vec<Duration> {
    let (stream, own) = setup(0);
    let own_key = export(own);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, format!("notify:{own_key}:{n}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    let peer = import(line.trim());
    // Time stamps taken by a task after each round trip (`common/stamps.rs`).
    stamps::start();
    let s = ascendless::runtime::context::stream(stream.addr() as u64).unwrap();
    let held = gate(stream);
    for _ in 0..n {
        check(aclrtRecordNotify(peer, stream), "aclrtRecordNotify");
        check(aclrtWaitAndResetNotify(own, stream, 10), "aclrtWaitAndResetNotify");
        s.submit(Box::new(|_| {
            stamps::take();
            Ok(())
        }))
        .unwrap();
    }
    open(held);
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    assert!(child.wait().unwrap().success());
    stamps::intervals()
}

pub fn notify_child(owner_key: &str, n: usize) {
    let (stream, own) = setup(1);
    let owner = import(owner_key);
    let held = gate(stream);
    for _ in 0..n {
        check(aclrtWaitAndResetNotify(own, stream, 10), "aclrtWaitAndResetNotify");
        check(aclrtRecordNotify(owner, stream), "aclrtRecordNotify");
    }
    open(held);
    println!("{}", export(own));
    std::io::stdout().flush().unwrap();
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
}
