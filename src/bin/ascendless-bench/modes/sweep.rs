//! Sizes 8 B to 64 MiB: ADXL per transport and the baselines, to a CSV and a PNG plot.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::args::Opts;
use crate::measure::{Figures, Progress};
use crate::modes::baseline;
use crate::report::{Report, Row};

const PLOT: &str = include_str!("../../../../scripts/plot_sweep.py");

/// 8 B, 32 B, ... 32 MiB (powers of 4), then 64 MiB.
pub fn sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (0..12).map(|k| 8usize << (2 * k)).collect();
    v.push(64 << 20);
    v
}

fn csv_line(size: usize, series: &str, f: &Figures) -> String {
    let n = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    format!("{size},{series},{},{},{},{}\n", n(f.gbps()), n(f.p50()), n(f.p99()), n(f.cpu_s_per_gb()))
}

pub fn run(o: &Opts) -> Result<(), String> {
    let transports: Vec<&str> = o.transport.split(',').collect();
    let sizes = sizes();
    let points = sizes.len() * (transports.len() + 2);
    let progress = Progress::start("sweep", points as f64 * (o.duration + 0.1));
    let mut csv = String::from("size,series,gbps,p50_us,p99_us,cpu_s_per_gb\n");
    let mut rows = Vec::new();
    for &size in &sizes {
        let mut one = o.clone();
        one.block = size;
        one.batch = 1;
        one.threads = 1;
        let mem = baseline::memcpy(size, 1, o.duration);
        let tcp = baseline::tcp(o.op, size, 1, o.duration);
        csv += &csv_line(size, "memcpy", &mem);
        csv += &csv_line(size, "raw TCP", &tcp);
        for t in &transports {
            one.transport = (*t).to_owned();
            let f = crate::modes::adxl::spawned(&one, t)?;
            csv += &csv_line(size, &format!("adxl {t}"), &f);
            let b = if *t == "shm" { vec![mem.clone(), tcp.clone()] } else { vec![tcp.clone(), mem.clone()] };
            rows.push(Row { subject: f, baselines: b });
        }
    }
    drop(progress);
    std::fs::write(&o.csv, csv).map_err(|e| format!("writing {}: {e}", o.csv.display()))?;
    let png = o.plot.clone().unwrap_or_else(|| o.csv.with_extension("png"));
    let plotted = plot(&o.csv, &png);
    let params = json!({ "op": o.op.name(), "transports": transports, "duration_per_point": o.duration,
                         "sizes": sizes, "csv": o.csv, "png": plotted.as_ref().ok().map(|_| &png) });
    let report = Report { mode: "sweep", params, rows };
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json()).expect("JSON of a report"));
    } else {
        report.print_table();
        println!("CSV written to {}", o.csv.display());
    }
    match plotted {
        Ok(()) => eprintln!("plot written to {}", png.display()),
        Err(why) => eprintln!("no plot: {why}"),
    }
    Ok(())
}

/// Runs the plotting script (built into this program) with python3, when matplotlib imports.
fn plot(csv: &std::path::Path, png: &std::path::Path) -> Result<(), String> {
    let has = Command::new("python3")
        .args(["-c", "import matplotlib"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has {
        return Err("python3 with matplotlib is not available (pip install matplotlib)".into());
    }
    let mut child = Command::new("python3")
        .arg("-")
        .arg(csv)
        .arg(png)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3: {e}"))?;
    child.stdin.take().ok_or("python3 stdin")?.write_all(PLOT.as_bytes()).map_err(|e| e.to_string())?;
    let st = child.wait().map_err(|e| e.to_string())?;
    if st.success() { Ok(()) } else { Err(format!("the plotting script failed ({st})")) }
}
