//! IPC event ping-pong between two processes, through streams, against a raw shared-memory
//! futex ping-pong measured in the same run: the rounds of `ipc_event_rounds.rs` (shared with
//! `ascendless-bench ipc-event`). `cargo bench --bench ipc_event` prints p50/p99 round trips and
//! the ratios over 41 rounds; under `cargo test` one round of a few hundred round trips only.

#[path = "common/futex_pingpong.rs"]
mod futex_pingpong;
#[path = "../src/bin/ascendless-bench/modes/ipc_event_rounds.rs"]
mod ipc_event_rounds;
#[path = "common/rounds.rs"]
mod rounds;
#[path = "common/stamps.rs"]
mod stamps;

fn main() {
    if ipc_event_rounds::child_main() {
        return;
    }
    let full = std::env::args().any(|a| a == "--bench");
    // Short rounds of the three side by side (`common/rounds.rs`).
    let (n, reps) = if full { (1_000, 41) } else { (300, 1) };
    let rows = ipc_event_rounds::measure(reps, n);
    println!("{}", ipc_event_rounds::report(&rows, n));
}
