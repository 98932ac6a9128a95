//! The links service: the links this engine made with Connect, by the remote engine's name,
//! behind their own lock. Connect, Disconnect, transfers, announcements and the heartbeat use
//! it, and need nothing else of the engine's state for it.
//!
//! # Idle-link eviction
//! With `channel_pool.*` (HIXL's GlobalResourceConfig), installing a link that brings the count
//! to the high mark closes idle links, least recently used first, down to the low mark, as the
//! vendor's channel pool does. A link is idle when no call holds it (every transfer, notify and
//! heartbeat holds an `Arc` of its link while it runs), so an eviction never cuts a transfer
//! short; a later transfer to an evicted peer connects again (the pool turns AutoConnect on).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::conn::link::Link;
use crate::engine::limits::MAX_LINKS;
use crate::engine::options::ChannelPool;
use crate::engine::wire::Message;
use crate::error::engine_status::{ADXL_ALREADY_CONNECTED, ADXL_RESOURCE_EXHAUSTED};
use crate::error::{EngineError, EngineResult};
use crate::sync::lock;

#[derive(Default)]
pub struct Links {
    map: Mutex<HashMap<String, Entry>>,
    /// Set by [`Links::close_all`] (Finalize): the heartbeat ends.
    closed: AtomicBool,
    /// Idle-link eviction, when the engine's options ask for it.
    pool: Option<ChannelPool>,
    /// Counts uses, to order links by their last one.
    clock: AtomicU64,
}

struct Entry {
    link: Arc<Link>,
    /// The [`Links::clock`] value of the link's last use.
    used: AtomicU64,
}

impl Links {
    /// The links of an engine that evicts idle links as `pool` says (`None`: never).
    pub fn new(pool: Option<ChannelPool>) -> Links {
        Links { pool, ..Links::default() }
    }

    /// The link to `remote`, if there is one; counts as a use of it.
    pub fn get(&self, remote: &str) -> Option<Arc<Link>> {
        let links = lock(&self.map);
        let entry = links.get(remote)?;
        entry.used.store(self.clock.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some(entry.link.clone())
    }

    /// Every link, with its remote engine's name.
    pub fn all(&self) -> Vec<(String, Arc<Link>)> {
        lock(&self.map).iter().map(|(k, e)| (k.clone(), e.link.clone())).collect()
    }

    /// Tells every engine this one is connected to about a change of its memory.
    pub fn announce(&self, message: &Message) {
        for e in lock(&self.map).values() {
            e.link.announce(message);
        }
    }

    /// Whether Connect may make a link to `remote`: not while a live one exists
    /// (ALREADY_CONNECTED), nor at [`MAX_LINKS`] when no link's peer is dead
    /// (RESOURCE_EXHAUSTED).
    pub fn room_for(&self, remote: &str) -> EngineResult<()> {
        let mut links = lock(&self.map);
        if links.get(remote).is_some_and(|e| e.link.is_alive()) {
            return Err(EngineError::new(ADXL_ALREADY_CONNECTED, format!("already connected to {remote}")));
        }
        if !links.contains_key(remote) && links.len() >= MAX_LINKS && drop_dead_links(&mut links) == 0 {
            return Err(EngineError::new(ADXL_RESOURCE_EXHAUSTED, format!("already {MAX_LINKS} links")));
        }
        Ok(())
    }

    /// Keeps the new link to `remote`, closing a broken one it replaces; a working link that
    /// another call made meanwhile stays, and this one is closed (ALREADY_CONNECTED).
    pub fn install(&self, remote: &str, link: Arc<Link>) -> EngineResult<()> {
        let mut links = lock(&self.map);
        match links.get(remote) {
            Some(e) if !e.link.is_broken() => {
                link.close();
                Err(EngineError::new(ADXL_ALREADY_CONNECTED, format!("already connected to {remote}")))
            }
            _ => {
                let used = AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed));
                if let Some(old) = links.insert(remote.to_owned(), Entry { link, used }) {
                    old.link.close();
                }
                let evicted = self.pool.map(|pool| evict_idle(&mut links, remote, pool)).unwrap_or_default();
                drop(links);
                for (name, link) in evicted {
                    log::debug!(target: crate::logging::TARGET, "channel pool: closing the idle link to {name}");
                    link.close();
                }
                Ok(())
            }
        }
    }

    /// Forgets the link to `remote` (Disconnect); the caller closes it.
    pub fn remove(&self, remote: &str) -> Option<Arc<Link>> {
        lock(&self.map).remove(remote).map(|e| e.link)
    }

    /// Forgets `link` if it is still the link to `remote` (a newer one stays).
    pub fn remove_if_current(&self, remote: &str, link: &Arc<Link>) {
        let mut links = lock(&self.map);
        if links.get(remote).is_some_and(|e| Arc::ptr_eq(&e.link, link)) {
            links.remove(remote);
        }
    }

    /// Closes and forgets every link (Finalize).
    pub fn close_all(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, e) in lock(&self.map).drain() {
            e.link.close();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// Closes and forgets the links whose peer is gone (killed, exited) but which the caller never
/// disconnected; how many. Called when the links are at [`MAX_LINKS`], so dead peers cannot
/// hold the limit (and their memory) for ever; a transfer to a forgotten peer is then
/// NOT_CONNECTED instead of FAILED.
fn drop_dead_links(links: &mut HashMap<String, Entry>) -> usize {
    let before = links.len();
    links.retain(|_, e| {
        let alive = e.link.is_alive();
        if !alive {
            e.link.close();
        }
        alive
    });
    before - links.len()
}

/// At `pool.high_mark` links, takes idle ones (held by nothing but this table) other than the
/// one to `installed`, least recently used first, until `pool.low_mark` remain or none idle is
/// left; the caller closes them once the table is unlocked.
fn evict_idle(
    links: &mut HashMap<String, Entry>,
    installed: &str,
    pool: ChannelPool,
) -> Vec<(String, Arc<Link>)> {
    if links.len() < pool.high_mark as usize {
        return Vec::new();
    }
    let excess = links.len().saturating_sub(pool.low_mark as usize);
    let mut idle: Vec<(u64, String)> = (links.iter())
        .filter(|(name, e)| name.as_str() != installed && Arc::strong_count(&e.link) == 1)
        .map(|(name, e)| (e.used.load(Ordering::Relaxed), name.clone()))
        .collect();
    idle.sort_unstable();
    (idle.into_iter().take(excess))
        .filter_map(|(_, name)| links.remove(&name).map(|e| (name, e.link)))
        .collect()
}
