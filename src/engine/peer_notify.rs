//! Notifies: short named messages an engine sends a peer (SendNotify) and the peer collects
//! (GetNotifies).
//!
//! The receiving engine queues each NOTIFY it serves, at most [`MAX_NOTIFIES`] per sending
//! engine (by name) and [`MAX_NOTIFIES_TOTAL`] in all (a peer names itself in its HELLO, so a peer
//! that changes names would otherwise grow the queue without bound); one more is answered
//! RESOURCE_EXHAUSTED, which the sender's SendNotify returns. GetNotifies takes everything
//! queued, from every peer, in arrival order.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::engine::limits::{MAX_NOTIFIES, MAX_NOTIFIES_TOTAL};
use crate::error::engine_status::ADXL_RESOURCE_EXHAUSTED;
use crate::sync::lock;

/// The peer-notifies service: the queue of notifies received, behind its own lock.
#[derive(Default)]
pub struct PeerNotifies {
    queue: Mutex<Queue>,
    /// Woken at every notify queued, for [`PeerNotifies::wait_take`].
    arrived: Condvar,
}

impl PeerNotifies {
    /// Queues a notify from `peer`, as [`Queue::push`].
    pub fn push(&self, peer: &str, n: Notified) -> u32 {
        let status = lock(&self.queue).push(peer, n);
        self.arrived.notify_all();
        status
    }

    /// As [`PeerNotifies::take`], first waiting up to `timeout` for something to be queued:
    /// for a face that reacts to notifies (HCCL) without polling for them.
    pub fn wait_take(&self, timeout: Duration) -> Vec<Notified> {
        let deadline = Instant::now() + timeout;
        let mut q = lock(&self.queue);
        while q.list.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            q = self.arrived.wait_timeout(q, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        q.take()
    }

    /// Everything queued, oldest first (GetNotifies).
    pub fn take(&self) -> Vec<Notified> {
        lock(&self.queue).take()
    }
}

/// Longest name or message of a notify, in bytes.
pub const MAX_LEN: usize = crate::engine::wire::MAX_TEXT;

/// One notify received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notified {
    pub name: String,
    pub msg: String,
}

#[derive(Default)]
pub struct Queue {
    list: Vec<(String, Notified)>,
    per_peer: HashMap<String, usize>,
}

impl Queue {
    /// Queues a notify from `peer`: 0, or RESOURCE_EXHAUSTED when `peer` has [`MAX_NOTIFIES`]
    /// or all peers have [`MAX_NOTIFIES_TOTAL`].
    pub fn push(&mut self, peer: &str, n: Notified) -> u32 {
        if self.list.len() >= MAX_NOTIFIES_TOTAL {
            return ADXL_RESOURCE_EXHAUSTED;
        }
        let count = self.per_peer.entry(peer.to_owned()).or_default();
        if *count >= MAX_NOTIFIES {
            return ADXL_RESOURCE_EXHAUSTED;
        }
        *count += 1;
        self.list.push((peer.to_owned(), n));
        0
    }

    /// Everything queued, oldest first; the queue is left empty.
    pub fn take(&mut self) -> Vec<Notified> {
        self.per_peer.clear();
        self.list.drain(..).map(|(_, n)| n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_max_queued_per_peer_and_take_clears() {
        let mut q = Queue::default();
        let n = |i: usize| Notified { name: format!("n{i}"), msg: String::new() };
        for i in 0..MAX_NOTIFIES {
            assert_eq!(q.push("a", n(i)), 0);
        }
        assert_eq!(q.push("a", n(0)), ADXL_RESOURCE_EXHAUSTED);
        assert_eq!(q.push("b", n(1)), 0);
        let all = q.take();
        assert_eq!(all.len(), MAX_NOTIFIES + 1);
        assert_eq!(all[0].name, "n0");
        assert!(q.take().is_empty());
        assert_eq!(q.push("a", n(0)), 0);
    }

    #[test]
    fn at_most_max_total_from_all_peers_together() {
        let mut q = Queue::default();
        let n = Notified { name: "n".into(), msg: String::new() };
        for i in 0..MAX_NOTIFIES_TOTAL {
            assert_eq!(q.push(&format!("peer{}", i / MAX_NOTIFIES), n.clone()), 0);
        }
        assert_eq!(q.push("a new name", n.clone()), ADXL_RESOURCE_EXHAUSTED);
        assert_eq!(q.take().len(), MAX_NOTIFIES_TOTAL);
        assert_eq!(q.push("a new name", n), 0);
    }
}
