//! Two operations timed alternately, call by call, so both see the same machine load (the
//! `capture` and `host_func` benches): p50 and p99 of each.

use std::time::{Duration, Instant};

pub struct Stats {
    pub p50: Duration,
    pub p99: Duration,
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    Stats { p50: times[times.len() / 2], p99: times[(times.len() * 99 / 100).min(times.len() - 1)] }
}

/// Runs `a` and `b` alternately `warm_up` times untimed, then `reps` times timed.
pub fn measure_pair(reps: usize, warm_up: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (Stats, Stats) {
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
    (stats(ta), stats(tb))
}

pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
