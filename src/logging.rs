//! Logging set up from the environment, the Rust way and the vendor's way.
//!
//! - `RUST_LOG` (env_logger syntax) wins when set.
//! - Otherwise `ASCEND_GLOBAL_LOG_LEVEL` picks the level of this library's messages:
//!   0 debug, 1 info, 2 warning, 3 error (the vendor's default), 4 off.
//! - Messages go to standard error, or to standard output with `ASCEND_SLOG_PRINT_TO_STDOUT=1`
//!   (the vendor writes log files unless that variable is set; we never write files).
//!
//! The logger is installed the first time any entry point runs. If the host program already
//! installed a `log` logger, that one is kept and receives our messages.

use std::sync::Once;

/// The `log` target all of this library's messages use, so filters can select them.
pub const TARGET: &str = "ascendless";

/// The level `ASCEND_GLOBAL_LOG_LEVEL` asks for; `None` when unset or not a number in 0..=4.
pub fn vendor_level(value: Option<&str>) -> Option<log::LevelFilter> {
    match value?.trim() {
        "0" => Some(log::LevelFilter::Debug),
        "1" => Some(log::LevelFilter::Info),
        "2" => Some(log::LevelFilter::Warn),
        "3" => Some(log::LevelFilter::Error),
        "4" => Some(log::LevelFilter::Off),
        _ => None,
    }
}

/// Installs the logger once per process; cheap after the first call.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let env = |name: &str| std::env::var(name).ok();
        let _ = builder(
            env("RUST_LOG").as_deref(),
            env("ASCEND_GLOBAL_LOG_LEVEL").as_deref(),
            env("ASCEND_SLOG_PRINT_TO_STDOUT").as_deref(),
        )
        .try_init();
    });
}

fn builder(rust_log: Option<&str>, vendor: Option<&str>, to_stdout: Option<&str>) -> env_logger::Builder {
    use std::io::Write;
    let mut b = env_logger::Builder::new();
    match rust_log {
        Some(filters) if !filters.trim().is_empty() => {
            b.parse_filters(filters);
        }
        _ => {
            let level = vendor_level(vendor).unwrap_or(log::LevelFilter::Error);
            b.filter_level(log::LevelFilter::Off).filter_module(TARGET, level);
        }
    }
    let target = match to_stdout.map(str::trim) {
        Some("1") => env_logger::Target::Stdout,
        _ => env_logger::Target::Stderr,
    };
    b.target(target);
    // The vendor's layout: [LEVEL] MODULE(pid,program):time message
    b.format(|buf, record| {
        let level = match record.level() {
            log::Level::Error => "ERROR",
            log::Level::Warn => "WARNING",
            log::Level::Info => "INFO",
            log::Level::Debug | log::Level::Trace => "DEBUG",
        };
        writeln!(
            buf,
            "[{level}] ASCENDLESS({},{}):{} {}",
            std::process::id(),
            program_name(),
            buf.timestamp_micros(),
            record.args()
        )
    });
    b
}

fn program_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "unknown".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::LevelFilter;

    #[test]
    fn vendor_levels_map_as_documented() {
        assert_eq!(vendor_level(Some("0")), Some(LevelFilter::Debug));
        assert_eq!(vendor_level(Some("1")), Some(LevelFilter::Info));
        assert_eq!(vendor_level(Some("2")), Some(LevelFilter::Warn));
        assert_eq!(vendor_level(Some(" 3 ")), Some(LevelFilter::Error));
        assert_eq!(vendor_level(Some("4")), Some(LevelFilter::Off));
        assert_eq!(vendor_level(Some("5")), None);
        assert_eq!(vendor_level(Some("debug")), None);
        assert_eq!(vendor_level(None), None);
    }

    #[test]
    fn rust_log_wins_over_vendor_level() {
        let logger = builder(Some("ascendless=debug"), Some("4"), None).build();
        assert_eq!(logger.filter(), LevelFilter::Debug);
    }

    #[test]
    fn vendor_level_applies_without_rust_log() {
        assert_eq!(builder(None, Some("1"), None).build().filter(), LevelFilter::Info);
        assert_eq!(builder(Some(" "), Some("4"), None).build().filter(), LevelFilter::Off);
        assert_eq!(builder(None, None, None).build().filter(), LevelFilter::Error);
    }
}
