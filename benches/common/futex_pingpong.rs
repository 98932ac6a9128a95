//! The baselines of the cross-process ping-pong benchmarks (`notify`, `ipc_event`): two futex
//! words in a shared page. [`Wait::Spin`] spins first and then sleeps on the futex (the other
//! side making the wake system call only when someone sleeps); [`Wait::Sleep`] sleeps in
//! `FUTEX_WAIT` at once, as a program that does not spin does (issue 37: comparing spin against
//! spin hid what the library's waits cost when the machine is busy). The parent process runs
//! [`raw_parent`], which starts the benchmark's own executable as the child with
//! `ROLE=<raw|sleep>:<file>:<rounds>`; the child's `main` hands that to [`raw_child`].

use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ascendless::sys::futex;
use ascendless::sys::mapping::Mapping;
use ascendless::sys::memfd::MemFd;

use super::rounds::{Exchange, warm};

/// How the baseline's sides wait for each other.
#[derive(Clone, Copy, PartialEq)]
pub enum Wait {
    /// Spin [`SPINS`] pauses, then sleep on the futex.
    Spin,
    /// Sleep on the futex at once.
    Sleep,
}

/// Spins before sleeping on the futex, for [`Wait::Spin`] (tens of us on some CPUs; the
/// library's waits spin 4 us, `sync::SPIN`).
pub const SPINS: u32 = 2000;

impl Wait {
    /// The kind of the child's role.
    pub fn kind(self) -> &'static str {
        match self {
            Wait::Spin => "raw",
            Wait::Sleep => "sleep",
        }
    }

    fn of(kind: &str) -> Option<Wait> {
        [Wait::Spin, Wait::Sleep].into_iter().find(|w| w.kind() == kind)
    }

    fn spins(self) -> u32 {
        if self == Wait::Spin { SPINS } else { 0 }
    }
}

/// Waits until `word` reaches `target`, spinning `spins` pauses first, then sleeping on the
/// futex (counted in `sleepers` so the other side only makes the wake system call when someone
/// sleeps).
pub fn raw_wait(word: &AtomicU32, sleepers: &AtomicU32, target: u32, spins: u32) {
    for _ in 0..spins {
        if word.load(Ordering::Acquire) >= target {
            return;
        }
        std::hint::spin_loop();
    }
    sleepers.fetch_add(1, Ordering::SeqCst);
    loop {
        let v = word.load(Ordering::SeqCst);
        if v >= target {
            break;
        }
        futex::wait(word, v, Some(Duration::from_secs(5)));
    }
    sleepers.fetch_sub(1, Ordering::SeqCst);
}

pub fn raw_post(word: &AtomicU32, sleepers: &AtomicU32, value: u32) {
    word.store(value, Ordering::SeqCst);
    if sleepers.load(Ordering::SeqCst) > 0 {
        futex::wake(word, 1);
    }
}

struct Words<'a> {
    ping: &'a AtomicU32,
    ping_sleepers: &'a AtomicU32,
    pong: &'a AtomicU32,
    pong_sleepers: &'a AtomicU32,
    /// The child's CPU time over the round trips after the warm-up, in microseconds.
    child_cpu_us: &'a AtomicU32,
}

fn words(map: &Mapping) -> Words<'_> {
    let w = |at| map.atomic_u32(at).unwrap();
    Words { ping: w(0), ping_sleepers: w(4), pong: w(64), pong_sleepers: w(68), child_cpu_us: w(128) }
}

/// The parent's side: `n` round trips with a child started with `role` set, their times and
/// the CPU time of both processes after the warm-up.
pub fn raw_parent(role: &str, n: usize, wait: Wait) -> Exchange {
    let file = MemFd::create("ascendless-bench", 4096).unwrap();
    let map = Mapping::shared_rw(&file, 4096, 4096).unwrap();
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_fd().as_raw_fd());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(role, format!("{}:{path}:{n}", wait.kind()))
        .spawn()
        .unwrap();
    let w = words(&map);
    let mut times = Vec::with_capacity(n);
    let mut last = Instant::now();
    let (mut cpu0, mut t0) = (ascendless::sys::cpu_time(), last);
    for i in 1..=n as u32 {
        raw_post(w.ping, w.ping_sleepers, i);
        raw_wait(w.pong, w.pong_sleepers, i, wait.spins());
        let now = Instant::now();
        times.push(now - last);
        last = now;
        if i as usize == warm(n) {
            (cpu0, t0) = (ascendless::sys::cpu_time(), now);
        }
    }
    let cpu = ascendless::sys::cpu_time() - cpu0;
    assert!(child.wait().unwrap().success());
    let child_cpu = Duration::from_micros(w.child_cpu_us.load(Ordering::SeqCst).into());
    Exchange { times, cpu: cpu + child_cpu, wall: last - t0 }
}

/// The child's side, on the parent's shared page (`path`), if `kind` is a baseline's; false
/// otherwise.
pub fn raw_child(kind: &str, path: &str, n: usize) -> bool {
    let Some(wait) = Wait::of(kind) else { return false };
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let file = MemFd::from(std::os::fd::OwnedFd::from(file));
    let map = Mapping::shared_rw(&file, 4096, 4096).unwrap();
    let w = words(&map);
    let mut cpu0 = ascendless::sys::cpu_time();
    for i in 1..=n as u32 {
        raw_wait(w.ping, w.ping_sleepers, i, wait.spins());
        raw_post(w.pong, w.pong_sleepers, i);
        if i as usize == warm(n) {
            cpu0 = ascendless::sys::cpu_time();
        }
    }
    let cpu = ascendless::sys::cpu_time() - cpu0;
    w.child_cpu_us.store(u32::try_from(cpu.as_micros()).unwrap_or(u32::MAX), Ordering::SeqCst);
    true
}
