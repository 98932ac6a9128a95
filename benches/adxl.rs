//! ADXL over TCP against raw TCP sockets measured in the same run (the targets:
//! WRITE throughput at least 0.8 of a raw single-stream socket pair, 4 KiB READ p50 latency at
//! most 1.3 times a raw 4 KiB request/response).
//!
//! Two engines in this process talk over loopback TCP (forced with `adxl.Transport=tcp`: on one
//! host they would share memory, measured by `benches/adxl_shm.rs`); their memory is the
//! runtime's pinned host memory. `cargo bench
//! --bench adxl` measures; under `cargo test` a few rounds only, to prove it still works.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp};
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};

const MIB: usize = 1 << 20;
const CHUNKS: usize = 64;

fn runtime_only(r: HostRange) -> RawSpan {
    panic!("the benchmark uses runtime memory only, yet {r:?} needed vouching")
}

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    a.set_nodelay(true).unwrap();
    b.set_nodelay(true).unwrap();
    (a, b)
}

/// Seconds for 64 x 1 MiB over one socket, until the receiver has all and acknowledged.
fn raw_throughput(rounds: usize) -> f64 {
    let (mut a, mut b) = pair();
    let receiver = std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNKS * MIB];
        for _ in 0..rounds {
            b.read_exact(&mut buf).unwrap();
            b.write_all(&[1]).unwrap();
        }
    });
    let data = vec![7u8; MIB];
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..CHUNKS {
            a.write_all(&data).unwrap();
        }
        a.read_exact(&mut [0u8; 1]).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    receiver.join().unwrap();
    best
}

/// 4 KiB request/response round trips over one socket (microseconds, sorted).
fn raw_latency(rounds: usize) -> Vec<f64> {
    let (mut a, mut b) = pair();
    let server = std::thread::spawn(move || {
        let page = vec![3u8; 4096];
        let mut req = [0u8; 32];
        while b.read_exact(&mut req).is_ok() {
            b.write_all(&page).unwrap();
        }
    });
    let mut page = vec![0u8; 4096];
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        a.write_all(&[0u8; 32]).unwrap();
        a.read_exact(&mut page).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(a);
    server.join().unwrap();
    times.sort_by(f64::total_cmp);
    times
}

fn host(len: usize) -> usize {
    memory::alloc_host(len).unwrap()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (tp_rounds, lat_rounds) = if full { (20, 20_000) } else { (2, 100) };
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let name = format!("127.0.0.1:{port}");
    let server = Engine::new();
    server.initialize(&name, &[("adxl.Transport", "tcp")]).unwrap();
    let remote = host(CHUNKS * MIB);
    server.register_mem(remote, CHUNKS * MIB, MemType::Host, runtime_only).unwrap();
    let client = Engine::new();
    client.initialize("127.0.0.1", &[("adxl.Transport", "tcp")]).unwrap();
    let local = host(CHUNKS * MIB);
    client.register_mem(local, CHUNKS * MIB, MemType::Host, runtime_only).unwrap();
    client.connect(&name, 1000).unwrap();

    let writes: Vec<TransferDesc> = (0..CHUNKS)
        .map(|i| TransferDesc { local_addr: local + i * MIB, remote_addr: remote + i * MIB, len: MIB })
        .collect();
    let mut ours = f64::MAX;
    for _ in 0..tp_rounds {
        let t = Instant::now();
        client.transfer_sync(&name, TransferOp::Write, &writes, 10_000, runtime_only).unwrap();
        ours = ours.min(t.elapsed().as_secs_f64());
    }
    let raw = raw_throughput(tp_rounds);
    let gbs = |s: f64| (CHUNKS * MIB) as f64 / s / 1e9;

    let read = [TransferDesc { local_addr: local, remote_addr: remote, len: 4096 }];
    let mut lat = Vec::with_capacity(lat_rounds);
    for _ in 0..lat_rounds {
        let t = Instant::now();
        client.transfer_sync(&name, TransferOp::Read, &read, 1000, runtime_only).unwrap();
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lat.sort_by(f64::total_cmp);
    let raw_lat = raw_latency(lat_rounds);
    let p50 = |v: &[f64]| v[v.len() / 2];
    println!("ADXL over loopback TCP (best of {tp_rounds} for throughput, {lat_rounds} round trips):");
    println!(
        "  raw socket   64 x 1 MiB  {:6.2} GB/s    4 KiB req/resp p50 {:7.2} us",
        gbs(raw),
        p50(&raw_lat)
    );
    println!("  TransferSync 64 x 1 MiB  {:6.2} GB/s    4 KiB READ     p50 {:7.2} us", gbs(ours), p50(&lat));
    println!(
        "  throughput ratio {:.2} (target >= 0.8), latency ratio {:.2} (target <= 1.3)",
        raw / ours,
        p50(&lat) / p50(&raw_lat)
    );
    client.finalize();
    server.finalize();
    std::thread::sleep(Duration::from_millis(10));
}
