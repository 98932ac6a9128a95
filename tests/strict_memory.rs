//! Strict device memory (`ASCENDLESS_STRICT_DEVICE_MEMORY=1`): host code that dereferences a
//! device pointer faults, as on an NPU, while copies through the runtime keep working.
//!
//! The fault must kill a process, so the test re-runs its own binary as a child (selected by an
//! environment variable) and checks from the parent that the child got as far as the host
//! dereference, with every runtime copy done, and died of SIGSEGV there.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use ascendless::runtime::memory::{self, AllocKind, HostRange, Limits};

const CHILD: &str = "ASCENDLESS_TEST_STRICT_CHILD";
const TEST_NAME: &str = "a_host_read_of_strict_device_memory_faults_but_runtime_copies_work";
const COPIES_DONE: &str = "runtime copies worked; dereferencing device memory now";
const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const NORMAL_ONLY: u32 = 2;
const HUGE_ONLY: u32 = 1;

/// The FFI layer's one unsafe step, as it will be taken for `aclrtMemcpy`.
fn vouch(r: HostRange) -> memory::RawSpan {
    // SAFETY: every host range in these tests is a live local buffer that outlives the
    // synchronous copy it is vouched for, and no reference to it is held meanwhile.
    unsafe { r.vouch() }
}

fn copy(dst: usize, src: usize, count: usize, kind: i32) {
    memory::plan_copy(dst, count, src, count, kind).unwrap().vouch(vouch).run();
}

/// What the child does: round-trip data through strict device memory with the runtime API,
/// report that, then read device memory the way buggy host code would.
fn child() -> ! {
    // A core dump of the expected crash would only litter the working directory.
    let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: setrlimit reads the struct we pass; it affects only this child process.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };

    let strict = Limits { capacity: 1 << 30, strict: true };
    let a = memory::alloc_device(0, 4096, NORMAL_ONLY, &strict).unwrap();
    let b = memory::alloc_device(0, 1 << 21, HUGE_ONLY, &strict).unwrap();
    let input = *b"through strict device memory";
    let n = input.len();
    copy(a, input.as_ptr() as usize, n, H2D);
    copy(b + 64, a, n, D2D);
    memory::plan_memset(a, 4096, 0, 4096).unwrap().vouch(vouch).run();
    let mut output = [0u8; 28];
    copy(output.as_mut_ptr() as usize, b + 64, n, D2H);
    assert_eq!(output, input);
    copy(output.as_mut_ptr() as usize, a, n, D2H);
    assert_eq!(output, [0; 28]);
    let host = memory::alloc_host(4096).unwrap();
    copy(host, b + 64, n, D2H);
    // SAFETY: pinned host memory stays host-accessible in strict mode: a live, page-sized,
    // readable allocation.
    let first = unsafe { std::ptr::read_volatile(host as *const u8) };
    assert_eq!(first, b't');
    memory::free(host, AllocKind::Host).unwrap();

    println!("{COPIES_DONE}");
    std::io::stdout().flush().unwrap();
    // SAFETY: deliberately not sound: this is the bug strict mode exists to catch. `a` is a live
    // allocation mapped PROT_NONE, so the read faults and the process dies of SIGSEGV.
    let byte = unsafe { std::ptr::read_volatile(a as *const u8) };
    println!("read {byte} from strict device memory without a fault");
    std::process::exit(0);
}

#[test]
fn a_host_read_of_strict_device_memory_faults_but_runtime_copies_work() {
    if std::env::var_os(CHILD).is_some() {
        child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains(COPIES_DONE), "the child failed before the host read:\n{stdout}\n{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGSEGV),
        "child status {:?}:\n{stdout}\n{stderr}",
        out.status
    );
}

#[test]
fn without_strict_mode_device_memory_is_plain_host_memory() {
    let relaxed = Limits { capacity: 1 << 30, strict: false };
    let a = memory::alloc_device(1, 4096, NORMAL_ONLY, &relaxed).unwrap();
    let input = *b"visible";
    copy(a, input.as_ptr() as usize, input.len(), H2D);
    // SAFETY: without strict mode the device allocation is a live read-write mapping of 4096
    // bytes; nothing else writes it meanwhile.
    let seen = unsafe { std::slice::from_raw_parts(a as *const u8, input.len()) }.to_vec();
    assert_eq!(seen, input);
    memory::free(a, AllocKind::Device).unwrap();
}
