//! The option map of `Initialize`: validated as the vendor does, so a configuration that the
//! vendor refuses is refused here too, even where the value only tunes RDMA.
//!
//! Keys are accepted with or without the `adxl.` prefix (`BufferPool` is `adxl.BufferPool`);
//! given both ways, the key without the prefix wins (the vendor's rule), whatever the order.
//! An unknown key is `PARAM_INVALID`, as in current vendor releases. `adxl.Transport`
//! (`auto`, `shm`, `tcp`, `ucx`) is our extension: `ASCENDLESS_TRANSPORT` for one engine; so are
//! `adxl.Secret` and `adxl.RemoteAccess` (see [`crate::engine::access`]). The JSON options have
//! their own files: [`global_resource`] (`GlobalResourceConfig`) and [`local_comm_res`]
//! (`LocalCommRes`); docs/engine-options.md says what each key does here.
//!
//! [`Settings`] is what an engine runs with: the options, with the process's variables as
//! their fallbacks, resolved once at Initialize. Nothing below the engine's facade reads the
//! environment, so one process can run engines with different settings (and test them).

pub mod global_resource;
pub mod local_comm_res;
mod value;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::engine::access::{Access, RemoteAccess, Secret};
use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
pub use global_resource::{ChannelPool, ConnectPool, GlobalResource, Protocol};
pub use local_comm_res::LocalCommRes;
use value::{invalid, number};

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

/// The variables the RDMA options fall back to (the vendor's: HCCL's own settings).
pub const RDMA_TC_ENV: &str = "HCCL_RDMA_TC";
pub const RDMA_SL_ENV: &str = "HCCL_RDMA_SL";
/// UCX's own variables for the same two settings: when set, they win over the `HCCL_` ones
/// (but not over the options).
pub const UCX_TC_ENV: &str = "UCX_IB_TRAFFIC_CLASS";
pub const UCX_SL_ENV: &str = "UCX_IB_SL";

/// The RDMA settings an engine hands to UCX (only in a `ucx` build, only where UCX drives an
/// InfiniBand or RoCE device): `None` leaves UCX's own configuration alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rdma {
    /// `RdmaTrafficClass` (0..=255, a multiple of 4), else `HCCL_RDMA_TC`: UCX's
    /// `IB_TRAFFIC_CLASS`.
    pub traffic_class: Option<u8>,
    /// `RdmaServiceLevel` (0..=7), else `HCCL_RDMA_SL`: UCX's `IB_SL`.
    pub service_level: Option<u8>,
}

/// Which of the vendor's engines a configuration selects. There is one engine here; the kind
/// only decides what the vendor would refuse or leave off (its client-server and fabric-memory
/// engines have no relay pool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// The ADXL engine: relay pool on by default.
    Comm,
    /// LocalCommRes version 1.3, or `protocol_desc` given: BufferPool only `0:0`, off by default.
    ClientServer,
    /// `EnableUseFabricMem=1`: BufferPool only `0:0`, off by default.
    FabricMem,
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
    /// The asynchronous connects' pool (`GlobalResourceConfig` `connect_pool.*`).
    pub connect_pool: ConnectPool,
    /// Idle-link eviction asked for by `channel_pool.*` (the links service applies it).
    pub channel_pool: Option<ChannelPool>,
    /// What UCX is told of RDMA traffic class and service level.
    pub rdma: Rdma,
}

/// A positive number from a variable's text.
fn positive(value: Option<String>) -> Option<u64> {
    value?.trim().parse::<u64>().ok().filter(|&v| v > 0)
}

/// An RDMA variable (`HCCL_RDMA_TC`...): unset or empty is `None`; a bad value is PARAM_INVALID,
/// as the vendor refuses it.
fn rdma_var(
    var: &impl Fn(&str) -> Option<String>,
    name: &str,
    check: fn(&str) -> Option<u8>,
    why: &str,
) -> EngineResult<Option<u8>> {
    match var(name) {
        Some(v) if !v.trim().is_empty() => check(v.trim())
            .map(Some)
            .ok_or_else(|| EngineError::new(ADXL_PARAM_INVALID, format!("variable {name}={v:?}: {why}"))),
        _ => Ok(None),
    }
}

fn traffic_class(v: &str) -> Option<u8> {
    number(v).filter(|&v| v <= 255 && v % 4 == 0).map(|v| v as u8)
}

fn service_level(v: &str) -> Option<u8> {
    number(v).filter(|&v| v <= 7).map(|v| v as u8)
}

const TC_RULE: &str = "must be 0..=255 and a multiple of 4";
const SL_RULE: &str = "must be 0..=7";

/// The transport `comm_resource_config.protocol_desc` asks for, where it has a meaning here:
/// HCCS only (the NPUs' links inside one server) is the same-host path; network protocols
/// only (RoCE, UB) are the network path for every peer, this host's too (UCX in a `ucx` build,
/// else TCP); both kinds are `auto`.
pub fn transport_of(protocols: &[global_resource::ProtocolDesc]) -> Option<Transport> {
    if protocols.is_empty() {
        return None;
    }
    let hccs = protocols.iter().filter(|d| d.protocol == Protocol::Hccs).count();
    Some(if hccs == protocols.len() {
        Transport::Shm
    } else if hccs == 0 {
        if cfg!(feature = "ucx") { Transport::Ucx } else { Transport::Tcp }
    } else {
        Transport::Auto
    })
}

impl Settings {
    /// Combines `options` with the variables `var` looks up (the environment, or a table in
    /// tests). The access and RDMA variables must be valid ([`Access::resolve`]); the others
    /// fall back to their defaults. Reads the file of `local_comm_res_path` when the
    /// LocalCommRes option is empty.
    pub fn resolve(mut options: Options, var: impl Fn(&str) -> Option<String>) -> EngineResult<Settings> {
        let access = Access::resolve(options.secret.clone(), options.remote_access, &var)?;
        let ms =
            |name: &str, default: Duration| positive(var(name)).map(Duration::from_millis).unwrap_or(default);
        options.read_local_comm_res_file()?;
        let grc = options.global_resource.clone().unwrap_or_default();
        // The vendor's channel pool connects on transfer: a link it evicted comes back when used.
        if grc.channel_pool.is_some() {
            options.auto_connect = true;
        }
        let env_transport = var(TRANSPORT_ENV).is_some_and(|v| !v.trim().is_empty());
        let transport = match transport_of(&grc.protocols) {
            Some(t) if options.transport.is_none() && !env_transport => t,
            _ => Transport::resolve(options.transport, &var),
        };
        let tc = rdma_var(&var, RDMA_TC_ENV, traffic_class, TC_RULE)?.filter(|_| var(UCX_TC_ENV).is_none());
        let sl = rdma_var(&var, RDMA_SL_ENV, service_level, SL_RULE)?.filter(|_| var(UCX_SL_ENV).is_none());
        let rdma = Rdma {
            traffic_class: options.rdma_traffic_class.or(tc),
            service_level: options.rdma_service_level.or(sl),
        };
        log::debug!(
            target: TARGET,
            "engine options: {:?} engine kind, relay pool {:?}, transport {transport:?}, {rdma:?}, {:?}, {:?}",
            options.kind(),
            options.buffer_pool,
            grc.connect_pool,
            grc.channel_pool
        );
        Ok(Settings {
            transport,
            access,
            async_timeout: ms(ASYNC_TIMEOUT_ENV, DEFAULT_ASYNC_TIMEOUT),
            heartbeat_interval: ms(HEARTBEAT_MS_ENV, HEARTBEAT_INTERVAL),
            heartbeat_misses: positive(var(HEARTBEAT_MISSES_ENV))
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(HEARTBEAT_MISSES),
            connect_pool: grc.connect_pool,
            channel_pool: grc.channel_pool,
            rdma,
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
    /// `0:0`.
    pub const OFF: BufferPool = BufferPool { buffers: 0, buffer_mib: 0 };

    /// `0:0` turns relaying off: unregistered memory is then `PARAM_INVALID` in transfers.
    pub fn enabled(&self) -> bool {
        self.buffers > 0
    }

    pub fn buffer_bytes(&self) -> usize {
        (self.buffer_mib as usize) << 20
    }

    fn parse(key: &str, value: &str) -> EngineResult<BufferPool> {
        let (n, s) = value.split_once(':').ok_or_else(|| invalid(key, value, "expected NUM:SIZE_MB"))?;
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
        Ok(BufferPool { buffers: n as u32, buffer_mib: s as u32 })
    }
}

/// Validated options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The relay pool the engine runs with: `BufferPool`, else the default of the engine kind
    /// (`4:8`, or `0:0` where the vendor's engine has no relay).
    pub buffer_pool: BufferPool,
    /// `BufferPool` as given (`None`: not given, or empty).
    pub buffer_pool_option: Option<BufferPool>,
    /// `RdmaTrafficClass` / `RdmaServiceLevel` as given (`None`: not given, or empty; then
    /// `HCCL_RDMA_TC` / `HCCL_RDMA_SL`, then the vendor's defaults 132 and 4).
    pub rdma_traffic_class: Option<u8>,
    pub rdma_service_level: Option<u8>,
    pub auto_connect: bool,
    /// `EnableUseFabricMem` (`0`/`1`).
    pub fabric_mem: bool,
    /// `LocalCommRes` (or the file of `local_comm_res_path`, once settled), when not blank.
    pub local_comm_res: Option<LocalCommRes>,
    /// `GlobalResourceConfig`, when not empty.
    pub global_resource: Option<GlobalResource>,
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
            buffer_pool_option: None,
            rdma_traffic_class: None,
            rdma_service_level: None,
            auto_connect: false,
            fabric_mem: false,
            local_comm_res: None,
            global_resource: None,
            transport: None,
            secret: None,
            remote_access: None,
        }
    }
}

/// Every key this engine takes, without the `adxl.` prefix.
pub const KEYS: &[&str] = &[
    "BufferPool",
    "RdmaTrafficClass",
    "RdmaServiceLevel",
    "LocalCommRes",
    "AutoConnect",
    "EnableUseFabricMem",
    "GlobalResourceConfig",
    "Transport",
    "Secret",
    "RemoteAccess",
];

impl Options {
    /// Parses the key/value pairs; the first bad one is the error. A key given both with and
    /// without `adxl.` takes the value without; the same spelling twice takes the last.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> EngineResult<Options> {
        // short key -> (spelled with the prefix, key as given, value)
        let mut given: BTreeMap<&str, (bool, &str, &str)> = BTreeMap::new();
        for (key, value) in pairs {
            let (short, prefixed) = match key.strip_prefix("adxl.") {
                Some(short) => (short, true),
                None => (key, false),
            };
            let Some(&short) = KEYS.iter().find(|k| **k == short) else {
                return Err(EngineError::new(
                    ADXL_PARAM_INVALID,
                    format!(
                        "unknown option {key:?} (known: {}, each also with the prefix \"adxl.\")",
                        KEYS.join(", ")
                    ),
                ));
            };
            match given.get(short) {
                Some((false, ..)) if prefixed => {
                    log::debug!(target: TARGET, "option {key} ignored: {short} is given without the prefix");
                }
                _ => {
                    given.insert(short, (prefixed, key, value));
                }
            }
        }
        let mut o = Options::default();
        for (short, (_, key, value)) in given {
            match short {
                "BufferPool" if !value.is_empty() => {
                    o.buffer_pool_option = Some(BufferPool::parse(key, value)?)
                }
                "RdmaTrafficClass" if !value.is_empty() => {
                    o.rdma_traffic_class =
                        Some(traffic_class(value).ok_or_else(|| invalid(key, value, TC_RULE))?);
                }
                "RdmaServiceLevel" if !value.is_empty() => {
                    o.rdma_service_level =
                        Some(service_level(value).ok_or_else(|| invalid(key, value, SL_RULE))?);
                }
                "AutoConnect" => o.auto_connect = zero_or_one(key, value)?,
                "EnableUseFabricMem" if !value.is_empty() => o.fabric_mem = zero_or_one(key, value)?,
                "Transport" => {
                    o.transport = Some(Transport::parse(value).ok_or_else(|| {
                        invalid(key, value, "must be \"auto\", \"shm\", \"tcp\" or \"ucx\"")
                    })?);
                }
                "Secret" => o.secret = Some(Secret::parse(key, value)?),
                "RemoteAccess" => o.remote_access = Some(RemoteAccess::parse(key, value)?),
                "LocalCommRes" if !value.trim().is_empty() => {
                    o.local_comm_res = Some(LocalCommRes::parse(key, value)?);
                }
                "GlobalResourceConfig" if !value.is_empty() => {
                    o.global_resource = Some(GlobalResource::parse(key, value)?);
                }
                _ => {} // an empty value: the default, as the vendor reads it
            }
        }
        o.settle_pool()?;
        Ok(o)
    }

    /// The vendor's engine this configuration selects (its `engine_factory`).
    pub fn kind(&self) -> EngineKind {
        if self.fabric_mem {
            EngineKind::FabricMem
        } else if let Some(l) = &self.local_comm_res {
            if l.is_v13() { EngineKind::ClientServer } else { EngineKind::Comm }
        } else if self.global_resource.as_ref().is_some_and(|g| !g.protocols.is_empty()) {
            EngineKind::ClientServer
        } else {
            EngineKind::Comm
        }
    }

    /// The relay pool for the engine kind: the client-server and fabric-memory engines have
    /// none, so `BufferPool` may only be `0:0` there (PARAM_INVALID otherwise).
    fn settle_pool(&mut self) -> EngineResult<()> {
        let kind = self.kind();
        self.buffer_pool = match (self.buffer_pool_option, kind) {
            (Some(p), EngineKind::Comm) => p,
            (None, EngineKind::Comm) => BufferPool::DEFAULT,
            (Some(p), _) if p.enabled() => {
                let why = match kind {
                    EngineKind::FabricMem => {
                        "must be \"0:0\" with EnableUseFabricMem=1 (fabric memory has no relay pool)"
                    }
                    _ => {
                        "must be \"0:0\" with LocalCommRes version 1.3 or a protocol_desc (that engine has no relay pool)"
                    }
                };
                let text = format!("{}:{}", p.buffers, p.buffer_mib);
                return Err(invalid("BufferPool", &text, why));
            }
            _ => BufferPool::OFF,
        };
        Ok(())
    }

    /// `local_comm_res_path`: its file is the LocalCommRes when the option is not given (the
    /// option wins, as the vendor's); read and checked here, at Initialize.
    fn read_local_comm_res_file(&mut self) -> EngineResult<()> {
        let Some(path) = self.global_resource.as_ref().and_then(|g| g.local_comm_res_path.clone()) else {
            return Ok(());
        };
        if self.local_comm_res.is_some() {
            log::debug!(target: TARGET, "LocalCommRes is given: local_comm_res_path {path:?} is not read");
            return Ok(());
        }
        let key = global_resource::KEY;
        let text = LocalCommRes::read_file(key, &path)?;
        self.local_comm_res = Some(LocalCommRes::parse(&format!("{key} local_comm_res_path {path}"), &text)?);
        self.settle_pool()
    }
}

/// `"0"` or `"1"`.
fn zero_or_one(key: &str, value: &str) -> EngineResult<bool> {
    match value {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(invalid(key, value, "must be \"0\" or \"1\"")),
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
            (BufferPool::DEFAULT, None, None)
        );
        assert!(!o.auto_connect && o.buffer_pool.enabled() && !o.fabric_mem);
        assert_eq!(o.kind(), EngineKind::Comm);
    }

    #[test]
    fn buffer_pool_is_num_colon_size_or_off() {
        let o = parse(&[("adxl.BufferPool", "2:16")]).unwrap();
        assert_eq!((o.buffer_pool.buffers, o.buffer_pool.buffer_bytes()), (2, 16 << 20));
        assert!(!parse(&[("BufferPool", "0:0")]).unwrap().buffer_pool.enabled());
        // Empty is the default, as the vendor reads it.
        assert_eq!(parse(&[("BufferPool", "")]).unwrap().buffer_pool, BufferPool::DEFAULT);
        for bad in ["0:8", "4:0", "4", "4:", ":8", "a:b", "-1:8", "4:8:1", " 4:8", "4:8 "] {
            refused("adxl.BufferPool", bad);
        }
    }

    #[test]
    fn rdma_values_are_range_checked() {
        let o = parse(&[("adxl.RdmaTrafficClass", "0"), ("RdmaServiceLevel", "7")]).unwrap();
        assert_eq!((o.rdma_traffic_class, o.rdma_service_level), (Some(0), Some(7)));
        assert_eq!(parse(&[("RdmaTrafficClass", "252")]).unwrap().rdma_traffic_class, Some(252));
        assert_eq!(parse(&[("RdmaTrafficClass", "")]).unwrap().rdma_traffic_class, None);
        for bad in ["256", "130", "-4", "x", " 4"] {
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
        refused("AutoConnect", "");
        assert!(parse(&[("adxl.LocalCommRes", r#"{"devices":[]}"#)]).is_ok());
        assert!(parse(&[("LocalCommRes", "")]).unwrap().local_comm_res.is_none());
        refused("adxl.LocalCommRes", "{not json");
        refused("LocalCommRes", r#"{"version":"9"}"#);
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
        refused("hixl.BufferPool", "4:8");
        let e = parse(&[("GlobalResourceConfigs", "{}")]).unwrap_err();
        assert!(e.message.contains("EnableUseFabricMem"), "{}", e.message);
    }

    #[test]
    fn every_key_takes_both_spellings_and_the_short_one_wins() {
        for key in KEYS {
            let value = match *key {
                "BufferPool" => "2:4",
                "RdmaTrafficClass" => "8",
                "RdmaServiceLevel" => "3",
                "LocalCommRes" => r#"{"version":"1.0"}"#,
                "AutoConnect" | "EnableUseFabricMem" => "1",
                "GlobalResourceConfig" => r#"{"connect_pool.thread_num":3}"#,
                "Transport" => "tcp",
                "Secret" => "0123456789abcdef",
                _ => "registered",
            };
            let long = format!("adxl.{key}");
            let short = parse(&[(key, value)]);
            let prefixed = parse(&[(long.as_str(), value)]);
            if *key == "BufferPool" {
                // Not with fabric memory; alone it is fine.
                assert_eq!(short.unwrap().buffer_pool, BufferPool { buffers: 2, buffer_mib: 4 });
            } else {
                assert_eq!(short.unwrap(), prefixed.unwrap(), "{key}");
            }
        }
        // Both spellings: the one without the prefix, in either order (a C++ map sorts
        // "BufferPool" before "adxl.BufferPool"; the C API keeps the caller's order).
        for pairs in [
            [("BufferPool", "1:1"), ("adxl.BufferPool", "2:2")],
            [("adxl.BufferPool", "2:2"), ("BufferPool", "1:1")],
        ] {
            assert_eq!(parse(&pairs).unwrap().buffer_pool, BufferPool { buffers: 1, buffer_mib: 1 });
        }
        let o = parse(&[
            ("adxl.RdmaTrafficClass", "8"),
            ("RdmaTrafficClass", "12"),
            ("adxl.RdmaServiceLevel", "2"),
        ])
        .unwrap();
        assert_eq!((o.rdma_traffic_class, o.rdma_service_level), (Some(12), Some(2)));
        // The ignored spelling is not even checked (the vendor never reads it).
        assert!(parse(&[("AutoConnect", "1"), ("adxl.AutoConnect", "bad")]).unwrap().auto_connect);
        // An empty short spelling wins too: the default.
        assert_eq!(
            parse(&[("RdmaTrafficClass", ""), ("adxl.RdmaTrafficClass", "8")]).unwrap().rdma_traffic_class,
            None
        );
    }

    #[test]
    fn fabric_memory_and_client_server_have_no_relay_pool() {
        let o = parse(&[("EnableUseFabricMem", "1")]).unwrap();
        assert_eq!((o.kind(), o.buffer_pool), (EngineKind::FabricMem, BufferPool::OFF));
        assert!(parse(&[("EnableUseFabricMem", "1"), ("adxl.BufferPool", "0:0")]).is_ok());
        let e = parse(&[("EnableUseFabricMem", "1"), ("adxl.BufferPool", "4:8")]).unwrap_err();
        assert!(e.message.contains("EnableUseFabricMem=1"), "{}", e.message);
        let o = parse(&[("EnableUseFabricMem", "0"), ("BufferPool", "4:8")]).unwrap();
        assert_eq!((o.kind(), o.fabric_mem), (EngineKind::Comm, false));
        assert!(!parse(&[("EnableUseFabricMem", "")]).unwrap().fabric_mem);
        for bad in ["2", "true", " 1", "-1"] {
            refused("EnableUseFabricMem", bad);
        }
        let v13 = [("adxl.LocalCommRes", r#"{"version":"1.3"}"#)];
        let o = parse(&v13).unwrap();
        assert_eq!((o.kind(), o.buffer_pool), (EngineKind::ClientServer, BufferPool::OFF));
        assert!(parse(&[v13[0], ("adxl.BufferPool", "4:8")]).unwrap_err().message.contains("1.3"));
        let grc = [("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":"roce:device"}"#)];
        assert_eq!(parse(&grc).unwrap().kind(), EngineKind::ClientServer);
        assert!(parse(&[grc[0], ("BufferPool", "1:1")]).is_err());
        // A rank table (1.0/1.2) keeps the ADXL engine and its pool.
        let o = parse(&[("LocalCommRes", r#"{"version":"1.2"}"#), grc[0]]).unwrap();
        assert_eq!((o.kind(), o.buffer_pool), (EngineKind::Comm, BufferPool::DEFAULT));
    }

    #[test]
    fn global_resource_config_reaches_the_settings() {
        let o = parse(&[(
            "GlobalResourceConfig",
            r#"{"connect_pool.thread_num":"8","connect_pool.task_queue_capacity":"512",
                "channel_pool.high_waterline":0.9,"channel_pool.low_waterline":0.5}"#,
        )])
        .unwrap();
        let s = Settings::resolve(o, table(&[])).unwrap();
        assert_eq!(s.connect_pool, ConnectPool { threads: 8, queue_capacity: 512 });
        assert_eq!(s.channel_pool, Some(ChannelPool { max_channels: 512, high_mark: 460, low_mark: 256 }));
        let s = Settings::resolve(Options::default(), table(&[])).unwrap();
        assert_eq!((s.connect_pool, s.channel_pool), (ConnectPool::DEFAULT, None));
        let e = parse(&[("GlobalResourceConfig", r#"{"connect_pool.thread_num":0}"#)]).unwrap_err();
        assert!(
            e.message.contains("connect_pool.thread_num") && e.message.contains("[1, 64]"),
            "{}",
            e.message
        );
        assert!(parse(&[("GlobalResourceConfig", "")]).unwrap().global_resource.is_none());
        refused("GlobalResourceConfig", "[]");
    }

    #[test]
    fn protocol_desc_picks_the_transport_unless_ours_is_set() {
        let grc = |d: &str| format!(r#"{{"comm_resource_config.protocol_desc":{d}}}"#);
        let transport = |d: &str, vars: &[(&str, &str)], option: Option<&str>| {
            let text = grc(d);
            let mut pairs = vec![("GlobalResourceConfig", text.as_str())];
            if let Some(t) = option {
                pairs.push(("adxl.Transport", t));
            }
            Settings::resolve(parse(&pairs).unwrap(), table(vars)).unwrap().transport
        };
        let network = if cfg!(feature = "ucx") { Transport::Ucx } else { Transport::Tcp };
        assert_eq!(transport(r#""hccs:device""#, &[], None), Transport::Shm);
        assert_eq!(transport(r#"["roce:device","roce:host"]"#, &[], None), network);
        assert_eq!(transport(r#"["roce:device","hccs:device"]"#, &[], None), Transport::Auto);
        assert_eq!(transport(r#""hccs:device""#, &[(TRANSPORT_ENV, "tcp")], None), Transport::Tcp);
        assert_eq!(transport(r#""hccs:device""#, &[(TRANSPORT_ENV, " ")], None), Transport::Shm);
        assert_eq!(transport(r#""roce:device""#, &[], Some("shm")), Transport::Shm);
    }

    #[test]
    fn rdma_settings_are_the_options_else_hccl_variables() {
        let s = Settings::resolve(Options::default(), table(&[])).unwrap();
        assert_eq!(s.rdma, Rdma::default());
        let vars = [(RDMA_TC_ENV, "104"), (RDMA_SL_ENV, "5")];
        let s = Settings::resolve(Options::default(), table(&vars)).unwrap();
        assert_eq!(s.rdma, Rdma { traffic_class: Some(104), service_level: Some(5) });
        let o = parse(&[("RdmaTrafficClass", "132"), ("RdmaServiceLevel", "4")]).unwrap();
        let s = Settings::resolve(o, table(&vars)).unwrap();
        assert_eq!(s.rdma, Rdma { traffic_class: Some(132), service_level: Some(4) });
        // UCX's own variables beat HCCL's (UCX reads them itself), not the options.
        let vars = [(RDMA_TC_ENV, "104"), (UCX_TC_ENV, "96"), (RDMA_SL_ENV, "5"), (UCX_SL_ENV, "1")];
        assert_eq!(Settings::resolve(Options::default(), table(&vars)).unwrap().rdma, Rdma::default());
        for bad in [(RDMA_TC_ENV, "130"), (RDMA_SL_ENV, "8")] {
            let e = Settings::resolve(Options::default(), table(&[bad])).unwrap_err();
            assert_eq!(e.status, ADXL_PARAM_INVALID);
            assert!(e.message.contains(bad.0), "{}", e.message);
        }
        assert!(Settings::resolve(Options::default(), table(&[(RDMA_TC_ENV, "")])).is_ok());
    }

    #[test]
    fn local_comm_res_path_is_read_unless_the_option_is_given() {
        let dir = std::env::temp_dir().join(format!("asl-opt-lcr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("res.json");
        std::fs::write(&file, r#"{"version":"1.3"}"#).unwrap();
        let grc = format!(r#"{{"local_comm_res_path":{:?}}}"#, file.to_str().unwrap());
        let s = Settings::resolve(parse(&[("GlobalResourceConfig", &grc)]).unwrap(), table(&[])).unwrap();
        assert!(s.options.local_comm_res.as_ref().unwrap().is_v13());
        assert_eq!(s.options.buffer_pool, BufferPool::OFF);
        // The file says 1.3, so a relay pool is refused, at Initialize.
        let o = parse(&[("GlobalResourceConfig", &grc), ("BufferPool", "4:8")]).unwrap();
        assert!(Settings::resolve(o, table(&[])).is_err());
        // The option wins; the file is not read.
        let o = parse(&[("GlobalResourceConfig", &grc), ("LocalCommRes", r#"{"version":"1.0"}"#)]).unwrap();
        let s = Settings::resolve(o, table(&[])).unwrap();
        assert_eq!(s.options.local_comm_res.unwrap().version.as_deref(), Some("1.0"));
        std::fs::write(&file, "not json").unwrap();
        let e = Settings::resolve(parse(&[("GlobalResourceConfig", &grc)]).unwrap(), table(&[])).unwrap_err();
        assert!(e.message.contains("local_comm_res_path") && e.message.contains("not JSON"), "{}", e.message);
        std::fs::remove_file(&file).unwrap();
        let e = Settings::resolve(parse(&[("GlobalResourceConfig", &grc)]).unwrap(), table(&[])).unwrap_err();
        assert!(e.message.contains("cannot be read"), "{}", e.message);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// docs/engine-options.md lists every key and every GlobalResourceConfig entry in its tables.
    #[test]
    fn the_options_page_lists_every_key_and_entry() {
        let page =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/engine-options.md")).unwrap();
        for key in KEYS {
            assert!(page.contains(&format!("| `{key}`")), "docs/engine-options.md has no row for {key}");
        }
        for (entry, _) in global_resource::ENTRIES {
            assert!(
                page.contains(&format!("| `{entry}` |")),
                "docs/engine-options.md has no row for {entry}"
            );
        }
    }

    /// Mooncake's maps (transfer_executor_base.cpp): every key it may send.
    #[test]
    fn mooncakes_option_maps_are_taken() {
        let o = parse(&[
            ("AutoConnect", "1"),
            ("EnableUseFabricMem", "1"),
            (
                "GlobalResourceConfig",
                r#"{"fabric_memory":{"max_capacity":"32"},"connect_pool.thread_num":"4"}"#,
            ),
            ("adxl.BufferPool", "0:0"),
            ("adxl.LocalCommRes", r#"{"version":"1.3"}"#),
            ("adxl.RdmaServiceLevel", "4"),
            ("adxl.RdmaTrafficClass", "132"),
        ])
        .unwrap();
        assert_eq!((o.kind(), o.auto_connect, o.buffer_pool), (EngineKind::FabricMem, true, BufferPool::OFF));
    }
}
