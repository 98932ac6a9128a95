//! What a process holds, read from `/proc` (resident memory and open descriptors), and the
//! verdict on whether it stayed flat over a run: a leak shows as growth from the first quarter
//! of the samples to the last.

/// One reading of a process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the transfers started.
    pub at: f64,
    pub rss_kib: u64,
    pub fds: u64,
}

/// Reads `VmRSS` from `/proc/<pid>/status` and counts `/proc/<pid>/fd`; `None` once the process
/// is gone.
pub fn sample(pid: u32, at: f64) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some(Sample { at, rss_kib, fds })
}

/// Allowed growth of resident memory from the first quarter to the last: a share of the first
/// quarter's, plus a fixed allowance for allocator noise.
pub const RSS_GROWTH_SHARE: f64 = 0.10;
pub const RSS_GROWTH_KIB: u64 = 8 << 10;
/// Allowed growth of open descriptors (a connection of the pool opened late, a transfer's
/// socket in flight at the sample).
pub const FD_GROWTH: u64 = 4;
/// Fewer samples than this per quarter are too few to judge.
pub const MIN_PER_QUARTER: usize = 3;

/// The comparison of the first and last quarters of a run's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// Medians of resident memory, first and last quarter.
    pub rss_kib: (u64, u64),
    /// Largest descriptor counts, first and last quarter.
    pub fds: (u64, u64),
    /// Why it is not flat, if it is not.
    pub growth: Option<String>,
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Compares the first and last quarters (by time) of `samples` over a run of `run_s` seconds;
/// `None` when a quarter holds fewer than [`MIN_PER_QUARTER`] samples.
pub fn trend(samples: &[Sample], run_s: f64) -> Option<Trend> {
    let first: Vec<&Sample> = samples.iter().filter(|s| s.at < run_s / 4.0).collect();
    let last: Vec<&Sample> = samples.iter().filter(|s| s.at >= run_s * 3.0 / 4.0).collect();
    if first.len() < MIN_PER_QUARTER || last.len() < MIN_PER_QUARTER {
        return None;
    }
    let rss =
        (median(first.iter().map(|s| s.rss_kib).collect()), median(last.iter().map(|s| s.rss_kib).collect()));
    let fds = (first.iter().map(|s| s.fds).max().unwrap_or(0), last.iter().map(|s| s.fds).max().unwrap_or(0));
    let rss_allowed = rss.0 + (rss.0 as f64 * RSS_GROWTH_SHARE) as u64 + RSS_GROWTH_KIB;
    let mut why = Vec::new();
    if rss.1 > rss_allowed {
        why.push(format!("RSS grew from {} to {} KiB (allowed up to {rss_allowed})", rss.0, rss.1));
    }
    if fds.1 > fds.0 + FD_GROWTH {
        why.push(format!("open descriptors grew from {} to {} (allowed +{FD_GROWTH})", fds.0, fds.1));
    }
    Some(Trend { rss_kib: rss, fds, growth: (!why.is_empty()).then(|| why.join("; ")) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rss: impl Fn(f64) -> u64, fds: impl Fn(f64) -> u64) -> Vec<Sample> {
        (0..40).map(|i| i as f64).map(|at| Sample { at, rss_kib: rss(at), fds: fds(at) }).collect()
    }

    #[test]
    fn a_flat_run_with_noise_is_flat() {
        let s = run(|t| 50_000 + (t as u64 % 3) * 700, |t| 30 + t as u64 % 2);
        let t = trend(&s, 40.0).unwrap();
        assert_eq!(t.growth, None, "{t:?}");
        assert_eq!(t.fds, (31, 31));
    }

    #[test]
    fn steady_memory_growth_is_caught() {
        let t = trend(&run(|t| 50_000 + t as u64 * 1_000, |_| 30), 40.0).unwrap();
        assert!(t.growth.unwrap().contains("RSS grew"));
    }

    #[test]
    fn leaking_descriptors_are_caught() {
        let t = trend(&run(|_| 50_000, |t| 30 + t as u64 / 2), 40.0).unwrap();
        assert!(t.growth.unwrap().contains("descriptors grew"));
    }

    #[test]
    fn too_few_samples_are_not_judged() {
        assert_eq!(trend(&run(|_| 1, |_| 1)[..8], 8.0), None);
    }

    #[test]
    fn this_process_can_be_sampled() {
        let s = sample(std::process::id(), 0.0).unwrap();
        assert!(s.rss_kib > 0 && s.fds >= 3, "{s:?}");
        assert_eq!(sample(u32::MAX, 0.0), None);
    }
}
