//! Capture benchmark: replaying a captured graph of 100 small copies (`aclmdlRIExecuteAsync`,
//! then `aclrtSynchronizeStream`) against issuing the same 100 copies live
//! (`aclrtMemcpyAsync` x 100, then `aclrtSynchronizeStream`), the two measured alternately,
//! round by round, in the same run. Target ratio (replay / live) <= 0.5x: a replay is one
//! stream task that runs the recorded copies in order, with no per-copy checks or queue
//! hand-offs.
//!
//! `cargo bench --bench capture` prints the figures; under `cargo test` (no `--bench`
//! argument) it runs a few rounds only, to prove the benchmark still works.

use std::ffi::c_void;
use std::ptr::null_mut;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::capture::{
    aclmdlRICaptureBegin, aclmdlRICaptureEnd, aclmdlRIDestroy, aclmdlRIExecuteAsync,
};
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::memory::{
    aclrtFree, aclrtFreeHost, aclrtMalloc, aclrtMallocHost, aclrtMemcpy, aclrtMemcpyAsync,
};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};

const COPIES: usize = 100;
const BLOCK: usize = 64;
const H2D: i32 = 1;
const D2H: i32 = 2;

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

#[path = "common/paired.rs"]
mod paired;
use paired::{measure_pair, micros};

/// Queues the 100 copies: block `i` of `host` to block `i` of `dev`.
fn copies(host: *mut c_void, dev: *mut c_void, stream: *mut c_void) {
    for i in 0..COPIES {
        // SAFETY: both buffers hold COPIES * BLOCK bytes.
        let rc = unsafe {
            aclrtMemcpyAsync(
                dev.cast::<u8>().add(i * BLOCK).cast(),
                BLOCK,
                host.cast::<u8>().add(i * BLOCK).cast(),
                BLOCK,
                H2D,
                stream,
            )
        };
        check(rc, "aclrtMemcpyAsync");
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let reps = if full { 5_000 } else { 5 };
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let (mut stream, mut host, mut dev) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtMallocHost(&mut host, COPIES * BLOCK), "aclrtMallocHost");
        check(aclrtMalloc(&mut dev, COPIES * BLOCK, 0), "aclrtMalloc");
        std::ptr::write_bytes(host.cast::<u8>(), 0xA5, COPIES * BLOCK);
    }
    check(aclmdlRICaptureBegin(stream, 0), "aclmdlRICaptureBegin");
    copies(host, dev, stream);
    let mut model = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclmdlRICaptureEnd(stream, &mut model) }, "aclmdlRICaptureEnd");
    let (s, h, d, m) = (stream as usize, host as usize, dev as usize, model as usize);

    let (replay, live) = measure_pair(
        reps,
        reps.min(50),
        || {
            check(aclmdlRIExecuteAsync(m as *mut c_void, s as *mut c_void), "aclmdlRIExecuteAsync");
            check(aclrtSynchronizeStream(s as *mut c_void), "aclrtSynchronizeStream");
        },
        || {
            copies(h as *mut c_void, d as *mut c_void, s as *mut c_void);
            check(aclrtSynchronizeStream(s as *mut c_void), "aclrtSynchronizeStream");
        },
    );
    let ratio = replay.p50.as_secs_f64() / live.p50.as_secs_f64().max(1e-9);
    println!(
        "{COPIES} copies of {BLOCK} B H2D then synchronise: a captured graph replayed, against the copies issued live:"
    );
    println!(
        "  replay p50 {:>7.2} us  p99 {:>7.2} us | live p50 {:>7.2} us  p99 {:>7.2} us | ratio p50 {ratio:.2}x (target <= 0.5x)",
        micros(replay.p50),
        micros(replay.p99),
        micros(live.p50),
        micros(live.p99),
    );

    // The replays copied every byte.
    // SAFETY: `host` is pinned memory of COPIES * BLOCK bytes, no copy in flight.
    unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0x3C, COPIES * BLOCK) };
    check(aclmdlRIExecuteAsync(model, stream), "aclmdlRIExecuteAsync");
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    let mut back = vec![0u8; COPIES * BLOCK];
    // SAFETY: both sides hold COPIES * BLOCK bytes.
    check(unsafe { aclrtMemcpy(back.as_mut_ptr().cast(), back.len(), dev, back.len(), D2H) }, "aclrtMemcpy");
    assert!(back.iter().all(|&b| b == 0x3C), "a replay missed bytes");

    check(aclmdlRIDestroy(model), "aclmdlRIDestroy");
    check(aclrtFree(dev), "aclrtFree");
    check(aclrtFreeHost(host), "aclrtFreeHost");
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
    check(aclrtResetDevice(0), "aclrtResetDevice");
}
