//! The heartbeat of an engine with AutoConnect: every interval each link gets a PING on one
//! of its idle connections (a link with none idle is busy, so alive), answered within the
//! interval. A connection that ends or resets (the peer died) drops the link at once; a peer
//! that misses the configured number of answers in a row is dropped too. A dropped link is
//! closed (its requests in flight fail, reported NOT_CONNECTED) and the next transfer or
//! notify connects again.
//!
//! It needs only the links service, and holds it weakly: it ends when the engine finalizes
//! (the links are closed) or goes away.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::engine::links::Links;
use crate::engine::path::tcp;
use crate::logging::TARGET;

/// Runs the heartbeat until the links are closed or dropped: a PING every `interval`, and a
/// peer that misses `allowed` answers in a row is dropped (both from the engine's settings).
pub fn run(links: &Weak<Links>, interval: Duration, allowed: u32) {
    let mut missed: HashMap<String, u32> = HashMap::new();
    loop {
        let start = Instant::now();
        while start.elapsed() < interval {
            std::thread::sleep((interval - start.elapsed()).min(Duration::from_millis(50)));
            match links.upgrade() {
                Some(l) if !l.is_closed() => {}
                _ => return,
            }
        }
        let Some(links) = links.upgrade() else { return };
        let all: Vec<(String, Arc<crate::engine::conn::link::Link>)> = links.all();
        missed.retain(|k, _| all.iter().any(|(n, _)| n == k));
        for (name, link) in all {
            let dead = link.is_broken()
                || match tcp::ping(&link, Instant::now() + interval) {
                    Ok(()) => {
                        missed.remove(&name);
                        false
                    }
                    Err(true) => true,
                    Err(false) => {
                        let m = missed.entry(name.clone()).or_default();
                        *m += 1;
                        *m >= allowed
                    }
                };
            if dead {
                missed.remove(&name);
                links.remove_if_current(&name, &link);
                log::debug!(target: TARGET, "heartbeat: {name} is gone, its link is dropped");
                link.close();
            }
        }
    }
}
