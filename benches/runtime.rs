//! Runtime benchmark: `aclrtMemcpy` and `aclrtMemcpyAsync`+synchronise throughput and latency
//! against plain `memcpy` measured in the same run, and the overhead of one stream task
//! (enqueue + synchronise) against a bare cross-thread hand-off, and `aclrtMemcpyBatch` of
//! 4096 blocks of 4 KiB against a loop of `memcpy` of the same blocks.
//!
//! `cargo bench --bench runtime` prints the table; under `cargo test` (no `--bench` argument)
//! it runs a few iterations of each case only, to prove the benchmark still works.

use std::ffi::c_void;
use std::hint::black_box;
use std::ptr::null_mut;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

// The alternating timer only (its Stats are the capture and host_func benches').
#[allow(dead_code)]
#[path = "common/paired.rs"]
mod paired;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::event::{aclrtCreateEvent, aclrtDestroyEvent, aclrtRecordEvent};
use ascendless::ffi::acl_rt::location::aclrtMemLocation;
use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtMalloc, aclrtMemcpy, aclrtMemcpyAsync};
use ascendless::ffi::acl_rt::memory_batch::{aclrtMemcpyBatch, aclrtMemcpyBatchAttr};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};

const H2D: i32 = 1;
const D2H: i32 = 2;

struct Mode {
    full: bool,
}

impl Mode {
    /// Repetitions for a copy of `size` bytes: about 256 MiB moved per case in a full run.
    fn reps(&self, size: usize) -> usize {
        if self.full { ((256 << 20) / size).clamp(20, 200_000) } else { 3 }
    }
}

/// Median and 99th percentile of per-call times, and the throughput of the whole run.
struct Stats {
    p50: Duration,
    p99: Duration,
    gbps: f64,
}

fn measure(reps: usize, bytes: usize, mut op: impl FnMut()) -> Stats {
    for _ in 0..reps.min(10) {
        op(); // warm-up: page faults, caches
    }
    let mut times = Vec::with_capacity(reps);
    let start = Instant::now();
    for _ in 0..reps {
        let t = Instant::now();
        op();
        times.push(t.elapsed());
    }
    let total = start.elapsed();
    times.sort();
    Stats {
        p50: times[times.len() / 2],
        p99: times[(times.len() * 99 / 100).min(times.len() - 1)],
        gbps: (bytes * reps) as f64 / total.as_secs_f64() / 1e9,
    }
}

/// As [`measure`] for two operations run alternately, call by call (`common/paired.rs`).
fn measure_pair(reps: usize, bytes: usize, a: impl FnMut(), b: impl FnMut()) -> (Stats, Stats) {
    let (ta, tb) = paired::alternate(reps, reps.min(5), a, b);
    let stats = |mut times: Vec<Duration>| {
        let total: Duration = times.iter().sum();
        times.sort();
        Stats {
            p50: times[times.len() / 2],
            p99: times[(times.len() * 99 / 100).min(times.len() - 1)],
            gbps: (bytes * reps) as f64 / total.as_secs_f64() / 1e9,
        }
    };
    (stats(ta), stats(tb))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

fn copies(mode: &Mode) {
    let sizes: &[usize] =
        if mode.full { &[64, 4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20] } else { &[64, 1 << 20] };
    println!(
        "copies: each row against plain memcpy of the same size in this run (ratio = ascendless / memcpy)"
    );
    println!(
        "{:>9} | {:>9} | {:>22} | {:>22} | {:>22} | {:>13} {:>13}",
        "size",
        "memcpy",
        "aclrtMemcpy H2D",
        "aclrtMemcpy D2H",
        "MemcpyAsync+sync H2D",
        "p50 us memcpy",
        "p50 us H2D"
    );
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtCreateStream(&mut stream) }, "aclrtCreateStream");
    for &size in sizes {
        let reps = mode.reps(size);
        let src = vec![7u8; size];
        let mut dst = vec![0u8; size];
        let mut dev: *mut c_void = null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { aclrtMalloc(&mut dev, size, 2) }, "aclrtMalloc");
        let base = measure(reps, size, || {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        });
        let h2d = measure(reps, size, || {
            // SAFETY: live buffers of `size` bytes.
            check(unsafe { aclrtMemcpy(dev, size, src.as_ptr().cast(), size, H2D) }, "aclrtMemcpy");
        });
        let d2h = measure(reps, size, || {
            // SAFETY: live buffers of `size` bytes.
            check(unsafe { aclrtMemcpy(dst.as_mut_ptr().cast(), size, dev, size, D2H) }, "aclrtMemcpy");
        });
        let asy = measure(reps, size, || {
            // SAFETY: live buffers of `size` bytes, synchronised before they go.
            let rc = unsafe { aclrtMemcpyAsync(dev, size, src.as_ptr().cast(), size, H2D, stream) };
            check(rc, "aclrtMemcpyAsync");
            check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
        });
        let cell = |s: &Stats| format!("{:7.2} GB/s ({:4.2}x)", s.gbps, s.gbps / base.gbps);
        println!(
            "{:>9} | {:>4.2} GB/s | {:>22} | {:>22} | {:>22} | {:>13.3} {:>13.3}",
            human(size),
            base.gbps,
            cell(&h2d),
            cell(&d2h),
            cell(&asy),
            micros(base.p50),
            micros(h2d.p50)
        );
        if size == 64 {
            println!(
                "{:>9}   latency p50/p99 us: memcpy {:.3}/{:.3}, aclrtMemcpy {:.3}/{:.3}, async+sync {:.3}/{:.3}",
                "",
                micros(base.p50),
                micros(base.p99),
                micros(h2d.p50),
                micros(h2d.p99),
                micros(asy.p50),
                micros(asy.p99)
            );
        }
        check(aclrtFree(dev), "aclrtFree");
    }
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
}

/// The least a stream task can cost: hand a job to another thread and wait for it to finish.
fn handoff_baseline(reps: usize) -> Stats {
    type Slot = (Mutex<(u64, u64)>, Condvar);
    let shared: Arc<Slot> = Arc::new((Mutex::new((0, 0)), Condvar::new()));
    let worker = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (lock, cv) = &*shared;
            let mut g = lock.lock().unwrap();
            loop {
                while g.1 == g.0 {
                    g = cv.wait(g).unwrap();
                }
                if g.0 == u64::MAX {
                    return;
                }
                g.1 = g.0;
                cv.notify_all();
            }
        })
    };
    let (lock, cv) = &*shared;
    let stats = measure(reps, 0, || {
        let mut g = lock.lock().unwrap();
        g.0 += 1;
        cv.notify_all();
        while g.1 != g.0 {
            g = cv.wait(g).unwrap();
        }
    });
    lock.lock().unwrap().0 = u64::MAX;
    cv.notify_all();
    worker.join().unwrap();
    stats
}

fn task_overhead(mode: &Mode) {
    let reps = if mode.full { 20_000 } else { 3 };
    let base = handoff_baseline(reps);
    let mut stream = null_mut();
    let mut event = null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtCreateEvent(&mut event), "aclrtCreateEvent");
    }
    let task = measure(reps, 0, || {
        check(aclrtRecordEvent(event, stream), "aclrtRecordEvent");
        check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    });
    println!();
    println!(
        "stream task overhead (enqueue one empty task + synchronise), against a bare cross-thread hand-off:"
    );
    println!(
        "  task p50 {:.2} us, p99 {:.2} us | hand-off p50 {:.2} us, p99 {:.2} us | ratio p50 {:.2}x",
        micros(task.p50),
        micros(task.p99),
        micros(base.p50),
        micros(base.p99),
        task.p50.as_secs_f64() / base.p50.as_secs_f64().max(1e-9)
    );
    check(aclrtDestroyEvent(event), "aclrtDestroyEvent");
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
}

/// `aclrtMemcpyBatch` of 4096 blocks of 4 KiB (the synchronous form's most), in a shuffled
/// order, host to device and device to host, against a loop of `memcpy` of the same blocks
/// between the same buffers (device memory is host memory here, outside strict mode).
fn batch(mode: &Mode) {
    const BLOCKS: usize = 4096;
    const BLOCK: usize = 4 << 10;
    let total = BLOCKS * BLOCK;
    let reps = if mode.full { 200 } else { 3 };
    let mut host = vec![3u8; total];
    let mut dev: *mut c_void = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtMalloc(&mut dev, total, 2) }, "aclrtMalloc");
    // The same scattered order for every case: block i goes to block order[i].
    let mut order: Vec<usize> = (0..BLOCKS).collect();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..BLOCKS).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let host_at = |i: usize| host.as_ptr().wrapping_add(i * BLOCK) as *mut c_void;
    let dev_at = |i: usize| dev.wrapping_byte_add(order[i] * BLOCK);
    let h2d_dsts: Vec<*mut c_void> = (0..BLOCKS).map(dev_at).collect();
    let h2d_srcs: Vec<*mut c_void> = (0..BLOCKS).map(host_at).collect();
    let d2h_dsts = h2d_srcs.clone();
    let d2h_srcs = h2d_dsts.clone();
    let sizes = vec![BLOCK; BLOCKS];
    let maxs = vec![BLOCK; BLOCKS];
    let loc = |t: u32| aclrtMemLocation { id: 0, r#type: t };
    let to_dev = aclrtMemcpyBatchAttr { dstLoc: loc(1), srcLoc: loc(0), rsv: [0; 16] };
    let to_host = aclrtMemcpyBatchAttr { dstLoc: loc(0), srcLoc: loc(1), rsv: [0; 16] };
    let memcpy_loop = |dsts: &[*mut c_void], srcs: &[*mut c_void]| {
        for i in 0..BLOCKS {
            // SAFETY: both blocks lie inside live buffers of `total` bytes and do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(srcs[i].cast::<u8>(), dsts[i].cast::<u8>(), BLOCK) };
        }
        black_box(dsts.as_ptr());
    };
    let batch_call = |dsts: &[*mut c_void], srcs: &[*mut c_void], attr: &aclrtMemcpyBatchAttr| {
        let mut fail = 0usize;
        let mut idx = 0usize;
        // SAFETY: arrays of BLOCKS entries naming blocks of live buffers; the call only reads
        // the arrays.
        let rc = unsafe {
            aclrtMemcpyBatch(
                dsts.as_ptr().cast_mut(),
                maxs.as_ptr().cast_mut(),
                srcs.as_ptr().cast_mut(),
                sizes.as_ptr().cast_mut(),
                BLOCKS,
                std::ptr::from_ref(attr).cast_mut(),
                &mut idx,
                1,
                &mut fail,
            )
        };
        check(rc, "aclrtMemcpyBatch");
    };
    // The two sides alternate call by call, so load from other processes and the caches'
    // state weigh on both alike; the ratio compares medians.
    let (base_h2d, h2d) = measure_pair(
        reps,
        total,
        || memcpy_loop(&h2d_dsts, &h2d_srcs),
        || batch_call(&h2d_dsts, &h2d_srcs, &to_dev),
    );
    let (base_d2h, d2h) = measure_pair(
        reps,
        total,
        || memcpy_loop(&d2h_dsts, &d2h_srcs),
        || batch_call(&d2h_dsts, &d2h_srcs, &to_host),
    );
    // The fixed cost per block: a batch of 8-byte blocks moves next to nothing.
    let tiny = vec![8usize; BLOCKS];
    let overhead = measure(reps, BLOCKS * 8, || {
        let mut fail = 0usize;
        let mut idx = 0usize;
        // SAFETY: as `batch_call`, 8 bytes of each block.
        let rc = unsafe {
            aclrtMemcpyBatch(
                h2d_dsts.as_ptr().cast_mut(),
                maxs.as_ptr().cast_mut(),
                h2d_srcs.as_ptr().cast_mut(),
                tiny.as_ptr().cast_mut(),
                BLOCKS,
                std::ptr::from_ref(&to_dev).cast_mut(),
                &mut idx,
                1,
                &mut fail,
            )
        };
        check(rc, "aclrtMemcpyBatch");
    });
    black_box(&mut host);
    println!(
        "batch: aclrtMemcpyBatch of {BLOCKS} x {} against a loop of memcpy of the same blocks (shuffled)",
        human(BLOCK)
    );
    for (name, base, b) in [("H2D", &base_h2d, &h2d), ("D2H", &base_d2h, &d2h)] {
        println!(
            "  {name}: memcpy loop {:.2} GB/s (p50 {:.1} us) | aclrtMemcpyBatch {:.2} GB/s (p50 {:.1} us) | ratio (p50) {:.2}x",
            base.gbps,
            micros(base.p50),
            b.gbps,
            micros(b.p50),
            micros(base.p50) / micros(b.p50)
        );
    }
    println!(
        "  per block, checks and bookkeeping (a batch of {BLOCKS} x 8 B): p50 {:.0} ns",
        micros(overhead.p50) * 1000.0 / BLOCKS as f64
    );
    check(aclrtFree(dev), "aclrtFree");
}

fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

fn main() {
    let mode = Mode { full: std::env::args().any(|a| a == "--bench") };
    check(aclrtSetDevice(0), "aclrtSetDevice");
    copies(&mode);
    task_overhead(&mode);
    batch(&mode);
    check(aclrtResetDevice(0), "aclrtResetDevice");
}
