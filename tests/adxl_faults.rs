//! ADXL engines (forced to TCP) under faults: a fault-injecting proxy between two engines
//! (delays, stalls, trickles, reordering across connections, cuts and resets at chosen
//! points), engines killed with SIGKILL before, during and after transfers and during
//! Connect, and the same between two network namespaces where the machine allows them.
//!
//! The rule every test checks: a transfer either completes with every byte right (the
//! destination is filled with another pattern first, then both sides' checksums compared) or
//! fails with an error within its time-out (plus [`MARGIN`] for a loaded machine); never a
//! hang; and the survivor connects again afterwards.
//!
//! Connecting through the proxy: the client gives Connect the proxy's address as the engine
//! name. That works because an engine's name is only its address: the client ignores the
//! name in HELLO_ACK and the server takes the one in HELLO as a label, so neither side checks
//! that the name it dialled is the name the other engine was initialised with.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

mod common;

use ascendless::engine::TransferOp;
use ascendless::engine::wire::{MemKind, Message, Region};
use ascendless::error::engine_status::*;
use common::engines::{self, Call, HUNG, Peer, ROLE, client_engine, host_mem, register, sum, transfer};
use common::proxy::{Dir, Fault, Proxy, Rule};

const MIB: usize = 1 << 20;
/// A transfer large enough to be striped over two connections.
const BIG: usize = 32 * MIB;
/// The time-out of every transfer (and, in the client child, of asynchronous ones).
const TIMEOUT: i32 = 3000;
const ASYNC_LIMIT: &[(&str, &str)] = &[("ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS", "3000")];
/// Slack over a time-out: the machine may be busy with other builds.
const MARGIN: Duration = Duration::from_millis(1500);

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        // Children of the namespace driver inherit its variable too.
        engines::child_main();
    } else if std::env::var_os(NETNS_ROLE).is_some() {
        netns_driver();
    }
}

fn limit() -> Duration {
    Duration::from_millis(TIMEOUT as u64) + MARGIN
}

fn word(op: TransferOp) -> &'static str {
    if op == TransferOp::Read { "read" } else { "write" }
}

fn call_word(call: Call) -> &'static str {
    if call == Call::Sync { "sync" } else { "async" }
}

/// The direction a transfer's data flows through the proxy.
fn data_dir(op: TransferOp) -> Dir {
    if op == TransferOp::Read { Dir::Down } else { Dir::Up }
}

// ---- the proxy schedules ----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Completes,
    Fails,
    /// Fails well before the time-out (in half of it).
    FailsAtOnce,
    Either,
}

/// One schedule of faults, by the direction of the data, and what it must do to a transfer of
/// each size.
struct Case {
    name: &'static str,
    rules: fn(Dir) -> Vec<Rule>,
    sizes: &'static [(usize, Expect)],
    /// Whether the proxy reorders data across the connections (checked in its statistics).
    reorders: bool,
    /// Whether the namespace run has it too.
    in_netns: bool,
}

fn other(d: Dir) -> Dir {
    if d == Dir::Up { Dir::Down } else { Dir::Up }
}

const CASES: &[Case] = &[
    Case {
        name: "every chunk delayed",
        rules: |_| vec![Rule::all(Dir::Up, Fault::Delay(ms(1))), Rule::all(Dir::Down, Fault::Delay(ms(1)))],
        sizes: &[(1, Expect::Completes), (BIG, Expect::Completes)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "data stalled shorter than the time-out",
        rules: |d| vec![Rule::all(d, Fault::Stall { at: 2 << 20, time: ms(700) })],
        sizes: &[(1, Expect::Completes), (BIG, Expect::Completes)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "data stalled past the time-out",
        rules: |d| vec![Rule::on(0, d, Fault::Stall { at: 2 << 20, time: ms(5000) })],
        sizes: &[(1, Expect::Completes), (BIG, Expect::Fails)],
        reorders: false,
        in_netns: true,
    },
    Case {
        name: "one byte per tick",
        rules: |d| {
            let t = Fault::Trickle { bytes: 1, tick: ms(1) };
            vec![Rule::all(d, t), Rule::all(other(d), t)]
        },
        sizes: &[(1, Expect::Completes), (3, Expect::Completes)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "4 KiB per tick",
        rules: |d| vec![Rule::all(d, Fault::Trickle { bytes: 4096, tick: ms(1) })],
        sizes: &[(MIB + 5, Expect::Completes)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "the first connection held while the second goes ahead",
        // The hold ends by itself before the 3 s time-out, and needs only 4 MiB of the other
        // 16 MiB stripe to pass first: a CI run under load once missed 8 MiB within 3 s.
        rules: |d| vec![Rule::on(0, d, Fault::Hold { at: 1 << 20, others: 4 << 20, max: ms(2000) })],
        sizes: &[(BIG, Expect::Completes)],
        reorders: true,
        in_netns: true,
    },
    Case {
        name: "closed in the middle of the data",
        rules: |d| vec![Rule::on(0, d, Fault::Cut { at: 4 << 20, reset: false })],
        sizes: &[(1, Expect::Completes), (BIG, Expect::Fails)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "reset in the middle of the data",
        rules: |d| vec![Rule::on(0, d, Fault::Cut { at: 4 << 20, reset: true })],
        sizes: &[(BIG, Expect::Fails)],
        reorders: false,
        in_netns: true,
    },
    Case {
        name: "the request's direction reset",
        rules: |d| vec![Rule::on(0, other(d), Fault::Cut { at: 200, reset: true })],
        sizes: &[(1, Expect::Either), (BIG, Expect::Either)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "one stripe's connection cut while the other's stalls",
        rules: |d| {
            vec![
                Rule::on(0, d, Fault::Stall { at: 2 << 20, time: ms(5000) }),
                Rule::on(1, d, Fault::Cut { at: 2 << 20, reset: false }),
            ]
        },
        sizes: &[(BIG, Expect::FailsAtOnce)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "the request held, then the data stalled",
        rules: |d| {
            vec![
                // The request (or the WRITE's payload) waits, then the data stops: the engine
                // must give the later waits only what is left of the time-out.
                Rule::on(0, Dir::Up, Fault::Stall { at: hello_len() + 1, time: ms(2000) }),
                Rule::on(0, d, Fault::Stall { at: 2 << 20, time: ms(8000) }),
            ]
        },
        sizes: &[(BIG, Expect::Fails)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "the data stalled twice, past the time-out",
        rules: |d| {
            vec![
                // With 4096 descriptors a stripe's payload takes two system calls: the first
                // ends late, the second must wait only what is left.
                Rule::on(0, d, Fault::Stall { at: 2 << 20, time: ms(2300) }),
                Rule::on(0, d, Fault::Stall { at: 12 << 20, time: ms(8000) }),
            ]
        },
        sizes: &[(BIG, Expect::Fails)],
        reorders: false,
        in_netns: false,
    },
    Case {
        name: "slow, then cut after a time",
        rules: |_| {
            vec![
                // 256 chunks of at most 64 KiB per 16 MiB stripe: at least 1.28 s.
                Rule::all(Dir::Up, Fault::Delay(ms(5))),
                Rule::all(Dir::Down, Fault::Delay(ms(5))),
                // Connection 1 is dialled when the transfer starts (for its second stripe).
                Rule::on(1, Dir::Up, Fault::CutAfter { time: ms(300), reset: false }),
            ]
        },
        sizes: &[(BIG, Expect::Fails)],
        reorders: false,
        in_netns: false,
    },
];

/// The length of the client's HELLO (its name and one region), so a fault can act on the
/// first byte after it.
fn hello_len() -> u64 {
    let region = Region { addr: 1, len: 1, kind: MemKind::Host, tag: 0 };
    Message::Hello { name: "127.0.0.1".into(), regions: vec![region], host: None }.encode().len() as u64
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The size of each engine's source and of its destination in a fault run.
const SIZE: usize = BIG + MIB;
const SERVER_SEED: u64 = 1;
const CLIENT_SEED: u64 = 2;

/// The two engines of a fault run: a server child and a client child.
struct Pair {
    server: Peer,
    target: SocketAddr,
    remote: usize,
    client: Peer,
    local: usize,
}

impl Pair {
    fn start() -> Pair {
        let (server, name, remote) = Peer::serve(SIZE, SERVER_SEED);
        Pair::with(server, name.parse().unwrap(), remote, &[])
    }

    fn with(server: Peer, target: SocketAddr, remote: usize, client_env: &[(&str, &str)]) -> Pair {
        let mut env = ASYNC_LIMIT.to_vec();
        env.extend_from_slice(client_env);
        let (client, local) = Peer::client(SIZE, CLIENT_SEED, &env);
        Pair { server, target, remote, client, local }
    }

    fn side(&mut self, server: bool) -> &mut Peer {
        if server { &mut self.server } else { &mut self.client }
    }

    /// One transfer through the proxy named `via`, from one side's source to the other's
    /// destination (cleared first): its status, after checking the time it took and, when it
    /// succeeded, every byte.
    fn transfer(&mut self, via: &str, op: TransferOp, call: Call, len: usize) -> u32 {
        self.transfer_timed(via, op, call, len).0
    }

    /// As [`Pair::transfer`]; also how long the transfer took.
    fn transfer_timed(&mut self, via: &str, op: TransferOp, call: Call, len: usize) -> (u32, Duration) {
        // Odd offsets for small transfers, so they start off any alignment.
        let off = if len < MIB { 4097 } else { 0 };
        // READ copies the server's source to the client, WRITE the client's to the server.
        let from_server = op == TransferOp::Read;
        let (local, remote) = if from_server {
            (self.local + SIZE + off, self.remote + off)
        } else {
            (self.local + off, self.remote + SIZE + off)
        };
        let (dst, seed) = if from_server { (local, SERVER_SEED) } else { (remote, CLIENT_SEED) };
        assert_eq!(self.side(!from_server).code(&format!("clear {dst} {len}")), 0);
        let command = format!(
            "xfer {} {via} {} {local} {remote} {len} {} {TIMEOUT}",
            call_word(call),
            word(op),
            if len >= BIG {
                4096
            } else if len >= MIB {
                8
            } else {
                1
            }
        );
        let t = Instant::now();
        let r = self.client.0.ask(&command);
        let (code, took) = (r[0] as u32, Duration::from_millis(r[1]));
        assert_ne!(code, HUNG, "{command}: still waiting after {:?}", t.elapsed());
        assert!(took <= limit(), "{command}: status {code} after {took:?}");
        if code == 0 {
            let right = self.side(!from_server).value(&format!("check {dst} {len} {seed} {off}"));
            assert_eq!(right, 1, "{command} completed with wrong bytes");
        }
        (code, took)
    }
}

/// Runs every size and operation of `case`, each through a new proxy, as TransferSync every
/// third turn and TransferAsync otherwise (so over the cases each operation and size runs
/// both ways); after a failure the client connects again (the rules of connection 0 no longer
/// apply) and a transfer must then complete.
fn run_case(pair: &mut Pair, case: &Case, turn: &mut usize) {
    for &(len, expect) in case.sizes {
        for op in [TransferOp::Read, TransferOp::Write] {
            *turn += 1;
            {
                let call = if *turn % 3 == 0 { Call::Sync } else { Call::Async };
                let proxy = Proxy::start(pair.target, (case.rules)(data_dir(op)));
                let via = proxy.name();
                assert_eq!(pair.client.code(&format!("connect {via} {TIMEOUT}")), 0, "{}", case.name);
                let what = format!("{}: {} {len} bytes {call:?}", case.name, word(op));
                let (code, took) = pair.transfer_timed(&via, op, call, len);
                eprintln!("{what}: status {code}");
                match expect {
                    Expect::Completes => assert_eq!(code, 0, "{what}"),
                    Expect::Fails => assert_ne!(code, 0, "{what}"),
                    Expect::FailsAtOnce => {
                        assert_ne!(code, 0, "{what}");
                        assert!(took < limit() / 2, "{what}: failed after {took:?}");
                    }
                    Expect::Either => {}
                }
                if case.reorders {
                    assert!(proxy.stats().reordered.load(std::sync::atomic::Ordering::Acquire) > 0, "{what}");
                }
                if code != 0 {
                    proxy.set_rules(vec![]);
                    let again = pair.client.code(&format!("connect {via} {TIMEOUT}"));
                    assert!(again == 0 || again == ADXL_ALREADY_CONNECTED, "{what}: reconnect {again}");
                    assert_eq!(pair.transfer(&via, op, call, len.min(MIB)), 0, "{what}: after reconnecting");
                }
                assert_eq!(pair.client.code(&format!("disconnect {via}")), 0);
            }
        }
    }
}

#[test]
fn transfers_through_a_faulty_network_complete_right_or_fail_in_time() {
    let mut pair = Pair::start();
    let t = Instant::now();
    let mut turn = 0;
    for case in CASES {
        run_case(&mut pair, case, &mut turn);
    }
    eprintln!("{} schedules in {:?}", CASES.len(), t.elapsed());
    pair.client.finish();
    pair.server.finish();
}

#[test]
fn a_broken_handshake_fails_connect_in_time_and_the_next_connect_works() {
    let mut pair = Pair::start();
    // A stalled HELLO_ACK is a time-out. A handshake cut or reset on every connection fails
    // (Connect dials again until its time-out, as after an overloaded server's eviction);
    // cut or reset on the first connection only, the next one is made and Connect succeeds.
    let cut = |conn: Option<usize>, dir, reset| Rule { conn, dir, fault: Fault::Cut { at: 4, reset } };
    let schedules = [
        ("HELLO_ACK stalled", Rule::on(0, Dir::Down, Fault::Stall { at: 4, time: ms(8000) }), ADXL_TIMEOUT),
        ("HELLO cut, every time", cut(None, Dir::Up, false), ADXL_FAILED),
        ("HELLO_ACK reset, every time", cut(None, Dir::Down, true), ADXL_FAILED),
        ("HELLO cut once", cut(Some(0), Dir::Up, false), 0),
        ("HELLO_ACK reset once", cut(Some(0), Dir::Down, true), 0),
    ];
    for (what, rule, status) in schedules {
        let proxy = Proxy::start(pair.target, vec![rule]);
        let via = proxy.name();
        let t = Instant::now();
        assert_eq!(pair.client.code(&format!("connect {via} 1000")), status, "{what}");
        assert!(t.elapsed() <= ms(1000) + MARGIN, "{what}: {:?}", t.elapsed());
        if status != 0 {
            proxy.set_rules(vec![]);
            assert_eq!(pair.client.code(&format!("connect {via} {TIMEOUT}")), 0, "{what}: again");
        }
        assert_eq!(pair.transfer(&via, TransferOp::Read, Call::Sync, MIB), 0, "{what}");
        assert_eq!(pair.client.code(&format!("disconnect {via}")), 0);
    }
    pair.client.finish();
    pair.server.finish();
}

// ---- peers killed ----

/// A serving child listening as `name` again (its port may still be held for a moment).
fn restart(name: &str, size: usize, seed: u64) -> (Peer, usize) {
    let (p, _, addr) = Peer::serve_as(Peer::start(&[]), size, seed, name);
    (p, addr)
}

/// This process's engine, its `len` registered bytes, and a check that a transfer to `peer`
/// moves them right.
struct Survivor {
    engine: ascendless::engine::Engine,
    local: usize,
}

impl Survivor {
    fn new(len: usize) -> Survivor {
        let engine = client_engine();
        let local = host_mem(len, 3);
        register(&engine, local, len);
        Survivor { engine, local }
    }

    fn xfer(&self, peer: &str, op: TransferOp, call: Call, remote: usize, len: usize) -> (u32, Duration) {
        transfer(&self.engine, peer, op, call, self.local, remote, len, 8, TIMEOUT)
    }

    /// A READ of `len` bytes that must complete and match the peer's bytes.
    fn read_right(&self, peer_name: &str, peer: &mut Peer, remote: usize, len: usize) {
        let (code, _) = self.xfer(peer_name, TransferOp::Read, Call::Sync, remote, len);
        assert_eq!(code, 0);
        assert_eq!(sum(self.local, len), peer.sum(remote, len));
    }

    fn connect(&self, name: &str) -> u32 {
        self.engine.connect(name, TIMEOUT).map_or_else(|e| e.status, |()| 0)
    }
}

#[test]
fn a_peer_killed_while_idle_fails_the_next_transfer_and_a_restarted_one_is_reached() {
    let survivor = Survivor::new(MIB);
    let (mut server, name, remote) = Peer::serve(MIB, 1);
    assert_eq!(survivor.connect(&name), 0);
    survivor.read_right(&name, &mut server, remote, MIB);
    for call in [Call::Sync, Call::Async] {
        server.kill();
        let (code, took) = survivor.xfer(&name, TransferOp::Write, call, remote, MIB);
        assert!(code == ADXL_FAILED || code == ADXL_NOT_CONNECTED, "{call:?}: {code}");
        assert!(took <= limit(), "{call:?}: {took:?}");
        let (s, remote) = restart(&name, MIB, 5);
        server = s;
        // Connect finds the old link dead and replaces it.
        assert_eq!(survivor.connect(&name), 0);
        survivor.read_right(&name, &mut server, remote, MIB);
    }
    // Killed after transfers: Disconnect cleans up locally, and the restarted peer is reached.
    server.kill();
    assert!(survivor.engine.disconnect(&name, 1000).is_ok());
    let (mut server, remote) = restart(&name, MIB, 6);
    assert_eq!(survivor.connect(&name), 0);
    survivor.read_right(&name, &mut server, remote, MIB);
    server.finish();
}

#[test]
fn a_peer_killed_during_a_striped_transfer_fails_it_in_time_and_a_restarted_one_is_reached() {
    let survivor = Survivor::new(BIG);
    let (mut server, name, mut remote) = Peer::serve(BIG, 1);
    let target: SocketAddr = name.parse().unwrap();
    // Slowed to a few seconds per transfer, so the kill lands in the middle.
    let slow = || vec![Rule::all(Dir::Up, Fault::Delay(ms(3))), Rule::all(Dir::Down, Fault::Delay(ms(3)))];
    let proxy = Proxy::start(target, slow());
    let via = proxy.name();
    let moved = || {
        let b = &proxy.stats().bytes;
        b[0].load(std::sync::atomic::Ordering::Acquire) + b[1].load(std::sync::atomic::Ordering::Acquire)
    };
    for op in [TransferOp::Read, TransferOp::Write] {
        for call in [Call::Sync, Call::Async] {
            assert_eq!(survivor.connect(&via), 0);
            let before = moved();
            let (code, took, killed_after) = std::thread::scope(|s| {
                let run = s.spawn(|| survivor.xfer(&via, op, call, remote, BIG));
                let t = Instant::now();
                while moved() < before + 4 * MIB as u64 && t.elapsed() < limit() {
                    std::thread::sleep(ms(5));
                }
                let in_flight = moved() - before;
                assert!(in_flight < BIG as u64, "{op:?} {call:?}: the transfer ended before the kill");
                server.kill();
                let killed = Instant::now();
                let (code, took) = run.join().unwrap();
                (code, took, killed.elapsed())
            });
            eprintln!("{op:?} {call:?}: status {code} {killed_after:?} after the kill");
            assert_ne!(code, 0, "{op:?} {call:?}");
            assert!(took <= limit(), "{op:?} {call:?}: {took:?}");
            let (s, r) = restart(&name, BIG, 7);
            (server, remote) = (s, r);
            proxy.set_rules(vec![]);
            assert_eq!(survivor.connect(&via), 0);
            survivor.read_right(&via, &mut server, remote, MIB);
            assert!(survivor.engine.disconnect(&via, 1000).is_ok());
            proxy.set_rules(slow());
        }
    }
    server.finish();
}

#[test]
fn a_peer_killed_during_connect_fails_it_in_time_and_a_restarted_one_is_reached() {
    let survivor = Survivor::new(MIB);
    // The peer stopped: the kernel accepts the connection, HELLO waits unanswered.
    let (mut server, name, _) = Peer::serve(MIB, 1);
    common::stop(server.0.child.id());
    let (code, after_kill) = std::thread::scope(|s| {
        let connect = s.spawn(|| survivor.connect(&name));
        std::thread::sleep(ms(300));
        server.kill();
        let t = Instant::now();
        (connect.join().unwrap(), t.elapsed())
    });
    eprintln!("stopped, then killed during Connect: status {code} {after_kill:?} after the kill");
    assert!(code == ADXL_FAILED || code == ADXL_TIMEOUT, "{code}");
    assert!(after_kill <= limit());
    let (mut server, remote) = restart(&name, MIB, 2);
    assert_eq!(survivor.connect(&name), 0);
    survivor.read_right(&name, &mut server, remote, MIB);
    // HELLO_ACK held by the proxy while the peer is killed.
    let proxy = Proxy::start(
        name.parse().unwrap(),
        vec![Rule::on(0, Dir::Down, Fault::Stall { at: 4, time: ms(8000) })],
    );
    let via = proxy.name();
    let t = Instant::now();
    let code = std::thread::scope(|s| {
        let connect = s.spawn(|| survivor.connect(&via));
        std::thread::sleep(ms(300));
        server.kill();
        connect.join().unwrap()
    });
    eprintln!("killed while its HELLO_ACK was held: status {code} after {:?}", t.elapsed());
    assert!(code == ADXL_FAILED || code == ADXL_TIMEOUT, "{code}");
    assert!(t.elapsed() <= limit());
    let (mut server, remote) = restart(&name, MIB, 3);
    assert_eq!(survivor.connect(&via), 0);
    survivor.read_right(&via, &mut server, remote, MIB);
    server.finish();
}

// ---- two network namespaces ----

const NETNS_ROLE: &str = "ASCENDLESS_FAULTS_NETNS";
/// Where the server engine listens, in its own namespace.
const NETNS_SERVER: &str = "10.77.0.2:26000";

/// Inside a user and network namespace (made by the test below): a second network namespace
/// for the server, joined by a veth pair; this process, the proxy and the client engine stay
/// in the first. Runs a subset of the schedules and a kill, then exits; a failure panics.
fn netns_driver() {
    let holder = std::env::var(NETNS_ROLE).unwrap();
    let [a, b, c, d] = common::SECOND_NAMESPACE;
    let prefix = [a, b, c, d, holder.as_str()];
    let start = || Peer(common::Scripted::spawn_via(&prefix, ROLE, &[]));
    let (server, name, remote) = Peer::serve_as(start(), SIZE, SERVER_SEED, NETNS_SERVER);
    let mut pair = Pair::with(server, name.parse().unwrap(), remote, &[]);
    for case in CASES.iter().filter(|c| c.in_netns) {
        run_case(&mut pair, case, &mut 0);
    }
    // A kill between the namespaces, then the server restarted at the same address.
    let proxy = Proxy::start(pair.target, vec![]);
    let via = proxy.name();
    assert_eq!(pair.client.code(&format!("connect {via} {TIMEOUT}")), 0);
    assert_eq!(pair.transfer(&via, TransferOp::Write, Call::Sync, MIB), 0);
    pair.server.kill();
    let code = pair.transfer(&via, TransferOp::Read, Call::Sync, MIB);
    assert!(code == ADXL_FAILED || code == ADXL_NOT_CONNECTED, "{code}");
    let (server, _, remote) = Peer::serve_as(start(), SIZE, SERVER_SEED, NETNS_SERVER);
    (pair.server, pair.remote) = (server, remote);
    assert_eq!(pair.client.code(&format!("connect {via} {TIMEOUT}")), 0);
    assert_eq!(pair.transfer(&via, TransferOp::Read, Call::Async, BIG), 0);
    pair.client.finish();
    pair.server.finish();
    println!("{NETNS_DONE}");
}

/// What the namespace driver prints when it got to the end.
const NETNS_DONE: &str = "the namespace run is complete";

#[test]
fn faults_and_a_kill_between_two_network_namespaces() {
    if !common::namespaces_allowed() {
        return;
    }
    let t = Instant::now();
    let (ok, out) = common::in_two_namespaces(NETNS_ROLE, NETNS_DONE);
    assert!(ok, "the namespace run failed:\n{out}");
    eprintln!("namespace run in {:?}", t.elapsed());
}

// ---- the proxy itself ----

/// A server that sends `len` bytes of a pattern to each connection and closes its side, then
/// reads until the other side closes; its address.
fn pattern_server(len: usize) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming().take(4) {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let _ = s.write_all(&common::pattern(len, 9));
                let _ = s.shutdown(std::net::Shutdown::Write);
                let _ = s.read_to_end(&mut Vec::new());
            });
        }
    });
    addr
}

/// Reads through `proxy` until end of file or an error (10 s at most): what arrived, whether
/// it ended with an error (a reset), and how long it took.
fn read_through(proxy: &Proxy) -> (Vec<u8>, bool, Duration) {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(proxy.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (got, false, t.elapsed()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, true, t.elapsed()),
        }
    }
}

#[test]
fn the_proxy_forwards_every_byte_and_faults_where_told() {
    let len = 300_000;
    let want = common::pattern(len, 9);
    let target = pattern_server(len);
    let down = |f| vec![Rule::all(Dir::Down, f)];
    // Stalled and trickled: every byte, in order, and not before the stall is over.
    let p = Proxy::start(target, down(Fault::Stall { at: 1000, time: ms(300) }));
    let (got, reset, took) = read_through(&p);
    assert!(got == want && !reset && took >= ms(300), "{} bytes, {took:?}", got.len());
    let p = Proxy::start(target, down(Fault::Trickle { bytes: 30_000, tick: ms(20) }));
    let (got, _, took) = read_through(&p);
    assert!(got == want && took >= ms(180), "{} bytes, {took:?}", got.len());
    // Closed or reset at an offset: exactly the bytes before it.
    let p = Proxy::start(target, down(Fault::Cut { at: 1000, reset: false }));
    let (got, reset, _) = read_through(&p);
    assert!(got == want[..1000] && !reset, "{} bytes, reset {reset}", got.len());
    let p = Proxy::start(target, down(Fault::Cut { at: 1000, reset: true }));
    let (got, reset, _) = read_through(&p);
    assert!(got == want[..1000] && reset, "{} bytes, reset {reset}", got.len());
    assert_eq!(p.stats().cuts.load(std::sync::atomic::Ordering::Acquire), 1);
}
