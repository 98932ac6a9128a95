//! Notify ping-pong between two processes, through streams, against a raw shared-memory futex
//! ping-pong measured in the same run: the rounds of `notify_rounds.rs` (shared with
//! `ascendless-bench notify`). `cargo bench --bench notify` prints p50/p99 round trips and the
//! ratios over 21 rounds; under `cargo test` one round of a few hundred round trips only.

#[path = "common/futex_pingpong.rs"]
mod futex_pingpong;
#[path = "../src/bin/ascendless-bench/modes/notify_rounds.rs"]
mod notify_rounds;
#[path = "common/rounds.rs"]
mod rounds;
#[path = "common/stamps.rs"]
mod stamps;

fn main() {
    if notify_rounds::child_main() {
        return;
    }
    let full = std::env::args().any(|a| a == "--bench");
    let (n, reps) = if full { (1000, 21) } else { (300, 1) };
    let rows = notify_rounds::measure(reps, n);
    println!("{}", notify_rounds::report(&rows, n));
}
