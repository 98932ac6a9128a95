//! `HcclRootInfo`: how ranks that know nothing of each other but one blob (rank 0's, passed
//! out of band) find each other.
//!
//! `HcclGetRootInfo` starts a root: an engine of its own that listens, with a fresh random
//! secret, and a thread that waits for the ranks. The blob names the root's engine, the secret
//! and an id. Each rank starts its engine with that secret (so only holders of the blob can
//! talk to any rank of the communicator), connects to the root and sends `hccl.join` with its
//! rank, the rank count and its own engine's name; once every rank has joined, the root sends
//! each one the table of names (`hccl.table`, in parts that fit a notify) and stops. A root
//! not joined by every rank within `HCCL_CONNECT_TIMEOUT` stops too.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{Engine, MAX_NOTIFY_LEN, Notified};
use crate::error::engine_status::ADXL_TIMEOUT;
use crate::error::hccl_codes::{HCCL_E_INTERNAL, HCCL_E_PARA, HCCL_E_TIMEOUT, HcclError};
use crate::hccl::endpoint::ms_left;
use crate::sync::spawn_named;

const TARGET: &str = "ascendless::hccl";
const MAGIC: &str = "ascendless-hccl-root";
const JOIN: &str = "hccl.join";
const TABLE: &str = "hccl.table";
const REFUSED: &str = "hccl.refused";

/// `sizeof(HcclRootInfo)`: `char internal[HCCL_ROOT_INFO_BYTES]`.
pub const ROOT_INFO_BYTES: usize = 4108;

/// What the blob says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootInfo {
    /// The root's engine, "ip:port".
    pub root: String,
    /// The secret every rank's engine authenticates with (32 hex digits).
    pub secret: String,
    /// Names the communicator (its default name).
    pub id: u64,
}

impl RootInfo {
    pub fn encode(&self) -> [u8; ROOT_INFO_BYTES] {
        let text = format!("{MAGIC} 1 {} {} {:016x}", self.root, self.secret, self.id);
        let mut out = [0u8; ROOT_INFO_BYTES];
        out[..text.len()].copy_from_slice(text.as_bytes());
        out
    }

    pub fn decode(blob: &[u8; ROOT_INFO_BYTES]) -> Result<RootInfo, HcclError> {
        let end = blob.iter().position(|&b| b == 0).unwrap_or(blob.len());
        let bad = || HcclError::para("the root info is not one HcclGetRootInfo made (with ascendless)");
        let text = std::str::from_utf8(&blob[..end]).map_err(|_| bad())?;
        let w: Vec<&str> = text.split(' ').collect();
        if w.len() != 5 || w[0] != MAGIC || w[1] != "1" || w[3].len() != 32 {
            return Err(bad());
        }
        let id = u64::from_str_radix(w[4], 16).map_err(|_| bad())?;
        Ok(RootInfo { root: w[2].to_owned(), secret: w[3].to_owned(), id })
    }
}

/// Starts the root on `engine` (initialized, listening with the info's secret).
pub fn serve(engine: Arc<Engine>, timeout: Duration) -> Result<(), HcclError> {
    spawn_named("hccl-root", move || {
        let deadline = Instant::now() + timeout;
        match collect(&engine, deadline) {
            Ok(names) => send_tables(&engine, &names, deadline),
            Err(e) => log::warn!(target: TARGET, "HCCL root: {e}"),
        }
        engine.finalize();
    })
    .map(|_| ())
    .map_err(|e| HcclError::new(HCCL_E_INTERNAL, format!("cannot start the HCCL root thread: {e}")))
}

/// The names of every rank, by rank, once all have joined.
fn collect(engine: &Engine, deadline: Instant) -> Result<Vec<String>, HcclError> {
    let mut joined: BTreeMap<u32, String> = BTreeMap::new();
    let mut size: Option<u32> = None;
    while Instant::now() < deadline {
        for n in engine
            .wait_notifies(Duration::from_millis(100))
            .map_err(|e| HcclError::new(HCCL_E_INTERNAL, e.message))?
        {
            if n.name != JOIN {
                continue;
            }
            let w: Vec<&str> = n.msg.split(' ').collect();
            let parsed = match w.as_slice() {
                [rank, count, name] => {
                    rank.parse::<u32>().ok().zip(count.parse::<u32>().ok()).map(|(r, c)| (r, c, *name))
                }
                _ => None,
            };
            let Some((rank, count, name)) = parsed else { continue };
            let refuse = if *size.get_or_insert(count) != count {
                Some(format!("rank {rank} says {count} ranks, an earlier rank said {}", size.unwrap_or(0)))
            } else if joined.contains_key(&rank) {
                Some(format!("rank {rank} joined twice"))
            } else {
                None
            };
            if let Some(why) = refuse {
                log::warn!(target: TARGET, "HCCL root: {why}");
                if engine.connect(name, ms_left(deadline)).is_ok() {
                    let _ = engine.send_notify(name, REFUSED, &why, ms_left(deadline));
                }
                continue;
            }
            joined.insert(rank, name.to_owned());
        }
        if size.is_some_and(|s| joined.len() == s as usize) {
            return Ok(joined.into_values().collect());
        }
    }
    Err(HcclError::new(
        HCCL_E_TIMEOUT,
        format!("{} of {} ranks joined within HCCL_CONNECT_TIMEOUT", joined.len(), size.unwrap_or(0)),
    ))
}

/// The table in parts that each fit a notify: "part parts name name ...".
fn table_parts(names: &[String]) -> Vec<String> {
    let mut parts: Vec<Vec<&str>> = vec![Vec::new()];
    let mut len = 0;
    for n in names {
        if len + n.len() + 1 > MAX_NOTIFY_LEN - 24 {
            parts.push(Vec::new());
            len = 0;
        }
        len += n.len() + 1;
        parts.last_mut().expect("one part at least").push(n);
    }
    let count = parts.len();
    parts.iter().enumerate().map(|(i, p)| format!("{i} {count} {}", p.join(" "))).collect()
}

fn send_tables(engine: &Engine, names: &[String], deadline: Instant) {
    let parts = table_parts(names);
    for name in names {
        let sent = engine.connect(name, ms_left(deadline)).and_then(|()| {
            parts.iter().try_for_each(|p| engine.send_notify(name, TABLE, p, ms_left(deadline)))
        });
        if let Err(e) = sent {
            log::warn!(target: TARGET, "HCCL root: cannot send the table to {name}: {}", e.message);
        }
    }
}

/// Joins through the root: the names of every rank, and the messages that came for this rank
/// while it waited (peers that had the table first may already talk to it).
pub fn join(
    engine: &Engine,
    info: &RootInfo,
    rank: u32,
    size: u32,
    own: &str,
    deadline: Instant,
) -> Result<(Vec<String>, Vec<Notified>), HcclError> {
    let unreachable = |e: crate::error::EngineError| {
        HcclError::new(
            crate::error::hccl_codes::HCCL_E_TCP_CONNECT,
            format!("cannot reach the HCCL root {}: {}", info.root, e.message),
        )
    };
    loop {
        match engine.connect(&info.root, ms_left(deadline)) {
            Ok(()) => break,
            Err(e) if Instant::now() >= deadline => return Err(unreachable(e)),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    // The root may read this join, complete, and stop before it answers (the last rank's join
    // completes the table): a connection it closed is no failure here, only a table that does
    // not come by the deadline is. A root that is not there fails the connect above.
    if let Err(e) = engine.send_notify(&info.root, JOIN, &format!("{rank} {size} {own}"), ms_left(deadline)) {
        if e.status == ADXL_TIMEOUT {
            return Err(unreachable(e));
        }
        log::debug!(target: TARGET, "the HCCL root closed the connection after rank {rank}'s join: {}", e.message);
    }
    let _ = engine.disconnect(&info.root, 1000);
    let mut parts: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut early = Vec::new();
    let mut complete = false;
    while Instant::now() < deadline {
        for n in engine
            .wait_notifies(Duration::from_millis(100))
            .map_err(|e| HcclError::new(HCCL_E_INTERNAL, e.message))?
        {
            match n.name.as_str() {
                REFUSED => {
                    return Err(HcclError::new(
                        HCCL_E_PARA,
                        format!("the HCCL root refused rank {rank}: {}", n.msg),
                    ));
                }
                TABLE => {
                    let mut w = n.msg.split(' ');
                    let (Some(i), Some(count)) = (
                        w.next().and_then(|x| x.parse().ok()),
                        w.next().and_then(|x| x.parse::<usize>().ok()),
                    ) else {
                        continue;
                    };
                    parts.insert(i, w.map(str::to_owned).collect());
                    complete |= parts.len() == count;
                }
                _ => early.push(n),
            }
        }
        // Only once the whole batch is taken: peers' messages may have come with the table.
        if complete {
            let names: Vec<String> = parts.into_values().flatten().collect();
            if names.len() != size as usize || names[rank as usize] != own {
                return Err(HcclError::new(
                    HCCL_E_INTERNAL,
                    "the HCCL root sent a table that does not match",
                ));
            }
            return Ok((names, early));
        }
    }
    Err(HcclError::new(
        HCCL_E_TIMEOUT,
        format!("rank {rank}: not every one of {size} ranks joined within HCCL_CONNECT_TIMEOUT"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_round_trips_and_foreign_blobs_are_para() {
        let info = RootInfo { root: "10.0.0.1:4000".into(), secret: "ab".repeat(16), id: 0x1234 };
        assert_eq!(RootInfo::decode(&info.encode()), Ok(info));
        let mut other = [0u8; ROOT_INFO_BYTES];
        other[..5].copy_from_slice(b"hello");
        assert_eq!(RootInfo::decode(&other).unwrap_err().code, HCCL_E_PARA);
        assert_eq!(RootInfo::decode(&[0u8; ROOT_INFO_BYTES]).unwrap_err().code, HCCL_E_PARA);
    }

    #[test]
    fn table_parts_fit_a_notify_and_keep_the_order() {
        let names: Vec<String> = (0..200).map(|i| format!("192.168.100.{}:{}", i % 250, 40000 + i)).collect();
        let parts = table_parts(&names);
        assert!(parts.len() > 1);
        let mut back = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            assert!(p.len() <= MAX_NOTIFY_LEN);
            let w: Vec<&str> = p.split(' ').collect();
            assert_eq!(w[0], i.to_string());
            assert_eq!(w[1], parts.len().to_string());
            back.extend(w[2..].iter().map(|s| s.to_string()));
        }
        assert_eq!(back, names);
    }
}
