//! Timing, percentiles, CPU time and the progress line.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One measured case: what moved, how fast, how long each call took, what CPU it cost.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub name: String,
    pub ops: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// Median and 99th percentile of the per-call (or per-round-trip) times, microseconds.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// User + system CPU seconds of every process doing the work.
    pub cpu_s: f64,
    /// A remark (for instance the transport the engine reported).
    pub note: String,
}

impl Figures {
    pub fn gbps(&self) -> Option<f64> {
        (self.bytes > 0 && self.seconds > 0.0).then(|| self.bytes as f64 / self.seconds / 1e9)
    }
    pub fn p50(&self) -> Option<f64> {
        self.p50_us
    }
    pub fn p99(&self) -> Option<f64> {
        self.p99_us
    }
    /// Sets the percentiles from per-call times in microseconds.
    pub fn latencies(&mut self, mut lat: Vec<f64>) {
        lat.sort_by(f64::total_cmp);
        let at =
            |p: f64| (!lat.is_empty()).then(|| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)]);
        self.p50_us = at(0.5);
        self.p99_us = at(0.99);
    }
    pub fn cpu_s_per_gb(&self) -> Option<f64> {
        (self.bytes > 0).then(|| self.cpu_s / (self.bytes as f64 / 1e9))
    }
    pub fn cpu_us_per_op(&self) -> Option<f64> {
        (self.ops > 0).then(|| self.cpu_s * 1e6 / self.ops as f64)
    }
}

/// One case measured in several rounds: what moved and what it cost summed over the rounds,
/// the percentiles the median of the rounds' (`None` without rounds).
pub fn merged(rounds: &[Figures]) -> Option<Figures> {
    let first = rounds.first()?;
    let median = |f: fn(&Figures) -> Option<f64>| {
        let mut v: Vec<f64> = rounds.iter().filter_map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    Some(Figures {
        name: first.name.clone(),
        ops: rounds.iter().map(|f| f.ops).sum(),
        bytes: rounds.iter().map(|f| f.bytes).sum(),
        seconds: rounds.iter().map(|f| f.seconds).sum(),
        p50_us: median(Figures::p50),
        p99_us: median(Figures::p99),
        cpu_s: rounds.iter().map(|f| f.cpu_s).sum(),
        note: first.note.clone(),
    })
}

/// CPU seconds (user + system) of this process and of its waited-for children.
#[derive(Debug, Clone, Copy)]
pub struct Cpu {
    own: f64,
    children: f64,
}

fn rusage(who: i32) -> f64 {
    // SAFETY: getrusage fills a zeroed struct it is handed.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

impl Cpu {
    pub fn now() -> Cpu {
        Cpu { own: rusage(libc::RUSAGE_SELF), children: rusage(libc::RUSAGE_CHILDREN) }
    }
    /// CPU seconds of this process since it started.
    pub fn since_zero(self) -> f64 {
        self.own
    }
    /// CPU seconds since `self`, of this process and of the children reaped meanwhile.
    pub fn since(self) -> f64 {
        let n = Cpu::now();
        (n.own - self.own) + (n.children - self.children)
    }
}

/// Runs `threads` threads for `duration` seconds; each builds its operation with `setup(i)`
/// (which returns bytes moved per call), warms it up, then calls it repeatedly, timing every
/// call. CPU time covers this process and the children it reaps meanwhile.
pub fn timed<S, O>(name: &str, threads: usize, duration: f64, setup: S) -> Figures
where
    S: Fn(usize) -> O + Sync,
    O: FnMut() -> u64,
{
    let limit = Duration::from_secs_f64(duration);
    let barrier = Barrier::new(threads + 1);
    let (cpu, start, results) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (setup, barrier) = (&setup, &barrier);
                s.spawn(move || {
                    let mut op = setup(i);
                    let warm = Instant::now();
                    for _ in 0..10 {
                        op();
                        if warm.elapsed() > limit / 10 {
                            break;
                        }
                    }
                    barrier.wait();
                    let start = Instant::now();
                    let mut lat = Vec::new();
                    let mut bytes = 0;
                    while start.elapsed() < limit || lat.len() < 3 {
                        let t = Instant::now();
                        bytes += op();
                        lat.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                    (lat, bytes)
                })
            })
            .collect();
        barrier.wait();
        let (cpu, start) = (Cpu::now(), Instant::now());
        let results: Vec<_> =
            handles.into_iter().map(|h| h.join().expect("a benchmark thread panicked")).collect();
        (cpu, start, results)
    });
    let seconds = start.elapsed().as_secs_f64();
    let cpu_s = cpu.since();
    let mut all = Vec::new();
    let mut bytes = 0;
    for (lat, b) in results {
        all.extend(lat);
        bytes += b;
    }
    let mut f =
        Figures { name: name.into(), ops: all.len() as u64, bytes, seconds, cpu_s, ..Figures::default() };
    f.latencies(all);
    f
}

/// A progress line on stderr for runs expected to last more than about two seconds.
pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    pub fn start(label: &str, expected_s: f64) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = (expected_s > 2.0).then(|| {
            let (stop, label) = (Arc::clone(&stop), label.to_owned());
            ascendless::sync::spawn_named("bench-progress", move || {
                let start = Instant::now();
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    let e = start.elapsed().as_secs_f64();
                    if e >= 1.0 && (e * 10.0) as u64 % 5 == 0 {
                        let pct = (e / expected_s * 100.0).min(99.0);
                        eprint!("\r{label}: {e:5.1} s of about {expected_s:.0} s ({pct:3.0}%)   ");
                        let _ = std::io::stderr().flush();
                        shown = true;
                    }
                }
                if shown {
                    eprint!("\r{:76}\r", "");
                }
            })
            .expect("cannot start the progress thread")
        });
        Progress { stop, thread }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
