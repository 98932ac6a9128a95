//! TransferAsync throughput with 1, 8 and 64 requests in flight, as a ratio to TransferSync
//! moving the same requests one after the other in the same run, over loopback TCP and on the
//! same-host path. Each request is one 1 MiB WRITE; a window of W requests is kept in flight
//! (a new one is submitted as soon as one completes). Two engines in this process, runtime
//! pinned host memory. `cargo bench --bench adxl_async` measures; under `cargo test` a few
//! requests only, to prove it still works.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::time::Instant;

use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp};
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};

const MIB: usize = 1 << 20;
const SLOTS: usize = 64;

fn runtime_only(r: HostRange) -> RawSpan {
    panic!("the benchmark uses runtime memory only, yet {r:?} needed vouching")
}

fn desc(local: usize, remote: usize, i: usize) -> [TransferDesc; 1] {
    let off = (i % SLOTS) * MIB;
    [TransferDesc { local_addr: local + off, remote_addr: remote + off, len: MIB }]
}

/// Waits for `req`, spinning on GetTransferStatus.
fn wait(e: &Engine, req: u64) {
    loop {
        match e.transfer_status(req) {
            (Some(0), Ok(())) => std::thread::yield_now(),
            (Some(1), Ok(())) => return,
            other => panic!("request ended {other:?}"),
        }
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (requests, rounds) = if full { (512, 5) } else { (16, 1) };
    println!("TransferAsync, {requests} x 1 MiB WRITE, best of {rounds}; ratio to TransferSync one by one:");
    for transport in ["tcp", "auto"] {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let name = format!("127.0.0.1:{port}");
        let server = Engine::new();
        server.initialize(&name, &[("adxl.Transport", transport)]).unwrap();
        let remote = memory::alloc_host(SLOTS * MIB).unwrap();
        server.register_mem(remote, SLOTS * MIB, MemType::Host, runtime_only).unwrap();
        let client = Engine::new();
        client.initialize("127.0.0.1", &[("adxl.Transport", transport)]).unwrap();
        let local = memory::alloc_host(SLOTS * MIB).unwrap();
        client.register_mem(local, SLOTS * MIB, MemType::Host, runtime_only).unwrap();
        client.connect(&name, 1000).unwrap();

        // Warm-up: every slot touched on both sides, the link's connections open.
        for i in 0..SLOTS {
            client
                .transfer_sync(&name, TransferOp::Write, &desc(local, remote, i), 10_000, runtime_only)
                .unwrap();
        }
        let mut sync = f64::MAX;
        for _ in 0..rounds {
            let t = Instant::now();
            for i in 0..requests {
                client
                    .transfer_sync(&name, TransferOp::Write, &desc(local, remote, i), 10_000, runtime_only)
                    .unwrap();
            }
            sync = sync.min(t.elapsed().as_secs_f64());
        }
        let gbs = |s: f64| (requests * MIB) as f64 / s / 1e9;
        println!("  {transport:>4}: TransferSync {:6.2} GB/s", gbs(sync));
        for window in [1, 8, 64] {
            let mut best = f64::MAX;
            for _ in 0..rounds {
                let t = Instant::now();
                let mut inflight = VecDeque::new();
                for i in 0..requests {
                    if inflight.len() == window {
                        wait(&client, inflight.pop_front().unwrap());
                    }
                    let d = desc(local, remote, i);
                    inflight.push_back(
                        client.transfer_async(&name, TransferOp::Write, &d, runtime_only).unwrap(),
                    );
                }
                for r in inflight {
                    wait(&client, r);
                }
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("        {window:>2} in flight  {:6.2} GB/s  ratio {:.2}", gbs(best), sync / best);
        }
        client.finalize();
        server.finalize();
    }
}
