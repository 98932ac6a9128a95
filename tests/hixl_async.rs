//! What HIXL adds to the engine, end to end between engines over TCP: ConnectAsync and
//! DisconnectAsync under churn (many remotes, connects and disconnects interleaved, a peer
//! stopped and then killed while a connect to it waits), the batched GetTransferStatus with
//! thousands of requests in flight, and local-only registrations that peers cannot use.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

mod common;

use ascendless::engine::{AsyncConnectStatus, Engine, TransferDesc, TransferOp};
use ascendless::error::engine_status::*;
use common::engines::{self, Peer, ROLE, client_engine, host_mem, no_vouch, register, serving_engine, sum};

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        engines::child_main();
    }
}

/// Polls until `remote`'s async state is `want`; the state it ended in.
fn settle(e: &Engine, remote: &str, want: AsyncConnectStatus, limit: Duration) -> AsyncConnectStatus {
    let t = Instant::now();
    loop {
        let s = e.async_connect_status(remote).unwrap();
        if s == want || t.elapsed() > limit {
            return s;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn connects_and_disconnects_interleaved_over_many_remotes_end_in_the_latest_state() {
    let servers: Vec<(Engine, String)> = (0..10).map(|_| serving_engine(None)).collect();
    let client = Engine::new();
    // The pool's size comes from GlobalResourceConfig, as the vendor's does.
    let pool = r#"{"connect_pool.thread_num":"4","connect_pool.task_queue_capacity":"256"}"#;
    client.initialize("127.0.0.1", &[("adxl.Transport", "tcp"), ("GlobalResourceConfig", pool)]).unwrap();
    let mut want = Vec::new();
    for round in 0..4 {
        for (i, (_, name)) in servers.iter().enumerate() {
            client.connect_async(name, 3000).unwrap();
            // Every third remote, rotating with the round, is disconnected again at once.
            if (i + round) % 3 == 0 {
                client.disconnect_async(name, 3000).unwrap();
            }
        }
    }
    for (i, (_, name)) in servers.iter().enumerate() {
        let connected = (i + 3) % 3 != 0;
        want.push(connected);
        let target = if connected { AsyncConnectStatus::Connected } else { AsyncConnectStatus::NotConnect };
        assert_eq!(settle(&client, name, target, Duration::from_secs(20)), target, "{name}");
    }
    // The map lists exactly the connected remotes, and their links carry transfers.
    let listed: BTreeSet<String> =
        client.async_connect_statuses().unwrap().into_iter().map(|(n, _)| n).collect();
    let connected: BTreeSet<String> =
        servers.iter().zip(&want).filter(|(_, c)| **c).map(|((_, n), _)| n.clone()).collect();
    assert_eq!(listed, connected);
    let local = host_mem(4096, 1);
    register(&client, local, 4096);
    for ((server, name), c) in servers.iter().zip(&want) {
        let remote = host_mem(4096, 2);
        register(server, remote, 4096);
        let descs = [TransferDesc { local_addr: local, remote_addr: remote, len: 4096 }];
        let r = client.transfer_sync(name, TransferOp::Read, &descs, 3000, no_vouch);
        if *c {
            r.unwrap();
            assert_eq!(sum(local, 4096), sum(remote, 4096));
        } else {
            assert_eq!(r.unwrap_err().status, ADXL_NOT_CONNECTED, "{name}");
        }
    }
    client.finalize();
}

#[test]
fn a_peer_killed_while_a_connect_waits_on_it_fails_that_connect_only() {
    let (mut peer, peer_name, _) = Peer::serve(4096, 3);
    let (_good, good_name) = serving_engine(None);
    let client = client_engine();
    common::stop(peer.0.child.id());
    client.connect_async(&peer_name, 8000).unwrap();
    assert_eq!(
        settle(&client, &peer_name, AsyncConnectStatus::Connecting, Duration::from_secs(5)),
        AsyncConnectStatus::Connecting
    );
    // The other worker serves another remote meanwhile.
    client.connect_async(&good_name, 3000).unwrap();
    assert_eq!(
        settle(&client, &good_name, AsyncConnectStatus::Connected, Duration::from_secs(10)),
        AsyncConnectStatus::Connected
    );
    let t = Instant::now();
    peer.kill();
    assert_eq!(
        settle(&client, &peer_name, AsyncConnectStatus::ConnectFailed, Duration::from_secs(10)),
        AsyncConnectStatus::ConnectFailed
    );
    // The reset ends the wait, not the 8 s time-out.
    assert!(t.elapsed() < Duration::from_secs(6), "CONNECT_FAILED after {:?}", t.elapsed());
    // A failed remote stays listed until a disconnect removes it.
    assert!(
        client
            .async_connect_statuses()
            .unwrap()
            .contains(&(peer_name.clone(), AsyncConnectStatus::ConnectFailed))
    );
    client.disconnect_async(&peer_name, 1000).unwrap();
    assert_eq!(
        settle(&client, &peer_name, AsyncConnectStatus::NotConnect, Duration::from_secs(10)),
        AsyncConnectStatus::NotConnect
    );
    assert_eq!(client.async_connect_status(&good_name).unwrap(), AsyncConnectStatus::Connected);
}

#[test]
fn async_connect_checks_its_arguments_and_needs_initialize() {
    let e = Engine::new();
    assert_eq!(e.connect_async("127.0.0.1:1", 1000).unwrap_err().status, ADXL_FAILED);
    assert_eq!(e.async_connect_status("127.0.0.1:1").unwrap_err().status, ADXL_FAILED);
    let e = client_engine();
    assert_eq!(e.connect_async("127.0.0.1:1", 0).unwrap_err().status, ADXL_PARAM_INVALID);
    assert_eq!(e.disconnect_async("127.0.0.1:1", -1).unwrap_err().status, ADXL_PARAM_INVALID);
    assert_eq!(e.connect_async("not an engine", 1000).unwrap_err().status, ADXL_PARAM_INVALID);
    assert_eq!(e.async_connect_status("127.0.0.1:9").unwrap(), AsyncConnectStatus::NotConnect);
    // Nobody listens: CONNECT_FAILED.
    let port = common::ports::free_port();
    let name = format!("127.0.0.1:{port}");
    e.connect_async(&name, 1000).unwrap();
    assert_eq!(
        settle(&e, &name, AsyncConnectStatus::ConnectFailed, Duration::from_secs(10)),
        AsyncConnectStatus::ConnectFailed
    );
    e.finalize();
    assert_eq!(e.connect_async(&name, 1000).unwrap_err().status, ADXL_FAILED);
}

#[test]
fn a_full_connect_queue_is_resource_exhausted() {
    let e = Engine::new();
    let pool = r#"{"connect_pool.thread_num":1,"connect_pool.task_queue_capacity":4}"#;
    e.initialize("127.0.0.1", &[("adxl.Transport", "tcp"), ("GlobalResourceConfig", pool)]).unwrap();
    // A stopped peer holds the one worker for the whole time-out.
    let (peer, name, _) = Peer::serve(4096, 4);
    common::stop(peer.0.child.id());
    e.connect_async(&name, 3000).unwrap();
    assert_eq!(
        settle(&e, &name, AsyncConnectStatus::Connecting, Duration::from_secs(5)),
        AsyncConnectStatus::Connecting
    );
    for i in 0..4 {
        e.connect_async(&format!("127.0.0.1:{}", 1000 + i), 1000).unwrap();
    }
    assert_eq!(e.connect_async("127.0.0.1:2000", 1000).unwrap_err().status, ADXL_RESOURCE_EXHAUSTED);
    assert_eq!(e.async_connect_status("127.0.0.1:2000").unwrap(), AsyncConnectStatus::NotConnect);
    drop(peer);
    e.finalize();
}

#[test]
fn batched_status_reports_thousands_of_requests_once_each_in_order_with_their_user_data() {
    const N: usize = 3000;
    const PIECE: usize = 256;
    let (server, name) = serving_engine(None);
    let remote = host_mem(N * PIECE, 5);
    register(&server, remote, N * PIECE);
    let client = client_engine();
    let local = host_mem(N * PIECE, 6);
    register(&client, local, N * PIECE);
    client.connect(&name, 3000).unwrap();
    assert!(client.transfer_statuses(u32::MAX, false).unwrap().is_empty());
    let mut handles = Vec::with_capacity(N);
    for i in 0..N {
        let descs =
            [TransferDesc { local_addr: local + i * PIECE, remote_addr: remote + i * PIECE, len: PIECE }];
        handles.push(client.transfer_async_with(&name, TransferOp::Read, &descs, i + 1, no_vouch).unwrap());
    }
    // max_query_count 0: nothing, and nothing is consumed.
    assert!(client.transfer_statuses(0, false).unwrap().is_empty());
    // A bounded query reports the oldest requests, in submission order.
    let first = client.transfer_statuses(100, false).unwrap();
    assert_eq!(first.len(), 100);
    let mut seen = vec![false; N];
    let mut expected_next = 0;
    for p in &first {
        assert!(p.user_data > expected_next, "submission order");
        expected_next = p.user_data;
        assert_eq!(p.handle, handles[p.user_data - 1]);
        if p.status != 0 {
            assert_eq!(p.status, 1);
            seen[p.user_data - 1] = true;
        }
    }
    let t = Instant::now();
    while seen.iter().any(|s| !s) {
        assert!(t.elapsed() < Duration::from_secs(60), "requests still waiting");
        for p in client.transfer_statuses(u32::MAX, true).unwrap() {
            assert_eq!(p.status, 1, "request {} failed", p.user_data);
            assert!(
                !std::mem::replace(&mut seen[p.user_data - 1], true),
                "request {} reported twice",
                p.user_data
            );
        }
    }
    assert_eq!(sum(local, N * PIECE), sum(remote, N * PIECE));
    // Reported done: freed, and gone from the batched view.
    assert!(client.transfer_statuses(u32::MAX, false).unwrap().is_empty());
    assert_eq!(client.transfer_status(handles[0]).1.unwrap_err().status, ADXL_PARAM_INVALID);
}

#[test]
fn batched_and_single_polls_share_the_requests() {
    let (server, name) = serving_engine(None);
    let remote = host_mem(64 * 1024, 7);
    register(&server, remote, 64 * 1024);
    let client = client_engine();
    let local = host_mem(64 * 1024, 8);
    register(&client, local, 64 * 1024);
    client.connect(&name, 3000).unwrap();
    let handles: Vec<u64> = (0..64)
        .map(|i| {
            let d =
                [TransferDesc { local_addr: local + i * 1024, remote_addr: remote + i * 1024, len: 1024 }];
            client.transfer_async_with(&name, TransferOp::Write, &d, 1000 + i, no_vouch).unwrap()
        })
        .collect();
    // Every even request is collected one by one; the batched poll reports only the others.
    for h in handles.iter().step_by(2) {
        let t = Instant::now();
        loop {
            match client.transfer_status(*h) {
                (Some(1), Ok(())) => break,
                (Some(0), Ok(())) if t.elapsed() < Duration::from_secs(30) => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                other => panic!("{other:?}"),
            }
        }
    }
    let mut got = BTreeSet::new();
    let t = Instant::now();
    while got.len() < 32 && t.elapsed() < Duration::from_secs(30) {
        for p in client.transfer_statuses(u32::MAX, true).unwrap() {
            assert!(got.insert(p.user_data));
        }
    }
    let odd: BTreeSet<usize> = (0..64).filter(|i| i % 2 == 1).map(|i| 1000 + i).collect();
    assert_eq!(got, odd);
}

#[test]
fn a_dead_peer_fails_its_requests_in_the_batched_poll() {
    let (mut peer, name, remote) = Peer::serve(1 << 20, 9);
    let client = client_engine();
    let local = host_mem(1 << 20, 10);
    register(&client, local, 1 << 20);
    client.connect(&name, 3000).unwrap();
    common::stop(peer.0.child.id());
    for i in 0..16 {
        let d = [TransferDesc { local_addr: local + i * 65536, remote_addr: remote + i * 65536, len: 65536 }];
        client.transfer_async_with(&name, TransferOp::Read, &d, i + 1, no_vouch).unwrap();
    }
    peer.kill();
    let mut failed = 0;
    let t = Instant::now();
    while failed < 16 {
        assert!(t.elapsed() < Duration::from_secs(30), "{failed} of 16 failed");
        for p in client.transfer_statuses(u32::MAX, true).unwrap() {
            assert_eq!(p.status, 3, "request {}", p.user_data);
            failed += 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn local_only_memory_is_not_offered_to_peers() {
    let server = Engine::new();
    let port = common::ports::free_port();
    let name = format!("127.0.0.1:{port}");
    server.initialize(&name, &[("adxl.Transport", "tcp"), ("adxl.RemoteAccess", "registered")]).unwrap();
    let private = host_mem(4096, 11);
    let shared = host_mem(4096, 12);
    let offer = ascendless::engine::Offer { local_only: true, ..Default::default() };
    server.register_mem_with(private, 4096, ascendless::engine::MemType::Host, offer, no_vouch).unwrap();
    register(&server, shared, 4096);
    let client = client_engine();
    let local = host_mem(4096, 13);
    register(&client, local, 4096);
    client.connect(&name, 3000).unwrap();
    let read = |remote: usize| {
        let d = [TransferDesc { local_addr: local, remote_addr: remote, len: 4096 }];
        client.transfer_sync(&name, TransferOp::Read, &d, 3000, no_vouch)
    };
    read(shared).unwrap();
    assert_eq!(read(private).unwrap_err().status, ADXL_PARAM_INVALID);
    // The owner itself uses its local-only memory as the local side of its transfers.
    let (other, other_name) = serving_engine(None);
    let src = host_mem(4096, 14);
    register(&other, src, 4096);
    server.connect(&other_name, 3000).unwrap();
    let d = [TransferDesc { local_addr: private, remote_addr: src, len: 4096 }];
    server.transfer_sync(&other_name, TransferOp::Read, &d, 3000, no_vouch).unwrap();
    assert_eq!(sum(private, 4096), sum(src, 4096));
}
