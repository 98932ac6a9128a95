//! The results: a table for people, JSON for scripts.

use serde_json::{Value, json};

use crate::measure::Figures;

/// One ascendless case and the baselines it is compared with.
pub struct Row {
    pub subject: Figures,
    pub baselines: Vec<Figures>,
}

pub struct Report {
    pub mode: &'static str,
    pub params: Value,
    pub rows: Vec<Row>,
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn figures_json(f: &Figures) -> Value {
    json!({
        "name": f.name,
        "ops": f.ops,
        "bytes": f.bytes,
        "seconds": f.seconds,
        "gbps": f.gbps(),
        "p50_us": f.p50(),
        "p99_us": f.p99(),
        "cpu_s": f.cpu_s,
        "cpu_s_per_gb": f.cpu_s_per_gb(),
        "cpu_us_per_op": f.cpu_us_per_op(),
        "note": f.note,
    })
}

/// ascendless / baseline for each figure (throughput: higher is better; the rest: lower).
pub fn ratios(s: &Figures, b: &Figures) -> Value {
    json!({
        "gbps": ratio(s.gbps(), b.gbps()),
        "p50_us": ratio(s.p50(), b.p50()),
        "p99_us": ratio(s.p99(), b.p99()),
        "cpu_s_per_gb": ratio(s.cpu_s_per_gb(), b.cpu_s_per_gb()),
        "cpu_us_per_op": ratio(s.cpu_us_per_op(), b.cpu_us_per_op()),
    })
}

impl Report {
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut v = figures_json(&r.subject);
                v["baselines"] = r
                    .baselines
                    .iter()
                    .map(|b| {
                        let mut bv = figures_json(b);
                        bv["ratio"] = ratios(&r.subject, b);
                        bv
                    })
                    .collect();
                v
            })
            .collect();
        json!({ "tool": "ascendless-bench", "version": env!("CARGO_PKG_VERSION"),
                "mode": self.mode, "params": self.params, "results": rows })
    }

    pub fn print_table(&self) {
        println!("ascendless-bench {}: {}", self.mode, self.params);
        println!(
            "{:<40} {:>9} {:>10} {:>10} {:>9} {:>10} {:>9}",
            "case", "GB/s", "p50 us", "p99 us", "CPU s/GB", "CPU us/op", "ops"
        );
        for r in &self.rows {
            line(&r.subject.name, &r.subject);
            if !r.subject.note.is_empty() {
                println!("  ({})", r.subject.note);
            }
            for b in &r.baselines {
                line(&format!("  baseline: {}", b.name), b);
                let x = |a, b| ratio(a, b).map_or("-".to_owned(), |v| format!("{v:.2}x"));
                println!(
                    "{:<40} {:>9} {:>10} {:>10} {:>9} {:>10}",
                    "    ratio ascendless/baseline",
                    x(r.subject.gbps(), b.gbps()),
                    x(r.subject.p50(), b.p50()),
                    x(r.subject.p99(), b.p99()),
                    x(r.subject.cpu_s_per_gb(), b.cpu_s_per_gb()),
                    x(r.subject.cpu_us_per_op(), b.cpu_us_per_op()),
                );
            }
        }
    }
}

fn line(name: &str, f: &Figures) {
    let n = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
    println!(
        "{:<40} {:>9} {:>10} {:>10} {:>9} {:>10} {:>9}",
        name,
        f.gbps().map_or("-".to_owned(), |g| if g < 0.01 { format!("{g:.2e}") } else { format!("{g:.3}") }),
        n(f.p50(), 2),
        n(f.p99(), 2),
        n(f.cpu_s_per_gb(), 3),
        n(f.cpu_us_per_op(), 2),
        f.ops
    );
}

pub fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}
