//! Handle lookups from many threads: the handle table (generation-checked slots in shards,
//! each behind its own `RwLock`) against the design it replaced (one `Mutex<BTreeMap>` per
//! kind), kept below as the baseline and measured in the same run.
//!
//! Every record, wait, synchronise and engine call resolves a handle, so lookups from threads
//! running in parallel must not queue behind one lock. `cargo bench --bench handles` prints
//! lookups per second at 1 and N threads for both designs and the ratios, for threads that
//! resolve their own objects (each thread records on its own stream) and for threads that all
//! resolve the same few (whose reference counts they then share, whatever the table). Under
//! `cargo test` (no `--bench` argument) it runs a few milliseconds per case only, to prove it
//! still works.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use ascendless::handle::{HandleKind, HandleTable};

/// Objects each thread resolves, round robin.
const PER_THREAD: usize = 4;

/// An object alone on its cache lines, so that the reference counts of different objects do
/// not share one (that would measure the objects, not the table).
#[repr(align(128))]
struct Object(u64);

/// The table before: ids in one ordered map behind one mutex.
struct MutexTable<T> {
    inner: Mutex<BTreeMap<u64, Arc<T>>>,
}

impl<T> MutexTable<T> {
    fn insert(&self, id: u64, value: T) {
        self.inner.lock().unwrap().insert(id, Arc::new(value));
    }

    fn get(&self, id: u64) -> Option<Arc<T>> {
        self.inner.lock().unwrap().get(&id).cloned()
    }
}

/// Total lookups per second of `threads` threads calling `lookup(thread, i)` for `run`.
fn lookups_per_s(threads: usize, run: Duration, lookup: &(dyn Fn(usize, usize) -> bool + Sync)) -> f64 {
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let start = Barrier::new(threads + 1);
    let elapsed = std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, total, start) = (&stop, &total, &start);
            s.spawn(move || {
                start.wait();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for i in 0..256 {
                        assert!(black_box(lookup(t, i)));
                    }
                    n += 256;
                }
                total.fetch_add(n, Ordering::Relaxed);
            });
        }
        start.wait();
        let began = Instant::now();
        std::thread::sleep(run);
        stop.store(true, Ordering::Relaxed);
        began.elapsed()
    });
    total.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let run = if full { Duration::from_millis(1000) } else { Duration::from_millis(5) };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let many = cores.max(2) * 2;

    // Each thread's objects are created together, as a thread creates its stream and events.
    let table: HandleTable<Object> = HandleTable::new(HandleKind::Stream);
    let baseline = MutexTable { inner: Mutex::new(BTreeMap::new()) };
    let mut handles = Vec::new();
    for i in 0..(many * PER_THREAD) as u64 {
        handles.push(table.insert(Object(i)));
        baseline.insert(i + 1, Object(i));
    }
    let own = |t: usize, i: usize| t * PER_THREAD + i % PER_THREAD;
    let shared = |_: usize, i: usize| i % PER_THREAD;
    let slots = |k: usize| table.get(handles[k]).is_ok_and(|v| v.0 == k as u64);
    let mutex = |k: usize| baseline.get(k as u64 + 1).is_some_and(|v| v.0 == k as u64);

    println!("handle lookups per second ({cores} cores, 1 thread and {many} threads)");
    println!("{:<54} {:>12} {:>12} {:>7}", "case", "1 thread", format!("{many} threads"), "N / 1");
    for (case, pick) in [
        ("each thread its own objects", &own as &(dyn Fn(usize, usize) -> usize + Sync)),
        ("every thread the same objects", &shared),
    ] {
        let mut at_many = Vec::new();
        for (design, get) in [
            ("Mutex<BTreeMap> (before)", &mutex as &(dyn Fn(usize) -> bool + Sync)),
            ("sharded RwLock slots", &slots),
        ] {
            let lookup = |t: usize, i: usize| get(pick(t, i));
            let one = lookups_per_s(1, run, &lookup);
            let n = lookups_per_s(many, run, &lookup);
            println!("{:<54} {one:>12.0} {n:>12.0} {:>7.2}", format!("{case}, {design}"), n / one);
            at_many.push(n);
        }
        println!("  ratio slots / mutex at {many} threads, {case}: {:.2}", at_many[1] / at_many[0]);
    }
    through_the_c_api(run, many);
}

/// The same question through the C edge: threads asking their own notifies for their ids
/// (`aclrtGetNotifyId`: panic boundary, handle resolve, checked out-parameter), at 1 and N
/// threads. N / 1 near the number of cores means lookups do not queue behind each other.
fn through_the_c_api(run: Duration, many: usize) {
    use ascendless::ffi::acl_rt::device::aclrtSetDevice;
    use ascendless::ffi::acl_rt::notify::{aclrtCreateNotify, aclrtDestroyNotify, aclrtGetNotifyId};
    assert_eq!(aclrtSetDevice(0), 0);
    // Handles cross threads as integers (the C caller's `void *`).
    let notifies: Vec<usize> = (0..many * PER_THREAD)
        .map(|_| {
            let mut n = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { aclrtCreateNotify(&mut n, 0) }, 0);
            n.expose_provenance()
        })
        .collect();
    let lookup = |t: usize, i: usize| {
        let n = std::ptr::with_exposed_provenance_mut(notifies[t * PER_THREAD + i % PER_THREAD]);
        let mut id = 0u32;
        // SAFETY: a live notify handle and a valid out-pointer.
        unsafe { aclrtGetNotifyId(n, &mut id) == 0 }
    };
    let one = lookups_per_s(1, run, &lookup);
    let n = lookups_per_s(many, run, &lookup);
    println!(
        "{:<54} {one:>12.0} {n:>12.0} {:>7.2}",
        "aclrtGetNotifyId, each thread its own notifies",
        n / one
    );
    for n in notifies {
        assert_eq!(aclrtDestroyNotify(std::ptr::with_exposed_provenance_mut(n)), 0);
    }
}
