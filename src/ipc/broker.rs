//! The exporter's broker: one per process, started by the first export, serving import requests
//! and watching import lifelines on a single thread.
//!
//! # One thread, no blocking
//! The thread `poll`s the listening socket, the connections that have not sent their request
//! yet, and the lifelines of live imports. It never blocks anywhere else: a sequenced packet
//! arrives whole, so reading a request or a lifeline message is one non-blocking `recvmsg`, and
//! replies are sent non-blocking (a reply is tiny; an importer that cannot take it is dropped).
//! Bad clients are bounded, not trusted:
//! - a connection that sends no request within [`REQUEST_TIMEOUT`] is closed;
//! - at most [`MAX_PENDING`] connections wait for their request; to make room for another,
//!   those that have sent one are answered first, then the oldest silent one is closed (an
//!   honest importer sends its request as soon as it connects, and retries if it is closed
//!   unanswered);
//! - garbage gets a refusal and a close; at most [`MAX_LINKS`] imports are live at once;
//! - a failing `accept` (out of descriptors) pauses accepting briefly instead of spinning;
//! - a panic (a bug) is caught and logged, and the loop goes on.

use std::collections::VecDeque;
use std::os::fd::AsFd;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::errors::{ipc_error, param_invalid};
use super::exports::{Decision, Exports};
use super::key::{Key, broker_name};
use super::offer::{ExportKind, Offer};
use super::shareable::{directory_name, make_id};
use super::wire::{REQUEST_LEN, Reply, Request, Status, WireError};
use crate::error::AclResult;
use crate::logging::TARGET;
use crate::sync;
use crate::sys::sleepers;
use crate::sys::socket::{Conn, Listener, poll_ready};

/// How long a new connection may take to send its request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Most connections waiting for their request at once.
pub const MAX_PENDING: usize = 256;
/// Most live imports (lifelines, each an open descriptor) at once.
pub const MAX_LINKS: usize = 16 * 1024;
/// Listen backlog: connections the kernel queues before the thread accepts them.
const BACKLOG: u32 = 128;
/// How long accepting pauses after `accept` failed (e.g. out of descriptors).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// This process's broker: its identity and its table of exports.
pub(super) struct Broker {
    pid: u32,
    token: u64,
    exports: Mutex<Exports>,
    /// Whether the directory socket (shareable ids) could be bound; a process squatting its
    /// name only makes this process's shareable handles unavailable, never impersonated.
    directory: bool,
}

static CURRENT: Mutex<Option<Arc<Broker>>> = Mutex::new(None);

/// The broker of this process, started now if there is none (or only one inherited through
/// `fork`, whose thread did not survive it).
pub(super) fn running() -> AclResult<Arc<Broker>> {
    let mut current = sync::lock(&CURRENT);
    if let Some(b) = current.as_ref().filter(|b| b.pid == std::process::id()) {
        return Ok(Arc::clone(b));
    }
    let broker = start()?;
    *current = Some(Arc::clone(&broker));
    Ok(broker)
}

/// The broker of this process if it serves `key`; otherwise 107000.
pub(super) fn owning(key: &Key) -> AclResult<Arc<Broker>> {
    sync::lock(&CURRENT)
        .as_ref()
        .filter(|b| b.pid == std::process::id() && b.pid == key.pid() && b.token == key.token())
        .cloned()
        .ok_or_else(|| param_invalid("this process does not export that IPC key (it names another process)"))
}

fn start() -> AclResult<Arc<Broker>> {
    let pid = std::process::id();
    let token = crate::sys::random::u64()
        .map_err(|e| ipc_error(format!("no random numbers for the IPC broker: {e}")))?;
    let listener = Listener::bind(&broker_name(pid, token), BACKLOG)
        .map_err(|e| ipc_error(format!("cannot open the IPC broker socket: {e}")))?;
    let mut listeners = vec![listener];
    match Listener::bind(&directory_name(pid), BACKLOG) {
        Ok(l) => listeners.push(l),
        Err(e) => {
            log::warn!(target: TARGET, "IPC broker: cannot open the directory socket for shareable handles: {e}")
        }
    }
    let directory = listeners.len() == 2;
    let broker = Arc::new(Broker { pid, token, exports: Mutex::new(Exports::default()), directory });
    let serving = Arc::clone(&broker);
    sync::spawn_named("ascendless-ipc", move || Serve::new(serving, listeners).run())
        .map_err(|e| ipc_error(format!("cannot start the IPC broker thread: {e}")))?;
    log::debug!(target: TARGET, "IPC broker of process {pid} started");
    Ok(broker)
}

impl Broker {
    fn exports(&self) -> MutexGuard<'_, Exports> {
        sync::lock(&self.exports)
    }

    pub fn export(&self, offer: Offer) -> AclResult<Key> {
        let mut exports = self.exports();
        let secret = loop {
            let s = crate::sys::random::u128()
                .map_err(|e| ipc_error(format!("no random numbers for a key: {e}")))?;
            if !exports.contains(s) {
                break s;
            }
        };
        let key = Key::new(self.pid, self.token, secret);
        log::debug!(target: TARGET, "IPC export {key:?}: {:?} on device {}, {} bytes", offer.kind, offer.device, offer.len);
        exports.insert(secret, offer);
        Ok(key)
    }

    /// Publishes the export `key` under a new shareable id (see `shareable.rs`).
    pub fn publish(&self, key: &Key) -> AclResult<u64> {
        if !self.directory {
            return Err(ipc_error(format!(
                "process {} could not open its directory socket (another process holds the name {:?}), \
                 so it cannot hand out 64-bit shareable handles; use ACL_MEM_SHARE_HANDLE_TYPE_FABRIC",
                self.pid,
                String::from_utf8_lossy(&directory_name(self.pid))
            )));
        }
        let mut exports = self.exports();
        loop {
            let random = crate::sys::random::u64()
                .map_err(|e| ipc_error(format!("no random numbers for a shareable handle: {e}")))?;
            let id = make_id(self.pid, random).ok_or_else(|| {
                ipc_error(format!("process id {} does not fit a shareable handle", self.pid))
            })?;
            if exports.publish(key.secret(), id) {
                return Ok(id);
            }
            if exports.secret_of(id).is_none() {
                return Err(param_invalid("this export is already published (or was revoked)"));
            }
        }
    }

    pub fn allow_pids(&self, key: &Key, pids: &[i32]) -> AclResult<()> {
        self.exports().allow(key.secret(), pids)
    }

    pub fn revoke(&self, key: &Key) -> AclResult<()> {
        self.exports().revoke(key.secret())?;
        log::debug!(target: TARGET, "IPC export {key:?} revoked");
        Ok(())
    }

    pub fn importers(&self, key: &Key) -> usize {
        self.exports().links(key.secret())
    }
}

/// A connection that has not sent its request yet.
struct Pending {
    conn: Conn,
    deadline: Instant,
}

/// A live import: the open connection, which export it is, and who imported it.
struct Link {
    conn: Conn,
    secret: u128,
    pid: i32,
}

/// The broker thread's own state.
struct Serve {
    broker: Arc<Broker>,
    /// The key socket, and the directory socket if it could be bound.
    listeners: Vec<Listener>,
    own_uid: u32,
    /// Oldest first; deadlines grow in the same order.
    pending: VecDeque<Pending>,
    links: Vec<Link>,
    accept_paused_until: Option<Instant>,
}

impl Serve {
    fn new(broker: Arc<Broker>, listeners: Vec<Listener>) -> Serve {
        Serve {
            broker,
            listeners,
            own_uid: crate::sys::effective_uid(),
            pending: VecDeque::new(),
            links: Vec::new(),
            accept_paused_until: None,
        }
    }

    fn run(mut self) {
        loop {
            if catch_unwind(AssertUnwindSafe(|| self.turn())).is_err() {
                log::error!(target: TARGET, "IPC broker: recovered from a panic; serving on");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// Waits for something to do, then does all of it.
    fn turn(&mut self) {
        let now = Instant::now();
        while self.pending.front().is_some_and(|p| p.deadline <= now) {
            self.pending.pop_front();
            log::warn!(target: TARGET, "IPC broker: closed a connection that sent no request within {REQUEST_TIMEOUT:?}");
        }
        if self.accept_paused_until.is_some_and(|t| t <= now) {
            self.accept_paused_until = None;
        }
        let accepting = self.accept_paused_until.is_none();
        let timeout = [self.pending.front().map(|p| p.deadline), self.accept_paused_until]
            .into_iter()
            .flatten()
            .min()
            .map(|t| t.saturating_duration_since(now));

        let ready = {
            let mut fds = Vec::with_capacity(self.listeners.len() + self.pending.len() + self.links.len());
            if accepting {
                fds.extend(self.listeners.iter().map(AsFd::as_fd));
            }
            fds.extend(self.pending.iter().map(|p| AsFd::as_fd(&p.conn)));
            fds.extend(self.links.iter().map(|l| AsFd::as_fd(&l.conn)));
            match poll_ready(&fds, timeout) {
                Ok(ready) => ready,
                Err(e) => {
                    log::warn!(target: TARGET, "IPC broker: poll failed: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                    return;
                }
            }
        };
        let listening = if accepting { self.listeners.len() } else { 0 };
        let (listeners_ready, rest) = ready.split_at(listening);
        let listeners_ready = listeners_ready.to_vec();
        let (pending_ready, links_ready) = rest.split_at(self.pending.len());

        self.serve_links(links_ready);
        self.serve_pending(pending_ready);
        for (i, ready) in listeners_ready.into_iter().enumerate() {
            if ready {
                self.accept_all(i);
            }
        }
    }

    /// Reads what the ready lifelines say: "release", or their close.
    fn serve_links(&mut self, ready: &[bool]) {
        let links = std::mem::take(&mut self.links);
        for (link, &ready) in links.into_iter().zip(ready) {
            if !ready {
                self.links.push(link);
                continue;
            }
            let mut buf = [0u8; REQUEST_LEN];
            let released = match link.conn.try_recv(&mut buf, 0) {
                Ok(Some(m)) if Request::decode(&buf[..m.len]) == Ok(Request::Release) => true,
                Ok(Some(_)) => {
                    log::warn!(target: TARGET, "IPC broker: ignored an unexpected message from importer {}", link.pid);
                    self.links.push(link);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.links.push(link);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    log::warn!(target: TARGET, "IPC broker: ignored a bad message from importer {}: {e}", link.pid);
                    self.links.push(link);
                    continue;
                }
                // Closed (or reset) without a release: the importer's process ended.
                Ok(None) | Err(_) => false,
            };
            self.close_link(link, !released);
        }
    }

    fn close_link(&self, link: Link, died: bool) {
        let key = Key::new(self.broker.pid, self.broker.token, link.secret);
        self.broker.exports().link_closed(link.secret, died);
        drop(link.conn);
        if died {
            log::warn!(target: TARGET, "IPC import of {key:?}: process {} ended without releasing it", link.pid);
        } else {
            log::debug!(target: TARGET, "IPC import of {key:?} by process {} released", link.pid);
        }
    }

    /// Answers the ready connections that have not sent their request yet.
    fn serve_pending(&mut self, ready: &[bool]) {
        let pending = std::mem::take(&mut self.pending);
        for (p, &ready) in pending.into_iter().zip(ready) {
            let p = if ready { self.serve_one(p) } else { Some(p) };
            self.pending.extend(p);
        }
    }

    /// Reads and answers `p`'s request if it has sent one; gives `p` back if it has not.
    fn serve_one(&mut self, p: Pending) -> Option<Pending> {
        let mut buf = [0u8; 64];
        match p.conn.try_recv(&mut buf, 0) {
            Ok(Some(m)) => {
                if let Some(link) = self.answer(p.conn, &buf[..m.len]) {
                    self.links.push(link);
                }
                None
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Some(p),
            Ok(None) => {
                log::debug!(target: TARGET, "IPC broker: a client closed before sending a request");
                None
            }
            Err(e) => {
                log::warn!(target: TARGET, "IPC broker: dropped a client whose request was unreadable: {e}");
                None
            }
        }
    }

    /// Makes room for one more waiting connection: answers those that have spoken, then closes
    /// the oldest silent one if that was not enough.
    fn make_room(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            let p = self.serve_one(p);
            self.pending.extend(p);
        }
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
            log::warn!(target: TARGET, "IPC broker: {MAX_PENDING} clients have not sent their request; closed the oldest");
        }
    }

    /// Answers one request; the connection becomes a lifeline if the import was granted.
    fn answer(&self, conn: Conn, request: &[u8]) -> Option<Link> {
        let refuse = |status: Status, why: &str| {
            log::warn!(target: TARGET, "IPC broker: refused a request ({why})");
            // Best effort: the client may already be gone, and it gets nothing more anyway.
            let _ = conn.try_send(&Reply::refusal(status).encode(), &[]);
            None
        };
        let key = match Request::decode(request) {
            Ok(Request::Import(key)) => key,
            Ok(Request::ImportId { pid, id }) => {
                let secret = if pid == self.broker.pid { self.broker.exports().secret_of(id) } else { None };
                match secret {
                    Some(secret) => Key::new(self.broker.pid, self.broker.token, secret),
                    None => return refuse(Status::UnknownKey, "a shareable id this process never published"),
                }
            }
            Ok(Request::Release) => return refuse(Status::BadRequest, "release before any import"),
            Err(e @ WireError::Version(_)) => return refuse(Status::BadVersion, &e.to_string()),
            Err(e) => return refuse(Status::BadRequest, &e.to_string()),
        };
        let peer = match conn.peer_credentials() {
            Ok(peer) => peer,
            Err(e) => return refuse(Status::BadRequest, &format!("no peer credentials: {e}")),
        };
        let ours = key.pid() == self.broker.pid && key.token() == self.broker.token;
        if !ours {
            return refuse(Status::UnknownKey, &format!("process {} sent a key of another broker", peer.pid));
        }
        if self.links.len() >= MAX_LINKS {
            return refuse(Status::Busy, &format!("{MAX_LINKS} imports are live already"));
        }
        let decision = self.broker.exports().decide(key.secret(), peer, self.own_uid);
        let (fd, reply) = match decision {
            Decision::Grant(fd, reply) => (fd, reply),
            Decision::Refuse(status) => {
                return refuse(status, &format!("process {} asked for {key:?}: {status:?}", peer.pid));
            }
        };
        // Memory goes with the page where its users count their sleepers (sys::sleepers).
        let page = matches!(reply.kind, Some(ExportKind::Memory | ExportKind::Physical))
            .then(|| sleepers::for_file(&fd))
            .flatten();
        let mut fds = vec![fd.as_fd()];
        fds.extend(page.as_ref().map(|p| p.file().as_fd()));
        if let Err(e) = conn.try_send(&reply.encode(), &fds) {
            self.broker.exports().link_closed(key.secret(), false);
            log::warn!(target: TARGET, "IPC broker: could not answer process {} for {key:?}: {e}", peer.pid);
            return None;
        }
        log::debug!(target: TARGET, "IPC broker: process {} imported {key:?}", peer.pid);
        Some(Link { conn, secret: key.secret(), pid: peer.pid })
    }

    /// Accepts the connections the kernel has queued (at most [`MAX_PENDING`] per turn, so a
    /// flood of connections cannot keep the thread from answering).
    fn accept_all(&mut self, listener: usize) {
        for _ in 0..MAX_PENDING {
            match self.listeners[listener].try_accept() {
                Ok(Some(conn)) => {
                    if self.pending.len() >= MAX_PENDING {
                        self.make_room();
                    }
                    self.pending.push_back(Pending { conn, deadline: Instant::now() + REQUEST_TIMEOUT });
                }
                Ok(None) => break,
                Err(e) => {
                    log::warn!(target: TARGET, "IPC broker: accept failed ({e}); pausing for {ACCEPT_PAUSE:?}");
                    self.accept_paused_until = Some(Instant::now() + ACCEPT_PAUSE);
                    break;
                }
            }
        }
    }
}
