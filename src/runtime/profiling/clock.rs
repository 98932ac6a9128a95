//! Timestamps of profiling records: nanoseconds since the Unix epoch, read from the monotonic
//! clock (so records of one process never go backwards) offset once by the wall clock.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

static BASE: OnceLock<(Instant, u64)> = OnceLock::new();

/// Now, in nanoseconds since the Unix epoch.
pub fn now_ns() -> u64 {
    let (at, wall) = BASE.get_or_init(|| {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        (Instant::now(), wall)
    });
    wall + at.elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_moves_forward() {
        let a = super::now_ns();
        let b = super::now_ns();
        assert!(b >= a && a > 1_600_000_000_000_000_000);
    }
}
