//! Engine names: `ip`, `ip:port`, `[ipv6]`, `[ipv6]:port`.
//!
//! The name is the engine's identity (a peer connects to exactly the string the engine was
//! initialised with) and its address: with a port > 0 the engine listens there. A bare IPv6
//! address without brackets is accepted as an address without a port, since a trailing
//! `:digits` would be ambiguous; everything else must be one of the four forms.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};

/// A parsed engine name; `text` is the exact string it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineName {
    pub text: String,
    pub ip: IpAddr,
    /// `None` when the name has no port; `Some(0)` parses but does not listen.
    pub port: Option<u16>,
}

impl EngineName {
    /// Parses `text`; anything but the four forms is `PARAM_INVALID` with the reason.
    pub fn parse(text: &str) -> EngineResult<EngineName> {
        let bad = |why: &str| EngineError::new(ADXL_PARAM_INVALID, format!("engine name {text:?}: {why}"));
        if text.is_empty() {
            return Err(bad("is empty"));
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']').ok_or_else(|| bad("has no closing ']'"))?;
            let ip: Ipv6Addr = inside.parse().map_err(|_| bad("is not an IPv6 address in brackets"))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad("expected ':port' after ']'"))?),
            };
            (IpAddr::V6(ip), port)
        } else if let Ok(v6) = text.parse::<Ipv6Addr>() {
            (IpAddr::V6(v6), None)
        } else {
            let (host, port) = match text.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (text, None),
            };
            (host.parse::<std::net::Ipv4Addr>().map_err(|_| bad("is not an IPv4 address"))?.into(), port)
        };
        let port = match port {
            None => None,
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                Some(p.parse::<u16>().map_err(|_| bad("port is above 65535"))?)
            }
            Some(_) => return Err(bad("port is not a number")),
        };
        Ok(EngineName { text: text.to_owned(), ip: host, port })
    }

    /// The address to listen on, for names with a port > 0.
    pub fn listen_addr(&self) -> Option<SocketAddr> {
        self.port.filter(|&p| p > 0).map(|p| SocketAddr::new(self.ip, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_forms_parse() {
        let n = EngineName::parse("127.0.0.1").unwrap();
        assert_eq!((n.ip.to_string().as_str(), n.port, n.listen_addr()), ("127.0.0.1", None, None));
        let n = EngineName::parse("10.0.0.2:26000").unwrap();
        assert_eq!(n.listen_addr().unwrap().to_string(), "10.0.0.2:26000");
        let n = EngineName::parse("[::1]").unwrap();
        assert_eq!((n.ip, n.port), ("::1".parse::<IpAddr>().unwrap(), None));
        let n = EngineName::parse("[::1]:65535").unwrap();
        assert_eq!(n.listen_addr().unwrap().to_string(), "[::1]:65535");
        assert_eq!(EngineName::parse("fe80::1").unwrap().port, None);
        assert_eq!(EngineName::parse("1.2.3.4:0").unwrap().listen_addr(), None);
        assert_eq!(EngineName::parse("1.2.3.4:0").unwrap().text, "1.2.3.4:0");
    }

    #[test]
    fn anything_else_is_param_invalid() {
        for bad in [
            "",
            "localhost",
            "1.2.3",
            "1.2.3.256",
            "1.2.3.4:",
            "1.2.3.4:65536",
            "1.2.3.4:-1",
            "1.2.3.4:+5",
            "1.2.3.4:80:1",
            "[::1",
            "[::1]x",
            "[::1]:",
            "[1.2.3.4]",
            "[::1]:99999",
            " 1.2.3.4",
            "1.2.3.4:8 ",
        ] {
            let e = EngineName::parse(bad).unwrap_err();
            assert_eq!(e.status, ADXL_PARAM_INVALID, "{bad:?}");
            assert!(e.message.contains("engine name"), "{}", e.message);
        }
    }
}
