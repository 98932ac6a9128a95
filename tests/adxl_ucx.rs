//! The engine over UCX (build feature `ucx`): two engines in two child processes with
//! `adxl.Transport=ucx`, once over UCX's TCP transport on loopback (`UCX_TLS=tcp`,
//! `UCX_NET_DEVICES=lo`) and once over its shared-memory transports (`UCX_TLS=sm`). The engine's
//! behaviours must hold as they do over its own TCP: every byte arrives, unregistered memory is
//! relayed, memory registered or deregistered after Connect is handled, a notify lands after
//! the data sent before it, a stalled peer is a TIMEOUT and a dead one a prompt FAILED, and a
//! peer that does not offer UCX fails Connect.
//!
//! Run with `cargo test --features ucx --test adxl_ucx` (`make test` does when libucx-dev is
//! installed).
#![cfg(feature = "ucx")]

mod common;

use std::time::{Duration, Instant};

use ascendless::error::engine_status::{ADXL_FAILED, ADXL_NOT_CONNECTED, ADXL_TIMEOUT};
use common::engines::{self, Peer, ROLE, TRANSPORT};

const SIZE: usize = 32 << 20;
const SERVER_SEED: u64 = 11;
const CLIENT_SEED: u64 = 22;

/// The child: an engine scripted by the parent (see `tests/common/engines.rs`).
#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        ascendless::logging::init();
        engines::child_main();
    } else if std::env::var_os(NETNS_ROLE).is_some() {
        netns_driver();
    }
}

/// UCX's wire for a case: its TCP transport on loopback only, or shared memory.
#[derive(Clone, Copy, Debug)]
enum Wire {
    Tcp,
    Sm,
}

fn env(wire: Wire, transport: &str) -> Vec<(&'static str, String)> {
    let mut v = vec![(TRANSPORT, transport.to_owned())];
    // Logging of the children, for debugging (ASCEND_GLOBAL_LOG_LEVEL of the children).
    if let Ok(level) = std::env::var("ASCENDLESS_TEST_CHILD_LOG") {
        v.push(("ASCEND_GLOBAL_LOG_LEVEL", level));
    }
    match wire {
        Wire::Tcp => v.extend([("UCX_TLS", "tcp".to_owned()), ("UCX_NET_DEVICES", "lo".to_owned())]),
        Wire::Sm => v.push(("UCX_TLS", "sm".to_owned())),
    }
    v
}

fn start(wire: Wire, transport: &str) -> Peer {
    let env = env(wire, transport);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Peer::start(&env)
}

/// A serving child and a client child over UCX, connected: (server, its name, its memory,
/// client, its memory). Each has `SIZE` bytes of its pattern, then `SIZE` bytes to write into.
fn pair(wire: Wire) -> (Peer, String, usize, Peer, usize) {
    let (server, name, s_mem) = Peer::serve_as(start(wire, "ucx"), SIZE, SERVER_SEED, "");
    let mut client = start(wire, "ucx");
    let c_mem = client.value(&format!("client {SIZE} {CLIENT_SEED}"));
    assert_eq!(client.code(&format!("connect {name} 5000")), 0, "{wire:?}: connect");
    (server, name, s_mem, client, c_mem)
}

/// Bytes the engine moved over (TCP, UCX).
fn moved(p: &mut Peer) -> (u64, u64) {
    let w = p.words("counters");
    assert_eq!(w[0], "0");
    (w[3].parse().unwrap(), w[4].parse().unwrap())
}

/// `xfer` with its status and milliseconds.
#[allow(clippy::too_many_arguments)]
fn xfer(
    p: &mut Peer,
    call: &str,
    name: &str,
    op: &str,
    local: usize,
    remote: usize,
    len: usize,
    pieces: usize,
    timeout: u32,
) -> (u32, u64) {
    let w = p.words(&format!("xfer {call} {name} {op} {local} {remote} {len} {pieces} {timeout}"));
    (w[0].parse().unwrap(), w[1].parse().unwrap())
}

fn check(p: &mut Peer, addr: usize, len: usize, seed: u64, offset: usize) -> bool {
    p.value(&format!("check {addr} {len} {seed} {offset}")) == 1
}

fn reads_and_writes_every_size(wire: Wire) {
    let (mut server, name, s_mem, mut client, c_mem) = pair(wire);
    let (_, ucx_before) = moved(&mut client);
    let mut expected_ucx = 0;
    for (len, pieces) in [(1, 1), (4096, 1), (1 << 20, 256), (4 << 20, 4096), (SIZE, 1)] {
        for call in ["sync", "async"] {
            // READ the server's pattern into the client's destination half.
            let (code, _) = xfer(&mut client, call, &name, "read", c_mem + SIZE, s_mem, len, pieces, 10_000);
            assert_eq!(code, 0, "{wire:?} {call} read {len} in {pieces}");
            assert!(check(&mut client, c_mem + SIZE, len, SERVER_SEED, 0), "{wire:?} {call} read {len}");
            // WRITE the client's pattern into the server's destination half.
            let (code, _) = xfer(&mut client, call, &name, "write", c_mem, s_mem + SIZE, len, pieces, 10_000);
            assert_eq!(code, 0, "{wire:?} {call} write {len} in {pieces}");
            assert!(check(&mut server, s_mem + SIZE, len, CLIENT_SEED, 0), "{wire:?} {call} write {len}");
            expected_ucx += 2 * len as u64;
        }
    }
    let (tcp, ucx) = moved(&mut client);
    assert_eq!(ucx - ucx_before, expected_ucx, "{wire:?}: every byte went over UCX");
    assert_eq!(tcp, 0, "{wire:?}: nothing went over the engine's TCP");
    // The data of a TransferAsync lands before a notify sent after it.
    server.0.send(&format!("await-notify {} {} {CLIENT_SEED} {}", s_mem + SIZE, 1 << 20, 4096));
    let w = client.words(&format!("write-notify {name} {} {} {}", c_mem + 4096, s_mem + SIZE, 1 << 20));
    assert_eq!(w, ["0", "0"], "{wire:?}: write then notify");
    assert_eq!(server.0.reply("await-notify"), [0, 1], "{wire:?}: the notify came before its data");
    assert_eq!(client.code(&format!("disconnect {name}")), 0);
    let (code, _) = xfer(&mut client, "sync", &name, "read", c_mem, s_mem, 8, 1, 1000);
    assert_eq!(code, ADXL_NOT_CONNECTED);
    client.finish();
    server.finish();
}

#[test]
fn reads_and_writes_every_size_over_ucx_tcp() {
    reads_and_writes_every_size(Wire::Tcp);
}

#[test]
fn reads_and_writes_every_size_over_ucx_shared_memory() {
    reads_and_writes_every_size(Wire::Sm);
}

/// Unregistered memory on either side is relayed over the engine's TCP; memory registered
/// after Connect goes over UCX; memory deregistered is no longer reached through UCX.
fn registration_changes_and_relay(wire: Wire) {
    let (mut server, name, s_mem, mut client, c_mem) = pair(wire);
    let len = 256 << 10;
    // The client's own unregistered memory, both ways.
    let plain = client.value(&format!("plain {len} 33"));
    let (tcp0, ucx0) = moved(&mut client);
    assert_eq!(xfer(&mut client, "sync", &name, "write", plain, s_mem + SIZE, len, 4, 5000).0, 0);
    assert!(check(&mut server, s_mem + SIZE, len, 33, 0), "{wire:?}: relayed write");
    assert_eq!(xfer(&mut client, "sync", &name, "read", plain, s_mem, len, 4, 5000).0, 0);
    assert!(check(&mut client, plain, len, SERVER_SEED, 0), "{wire:?}: relayed read");
    // The server's unregistered memory.
    let remote_plain = server.value(&format!("plain {len} 44"));
    assert_eq!(xfer(&mut client, "sync", &name, "read", c_mem + SIZE, remote_plain, len, 1, 5000).0, 0);
    assert!(check(&mut client, c_mem + SIZE, len, 44, 0), "{wire:?}: read of the peer's unregistered memory");
    let (tcp1, ucx1) = moved(&mut client);
    assert_eq!((tcp1 - tcp0, ucx1 - ucx0), (3 * len as u64, 0), "{wire:?}: relayed calls used TCP");
    // Registered after Connect: UCX once the client has its key.
    let w = server.words(&format!("more {len} 55"));
    let (more, handle): (usize, u64) = (w[1].parse().unwrap(), w[2].parse().unwrap());
    assert_eq!(xfer(&mut client, "sync", &name, "read", c_mem + SIZE, more, len, 2, 5000).0, 0);
    assert!(check(&mut client, c_mem + SIZE, len, 55, 0), "{wire:?}: read of memory registered later");
    let (tcp2, ucx2) = moved(&mut client);
    assert_eq!((tcp2 - tcp1, ucx2 - ucx1), (0, len as u64), "{wire:?}: the new region went over UCX");
    // Deregistered: the peer's announcement drops its key, so the call is relayed instead.
    assert_eq!(server.code(&format!("deregister {handle}")), 0);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(xfer(&mut client, "sync", &name, "read", c_mem + SIZE, more, len, 1, 5000).0, 0);
    assert!(check(&mut client, c_mem + SIZE, len, 55, 0));
    let (tcp3, ucx3) = moved(&mut client);
    assert_eq!((tcp3 - tcp2, ucx3 - ucx2), (len as u64, 0), "{wire:?}: deregistered memory was relayed");
    client.finish();
    server.finish();
}

#[test]
fn registration_changes_and_relay_over_ucx_tcp() {
    registration_changes_and_relay(Wire::Tcp);
}

#[test]
fn registration_changes_and_relay_over_ucx_shared_memory() {
    registration_changes_and_relay(Wire::Sm);
}

/// Over UCX's TCP a put or get needs the peer's worker: a stopped peer is a TIMEOUT within the
/// call's time-out, and once it runs again the next call makes a new endpoint and succeeds.
/// (Over shared memory UCX reads and writes a stopped peer's memory by itself, as RDMA would.)
#[test]
fn a_stopped_peer_is_a_timeout_and_the_link_recovers() {
    let (mut server, name, s_mem, mut client, c_mem) = pair(Wire::Tcp);
    let pid = server.value("pid") as u32;
    common::stop(pid);
    let t = Instant::now();
    let (code, _) = xfer(&mut client, "sync", &name, "read", c_mem + SIZE, s_mem, 1 << 20, 1, 500);
    let took = t.elapsed();
    common::signal(pid, "CONT");
    assert_eq!(code, ADXL_TIMEOUT, "read from a stopped peer");
    assert!(took < Duration::from_millis(2500), "TIMEOUT after {took:?}");
    eprintln!("a read with a 500 ms time-out from a stopped peer: TIMEOUT after {took:?}");
    let (code, _) = xfer(&mut client, "sync", &name, "read", c_mem + SIZE, s_mem, 1 << 20, 1, 5000);
    assert_eq!(code, 0, "after the peer resumed");
    assert!(check(&mut client, c_mem + SIZE, 1 << 20, SERVER_SEED, 0));
    client.finish();
    server.finish();
}

/// A peer killed during large transfers fails the call within a second, and a restarted peer
/// at the same name is reached by the next Connect.
fn a_killed_peer_is_a_prompt_failure(wire: Wire) {
    let (mut server, name, s_mem, mut client, c_mem) = pair(wire);
    // Many large calls in a row; the kill lands during one of them.
    client.0.send(&format!("xfer sync {name} read {} {s_mem} {SIZE} 1 30000", c_mem + SIZE));
    assert_eq!(client.0.reply("xfer")[0], 0);
    let killer = std::thread::spawn({
        let pid = server.value("pid") as u32;
        move || {
            std::thread::sleep(Duration::from_millis(30));
            common::signal(pid, "KILL");
            Instant::now()
        }
    });
    let mut failed = None;
    for _ in 0..200 {
        let (code, _) = xfer(&mut client, "sync", &name, "read", c_mem + SIZE, s_mem, SIZE, 1, 30_000);
        if code != 0 {
            failed = Some((code, Instant::now()));
            break;
        }
    }
    let killed_at = killer.join().unwrap();
    server.kill();
    let (code, at) = failed.expect("a transfer failed after the kill");
    assert_eq!(code, ADXL_FAILED, "{wire:?}");
    let after = at.saturating_duration_since(killed_at);
    assert!(after < Duration::from_secs(2), "{wire:?}: failed {after:?} after the kill");
    eprintln!("{wire:?}: the call failed {after:?} after the kill");
    // A new server at the same name is reached again: by this engine over UCX's TCP; over its
    // shared memory by a new engine (UCX 1.13's shared-memory transports can leave a worker
    // that saw a peer die unable to reach a restarted one; see docs/deploy-rdma.md).
    let (again, _, s2) = Peer::serve_as(start(wire, "ucx"), SIZE, SERVER_SEED, &name);
    let mut fresh = match wire {
        Wire::Tcp => None,
        Wire::Sm => {
            let mut p = start(wire, "ucx");
            let mem = p.value(&format!("client {SIZE} {CLIENT_SEED}"));
            Some((p, mem))
        }
    };
    let (who, c_mem) = match fresh.as_mut() {
        None => (&mut client, c_mem),
        Some((p, mem)) => (p, *mem),
    };
    let mut code = 1;
    for _ in 0..50 {
        code = who.code(&format!("connect {name} 2000"));
        if code == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(code, 0, "{wire:?}: connect to the restarted peer");
    let (code, ms) = xfer(who, "sync", &name, "read", c_mem + SIZE, s2, 4096, 1, 5000);
    assert_eq!(code, 0, "{wire:?}: read from the restarted peer ({ms} ms)");
    assert!(check(who, c_mem + SIZE, 4096, SERVER_SEED, 0));
    if let Some((p, _)) = fresh {
        p.finish();
    }
    client.finish();
    again.finish();
}

#[test]
fn a_killed_peer_is_a_prompt_failure_over_ucx_tcp() {
    a_killed_peer_is_a_prompt_failure(Wire::Tcp);
}

#[test]
fn a_killed_peer_is_a_prompt_failure_over_ucx_shared_memory() {
    a_killed_peer_is_a_prompt_failure(Wire::Sm);
}

/// Forced to UCX, a peer that does not offer it (forced to TCP) fails Connect; under `auto`
/// the same peer is reached over TCP.
#[test]
fn a_peer_without_ucx_fails_a_forced_connect_and_auto_falls_back() {
    let (server, name, s_mem) = Peer::serve_as(start(Wire::Tcp, "tcp"), 1 << 20, SERVER_SEED, "");
    let mut forced = start(Wire::Tcp, "ucx");
    forced.value(&format!("client {} {CLIENT_SEED}", 1 << 20));
    assert_eq!(forced.code(&format!("connect {name} 5000")), ADXL_FAILED);
    let mut auto = start(Wire::Tcp, "auto");
    let c_mem = auto.value(&format!("client {} {CLIENT_SEED}", 1 << 20));
    assert_eq!(auto.code(&format!("connect {name} 5000")), 0);
    assert_eq!(xfer(&mut auto, "sync", &name, "read", c_mem, s_mem, 4096, 1, 5000).0, 0);
    assert_eq!(moved(&mut auto), (4096, 0));
    forced.finish();
    auto.finish();
    server.finish();
}

// ---- auto between two hosts (network namespaces) ----

const NETNS_ROLE: &str = "ASCENDLESS_UCX_NETNS";
const NETNS_DONE: &str = "the namespace run is complete";

/// In the first namespace, with a serving engine in the second (another host as far as the
/// engines can tell: the server's same-host socket is out of reach), both under `auto` with
/// UCX's TCP on the veth pair: the link takes UCX, and every byte goes through it.
fn netns_driver() {
    let holder = std::env::var(NETNS_ROLE).unwrap();
    let [a, b, c, d] = common::SECOND_NAMESPACE;
    let prefix = [a, b, c, d, holder.as_str()];
    let env = |dev| [(TRANSPORT, "auto"), ("UCX_TLS", "tcp"), ("UCX_NET_DEVICES", dev)];
    let server = Peer(common::Scripted::spawn_via(&prefix, ROLE, &env("fb")));
    let (server, name, s_mem) = Peer::serve_as(server, 1 << 20, SERVER_SEED, "10.77.0.2:26001");
    let mut client = Peer::start(&env("fa"));
    let c_mem = client.value(&format!("client {} {CLIENT_SEED}", 1 << 20));
    assert_eq!(client.code(&format!("connect {name} 5000")), 0);
    for op in ["read", "write"] {
        let (local, remote) =
            if op == "read" { (c_mem + (1 << 20), s_mem) } else { (c_mem, s_mem + (1 << 20)) };
        assert_eq!(xfer(&mut client, "sync", &name, op, local, remote, 1 << 20, 16, 5000).0, 0, "{op}");
    }
    assert!(check(&mut client, c_mem + (1 << 20), 1 << 20, SERVER_SEED, 0));
    let (mut server, mut client) = (server, client);
    assert!(check(&mut server, s_mem + (1 << 20), 1 << 20, CLIENT_SEED, 0));
    assert_eq!(moved(&mut client), (0, 2 << 20), "auto between hosts moved its bytes with UCX");
    client.finish();
    server.finish();
    println!("{NETNS_DONE}");
}

/// Under `auto`, an engine on another host that offers UCX is reached with UCX.
#[test]
fn auto_uses_ucx_with_an_engine_on_another_host() {
    if !common::namespaces_allowed() {
        return;
    }
    let (ok, out) = common::in_two_namespaces(NETNS_ROLE, NETNS_DONE);
    assert!(ok, "the namespace run failed:\n{out}");
}

/// Under `auto`, an engine on this host is reached through the same-host path, not UCX.
#[test]
fn auto_keeps_the_same_host_path_on_one_host() {
    let (server, name, s_mem) = Peer::serve_as(start(Wire::Sm, "auto"), 1 << 20, SERVER_SEED, "");
    let mut client = start(Wire::Sm, "auto");
    let c_mem = client.value(&format!("client {} {CLIENT_SEED}", 1 << 20));
    assert_eq!(client.code(&format!("connect {name} 5000")), 0);
    assert_eq!(xfer(&mut client, "sync", &name, "read", c_mem, s_mem, 1 << 20, 1, 5000).0, 0);
    assert!(check(&mut client, c_mem, 1 << 20, SERVER_SEED, 0));
    let w = client.words("counters");
    assert_eq!(w[1..], ["1048576", "0", "0", "0"], "direct, kernel, TCP and UCX bytes");
    client.finish();
    server.finish();
}
