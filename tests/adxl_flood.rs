//! A flood of connections that never finish their handshake, against a serving engine (a
//! child process forced to TCP, on 127.0.0.1): idle ones that send nothing, by the hundred or
//! the thousand, ones whose garbage keeps them waiting for the rest of a frame, and ones that
//! trickle a HELLO a byte at a time; also an attacker that keeps opening new ones while the
//! honest peer connects. Meanwhile a legitimate engine's Connect with a 5 s time-out succeeds
//! and a transfer both ways moves the right bytes, with and without a shared secret.
//!
//! What makes it work: the server shuts the oldest pending handshake down to admit a new one
//! (`admit`), so the flood holds at most [`MAX_PENDING_HELLOS`] places and threads, and a
//! Connect dropped during its handshake dials again until its time-out (`redial`).
//!
//! The ignored test [`connect_time_under_a_flood_of_1000`] measures the figure of
//! `docs/security.md`.

use std::collections::VecDeque;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod common;

use ascendless::engine::wire::{MAGIC, Message, VERSION};
use ascendless::engine::{Engine, MAX_PENDING_HELLOS, TransferOp};
use common::engines::{self, Call, Peer, ROLE, host_mem, register, sum, transfer};
use common::{checksum, pattern};

const SECRET: &str = "9b1e6f0c4a7d2e8b5c3f1a6d0e9b7c24";
/// Bytes of the server's source (and of its destination after it).
const SIZE: usize = 256 * 1024;
const SERVER_SEED: u64 = 31;
const CLIENT_SEED: u64 = 32;
/// The Connect time-out the issue asks for.
const CONNECT_MS: i32 = 5000;
/// Bound of every wait of these tests.
const BOUND: Duration = Duration::from_secs(20);

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        engines::child_main();
    }
}

// ---- the serving engine and the honest one ----

struct Server {
    peer: Peer,
    name: String,
    addr: SocketAddr,
    /// The server's source (pattern SERVER_SEED), then its destination.
    mem: usize,
}

impl Server {
    fn start(secret: bool) -> Server {
        let env: &[(&str, &str)] = if secret { &[("ASCENDLESS_ADXL_SECRET", SECRET)] } else { &[] };
        let (peer, name, mem) = Peer::serve_as(Peer::start(env), SIZE, SERVER_SEED, "");
        Server { peer, addr: name.parse().unwrap(), name, mem }
    }

    /// (threads, open descriptors) of the serving process.
    fn counts(&self) -> (usize, usize) {
        let pid = self.peer.0.child.id();
        let n = |what: &str| std::fs::read_dir(format!("/proc/{pid}/{what}")).unwrap().count();
        (n("task"), n("fd"))
    }

    /// Waits (at most [`BOUND`]) until `ok` holds of the counts.
    fn counts_reach(&self, what: &str, ok: impl Fn((usize, usize)) -> bool) {
        let start = Instant::now();
        while !ok(self.counts()) {
            assert!(start.elapsed() < BOUND, "{what}: threads and descriptors {:?}", self.counts());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// An engine that connects, with memory registered (a source of pattern CLIENT_SEED, then a
/// destination).
fn honest(secret: bool) -> (Engine, usize) {
    let mut options = vec![("adxl.Transport", "tcp")];
    if secret {
        options.push(("adxl.Secret", SECRET));
    }
    let e = Engine::new();
    e.initialize("127.0.0.1", &options).unwrap();
    let mem = host_mem(2 * SIZE, CLIENT_SEED);
    register(&e, mem, 2 * SIZE);
    (e, mem)
}

/// Connect with the time-out; how long it took. Panics with the error.
fn connect(e: &Engine, server: &Server) -> Duration {
    let start = Instant::now();
    if let Err(err) = e.connect(&server.name, CONNECT_MS) {
        panic!("Connect failed after {:?}: {err}", start.elapsed());
    }
    start.elapsed()
}

/// A READ of the server's source and a WRITE into its destination; both land whole.
fn transfers_work(e: &Engine, mem: usize, server: &mut Server) {
    let read = transfer(e, &server.name, TransferOp::Read, Call::Sync, mem + SIZE, server.mem, SIZE, 1, 5000);
    assert_eq!(read.0, 0, "READ");
    assert_eq!(sum(mem + SIZE, SIZE), checksum(&pattern(SIZE, SERVER_SEED)), "the bytes read");
    let write =
        transfer(e, &server.name, TransferOp::Write, Call::Sync, mem, server.mem + SIZE, SIZE, 1, 5000);
    assert_eq!(write.0, 0, "WRITE");
    assert_eq!(
        server.peer.sum(server.mem + SIZE, SIZE),
        checksum(&pattern(SIZE, CLIENT_SEED)),
        "the bytes written"
    );
}

// ---- the attackers ----

fn dial(addr: SocketAddr) -> TcpStream {
    TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap()
}

/// Whether the server has closed `s` (end of file or reset), without waiting.
fn closed(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let r = s.peek(&mut [0u8; 1]);
    s.set_nonblocking(false).unwrap();
    match r {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    }
}

/// Connections that say nothing.
fn idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n).map(|_| dial(addr)).collect()
}

/// Connections that send garbage: half of them random bytes (closed at once, as a bad
/// magic), half a frame header announcing 1000 bytes of body and only 10 of them, so the
/// server waits for the rest.
fn garbage(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut pending = MAGIC.to_vec();
    pending.extend_from_slice(&VERSION.to_le_bytes());
    pending.extend_from_slice(&1u16.to_le_bytes());
    pending.extend_from_slice(&1000u32.to_le_bytes());
    pending.extend_from_slice(&[7; 10]);
    (0..n)
        .map(|i| {
            let s = dial(addr);
            let bytes = if i % 2 == 0 { pattern(512, i as u64) } else { pending.clone() };
            // A random one may be closed before all of it is written.
            let _ = (&s).write_all(&bytes);
            s
        })
        .collect()
}

/// Connections that trickle a HELLO, one byte each every 20 ms (it would take seconds), from
/// one thread until `stop`.
fn trickle(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    let conns = idle(addr, n);
    std::thread::spawn(move || {
        let hello = Message::Hello { name: "x".repeat(300), regions: vec![], host: None }.encode();
        for b in hello {
            if stop.load(Ordering::Acquire) {
                return;
            }
            for s in &conns {
                let _ = (&*s).write(&[b]);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })
}

/// Waits until the server has closed all of `conns` but the [`MAX_PENDING_HELLOS`] it keeps:
/// it has taken every one, and shut the older ones down.
fn server_took(conns: &[&TcpStream]) {
    let start = Instant::now();
    let want = conns.len().saturating_sub(MAX_PENDING_HELLOS);
    loop {
        let n = conns.iter().filter(|s| closed(s)).count();
        if n >= want {
            return;
        }
        assert!(start.elapsed() < BOUND, "only {n} of {} connections closed", conns.len());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An attacker that opens connections and says nothing, as fast as it can, until `stop`;
/// it keeps the newest `keep` open. Counts what it opened in `opened`.
fn flooder(addr: SocketAddr, keep: usize, opened: Arc<AtomicUsize>, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut conns = VecDeque::new();
        while !stop.load(Ordering::Acquire) {
            if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                conns.push_back(s);
                if conns.len() > keep {
                    conns.pop_front();
                }
                opened.fetch_add(1, Ordering::AcqRel);
            }
        }
    })
}

// ---- descriptors ----

/// (soft, hard) limits of open files of this process.
fn nofile() -> (u64, u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
    let n: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    (n[0], n[1])
}

/// Whether this process may hold `n` descriptors, raising its soft limit to the hard one with
/// prlimit(1) if needed; if not, says the test is skipped.
fn room_for(n: u64) -> bool {
    let (soft, hard) = nofile();
    if soft < n && hard >= n {
        let pid = std::process::id().to_string();
        let _ = std::process::Command::new("prlimit")
            .args(["--pid", &pid, &format!("--nofile={hard}:{hard}")])
            .status();
    }
    let (soft, hard) = nofile();
    if soft < n {
        eprintln!("skipped: {n} descriptors are needed, this process may open {soft} (hard limit {hard})");
    }
    soft >= n
}

// ---- the cases ----

/// `idle` idle connections, then `garbage` garbage senders and `trickling` tricklers, held
/// while an honest engine connects and transfers.
fn held_flood(secret: bool, n_idle: usize, n_garbage: usize, trickling: usize) {
    let mut server = Server::start(secret);
    let before = server.counts();
    let idle = idle(server.addr, n_idle);
    server_took(&idle.iter().collect::<Vec<_>>());
    let garbage = garbage(server.addr, n_garbage);
    let stop = Arc::new(AtomicBool::new(false));
    let trickler = trickle(server.addr, trickling, stop.clone());
    let all: Vec<&TcpStream> = idle.iter().chain(&garbage).collect();
    server_took(&all);
    // The flood costs at most MAX_PENDING threads (and a descriptor each).
    server.counts_reach("evicted threads end", |(t, _)| t <= before.0 + MAX_PENDING_HELLOS);

    let (e, mem) = honest(secret);
    let took = connect(&e, &server);
    eprintln!(
        "{n_idle} idle, {n_garbage} garbage, {trickling} trickling, secret {secret}: Connect took {took:?}"
    );
    transfers_work(&e, mem, &mut server);
    e.finalize();
    stop.store(true, Ordering::Release);
    trickler.join().unwrap();
    drop((idle, garbage));
    server.counts_reach("back to before the flood", |c| c == before);
    server.peer.finish();
}

#[test]
fn connect_succeeds_while_200_idle_connections_are_open() {
    held_flood(false, 200, 0, 0);
}

#[test]
fn connect_succeeds_while_200_idle_connections_are_open_with_a_secret() {
    held_flood(true, 200, 0, 0);
}

#[test]
fn connect_succeeds_while_1000_idle_connections_are_open() {
    if room_for(1000 + 256) {
        held_flood(false, 1000, 0, 0);
        held_flood(true, 1000, 0, 0);
    }
}

/// The pending places are all held by garbage senders and tricklers when the honest peer
/// connects: they are evicted as idle ones are.
#[test]
fn connect_succeeds_while_garbage_and_trickling_connections_hold_every_place() {
    for secret in [false, true] {
        held_flood(secret, 100, 2 * MAX_PENDING_HELLOS, MAX_PENDING_HELLOS / 2);
    }
}

/// Attackers (several threads) opening connections without pause for the whole Connect,
/// faster than the listener takes them: the honest SYN waits in the listener's backlog behind
/// theirs, then its handshake needs only to be quicker than MAX_PENDING accepts, and it dials
/// again if not.
#[test]
fn connect_succeeds_while_attackers_keep_opening_connections() {
    const THREADS: usize = 4;
    if !room_for(1000 + 256) {
        return;
    }
    for secret in [false, true] {
        let mut server = Server::start(secret);
        let (opened, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let attackers: Vec<JoinHandle<()>> = (0..THREADS)
            .map(|_| flooder(server.addr, 1000 / THREADS, opened.clone(), stop.clone()))
            .collect();
        let start = Instant::now();
        while opened.load(Ordering::Acquire) < 4 * MAX_PENDING_HELLOS {
            assert!(start.elapsed() < BOUND, "the attackers opened {opened:?} connections");
            std::thread::sleep(Duration::from_millis(1));
        }
        let (e, mem) = honest(secret);
        let from = opened.load(Ordering::Acquire);
        let took = connect(&e, &server);
        let during = opened.load(Ordering::Acquire) - from;
        eprintln!("secret {secret}: Connect took {took:?} while the attackers opened {during} connections");
        transfers_work(&e, mem, &mut server);
        stop.store(true, Ordering::Release);
        for a in attackers {
            a.join().unwrap();
        }
        e.finalize();
        server.peer.finish();
    }
}

// ---- the figure of docs/security.md ----

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The time to Connect while 1000 idle connections are open, and while 4 attacker threads
/// keep opening connections, against a Connect with no flood to the same server in the same
/// run (medians of `ROUNDS` each), without and with a secret. Prints the figures; run with
/// `cargo test --release --test adxl_flood -- --ignored --nocapture connect_time`.
#[test]
#[ignore = "a measurement: run it by name"]
fn connect_time_under_a_flood_of_1000() {
    const ROUNDS: usize = 11;
    const FLOOD: usize = 1000;
    if !room_for(FLOOD as u64 + 256) {
        return;
    }
    for secret in [false, true] {
        let server = Server::start(secret);
        let before = server.counts();
        let (e, _) = honest(secret);
        let (mut quiet, mut flooded, mut live) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            quiet.push(connect(&e, &server));
            e.disconnect(&server.name, 1000).unwrap();
            server.counts_reach("the served connection ends", |c| c == before);
            let idle = idle(server.addr, FLOOD);
            server_took(&idle.iter().collect::<Vec<_>>());
            flooded.push(connect(&e, &server));
            e.disconnect(&server.name, 1000).unwrap();
            drop(idle);
            server.counts_reach("the flood is gone", |c| c == before);

            let (opened, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
            let attackers: Vec<JoinHandle<()>> =
                (0..4).map(|_| flooder(server.addr, FLOOD / 4, opened.clone(), stop.clone())).collect();
            while opened.load(Ordering::Acquire) < 4 * MAX_PENDING_HELLOS {
                std::thread::sleep(Duration::from_millis(1));
            }
            live.push(connect(&e, &server));
            stop.store(true, Ordering::Release);
            attackers.into_iter().for_each(|a| a.join().unwrap());
            e.disconnect(&server.name, 1000).unwrap();
            server.counts_reach("the attack is over", |c| c == before);
        }
        let (q, f, l) = (median(quiet), median(flooded), median(live));
        let ratio = |d: Duration| d.as_secs_f64() / q.as_secs_f64();
        println!(
            "secret {secret}, {ROUNDS} rounds, medians: Connect {q:?} with no flood; {f:?} (ratio {:.2}) with {FLOOD} idle connections open; {l:?} (ratio {:.1}) while 4 threads keep opening connections",
            ratio(f),
            ratio(l)
        );
        e.finalize();
        server.peer.finish();
    }
}
