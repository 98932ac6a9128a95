//! The same-host fast path: shared memory between two engines of one machine.
//!
//! An engine that listens (a name with a port) and may share memory also binds the abstract
//! Unix socket `ascendless-adxl/<pid>/<port>`. When HELLO and HELLO_ACK show the same boot id,
//! the initiator connects to that socket (only reachable from the same network namespace),
//! checks with `SO_PEERCRED` that the pid is the one the peer announced and the uid its own
//! (the server checks the uid too), presents the one-time ticket that the peer's HELLO_ACK
//! gave it (so only an engine that completed the TCP handshake, and with `adxl.Secret` proved
//! the secret, gets memory; the ticket is bound to its pid), and receives every registration
//! of the peer: its range and, when the memory is a memfd of the runtime (`aclrtMalloc`,
//! `aclrtMallocHost`), the memfd (`SCM_RIGHTS`). The initiator maps each region on first use and keeps the mapping.
//!
//! The socket then carries the peer's registration changes, in order: ADD (with the memfd
//! when shareable) and REMOVE, which the initiator acknowledges (ACK) after recording or
//! dropping the region; the owner's RegisterMem and DeregisterMem wait for the ACKs, at most
//! [`ANNOUNCE_WAIT`] for all peers together. A reader thread
//! per link applies them; when the socket closes (the peer finalized, exited or was killed)
//! it marks the peer gone and drops every mapping, and transfers fail with FAILED.
//!
//! Packets are [`PACKET`] bytes, little-endian: kind u32, 0 u32, seq u64, addr u64, len u64,
//! offset of `addr` in the memfd u64 (`u64::MAX`: no memfd). The initiator's first packet is
//! TICKET, the ticket's 16 bytes in place of seq and addr.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard, Weak};
use std::time::{Duration, Instant};

use crate::engine::acceptor::{self, Accept, Found, Registration};
use crate::engine::limits::MAX_SAME_HOST_PEERS;
use crate::engine::registry::{Registered, Registry};
use crate::engine::threads;
use crate::engine::wire::{Host, TICKET_LEN};
use crate::logging::TARGET;
use crate::runtime::memory;
use crate::sync::{lock, read, write};
use crate::sys::mapping::Mapping;
use crate::sys::memfd::MemFd;
use crate::sys::socket::{Conn, Listener};
use crate::sys::span::RawSpan;

/// How long the socket waits for a new peer's ticket, and for a send to a peer to go out.
pub const ACK_WAIT: Duration = Duration::from_secs(1);
/// How long RegisterMem and DeregisterMem wait for all same-host peers together to
/// acknowledge a change (a live peer on a loaded machine can take over a second).
pub const ANNOUNCE_WAIT: Duration = Duration::from_secs(3);
const PACKET: usize = 40;
const ADD: u32 = 1;
const REMOVE: u32 = 2;
const DONE: u32 = 3;
const ACK: u32 = 4;
const TICKET: u32 = 5;
/// How long a ticket of HELLO_ACK may wait to be presented.
pub const TICKET_LIFE: Duration = Duration::from_secs(10);
/// Most tickets waiting at once (a link dials up to 8 connections, each gets one; the oldest
/// is dropped first).
const MAX_TICKETS: usize = 1024;
const NO_FD: u64 = u64::MAX;
/// How often blocking loops look at their stop flag.
const TICK: Duration = Duration::from_millis(100);

/// The kernel's boot id: two processes with the same one run on the same machine (and boot).
pub fn boot_id() -> Option<&'static str> {
    static ID: OnceLock<Option<String>> = OnceLock::new();
    ID.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_owned())
    })
    .as_deref()
}

/// What this engine says about its host in HELLO / HELLO_ACK (no ticket).
pub fn host() -> Option<Host> {
    Some(Host { pid: std::process::id(), boot_id: boot_id()?.to_owned(), ticket: [0; TICKET_LEN] })
}

/// Whether a peer's HELLO_ACK says it runs on this host and offers its same-host socket.
pub fn offers(peer: &Host) -> bool {
    boot_id() == Some(peer.boot_id.as_str()) && peer.ticket != [0; TICKET_LEN]
}

/// The initiator's first packet: the ticket in the seq and addr fields.
fn ticket_packet(ticket: &[u8; TICKET_LEN]) -> [u8; PACKET] {
    let mut b = packet(TICKET, 0, 0, 0, NO_FD);
    b[8..8 + TICKET_LEN].copy_from_slice(ticket);
    b
}

/// A ticket given in HELLO_ACK, waiting for its initiator (pid as the initiator announced it).
struct Ticket {
    value: [u8; TICKET_LEN],
    pid: u32,
    issued: Instant,
}

fn socket_name(pid: u32, port: u16) -> Vec<u8> {
    format!("ascendless-adxl/{pid}/{port}").into_bytes()
}

fn packet(kind: u32, seq: u64, addr: u64, len: u64, offset: u64) -> [u8; PACKET] {
    let mut b = [0u8; PACKET];
    b[0..4].copy_from_slice(&kind.to_le_bytes());
    b[8..16].copy_from_slice(&seq.to_le_bytes());
    b[16..24].copy_from_slice(&addr.to_le_bytes());
    b[24..32].copy_from_slice(&len.to_le_bytes());
    b[32..40].copy_from_slice(&offset.to_le_bytes());
    b
}

fn field(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

// ---------------------------------------------------------------------------------------
// The owner's side.

/// One same-host initiator connected to this engine.
struct Peer {
    conn: Mutex<Conn>,
    seq: AtomicU64,
    dead: AtomicBool,
}

impl Peer {
    /// ADD for one registration (with its memfd when shareable); `seq` 0 asks for no ACK.
    /// Called with `conn` locked.
    fn add(conn: &Conn, r: &Registered, seq: u64) -> io::Result<()> {
        let backing = memory::backing(r.addr).filter(|b| r.addr + r.len <= b.start + b.len);
        match backing {
            Some(b) => {
                let p = packet(ADD, seq, r.addr as u64, r.len as u64, (r.addr - b.start) as u64);
                conn.send(&p, &[b.fd.as_fd()])
            }
            None => conn.send(&packet(ADD, seq, r.addr as u64, r.len as u64, NO_FD), &[]),
        }
    }

    /// Waits (until `deadline`) for the ACK of `seq`. Called with `conn` locked.
    fn await_ack(&self, conn: &Conn, seq: u64, what: &str, deadline: Instant) {
        let mut buf = [0u8; PACKET];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!(target: TARGET, "a same-host peer did not acknowledge {what} in time");
                return;
            }
            let _ = conn.set_read_timeout(Some(left));
            match conn.recv(&mut buf, 0) {
                Ok(Some(m)) if m.len == PACKET && field(&buf, 8) >= seq => return,
                Ok(Some(_)) => continue,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => continue,
                Ok(None) | Err(_) => {
                    // Gone: its mappings went with it.
                    self.dead.store(true, Ordering::Release);
                    return;
                }
            }
        }
    }
}

/// The Unix listener of a listening engine and the initiators connected through it.
pub struct Server {
    peers: Mutex<Vec<Arc<Peer>>>,
    tickets: Mutex<Vec<Ticket>>,
    /// The socket's place in the process's wait for connections, until [`Server::stop`].
    accepting: Mutex<Option<Registration>>,
}

/// The server's socket in the process's wait for connections ([`acceptor`]).
struct Source {
    server: Arc<Server>,
    /// New peers get this memory; held weakly (a finalized engine's socket has no more).
    registry: Weak<Registry>,
    /// `None` once closed.
    listener: Mutex<Option<Listener>>,
}

impl Accept for Source {
    fn accept(&self) -> Found {
        let accepted = match lock(&self.listener).as_ref().map(Listener::try_accept) {
            None | Some(Ok(None)) => return Found::Nothing,
            Some(Ok(Some(conn))) => conn,
            // E.g. out of descriptors.
            Some(Err(_)) => return Found::Failed,
        };
        let s = &self.server;
        s.prune();
        let Some(registry) = self.registry.upgrade() else { return Found::Nothing };
        let uid = crate::sys::effective_uid();
        match accepted.peer_credentials() {
            Ok(c) if c.uid == uid && lock(&s.peers).len() < MAX_SAME_HOST_PEERS => {
                let server = s.clone();
                // Not at once: the peer's ticket may take a while (at most ACK_WAIT).
                let work = Box::new(move || {
                    server.welcome(&registry, accepted, c.pid);
                    None
                });
                return Found::Connection { at_once: false, work };
            }
            Ok(c) if c.uid == uid => {
                log::warn!(target: TARGET, "{MAX_SAME_HOST_PEERS} same-host peers already; one more refused (it uses TCP)")
            }
            Ok(c) => log::warn!(target: TARGET, "same-host connection from uid {} refused", c.uid),
            Err(_) => {}
        }
        Found::Nothing
    }

    fn close(&self, unwatch: &dyn Fn(BorrowedFd<'_>)) {
        if let Some(l) = lock(&self.listener).take() {
            unwatch(l.as_fd());
        }
    }

    /// So a closed channel's descriptor goes even if no one connects.
    fn tick(&self) {
        self.server.prune();
    }
}

impl Server {
    /// Binds the engine's socket and starts accepting; `None` (logged) if it cannot. New
    /// peers get the memory of `registry`.
    pub fn start(registry: &Arc<Registry>, port: u16) -> Option<Arc<Server>> {
        let name = socket_name(std::process::id(), port);
        let listener = match Listener::bind(&name, 64) {
            Ok(l) => l,
            Err(e) => {
                log::debug!(target: TARGET, "no same-host socket for port {port}: {e}");
                return None;
            }
        };
        let server = Arc::new(Server {
            peers: Mutex::new(Vec::new()),
            tickets: Mutex::new(Vec::new()),
            accepting: Mutex::new(None),
        });
        let source = Arc::new(Source {
            server: server.clone(),
            registry: Arc::downgrade(registry),
            listener: Mutex::new(Some(listener)),
        });
        let added = {
            let listener = lock(&source.listener);
            let fd = listener.as_ref().expect("the socket was just put there").as_fd();
            acceptor::add(fd, source.clone())
        };
        match added {
            Ok(registration) => *lock(&server.accepting) = Some(registration),
            Err(e) => {
                log::debug!(target: TARGET, "no same-host listener for port {port}: {e}");
                return None;
            }
        }
        Some(server)
    }

    /// What HELLO_ACK says about this host to a peer that announced `peer`: with a fresh
    /// one-time ticket for its same-host socket when the peer runs on this host.
    pub fn offer(&self, peer: Option<&Host>) -> Option<Host> {
        let mut me = host()?;
        let Some(peer) = peer.filter(|p| p.boot_id == me.boot_id) else { return Some(me) };
        if crate::sys::random::fill(&mut me.ticket).is_err() {
            me.ticket = [0; TICKET_LEN];
            return Some(me);
        }
        let mut tickets = lock(&self.tickets);
        tickets.retain(|t| t.issued.elapsed() < TICKET_LIFE);
        if tickets.len() >= MAX_TICKETS {
            tickets.remove(0);
        }
        tickets.push(Ticket { value: me.ticket, pid: peer.pid, issued: Instant::now() });
        Some(me)
    }

    /// Takes the ticket `value` issued to `pid` (once): whether it was there and fresh.
    fn redeem(&self, value: &[u8], pid: i32) -> bool {
        let mut tickets = lock(&self.tickets);
        tickets.retain(|t| t.issued.elapsed() < TICKET_LIFE);
        // Every ticket is compared whole (no early exit on the first differing byte).
        let same = |t: &Ticket| t.value.iter().zip(value).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
        let found = tickets.iter().position(|t| t.pid as i32 == pid && value.len() == TICKET_LEN && same(t));
        found.map(|i| tickets.swap_remove(i)).is_some()
    }

    /// Checks the initiator's ticket (it sends it at once; at most [`ACK_WAIT`]), then sends
    /// the registrations so far, then DONE; later changes follow on the same socket.
    fn welcome(&self, registry: &Registry, conn: Conn, pid: i32) {
        let _ = conn.set_read_timeout(Some(ACK_WAIT));
        let mut buf = [0u8; PACKET];
        let valid = match conn.recv(&mut buf, 0) {
            Ok(Some(m)) if m.len == PACKET && buf[0..4] == TICKET.to_le_bytes() => {
                self.redeem(&buf[8..8 + TICKET_LEN], pid)
            }
            _ => false,
        };
        if !valid {
            log::warn!(target: TARGET, "same-host connection from pid {pid} refused: no valid ticket from a HELLO_ACK");
            return;
        }
        let _ = conn.set_write_timeout(Some(ACK_WAIT));
        let peer =
            Arc::new(Peer { conn: Mutex::new(conn), seq: AtomicU64::new(1), dead: AtomicBool::new(false) });
        let conn = lock(&peer.conn);
        // Listed under the lock, then the snapshot: a change made meanwhile is sent after it
        // (a repeated ADD is harmless), and a REMOVE never precedes its ADD.
        lock(&self.peers).push(peer.clone());
        let ok = registry.all().iter().all(|r| Peer::add(&conn, r, 0).is_ok())
            && conn.send(&packet(DONE, 0, 0, 0, 0), &[]).is_ok();
        if !ok {
            peer.dead.store(true, Ordering::Release);
        }
    }

    /// Forgets the peers that closed their end (a link that was closed or whose process
    /// died): without this, every connect/close cycle would keep a descriptor until the next
    /// registration change.
    fn prune(&self) {
        lock(&self.peers).retain(|p| {
            // A peer busy with an announcement is alive enough; it is checked next time.
            let closed = p.conn.try_lock().is_ok_and(|c| c.peer_closed());
            !closed && !p.dead.load(Ordering::Acquire)
        });
    }

    fn live_peers(&self) -> Vec<Arc<Peer>> {
        let mut peers = lock(&self.peers);
        peers.retain(|p| !p.dead.load(Ordering::Acquire));
        peers.clone()
    }

    /// Announces a new registration to every same-host initiator and waits (together at most
    /// [`ANNOUNCE_WAIT`]) until each has recorded it, so the next transfer may use the direct path.
    pub fn added(&self, r: &Registered) {
        self.announce(&format!("the registration of {:#x}", r.addr), |conn, seq| Peer::add(conn, r, seq));
    }

    /// Announces a removed registration and waits (together at most [`ANNOUNCE_WAIT`]) until
    /// every same-host initiator has dropped it.
    pub fn removed(&self, r: &Registered) {
        self.announce(&format!("the removal of {:#x}", r.addr), |conn, seq| {
            conn.send(&packet(REMOVE, seq, r.addr as u64, r.len as u64, NO_FD), &[])
        });
    }

    /// Sends one change to every live peer, then waits for their acknowledgements under one
    /// deadline, so slow peers cost [`ANNOUNCE_WAIT`] together, not each. Every connection
    /// stays locked until its acknowledgement, so a concurrent announcement cannot take it.
    fn announce(&self, what: &str, send: impl Fn(&Conn, u64) -> io::Result<()>) {
        let peers = self.live_peers();
        let mut waiting = Vec::with_capacity(peers.len());
        for p in &peers {
            let conn = lock(&p.conn);
            let seq = p.seq.fetch_add(1, Ordering::Relaxed);
            if send(&conn, seq).is_err() {
                p.dead.store(true, Ordering::Release);
                continue;
            }
            waiting.push((p, conn, seq));
        }
        let deadline = Instant::now() + ANNOUNCE_WAIT;
        for (p, conn, seq) in waiting {
            p.await_ack(&conn, seq, what, deadline);
        }
    }

    /// Closes the socket (at once: a new engine of this process can bind the same name
    /// right after) and every same-host connection (their initiators see the peer gone).
    pub fn stop(&self) {
        if let Some(registration) = lock(&self.accepting).take() {
            registration.remove();
        }
        lock(&self.peers).clear();
    }
}

// ---------------------------------------------------------------------------------------
// The initiator's side.

/// One region of the peer: its range and, when shareable, its memfd and (once used) mapping.
pub struct Region {
    len: usize,
    shared: Option<(MemFd, u64)>,
    mapping: OnceLock<Option<(Arc<Mapping>, usize)>>,
}

impl Region {
    /// The mapping and where `addr` of the region (its start) is in it.
    fn mapped(&self, remote: &str, addr: usize) -> Option<&(Arc<Mapping>, usize)> {
        self.mapping
            .get_or_init(|| {
                let (fd, offset) = self.shared.as_ref()?;
                if !fd.cannot_shrink() {
                    // The owner could shrink it under the mapping (SIGBUS here): not mapped.
                    log::debug!(target: TARGET, "{remote}'s region {addr:#x} is not sealed: not mapped");
                    return None;
                }
                let page = crate::sys::page_size() as u64;
                let start = offset - offset % page;
                let head = (offset - start) as usize;
                let len = (head + self.len).next_multiple_of(page as usize);
                match Mapping::shared_rw_at(fd, start, len, page as usize) {
                    Ok(m) => {
                        log::debug!(target: TARGET, "mapped {remote}'s region {addr:#x} + {} bytes", self.len);
                        Some((Arc::new(m), head))
                    }
                    Err(e) => {
                        log::debug!(target: TARGET, "cannot map {remote}'s region {addr:#x}: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }
}

/// The peer's regions, as its socket announced them; held for reading during a copy, so a
/// REMOVE (which takes it for writing) is acknowledged only after copies into it ended.
pub struct Regions(BTreeMap<(usize, usize), Region>);

impl Regions {
    fn find(&self, addr: usize, len: usize) -> Option<(usize, &Region)> {
        let end = addr.checked_add(len)?;
        self.0
            .range(..=(addr, usize::MAX))
            .rev()
            .find(|((a, _), r)| a + r.len >= end)
            .map(|((a, _), r)| (*a, r))
    }

    /// Whether the peer registered `[addr, addr + len)`.
    pub fn holds(&self, addr: usize, len: usize) -> bool {
        self.find(addr, len).is_some()
    }

    /// The peer's bytes `[addr, addr + len)` through a mapping, when they are in shareable
    /// memory. `last` remembers the region found, for the next descriptor of the call.
    pub fn span<'a>(
        &'a self,
        remote: &str,
        addr: usize,
        len: usize,
        last: &mut Option<(usize, &'a Region)>,
    ) -> Option<RawSpan> {
        let hit = match *last {
            Some((start, r))
                if addr >= start && addr.checked_add(len).is_some_and(|e| e <= start + r.len) =>
            {
                (start, r)
            }
            _ => self.find(addr, len)?,
        };
        *last = Some(hit);
        let (start, r) = hit;
        let (m, head) = r.mapped(remote, start)?;
        RawSpan::of_mapping(m, head + (addr - start), len)
    }
}

/// A link's same-host channel to its peer.
pub struct Local {
    /// The peer's pid (checked through `SO_PEERCRED`).
    pub pid: i32,
    regions: RwLock<Regions>,
    gone: AtomicBool,
    closed: AtomicBool,
    /// Cleared when the kernel refused a cross-process copy (then TCP is used).
    pub kernel_copy: AtomicBool,
}

impl Local {
    /// Connects to `peer`'s socket (port `port`), checks who answers and reads the peer's
    /// memory. `Err` says why the same-host path is not available.
    pub fn open(remote: &str, peer: &Host, port: u16, deadline: Instant) -> Result<Arc<Local>, String> {
        if boot_id() != Some(peer.boot_id.as_str()) {
            return Err("the peer runs on another host (boot ids differ)".into());
        }
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        let conn = Conn::connect(&socket_name(peer.pid, port), left).map_err(|e| {
            format!("the peer's same-host socket is not reachable (another network namespace?): {e}")
        })?;
        let cred = conn.peer_credentials().map_err(|e| format!("SO_PEERCRED: {e}"))?;
        if cred.pid as u32 != peer.pid || cred.uid != crate::sys::effective_uid() {
            return Err(format!(
                "the same-host socket belongs to pid {} uid {}, not to the peer (pid {})",
                cred.pid, cred.uid, peer.pid
            ));
        }
        if peer.ticket == [0; TICKET_LEN] {
            return Err("the peer gave no ticket for its same-host socket".into());
        }
        conn.send(&ticket_packet(&peer.ticket), &[]).map_err(|e| format!("sending the ticket: {e}"))?;
        let local = Arc::new(Local {
            pid: cred.pid,
            regions: RwLock::new(Regions(BTreeMap::new())),
            gone: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            kernel_copy: AtomicBool::new(true),
        });
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("the peer did not list its memory in time".into());
            }
            conn.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
            match local.apply(remote, &conn) {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => return Err(format!("reading the peer's memory: {e}")),
            }
        }
        let _ = conn.set_read_timeout(Some(TICK));
        let (l, remote) = (local.clone(), remote.to_owned());
        if !threads::run(Box::new(move || l.follow(&remote, &conn))) {
            return Err("no thread to follow the peer's memory".into());
        }
        Ok(local)
    }

    /// Applies one packet; `Ok(false)` on DONE.
    fn apply(&self, remote: &str, conn: &Conn) -> io::Result<bool> {
        let mut buf = [0u8; PACKET];
        let m = conn.recv(&mut buf, 1)?.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        if m.len != PACKET {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "short packet"));
        }
        let kind = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes"));
        let (seq, addr, len, offset) =
            (field(&buf, 8), field(&buf, 16) as usize, field(&buf, 24) as usize, field(&buf, 32));
        match kind {
            ADD => {
                let shared =
                    m.fds.into_iter().next().filter(|_| offset != NO_FD).map(|fd| (MemFd::from(fd), offset));
                let mut regions = write(&self.regions);
                regions.0.insert((addr, len), Region { len, shared, mapping: OnceLock::new() });
                drop(regions);
                if seq != 0 {
                    conn.send(&packet(ACK, seq, addr as u64, len as u64, NO_FD), &[])?;
                }
            }
            REMOVE => {
                let gone = write(&self.regions).0.remove(&(addr, len));
                drop(gone);
                log::debug!(target: TARGET, "{remote} removed its region {addr:#x} + {len} bytes");
                conn.send(&packet(ACK, seq, addr as u64, len as u64, NO_FD), &[])?;
            }
            DONE => return Ok(false),
            _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "unknown packet")),
        }
        Ok(true)
    }

    /// The reader thread: applies changes until the socket closes or the link does.
    fn follow(&self, remote: &str, conn: &Conn) {
        while !self.closed.load(Ordering::Acquire) {
            match self.apply(remote, conn) {
                Ok(_) => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) => {
                    if !self.closed.load(Ordering::Acquire) {
                        log::debug!(target: TARGET, "same-host channel to {remote} ended: {e}");
                    }
                    break;
                }
            }
        }
        self.gone.store(true, Ordering::Release);
        write(&self.regions).0.clear();
    }

    /// Whether the peer is still there (its socket open).
    pub fn alive(&self) -> bool {
        !self.gone.load(Ordering::Acquire)
    }

    /// The peer's regions, held for reading for the duration of a copy.
    pub fn regions(&self) -> RwLockReadGuard<'_, Regions> {
        read(&self.regions)
    }

    /// Stops the reader thread and drops every mapping.
    pub fn close(&self) {
        // The reader sees the flag within a tick and ends by itself (not waited for: closing
        // many links must not wait a tick each).
        self.closed.store(true, Ordering::Release);
        self.gone.store(true, Ordering::Release);
        write(&self.regions).0.clear();
    }
}
