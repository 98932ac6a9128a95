//! Exchanges measured in short rounds side by side, several times, and reported as medians over
//! the rounds: the machine's speed drifts over seconds (a shared VM: single long runs gave the
//! raw futex exchange anything from 0.06 to 0.33 µs), so each ratio compares measurements taken
//! side by side. Used by the notify and IPC event ping-pong benches, whose first two exchanges
//! are the baselines: a futex ping-pong that spins before it sleeps and one that sleeps at once
//! (`futex_pingpong.rs`).

use std::time::Duration;

/// What one exchange of a round measured: its round trips' times (the first [`warm`] ones
/// included) and the CPU time of both processes over the round trips after the warm-up, with
/// the wall time of those round trips.
pub struct Exchange {
    pub times: Vec<Duration>,
    pub cpu: Duration,
    pub wall: Duration,
}

/// The round trips of `n` dropped as warm-up (and left out of the CPU window).
pub fn warm(n: usize) -> usize {
    n / 10
}

/// One round: (p50 µs, p99 µs, CPU of both processes as a share of one core) of each exchange,
/// in the order given.
pub type Row<const K: usize> = [(f64, f64, f64); K];

/// The names of the two baselines, exchanges 0 and 1 of every ping-pong.
pub const BASELINES: [&str; 2] = ["spinning futex", "sleeping futex"];

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e6
}

/// Runs `reps` rounds; in each, every exchange of `run` (given its index) one after the other,
/// the first one rotating from round to round, the first `warm` round trips dropped.
pub fn side_by_side<const K: usize>(
    reps: usize,
    warm: usize,
    run: impl Fn(usize) -> Exchange,
) -> Vec<Row<K>> {
    (0..reps)
        .map(|r| {
            let mut row = [(0.0, 0.0, 0.0); K];
            for k in 0..K {
                let i = (r + k) % K;
                let Exchange { mut times, cpu, wall } = run(i);
                times.drain(..warm.min(times.len()));
                times.sort();
                let share = cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9);
                row[i] = (percentile(&times, 0.5), percentile(&times, 0.99), share);
            }
            row
        })
        .collect()
}

/// The median over the rounds of `f` of a round.
pub fn median<const K: usize>(rows: &[Row<K>], f: impl Fn(&Row<K>) -> f64) -> f64 {
    let mut v: Vec<f64> = rows.iter().map(f).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn figures_line<const K: usize>(rows: &[Row<K>], k: usize, name: &str, width: usize, note: &str) -> String {
    format!(
        "  {name:<width$} p50 {:8.2} us   p99 {:8.2} us   CPU {:4.0}%{note}",
        median(rows, |r| r[k].0),
        median(rows, |r| r[k].1),
        100.0 * median(rows, |r| r[k].2)
    )
}

/// The first lines of a ping-pong report: what ran, and the two baselines' medians.
pub fn header<const K: usize>(what: &str, rows: &[Row<K>], n: usize, width: usize) -> [String; 3] {
    [
        format!(
            "{what} ping-pong between two processes ({} rounds of {} round trips after {} warm-up; medians over the rounds; CPU: both processes, share of one core):",
            rows.len(),
            n - warm(n),
            warm(n)
        ),
        figures_line(rows, 0, "spinning futex ping-pong", width, ""),
        figures_line(rows, 1, "sleeping futex ping-pong", width, ""),
    ]
}

/// The lines of exchange `k` of a ping-pong report: its medians (`note` after them), then the
/// medians of its ratios to each baseline's (that baseline's `targets` after them).
pub fn case_lines<const K: usize>(
    rows: &[Row<K>],
    k: usize,
    name: &str,
    width: usize,
    note: &str,
    targets: [&str; 2],
) -> [String; 3] {
    let ratio = |b: usize| {
        format!(
            "  {:<width$} p50 {:8.2}x     p99 {:8.2}x   {}",
            format!("ratio / {}", BASELINES[b]),
            median(rows, |r| r[k].0 / r[b].0),
            median(rows, |r| r[k].1 / r[b].1),
            targets[b]
        )
    };
    [figures_line(rows, k, name, width, note), ratio(0), ratio(1)]
}

/// The per-round p50 ratios of exchange `k` to each baseline, for the report's last lines.
pub fn round_ratios<const K: usize>(rows: &[Row<K>], k: usize) -> String {
    let each =
        |b: usize| rows.iter().map(|r| format!("{:.2}", r[k].0 / r[b].0)).collect::<Vec<_>>().join(" ");
    format!("/ spinning {}; / sleeping {}", each(0), each(1))
}
