//! Setting up and tearing down a pair of engines in this process (Initialize both, Connect,
//! Disconnect, Finalize both), against a raw TCP listen, connect, accept and close; rounds
//! alternate between the two for the duration, so both see the same machine.

use std::time::{Duration, Instant};

use super::setup_rounds::{STEPS, engine_round, free_port, raw_round};
use crate::measure::{Cpu, Figures};
use crate::report::Row;

/// Rounds at most, whatever the duration: each round leaves a few sockets in TIME_WAIT for a
/// minute, and tens of thousands of them slow every connect of the machine down (the raw round
/// most: runs of 15,000 rounds each drove its p50 from 22 µs to over 200 µs).
const MAX_ROUNDS: usize = 1000;

/// The row: the engine pair's rounds, the raw rounds as the baseline; the subject's note holds
/// the median of each step.
pub fn row(transport: &str, duration: f64) -> Result<Row, String> {
    // The first round of a process starts the threads engines keep: not counted.
    engine_round(transport, free_port())?;
    raw_round();
    let (mut raw, mut ours) = (Vec::new(), Vec::new());
    let mut steps: [Vec<f64>; 6] = Default::default();
    let (mut raw_cpu, mut our_cpu) = (0.0, 0.0);
    let limit = Duration::from_secs_f64(duration);
    let start = Instant::now();
    while (start.elapsed() < limit && ours.len() < MAX_ROUNDS) || ours.len() < 3 {
        let port = free_port();
        let cpu = Cpu::now();
        raw.push(raw_round().as_secs_f64() * 1e6);
        raw_cpu += cpu.since();
        let cpu = Cpu::now();
        let (total, each) = engine_round(transport, port)?;
        our_cpu += cpu.since();
        ours.push(total.as_secs_f64() * 1e6);
        for (all, one) in steps.iter_mut().zip(each) {
            all.push(one.as_secs_f64() * 1e6);
        }
    }
    let figures = |name: String, lat: Vec<f64>, cpu_s: f64| {
        let seconds = lat.iter().sum::<f64>() / 1e6;
        let mut f = Figures { name, ops: lat.len() as u64, seconds, cpu_s, ..Figures::default() };
        f.latencies(lat);
        f
    };
    let medians: Vec<String> = STEPS
        .iter()
        .zip(steps.iter_mut())
        .map(|(name, all)| {
            all.sort_by(f64::total_cmp);
            format!("{name} {:.1}", all[all.len() / 2])
        })
        .collect();
    let mut subject = figures(format!("engine pair setup+teardown [{transport}]"), ours, our_cpu);
    subject.note = format!("p50 of each step (us): {}", medians.join(", "));
    let baseline = figures("raw TCP listen+connect+accept+close".into(), raw, raw_cpu);
    Ok(Row { subject, baselines: vec![baseline] })
}
