//! The modes: each measures ascendless and, in the same run, its baselines.

pub mod adxl;
pub mod baseline;
#[path = "../../../../benches/common/futex_pingpong.rs"]
mod futex_pingpong;
mod ipc_event_rounds;
pub mod memcpy;
pub mod notify;
#[path = "../../../../benches/common/rounds.rs"]
mod rounds;
pub mod setup;
mod setup_rounds;
#[path = "../../../../benches/common/stamps.rs"]
mod stamps;
pub mod sweep;

use serde_json::json;

use crate::args::{Mode, Opts, Role};
use crate::measure::Progress;
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
            "transport": o.transport, "duration": o.duration, "in_flight_per_thread": o.in_flight })
}

/// The baselines of an ADXL case: raw TCP doing the same exchange, and memcpy of the same bytes;
/// with `--async N`, first TransferSync of the same calls (`sync` measures it as the case was).
fn adxl_baselines(
    o: &Opts,
    sync: impl FnOnce(&Opts) -> Result<crate::measure::Figures, String>,
) -> Result<Vec<crate::measure::Figures>, String> {
    let len = o.block * o.batch;
    let mut tcp = baseline::tcp(o.op, len, o.threads, o.duration);
    tcp.note = format!("{} bytes per call", len);
    let mem = baseline::memcpy(len, o.threads, o.duration);
    // The matching one first: memcpy for shared memory, raw TCP otherwise.
    let mut all = if o.transport == "shm" { vec![mem, tcp] } else { vec![tcp, mem] };
    if o.in_flight > 0 {
        let mut one_by_one = sync(&Opts { in_flight: 0, ..o.clone() })?;
        one_by_one.name = "TransferSync, the same calls".into();
        all.insert(0, one_by_one);
    }
    Ok(all)
}

/// Runs the child half of an `ipc-event` round if this process was started as one.
pub fn ipc_event_child() -> bool {
    ipc_event_rounds::child_main()
}

pub fn run(o: &Opts) -> Result<(), String> {
    match o.mode {
        Mode::Adxl => match o.role {
            Role::Target => adxl::target(o),
            Role::Initiator => {
                let p = Progress::start("adxl initiator", o.duration * if o.baseline { 3.0 } else { 1.0 });
                let subject = adxl::initiator(o)?;
                let baselines = if o.baseline { adxl_baselines(o, adxl::initiator)? } else { vec![] };
                drop(p);
                emit(
                    o,
                    &Report { mode: "adxl", params: adxl_params(o), rows: vec![Row { subject, baselines }] },
                );
                Ok(())
            }
            Role::Spawn => {
                let p = Progress::start("adxl", o.duration * if o.baseline { 3.0 } else { 1.0 } + 0.5);
                let subject = adxl::spawned(o, &o.transport)?;
                let sync = |o: &Opts| adxl::spawned(o, &o.transport);
                let baselines = if o.baseline { adxl_baselines(o, sync)? } else { vec![] };
                drop(p);
                emit(
                    o,
                    &Report { mode: "adxl", params: adxl_params(o), rows: vec![Row { subject, baselines }] },
                );
                Ok(())
            }
        },
        Mode::Notify => {
            let p = Progress::start("notify", o.duration * 2.2);
            let subject =
                baseline::ping_pong("notify ping-pong (2 processes, streams)", o.duration, notify::parent);
            let baselines = if o.baseline {
                vec![baseline::ping_pong(
                    "raw futex ping-pong (2 processes)",
                    o.duration,
                    baseline::futex_parent,
                )]
            } else {
                vec![]
            };
            drop(p);
            let params = json!({ "duration": o.duration, "unit": "round trip" });
            emit(o, &Report { mode: "notify", params, rows: vec![Row { subject, baselines }] });
            Ok(())
        }
        Mode::IpcEvent => {
            // The rounds and the report are the bench's (`ipc_event_rounds.rs`): no table, no
            // options; `--json` gives the medians.
            let (reps, n) = (41, 1_000);
            let p = Progress::start("ipc-event", 6.0);
            let rows = ipc_event_rounds::measure(reps, n);
            drop(p);
            if o.json {
                // The usual rows, whose ratios are those of the medians over the rounds (the
                // text gives the medians of the per-round ratios, as the bench does).
                let figures = |i: usize, name: &str| {
                    let mut f = crate::measure::Figures {
                        name: name.into(),
                        ops: (rows.len() * (n - n / 10)) as u64,
                        ..Default::default()
                    };
                    f.p50_us = Some(rounds::median(&rows, |r| r[i].0));
                    f.p99_us = Some(rounds::median(&rows, |r| r[i].1));
                    f
                };
                let raw = || figures(0, "raw futex ping-pong (2 processes)");
                let rows = vec![
                    Row {
                        subject: figures(1, "IPC event ping-pong (2 processes, streams)"),
                        baselines: vec![raw()],
                    },
                    Row {
                        subject: figures(2, "value wait/write ping-pong (IPC memory)"),
                        baselines: vec![raw()],
                    },
                ];
                let params = json!({ "rounds": reps, "round_trips": n, "unit": "round trip" });
                emit(o, &Report { mode: "ipc-event", params, rows });
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
