//! The verdict on a soak run: totals, the cross-check of what every initiator wrote against
//! what every holder finds in its memory, ADXL notifies sent against received, the workers'
//! exit statuses, and whether each worker's RSS and open descriptors stayed flat.

use std::collections::HashMap;
use std::process::ExitStatus;

use crate::protocol::Stats;
use crate::usage::{self, Sample};

/// What the coordinator learnt of one worker by the end.
pub struct Ended {
    /// Final counters (its DONE line).
    pub stats: Stats,
    pub samples: Vec<Sample>,
    /// Lines up to STOPPED (the SHADOW checksums) and up to DONE (HOLD, PATHS).
    pub stopped: Vec<String>,
    pub checked: Vec<String>,
    pub status: ExitStatus,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Prints the verdict on a run of `run_s` seconds; `true` when everything held.
pub fn judge(ended: &[Ended], run_s: f64) -> bool {
    let mut ok = true;
    let mut fail = |why: String| {
        println!("FAIL: {why}");
        ok = false;
    };
    let total = ended.iter().fold(Stats::default(), |a, w| {
        let s = &w.stats;
        Stats {
            transfers: a.transfers + s.transfers,
            bytes: a.bytes + s.bytes,
            notifies: a.notifies + s.notifies,
            adxl_sent: a.adxl_sent + s.adxl_sent,
            adxl_received: a.adxl_received + s.adxl_received,
            errors: a.errors + s.errors,
            corrupt: a.corrupt + s.corrupt,
        }
    });
    println!(
        "summary: {run_s:.1} s, {} transfers, {:.1} MiB moved and checked, {} notify-ring rounds, {} ADXL notifies sent / {} received, {} errors, {} corrupted bytes",
        total.transfers,
        total.bytes as f64 / (1 << 20) as f64,
        total.notifies,
        total.adxl_sent,
        total.adxl_received,
        total.errors,
        total.corrupt
    );
    if total.errors > 0 || total.corrupt > 0 {
        fail(format!("{} errors, {} corrupted bytes", total.errors, total.corrupt));
    }
    if total.transfers == 0 || total.notifies == 0 {
        fail("no transfers or no notify rounds completed".into());
    }
    if total.adxl_sent != total.adxl_received {
        fail(format!("{} ADXL notifies sent but {} received", total.adxl_sent, total.adxl_received));
    }
    for (i, e) in ended.iter().enumerate() {
        if !e.status.success() {
            fail(format!("worker {i} exited with {}", e.status));
        }
    }

    // What each initiator thread wrote last into each peer's slot, against what the peer holds.
    let mut holds: HashMap<(usize, usize), String> = HashMap::new();
    for (target, e) in ended.iter().enumerate() {
        for l in e.checked.iter().filter_map(|l| l.strip_prefix("HOLD ")) {
            if let [slot, sum] = l.split_whitespace().collect::<Vec<_>>()[..] {
                holds.insert((target, slot.parse().unwrap_or(usize::MAX)), sum.to_owned());
            }
        }
    }
    let (mut compared, mut differ) = (0, 0);
    for e in ended {
        for l in e.stopped.iter().filter(|l| l.starts_with("SHADOW ")) {
            if let [_, target, slot, sum] = l.split_whitespace().collect::<Vec<_>>()[..] {
                let key = (target.parse().unwrap_or(usize::MAX), slot.parse().unwrap_or(usize::MAX));
                if sum == "unknown" {
                    continue;
                }
                compared += 1;
                if holds.get(&key).map(String::as_str) != Some(sum) {
                    differ += 1;
                    fail(format!(
                        "slot {} of worker {}: the writer expects {sum}, it holds {:?}",
                        key.1,
                        key.0,
                        holds.get(&key)
                    ));
                }
            }
        }
    }
    println!("final check: {compared} slots compared between writer and holder, {differ} differ");
    if compared == 0 {
        fail("no slot could be compared".into());
    }

    for (i, e) in ended.iter().enumerate() {
        if let Some(l) = e.checked.iter().find_map(|l| l.strip_prefix("PATHS ")) {
            let v: Vec<f64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            if let [shared, tcp] = v[..] {
                let m = (1 << 20) as f64;
                println!(
                    "p{i}: its transfers went {:.1} MiB through shared memory, {:.1} MiB over TCP",
                    shared / m,
                    tcp / m
                );
            }
        }
    }
    for (i, w) in ended.iter().enumerate() {
        let (first, last) = (w.samples.first(), w.samples.last());
        if let (Some(a), Some(b)) = (first, last) {
            print!(
                "p{i}: RSS {:.1} -> {:.1} MiB, fds {} -> {} (first -> last sample)",
                mib(a.rss_kib),
                mib(b.rss_kib),
                a.fds,
                b.fds
            );
        }
        match usage::trend(&w.samples, run_s) {
            Some(t) => {
                println!(
                    "; quarters: RSS median {:.1} -> {:.1} MiB, fds max {} -> {}: {}",
                    mib(t.rss_kib.0),
                    mib(t.rss_kib.1),
                    t.fds.0,
                    t.fds.1,
                    if t.growth.is_none() { "flat" } else { "GROWING" }
                );
                if let Some(why) = t.growth {
                    fail(format!("p{i}: {why}"));
                }
            }
            None => println!("; too few samples to judge flatness"),
        }
    }
    println!("{}", if ok { "soak passed" } else { "soak FAILED" });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// Two workers that each wrote slot `i` of the other, with a flat 40-second history.
    fn run(sum_seen: &str, received: u64) -> Vec<Ended> {
        (0..2)
            .map(|i| Ended {
                stats: Stats {
                    transfers: 10,
                    bytes: 100,
                    notifies: 5,
                    adxl_sent: 3,
                    adxl_received: received,
                    ..Stats::default()
                },
                samples: (0..40).map(|t| Sample { at: t as f64, rss_kib: 40_000, fds: 30 }).collect(),
                stopped: vec![format!("SHADOW {} {i} 00000000000000aa", 1 - i), "STOPPED".into()],
                checked: vec![format!("HOLD {} {sum_seen}", 1 - i), "PATHS 10 90".into(), "DONE".into()],
                status: ExitStatus::from_raw(0),
            })
            .collect()
    }

    #[test]
    fn a_clean_run_passes() {
        assert!(judge(&run("00000000000000aa", 3), 40.0));
    }

    #[test]
    fn a_slot_the_holder_sees_otherwise_fails() {
        assert!(!judge(&run("00000000000000ab", 3), 40.0));
    }

    #[test]
    fn a_lost_adxl_notify_fails() {
        assert!(!judge(&run("00000000000000aa", 2), 40.0));
    }

    #[test]
    fn a_worker_that_failed_or_grew_fails_the_run() {
        let mut r = run("00000000000000aa", 3);
        r[0].status = ExitStatus::from_raw(1 << 8);
        assert!(!judge(&r, 40.0));
        let mut r = run("00000000000000aa", 3);
        r[1].samples.iter_mut().for_each(|s| s.fds += s.at as u64);
        assert!(!judge(&r, 40.0));
    }
}
