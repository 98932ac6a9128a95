//! Links: this engine's connections to one remote engine (made by `Connect`).
//!
//! A link is a small pool of TCP connections to the peer. A transfer takes an idle one, or
//! opens another (up to [`MAX_CONNS`]) when every one is busy, so calls from several threads
//! to one peer run side by side; calls to different peers never share anything. Every
//! connection starts with HELLO/HELLO_ACK (protocol magic and version, both names, the
//! registered memory), after the shared-secret handshake when this engine has a secret
//! ([`crate::engine::conn::auth`]): each connection of a link is authenticated on its own.

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use std::sync::Arc;

use crate::engine::conn::dialer::Dialer;
use crate::engine::conn::reader::FrameReader;
use crate::engine::conn::redial::{self, Attempt};
use crate::engine::conn::status::{io_status, remaining};
use crate::engine::conn::watch::Conversation;
use crate::engine::limits::MAX_CONNS;
use crate::engine::options::Transport;
use crate::engine::path::shm;
use crate::engine::path::ucx::slot::PeerSlot;
use crate::engine::wire::{Host, Message, NO_TAG, Region};
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::sync::{lock, wait_timeout};
use crate::sys::stream_io::{peer_closed, send_all};

/// A connection idle this long is checked for a closed peer before it is used again.
const IDLE_CHECK: Duration = Duration::from_millis(200);

/// One connection of a link, lent to one transfer at a time.
pub struct Conn {
    id: u64,
    /// When the connection was last given back (idle ones are checked before reuse).
    idle_since: Instant,
    pub stream: TcpStream,
    /// Everything read from `stream` goes through this (it may hold bytes read ahead).
    pub reader: FrameReader,
    /// The read and write time-out last set on `stream` by a transfer.
    pub timeout: Option<Duration>,
}

struct Pool {
    next_id: u64,
    idle: Vec<Conn>,
    /// Clones of every open connection (idle or lent), to shut them down on Disconnect.
    open: HashMap<u64, TcpStream>,
}

pub struct Link {
    pub remote: String,
    addr: SocketAddr,
    pool: Mutex<Pool>,
    returned: Condvar,
    broken: AtomicBool,
    closed: AtomicBool,
    /// The peer's memory, as its HELLO_ACK said (informational: the peer decides each request
    /// with its own registry).
    pub peer_regions: Mutex<Vec<Region>>,
    /// Where the peer runs, as its latest HELLO_ACK said (absent: it would not share memory),
    /// and when that came (its ticket expires).
    peer_host: Mutex<Option<(Host, Instant)>>,
    /// The same-host channel, when the peer shares this host (see [`shm`]): `None` when it
    /// could not be opened. Opened by the first transfer that could use it
    /// ([`Link::same_host`]), not by Connect, which then costs what a TCP Connect does;
    /// Connect opens it only with `adxl.Transport=shm`, which fails without it.
    shm: OnceLock<Option<Arc<shm::Local>>>,
    /// The UCX endpoint and keys, when the link uses UCX (see [`crate::engine::path::ucx`],
    /// which sets it up after [`Link::open`]).
    pub ucx: PeerSlot,
}

impl Link {
    /// Connects to `remote` (at `addr`) and makes the link with its first connection.
    pub fn open(dialer: &Dialer, remote: &str, addr: SocketAddr, deadline: Instant) -> EngineResult<Link> {
        let link = Link {
            remote: remote.to_owned(),
            addr,
            pool: Mutex::new(Pool { next_id: 1, idle: Vec::new(), open: HashMap::new() }),
            returned: Condvar::new(),
            broken: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            peer_regions: Mutex::new(Vec::new()),
            peer_host: Mutex::new(None),
            shm: OnceLock::new(),
            ucx: Default::default(),
        };
        let conn = link.dial(dialer, deadline)?;
        link.give_back(conn);
        if dialer.transport == Transport::Shm {
            let mut why = String::new();
            let opened =
                link.shm.get_or_init(|| link.open_same_host(dialer, deadline).map_err(|e| why = e).ok());
            if opened.is_none() {
                link.close();
                return Err(EngineError::new(
                    ADXL_FAILED,
                    format!("connect to {remote}: the transport is shm but {why}"),
                ));
            }
        }
        Ok(link)
    }

    /// The same-host channel, if it is open.
    pub fn shm(&self) -> Option<&Arc<shm::Local>> {
        self.shm.get().and_then(Option::as_ref)
    }

    /// Whether the peer said it runs on this host and offered its same-host socket (the
    /// channel may still fail to open: another network namespace, say).
    #[cfg(test)]
    pub fn peer_on_this_host(&self) -> bool {
        lock(&self.peer_host).as_ref().is_some_and(|(h, _)| shm::offers(h))
    }

    /// The same-host channel, opened now (once, under `deadline`) if it was not: what a
    /// transfer calls first. `None`: the peer is elsewhere, or the channel failed to open
    /// (logged; transfers use the network).
    pub fn same_host(&self, dialer: &Dialer, deadline: Instant) -> Option<&Arc<shm::Local>> {
        if !dialer.may_share() {
            return None;
        }
        let opened = self.shm.get_or_init(|| {
            self.open_same_host(dialer, deadline)
                .inspect_err(|why| log::debug!(target: crate::logging::TARGET, "{}: not on this host ({why})", self.remote))
                .ok()
        });
        // Closed while it was opening: the channel goes with the link.
        if self.closed.load(Ordering::Acquire) {
            if let Some(local) = opened {
                local.close();
            }
        }
        opened.as_ref()
    }

    /// Makes the latest HELLO_ACK look `by` older (tests of the ticket's renewal).
    #[cfg(test)]
    pub fn age_ticket(&self, by: Duration) {
        if let Some((_, when)) = lock(&self.peer_host).as_mut() {
            *when = when.checked_sub(by).expect("the clock goes back that far");
        }
    }

    /// How many connections the link has open, idle or lent.
    #[cfg(test)]
    pub fn open_connections(&self) -> usize {
        lock(&self.pool).open.len()
    }

    /// Opens the same-host channel with the ticket of the latest HELLO_ACK, after dialling
    /// another connection for a fresh one when it is about to expire.
    fn open_same_host(&self, dialer: &Dialer, deadline: Instant) -> Result<Arc<shm::Local>, String> {
        let stale =
            lock(&self.peer_host).as_ref().is_some_and(|(_, when)| when.elapsed() > shm::TICKET_LIFE / 2);
        if stale {
            match self.dial_once(dialer, deadline) {
                Ok(conn) => self.give_back(conn),
                Err(e) => return Err(format!("no fresh ticket: {}", e.into_error().message)),
            }
        }
        let host = lock(&self.peer_host).as_ref().map(|(h, _)| h.clone());
        let Some(host) = host.filter(shm::offers) else {
            return Err(
                "the peer does not offer shared memory (another host, forced to TCP, or an older engine)"
                    .into(),
            );
        };
        let local = shm::Local::open(&self.remote, &host, self.addr.port(), deadline)?;
        log::debug!(target: crate::logging::TARGET, "{}: same host, shared memory (pid {})", self.remote, local.pid);
        Ok(local)
    }

    /// A peer that reset or closed a connection is taken to be gone: the next Connect replaces
    /// the link.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire) || self.shm().is_some_and(|s| !s.alive())
    }

    /// Applies the peer's announcement of a registration change.
    pub fn note(&self, message: &Message) {
        self.ucx.note(message);
        let mut regions = lock(&self.peer_regions);
        match message {
            Message::MemAdd { regions: added } => {
                regions.extend_from_slice(added);
                regions.sort_by_key(|r| r.addr);
            }
            Message::MemRemove { regions: gone } => {
                regions.retain(|r| !gone.iter().any(|g| g.addr == r.addr && g.len == r.len));
            }
            _ => {}
        }
    }

    /// Whether the peer's memory, as its HELLO_ACK listed it, holds every range (a region
    /// registered later, or overlapping registrations, may answer `false`: then the call is
    /// just not striped).
    pub fn peer_holds(&self, ranges: impl Iterator<Item = (u64, u64)>) -> bool {
        let regions = lock(&self.peer_regions);
        ranges.into_iter().all(|(addr, len)| {
            let i = regions.partition_point(|r| r.addr <= addr);
            i > 0 && {
                let r = &regions[i - 1];
                addr.checked_add(len).is_some_and(|end| end <= r.addr + r.len)
            }
        })
    }

    /// The peer's region announced with `tag` (the one at the highest address, if several
    /// carry it); never one without a tag.
    pub fn peer_region(&self, tag: u32) -> Option<Region> {
        if tag == NO_TAG {
            return None;
        }
        lock(&self.peer_regions).iter().rev().find(|r| r.tag == tag).copied()
    }

    /// Whether the peer still holds the link's idle connections: a peer that died (and maybe
    /// restarted) has closed them, which a non-blocking peek sees as end of file. Used by
    /// Connect, so a restarted peer can be connected again without a failed transfer first.
    pub fn is_alive(&self) -> bool {
        if self.is_broken() {
            return false;
        }
        let dead = lock(&self.pool).idle.iter().any(|c| peer_closed(&c.stream));
        if dead {
            self.broken.store(true, Ordering::Release);
        }
        !dead
    }

    /// Opens one connection, authenticates it (with a secret) and says HELLO; dials again
    /// while the peer drops the connection before HELLO_ACK and time is left ([`redial`]).
    fn dial(&self, dialer: &Dialer, deadline: Instant) -> EngineResult<Conn> {
        redial::until(deadline, &self.remote, || self.dial_once(dialer, deadline))
    }

    /// One try of [`Link::dial`].
    fn dial_once(&self, dialer: &Dialer, deadline: Instant) -> Result<Conn, Attempt> {
        let talking = Conversation::start();
        let what = "connect to";
        let left = remaining(deadline, &self.remote, what)?;
        let stream = TcpStream::connect_timeout(&self.addr, left).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io_status(&self.remote, what, &e).into(),
            // The listener's queue overflowed (with tcp_abort_on_overflow): a busy peer.
            io::ErrorKind::ConnectionReset => redial::io(&self.remote, what, &e),
            _ => Attempt::Final(EngineError::new(
                ADXL_FAILED,
                format!("connect to {}: the peer is not listening ({e})", self.remote),
            )),
        })?;
        let io = |e: io::Error| redial::io(&self.remote, what, &e);
        stream.set_nodelay(true).map_err(io)?;
        let left = remaining(deadline, &self.remote, what)?;
        stream.set_read_timeout(Some(left)).map_err(io)?;
        stream.set_write_timeout(Some(left)).map_err(io)?;
        crate::engine::conn::auth::initiate(&stream, dialer.secret, dialer.name, &self.remote)?;
        let host = if dialer.may_share() { shm::host() } else { None };
        let hello = Message::Hello { name: dialer.name.to_owned(), regions: dialer.registry.regions(), host };
        send_all(&stream, &hello.encode()).map_err(io)?;
        talking.watch_for_reply(&stream);
        match Message::read_from(&mut &stream).map_err(|e| redial::wire(&self.remote, what, e))? {
            Message::HelloAck { status: 0, mut regions, host, .. } => {
                regions.sort_by_key(|r| r.addr);
                *lock(&self.peer_host) = host.map(|h| (h, Instant::now()));
                *lock(&self.peer_regions) = regions;
            }
            Message::HelloAck { status, message, .. } => {
                return Err(EngineError::new(
                    status,
                    format!("{} refused the connection: {message}", self.remote),
                )
                .into());
            }
            _ => {
                return Err(EngineError::new(
                    ADXL_FAILED,
                    format!("{} answered HELLO out of order", self.remote),
                )
                .into());
            }
        }
        let mut pool = lock(&self.pool);
        let id = pool.next_id;
        pool.next_id += 1;
        if let Ok(clone) = stream.try_clone() {
            pool.open.insert(id, clone);
        }
        Ok(Conn { id, idle_since: Instant::now(), stream, reader: FrameReader::default(), timeout: None })
    }

    /// A connection for one transfer: an idle one, a new one, or the next one given back.
    pub fn take(&self, dialer: &Dialer, deadline: Instant) -> EngineResult<Conn> {
        let mut pool = lock(&self.pool);
        // An extra connection that cannot be dialled (the peer is overloaded, or at its limit
        // of handshakes) does not break a link whose other connections work: the call waits
        // for one of them instead. With none open, the failure is the link's.
        let mut dial_failed: Option<EngineError> = None;
        loop {
            if self.closed.load(Ordering::Acquire) {
                return Err(EngineError::new(ADXL_FAILED, format!("the link to {} was closed", self.remote)));
            }
            if let Some(c) = pool.idle.pop() {
                // A connection idle for a while may belong to a peer that died (and maybe
                // restarted): check it, so the transfer goes to a fresh connection instead of
                // failing. Busy links skip the system call.
                if c.idle_since.elapsed() < IDLE_CHECK || !peer_closed(&c.stream) {
                    return Ok(c);
                }
                drop(pool);
                self.discard(c, false);
                pool = lock(&self.pool);
                continue;
            }
            if pool.open.is_empty() {
                if let Some(e) = dial_failed {
                    self.broken.store(true, Ordering::Release);
                    return Err(e);
                }
            }
            if pool.open.len() < MAX_CONNS && dial_failed.is_none() {
                let others = pool.open.len();
                drop(pool);
                // The link's only connection is worth dialling again as Connect does; an extra
                // one is not (the call can wait for the others instead).
                let dialled = if others == 0 {
                    self.dial(dialer, deadline)
                } else {
                    self.dial_once(dialer, deadline).map_err(Attempt::into_error)
                };
                match dialled {
                    Ok(conn) => return Ok(conn),
                    Err(e) if others == 0 => {
                        self.broken.store(true, Ordering::Release);
                        return Err(e);
                    }
                    Err(e) => {
                        log::debug!(target: crate::logging::TARGET, "{}; waiting for one of the {others} open connections", e.message);
                        dial_failed = Some(e);
                        pool = lock(&self.pool);
                        continue;
                    }
                }
            }
            let left = remaining(deadline, &self.remote, "transfer to")?;
            pool = wait_timeout(&self.returned, pool, left).0;
        }
    }

    /// An idle connection, if one is (for the heartbeat, which never waits or dials).
    pub fn take_idle(&self) -> Option<Conn> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.pool).idle.pop()
    }

    /// Returns a connection whose conversation ended cleanly.
    pub fn give_back(&self, conn: Conn) {
        if self.closed.load(Ordering::Acquire) {
            self.discard(conn, false);
            return;
        }
        let mut conn = conn;
        conn.idle_since = Instant::now();
        lock(&self.pool).idle.push(conn);
        self.returned.notify_one();
    }

    /// Drops a connection in an unknown state (time-out, protocol error); `broken` marks the
    /// peer as gone.
    pub fn discard(&self, conn: Conn, broken: bool) {
        let _ = conn.stream.shutdown(Shutdown::Both);
        lock(&self.pool).open.remove(&conn.id);
        if broken {
            self.broken.store(true, Ordering::Release);
        }
        // Every waiter looks again: one whose dial failed gives up once no connection is left.
        self.returned.notify_all();
    }

    /// Sends `message` on every idle connection (a MEM_ADD or MEM_REMOVE); best effort.
    pub fn announce(&self, message: &Message) {
        let frame = message.encode();
        for c in &lock(&self.pool).idle {
            let _ = send_all(&c.stream, &frame);
        }
    }

    /// Says BYE on idle connections and shuts every connection down; transfers in flight on
    /// this link fail at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if let Some(s) = self.shm() {
            s.close();
        }
        self.ucx.clear(self.is_broken());
        let mut pool = lock(&self.pool);
        let bye = Message::Bye.encode();
        for c in pool.idle.drain(..) {
            let _ = send_all(&c.stream, &bye);
        }
        for (_, s) in pool.open.drain() {
            let _ = s.shutdown(Shutdown::Both);
        }
        self.returned.notify_all();
    }
}
