//! Time stamps taken by stream tasks after each round trip of the ping-pong benches (`notify`,
//! `ipc_event`), as cheaply as the raw baseline takes its own: one clock read and one store
//! into a slot made in advance. The task (`|_| { stamps::take(); Ok(()) }`) captures nothing,
//! so its box holds no data: queuing it allocates nothing and running it frees nothing (a captured `Arc` made every round trip
//! pay a free on the stream's thread that the baseline does not pay).
//!
//! The CPU window of an exchange runs from the stamp after the warm-up to the last stamp (the
//! parent's), and in the child between tasks after the same round trips ([`mark_cpu_after`]);
//! the child prints its CPU time over the window as its last line ([`child_cpu_line`]), which
//! the parent reads ([`read_child_cpu`]) to make the [`Exchange`].

use std::io::BufRead;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::rounds::{Exchange, warm};

/// Round trips a round may time.
pub const MAX: usize = 1000;

static ORIGIN: OnceLock<Instant> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);
static AT: [AtomicU64; MAX] = [const { AtomicU64::new(0) }; MAX];
static MARK_AT: AtomicUsize = AtomicUsize::new(0);
static END_AT: AtomicUsize = AtomicUsize::new(0);
/// The CPU time of this process at the start and at the end of its window, in microseconds.
static CPU_US: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// Starts a round of `n` round trips: the next stamp goes to the first slot, and the one after
/// the warm-up and the last also take the CPU time.
pub fn start(n: usize) {
    ORIGIN.get_or_init(Instant::now);
    NEXT.store(0, Ordering::Relaxed);
    MARK_AT.store(warm(n).min(MAX - 1), Ordering::Relaxed);
    END_AT.store(n.clamp(1, MAX) - 1, Ordering::Relaxed);
}

/// Takes the next stamp: what the stamping task (a closure capturing nothing) calls.
pub fn take() {
    // One thread stamps (a stream's worker): a plain load and store, no locked instruction.
    let i = NEXT.load(Ordering::Relaxed);
    NEXT.store(i + 1, Ordering::Relaxed);
    let i = i.min(MAX - 1);
    AT[i].store(ORIGIN.get().unwrap().elapsed().as_nanos() as u64, Ordering::Relaxed);
    if i == MARK_AT.load(Ordering::Relaxed) {
        cpu_at::<0>();
    }
    if i == END_AT.load(Ordering::Relaxed) {
        cpu_at::<1>();
    }
}

/// Takes this process's CPU time at the start (`END` 0) or the end (1) of its window.
fn cpu_at<const END: usize>() {
    CPU_US[END].store(ascendless::sys::cpu_time().as_micros() as u64, Ordering::Relaxed);
}

/// Queues the start or the end of the child's CPU window on `stream` (a stream handle of the
/// C API) after its `done`-th round trip of `n`: after the warm-up's last and after the last.
pub fn mark_cpu_after(stream: *mut std::ffi::c_void, done: usize, n: usize) {
    let task: fn() = match done {
        d if d == warm(n) => cpu_at::<0>,
        d if d == n => cpu_at::<1>,
        _ => return,
    };
    let s = ascendless::runtime::context::stream(stream.addr() as u64).unwrap();
    s.submit(Box::new(move |_| {
        task();
        Ok(())
    }))
    .unwrap();
}

/// This process's CPU time over its window.
fn window_cpu() -> Duration {
    let [a, b] = [0, 1].map(|i| CPU_US[i].load(Ordering::Relaxed));
    Duration::from_micros(b.saturating_sub(a))
}

/// The child's last line: its CPU time over its window.
pub fn child_cpu_line() -> String {
    format!("cpu {}", window_cpu().as_micros())
}

/// Reads the child's [`child_cpu_line`], skipping the lines before it.
pub fn read_child_cpu(from: &mut impl BufRead) -> Duration {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(from.read_line(&mut line).unwrap() > 0, "the child ended without its CPU line");
        if let Some(us) = line.trim().strip_prefix("cpu ") {
            return Duration::from_micros(us.parse().unwrap());
        }
    }
}

/// The times between the round's consecutive stamps.
pub fn intervals() -> Vec<Duration> {
    let n = NEXT.load(Ordering::Relaxed).min(MAX);
    let ns: Vec<u64> = AT[..n].iter().map(|a| a.load(Ordering::Relaxed)).collect();
    ns.windows(2).map(|w| Duration::from_nanos(w[1] - w[0])).collect()
}

/// The round's exchange: its intervals, and the CPU of this process over its window and of the
/// child (`child_cpu`), with the wall time from the window's first stamp to its last.
pub fn exchange(child_cpu: Duration) -> Exchange {
    let n = NEXT.load(Ordering::Relaxed).min(MAX);
    let at = |i: usize| AT[i].load(Ordering::Relaxed);
    let mark = MARK_AT.load(Ordering::Relaxed).min(n.saturating_sub(1));
    let wall = Duration::from_nanos(at(n.saturating_sub(1)).saturating_sub(at(mark)));
    Exchange { times: intervals(), cpu: window_cpu() + child_cpu, wall }
}
