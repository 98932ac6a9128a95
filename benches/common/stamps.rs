//! Time stamps taken by stream tasks after each round trip of the ping-pong benches (`notify`,
//! `ipc_event`), as cheaply as the raw baseline takes its own: one clock read and one store
//! into a slot made in advance. The task (`|_| { stamps::take(); Ok(()) }`) captures nothing,
//! so its box holds no data: queuing it allocates nothing and running it frees nothing (a captured `Arc` made every round trip
//! pay a free on the stream's thread that the baseline does not pay).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Round trips a round may time.
pub const MAX: usize = 1000;

static ORIGIN: OnceLock<Instant> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);
static AT: [AtomicU64; MAX] = [const { AtomicU64::new(0) }; MAX];

/// Starts a round: the next stamp goes to the first slot.
pub fn start() {
    ORIGIN.get_or_init(Instant::now);
    NEXT.store(0, Ordering::Relaxed);
}

/// Takes the next stamp: what the stamping task (a closure capturing nothing) calls.
pub fn take() {
    // One thread stamps (a stream's worker): a plain load and store, no locked instruction.
    let i = NEXT.load(Ordering::Relaxed);
    NEXT.store(i + 1, Ordering::Relaxed);
    let i = i.min(MAX - 1);
    AT[i].store(ORIGIN.get().unwrap().elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// The times between the round's consecutive stamps.
pub fn intervals() -> Vec<Duration> {
    let n = NEXT.load(Ordering::Relaxed).min(MAX);
    let ns: Vec<u64> = AT[..n].iter().map(|a| a.load(Ordering::Relaxed)).collect();
    ns.windows(2).map(|w| Duration::from_nanos(w[1] - w[0])).collect()
}
