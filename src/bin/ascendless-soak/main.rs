//! `ascendless-soak`: a long run of several processes moving and checking data with the ADXL
//! engine and synchronising through a ring of IPC notifies, printing each process's counters,
//! RSS and open descriptors as it goes, so crashes, corruption, hangs and leaks show. Not part
//! of `cargo test` (a few-second smoke run is); run it with `make soak DURATION=<seconds>`.
//! See docs/performance.md.

mod args;
mod coordinator;
mod initiator;
mod pattern;
mod protocol;
mod region;
mod ring;
mod usage;
mod verdict;
mod worker;

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
    // `--help` comes back as an "error" too: exit() prints it to stdout with status 0, and real
    // errors to stderr with status 2.
    let plan = args::parse(&argv).unwrap_or_else(|e| e.exit());
    match coordinator::run(&plan) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("ascendless-soak: {e}");
            std::process::exit(1);
        }
    }
}
