//! A fault-injecting TCP proxy for the tests: it listens on loopback, forwards every accepted
//! connection to a target, and applies a schedule of faults per connection and direction, so
//! a test can put two engines on either side and see how they cope with a network that
//! delays, stalls, trickles, reorders or cuts.
//!
//! Connections are numbered in the order they are accepted (0 is the first: an engine's
//! Connect); a [`Rule`] names the connection (or every one) and the direction it applies to.
//! Byte offsets count the bytes of that direction of that connection, handshake included.
//!
//! Every thread of the proxy does its blocking work in ticks of [`TICK`], checking whether
//! its connection was cut or the proxy dropped; dropping the proxy ends and joins all of them.
//! At most [`MAX_CONNS`] connections are forwarded; later ones are closed at once.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest any proxy thread blocks before it checks for a cut or the end.
pub const TICK: Duration = Duration::from_millis(10);
/// Most connections the proxy forwards in its life.
pub const MAX_CONNS: usize = 64;
/// Most bytes a pump holds at once.
const CHUNK: usize = 64 * 1024;

/// A direction of a forwarded connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// From the connecting side (the client engine) to the target.
    Up,
    /// From the target back to the connecting side.
    Down,
}

/// What the proxy does to one direction of a connection.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Every chunk read is held this long before it is forwarded.
    Delay(Duration),
    /// Forwarding stops for `time` once `at` bytes have passed.
    Stall { at: u64, time: Duration },
    /// At most `bytes` bytes are forwarded per `tick`.
    Trickle { bytes: usize, tick: Duration },
    /// Reorders across connections: once `at` bytes have passed, this direction is held until
    /// the other connections have forwarded `others` more bytes in the same direction (their
    /// later data goes first), or for `max` at most.
    Hold { at: u64, others: u64, max: Duration },
    /// Both sides are closed (reset with `reset`) once `at` bytes have passed.
    Cut { at: u64, reset: bool },
    /// Both sides are closed (reset with `reset`) this long after the connection was accepted.
    CutAfter { time: Duration, reset: bool },
}

/// A fault on connection `conn` (every connection when `None`) in direction `dir`.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub conn: Option<usize>,
    pub dir: Dir,
    pub fault: Fault,
}

impl Rule {
    pub fn on(conn: usize, dir: Dir, fault: Fault) -> Rule {
        Rule { conn: Some(conn), dir, fault }
    }

    pub fn all(dir: Dir, fault: Fault) -> Rule {
        Rule { conn: None, dir, fault }
    }
}

/// What the proxy did, for tests to check that a fault really happened.
#[derive(Default)]
pub struct Stats {
    /// Connections accepted (forwarded or refused).
    pub accepted: AtomicUsize,
    /// Bytes forwarded per direction, over all connections ([`Dir::Up`] first).
    pub bytes: [AtomicU64; 2],
    /// Holds released because the other connections went ahead (not by their `max`).
    pub reordered: AtomicUsize,
    /// Connections cut by a rule.
    pub cuts: AtomicUsize,
}

struct Shared {
    stop: AtomicBool,
    rules: Mutex<Vec<Rule>>,
    stats: Stats,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// The proxy. Dropping it closes every connection and joins its threads.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on a loopback port of the system's choosing and forwards to `target` with
    /// `rules`.
    pub fn start(target: SocketAddr, rules: Vec<Rule>) -> Proxy {
        Proxy::start_on("127.0.0.1:0".parse().unwrap(), target, rules)
    }

    /// As [`Proxy::start`], listening on `listen`.
    pub fn start_on(listen: SocketAddr, target: SocketAddr, rules: Vec<Rule>) -> Proxy {
        let listener = TcpListener::bind(listen).expect("the proxy cannot listen");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            rules: Mutex::new(rules),
            stats: Stats::default(),
            threads: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("proxy-accept".into())
            .spawn(move || accept(&listener, target, &s))
            .unwrap();
        Proxy { addr, shared, acceptor: Some(acceptor) }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The engine name that reaches the target through the proxy.
    pub fn name(&self) -> String {
        self.addr.to_string()
    }

    /// Replaces the rules for connections accepted from now on.
    pub fn set_rules(&self, rules: Vec<Rule>) {
        *self.shared.rules.lock().unwrap() = rules;
    }

    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
        let threads = std::mem::take(&mut *self.shared.threads.lock().unwrap());
        for t in threads {
            let _ = t.join();
        }
    }
}

fn accept(listener: &TcpListener, target: SocketAddr, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::Acquire) {
        let client = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(TICK / 4);
                continue;
            }
            Err(_) => continue,
        };
        let index = shared.stats.accepted.fetch_add(1, Ordering::AcqRel);
        if index >= MAX_CONNS {
            continue;
        }
        let Ok(server) = TcpStream::connect_timeout(&target, Duration::from_secs(2)) else { continue };
        let rules: Vec<Rule> = shared.rules.lock().unwrap().clone();
        let conn = Arc::new(Conn { client, server, accepted: Instant::now(), cut: AtomicBool::new(false) });
        let _ = conn.client.set_nonblocking(false);
        for s in [&conn.client, &conn.server] {
            let _ = s.set_nodelay(true);
            let _ = s.set_read_timeout(Some(TICK));
            let _ = s.set_write_timeout(Some(TICK));
        }
        let mut threads = shared.threads.lock().unwrap();
        for dir in [Dir::Up, Dir::Down] {
            let faults: Vec<Fault> = rules
                .iter()
                .filter(|r| r.dir == dir && r.conn.is_none_or(|c| c == index))
                .map(|r| r.fault)
                .collect();
            let (conn, shared) = (conn.clone(), shared.clone());
            let name = format!("proxy-{index}-{dir:?}");
            let pump = move || Pump { conn: &conn, shared: &shared, dir, faults, offset: 0 }.run();
            threads.push(std::thread::Builder::new().name(name).spawn(pump).unwrap());
        }
    }
}

/// One forwarded connection: both pumps share the two sockets, so the last one to end closes
/// them (with a reset when a rule asked for one).
struct Conn {
    client: TcpStream,
    server: TcpStream,
    accepted: Instant,
    cut: AtomicBool,
}

impl Conn {
    /// Cuts the connection: both pumps stop within a tick and the sockets close; `reset` makes
    /// the close a reset (SO_LINGER 0).
    fn cut(&self, reset: bool) {
        if reset {
            for s in [&self.client, &self.server] {
                set_linger_zero(s);
            }
        }
        self.cut.store(true, Ordering::Release);
    }
}

/// `SO_LINGER` {on, 0}: the last close sends a reset instead of a FIN.
fn set_linger_zero(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: a valid socket and a `linger` value of the size given.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Forwards one direction of a connection, applying its faults.
struct Pump<'a> {
    conn: &'a Conn,
    shared: &'a Shared,
    dir: Dir,
    faults: Vec<Fault>,
    /// Bytes forwarded so far.
    offset: u64,
}

/// Why a pump stops.
struct Stop;

impl Pump<'_> {
    fn run(mut self) {
        let _ = self.forward();
        // End of input: the other side sees end of file too (half close), unless cut.
        if !self.conn.cut.load(Ordering::Acquire) {
            let _ = self.to().shutdown(std::net::Shutdown::Write);
        }
    }

    fn from(&self) -> &TcpStream {
        if self.dir == Dir::Up { &self.conn.client } else { &self.conn.server }
    }

    fn to(&self) -> &TcpStream {
        if self.dir == Dir::Up { &self.conn.server } else { &self.conn.client }
    }

    /// Whether the pump must end (cut, the proxy dropped, or a timed cut due).
    fn check(&self) -> Result<(), Stop> {
        for f in &self.faults {
            if let Fault::CutAfter { time, reset } = *f {
                if self.conn.accepted.elapsed() >= time {
                    self.cut(reset);
                }
            }
        }
        if self.conn.cut.load(Ordering::Acquire) || self.shared.stop.load(Ordering::Acquire) {
            return Err(Stop);
        }
        Ok(())
    }

    fn cut(&self, reset: bool) {
        if !self.conn.cut.swap(true, Ordering::AcqRel) {
            self.shared.stats.cuts.fetch_add(1, Ordering::AcqRel);
        }
        self.conn.cut(reset);
    }

    /// Sleeps `time` in ticks.
    fn pause(&self, time: Duration) -> Result<(), Stop> {
        let until = Instant::now() + time;
        while Instant::now() < until {
            self.check()?;
            std::thread::sleep(TICK.min(until - Instant::now()));
        }
        self.check()
    }

    fn forward(&mut self) -> Result<(), Stop> {
        let trickle = self.faults.iter().find_map(|f| match *f {
            Fault::Trickle { bytes, tick } => Some((bytes.max(1), tick)),
            _ => None,
        });
        let delay = self.faults.iter().find_map(|f| match *f {
            Fault::Delay(d) => Some(d),
            _ => None,
        });
        let mut buf = vec![0u8; CHUNK];
        loop {
            self.check()?;
            let want = trickle.map_or(CHUNK, |(k, _)| k.min(CHUNK));
            let n = match self.from().read(&mut buf[..want]) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    // The sender reset: pass the reset on.
                    self.cut(true);
                    return Err(Stop);
                }
            };
            if let Some(d) = delay {
                self.pause(d)?;
            }
            let mut done = 0;
            while done < n {
                let piece = self.until_next_mark(n - done);
                self.send(&buf[done..done + piece])?;
                done += piece;
                self.at_mark()?;
                if let Some((_, tick)) = trickle {
                    self.pause(tick)?;
                }
            }
        }
    }

    /// How many of the next `n` bytes may go before the next offset a fault acts at.
    fn until_next_mark(&self, n: usize) -> usize {
        let next = self
            .faults
            .iter()
            .filter_map(|f| match *f {
                Fault::Stall { at, .. } | Fault::Hold { at, .. } | Fault::Cut { at, .. } => Some(at),
                _ => None,
            })
            .filter(|&at| at > self.offset)
            .min();
        next.map_or(n, |at| n.min((at - self.offset) as usize))
    }

    /// Applies the faults that act at the current offset.
    fn at_mark(&mut self) -> Result<(), Stop> {
        for f in self.faults.clone() {
            match f {
                Fault::Stall { at, time } if at == self.offset => self.pause(time)?,
                Fault::Cut { at, reset } if at == self.offset => {
                    self.cut(reset);
                    return Err(Stop);
                }
                Fault::Hold { at, others, max } if at == self.offset => self.hold(others, max)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Waits until the other connections have forwarded `others` bytes in this direction (or
    /// `max` has passed).
    fn hold(&self, others: u64, max: Duration) -> Result<(), Stop> {
        let total = &self.shared.stats.bytes[self.dir as usize];
        let start = total.load(Ordering::Acquire);
        let until = Instant::now() + max;
        while Instant::now() < until {
            if total.load(Ordering::Acquire) >= start + others {
                self.shared.stats.reordered.fetch_add(1, Ordering::AcqRel);
                return Ok(());
            }
            self.check()?;
            std::thread::sleep(TICK / 4);
        }
        Ok(())
    }

    /// Writes all of `data`, in ticks.
    fn send(&mut self, data: &[u8]) -> Result<(), Stop> {
        let mut sent = 0;
        while sent < data.len() {
            self.check()?;
            match self.to().write(&data[sent..]) {
                Ok(0) => return Err(Stop),
                Ok(n) => {
                    sent += n;
                    self.offset += n as u64;
                    self.shared.stats.bytes[self.dir as usize].fetch_add(n as u64, Ordering::AcqRel);
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.cut(true);
                    return Err(Stop);
                }
            }
        }
        Ok(())
    }
}
