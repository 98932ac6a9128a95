//! The baseline of the cross-process ping-pong benchmarks (`notify`, `ipc_event`): two futex
//! words in a shared page, each side spinning first and then sleeping on the futex, the other
//! side making the wake system call only when someone sleeps. The parent process runs
//! [`raw_parent`], which starts the benchmark's own executable as the child with
//! `ROLE=raw:<file>:<rounds>`; the child's `main` hands that to [`raw_child`].

use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ascendless::sys::futex;
use ascendless::sys::mapping::Mapping;
use ascendless::sys::memfd::MemFd;

/// Spins before sleeping on the futex: this baseline spins (2000 pauses, tens of us on some
/// CPUs), the library's waits spin 4 us (`sync::SPIN`); benches/c/notify_pingpong has a baseline
/// that sleeps at once.
pub const SPINS: u32 = 2000;

/// Waits until `word` reaches `target`, spinning first, then sleeping on the futex (counted in
/// `sleepers` so the other side only makes the wake system call when someone sleeps).
pub fn raw_wait(word: &AtomicU32, sleepers: &AtomicU32, target: u32) {
    for _ in 0..SPINS {
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
}

fn words(map: &Mapping) -> Words<'_> {
    let w = |at| map.atomic_u32(at).unwrap();
    Words { ping: w(0), ping_sleepers: w(4), pong: w(64), pong_sleepers: w(68) }
}

/// The parent's side: `n` round trips with a child started with `role` set, their times.
pub fn raw_parent(role: &str, n: usize) -> Vec<Duration> {
    let file = MemFd::create("ascendless-bench", 4096).unwrap();
    let map = Mapping::shared_rw(&file, 4096, 4096).unwrap();
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_fd().as_raw_fd());
    let mut child =
        Command::new(std::env::current_exe().unwrap()).env(role, format!("raw:{path}:{n}")).spawn().unwrap();
    let w = words(&map);
    let mut times = Vec::with_capacity(n);
    let mut last = Instant::now();
    for i in 1..=n as u32 {
        raw_post(w.ping, w.ping_sleepers, i);
        raw_wait(w.pong, w.pong_sleepers, i);
        let now = Instant::now();
        times.push(now - last);
        last = now;
    }
    assert!(child.wait().unwrap().success());
    times
}

/// The child's side, on the parent's shared page (`path`).
pub fn raw_child(path: &str, n: usize) {
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let file = MemFd::from(std::os::fd::OwnedFd::from(file));
    let map = Mapping::shared_rw(&file, 4096, 4096).unwrap();
    let w = words(&map);
    for i in 1..=n as u32 {
        raw_wait(w.ping, w.ping_sleepers, i);
        raw_post(w.pong, w.pong_sleepers, i);
    }
}
