//! The option map of `Initialize`: validated as the vendor does, so a configuration that the
//! vendor refuses is refused here too, even where the value only tunes RDMA.
//!
//! Keys are accepted with or without the `adxl.` prefix (`BufferPool` is `adxl.BufferPool`).
//! An unknown key is `PARAM_INVALID`, as in current vendor releases. `adxl.Transport`
//! (`auto`, `shm`, `tcp`, `ucx`) is our extension: `ASCENDLESS_TRANSPORT` for one engine; so are
//! `adxl.Secret` and `adxl.RemoteAccess` (see [`crate::engine::access`]).

use crate::engine::access::{RemoteAccess, Secret};
use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};

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
    pub transport: Option<crate::config::Transport>,
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
                    use crate::config::Transport;
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
        assert_eq!(
            parse(&[("adxl.Transport", "tcp")]).unwrap().transport,
            Some(crate::config::Transport::Tcp)
        );
        assert_eq!(parse(&[("Transport", "SHM")]).unwrap().transport, Some(crate::config::Transport::Shm));
        assert!(parse(&[("adxl.Transport", "rdma")]).is_err());
        assert_eq!(
            parse(&[("adxl.Transport", "UCX")]).unwrap().transport,
            Some(crate::config::Transport::Ucx)
        );
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

    #[test]
    fn unknown_keys_are_refused() {
        refused("adxl.Whatever", "1");
        refused("", "1");
        refused("adxl.bufferpool", "4:8");
    }
}
