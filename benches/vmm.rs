//! Shareable-handle benchmark: importing another process's physical memory
//! (`aclrtMemImportFromShareableHandle` + `aclrtReserveMemAddress` + `aclrtMapMem`) and touching
//! every page of it once, against the floor of the same work: `mmap` of a fresh memfd of the
//! same size and the same first touch. The ratio is the price of the runtime's import path
//! (broker round trip, descriptor passing, reservation, registry) over the kernel's own cost of
//! faulting the pages in; the target is at most 1.5x.
//!
//! The exporter is this binary run again as a child; each repetition imports a fresh allocation
//! so that every first touch really allocates pages, as the memfd baseline does.
//!
//! `cargo bench --bench vmm` measures 1 GiB three times each; under `cargo test` it runs once
//! with 64 MiB to prove the benchmark still works.

use std::ffi::c_void;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::location::aclrtMemLocation;
use ascendless::ffi::acl_rt::vmm::*;

const ROLE: &str = "ASCENDLESS_VMM_BENCH_EXPORTER";
const PAGE: usize = 4096;

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

fn prop() -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: 0,
        allocationType: 0,
        memAttr: 5,
        location: aclrtMemLocation { id: 0, r#type: 1 },
        reserve: 0,
    }
}

/// Writes one byte in every page of `[p, p + len)`.
///
/// # Safety
/// The range is mapped writable.
unsafe fn touch(p: *mut u8, len: usize) {
    for off in (0..len).step_by(PAGE) {
        // SAFETY: inside the writable range, by the caller's contract.
        unsafe { p.add(off).write_volatile(1) };
    }
}

/// The exporter: for each "new" line, a fresh allocation exported without pid validation (the
/// previous one freed); prints the shareable handle.
fn exporter(size: usize) {
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let mut last: aclrtDrvMemHandle = null_mut();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        if line.unwrap() != "new" {
            break;
        }
        if !last.is_null() {
            check(aclrtFreePhysical(last), "aclrtFreePhysical");
        }
        let mut h = null_mut();
        // SAFETY: valid pointers.
        check(unsafe { aclrtMallocPhysical(&mut h, size, &prop(), 0) }, "aclrtMallocPhysical");
        let mut id = 0u64;
        // SAFETY: valid out-pointer.
        check(
            unsafe {
                aclrtMemExportToShareableHandle(h, 0, ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, &mut id)
            },
            "aclrtMemExportToShareableHandle",
        );
        last = h;
        writeln!(out.lock(), "{id}").unwrap();
    }
}

struct Exporter {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Exporter {
    fn start(size: usize) -> Exporter {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(ROLE, size.to_string())
            .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Exporter { child, input, output }
    }

    fn fresh(&mut self) -> u64 {
        writeln!(self.input, "new").unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        line.trim().parse().unwrap()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Import + reserve + map + first touch of `size` bytes; the time, everything released after.
fn import_and_touch(id: u64, size: usize) -> Duration {
    let t = Instant::now();
    let mut h = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtMemImportFromShareableHandle(id, 0, &mut h) }, "aclrtMemImportFromShareableHandle");
    let mut va: *mut c_void = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtReserveMemAddress(&mut va, size, 0, null_mut(), 0) }, "aclrtReserveMemAddress");
    check(aclrtMapMem(va, size, 0, h, 0), "aclrtMapMem");
    // SAFETY: just mapped read-write for `size` bytes.
    unsafe { touch(va.cast(), size) };
    let elapsed = t.elapsed();
    check(aclrtUnmapMem(va), "aclrtUnmapMem");
    check(aclrtReleaseMemAddress(va), "aclrtReleaseMemAddress");
    check(aclrtFreePhysical(h), "aclrtFreePhysical");
    elapsed
}

/// `memfd_create` + `ftruncate` + `mmap` + first touch of `size` bytes.
fn memfd_and_touch(size: usize) -> Duration {
    let t = Instant::now();
    // SAFETY: a NUL-terminated name; the descriptor is closed below.
    let fd = unsafe { libc::memfd_create(c"bench".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0);
    // SAFETY: an open descriptor.
    assert_eq!(unsafe { libc::ftruncate(fd, size as libc::off_t) }, 0);
    // SAFETY: a fresh shared mapping of the whole file.
    let p =
        unsafe { libc::mmap(null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: just mapped read-write for `size` bytes.
    unsafe { touch(p.cast(), size) };
    let elapsed = t.elapsed();
    // SAFETY: our own mapping and descriptor.
    unsafe {
        libc::munmap(p, size);
        libc::close(fd);
    }
    elapsed
}

fn main() {
    if let Ok(size) = std::env::var(ROLE) {
        exporter(size.parse().unwrap());
        return;
    }
    let full = std::env::args().any(|a| a == "--bench");
    let (size, reps) = if full { (1usize << 30, 3) } else { (64 << 20, 1) };
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let mut exporter = Exporter::start(size);
    let mut vmm = Vec::new();
    let mut base = Vec::new();
    for _ in 0..reps {
        base.push(memfd_and_touch(size));
        let id = exporter.fresh();
        vmm.push(import_and_touch(id, size));
    }
    vmm.sort();
    base.sort();
    let (v, b) = (vmm[reps / 2], base[reps / 2]);
    println!(
        "shareable handle import + map + first touch of {} MiB: {:.1} ms; memfd mmap + first touch: {:.1} ms; \
         ratio {:.2}x (target <= 1.5x; median of {reps})",
        size >> 20,
        v.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        v.as_secs_f64() / b.as_secs_f64()
    );
}
