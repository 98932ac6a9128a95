//! The rounds of the IPC event ping-pong, shared by `cargo bench --bench ipc_event` and
//! `ascendless-bench ipc-event` (both include this file), so that both print the same figures.
//!
//! Each process creates an IPC event and opens the other's. The parent's stream records its
//! event and waits on the child's; the child's stream waits on the parent's and records its own.
//! A wait targets the record queued last when it is queued (the vendor's semantics), so the two
//! hosts queue their tasks in lock-step over a pipe first, while the parent's stream is held by
//! a value wait; then the gate opens and the streams ping-pong on their own, the parent's stream
//! timestamping every round trip. A second case does the same exchange with `aclrtValueWrite`
//! and `aclrtValueWait` on two words of IPC memory (the value-wait wake-up). The baselines do
//! the same exchange with two futex words in a shared page, one spinning before it sleeps, one
//! sleeping at once (`benches/common/futex_pingpong.rs`); each exchange also reports the CPU
//! time of both processes after the warm-up, as a share of one core. Children are the same executable started with [`ROLE`]
//! set; its `main` first calls [`child_main`].

use std::ffi::c_void;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::ptr::null_mut;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::event::{
    ACL_EVENT_IPC, ACL_IPC_EVENT_HANDLE_SIZE, aclrtCreateEventExWithFlag, aclrtIpcEventHandle,
    aclrtIpcGetEventHandle, aclrtIpcOpenEventHandle, aclrtRecordEvent, aclrtStreamWaitEvent,
};
use ascendless::ffi::acl_rt::ipc::{aclrtIpcMemGetExportKey, aclrtIpcMemImportByKey};
use ascendless::ffi::acl_rt::memory::aclrtMalloc;
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtSynchronizeStream};
use ascendless::ffi::acl_rt::value::{ACL_STREAM_WAIT_VALUE_EQ, aclrtValueWait, aclrtValueWrite};

use super::futex_pingpong::{Wait, raw_child, raw_parent};
use super::rounds::{Exchange, Row, case_lines, header, round_ratios, side_by_side, warm};
use super::stamps;

/// The environment variable that makes the executable a child: `kind:arg:rounds`.
pub const ROLE: &str = "ASCENDLESS_BENCH_IPC_EVENT_ROLE";

/// Runs the child's half if this process was started as one; false otherwise.
pub fn child_main() -> bool {
    let Ok(role) = std::env::var(ROLE) else { return false };
    let mut parts = role.splitn(2, ':');
    let (kind, rest) = (parts.next().unwrap(), parts.next().unwrap());
    let (arg, n) = rest.rsplit_once(':').unwrap();
    let n = n.parse().unwrap();
    if !raw_child(kind, arg, n) {
        if kind == "value" { value_child(arg, n) } else { event_child(arg, n) }
    }
    true
}

/// `reps` rounds of `n` round trips of the two raw exchanges (spinning, sleeping), the event
/// and the value exchanges side by side (the first tenth of each dropped as warm-up).
pub fn measure(reps: usize, n: usize) -> Vec<Row<4>> {
    side_by_side(reps, warm(n), |i| match i {
        0 => raw_parent(ROLE, n, Wait::Spin),
        1 => raw_parent(ROLE, n, Wait::Sleep),
        2 => event_parent(n),
        _ => value_parent(n),
    })
}

/// The report of [`measure`]'s rounds, as both programs print it.
pub fn report(rows: &[Row<4>], n: usize) -> String {
    let [title, spinning, sleeping] = header("IPC event", rows, n, 28);
    let event = case_lines(
        rows,
        2,
        "ascendless IPC event+stream",
        28,
        "",
        ["(targets: p50 <= 1.5x, issue 23: p50 <= 1.2x, p99 <= 3x)", "(issue 37: p50 <= 1.2x, p99 <= 3x)"],
    );
    let value = case_lines(
        rows,
        3,
        "ascendless value wait/write",
        28,
        "   (IPC memory)",
        ["(target: p50 <= 1.5x)", ""],
    );
    let mut lines = vec![title, spinning, sleeping];
    lines.extend(event);
    lines.extend(value);
    lines.push(format!("  p50 ratios of the rounds: IPC event {}", round_ratios(rows, 2)));
    lines.push(format!("  p50 ratios of the rounds: value {}", round_ratios(rows, 3)));
    lines.join("\n")
}

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

// ---- the IPC events, through streams ----

fn handle_hex(e: *mut c_void) -> String {
    let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtIpcGetEventHandle(e, &mut h) }, "aclrtIpcGetEventHandle");
    h.reserved.iter().map(|&c| format!("{:02x}", c as u8)).collect()
}

fn open_hex(text: &str) -> *mut c_void {
    let mut h = aclrtIpcEventHandle { reserved: [0; ACL_IPC_EVENT_HANDLE_SIZE] };
    for (i, d) in h.reserved.iter_mut().enumerate() {
        *d = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap() as _;
    }
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtIpcOpenEventHandle(h, &mut e) }, "aclrtIpcOpenEventHandle");
    e
}

fn setup(device: i32) -> (*mut c_void, *mut c_void) {
    check(aclrtSetDevice(device), "aclrtSetDevice");
    let (mut stream, mut own) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtCreateEventExWithFlag(&mut own, ACL_EVENT_IPC), "aclrtCreateEventExWithFlag");
    }
    (stream, own)
}

pub fn event_parent(n: usize) -> Exchange {
    let (stream, own) = setup(0);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, format!("event:{}:{n}", handle_hex(own)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    from_child.read_line(&mut line).unwrap();
    let peer = open_hex(line.trim());
    // The gate holds this stream until every task is queued.
    let mut gate = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtMalloc(&mut gate, 4096, 0) }, "aclrtMalloc");
    check(aclrtValueWait(gate, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), "aclrtValueWait");
    stamps::start(n);
    let s = ascendless::runtime::context::stream(stream.addr() as u64).unwrap();
    for i in 0..n {
        check(aclrtRecordEvent(own, stream), "aclrtRecordEvent");
        writeln!(to_child, "{i}").unwrap();
        line.clear();
        from_child.read_line(&mut line).unwrap();
        check(aclrtStreamWaitEvent(stream, peer), "aclrtStreamWaitEvent");
        s.submit(Box::new(|_| {
            stamps::take();
            Ok(())
        }))
        .unwrap();
    }
    check(aclrtValueWrite(gate, 1, 0, null_mut()), "aclrtValueWrite");
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    let child_cpu = stamps::read_child_cpu(&mut from_child);
    drop(to_child);
    assert!(child.wait().unwrap().success());
    stamps::exchange(child_cpu)
}

pub fn event_child(parent_handle: &str, n: usize) {
    let (stream, own) = setup(1);
    let parent = open_hex(parent_handle);
    let out = std::io::stdout();
    writeln!(out.lock(), "{}", handle_hex(own)).unwrap();
    let input = std::io::stdin();
    let mut lines = input.lock().lines();
    for i in 0..n {
        lines.next().unwrap().unwrap();
        check(aclrtStreamWaitEvent(stream, parent), "aclrtStreamWaitEvent");
        check(aclrtRecordEvent(own, stream), "aclrtRecordEvent");
        stamps::mark_cpu_after(stream, i + 1, n);
        writeln!(out.lock(), "{i}").unwrap();
    }
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    writeln!(out.lock(), "{}", stamps::child_cpu_line()).unwrap();
}

// ---- value waits on IPC memory, through streams ----

/// Two words of device memory 64 bytes apart: the parent writes `ping` and waits on `pong`,
/// the child the other way round. Values are explicit, so every task is queued up front.
pub fn value_parent(n: usize) -> Exchange {
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let (mut stream, mut mem) = (null_mut(), null_mut());
    let mut key = [0 as std::ffi::c_char; 65];
    // SAFETY: valid out-pointers; a 65-byte key buffer.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtMalloc(&mut mem, 4096, 0), "aclrtMalloc");
        check(aclrtIpcMemGetExportKey(mem, 4096, key.as_mut_ptr(), 65, 1), "aclrtIpcMemGetExportKey");
    }
    // SAFETY: the call wrote a NUL-terminated key.
    let key = unsafe { std::ffi::CStr::from_ptr(key.as_ptr()) }.to_str().unwrap().to_owned();
    // SAFETY: inside the 4096-byte allocation.
    let pong = unsafe { mem.byte_add(64) };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, format!("value:{key}:{n}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    stamps::start(n);
    let s = ascendless::runtime::context::stream(stream.addr() as u64).unwrap();
    for i in 0..n {
        check(aclrtValueWrite(mem, i as u64 + 1, 0, stream), "aclrtValueWrite");
        check(aclrtValueWait(pong, i as u64 + 1, ACL_STREAM_WAIT_VALUE_EQ, stream), "aclrtValueWait");
        s.submit(Box::new(|_| {
            stamps::take();
            Ok(())
        }))
        .unwrap();
    }
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    let child_cpu = stamps::read_child_cpu(&mut BufReader::new(child.stdout.take().unwrap()));
    assert!(child.wait().unwrap().success());
    stamps::exchange(child_cpu)
}

pub fn value_child(key: &str, n: usize) {
    check(aclrtSetDevice(1), "aclrtSetDevice");
    let (mut stream, mut mem) = (null_mut(), null_mut());
    let key = std::ffi::CString::new(key).unwrap();
    // SAFETY: valid out-pointers and C string.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtIpcMemImportByKey(&mut mem, key.as_ptr(), 0), "aclrtIpcMemImportByKey");
    }
    // SAFETY: inside the imported 4096 bytes.
    let pong = unsafe { mem.byte_add(64) };
    for i in 0..n {
        check(aclrtValueWait(mem, i as u64 + 1, ACL_STREAM_WAIT_VALUE_EQ, stream), "aclrtValueWait");
        check(aclrtValueWrite(pong, i as u64 + 1, 0, stream), "aclrtValueWrite");
        stamps::mark_cpu_after(stream, i + 1, n);
    }
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    println!("{}", stamps::child_cpu_line());
}
