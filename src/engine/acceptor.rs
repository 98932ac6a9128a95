//! One wait for connections to every listening socket of the process (the TCP and the
//! same-host socket of each listening engine), held by one engine thread at a time.
//!
//! Initialize adds its sockets and Finalize removes them: system calls of the caller's thread
//! that wake no other thread. (A thread blocked in `accept` per socket had to be woken to be
//! given its socket and again to stop, each wake-up tens of µs on a small VM; see
//! `cargo bench --bench engine_setup`.) The thread the kernel wakes for a connection takes it,
//! hands the wait to another engine thread ([`threads`]) and does the connection's work
//! itself, so the connection is served by the thread already woken for it; work that cannot
//! wait (a handshake whose message has arrived) runs before the wait moves on, so the peer
//! gets its answer one hand-over sooner.

use std::collections::HashMap;
use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::engine::threads;
use crate::logging::TARGET;
use crate::sync::{Job, lock};
use crate::sys::readiness::Readiness;

/// How often each source's [`Accept::tick`] runs.
const TICK: Duration = Duration::from_millis(100);
/// How many ticks the wait goes on with no socket registered before its thread ends (the next
/// registration starts it again).
const IDLE_TICKS: u32 = 10;
/// How long the wait pauses after a failed accept (out of descriptors, say), so it does not
/// spin on a socket that stays ready.
const PAUSE: Duration = Duration::from_millis(10);

/// A listening socket's side: what to do when it is ready.
pub trait Accept: Send + Sync + 'static {
    /// Takes one pending connection without waiting, if there is one. Never called again once
    /// [`Accept::close`] has been.
    fn accept(&self) -> Found;
    /// Closes the socket (after `unwatch` of its descriptor) and what the source holds.
    fn close(&self, unwatch: &dyn Fn(BorrowedFd<'_>));
    /// Housekeeping, every [`TICK`] or so (never after [`Accept::close`]); must not wait.
    fn tick(&self) {}
}

/// What one [`Accept::accept`] found.
pub enum Found {
    /// No connection (none pending, or one refused on the spot).
    Nothing,
    /// Accepting failed: the wait pauses a moment.
    Failed,
    /// A connection and its work: `work` runs on the thread that accepted it, before the
    /// wait moves to another thread when `at_once` (it must not wait), after otherwise; what
    /// it returns runs next (serving the connection for its life).
    Connection { at_once: bool, work: Box<dyn FnOnce() -> Option<Job> + Send> },
}

struct Entry {
    source: Arc<dyn Accept>,
    /// Held around every accept and the close, so no accept follows the close.
    closed: Mutex<bool>,
}

struct Entries {
    map: HashMap<u64, Arc<Entry>>,
    /// Whether a thread holds the wait (or is about to).
    waiting: bool,
}

struct Acceptor {
    readiness: Readiness,
    entries: Mutex<Entries>,
    next: AtomicU64,
    /// When the sources were last ticked.
    ticked: Mutex<Instant>,
}

fn acceptor() -> io::Result<&'static Acceptor> {
    static ACCEPTOR: OnceLock<Result<Acceptor, String>> = OnceLock::new();
    ACCEPTOR
        .get_or_init(|| {
            Ok(Acceptor {
                readiness: Readiness::new().map_err(|e| format!("epoll_create: {e}"))?,
                entries: Mutex::new(Entries { map: HashMap::new(), waiting: false }),
                next: AtomicU64::new(1),
                ticked: Mutex::new(Instant::now()),
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))
}

/// A socket in the wait; [`Registration::remove`] takes it out and closes it.
pub struct Registration {
    token: u64,
}

/// Adds the listening socket `fd` of `source` to the wait.
pub fn add(fd: BorrowedFd<'_>, source: Arc<dyn Accept>) -> io::Result<Registration> {
    let a = acceptor()?;
    let token = a.next.fetch_add(1, Ordering::Relaxed);
    let mut entries = lock(&a.entries);
    a.readiness.watch(fd, token)?;
    entries.map.insert(token, Arc::new(Entry { source, closed: Mutex::new(false) }));
    if !entries.waiting {
        if !threads::run(Box::new(wait)) {
            entries.map.remove(&token);
            let _ = a.readiness.unwatch(fd);
            return Err(io::Error::other("no thread to wait for connections"));
        }
        entries.waiting = true;
    }
    Ok(Registration { token })
}

impl Registration {
    /// Takes the socket out of the wait and closes it: when this returns, no accept runs on it
    /// or will (work already given to a thread goes on).
    pub fn remove(self) {
        let Ok(a) = acceptor() else { return };
        let Some(entry) = lock(&a.entries).map.remove(&self.token) else { return };
        let mut closed = lock(&entry.closed);
        *closed = true;
        entry.source.close(&|fd| {
            let _ = a.readiness.unwatch(fd);
        });
    }
}

/// The wait: runs until a connection comes (then hands itself over and does the work) or
/// nothing is registered any more.
fn wait() {
    let Ok(a) = acceptor() else { return };
    let mut ready = Vec::with_capacity(16);
    let mut idle = 0;
    loop {
        if let Err(e) = a.readiness.wait(&mut ready, Some(TICK)) {
            log::warn!(target: TARGET, "waiting for connections: {e}");
            std::thread::sleep(PAUSE);
            continue;
        }
        tick_if_due(a);
        if ready.is_empty() {
            let mut entries = lock(&a.entries);
            idle = if entries.map.is_empty() { idle + 1 } else { 0 };
            if idle >= IDLE_TICKS {
                entries.waiting = false;
                return;
            }
            continue;
        }
        for &token in &ready {
            let Some(entry) = lock(&a.entries).map.get(&token).cloned() else { continue };
            let found = {
                let closed = lock(&entry.closed);
                if *closed {
                    continue;
                }
                entry.source.accept()
            };
            let (at_once, work) = match found {
                Found::Nothing => continue,
                Found::Failed => {
                    std::thread::sleep(PAUSE);
                    continue;
                }
                Found::Connection { at_once, work } => (at_once, work),
            };
            let rest: Job = if at_once {
                let serving = work();
                Box::new(move || {
                    if let Some(serve) = serving {
                        serve()
                    }
                })
            } else {
                Box::new(move || {
                    if let Some(serve) = work() {
                        serve()
                    }
                })
            };
            // The sockets not looked at yet are still ready: the next holder sees them.
            if threads::run(Box::new(wait)) {
                return rest();
            }
            // No thread to spare: this one keeps the wait, and the work waits for a thread
            // (refused: dropped, and the connection with it).
            threads::run(rest);
            break;
        }
    }
}

/// Runs every source's [`Accept::tick`] if [`TICK`] has passed since the last time.
fn tick_if_due(a: &Acceptor) {
    {
        let mut ticked = lock(&a.ticked);
        if ticked.elapsed() < TICK {
            return;
        }
        *ticked = Instant::now();
    }
    let all: Vec<Arc<Entry>> = lock(&a.entries).map.values().cloned().collect();
    for entry in all {
        let closed = lock(&entry.closed);
        if !*closed {
            entry.source.tick();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsFd;
    use std::sync::mpsc::{Receiver, Sender, channel};
    use std::thread::ThreadId;

    type Seen = (ThreadId, ThreadId);

    /// Accepts connections; each one's work reports (accepting thread, working thread), and
    /// what follows holds its thread until `release` says so.
    struct Source {
        listener: Mutex<Option<TcpListener>>,
        at_once: bool,
        seen: Mutex<Sender<Seen>>,
        release: Arc<Mutex<Receiver<()>>>,
    }

    impl Accept for Source {
        fn accept(&self) -> Found {
            let Some(l) = lock(&self.listener).as_ref().and_then(|l| l.accept().ok()) else {
                return Found::Nothing;
            };
            let (seen, release) = (lock(&self.seen).clone(), self.release.clone());
            let accepted = std::thread::current().id();
            Found::Connection {
                at_once: self.at_once,
                work: Box::new(move || {
                    let _ = seen.send((accepted, std::thread::current().id()));
                    Some(Box::new(move || {
                        let _ = lock(&release).recv_timeout(Duration::from_secs(10));
                        drop(l);
                    }))
                }),
            }
        }

        fn close(&self, unwatch: &dyn Fn(BorrowedFd<'_>)) {
            if let Some(l) = lock(&self.listener).take() {
                unwatch(l.as_fd());
            }
        }
    }

    fn source(at_once: bool) -> (Arc<Source>, std::net::SocketAddr, Receiver<Seen>, Sender<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let addr = l.local_addr().unwrap();
        let (seen, reports) = channel();
        let (release, released) = channel();
        let source = Source {
            listener: Mutex::new(Some(l)),
            at_once,
            seen: Mutex::new(seen),
            release: Arc::new(Mutex::new(released)),
        };
        (Arc::new(source), addr, reports, release)
    }

    fn register(s: &Arc<Source>) -> Registration {
        add(lock(&s.listener).as_ref().unwrap().as_fd(), s.clone()).unwrap()
    }

    /// Each connection is worked on by the thread that accepted it, which holds it for as long
    /// as the work lasts while other connections are accepted; removing a socket closes it.
    #[test]
    fn connections_are_worked_on_by_the_thread_that_accepted_them_until_removed() {
        let (a, a_addr, a_seen, a_release) = source(true);
        let (b, b_addr, b_seen, b_release) = source(false);
        let (ra, rb) = (register(&a), register(&b));
        let mut busy = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..3 {
            clients.push(TcpStream::connect(a_addr).unwrap());
            let (accepted, worked) = a_seen.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(accepted, worked);
            busy.push(worked);
            clients.push(TcpStream::connect(b_addr).unwrap());
            let (accepted, worked) = b_seen.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(accepted, worked);
            busy.push(worked);
        }
        // Six connections held at once, each on its own thread.
        let mut distinct = busy.clone();
        distinct.sort_by_key(|t| format!("{t:?}"));
        distinct.dedup();
        assert_eq!(distinct.len(), busy.len(), "{busy:?}");
        for _ in 0..3 {
            a_release.send(()).unwrap();
            b_release.send(()).unwrap();
        }
        ra.remove();
        assert!(lock(&a.listener).is_none(), "removing closes the socket");
        assert!(TcpStream::connect(a_addr).is_err(), "nothing listens any more");
        clients.push(TcpStream::connect(b_addr).unwrap());
        assert!(b_seen.recv_timeout(Duration::from_secs(10)).is_ok(), "the other socket is still served");
        b_release.send(()).unwrap();
        rb.remove();
    }
}
