//! Host-function benchmark: the round trip of `aclrtLaunchHostFunc` (launch an empty host
//! function, then `aclrtSynchronizeStream`) against a bare cross-thread hand-off measured in
//! the same run, call by call alternately: a boxed job handed to a waiting thread, run there,
//! and its completion waited for. Target ratio <= 1.3x. Also, for information, the round trip
//! of a blocking `aclrtLaunchCallback` run by a report thread (two hand-offs: stream worker to
//! report thread and back).
//!
//! `cargo bench --bench host_func` prints the figures; under `cargo test` (no `--bench`
//! argument) it runs a few iterations only, to prove the benchmark still works.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::callback::{
    aclrtCallbackBlockType, aclrtLaunchCallback, aclrtLaunchHostFunc, aclrtProcessReport,
    aclrtSubscribeReport, aclrtUnSubscribeReport,
};
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

static RUNS: AtomicU64 = AtomicU64::new(0);

extern "C-unwind" fn empty(_: *mut c_void) {
    RUNS.fetch_add(1, Ordering::Relaxed);
}

type Job = Box<dyn FnOnce() + Send>;
/// The pending job, jobs done, and whether to stop; with its condition variable.
type Shared = (Mutex<(Option<Job>, u64, bool)>, Condvar);

/// The baseline: one thread waiting for jobs; `run` hands it one and waits until it is done.
struct Handoff {
    shared: Arc<Shared>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl Handoff {
    fn new() -> Handoff {
        let shared: Arc<Shared> = Arc::new((Mutex::new((None, 0, false)), Condvar::new()));
        let s = Arc::clone(&shared);
        let worker = std::thread::spawn(move || {
            let (lock, cv) = &*s;
            let mut g = lock.lock().unwrap();
            loop {
                while g.0.is_none() && !g.2 {
                    g = cv.wait(g).unwrap();
                }
                if g.2 {
                    return;
                }
                let job = g.0.take().unwrap();
                drop(g);
                job();
                g = lock.lock().unwrap();
                g.1 += 1;
                cv.notify_all();
            }
        });
        Handoff { shared, worker: Some(worker) }
    }

    fn run(&self, job: Job) {
        let (lock, cv) = &*self.shared;
        let mut g = lock.lock().unwrap();
        let target = g.1 + 1;
        g.0 = Some(job);
        cv.notify_all();
        while g.1 < target {
            g = cv.wait(g).unwrap();
        }
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        self.shared.0.lock().unwrap().2 = true;
        self.shared.1.notify_all();
        self.worker.take().unwrap().join().unwrap();
    }
}

#[path = "common/paired.rs"]
mod paired;
use paired::{Stats, measure_pair, micros};

fn line(name: &str, s: &Stats, base: &Stats) {
    println!(
        "  {name:<34} p50 {:>7.2} us  p99 {:>7.2} us | hand-off p50 {:>6.2} us  p99 {:>7.2} us | ratio p50 {:.2}x",
        micros(s.p50),
        micros(s.p99),
        micros(base.p50),
        micros(base.p99),
        s.p50.as_secs_f64() / base.p50.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let reps = if full { 20_000 } else { 5 };
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    check(unsafe { aclrtCreateStream(&mut stream) }, "aclrtCreateStream");
    let stream_addr = stream as usize;
    let handoff = Handoff::new();
    let f: fn(*mut c_void) = |_| {
        RUNS.fetch_add(1, Ordering::Relaxed);
    };

    println!(
        "host work round trip (launch + wait for it), against a bare cross-thread hand-off of a boxed job:"
    );
    let (host_func, base) = measure_pair(
        reps,
        reps.min(100),
        || {
            let s = stream_addr as *mut c_void;
            check(aclrtLaunchHostFunc(s, Some(empty), null_mut()), "aclrtLaunchHostFunc");
            check(aclrtSynchronizeStream(s), "aclrtSynchronizeStream");
        },
        || handoff.run(Box::new(move || f(null_mut()))),
    );
    line("aclrtLaunchHostFunc + synchronize", &host_func, &base);

    // A blocking callback through a report thread: worker -> report thread -> worker -> caller.
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let reporter = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // SAFETY: no preconditions.
            tx.send(unsafe { libc::pthread_self() } as u64).unwrap();
            while !stop.load(Ordering::SeqCst) {
                let _ = aclrtProcessReport(50);
            }
        })
    };
    let tid = rx.recv().unwrap();
    check(aclrtSubscribeReport(tid, stream), "aclrtSubscribeReport");
    let (callback, base) = measure_pair(
        reps,
        reps.min(100),
        || {
            let s = stream_addr as *mut c_void;
            let block = aclrtCallbackBlockType::ACL_CALLBACK_BLOCK as i32;
            check(aclrtLaunchCallback(Some(empty), null_mut(), block, s), "aclrtLaunchCallback");
            check(aclrtSynchronizeStream(s), "aclrtSynchronizeStream");
        },
        || handoff.run(Box::new(move || f(null_mut()))),
    );
    line("aclrtLaunchCallback (block) + sync", &callback, &base);
    check(aclrtUnSubscribeReport(tid, stream), "aclrtUnSubscribeReport");
    stop.store(true, Ordering::SeqCst);
    reporter.join().unwrap();
    drop(handoff);
    assert!(RUNS.load(Ordering::Relaxed) >= 4 * reps as u64);
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
    check(aclrtResetDevice(0), "aclrtResetDevice");
}
