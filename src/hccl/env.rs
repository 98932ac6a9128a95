//! The variables the vendor's HCCL reads that have a meaning here, each read where a
//! communicator starts (never while an operation runs). Out-of-range values are logged and the
//! default used, as the vendor does.

use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::time::Duration;

const TARGET: &str = "ascendless::hccl";

/// What `HcclCommConfig` sets that has a meaning here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `hcclBufferSize`, in MiB: the staging memory of reductions (else `HCCL_BUFFSIZE`).
    pub buffer_mib: Option<u32>,
    /// `hcclCommName` (else one made from the root info or the rank table).
    pub name: Option<String>,
}

/// Everything a communicator takes from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// `HCCL_CONNECT_TIMEOUT` (seconds, 120, 1 to 7200): how long init waits for the others.
    pub connect_timeout: Duration,
    /// `HCCL_EXEC_TIMEOUT` (seconds, 1836, 0 to 17340; 0 is the longest): how long one
    /// operation waits for a peer.
    pub exec_timeout: Duration,
    /// `HCCL_BUFFSIZE` (MiB, 200, at least 1): the staging memory of reductions.
    pub buffer_bytes: usize,
    /// `HCCL_IF_IP`: the address this rank's engine listens on (else the host's address on its
    /// default route, else loopback).
    pub if_ip: IpAddr,
}

fn number(var: &impl Fn(&str) -> Option<String>, name: &str, default: u64, min: u64, max: u64) -> u64 {
    let Some(text) = var(name) else { return default };
    match text.trim().parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => v,
        _ => {
            log::warn!(target: TARGET, "{name}={text:?} is not a number from {min} to {max}; using {default}");
            default
        }
    }
}

/// The address other hosts reach this one at: the source address of the default route (no
/// packet is sent: connecting a UDP socket only picks the route).
fn default_route_ip() -> Option<IpAddr> {
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    s.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    Some(s.local_addr().ok()?.ip()).filter(|ip| !ip.is_unspecified())
}

impl Env {
    /// These settings with what a communicator's `HcclCommConfig` sets instead.
    pub fn with(&self, config: &Config) -> Env {
        let mut e = self.clone();
        if let Some(mib) = config.buffer_mib.filter(|&m| m > 0) {
            e.buffer_bytes = (mib as usize) << 20;
        }
        e
    }

    pub fn from_process() -> Env {
        Env::from_vars(|name| std::env::var(name).ok())
    }

    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Env {
        let connect = number(&var, "HCCL_CONNECT_TIMEOUT", 120, 1, 7200);
        let exec = match number(&var, "HCCL_EXEC_TIMEOUT", 1836, 0, 17340) {
            0 => 17340,
            s => s,
        };
        let buffer_mib = number(&var, "HCCL_BUFFSIZE", 200, 1, 1 << 20);
        let if_ip = match var("HCCL_IF_IP") {
            Some(text) => text.trim().parse::<IpAddr>().unwrap_or_else(|_| {
                log::warn!(target: TARGET, "HCCL_IF_IP={text:?} is not an IP address; using loopback");
                IpAddr::V4(Ipv4Addr::LOCALHOST)
            }),
            None => default_route_ip().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        };
        Env {
            connect_timeout: Duration::from_secs(connect),
            exec_timeout: Duration::from_secs(exec),
            buffer_bytes: (buffer_mib as usize) << 20,
            if_ip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_ranges_and_zero_exec_timeout() {
        let none = Env::from_vars(|_| None);
        assert_eq!(none.connect_timeout, Duration::from_secs(120));
        assert_eq!(none.exec_timeout, Duration::from_secs(1836));
        assert_eq!(none.buffer_bytes, 200 << 20);
        let set = |pairs: &'static [(&'static str, &'static str)]| {
            Env::from_vars(move |n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()))
        };
        let e = set(&[
            ("HCCL_CONNECT_TIMEOUT", "5"),
            ("HCCL_EXEC_TIMEOUT", "0"),
            ("HCCL_BUFFSIZE", "1"),
            ("HCCL_IF_IP", "10.1.2.3"),
        ]);
        assert_eq!(e.connect_timeout, Duration::from_secs(5));
        assert_eq!(e.exec_timeout, Duration::from_secs(17340));
        assert_eq!(e.buffer_bytes, 1 << 20);
        assert_eq!(e.if_ip, "10.1.2.3".parse::<IpAddr>().unwrap());
        let configured = e.with(&Config { buffer_mib: Some(3), name: None });
        assert_eq!(configured.buffer_bytes, 3 << 20);
        assert_eq!(e.with(&Config::default()), e);
        let bad = set(&[("HCCL_CONNECT_TIMEOUT", "0"), ("HCCL_EXEC_TIMEOUT", "x")]);
        assert_eq!(bad.connect_timeout, Duration::from_secs(120));
        assert_eq!(bad.exec_timeout, Duration::from_secs(1836));
    }
}
