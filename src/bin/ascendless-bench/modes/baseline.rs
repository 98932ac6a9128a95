//! The machine's own limits, measured in the same run: memcpy, a raw TCP socket pair doing the
//! same request/response exchange as a transfer, a raw futex ping-pong between two processes.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ascendless::sys::futex;
use ascendless::sys::mapping::Mapping;
use ascendless::sys::memfd::MemFd;

use crate::args::Op;
use crate::measure::{Cpu, Figures, timed};

/// memcpy of `len` bytes per call, in each of `threads` threads.
pub fn memcpy(len: usize, threads: usize, duration: f64) -> Figures {
    timed("memcpy", threads, duration, |_| {
        let src = vec![7u8; len];
        let mut dst = vec![0u8; len];
        move || {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
            len as u64
        }
    })
}

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback socket");
    let a = TcpStream::connect(l.local_addr().expect("local address")).expect("connect over loopback");
    let (b, _) = l.accept().expect("accept over loopback");
    a.set_nodelay(true).expect("TCP_NODELAY");
    b.set_nodelay(true).expect("TCP_NODELAY");
    (a, b)
}

/// One loopback socket pair per thread doing what a transfer does: WRITE sends a 32-byte
/// header followed by `len` bytes (one write) and waits for a 1-byte acknowledgement; READ
/// sends a 32-byte request and reads `len` bytes back.
pub fn tcp(op: Op, len: usize, threads: usize, duration: f64) -> Figures {
    timed("raw TCP socket pair", threads, duration, |_| {
        let (mut a, mut b) = pair();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 32 + len];
            loop {
                let ok = match op {
                    Op::Write => b.read_exact(&mut buf).and_then(|_| b.write_all(&[1])),
                    Op::Read => b.read_exact(&mut buf[..32]).and_then(|_| b.write_all(&buf[32..])),
                };
                if ok.is_err() {
                    break;
                }
            }
        });
        let mut buf = vec![5u8; 32 + len];
        move || {
            match op {
                Op::Write => {
                    a.write_all(&buf).expect("raw TCP send");
                    a.read_exact(&mut [0u8; 1]).expect("raw TCP receive");
                }
                Op::Read => {
                    a.write_all(&buf[..32]).expect("raw TCP send");
                    a.read_exact(&mut buf[32..]).expect("raw TCP receive");
                }
            }
            len as u64
        }
    })
}

// ---- raw futex ping-pong over a shared page, between two processes ----

const SPINS: u32 = 2000;

/// Waits until `word` reaches `target`: spins, then sleeps on the futex (counted in `sleepers`
/// so the other side makes the wake system call only when someone sleeps), as notifies do.
fn raw_wait(word: &AtomicU32, sleepers: &AtomicU32, target: u32) {
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

fn raw_post(word: &AtomicU32, sleepers: &AtomicU32, value: u32) {
    word.store(value, Ordering::SeqCst);
    if sleepers.load(Ordering::SeqCst) > 0 {
        futex::wake(word, 1);
    }
}

fn words(map: &Mapping) -> [&AtomicU32; 4] {
    let w = |at| map.atomic_u32(at).expect("a word of the shared page");
    [w(0), w(4), w(64), w(68)]
}

/// `n` round trips with a child process; returns the round-trip times in microseconds.
pub fn futex_parent(n: usize) -> Vec<f64> {
    let file = MemFd::create("ascendless-bench", 4096).expect("memfd");
    let map = Mapping::shared_rw(&file, 4096, 4096).expect("map the shared page");
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_fd().as_raw_fd());
    let mut child = Command::new(std::env::current_exe().expect("this program's path"))
        .args(["__futex-child", &path, &n.to_string()])
        .spawn()
        .expect("start the futex child");
    let [ping, ping_s, pong, pong_s] = words(&map);
    let mut times = Vec::with_capacity(n);
    let mut last = Instant::now();
    for i in 1..=n as u32 {
        raw_post(ping, ping_s, i);
        raw_wait(pong, pong_s, i);
        let now = Instant::now();
        times.push((now - last).as_secs_f64() * 1e6);
        last = now;
    }
    assert!(child.wait().expect("wait for the futex child").success(), "the futex child failed");
    times
}

pub fn futex_child(path: &str, n: usize) {
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path).expect("open the shared page");
    let file = MemFd::from(std::os::fd::OwnedFd::from(file));
    let map = Mapping::shared_rw(&file, 4096, 4096).expect("map the shared page");
    let [ping, ping_s, pong, pong_s] = words(&map);
    for i in 1..=n as u32 {
        raw_wait(ping, ping_s, i);
        raw_post(pong, pong_s, i);
    }
}

/// Runs a ping-pong for about `duration` seconds: a short calibration run sizes the real one.
/// `run(n)` returns `n` round-trip times.
pub fn ping_pong(name: &str, duration: f64, run: impl Fn(usize) -> Vec<f64>) -> Figures {
    let probe = 1000;
    // The median: the first round trips include the child's start.
    let mut probe_times = run(probe);
    probe_times.sort_by(f64::total_cmp);
    let each = probe_times[probe / 2] / 1e6;
    let n = ((duration / each.max(1e-7)) as usize).clamp(probe, 5_000_000);
    let cpu = Cpu::now();
    let t = Instant::now();
    let mut lat = run(n);
    let seconds = t.elapsed().as_secs_f64();
    let cpu_s = cpu.since();
    lat.drain(..n / 10);
    let mut f = Figures { name: name.into(), ops: lat.len() as u64, seconds, cpu_s, ..Figures::default() };
    // CPU per round trip counts the warm-up tenth too: scale it to the kept round trips.
    f.cpu_s = cpu_s * lat.len() as f64 / n as f64;
    f.latencies(lat);
    f
}
