//! Command-line parsing, by hand (no argument-parsing crate).

use std::path::PathBuf;

pub const USAGE: &str = "\
ascendless-bench: ascendless performance against the machine's own limits, measured in one run

usage:
  ascendless-bench adxl [--spawn | target | initiator] [options]
  ascendless-bench notify [options]
  ascendless-bench memcpy [options]
  ascendless-bench sweep [--csv FILE] [--plot FILE] [options]
  ascendless-bench --help

modes:
  adxl       ADXL TransferSync between two engines; baselines: a raw TCP socket pair doing the
             same request/response exchange, and memcpy of the same bytes
               --spawn     (default) start a target and an initiator as two local processes
               target      serve registered host memory until stdin closes (prints how to connect)
               initiator   transfer to a target: --remote HOST:PORT --remote-addr ADDR
  notify     notify ping-pong between two processes through streams; baseline: raw futex
             ping-pong over a shared page between two processes
  memcpy     aclrtMemcpy H2D/D2H, aclrtMemcpyAsync+synchronise and one stream task; baselines:
             memcpy of the same size, a bare cross-thread hand-off
  sweep      adxl per transport plus the baselines for sizes 8 B to 64 MiB (powers of 4); writes a
             CSV and, when python3 has matplotlib, a PNG plot of throughput against size

options:
  --op read|write       ADXL operation (default write)
  --block SIZE          bytes per descriptor, e.g. 4096, 64K, 1M (default 1M; memcpy: 1M)
  --batch N             descriptors per TransferSync call (default 1)
  --threads N           initiator threads, each with its own memory (default 1)
  --sync                one call in flight per thread (the default and only mode today)
  --async N             N TransferAsync calls in flight per thread (GetTransferStatus polling)
  --transport T         auto|shm|tcp|ucx: sets ASCENDLESS_TRANSPORT for the spawned processes
                        (sweep: a comma-separated list, default tcp,shm); ucx needs a library
                        built with the ucx feature (docs/deploy-rdma.md), UCX_TLS picks its wire
  --duration SECS       measuring time per case (default 2; sweep: per point, default 0.3)
  --json                one JSON document on stdout instead of the table
  --csv FILE            sweep: the CSV to write (default ascendless-sweep.csv)
  --plot FILE           sweep: the PNG to write (default: the CSV's name with .png)
  --remote HOST:PORT    initiator: the target's engine name
  --remote-addr ADDR    initiator: the target's memory address (printed by the target)
  --listen HOST:PORT    target: where to listen (default 127.0.0.1 and a free port)
  --no-baseline         measure ascendless only (used by --spawn for its children)

Every figure is printed beside the same-run baseline and the ratio ascendless / baseline
(throughput GB/s: higher is better; latency p50/p99 us and CPU s/GB: lower is better).
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Adxl,
    Notify,
    Memcpy,
    Sweep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Spawn,
    Target,
    Initiator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

#[derive(Debug, Clone)]
pub struct Opts {
    pub mode: Mode,
    pub role: Role,
    pub op: Op,
    pub block: usize,
    pub batch: usize,
    pub threads: usize,
    /// TransferAsync requests in flight per thread; 1 means TransferSync (`--sync`).
    pub in_flight: usize,
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

fn count(flag: &str, v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{flag} wants a positive count, not '{v}'"))
}

/// `Ok(None)` means help was asked for.
pub fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let mut it = args.iter();
    let mode = match it.next().map(String::as_str) {
        None | Some("-h" | "--help" | "help") => return Ok(None),
        Some("adxl") => Mode::Adxl,
        Some("notify") => Mode::Notify,
        Some("memcpy") => Mode::Memcpy,
        Some("sweep") => Mode::Sweep,
        Some(other) => return Err(format!("unknown mode '{other}' (adxl, notify, memcpy or sweep)")),
    };
    let mut o = Opts {
        mode,
        role: Role::Spawn,
        op: Op::Write,
        block: 1 << 20,
        batch: 1,
        threads: 1,
        in_flight: 1,
        transport: if mode == Mode::Sweep { "tcp,shm".into() } else { "auto".into() },
        duration: if mode == Mode::Sweep { 0.3 } else { 2.0 },
        json: false,
        csv: PathBuf::from("ascendless-sweep.csv"),
        plot: None,
        remote: None,
        remote_addr: None,
        listen: None,
        baseline: true,
    };
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--spawn" if mode == Mode::Adxl => o.role = Role::Spawn,
            "target" if mode == Mode::Adxl => o.role = Role::Target,
            "initiator" if mode == Mode::Adxl => o.role = Role::Initiator,
            "--op" => {
                o.op = match value(a)?.to_ascii_lowercase().as_str() {
                    "read" => Op::Read,
                    "write" => Op::Write,
                    v => return Err(format!("--op is read or write, not '{v}'")),
                }
            }
            "--block" => o.block = parse_size(&value(a)?)?,
            "--batch" => o.batch = count(a, &value(a)?)?,
            "--threads" => o.threads = count(a, &value(a)?)?,
            "--sync" => o.in_flight = 1,
            "--async" => o.in_flight = count(a, &value(a)?)?,
            "--transport" => {
                let v = value(a)?.to_ascii_lowercase();
                for t in v.split(',') {
                    if !matches!(t, "auto" | "shm" | "tcp" | "ucx") {
                        return Err(format!("--transport is auto, shm, tcp or ucx, not '{t}'"));
                    }
                }
                if mode != Mode::Sweep && v.contains(',') {
                    return Err("--transport takes one value outside sweep".into());
                }
                o.transport = v;
            }
            "--duration" => {
                let v = value(a)?;
                o.duration = v
                    .parse::<f64>()
                    .ok()
                    .filter(|d| d.is_finite() && *d > 0.0 && *d <= 3600.0)
                    .ok_or_else(|| format!("--duration wants seconds (0 < s <= 3600), not '{v}'"))?;
            }
            "--json" => o.json = true,
            "--csv" => o.csv = PathBuf::from(value(a)?),
            "--plot" => o.plot = Some(PathBuf::from(value(a)?)),
            "--remote" => o.remote = Some(value(a)?),
            "--remote-addr" => o.remote_addr = Some(parse_addr(&value(a)?)?),
            "--listen" => o.listen = Some(value(a)?),
            "--no-baseline" => o.baseline = false,
            other => return Err(format!("unknown option '{other}' for this mode (see --help)")),
        }
    }
    if o.role == Role::Initiator && (o.remote.is_none() || o.remote_addr.is_none()) {
        return Err(
            "adxl initiator needs --remote HOST:PORT and --remote-addr ADDR (the target prints both)".into(),
        );
    }
    o.block
        .checked_mul(o.batch)
        .and_then(|v| v.checked_mul(o.threads))
        .filter(|v| *v <= 1 << 34)
        .ok_or("--block x --batch x --threads is more than 16 GiB of memory")?;
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1Q").is_err());
    }

    #[test]
    fn async_sets_requests_in_flight() {
        let a: Vec<String> = ["adxl", "--async", "4"].iter().map(|s| s.to_string()).collect();
        assert_eq!(parse(&a).unwrap().unwrap().in_flight, 4);
        let a: Vec<String> = ["adxl", "--async", "4", "--sync"].iter().map(|s| s.to_string()).collect();
        assert_eq!(parse(&a).unwrap().unwrap().in_flight, 1);
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn transports() {
        assert_eq!(parse(&args(&["adxl", "--transport", "UCX"])).unwrap().unwrap().transport, "ucx");
        let sweep = parse(&args(&["sweep", "--transport", "tcp,shm,ucx"])).unwrap().unwrap();
        assert_eq!(sweep.transport, "tcp,shm,ucx");
        let e = parse(&args(&["adxl", "--transport", "rdma"])).unwrap_err();
        assert!(e.contains("'rdma'") && e.contains("ucx"), "{e}");
        assert!(parse(&args(&["adxl", "--transport", "tcp,ucx"])).is_err(), "one value outside sweep");
    }
}
