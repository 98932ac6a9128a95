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

/// Seconds to move `total` bytes over `streams` raw loopback TCP connections side by side, 1 MiB
/// per send: what the machine's TCP does with more streams, the ceiling of the windows.
fn raw_tcp(streams: usize, total: usize) -> f64 {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let pairs: Vec<_> = (0..streams)
        .map(|_| {
            let tx = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            (tx, listener.accept().unwrap().0)
        })
        .collect();
    let per = total / streams / MIB;
    let t = Instant::now();
    std::thread::scope(|s| {
        for (mut tx, mut rx) in pairs {
            s.spawn(move || {
                let buf = vec![1u8; MIB];
                for _ in 0..per {
                    tx.write_all(&buf).unwrap();
                }
            });
            s.spawn(move || {
                let mut buf = vec![0u8; MIB];
                let mut left = per * MIB;
                while left > 0 {
                    left -= rx.read(&mut buf[..left.min(MIB)]).unwrap();
                }
            });
        }
    });
    t.elapsed().as_secs_f64()
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
    let (requests, rounds) = if full { (512, 9) } else { (16, 1) };
    println!(
        "TransferAsync, {requests} x 1 MiB WRITE, {rounds} rounds (best GB/s); ratio to TransferSync one by one \
         in the same round, median of the rounds:"
    );
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
        let run_sync = || {
            let t = Instant::now();
            for i in 0..requests {
                client
                    .transfer_sync(&name, TransferOp::Write, &desc(local, remote, i), 10_000, runtime_only)
                    .unwrap();
            }
            t.elapsed().as_secs_f64()
        };
        let run_window = |window: usize| {
            let t = Instant::now();
            let mut inflight = VecDeque::new();
            for i in 0..requests {
                if inflight.len() == window {
                    wait(&client, inflight.pop_front().unwrap());
                }
                let d = desc(local, remote, i);
                inflight
                    .push_back(client.transfer_async(&name, TransferOp::Write, &d, runtime_only).unwrap());
            }
            for r in inflight {
                wait(&client, r);
            }
            t.elapsed().as_secs_f64()
        };
        // Each round times TransferSync and then every window, so a ratio compares runs that saw
        // the same machine; the figure is the median of the rounds' ratios.
        const WINDOWS: [usize; 3] = [1, 8, 64];
        let (mut sync, mut windows) = (Vec::new(), vec![Vec::new(); WINDOWS.len()]);
        for _ in 0..rounds {
            sync.push(run_sync());
            for (w, times) in WINDOWS.iter().zip(&mut windows) {
                times.push(run_window(*w));
            }
        }
        let gbs = |s: f64| (requests * MIB) as f64 / s / 1e9;
        let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        if transport == "tcp" {
            let raw: Vec<(usize, f64)> = [1, 2, 8]
                .into_iter()
                .map(|n| (n, best(&(0..rounds).map(|_| raw_tcp(n, requests * MIB)).collect::<Vec<_>>())))
                .collect();
            let line: Vec<String> = raw
                .iter()
                .map(|(n, t)| format!("{n} stream(s) {:.2} GB/s ({:.2}x one)", gbs(*t), raw[0].1 / t))
                .collect();
            println!("   raw loopback TCP, the same bytes: {}", line.join(", "));
        }
        println!("  {transport:>4}: TransferSync {:6.2} GB/s", gbs(best(&sync)));
        for (window, times) in WINDOWS.iter().zip(&windows) {
            let mut ratios: Vec<f64> = sync.iter().zip(times).map(|(s, w)| s / w).collect();
            ratios.sort_by(f64::total_cmp);
            println!(
                "        {window:>2} in flight  {:6.2} GB/s  ratio {:.2} (rounds {:.2}-{:.2})",
                gbs(best(times)),
                ratios[ratios.len() / 2],
                ratios[0],
                ratios[ratios.len() - 1]
            );
        }
        client.finalize();
        server.finalize();
    }
}
