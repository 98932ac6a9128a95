//! Exchanges measured in short rounds side by side, several times, and reported as medians over
//! the rounds: the machine's speed drifts over seconds (a shared VM: single long runs gave the
//! raw futex exchange anything from 0.06 to 0.33 µs), so each ratio compares measurements taken
//! side by side. Used by the notify and IPC event ping-pong benches.

use std::time::Duration;

/// One round: (p50, p99) in µs of each exchange, in the order given.
pub type Row<const K: usize> = [(f64, f64); K];

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e6
}

/// Runs `reps` rounds; in each, every exchange of `run` (given its index, it returns its round
/// trips' times) one after the other, the first `warm` round trips dropped.
pub fn side_by_side<const K: usize>(
    reps: usize,
    warm: usize,
    run: impl Fn(usize) -> Vec<Duration>,
) -> Vec<Row<K>> {
    (0..reps)
        .map(|_| {
            std::array::from_fn(|i| {
                let mut t = run(i);
                t.drain(..warm.min(t.len()));
                t.sort();
                (percentile(&t, 0.5), percentile(&t, 0.99))
            })
        })
        .collect()
}

/// The median over the rounds of `f` of a round.
pub fn median<const K: usize>(rows: &[Row<K>], f: impl Fn(&Row<K>) -> f64) -> f64 {
    let mut v: Vec<f64> = rows.iter().map(f).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The first lines of a ping-pong report: what ran, and the raw exchange's medians.
pub fn header<const K: usize>(what: &str, rows: &[Row<K>], n: usize, width: usize) -> [String; 2] {
    [
        format!(
            "{what} ping-pong between two processes ({} rounds of {} round trips after {} warm-up; medians over the rounds):",
            rows.len(),
            n - n / 10,
            n / 10
        ),
        format!(
            "  {:<width$} p50 {:8.2} us   p99 {:8.2} us",
            "raw futex ping-pong",
            median(rows, |r| r[0].0),
            median(rows, |r| r[0].1)
        ),
    ]
}

/// The two lines of exchange `k` of a ping-pong report: its medians (`note` after them), then
/// the medians of its ratios to the raw exchange's (`targets` after them).
pub fn case_lines<const K: usize>(
    rows: &[Row<K>],
    k: usize,
    [name, ratio]: [&str; 2],
    width: usize,
    note: &str,
    targets: &str,
) -> [String; 2] {
    [
        format!(
            "  {name:<width$} p50 {:8.2} us   p99 {:8.2} us{note}",
            median(rows, |r| r[k].0),
            median(rows, |r| r[k].1)
        ),
        format!(
            "  {ratio:<width$} p50 {:8.2}x     p99 {:8.2}x   {targets}",
            median(rows, |r| r[k].0 / r[0].0),
            median(rows, |r| r[k].1 / r[0].1)
        ),
    ]
}
