//! An HCCL rank table (the vendor's `hccl.json`, versions 1.0 and 1.2), read for what a rank
//! needs to reach the others: each rank's id and its device NIC address.
//!
//! The vendor's HCCL reaches rank r on the device NIC of its NPU: `device_ip`, at
//! `device_port` (1.2) or the NIC's default port. A machine without NPUs has no device NICs, so
//! here `device_ip:device_port` is where the rank's engine listens: an address of the rank's
//! host (two ranks on one host differ in `device_ip`, as 127.0.0.1 and 127.0.0.2, or in
//! `device_port`). What HCCL checks of the table is checked here too, with the field named:
//! `status` "completed", `server_count` equal to the servers listed, rank ids 0..n-1 once each.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;

/// The port of a device whose entry has no `device_port`: the one the vendor's rank-table
/// examples give the device NIC.
pub const DEFAULT_DEVICE_PORT: u16 = 16666;

/// A rank table that cannot be used, and why (the message names the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rank table: {0}")]
pub struct RankTableError(String);

fn bad(why: impl Into<String>) -> RankTableError {
    RankTableError(why.into())
}

/// One rank: where it is and what it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rank {
    pub rank_id: u32,
    pub server_id: String,
    pub device_id: String,
    pub address: SocketAddr,
}

impl Rank {
    /// The engine name of the rank: "ip:port", "[ipv6]:port".
    pub fn engine_name(&self) -> String {
        self.address.to_string()
    }
}

/// The ranks of a table, by rank id (index i is rank i).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankTable {
    ranks: Vec<Rank>,
}

/// A field that the vendor's tables write as a string of digits ("0") and some writers as a
/// number (0).
fn number(v: &Value, what: &str) -> Result<u64, RankTableError> {
    let n = match v {
        Value::String(s) => s.trim().parse::<u64>().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    };
    n.ok_or_else(|| bad(format!("{what} is {v}: a decimal number (\"0\")")))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl RankTable {
    pub fn parse(json: &str) -> Result<RankTable, RankTableError> {
        let root: Value = serde_json::from_str(json).map_err(|e| bad(format!("not JSON: {e}")))?;
        let root = root.as_object().ok_or_else(|| bad("the table is not a JSON object"))?;
        if let Some(status) = root.get("status") {
            if status.as_str() != Some("completed") {
                return Err(bad(format!("status is {status}, not \"completed\"")));
            }
        }
        let servers = root
            .get("server_list")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("server_list (an array of servers) is missing"))?;
        if let Some(count) = root.get("server_count") {
            let count = number(count, "server_count")?;
            if count != servers.len() as u64 {
                return Err(bad(format!(
                    "server_count is {count}, but server_list has {} servers",
                    servers.len()
                )));
            }
        }
        let mut ranks: Vec<Rank> = Vec::new();
        for (s, server) in servers.iter().enumerate() {
            let server_id = text(server.get("server_id").unwrap_or(&Value::Null));
            let devices = server
                .get("device")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(format!("server_list[{s}] has no device array")))?;
            for (d, device) in devices.iter().enumerate() {
                let at = format!("server_list[{s}].device[{d}]");
                let field = |name: &str| device.get(name).ok_or_else(|| bad(format!("{at} has no {name}")));
                let rank = number(field("rank_id")?, &format!("{at}.rank_id"))?;
                let rank_id =
                    u32::try_from(rank).map_err(|_| bad(format!("{at}.rank_id {rank} is too large")))?;
                let ip_text = text(field("device_ip")?);
                let ip: IpAddr = ip_text
                    .parse()
                    .map_err(|_| bad(format!("{at}.device_ip \"{ip_text}\" is not an IP address")))?;
                let port = match device.get("device_port") {
                    None => DEFAULT_DEVICE_PORT,
                    Some(p) => match number(p, &format!("{at}.device_port"))? {
                        n @ 1..=65535 => n as u16,
                        n => return Err(bad(format!("{at}.device_port {n} is not a port (1 to 65535)"))),
                    },
                };
                ranks.push(Rank {
                    rank_id,
                    server_id: server_id.clone(),
                    device_id: text(device.get("device_id").unwrap_or(&Value::Null)),
                    address: SocketAddr::new(ip, port),
                });
            }
        }
        if ranks.is_empty() {
            return Err(bad("no devices are listed"));
        }
        ranks.sort_by_key(|r| r.rank_id);
        for (i, r) in ranks.iter().enumerate() {
            if r.rank_id as usize != i {
                let why = if i > 0 && ranks[i - 1].rank_id == r.rank_id {
                    "is given twice"
                } else {
                    "leaves a gap"
                };
                return Err(bad(format!(
                    "rank_id {} {why}: the {} ranks must be numbered 0 to {}",
                    r.rank_id,
                    ranks.len(),
                    ranks.len() - 1
                )));
            }
        }
        for (i, r) in ranks.iter().enumerate() {
            if let Some(other) = ranks[..i].iter().find(|o| o.address == r.address) {
                return Err(bad(format!(
                    "ranks {} and {} are both at {}: give each its own device_ip or device_port",
                    other.rank_id, r.rank_id, r.address
                )));
            }
        }
        Ok(RankTable { ranks })
    }

    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    pub fn rank(&self, rank_id: u32) -> Option<&Rank> {
        self.ranks.get(rank_id as usize)
    }

    pub fn ranks(&self) -> &[Rank] {
        &self.ranks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table as vLLM-Ascend's LLM-DataDist connector builds it for two devices of one server.
    const ONE_SERVER: &str = r#"{"version": "1.2", "server_count": "1", "status": "completed",
        "server_list": [{"device": [
            {"device_id": "0", "device_ip": "127.0.0.1", "rank_id": "0"},
            {"device_id": "1", "device_ip": "127.0.0.2", "rank_id": "1"}],
          "server_id": "10.0.0.5"}]}"#;

    #[test]
    fn ranks_of_a_connector_table_are_at_their_device_ip_and_the_default_port() {
        let t = RankTable::parse(ONE_SERVER).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.rank(0).unwrap().engine_name(), "127.0.0.1:16666");
        assert_eq!(t.rank(1).unwrap().engine_name(), "127.0.0.2:16666");
        assert_eq!(t.rank(1).unwrap().server_id, "10.0.0.5");
        assert_eq!(t.rank(1).unwrap().device_id, "1");
        assert!(t.rank(2).is_none());
    }

    #[test]
    fn device_port_numbers_and_ipv6_and_ranks_across_servers_in_any_order() {
        let t = RankTable::parse(
            r#"{"server_count": 2, "server_list": [
                {"server_id": "b", "device": [{"device_ip": "::1", "device_port": 17001, "rank_id": 1}]},
                {"server_id": "a", "device": [{"device_ip": "127.0.0.1", "device_port": "17000", "rank_id": "0"}]}]}"#,
        )
        .unwrap();
        assert_eq!(t.rank(0).unwrap().engine_name(), "127.0.0.1:17000");
        assert_eq!(t.rank(1).unwrap().engine_name(), "[::1]:17001");
        assert_eq!(t.rank(1).unwrap().server_id, "b");
    }

    fn error_of(json: &str) -> String {
        RankTable::parse(json).unwrap_err().to_string()
    }

    #[test]
    fn what_hccl_refuses_is_refused_with_the_field_named() {
        let dev = |ip: &str, rank: &str| format!(r#"{{"device_ip": "{ip}", "rank_id": "{rank}"}}"#);
        let table =
            |devices: &[String]| format!(r#"{{"server_list": [{{"device": [{}]}}]}}"#, devices.join(","));
        assert!(error_of("{").contains("not JSON"));
        assert!(error_of("[]").contains("not a JSON object"));
        assert!(error_of(r#"{"status": "initializing", "server_list": []}"#).contains("status"));
        assert!(error_of(r#"{"status": "completed"}"#).contains("server_list"));
        assert!(error_of(r#"{"server_list": []}"#).contains("no devices"));
        assert!(
            error_of(r#"{"server_count": "2", "server_list": [{"device": []}]}"#)
                .contains("server_count is 2")
        );
        assert!(
            error_of(r#"{"server_list": [{"server_id": "x"}]}"#).contains("server_list[0] has no device")
        );
        assert!(
            error_of(&table(&[dev("1.2.3.4", "0"), dev("1.2.3.5", "0")]))
                .contains("rank_id 0 is given twice")
        );
        assert!(
            error_of(&table(&[dev("1.2.3.4", "0"), dev("1.2.3.5", "2")])).contains("rank_id 2 leaves a gap")
        );
        assert!(error_of(&table(&[dev("eth0", "0")])).contains("device_ip \"eth0\""));
        assert!(error_of(&table(&[dev("1.2.3.4", "x")])).contains("rank_id is \"x\""));
        assert!(
            error_of(&table(&[dev("1.2.3.4", "0"), dev("1.2.3.4", "1")]))
                .contains("ranks 0 and 1 are both at")
        );
        assert!(
            error_of(r#"{"server_list": [{"device": [{"rank_id": "0"}]}]}"#).contains("has no device_ip")
        );
        assert!(
            error_of(r#"{"server_list": [{"device": [{"device_ip": "1.2.3.4", "device_port": "0", "rank_id": "0"}]}]}"#)
                .contains("device_port 0 is not a port")
        );
    }
}
