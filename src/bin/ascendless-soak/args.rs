//! Command-line parsing, by clap's derive API (the worker processes' own arguments, written by
//! the coordinator, are read in `main.rs`).

use clap::Parser;
use clap::builder::RangedU64ValueParser;

use crate::coordinator::Plan;

const AFTER_HELP: &str =
    "Exits 0 when every byte checked out, nothing failed and RSS and descriptors stayed flat.";

/// ascendless-soak: several processes moving and checking data with the ADXL engine and ringing
/// IPC notifies for a long time, printing each one's RSS and open descriptors as it goes
#[derive(Debug, Parser)]
#[command(name = "ascendless-soak", after_help = AFTER_HELP)]
struct Cli {
    /// how long the processes transfer
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = positive)]
    duration: f64,
    /// seconds between report lines
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = positive)]
    interval: f64,
    /// worker processes, 2 to 8
    #[arg(long, value_name = "N", default_value = "4", value_parser = RangedU64ValueParser::<usize>::new().range(2..=8))]
    procs: usize,
    /// initiator threads per process, 1 to 4
    #[arg(long, value_name = "N", default_value = "2", value_parser = RangedU64ValueParser::<usize>::new().range(1..=4))]
    threads: usize,
}

fn positive(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| format!("not a positive number of seconds: '{v}'"))
}

/// The plan of `args` (without the program name), or clap's error, which also carries `--help`
/// (print it with [`clap::Error::exit`]: help to stdout and status 0, errors to stderr and 2).
pub fn parse(args: &[String]) -> Result<Plan, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("ascendless-soak").chain(args.iter().map(String::as_str)))?;
    Ok(Plan { duration_s: cli.duration, interval_s: cli.interval, procs: cli.procs, threads: cli.threads })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use clap::error::ErrorKind;

    use super::*;

    fn parse_(a: &[&str]) -> Result<Plan, clap::Error> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_and_every_flag() {
        let p = parse_(&[]).unwrap();
        assert_eq!((p.duration_s, p.interval_s, p.procs, p.threads), (60.0, 5.0, 4, 2));
        let p = parse_(&["--duration", "3", "--interval", "0.5", "--procs", "8", "--threads", "1"]).unwrap();
        assert_eq!((p.duration_s, p.interval_s, p.procs, p.threads), (3.0, 0.5, 8, 1));
    }

    #[test]
    fn bad_arguments_and_help() {
        for a in [
            &["--procs", "1"][..],
            &["--procs", "9"],
            &["--threads", "0"],
            &["--threads", "5"],
            &["--duration", "0"],
            &["--interval", "-1"],
            &["--duration", "x"],
            &["--bogus", "1"],
            &["--threads"],
        ] {
            assert_eq!(parse_(a).unwrap_err().exit_code(), 2, "{a:?}");
        }
        assert_eq!(parse_(&["--help"]).unwrap_err().kind(), ErrorKind::DisplayHelp);
    }
}
