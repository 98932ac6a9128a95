//! Two operations timed alternately, call by call, so both see the same machine load (the
//! `capture`, `host_func` and `runtime` benches): p50 and p99 of each.

use std::time::{Duration, Instant};

pub struct Stats {
    pub p50: Duration,
    pub p99: Duration,
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    Stats { p50: times[times.len() / 2], p99: times[(times.len() * 99 / 100).min(times.len() - 1)] }
}

/// Runs `a` and `b` alternately `warm_up` times untimed, then `reps` times timed: each call's
/// time, `a`'s then `b`'s.
pub fn alternate(
    reps: usize,
    warm_up: usize,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Vec<Duration>, Vec<Duration>) {
    for _ in 0..warm_up {
        a();
        b();
    }
    let (mut ta, mut tb) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t = Instant::now();
        a();
        ta.push(t.elapsed());
        let t = Instant::now();
        b();
        tb.push(t.elapsed());
    }
    (ta, tb)
}

/// [`alternate`], reported as p50 and p99 of each.
pub fn measure_pair(reps: usize, warm_up: usize, a: impl FnMut(), b: impl FnMut()) -> (Stats, Stats) {
    let (ta, tb) = alternate(reps, warm_up, a, b);
    (stats(ta), stats(tb))
}

pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
