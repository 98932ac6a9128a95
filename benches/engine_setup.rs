//! Setting up and tearing down a pair of engines on one host, against a raw TCP connect and
//! close measured in the same run (issue 23's first figure: <= 5x at the median, <= 20x at p99).
//!
//! The rounds are `ascendless-bench setup`'s (`setup_rounds.rs`): a serving engine initialized
//! on a free loopback port, a client engine initialized, Connect, Disconnect, both Finalize;
//! the baseline, a raw TCP listen, connect, accept and close. Rounds alternate between
//! the two, so both see the same machine; the first round of each (a process's first engine
//! starts threads and maps its files) is reported on its own. Transports: the default (same
//! host: shared memory) and TCP. `cargo bench --bench engine_setup` measures; under
//! `cargo test` a few rounds only, to prove it still works.

use std::time::Duration;

// The rounds `ascendless-bench setup` measures too.
#[path = "../src/bin/ascendless-bench/modes/setup_rounds.rs"]
mod setup_rounds;
use setup_rounds::{STEPS, engine_round, free_port, raw_round};

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
        let (first, _) = engine_round(transport, free_port()).unwrap();
        for _ in 0..rounds {
            let port = free_port();
            raw.push(raw_round());
            let (total, each) = engine_round(transport, port).unwrap();
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
