//! The rounds of the notify ping-pong, shared by `cargo bench --bench notify` and
//! `ascendless-bench notify` (both include this file), so that both print the same figures.
//!
//! Each side records the other's (imported) notify and waits on its own, as stream tasks; the
//! parent timestamps every round trip on its stream (`benches/common/stamps.rs`). Each side
//! queues every task behind a gate first and then opens it, so its host thread is idle during
//! the exchange, as the baseline's are. The baselines do the same exchange with two futex
//! words in a shared page and nothing else, one spinning before it sleeps, one sleeping at once
//! (`benches/common/futex_pingpong.rs`); each exchange also reports the CPU time of both
//! processes after the warm-up, as a share of one core. Children are the same executable
//! started with [`ROLE`] set; its `main` first calls [`child_main`].

use std::ffi::{CString, c_char, c_void};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::ptr::null_mut;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::ipc::{aclrtNotifyGetExportKey, aclrtNotifyImportByKey};
use ascendless::ffi::acl_rt::memory::aclrtMalloc;
use ascendless::ffi::acl_rt::notify::{aclrtCreateNotify, aclrtRecordNotify, aclrtWaitAndResetNotify};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtSynchronizeStream};
use ascendless::ffi::acl_rt::value::{ACL_STREAM_WAIT_VALUE_EQ, aclrtValueWait, aclrtValueWrite};

use super::futex_pingpong::{Wait, raw_child, raw_parent};
use super::rounds::{Exchange, Row, case_lines, header, round_ratios, side_by_side, warm};
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
    if !raw_child(kind, arg, n.parse().unwrap()) {
        notify_child(arg, n.parse().unwrap());
    }
    true
}

/// `reps` rounds of `n` round trips of the two raw exchanges (spinning, sleeping) and the
/// notify exchange side by side (the first tenth of each dropped as warm-up).
pub fn measure(reps: usize, n: usize) -> Vec<Row<3>> {
    side_by_side(reps, warm(n), |i| match i {
        0 => raw_parent(ROLE, n, Wait::Spin),
        1 => raw_parent(ROLE, n, Wait::Sleep),
        _ => notify_parent(n),
    })
}

/// The report of [`measure`]'s rounds, as both programs print it.
pub fn report(rows: &[Row<3>], n: usize) -> String {
    let [title, spinning, sleeping] = header("notify", rows, n, 25);
    let targets = ["(issue 23: p50 <= 1.2x, p99 <= 3x)", "(issue 37: p50 <= 1.2x, p99 <= 3x)"];
    let [notify, by_spinning, by_sleeping] = case_lines(rows, 2, "ascendless notify+stream", 25, "", targets);
    [
        title,
        spinning,
        sleeping,
        notify,
        by_spinning,
        by_sleeping,
        format!("  p50 ratios of the rounds: {}", round_ratios(rows, 2)),
    ]
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

pub fn notify_parent(n: usize) -> Exchange {
    let (stream, own) = setup(0);
    let own_key = export(own);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, format!("notify:{own_key}:{n}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    from_child.read_line(&mut line).unwrap();
    let peer = import(line.trim());
    // Time stamps taken by a task after each round trip (`common/stamps.rs`).
    stamps::start(n);
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
    let child_cpu = stamps::read_child_cpu(&mut from_child);
    assert!(child.wait().unwrap().success());
    stamps::exchange(child_cpu)
}

pub fn notify_child(owner_key: &str, n: usize) {
    let (stream, own) = setup(1);
    let owner = import(owner_key);
    let held = gate(stream);
    for i in 1..=n {
        check(aclrtWaitAndResetNotify(own, stream, 10), "aclrtWaitAndResetNotify");
        check(aclrtRecordNotify(owner, stream), "aclrtRecordNotify");
        stamps::mark_cpu_after(stream, i, n);
    }
    open(held);
    println!("{}", export(own));
    std::io::stdout().flush().unwrap();
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    println!("{}", stamps::child_cpu_line());
}
