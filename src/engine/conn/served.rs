//! The connections this engine serves: [`ServedConns`], the service that holds them all
//! (behind its own lock), and [`Served`], one connection, shared between its serving thread
//! (responses) and [`ServedConns::push`] (announcements of registration changes, from
//! RegisterMem and DeregisterMem).
//!
//! Every frame is written during a [`Turn`], so an announcement never lands inside a response.
//! An announcement never waits for a turn: when the connection is busy (a response is being
//! sent, maybe to a peer that reads nothing and will be dropped after `STALL`), it is queued
//! and whoever holds the turn sends it when the turn ends; when the peer's receive window is
//! full, it waits for the next response. So a slow or hostile peer cannot hold up the
//! engine's RegisterMem.

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::engine::limits::MAX_SERVED;
use crate::engine::wire::Message;
use crate::sync::{lock, try_lock};
use crate::sys::stream_io::{readable, send_all, writable};

/// The served-connections service: every connection this engine serves, by id.
#[derive(Default)]
pub struct ServedConns {
    /// The last id given, and the connections.
    map: Mutex<(u64, HashMap<u64, Arc<Served>>)>,
    /// Set by [`ServedConns::close_all`]: no connection is added any more.
    closed: AtomicBool,
}

impl ServedConns {
    /// Records a served connection; `None` at [`MAX_SERVED`] or once closed.
    pub fn add(&self, served: Arc<Served>) -> Option<u64> {
        let mut map = lock(&self.map);
        if map.1.len() >= MAX_SERVED || self.closed.load(Ordering::Acquire) {
            return None;
        }
        map.0 += 1;
        let id = map.0;
        map.1.insert(id, served);
        Some(id)
    }

    pub fn remove(&self, id: u64) {
        lock(&self.map).1.remove(&id);
    }

    /// Tells every engine connected to this one about a change of its memory.
    pub fn push(&self, message: &Message) {
        let all: Vec<Arc<Served>> = lock(&self.map).1.values().cloned().collect();
        let frame = message.encode();
        for s in all {
            s.send(&frame);
        }
    }

    /// Refuses new connections from now on (Finalize, before the listener stops).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Whether [`ServedConns::close`] was called: a serving thread ends after the frame it read.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Shuts every served connection down (Finalize, once the listener stopped), except those
    /// with input waiting (a peer's BYE or end, mostly): their threads are awake and end after
    /// that frame, seeing the engine closed, and shut their connection down themselves. (A
    /// shutdown there raced the woken thread for the socket and took Finalize tens of µs.)
    pub fn close_all(&self) {
        self.close();
        for (_, s) in lock(&self.map).1.drain() {
            if !readable(&s.stream) {
                let _ = s.stream.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Most bytes of announcements queued for one connection; a peer that lets more pile up is
/// dropped (it has not read for a long time).
const MAX_QUEUED: usize = 1 << 20;

pub struct Served {
    pub stream: TcpStream,
    write: Mutex<()>,
    queued: Mutex<Vec<u8>>,
}

/// The right to write on a connection; on drop it sends the announcements queued meanwhile.
pub struct Turn<'a> {
    served: &'a Served,
    guard: Option<MutexGuard<'a, ()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        loop {
            self.served.flush();
            drop(self.guard.take());
            // One queued after the flush and before the release found the turn taken: send
            // it now, unless someone else has the turn (then they will) or the peer has no
            // room (then the next turn will).
            if self.served.queue().is_empty() || !writable(&self.served.stream) {
                return;
            }
            match try_lock(&self.served.write) {
                Some(g) => self.guard = Some(g),
                None => return,
            }
        }
    }
}

impl Served {
    pub fn new(stream: TcpStream) -> Served {
        Served { stream, write: Mutex::new(()), queued: Mutex::new(Vec::new()) }
    }

    fn queue(&self) -> MutexGuard<'_, Vec<u8>> {
        lock(&self.queued)
    }

    /// Waits for the turn (the serving thread, before a response).
    pub fn turn(&self) -> Turn<'_> {
        Turn { served: self, guard: Some(lock(&self.write)) }
    }

    /// Sends what is queued; called during a turn. Nothing is sent while the peer's window is
    /// full (after a response that stalled, this would wait another `STALL`): the frames
    /// wait for the next turn. A failed send closes the connection (a half-written frame
    /// would break it anyway).
    fn flush(&self) {
        let mut q = self.queue();
        if q.is_empty() || !writable(&self.stream) {
            return;
        }
        let frames = std::mem::take(&mut *q);
        drop(q);
        if send_all(&self.stream, &frames).is_err() {
            let _ = self.stream.shutdown(Shutdown::Both);
        }
    }

    /// Sends an announcement between responses: now if the connection is free and the peer
    /// has room for it, else with the next turn. Never waits for a response to finish, nor
    /// for a peer that reads nothing.
    pub fn send(&self, frame: &[u8]) {
        {
            let mut q = self.queue();
            if q.len() + frame.len() > MAX_QUEUED {
                drop(q);
                let _ = self.stream.shutdown(Shutdown::Both);
                return;
            }
            q.extend_from_slice(frame);
        }
        let Some(guard) = try_lock(&self.write) else { return };
        drop(Turn { served: self, guard: Some(guard) });
    }
}
