//! The option map of `Initialize`: validated as the vendor does, so a configuration that the
//! vendor refuses is refused here too, even where the value only tunes RDMA.
//!
//! Keys are accepted with or without the `adxl.` prefix (`BufferPool` is `adxl.BufferPool`).
//! An unknown key is `PARAM_INVALID`, as in current vendor releases. `adxl.Transport`
//! (`auto`, `shm`, `tcp`, `ucx`) is our extension: `ASCENDLESS_TRANSPORT` for one engine; so are
//! `adxl.Secret` and `adxl.RemoteAccess` (see [`crate::engine::access`]).
//!
//! [`Settings`] is what an engine runs with: the options, with the process's variables as
//! their fallbacks, resolved once at Initialize. Nothing below the engine's facade reads the
//! environment, so one process can run engines with different settings (and test them).

use std::time::Duration;

use crate::engine::access::{Access, RemoteAccess, Secret};
use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;

/// The variable `adxl.Transport` falls back to.
pub const TRANSPORT_ENV: &str = "ASCENDLESS_TRANSPORT";
/// The time limit of one asynchronous transfer, unless this variable (milliseconds, > 0) says
/// otherwise.
pub const ASYNC_TIMEOUT_ENV: &str = "ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS";
/// The heartbeat's interval, unless this variable (milliseconds, > 0) says otherwise.
pub const HEARTBEAT_MS_ENV: &str = "ASCENDLESS_ADXL_HEARTBEAT_MS";
/// Heartbeats a peer may miss in a row, unless this variable (> 0) says otherwise.
pub const HEARTBEAT_MISSES_ENV: &str = "ASCENDLESS_ADXL_HEARTBEAT_MISSES";

/// The time limit of one asynchronous transfer unless `ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS` says
/// otherwise (a dead peer fails the request at once; this bounds a peer that hangs).
pub const DEFAULT_ASYNC_TIMEOUT: Duration = Duration::from_secs(60);
/// The heartbeat's interval unless `ASCENDLESS_ADXL_HEARTBEAT_MS` (> 0) says otherwise.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// Heartbeats a peer may miss in a row before its link is dropped, unless
/// `ASCENDLESS_ADXL_HEARTBEAT_MISSES` (> 0) says otherwise.
pub const HEARTBEAT_MISSES: u32 = 3;

/// How the engine moves bytes (`adxl.Transport`, else `ASCENDLESS_TRANSPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// The best path for each peer: shared memory with an engine on this host, else TCP.
    #[default]
    Auto,
    /// Shared memory with every peer; Connect to an engine that cannot share fails (FAILED).
    Shm,
    /// TCP even between engines on one host (so cross-host behaviour is testable on one machine).
    Tcp,
    /// UCX (one-sided puts and gets) with every peer, on this host too; needs the `ucx` build
    /// feature (without it Initialize is UNSUPPORTED). Under `Auto` a build with the feature
    /// uses UCX for peers on other hosts that offer it.
    Ucx,
}

impl Transport {
    /// `auto`, `shm`, `tcp` or `ucx`, in any case.
    pub fn parse(v: &str) -> Option<Transport> {
        match v.to_ascii_lowercase().as_str() {
            "auto" => Some(Transport::Auto),
            "tcp" => Some(Transport::Tcp),
            "shm" => Some(Transport::Shm),
            "ucx" => Some(Transport::Ucx),
            _ => None,
        }
    }

    /// The option, else `ASCENDLESS_TRANSPORT` (`var` looks it up: the environment, or a table
    /// in tests), else `Auto`. A variable that is empty is unset; one that does not parse is
    /// reported in the log and `Auto` is used (a process setting; the option is checked).
    pub fn resolve(option: Option<Transport>, var: impl Fn(&str) -> Option<String>) -> Transport {
        if let Some(t) = option {
            return t;
        }
        let Some(value) = var(TRANSPORT_ENV) else { return Transport::Auto };
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Transport::Auto;
        }
        Transport::parse(trimmed).unwrap_or_else(|| {
            log::warn!(target: TARGET, "{TRANSPORT_ENV}={value:?} is not valid; using the default");
            Transport::Auto
        })
    }

    /// As [`Transport::resolve`] with the process environment (what an engine without the
    /// option would use).
    pub fn from_env(option: Option<Transport>) -> Transport {
        Transport::resolve(option, |name| std::env::var(name).ok())
    }
}

/// What an initialised engine runs with: its options, and for each setting that is also a
/// variable, the option, else the variable, else the default. Resolved once, at Initialize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub options: Options,
    pub transport: Transport,
    pub access: Access,
    /// The time limit of each TransferAsync request.
    pub async_timeout: Duration,
    /// With AutoConnect: the heartbeat's interval and the answers a peer may miss in a row.
    pub heartbeat_interval: Duration,
    pub heartbeat_misses: u32,
}

/// A positive number from a variable's text.
fn positive(value: Option<String>) -> Option<u64> {
    value?.trim().parse::<u64>().ok().filter(|&v| v > 0)
}

impl Settings {
    /// Combines `options` with the variables `var` looks up (the environment, or a table in
    /// tests). The access variables must be valid ([`Access::resolve`]); the others fall back
    /// to their defaults.
    pub fn resolve(options: Options, var: impl Fn(&str) -> Option<String>) -> EngineResult<Settings> {
        let access = Access::resolve(options.secret.clone(), options.remote_access, &var)?;
        let ms =
            |name: &str, default: Duration| positive(var(name)).map(Duration::from_millis).unwrap_or(default);
        Ok(Settings {
            transport: Transport::resolve(options.transport, &var),
            access,
            async_timeout: ms(ASYNC_TIMEOUT_ENV, DEFAULT_ASYNC_TIMEOUT),
            heartbeat_interval: ms(HEARTBEAT_MS_ENV, HEARTBEAT_INTERVAL),
            heartbeat_misses: positive(var(HEARTBEAT_MISSES_ENV))
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(HEARTBEAT_MISSES),
            options,
        })
    }

    /// As [`Settings::resolve`] with the process environment (an access variable that is set
    /// but not UTF-8 is PARAM_INVALID: [`Access::check_env`]).
    pub fn from_env(options: Options) -> EngineResult<Settings> {
        Access::check_env()?;
        Settings::resolve(options, |name| std::env::var(name).ok())
    }
}

/// The relay pool (`adxl.BufferPool` = `"NUM:SIZE_MB"`): `NUM` buffers of `SIZE_MB` MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferPool {
    pub buffers: u32,
    pub buffer_mib: u32,
}

impl BufferPool {
    pub const DEFAULT: BufferPool = BufferPool { buffers: 4, buffer_mib: 8 };

    /// `0:0` turns relaying off: unregistered memory is then `PARAM_INVALID` in transfers.
    pub fn enabled(&self) -> bool {
        self.buffers > 0
    }

    pub fn buffer_bytes(&self) -> usize {
        (self.buffer_mib as usize) << 20
    }
}

/// Validated options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub buffer_pool: BufferPool,
    pub rdma_traffic_class: u8,
    pub rdma_service_level: u8,
    pub auto_connect: bool,
    /// `adxl.Transport` (our extension): `auto`, `shm`, `tcp` or `ucx`, as `ASCENDLESS_TRANSPORT`
    /// but for one engine; `None` follows the environment.
    pub transport: Option<Transport>,
    /// `adxl.Secret` (our extension): authenticate every connection; `None` follows
    /// `ASCENDLESS_ADXL_SECRET`.
    pub secret: Option<Secret>,
    /// `adxl.RemoteAccess` (our extension): `any` or `registered`; `None` follows
    /// `ASCENDLESS_ADXL_REMOTE_ACCESS`.
    pub remote_access: Option<RemoteAccess>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            buffer_pool: BufferPool::DEFAULT,
            rdma_traffic_class: 132,
            rdma_service_level: 4,
            auto_connect: false,
            transport: None,
            secret: None,
            remote_access: None,
        }
    }
}

fn invalid(key: &str, value: &str, why: &str) -> EngineError {
    EngineError::new(ADXL_PARAM_INVALID, format!("option {key}={value:?}: {why}"))
}

/// A decimal number with nothing around it (no sign, no spaces).
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl Options {
    /// Parses the key/value pairs; the first bad one is the error.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> EngineResult<Options> {
        let mut o = Options::default();
        for (key, value) in pairs {
            let short = key.strip_prefix("adxl.").unwrap_or(key);
            match short {
                "BufferPool" => {
                    let (n, s) =
                        value.split_once(':').ok_or_else(|| invalid(key, value, "expected NUM:SIZE_MB"))?;
                    let (n, s) = match (number(n), number(s)) {
                        (Some(n), Some(s)) => (n, s),
                        _ => return Err(invalid(key, value, "expected two numbers NUM:SIZE_MB")),
                    };
                    let ok = (n == 0 && s == 0) || (n > 0 && s > 0 && n <= 1024 && s <= 4096);
                    if !ok {
                        return Err(invalid(
                            key,
                            value,
                            "both numbers must be > 0 (NUM <= 1024, SIZE_MB <= 4096), or 0:0",
                        ));
                    }
                    o.buffer_pool = BufferPool { buffers: n as u32, buffer_mib: s as u32 };
                }
                "RdmaTrafficClass" => {
                    o.rdma_traffic_class = number(value)
                        .filter(|&v| v <= 255 && v % 4 == 0)
                        .ok_or_else(|| invalid(key, value, "must be 0..=255 and a multiple of 4"))?
                        as u8;
                }
                "RdmaServiceLevel" => {
                    o.rdma_service_level = number(value)
                        .filter(|&v| v <= 7)
                        .ok_or_else(|| invalid(key, value, "must be 0..=7"))?
                        as u8;
                }
                "AutoConnect" => {
                    o.auto_connect = match value {
                        "0" => false,
                        "1" => true,
                        _ => return Err(invalid(key, value, "must be \"0\" or \"1\"")),
                    };
                }
                "Transport" => {
                    o.transport = Some(Transport::parse(value).ok_or_else(|| {
                        invalid(key, value, "must be \"auto\", \"shm\", \"tcp\" or \"ucx\"")
                    })?);
                }
                "Secret" => o.secret = Some(Secret::parse(key, value)?),
                "RemoteAccess" => o.remote_access = Some(RemoteAccess::parse(key, value)?),
                "LocalCommRes" => {
                    // Describes RDMA devices; accepted so vendor configurations load, then unused.
                    if !value.trim().is_empty() && serde_json::from_str::<serde_json::Value>(value).is_err() {
                        return Err(invalid(key, value, "is not JSON"));
                    }
                }
                _ => return Err(EngineError::new(ADXL_PARAM_INVALID, format!("unknown option {key:?}"))),
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> EngineResult<Options> {
        Options::parse(pairs.iter().copied())
    }

    fn refused(key: &str, value: &str) {
        let e = parse(&[(key, value)]).unwrap_err();
        assert_eq!(e.status, ADXL_PARAM_INVALID, "{key}={value}");
    }

    #[test]
    fn defaults_are_the_vendors() {
        let o = parse(&[]).unwrap();
        assert_eq!(o, Options::default());
        assert_eq!(
            (o.buffer_pool, o.rdma_traffic_class, o.rdma_service_level),
            (BufferPool::DEFAULT, 132, 4)
        );
        assert!(!o.auto_connect && o.buffer_pool.enabled());
    }

    #[test]
    fn buffer_pool_is_num_colon_size_or_off() {
        let o = parse(&[("adxl.BufferPool", "2:16")]).unwrap();
        assert_eq!((o.buffer_pool.buffers, o.buffer_pool.buffer_bytes()), (2, 16 << 20));
        assert!(!parse(&[("BufferPool", "0:0")]).unwrap().buffer_pool.enabled());
        for bad in ["0:8", "4:0", "4", "4:", ":8", "a:b", "-1:8", "4:8:1", " 4:8", "4:8 ", ""] {
            refused("adxl.BufferPool", bad);
        }
    }

    #[test]
    fn rdma_values_are_range_checked() {
        let o = parse(&[("adxl.RdmaTrafficClass", "0"), ("RdmaServiceLevel", "7")]).unwrap();
        assert_eq!((o.rdma_traffic_class, o.rdma_service_level), (0, 7));
        assert_eq!(parse(&[("RdmaTrafficClass", "252")]).unwrap().rdma_traffic_class, 252);
        for bad in ["256", "130", "-4", "x", ""] {
            refused("adxl.RdmaTrafficClass", bad);
        }
        for bad in ["8", "-1", "one"] {
            refused("adxl.RdmaServiceLevel", bad);
        }
    }

    #[test]
    fn auto_connect_and_local_comm_res() {
        assert!(parse(&[("AutoConnect", "1")]).unwrap().auto_connect);
        assert_eq!(parse(&[("adxl.Transport", "tcp")]).unwrap().transport, Some(Transport::Tcp));
        assert_eq!(parse(&[("Transport", "SHM")]).unwrap().transport, Some(Transport::Shm));
        assert!(parse(&[("adxl.Transport", "rdma")]).is_err());
        assert_eq!(parse(&[("adxl.Transport", "UCX")]).unwrap().transport, Some(Transport::Ucx));
        assert!(!parse(&[("adxl.AutoConnect", "0")]).unwrap().auto_connect);
        refused("AutoConnect", "true");
        assert!(parse(&[("adxl.LocalCommRes", r#"{"devices":[]}"#)]).is_ok());
        assert!(parse(&[("LocalCommRes", "")]).is_ok());
        refused("adxl.LocalCommRes", "{not json");
    }

    #[test]
    fn secret_and_remote_access_are_our_extensions() {
        let o = parse(&[("adxl.Secret", "0123456789abcdef"), ("RemoteAccess", "registered")]).unwrap();
        assert_eq!(o.secret.unwrap().bytes(), b"0123456789abcdef");
        assert_eq!(o.remote_access, Some(RemoteAccess::Registered));
        assert_eq!(parse(&[("adxl.RemoteAccess", "any")]).unwrap().remote_access, Some(RemoteAccess::Any));
        assert_eq!(parse(&[]).unwrap().secret, None);
        refused("adxl.Secret", "");
        refused("Secret", &"s".repeat(crate::engine::access::MAX_SECRET + 1));
        refused("adxl.RemoteAccess", "none");
        refused("RemoteAccess", "");
    }

    fn table<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_transport_option_wins_over_the_variable() {
        let resolve = |option, value| Transport::resolve(option, table(&[(TRANSPORT_ENV, value)]));
        assert_eq!(resolve(None, "tcp"), Transport::Tcp);
        assert_eq!(resolve(None, " TCP "), Transport::Tcp);
        assert_eq!(resolve(None, "Ucx"), Transport::Ucx);
        assert_eq!(resolve(Some(Transport::Shm), "tcp"), Transport::Shm);
        // A process setting: an empty or bad variable is the default (with a warning).
        assert_eq!(resolve(None, ""), Transport::Auto);
        assert_eq!(resolve(None, "rdma"), Transport::Auto);
        assert_eq!(Transport::resolve(None, table(&[])), Transport::Auto);
    }

    #[test]
    fn settings_are_the_options_else_the_variables() {
        let s = Settings::resolve(Options::default(), table(&[])).unwrap();
        assert_eq!((s.transport, s.access.secret.is_none()), (Transport::Auto, true));
        assert_eq!(
            (s.async_timeout, s.heartbeat_interval, s.heartbeat_misses),
            (DEFAULT_ASYNC_TIMEOUT, HEARTBEAT_INTERVAL, HEARTBEAT_MISSES)
        );
        let vars = [
            (TRANSPORT_ENV, "shm"),
            (ASYNC_TIMEOUT_ENV, "250"),
            (HEARTBEAT_MS_ENV, " 20 "),
            (HEARTBEAT_MISSES_ENV, "7"),
            (crate::engine::access::REMOTE_ACCESS_ENV, "registered"),
        ];
        let s = Settings::resolve(parse(&[("adxl.Transport", "tcp")]).unwrap(), table(&vars)).unwrap();
        assert_eq!((s.transport, s.access.remote_access), (Transport::Tcp, RemoteAccess::Registered));
        assert_eq!(
            (s.async_timeout, s.heartbeat_interval, s.heartbeat_misses),
            (Duration::from_millis(250), Duration::from_millis(20), 7)
        );
        let vars = [(ASYNC_TIMEOUT_ENV, "0"), (HEARTBEAT_MS_ENV, "x"), (HEARTBEAT_MISSES_ENV, "-1")];
        let s = Settings::resolve(Options::default(), table(&vars)).unwrap();
        assert_eq!(
            (s.async_timeout, s.heartbeat_interval, s.heartbeat_misses),
            (DEFAULT_ASYNC_TIMEOUT, HEARTBEAT_INTERVAL, HEARTBEAT_MISSES)
        );
        let e = Settings::resolve(Options::default(), table(&[(crate::engine::access::SECRET_ENV, "")]))
            .unwrap_err();
        assert_eq!(e.status, ADXL_PARAM_INVALID);
    }

    #[test]
    fn unknown_keys_are_refused() {
        refused("adxl.Whatever", "1");
        refused("", "1");
        refused("adxl.bufferpool", "4:8");
    }
}
