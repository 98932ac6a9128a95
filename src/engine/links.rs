//! The links service: the links this engine made with Connect, by the remote engine's name,
//! behind their own lock. Connect, Disconnect, transfers, announcements and the heartbeat use
//! it, and need nothing else of the engine's state for it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::conn::link::Link;
use crate::engine::limits::MAX_LINKS;
use crate::engine::wire::Message;
use crate::error::engine_status::{ADXL_ALREADY_CONNECTED, ADXL_RESOURCE_EXHAUSTED};
use crate::error::{EngineError, EngineResult};
use crate::sync::lock;

#[derive(Default)]
pub struct Links {
    map: Mutex<HashMap<String, Arc<Link>>>,
    /// Set by [`Links::close_all`] (Finalize): the heartbeat ends.
    closed: AtomicBool,
}

impl Links {
    /// The link to `remote`, if there is one.
    pub fn get(&self, remote: &str) -> Option<Arc<Link>> {
        lock(&self.map).get(remote).cloned()
    }

    /// Every link, with its remote engine's name.
    pub fn all(&self) -> Vec<(String, Arc<Link>)> {
        lock(&self.map).iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Tells every engine this one is connected to about a change of its memory.
    pub fn announce(&self, message: &Message) {
        for l in lock(&self.map).values() {
            l.announce(message);
        }
    }

    /// Whether Connect may make a link to `remote`: not while a live one exists
    /// (ALREADY_CONNECTED), nor at [`MAX_LINKS`] when no link's peer is dead
    /// (RESOURCE_EXHAUSTED).
    pub fn room_for(&self, remote: &str) -> EngineResult<()> {
        let mut links = lock(&self.map);
        if links.get(remote).is_some_and(|l| l.is_alive()) {
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
            Some(l) if !l.is_broken() => {
                link.close();
                Err(EngineError::new(ADXL_ALREADY_CONNECTED, format!("already connected to {remote}")))
            }
            _ => {
                if let Some(old) = links.insert(remote.to_owned(), link) {
                    old.close();
                }
                Ok(())
            }
        }
    }

    /// Forgets the link to `remote` (Disconnect); the caller closes it.
    pub fn remove(&self, remote: &str) -> Option<Arc<Link>> {
        lock(&self.map).remove(remote)
    }

    /// Forgets `link` if it is still the link to `remote` (a newer one stays).
    pub fn remove_if_current(&self, remote: &str, link: &Arc<Link>) {
        let mut links = lock(&self.map);
        if links.get(remote).is_some_and(|l| Arc::ptr_eq(l, link)) {
            links.remove(remote);
        }
    }

    /// Closes and forgets every link (Finalize).
    pub fn close_all(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, l) in lock(&self.map).drain() {
            l.close();
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
fn drop_dead_links(links: &mut HashMap<String, Arc<Link>>) -> usize {
    let before = links.len();
    links.retain(|_, l| {
        let alive = l.is_alive();
        if !alive {
            l.close();
        }
        alive
    });
    before - links.len()
}
