//! Handle lookups from many threads: the handle table (generation-checked slots behind an
//! `RwLock`) against the design it replaced (one `Mutex<BTreeMap>` per kind), kept below as the
//! baseline and measured in the same run.
//!
//! Every record, wait, synchronise and engine call resolves a handle, so lookups from threads
//! running in parallel must not queue behind one lock. `cargo bench --bench handles` prints
//! lookups per second at 1 and N threads for both designs and the ratios; under `cargo test`
//! (no `--bench` argument) it runs a few milliseconds per case only, to prove it still works.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use ascendless::handle::{HandleKind, HandleTable};

/// Live objects the threads resolve, round robin.
const LIVE: usize = 64;

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

/// Total lookups per second of `threads` threads calling `lookup` for `run`.
fn lookups_per_s(threads: usize, run: Duration, lookup: impl Fn(usize) -> bool + Sync) -> f64 {
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let start = Barrier::new(threads + 1);
    let elapsed = std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, total, start, lookup) = (&stop, &total, &start, &lookup);
            s.spawn(move || {
                start.wait();
                let mut n = 0u64;
                let mut i = t * 7;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        assert!(black_box(lookup(i % LIVE)));
                        i += 1;
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

    let table: HandleTable<u64> = HandleTable::new(HandleKind::Stream);
    let handles: Vec<u64> = (0..LIVE as u64).map(|i| table.insert(i)).collect();
    let baseline = MutexTable { inner: Mutex::new(BTreeMap::new()) };
    (0..LIVE as u64).for_each(|i| baseline.insert(i + 1, i));

    let slots = |i: usize| table.get(handles[i]).is_ok_and(|v| *v == i as u64);
    let mutex = |i: usize| baseline.get(i as u64 + 1).is_some_and(|v| *v == i as u64);

    println!("handle lookups per second ({cores} cores; {many} threads in the contended case)");
    println!("{:<24} {:>14} {:>14} {:>10}", "design", "1 thread", format!("{many} threads"), "N / 1");
    let mut rates = Vec::new();
    for (name, lookup) in
        [("Mutex<BTreeMap> (before)", &mutex as &(dyn Fn(usize) -> bool + Sync)), ("RwLock slots", &slots)]
    {
        let one = lookups_per_s(1, run, lookup);
        let n = lookups_per_s(many, run, lookup);
        println!("{name:<24} {one:>14.0} {n:>14.0} {:>10.2}", n / one);
        rates.push(n);
    }
    println!("ratio slots / mutex at {many} threads: {:.2}", rates[1] / rates[0]);
}
