//! The modes: each measures ascendless and, in the same run, its baselines.

pub mod adxl;
pub mod baseline;
#[path = "../../../../benches/common/futex_pingpong.rs"]
mod futex_pingpong;
mod ipc_event_rounds;
pub mod memcpy;
mod notify_rounds;
#[path = "../../../../benches/common/rounds.rs"]
mod rounds;
pub mod setup;
mod setup_rounds;
#[path = "../../../../benches/common/stamps.rs"]
mod stamps;
pub mod sweep;

use serde_json::json;

use crate::args::{Mode, Opts, Role};
use crate::measure::{Figures, Progress, merged};
use crate::report::{Report, Row};

fn emit(o: &Opts, report: &Report) {
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json()).expect("JSON of a report"));
    } else {
        report.print_table();
    }
}

fn adxl_params(o: &Opts) -> serde_json::Value {
    json!({ "op": o.op.name(), "block": o.block, "batch": o.batch, "threads": o.threads,
            "transport": o.transport, "duration": o.duration, "in_flight_per_thread": o.in_flight,
            "poll": o.poll.name() })
}

/// The baselines of an ADXL case: raw TCP doing the same exchange, and memcpy of the same bytes;
/// with `--async N`, first TransferSync of the same calls and, over TCP, N raw socket pairs at
/// once (what more connections give on this machine), unless `alternated` brings them (see
/// [`async_rounds`]); else `sync` measures TransferSync as the case was.
fn adxl_baselines(
    o: &Opts,
    sync: impl FnOnce(&Opts) -> Result<Figures, String>,
    alternated: Option<(Figures, Option<Figures>)>,
) -> Result<Vec<Figures>, String> {
    let len = o.block * o.batch;
    let mut tcp = baseline::tcp(o.op, len, o.threads, o.duration);
    tcp.note = format!("{} bytes per call", len);
    let mem = baseline::memcpy(len, o.threads, o.duration);
    // The matching one first: memcpy for shared memory, raw TCP otherwise.
    let mut all = if o.transport == "shm" { vec![mem, tcp] } else { vec![tcp, mem] };
    if o.in_flight == 0 {
        return Ok(all);
    }
    let (one_by_one, side_by_side) = match alternated {
        Some(measured) => measured,
        None => {
            let side_by_side = side_by_side(o).then(|| pairs(o, o.duration));
            (sync(&Opts { in_flight: 0, ..o.clone() })?, side_by_side)
        }
    };
    if let Some(p) = side_by_side {
        all.insert(1, p);
    }
    all.insert(0, Figures { name: "TransferSync, the same calls".into(), ..one_by_one });
    Ok(all)
}

/// Whether an `--async` case is also judged against N raw socket pairs at once (over TCP,
/// more than one request in flight).
fn side_by_side(o: &Opts) -> bool {
    o.in_flight > 1 && o.transport != "shm"
}

/// N raw socket pairs at once, each doing the case's exchange, for `duration` seconds.
fn pairs(o: &Opts, duration: f64) -> Figures {
    let len = o.block * o.batch;
    let mut f = baseline::tcp(o.op, len, o.threads * o.in_flight, duration);
    f.name = format!("raw TCP, {} pairs at once", o.threads * o.in_flight);
    f.note = format!("{} bytes per call", len);
    f
}

/// Rounds of a spawned `--async` case against TransferSync of the same calls (and N raw socket
/// pairs, see [`side_by_side`]).
const ASYNC_ROUNDS: usize = 5;

/// A spawned `--async` case and what it is judged against, alternating in [`ASYNC_ROUNDS`]
/// rounds of a fifth of `--duration` each, the order rotating from round to round: on a small
/// shared machine the speed of loopback TCP swings over seconds (TransferSync of 1 MiB at 2.0
/// and 2.8 GB/s minutes apart), and measured one after the other the case and its baseline saw
/// different machines. Each figure sums its rounds.
fn async_rounds(o: &Opts) -> Result<(Figures, Figures, Option<Figures>), String> {
    let short = Opts { duration: o.duration / ASYNC_ROUNDS as f64, ..o.clone() };
    let one_by_one = Opts { in_flight: 0, ..short.clone() };
    let cases = if side_by_side(o) { 3 } else { 2 };
    let mut got: Vec<Vec<Figures>> = vec![Vec::new(); cases];
    for round in 0..ASYNC_ROUNDS {
        for k in 0..cases {
            let case = (round + k) % cases;
            got[case].push(match case {
                0 => adxl::spawned(&short, &o.transport)?,
                1 => adxl::spawned(&one_by_one, &o.transport)?,
                _ => pairs(o, short.duration),
            });
        }
    }
    let merged = |case: usize| merged(&got[case]).expect("rounds were measured");
    Ok((merged(0), merged(1), (cases == 3).then(|| merged(2))))
}

/// Runs the child half of a `notify` or `ipc-event` round if this process was started as one.
pub fn ping_pong_child() -> bool {
    notify_rounds::child_main() || ipc_event_rounds::child_main()
}

/// The usual rows of a ping-pong mode's rounds, case `k` against cases 0 and 1 (the spinning
/// and the sleeping futex exchanges) for every `k > 1`: the medians over the rounds, so the
/// ratios are those of the medians (the text report gives the medians of the per-round ratios,
/// as the benches do); the CPU share of both processes in each figure's note.
fn rounds_report<const K: usize>(
    mode: &'static str,
    rows: &[rounds::Row<K>],
    n: usize,
    names: &[&str; K],
) -> Report {
    let figures = |i: usize| {
        let mut f =
            Figures { name: names[i].into(), ops: (rows.len() * (n - n / 10)) as u64, ..Default::default() };
        f.p50_us = Some(rounds::median(rows, |r| r[i].0));
        f.p99_us = Some(rounds::median(rows, |r| r[i].1));
        f.note =
            format!("CPU of both processes {:.0}% of one core", 100.0 * rounds::median(rows, |r| r[i].2));
        f
    };
    let params = json!({ "rounds": rows.len(), "round_trips": n, "unit": "round trip" });
    let rows = (2..K).map(|k| Row { subject: figures(k), baselines: vec![figures(0), figures(1)] }).collect();
    Report { mode, params, rows }
}

pub fn run(o: &Opts) -> Result<(), String> {
    match o.mode {
        Mode::Adxl => match o.role {
            Role::Target => adxl::target(o),
            Role::Initiator => {
                let p = Progress::start("adxl initiator", o.duration * if o.baseline { 3.0 } else { 1.0 });
                let subject = adxl::initiator(o)?;
                let baselines = if o.baseline { adxl_baselines(o, adxl::initiator, None)? } else { vec![] };
                drop(p);
                emit(
                    o,
                    &Report { mode: "adxl", params: adxl_params(o), rows: vec![Row { subject, baselines }] },
                );
                Ok(())
            }
            Role::Spawn => {
                let p = Progress::start("adxl", o.duration * if o.baseline { 5.0 } else { 1.0 } + 0.5);
                let (subject, alternated) = if o.in_flight > 0 && o.baseline {
                    let (subject, one_by_one, side_by_side) = async_rounds(o)?;
                    (subject, Some((one_by_one, side_by_side)))
                } else {
                    (adxl::spawned(o, &o.transport)?, None)
                };
                let sync = |o: &Opts| adxl::spawned(o, &o.transport);
                let baselines = if o.baseline { adxl_baselines(o, sync, alternated)? } else { vec![] };
                drop(p);
                emit(
                    o,
                    &Report { mode: "adxl", params: adxl_params(o), rows: vec![Row { subject, baselines }] },
                );
                Ok(())
            }
        },
        Mode::Notify => {
            // The bench's rounds and report (`notify_rounds.rs`); `--duration` sets how many
            // rounds: ten a second, 3 to 41, odd.
            let (reps, n) = (((o.duration * 10.0) as usize).clamp(3, 41) | 1, 1_000);
            let p = Progress::start("notify", reps as f64 * 0.25);
            let rows = notify_rounds::measure(reps, n);
            drop(p);
            if o.json {
                let named = [
                    "spinning futex ping-pong (2 processes)",
                    "sleeping futex ping-pong (2 processes)",
                    "notify ping-pong (2 processes, streams)",
                ];
                emit(o, &rounds_report("notify", &rows, n, &named));
            } else {
                println!("{}", notify_rounds::report(&rows, n));
            }
            Ok(())
        }
        Mode::IpcEvent => {
            // The rounds and the report are the bench's (`ipc_event_rounds.rs`): no table, no
            // options; `--json` gives the medians.
            let (reps, n) = (41, 1_000);
            let p = Progress::start("ipc-event", 9.0);
            let rows = ipc_event_rounds::measure(reps, n);
            drop(p);
            if o.json {
                let named = [
                    "spinning futex ping-pong (2 processes)",
                    "sleeping futex ping-pong (2 processes)",
                    "IPC event ping-pong (2 processes, streams)",
                    "value wait/write ping-pong (IPC memory)",
                ];
                emit(o, &rounds_report("ipc-event", &rows, n, &named));
            } else {
                println!("{}", ipc_event_rounds::report(&rows, n));
            }
            Ok(())
        }
        Mode::Memcpy => {
            let p = Progress::start("memcpy", o.duration);
            let rows = memcpy::rows(o.block, o.duration, o.baseline);
            drop(p);
            let params = json!({ "size": o.block, "duration": o.duration });
            emit(o, &Report { mode: "memcpy", params, rows });
            Ok(())
        }
        Mode::Setup => {
            let p = Progress::start("setup", o.duration);
            let row = setup::row(&o.transport, o.duration);
            drop(p);
            let row = row?;
            let params = json!({ "transport": o.transport, "duration": o.duration, "unit": "round" });
            emit(o, &Report { mode: "setup", params, rows: vec![row] });
            Ok(())
        }
        Mode::Sweep => sweep::run(o),
    }
}
