//! Setting up and tearing down a pair of engines on one host, against a raw TCP connect and
//! close measured in the same run (issue 23's first figure: <= 5x at the median, <= 20x at p99).
//!
//! One round: a serving engine is initialized on a free loopback port, a client engine is
//! initialized, connects, disconnects, and both finalize. The baseline round: a listener is
//! bound, a socket connects, the listener accepts, and all three close. Rounds alternate between
//! the two, so both see the same machine; the first round of each (a process's first engine
//! starts threads and maps its files) is reported on its own. Transports: the default (same
//! host: shared memory) and TCP. `cargo bench --bench engine_setup` measures; under
//! `cargo test` a few rounds only, to prove it still works.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ascendless::engine::Engine;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn raw_round() -> Duration {
    let t = Instant::now();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (b, _) = listener.accept().unwrap();
    drop((a, b, listener));
    t.elapsed()
}

/// The steps of an engine round, in order.
const STEPS: [&str; 6] =
    ["server Initialize", "client Initialize", "Connect", "Disconnect", "client Finalize", "server Finalize"];

/// One engine round: its total time and each step's.
fn engine_round(transport: &str, port: u16) -> (Duration, [Duration; 6]) {
    let options = [("adxl.Transport", transport)];
    let name = format!("127.0.0.1:{port}");
    let mut steps = [Duration::ZERO; 6];
    let start = Instant::now();
    let mut last = start;
    let mut mark = |i: usize| {
        let now = Instant::now();
        steps[i] = now - last;
        last = now;
    };
    let server = Engine::new();
    server.initialize(&name, &options).unwrap();
    mark(0);
    let client = Engine::new();
    client.initialize("127.0.0.1", &options).unwrap();
    mark(1);
    client.connect(&name, 5000).unwrap();
    mark(2);
    client.disconnect(&name, 5000).unwrap();
    mark(3);
    client.finalize();
    mark(4);
    server.finalize();
    mark(5);
    (start.elapsed(), steps)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e6
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 400 } else { 5 };
    for transport in ["auto", "tcp"] {
        let (mut raw, mut ours) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        let mut steps: [Vec<Duration>; 6] = Default::default();
        let first_raw = raw_round();
        let (first, _) = engine_round(transport, free_port());
        for _ in 0..rounds {
            let port = free_port();
            raw.push(raw_round());
            let (total, each) = engine_round(transport, port);
            ours.push(total);
            for (all, one) in steps.iter_mut().zip(each) {
                all.push(one);
            }
        }
        raw.sort();
        ours.sort();
        let (r50, r99) = (percentile(&raw, 0.5), percentile(&raw, 0.99));
        let (o50, o99) = (percentile(&ours, 0.5), percentile(&ours, 0.99));
        println!(
            "Initialize x2 + Connect + Disconnect + Finalize x2, transport {transport} ({rounds} rounds):"
        );
        println!("  raw TCP listen+connect+accept+close   p50 {r50:9.1} us   p99 {r99:9.1} us");
        println!("  ascendless engine pair                p50 {o50:9.1} us   p99 {o99:9.1} us");
        println!(
            "  ratio                                 p50 {:9.1}x     p99 {:9.1}x   (target: p50 <= 5x, p99 <= 20x)",
            o50 / r50,
            o99 / r99
        );
        let each: Vec<String> = STEPS
            .iter()
            .zip(steps.iter_mut())
            .map(|(name, all)| {
                all.sort();
                format!("{name} {:.1}", percentile(all, 0.5))
            })
            .collect();
        println!("  p50 of each step (us): {}", each.join(", "));
        println!(
            "  first round (the first engines of this process, or of this transport): raw {:.1} us, engines {:.1} us",
            first_raw.as_secs_f64() * 1e6,
            first.as_secs_f64() * 1e6
        );
    }
}
