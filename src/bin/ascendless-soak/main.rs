//! `ascendless-soak`: a long run of several processes moving and checking data with the ADXL
//! engine and synchronising through a ring of IPC notifies, printing each process's counters,
//! RSS and open descriptors as it goes, so crashes, corruption, hangs and leaks show. Not part
//! of `cargo test` (a few-second smoke run is); run it with `make soak DURATION=<seconds>`.
//! See docs/performance.md.

mod coordinator;
mod initiator;
mod pattern;
mod protocol;
mod region;
mod ring;
mod usage;
mod verdict;
mod worker;

const USAGE: &str =
    "usage: ascendless-soak [--duration SECONDS] [--interval SECONDS] [--procs N] [--threads N]
  --duration  how long the processes transfer (default 60)
  --interval  seconds between report lines (default 5)
  --procs     worker processes, 2 to 8 (default 4)
  --threads   initiator threads per process, 1 to 4 (default 2)
Exits 0 when every byte checked out, nothing failed and RSS and descriptors stayed flat.
";

fn parse(argv: &[String]) -> Result<Option<coordinator::Plan>, String> {
    let mut plan = coordinator::Plan { duration_s: 60.0, interval_s: 5.0, procs: 4, threads: 2 };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<f64>().map_err(|_| format!("{flag} {value}: not a number"));
        match flag.as_str() {
            "--duration" => plan.duration_s = number()?,
            "--interval" => plan.interval_s = number()?,
            "--procs" => plan.procs = number()? as usize,
            "--threads" => plan.threads = number()? as usize,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if !(plan.duration_s > 0.0 && plan.interval_s > 0.0) {
        return Err("--duration and --interval must be positive".into());
    }
    if !(2..=8).contains(&plan.procs) || !(1..=4).contains(&plan.threads) {
        return Err("--procs must be 2 to 8 and --threads 1 to 4".into());
    }
    Ok(Some(plan))
}

/// The arguments of a worker process (started by the coordinator, not by users).
fn worker_role(a: &[String]) -> Option<worker::Role> {
    match a {
        [index, procs, threads, transport, region, deadline, interval] => Some(worker::Role {
            index: index.parse().ok()?,
            procs: procs.parse().ok()?,
            threads: threads.parse().ok()?,
            transport: transport.clone(),
            device_region: region == "device",
            deadline_s: deadline.parse().ok()?,
            stat_interval_s: interval.parse().ok()?,
        }),
        _ => None,
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("__worker") {
        let Some(role) = worker_role(&argv[1..]) else {
            eprintln!("ascendless-soak: bad worker arguments {argv:?}");
            std::process::exit(2);
        };
        if let Err(e) = worker::run(role) {
            eprintln!("ascendless-soak worker {}: {e}", std::process::id());
            std::process::exit(1);
        }
        return;
    }
    let plan = match parse(&argv) {
        Ok(Some(p)) => p,
        Ok(None) => {
            print!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("ascendless-soak: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    match coordinator::run(&plan) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("ascendless-soak: {e}");
            std::process::exit(1);
        }
    }
}
