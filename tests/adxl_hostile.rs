//! Hostile peers against a real serving engine (a child process, forced to TCP, on 127.0.0.1
//! with a port the system hands out): raw TCP attackers that send garbage, truncated or
//! oversized frames, wrong magic or version, frames out of order, too many descriptors, a
//! payload that lies, or nothing at all, a slow-loris, and a served peer that reads nothing. Meanwhile a good peer (an engine
//! in this process) keeps writing and reading back its bytes over an established link.
//!
//! Asserted: the server closes every attacker within a bound, the good link's bytes stay
//! right during and after, a new good peer can connect afterwards, and the server's threads
//! and descriptors come back to what they were. Also the limits: [`MAX_PENDING_HELLOS`]
//! handshakes (beyond, the oldest is closed) and [`MAX_SERVED`] served connections, and what
//! happens at each. Floods of connections that never finish their handshake are
//! `tests/adxl_flood.rs`.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod common;

use ascendless::engine::wire::{Desc, MAGIC, MAX_BODY, MAX_DESCS, MemKind, Message, VERSION};
use ascendless::engine::{
    Engine, HELLO_DEADLINE, MAX_PENDING_HELLOS, MAX_SERVED, MemType, STALL, TransferDesc, TransferOp,
};
use ascendless::error::engine_status::ADXL_RESOURCE_EXHAUSTED;
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};
use common::{Scripted, pattern};

const ROLE: &str = "ASCENDLESS_ADXL_HOSTILE_CHILD";
const MIB: usize = 1 << 20;
/// Bound for the server to close a connection whose frame is bad (no waiting involved).
const PROMPT: Duration = Duration::from_secs(5);

fn no_vouch(r: HostRange) -> RawSpan {
    panic!("the test uses runtime memory only, yet {r:?} needed vouching")
}

/// Runtime host memory holding `data`.
fn host_with(data: &[u8]) -> usize {
    let a = memory::alloc_host(data.len()).unwrap();
    memory::runtime_span(a, data.len()).unwrap().write_slice(data);
    a
}

fn bytes(addr: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    memory::runtime_span(addr, len).unwrap().read_into(&mut out);
    out
}

// ---- the child: the serving engine ----

fn child_main() {
    let engine = Engine::new();
    common::obey(|w| {
        Some(match w {
            ["init", name] => match engine.initialize(name, &[]) {
                Ok(()) => "0".to_owned(),
                Err(e) => format!("{}", e.status),
            },
            ["alloc", len, seed] => {
                format!("0 {}", host_with(&pattern(len.parse().unwrap(), seed.parse().unwrap())))
            }
            ["register", addr, len] => {
                let h =
                    engine.register_mem(addr.parse().unwrap(), len.parse().unwrap(), MemType::Host, no_vouch);
                format!("0 {}", h.unwrap())
            }
            ["exit"] => {
                engine.finalize();
                return None;
            }
            other => panic!("unknown command {other:?}"),
        })
    });
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

/// The serving engine, its name, its registered region of `REGION` bytes and a spare
/// allocation of `SPARE` bytes (not registered).
struct Server {
    proc: Scripted,
    name: String,
    addr: SocketAddr,
    region: usize,
    spare: usize,
}

const SPARE: usize = 4096;

const REGION: usize = 4 * MIB;

impl Server {
    /// A serving engine forced to TCP.
    fn start() -> Server {
        Server::with_transport("tcp")
    }

    fn with_transport(transport: &str) -> Server {
        let mut proc = Scripted::spawn(ROLE, &[("ASCENDLESS_TRANSPORT", transport)]);
        let port = common::free_port();
        let name = format!("127.0.0.1:{port}");
        assert_eq!(proc.ask(&format!("init {name}")), [0]);
        let region = proc.value(&format!("alloc {REGION} 7")) as usize;
        proc.value(&format!("register {region} {REGION}"));
        let spare = proc.value(&format!("alloc {SPARE} 8")) as usize;
        Server { proc, addr: name.parse().unwrap(), name, region, spare }
    }

    /// (threads, open descriptors) of the serving process.
    fn counts(&self) -> (usize, usize) {
        let pid = self.proc.child.id();
        let n = |what: &str| std::fs::read_dir(format!("/proc/{pid}/{what}")).unwrap().count();
        (n("task"), n("fd"))
    }

    /// Waits (at most `bound`) until the descriptors are back to `before` and the threads to
    /// `before` or fewer (a serving thread idle at `before` may have ended since).
    fn settles_to(&self, before: (usize, usize), bound: Duration) {
        let start = Instant::now();
        while !matches!(self.counts(), (threads, fds) if threads <= before.0 && fds == before.1) {
            assert!(
                start.elapsed() < bound,
                "threads and descriptors {:?}, before the attackers {before:?}",
                self.counts()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

// ---- the good peer ----

fn good_engine() -> Engine {
    let e = Engine::new();
    e.initialize("127.0.0.1", &[("adxl.Transport", "tcp")]).unwrap();
    e
}

/// A good peer transferring over its established link until stopped: each round writes a
/// fresh pattern into the server's region, reads it back and compares every byte.
struct GoodPeer {
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl GoodPeer {
    fn start(server: &Server) -> GoodPeer {
        let (name, region) = (server.name.clone(), server.region);
        let engine = good_engine();
        engine.connect(&name, 5000).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let (s, r) = (stop.clone(), rounds.clone());
        let thread = std::thread::spawn(move || {
            let len = MIB;
            let src = memory::alloc_host(len).unwrap();
            let dst = memory::alloc_host(len).unwrap();
            let mut seed = 100;
            while !s.load(Ordering::Acquire) {
                seed += 1;
                let data = pattern(len, seed);
                memory::runtime_span(src, len).unwrap().write_slice(&data);
                let at = region + (seed as usize % 3) * MIB;
                let w = [TransferDesc { local_addr: src, remote_addr: at, len }];
                let rd = [TransferDesc { local_addr: dst, remote_addr: at, len }];
                engine
                    .transfer_sync(&name, TransferOp::Write, &w, 20_000, no_vouch)
                    .map_err(|e| format!("round {seed}: write: {e}"))?;
                engine
                    .transfer_sync(&name, TransferOp::Read, &rd, 20_000, no_vouch)
                    .map_err(|e| format!("round {seed}: read: {e}"))?;
                if bytes(dst, len) != data {
                    return Err(format!("round {seed}: the bytes read back differ"));
                }
                r.fetch_add(1, Ordering::AcqRel);
            }
            engine.finalize();
            Ok(())
        });
        GoodPeer { stop, rounds, thread: Some(thread) }
    }

    /// Waits until `n` more rounds are done (each one verified).
    fn advances(&mut self, n: u64) {
        let start = Instant::now();
        let target = self.rounds.load(Ordering::Acquire) + n;
        while self.rounds.load(Ordering::Acquire) < target {
            if self.thread.as_ref().unwrap().is_finished() {
                panic!("the good peer stopped: {:?}", self.thread.take().unwrap().join());
            }
            assert!(start.elapsed() < Duration::from_secs(30), "the good link made no progress");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Release);
        self.thread.take().unwrap().join().unwrap().unwrap();
        self.rounds.load(Ordering::Acquire)
    }
}

// ---- the attackers ----

fn dial(addr: SocketAddr) -> TcpStream {
    TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap()
}

fn header(version: u16, kind: u16, len: u32) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&kind.to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    h
}

fn hello(name: &str) -> Vec<u8> {
    Message::Hello { name: name.into(), regions: vec![], host: None }.encode()
}

/// Says HELLO and checks the HELLO_ACK: the connection is served.
fn served(addr: SocketAddr) -> TcpStream {
    let s = dial(addr);
    s.set_read_timeout(Some(PROMPT)).unwrap();
    (&s).write_all(&hello("127.0.0.1")).unwrap();
    match Message::read_from(&mut &s).unwrap() {
        Message::HelloAck { status: 0, .. } => s,
        other => panic!("HELLO answered with {other:?}"),
    }
}

/// Waits until the server closes `s` (end of file or reset), reading and dropping whatever it
/// sends first; panics after `bound`. The time it took.
fn closed_within(s: &TcpStream, bound: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let left = bound.checked_sub(start.elapsed()).filter(|d| !d.is_zero());
        let Some(left) = left else { panic!("the server kept the connection open for {bound:?}") };
        s.set_read_timeout(Some(left)).unwrap();
        match (&mut &*s).read(&mut buf) {
            Ok(0) => return start.elapsed(),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return start.elapsed(),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading from the server: {e}"),
        }
    }
}

/// Sends `bytes`, optionally half-closes, and expects the server to close within `bound`.
fn attack(addr: SocketAddr, what: &str, bytes: &[u8], half_close: bool, bound: Duration) {
    let s = dial(addr);
    (&s).write_all(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    if half_close {
        s.shutdown(Shutdown::Write).unwrap();
    }
    let took = closed_within(&s, bound);
    eprintln!("{what}: closed after {took:?}");
}

fn descs(n: usize, at: u64) -> Vec<Desc> {
    (0..n).map(|_| Desc { remote_addr: at, len: 8, local_kind: MemKind::Host }).collect()
}

fn garbage(len: usize, seed: u64) -> Vec<u8> {
    pattern(len, seed)
}

/// Every attack that is closed at once, one after another. `region` is a registered range
/// of at least 1 MiB that the good peer does not use.
fn prompt_attacks(addr: SocketAddr, region: u64) {
    let ok_hello = hello("127.0.0.1");
    attack(addr, "random garbage", &garbage(4096, 1), false, PROMPT);
    attack(addr, "wrong magic", &[b"HTTP".as_slice(), &ok_hello[4..]].concat(), false, PROMPT);
    attack(
        addr,
        "wrong version",
        &[&ok_hello[..4], &9u16.to_le_bytes(), &ok_hello[6..]].concat(),
        false,
        PROMPT,
    );
    attack(addr, "huge length field", &header(VERSION, 1, u32::MAX), false, PROMPT);
    attack(addr, "body just over the limit", &header(VERSION, 1, MAX_BODY as u32 + 1), false, PROMPT);
    attack(addr, "unknown type", &header(VERSION, 999, 0), false, PROMPT);
    let truncated = [header(VERSION, 1, 100), vec![0; 10]].concat();
    attack(addr, "truncated body, then close", &truncated, true, PROMPT);
    let read = Message::Read { id: 1, descs: descs(1, region) }.encode();
    attack(addr, "READ before HELLO", &read, false, PROMPT);
    attack(addr, "HELLO with trailing garbage", &[ok_hello.clone(), garbage(64, 2)].concat(), false, PROMPT);

    // After a good HELLO: the connection is served, then the bad frame closes it.
    let s = served(addr);
    (&s).write_all(&garbage(4096, 3)).unwrap();
    eprintln!("HELLO then garbage: closed after {:?}", closed_within(&s, PROMPT));

    let s = served(addr);
    let mut too_many = header(VERSION, 6, (12 + (MAX_DESCS + 1) * 24) as u32);
    too_many.extend_from_slice(&1u64.to_le_bytes());
    too_many.extend_from_slice(&(MAX_DESCS as u32 + 1).to_le_bytes());
    for d in descs(MAX_DESCS + 1, region) {
        too_many.extend_from_slice(&d.remote_addr.to_le_bytes());
        too_many.extend_from_slice(&d.len.to_le_bytes());
        too_many.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    }
    let _ = (&s).write_all(&too_many);
    eprintln!("READ with {} descriptors: closed after {:?}", MAX_DESCS + 1, closed_within(&s, PROMPT));

    let s = served(addr);
    (&s).write_all(&hello("again")).unwrap();
    eprintln!("a second HELLO: closed after {:?}", closed_within(&s, PROMPT));

    // A WRITE whose payload is shorter than its descriptors say, then the end.
    let s = served(addr);
    let w = Message::Write {
        id: 1,
        descs: vec![Desc { remote_addr: region, len: MIB as u64, local_kind: MemKind::Host }],
    };
    (&s).write_all(&[w.encode(), garbage(100, 4)].concat()).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    eprintln!("a payload that lies, then close: closed after {:?}", closed_within(&s, PROMPT));
}

/// A served peer that asks for `READS` MiB (READ of a registered MiB, again and again) and
/// reads none of it: the server's answer waits once the buffers are full (a few MiB), and
/// after STALL the server drops the connection. Says on `stalled` once the requests are
/// sent and the buffers had time to fill; returns how long it took the server to drop it.
fn read_nothing(addr: SocketAddr, at: u64, stalled: std::sync::mpsc::Sender<()>) -> JoinHandle<Duration> {
    const READS: u64 = 256;
    std::thread::spawn(move || {
        let s = served(addr);
        let start = Instant::now();
        let d = Desc { remote_addr: at, len: MIB as u64, local_kind: MemKind::Host };
        let reads: Vec<u8> =
            (0..READS).flat_map(|id| Message::Read { id, descs: vec![d] }.encode()).collect();
        (&s).write_all(&reads).unwrap();
        std::thread::sleep(Duration::from_secs(1));
        let _ = stalled.send(());
        // The server closes with data unread: the next write (or the one after) is refused.
        loop {
            // The kernel counts STALL per send call, and the last call that moved some bytes
            // returns them after its STALL: up to twice STALL.
            let bound = 2 * STALL + Duration::from_secs(15);
            assert!(start.elapsed() < bound, "the server kept a peer that reads nothing");
            match (&s).write_all(&Message::Ping { id: 0 }.encode()) {
                Ok(_) => std::thread::sleep(Duration::from_millis(100)),
                Err(_) => return start.elapsed(),
            }
        }
    })
}

/// A HELLO sent one byte a second: it would take minutes, the deadline is for the whole HELLO.
fn slow_loris(addr: SocketAddr) -> JoinHandle<Duration> {
    std::thread::spawn(move || {
        let s = dial(addr);
        let writer = s.try_clone().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let trickle = std::thread::spawn(move || {
            for b in hello(&"x".repeat(300)) {
                if stopped.load(Ordering::Acquire) || (&writer).write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        let took = closed_within(&s, HELLO_DEADLINE + Duration::from_secs(10));
        stop.store(true, Ordering::Release);
        trickle.join().unwrap();
        took
    })
}

#[test]
fn attackers_are_dropped_and_the_good_link_keeps_every_byte() {
    let mut server = Server::start();
    let mut good = GoodPeer::start(&server);
    good.advances(3);
    let before = server.counts();

    // Slow ones run in the background while the prompt ones go one after another.
    let loris = slow_loris(server.addr);
    let (flood_stalled, stalled_rx) = std::sync::mpsc::channel();
    let spare = (server.region + 3 * MIB) as u64;
    let flood = read_nothing(server.addr, spare, flood_stalled);
    let idle: Vec<TcpStream> = (0..8).map(|_| dial(server.addr)).collect();
    let opened = Instant::now();
    prompt_attacks(server.addr, spare);
    good.advances(3);

    // A served connection that stops in the middle of a WRITE's payload, and one that reads
    // none of its answers: the server's RegisterMem (which tells every served connection)
    // goes on meanwhile, and both connections are dropped after STALL.
    stalled_rx.recv_timeout(Duration::from_secs(30)).expect("the peer reading nothing has asked");
    let stalled = served(server.addr);
    let w = Message::Write {
        id: 1,
        descs: vec![Desc { remote_addr: spare, len: MIB as u64, local_kind: MemKind::Host }],
    };
    (&stalled).write_all(&[w.encode(), garbage(100, 5)].concat()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    server.proc.value(&format!("register {} {SPARE}", server.spare));
    // Well under STALL, which the stalled peers would have cost before.
    assert!(start.elapsed() < STALL / 2, "RegisterMem took {:?}", start.elapsed());
    good.advances(3);

    for s in &idle {
        let left = (HELLO_DEADLINE + Duration::from_secs(10)).saturating_sub(opened.elapsed());
        closed_within(s, left.max(Duration::from_secs(1)));
    }
    assert!(opened.elapsed() >= HELLO_DEADLINE - Duration::from_secs(1), "idle connections closed early");
    let took = loris.join().unwrap();
    assert!(took >= HELLO_DEADLINE - Duration::from_secs(1), "the slow-loris was closed after {took:?}");
    eprintln!("slow-loris closed after {took:?}");
    eprintln!("a peer reading nothing dropped after {:?}", flood.join().unwrap());
    eprintln!("stalled WRITE closed after {:?}", closed_within(&stalled, STALL + Duration::from_secs(10)));
    good.advances(3);

    // Every attacker's thread and descriptor is gone.
    server.settles_to(before, Duration::from_secs(10));
    let another = good_engine();
    another.connect(&server.name, 5000).unwrap();
    another.finalize();
    let rounds = good.finish();
    eprintln!("the good peer did {rounds} verified rounds of 2 MiB");
}

#[test]
fn beyond_max_pending_handshakes_the_oldest_is_closed_at_once_and_served_links_go_on() {
    let server = Server::start();
    let mut good = GoodPeer::start(&server);
    good.advances(2);
    let base = server.counts().0;
    let silent: Vec<TcpStream> = (0..MAX_PENDING_HELLOS).map(|_| dial(server.addr)).collect();
    // Wait until the server has taken them all (each has its thread).
    let start = Instant::now();
    while server.counts().0 < base + MAX_PENDING_HELLOS {
        assert!(start.elapsed() < PROMPT, "the server has not accepted {MAX_PENDING_HELLOS} connections");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Each connection over the cap takes the place of the oldest, which is closed at once.
    let newer: Vec<TcpStream> = (0..5).map(|_| dial(server.addr)).collect();
    for (i, s) in silent[..5].iter().enumerate() {
        eprintln!("connection {} evicted after {:?}", i + 1, closed_within(s, PROMPT));
    }
    // Their threads end: the flood costs MAX_PENDING threads, not one per connection.
    let start = Instant::now();
    while server.counts().0 > base + MAX_PENDING_HELLOS {
        assert!(start.elapsed() < PROMPT, "the evicted connections' threads are still there");
        std::thread::sleep(Duration::from_millis(20));
    }
    good.advances(3);
    // A new peer connects while the places are all held.
    let another = good_engine();
    another.connect(&server.name, 5000).unwrap();
    another.finalize();
    drop((silent, newer));
    good.finish();
}

#[test]
fn served_connections_stop_at_max_served_and_a_closed_one_frees_its_slot() {
    let server = Server::start();
    let conns: Vec<TcpStream> = (0..MAX_SERVED).map(|_| served(server.addr)).collect();
    let one_more = good_engine();
    let e = one_more.connect(&server.name, 5000).unwrap_err();
    assert_eq!(e.status, ADXL_RESOURCE_EXHAUSTED, "{e}");
    // A raw peer sees the HELLO_ACK that says so, then the close.
    let s = dial(server.addr);
    (&s).write_all(&hello("127.0.0.1")).unwrap();
    s.set_read_timeout(Some(PROMPT)).unwrap();
    match Message::read_from(&mut &s).unwrap() {
        Message::HelloAck { status, message, .. } => {
            assert_eq!(status, ADXL_RESOURCE_EXHAUSTED);
            assert!(message.contains(&MAX_SERVED.to_string()), "{message}");
        }
        other => panic!("HELLO answered with {other:?}"),
    }
    closed_within(&s, PROMPT);

    let mut conns = conns;
    let gone = conns.pop().unwrap();
    (&gone).write_all(&Message::Bye.encode()).unwrap();
    drop(gone);
    let start = Instant::now();
    while let Err(e) = one_more.connect(&server.name, 2000) {
        assert_eq!(e.status, ADXL_RESOURCE_EXHAUSTED, "{e}");
        assert!(start.elapsed() < PROMPT, "the closed connection's slot did not come back");
        std::thread::sleep(Duration::from_millis(20));
    }
    one_more.finalize();
    drop(conns);
}

#[test]
fn same_host_channels_of_closed_links_are_not_kept() {
    let server = Server::with_transport("auto");
    let client = Engine::new();
    client.initialize("127.0.0.1", &[]).unwrap();
    let dst = memory::alloc_host(SPARE).unwrap();
    let read = [TransferDesc { local_addr: dst, remote_addr: server.region, len: SPARE }];
    client.register_mem(dst, SPARE, MemType::Host, no_vouch).unwrap();
    // Each cycle makes a link (a TCP connection and a same-host channel), reads through the
    // shared mapping, and closes the link.
    let cycle = || {
        client.connect(&server.name, 5000).unwrap();
        client.transfer_sync(&server.name, TransferOp::Read, &read, 5000, no_vouch).unwrap();
        client.disconnect(&server.name, 5000).unwrap();
    };
    cycle();
    assert_eq!(bytes(dst, SPARE), pattern(REGION, 7)[..SPARE]);
    std::thread::sleep(Duration::from_millis(300));
    let before = server.counts();
    let cycles = 200;
    for _ in 0..cycles {
        cycle();
    }
    assert_eq!(client.counters().direct_calls, cycles + 1, "every read took the shared mapping");
    server.settles_to(before, Duration::from_secs(10));
    client.finalize();
}

#[test]
fn a_same_host_peer_that_sends_garbage_delays_registration_at_most_the_ack_wait() {
    use ascendless::sys::socket::Conn;
    let mut server = Server::with_transport("auto");
    let pid = server.proc.child.id();
    let port = server.addr.port();
    let name = format!("ascendless-adxl/{pid}/{port}");
    let before = server.counts();
    // The socket welcomes only a process that presents the ticket of a HELLO_ACK.
    let ticket = common::same_host::ticket_packet(server.addr, std::process::id());
    let raw = Conn::connect(name.as_bytes(), PROMPT).unwrap();
    raw.send(&ticket, &[]).unwrap();
    raw.set_read_timeout(Some(PROMPT)).unwrap();
    // The server lists its registration (ADD), then DONE.
    let mut buf = [0u8; 64];
    let mut kinds = Vec::new();
    while kinds.last() != Some(&3) {
        raw.recv(&mut buf, 1).unwrap().expect("a packet");
        kinds.push(u32::from_le_bytes(buf[..4].try_into().unwrap()));
    }
    assert_eq!(kinds, [1, 3]);
    for junk in [&b"x"[..], &[0xff; 40], &[4, 0, 0, 0, 0, 0, 0, 0]] {
        raw.send(junk, &[]).unwrap();
    }
    // RegisterMem announces to the raw peer, which never acknowledges: bounded by ACK_WAIT.
    let start = Instant::now();
    server.proc.value(&format!("register {} {SPARE}", server.spare));
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "RegisterMem took {took:?}");
    drop(raw);
    server.settles_to(before, Duration::from_secs(5));
}

#[test]
fn same_host_channels_stop_at_max_peers_and_a_closed_one_frees_its_slot() {
    use ascendless::engine::MAX_SAME_HOST_PEERS as MAX_PEERS;
    use ascendless::sys::socket::Conn;
    let server = Server::with_transport("auto");
    let name = format!("ascendless-adxl/{}/{}", server.proc.child.id(), server.addr.port());
    // A channel is welcomed when its list of registrations ends with DONE (kind 3).
    let welcomed = |c: &Conn| {
        c.set_read_timeout(Some(PROMPT)).unwrap();
        let mut buf = [0u8; 64];
        while let Ok(Some(_)) = c.recv(&mut buf, 1) {
            if buf[0] == 3 {
                return true;
            }
        }
        false
    };
    // A channel presents its ticket (fetched first: the socket waits 1 s for it); a refused
    // channel is reset, so the send may fail.
    let channel = || {
        let ticket = common::same_host::ticket_packet(server.addr, std::process::id());
        let c = Conn::connect(name.as_bytes(), PROMPT).unwrap();
        let _ = c.send(&ticket, &[]);
        c
    };
    let mut conns: Vec<Conn> = (0..MAX_PEERS).map(|_| channel()).collect();
    assert!(conns.iter().all(welcomed));
    let refused = channel();
    assert!(!welcomed(&refused), "the channel over the limit is closed unwelcomed");
    drop(conns.pop());
    let start = Instant::now();
    loop {
        let c = channel();
        if welcomed(&c) {
            break;
        }
        assert!(start.elapsed() < PROMPT, "the closed channel's slot did not come back");
    }
}
