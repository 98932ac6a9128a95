//! A thousand connect/kill cycles against an engine in this process, which must leak nothing:
//! its open files, memory mappings and threads are counted before and after.
//!
//! Each cycle starts a child engine (this test binary again, as a scripted child), connects to
//! it, transfers a little (or not), kills it with SIGKILL and sees the failure; one cycle in
//! four disconnects, the others leave the dead link to the engine (which drops dead links when
//! the 512 links are reached, so three quarters of a thousand cycles go past that). The test
//! is alone in its binary, so no other test's files or threads are counted.

use std::time::{Duration, Instant};

mod common;

use ascendless::adxl::engine::TransferOp;
use ascendless::error::adxl_status::*;
use common::engines::{self, Call, Peer, ROLE, client_engine, host_mem, register, transfer};

const CYCLES: usize = 1000;
const WARM_UP: usize = 20;
/// Children started ahead, so their start-up overlaps the cycles.
const AHEAD: usize = 4;
const LEN: usize = 64 * 1024;

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        engines::child_main();
    }
}

/// Open files, mapping lines and threads of this process.
fn counts() -> [usize; 3] {
    let entries = |dir: &str| std::fs::read_dir(dir).unwrap().count();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap().lines().count();
    [entries("/proc/self/fd"), maps, entries("/proc/self/task")]
}

/// A serving child that has been told to start (its reply is read when it is used).
fn launch() -> Peer {
    let mut p = Peer::start(&[]);
    p.0.send(&format!("serve {LEN} 1"));
    p
}

#[test]
fn a_thousand_connect_kill_cycles_leak_no_files_mappings_or_threads() {
    let survivor = client_engine();
    let local = host_mem(LEN, 2);
    register(&survivor, local, LEN);
    let mut ready: std::collections::VecDeque<Peer> = (0..AHEAD).map(|_| launch()).collect();
    let mut baseline = None;
    let t = Instant::now();
    let mut timed = Instant::now();
    for cycle in 0..WARM_UP + CYCLES {
        if cycle == WARM_UP {
            baseline = Some(counts());
            timed = Instant::now();
        }
        let mut peer = ready.pop_front().unwrap();
        ready.push_back(launch());
        let w = peer.0.reply_words("serve");
        assert_eq!(w[0], "0", "{w:?}");
        let (name, remote): (&str, usize) = (&w[1], w[2].parse().unwrap());
        survivor.connect(name, 2000).unwrap_or_else(|e| panic!("cycle {cycle}: {e:?}"));
        let read = |call| transfer(&survivor, name, TransferOp::Read, call, local, remote, LEN, 4, 2000);
        let fails = |(code, took): (u32, Duration)| {
            assert!(code == ADXL_FAILED || code == ADXL_NOT_CONNECTED, "cycle {cycle}: {code}");
            assert!(took < Duration::from_secs(3), "cycle {cycle}: {took:?}");
        };
        match cycle % 4 {
            // Bytes moved, the peer killed, the next transfer fails, Disconnect.
            0 => {
                assert_eq!(read(Call::Sync).0, 0, "cycle {cycle}");
                peer.kill();
                fails(read(Call::Sync));
                survivor.disconnect(name, 1000).unwrap_or_else(|e| panic!("cycle {cycle}: {e:?}"));
            }
            // Killed while idle; an asynchronous transfer fails; never disconnected.
            1 => {
                peer.kill();
                fails(read(Call::Async));
            }
            // Killed after an asynchronous transfer; Connect fails (nobody listens), then a
            // transfer; never disconnected.
            2 => {
                assert_eq!(read(Call::Async).0, 0, "cycle {cycle}");
                peer.kill();
                let again = survivor.connect(name, 2000).map_or_else(|e| e.status, |()| 0);
                assert_eq!(again, ADXL_FAILED, "cycle {cycle}");
                fails(read(Call::Sync));
            }
            // Killed after a transfer, whose repeat fails; never disconnected.
            _ => {
                assert_eq!(read(Call::Sync).0, 0, "cycle {cycle}");
                peer.kill();
                fails(read(Call::Sync));
            }
        }
    }
    let elapsed = timed.elapsed();
    // Counted with as many children started ahead as at the baseline (their pipes are open).
    let after = counts();
    drop(ready);
    let before = baseline.unwrap();
    eprintln!(
        "{CYCLES} cycles in {elapsed:?} ({:?} with the warm-up); files, mappings, threads: {before:?} -> {after:?}",
        t.elapsed()
    );
    assert_eq!(after[0], before[0], "open files");
    // The allocator may keep a few more or fewer arenas and free chunks mapped; a leak of
    // one mapping per cycle would show as a thousand.
    // The asynchronous workers end when idle for 5 s (a lazily started pool): the last one
    // may still run, or may have ended since the baseline; allow one thread either way.
    assert!(after[1] <= before[1] + 4, "mappings: {before:?} -> {after:?}");
    assert!(after[2] <= before[2] + 1, "threads: {before:?} -> {after:?}");
}
