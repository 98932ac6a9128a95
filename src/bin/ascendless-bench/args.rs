//! Command-line parsing, by clap's derive API: the flags, their defaults and their help live in
//! the attributes of [`Cli`]; [`parse`] adds the checks that span several flags and hands the
//! modes a plain [`Opts`].

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};

const USAGE: &str = "\
ascendless-bench adxl [--spawn | target | initiator] [options]
       ascendless-bench notify [options]
       ascendless-bench ipc-event
       ascendless-bench memcpy [options]
       ascendless-bench sweep [--csv FILE] [--plot FILE] [options]
       ascendless-bench --help";

const AFTER_HELP: &str = "\
Every figure is printed beside the same-run baseline and the ratio ascendless / baseline
(throughput GB/s: higher is better; latency p50/p99 us and CPU s/GB: lower is better).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// ADXL TransferSync between two engines; baselines: a raw TCP socket pair doing the same
    /// request/response exchange, and memcpy of the same bytes
    Adxl,
    /// notify ping-pong between two processes through streams; baselines: raw futex ping-pong
    /// over a shared page between two processes, spinning before it sleeps and sleeping at
    /// once; CPU of both processes
    Notify,
    /// IPC event and value wait/write ping-pongs between two processes through streams, in 41
    /// short rounds beside the two raw futex ping-pongs (the rounds of `cargo bench --bench
    /// ipc_event`); CPU of both processes
    IpcEvent,
    /// aclrtMemcpy H2D/D2H, aclrtMemcpyAsync+synchronise and one stream task; baselines: memcpy
    /// of the same size, a bare cross-thread hand-off
    Memcpy,
    /// Initialize, Connect, Disconnect and Finalize of a pair of engines in this process;
    /// baseline: a raw TCP listen, connect, accept and close
    Setup,
    /// adxl per transport plus the baselines for sizes 8 B to 64 MiB (powers of 4); writes a CSV
    /// and, when python3 has matplotlib, a PNG plot of throughput against size
    Sweep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// (--spawn, the default) start a target and an initiator as two local processes
    #[value(skip)]
    Spawn,
    /// serve registered host memory until stdin closes (prints how to connect)
    Target,
    /// transfer to a target: --remote HOST:PORT --remote-addr ADDR
    Initiator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Op {
    Read,
    Write,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }
}

/// How `--async` waits for its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PollMode {
    /// GetTransferStatus on the oldest request; a new one once it completes
    Oldest,
    /// the batched GetTransferStatus, leaving out the waiting requests; a new request for each
    /// one completed, so N are always in flight (one initiator thread)
    Any,
}

impl PollMode {
    pub fn name(self) -> &'static str {
        match self {
            PollMode::Oldest => "oldest",
            PollMode::Any => "any",
        }
    }
}

/// ascendless-bench: ascendless performance against the machine's own limits, measured in one run
#[derive(Debug, Parser)]
#[command(name = "ascendless-bench", override_usage = USAGE, after_help = AFTER_HELP)]
struct Cli {
    /// What to measure
    #[arg(value_enum)]
    mode: Mode,
    /// adxl: the process's part (default: --spawn)
    #[arg(value_enum, conflicts_with = "spawn")]
    role: Option<Role>,
    /// adxl (the default): start a target and an initiator as two local processes
    #[arg(long)]
    spawn: bool,
    /// ADXL operation
    #[arg(long, value_enum, ignore_case = true, value_name = "read|write", default_value = "write")]
    op: Op,
    /// bytes per descriptor, e.g. 4096, 64K, 1M (memcpy: 1M too)
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    block: usize,
    /// descriptors per TransferSync call
    #[arg(long, value_name = "N", default_value = "1", value_parser = count)]
    batch: usize,
    /// initiator threads, each with its own memory
    #[arg(long, value_name = "N", default_value = "1", value_parser = count)]
    threads: usize,
    /// one TransferSync call at a time per thread (the default)
    #[arg(long, overrides_with = "in_flight")]
    sync: bool,
    /// N TransferAsync calls kept in flight per thread (a new one as soon as the oldest
    /// completes, polled with GetTransferStatus); adds a TransferSync baseline
    #[arg(long = "async", value_name = "N", value_parser = count, overrides_with = "sync")]
    in_flight: Option<usize>,
    /// with --async: wait for the oldest request (the default), or for any
    #[arg(long, value_enum, default_value = "oldest")]
    poll: PollMode,
    /// auto|shm|tcp|ucx: sets ASCENDLESS_TRANSPORT for the spawned processes (default auto;
    /// sweep: a comma-separated list, default tcp,shm); ucx needs a library built with the ucx
    /// feature (docs/deploy-rdma.md), UCX_TLS picks its wire
    #[arg(long, value_name = "T", value_parser = transports)]
    transport: Option<String>,
    /// measuring time per case (default 2; sweep: per point, default 0.3)
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    duration: Option<f64>,
    /// one JSON document on stdout instead of the table
    #[arg(long)]
    json: bool,
    /// sweep: the CSV to write
    #[arg(long, value_name = "FILE", default_value = "ascendless-sweep.csv")]
    csv: PathBuf,
    /// sweep: the PNG to write (default: the CSV's name with .png)
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// initiator: the target's engine name
    #[arg(long, value_name = "HOST:PORT")]
    remote: Option<String>,
    /// initiator: the target's memory address (printed by the target)
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    remote_addr: Option<usize>,
    /// target: where to listen (default 127.0.0.1 and a free port)
    #[arg(long, value_name = "HOST:PORT")]
    listen: Option<String>,
    /// measure ascendless only (used by --spawn for its children)
    #[arg(long)]
    no_baseline: bool,
}

#[derive(Debug, Clone)]
pub struct Opts {
    pub mode: Mode,
    pub role: Role,
    pub op: Op,
    pub block: usize,
    pub batch: usize,
    pub threads: usize,
    /// TransferAsync requests kept in flight per thread; 0 means TransferSync (`--sync`).
    pub in_flight: usize,
    pub poll: PollMode,
    pub transport: String,
    pub duration: f64,
    pub json: bool,
    pub csv: PathBuf,
    pub plot: Option<PathBuf>,
    pub remote: Option<String>,
    pub remote_addr: Option<usize>,
    pub listen: Option<String>,
    pub baseline: bool,
}

/// Parses `1024`, `4K`, `64KiB`, `1M`, `2G` (binary multiples).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &lower[digits.len()..];
    let shift = match unit {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("bad size '{s}' (use e.g. 4096, 64K, 1M)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("bad size '{s}' (use e.g. 4096, 64K, 1M)"))?;
    n.checked_shl(shift).filter(|v| *v > 0 && v >> shift == n).ok_or_else(|| format!("bad size '{s}'"))
}

fn parse_addr(s: &str) -> Result<usize, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => usize::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("bad address '{s}'"))
}

fn count(v: &str) -> Result<usize, String> {
    v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("wants a positive count, not '{v}'"))
}

fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d > 0.0 && *d <= 3600.0)
        .ok_or_else(|| format!("wants seconds (0 < s <= 3600), not '{v}'"))
}

/// One transport or a comma-separated list of them (only sweep takes a list: [`parse`] checks).
fn transports(v: &str) -> Result<String, String> {
    let v = v.to_ascii_lowercase();
    for t in v.split(',') {
        if !matches!(t, "auto" | "shm" | "tcp" | "ucx") {
            return Err(format!("--transport is auto, shm, tcp or ucx, not '{t}'"));
        }
    }
    Ok(v)
}

/// The options of `args` (without the program name), or clap's error, which also carries
/// `--help` (print it with [`clap::Error::exit`]: help to stdout and status 0, errors to stderr
/// and status 2). No arguments, or `help` as the mode, ask for the help too.
pub fn parse(args: &[String]) -> Result<Opts, clap::Error> {
    let mut argv = vec!["ascendless-bench".to_string()];
    match args.first().map(String::as_str) {
        None | Some("help") => argv.push("--help".into()),
        _ => argv.extend(args.iter().cloned()),
    }
    let cli = Cli::try_parse_from(argv)?;
    let mode = cli.mode;
    let fail = |kind, msg: &str| Err(Cli::command().error(kind, msg));
    if mode != Mode::Adxl && (cli.spawn || cli.role.is_some()) {
        return fail(ErrorKind::ArgumentConflict, "--spawn, target and initiator are for the adxl mode only");
    }
    let sweep = mode == Mode::Sweep;
    if !sweep && cli.transport.as_deref().is_some_and(|t| t.contains(',')) {
        return fail(ErrorKind::ValueValidation, "--transport takes one value outside sweep");
    }
    let o = Opts {
        mode,
        role: cli.role.unwrap_or(Role::Spawn),
        op: cli.op,
        block: cli.block,
        batch: cli.batch,
        threads: cli.threads,
        in_flight: if cli.sync { 0 } else { cli.in_flight.unwrap_or(0) },
        poll: cli.poll,
        transport: cli.transport.unwrap_or_else(|| if sweep { "tcp,shm" } else { "auto" }.into()),
        duration: cli.duration.unwrap_or(if sweep { 0.3 } else { 2.0 }),
        json: cli.json,
        csv: cli.csv,
        plot: cli.plot,
        remote: cli.remote,
        remote_addr: cli.remote_addr,
        listen: cli.listen,
        baseline: !cli.no_baseline,
    };
    if o.poll == PollMode::Any && o.threads > 1 {
        // The batched poll reports the engine's requests, whichever thread submitted them.
        return fail(ErrorKind::ArgumentConflict, "--poll any takes one initiator thread (--threads 1)");
    }
    if o.role == Role::Initiator && (o.remote.is_none() || o.remote_addr.is_none()) {
        return fail(
            ErrorKind::MissingRequiredArgument,
            "adxl initiator needs --remote HOST:PORT and --remote-addr ADDR (the target prints both)",
        );
    }
    let memory = o.block.checked_mul(o.batch).and_then(|v| v.checked_mul(o.threads));
    if memory.is_none_or(|v| v > 1 << 34) {
        return fail(
            ErrorKind::ValueValidation,
            "--block x --batch x --threads is more than 16 GiB of memory",
        );
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn opts(a: &[&str]) -> Opts {
        parse(&args(a)).unwrap()
    }

    fn refused(a: &[&str]) -> String {
        let e = parse(&args(a)).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{a:?}: {e}");
        e.to_string()
    }

    #[test]
    fn the_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1Q").is_err());
    }

    #[test]
    fn defaults() {
        let o = opts(&["adxl"]);
        assert_eq!((o.mode, o.role, o.op), (Mode::Adxl, Role::Spawn, Op::Write));
        assert_eq!((o.block, o.batch, o.threads, o.in_flight), (1 << 20, 1, 1, 0));
        assert_eq!((o.transport.as_str(), o.duration, o.json, o.baseline), ("auto", 2.0, false, true));
        assert_eq!(o.csv, PathBuf::from("ascendless-sweep.csv"));
        assert!(o.plot.is_none() && o.remote.is_none() && o.remote_addr.is_none() && o.listen.is_none());
        let s = opts(&["sweep"]);
        assert_eq!((s.transport.as_str(), s.duration), ("tcp,shm", 0.3));
    }

    /// Every flag reaches its field.
    #[test]
    fn every_flag() {
        let o = opts(&[
            "adxl",
            "initiator",
            "--op",
            "READ",
            "--block",
            "64K",
            "--batch",
            "3",
            "--threads",
            "2",
            "--transport",
            "shm",
            "--duration",
            "0.5",
            "--json",
            "--csv",
            "a.csv",
            "--plot",
            "a.png",
            "--remote",
            "127.0.0.1:5000",
            "--remote-addr",
            "0x1000",
            "--listen",
            "127.0.0.1:0",
            "--no-baseline",
        ]);
        assert_eq!((o.role, o.op, o.block, o.batch, o.threads), (Role::Initiator, Op::Read, 65536, 3, 2));
        assert_eq!((o.transport.as_str(), o.duration, o.json, o.baseline), ("shm", 0.5, true, false));
        assert_eq!((o.csv, o.plot), (PathBuf::from("a.csv"), Some(PathBuf::from("a.png"))));
        assert_eq!(o.remote.as_deref(), Some("127.0.0.1:5000"));
        assert_eq!(o.remote_addr, Some(0x1000));
        assert_eq!(o.listen.as_deref(), Some("127.0.0.1:0"));
        assert_eq!(opts(&["adxl", "target"]).role, Role::Target);
        assert_eq!(opts(&["adxl", "--spawn"]).role, Role::Spawn);
        assert_eq!(
            opts(&["adxl", "--remote-addr", "4096", "initiator", "--remote", "h:1"]).remote_addr,
            Some(4096)
        );
    }

    #[test]
    fn async_sets_requests_in_flight() {
        assert_eq!(opts(&["adxl", "--async", "4"]).in_flight, 4);
        assert_eq!(opts(&["adxl", "--async", "4", "--sync"]).in_flight, 0);
        assert_eq!(opts(&["adxl", "--async", "1"]).in_flight, 1, "one TransferAsync, not TransferSync");
        assert_eq!(opts(&["adxl", "--sync", "--async", "4"]).in_flight, 4, "the last one wins");
        assert_eq!(opts(&["adxl", "--async", "4"]).poll, PollMode::Oldest);
        assert_eq!(opts(&["adxl", "--async", "4", "--poll", "any"]).poll, PollMode::Any);
        assert!(
            refused(&["adxl", "--async", "4", "--poll", "any", "--threads", "2"])
                .contains("one initiator thread")
        );
    }

    #[test]
    fn transports() {
        assert_eq!(opts(&["adxl", "--transport", "UCX"]).transport, "ucx");
        assert_eq!(opts(&["sweep", "--transport", "tcp,shm,ucx"]).transport, "tcp,shm,ucx");
        let e = refused(&["adxl", "--transport", "rdma"]);
        assert!(e.contains("'rdma'") && e.contains("ucx"), "{e}");
        assert!(refused(&["adxl", "--transport", "tcp,ucx"]).contains("one value outside sweep"));
    }

    #[test]
    fn bad_arguments() {
        for a in [
            &["bogus"][..],
            &["adxl", "--block", "1Q"],
            &["adxl", "--async", "0"],
            &["adxl", "--batch", "x"],
            &["adxl", "--op", "copy"],
            &["adxl", "--poll", "newest"],
            &["adxl", "--duration", "0"],
            &["adxl", "--duration", "3601"],
            &["adxl", "--remote-addr", "0xZZ"],
            &["adxl", "--frobnicate"],
            &["notify", "target"],
            &["memcpy", "--spawn"],
            &["adxl", "target", "--spawn"],
            &["adxl", "--block", "1G", "--batch", "4", "--threads", "5"],
        ] {
            refused(a);
        }
        assert!(refused(&["adxl", "initiator", "--remote", "h:1"]).contains("--remote-addr ADDR"));
    }

    #[test]
    fn help() {
        for a in [&[][..], &["help"], &["--help"], &["-h"], &["adxl", "--transport", "ucx", "--help"]] {
            let e = parse(&args(a)).unwrap_err();
            assert_eq!((e.kind(), e.exit_code()), (ErrorKind::DisplayHelp, 0), "{a:?}");
        }
    }
}
