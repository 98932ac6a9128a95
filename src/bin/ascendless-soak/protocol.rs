//! The lines the coordinator and its workers exchange, one message a line:
//!
//! ```text
//! worker → READY <pid> <engine> <region address> <notify key>
//! coord  → PEERS <index>,<pid>,<engine>,<region address>,<notify key> ...   (every worker)
//! worker → ALLOWED                       (the others' pids are whitelisted on its notify)
//! coord  → START                         (import the ring, connect, transfer)
//! worker → STAT <counters>               (every interval)
//! coord  → STOP
//! worker → SHADOW <peer index> <slot> <checksum|unknown> ...  then STOPPED
//! coord  → CHECK                         (every worker has stopped: slots are final)
//! worker → HOLD <slot> <checksum> ...    PATHS <bytes by shared memory> <bytes by TCP>
//!                                        then DONE <counters>, and it exits
//! ```

use std::fmt;

/// One worker as the others need to know it.
#[derive(Debug, Clone, PartialEq)]
pub struct Peer {
    pub index: usize,
    pub pid: u32,
    pub engine: String,
    pub region: usize,
    pub key: String,
}

impl Peer {
    /// Reads a READY line of worker `index`.
    pub fn from_ready(index: usize, line: &str) -> Result<Peer, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["READY", pid, engine, region, key] => Ok(Peer {
                index,
                pid: pid.parse().map_err(|_| format!("bad pid in {line:?}"))?,
                engine: (*engine).to_owned(),
                region: parse_addr(region).ok_or_else(|| format!("bad address in {line:?}"))?,
                key: (*key).to_owned(),
            }),
            _ => Err(format!("worker {index} said {line:?}, not READY")),
        }
    }

    /// The PEERS line listing `peers`.
    pub fn line(peers: &[Peer]) -> String {
        let items: Vec<String> = peers
            .iter()
            .map(|p| format!("{},{},{},{:#x},{}", p.index, p.pid, p.engine, p.region, p.key))
            .collect();
        format!("PEERS {}", items.join(" "))
    }

    /// Reads a PEERS line.
    pub fn parse_all(line: &str) -> Result<Vec<Peer>, String> {
        let rest = line.strip_prefix("PEERS ").ok_or_else(|| format!("expected PEERS, got {line:?}"))?;
        rest.split_whitespace()
            .map(|item| {
                let f: Vec<&str> = item.split(',').collect();
                let bad = || format!("bad peer {item:?}");
                match f.as_slice() {
                    [index, pid, engine, region, key] => Ok(Peer {
                        index: index.parse().map_err(|_| bad())?,
                        pid: pid.parse().map_err(|_| bad())?,
                        engine: (*engine).to_owned(),
                        region: parse_addr(region).ok_or_else(bad)?,
                        key: (*key).to_owned(),
                    }),
                    _ => Err(bad()),
                }
            })
            .collect()
    }
}

fn parse_addr(s: &str) -> Option<usize> {
    usize::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// A worker's counters as a STAT or DONE line carries them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub transfers: u64,
    pub bytes: u64,
    /// Completed rounds of the IPC notify ring.
    pub notifies: u64,
    /// ADXL notifies sent to peers and received from them.
    pub adxl_sent: u64,
    pub adxl_received: u64,
    pub errors: u64,
    pub corrupt: u64,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self;
        write!(
            f,
            "{} {} {} {} {} {} {}",
            s.transfers, s.bytes, s.notifies, s.adxl_sent, s.adxl_received, s.errors, s.corrupt
        )
    }
}

impl Stats {
    /// Reads the counters after a STAT or DONE word.
    pub fn parse(text: &str) -> Option<Stats> {
        let v: Vec<u64> = text.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
        match v.as_slice() {
            &[transfers, bytes, notifies, adxl_sent, adxl_received, errors, corrupt] => {
                Some(Stats { transfers, bytes, notifies, adxl_sent, adxl_received, errors, corrupt })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_and_stats_survive_their_lines() {
        let p = Peer::from_ready(2, "READY 77 127.0.0.1:4000 0x7f0012340000 ABCdef_1").unwrap();
        assert_eq!(p.region, 0x7f00_1234_0000);
        let q = Peer { index: 3, pid: 78, ..p.clone() };
        assert_eq!(Peer::parse_all(&Peer::line(&[p.clone(), q.clone()])).unwrap(), vec![p, q]);
        assert!(Peer::from_ready(0, "READY 1 x").is_err());
        assert!(Peer::parse_all("PEERS 1,2,3").is_err());
        let s = Stats {
            transfers: 1,
            bytes: 2,
            notifies: 3,
            adxl_sent: 4,
            adxl_received: 5,
            errors: 6,
            corrupt: 7,
        };
        assert_eq!(Stats::parse(&s.to_string()), Some(s));
        assert_eq!(Stats::parse("1 2 3"), None);
    }
}
