//! Admission of new TCP connections, before they have said HELLO: the part of the serving side
//! that anyone who can reach the port gets to talk to, so it is bounded in count and in time.
//!
//! - at most [`MAX_PENDING`] connections may be in their handshake at once (each has a
//!   thread). When they are all taken, the **oldest** is shut down to make room for the new
//!   one (sshd's `MaxStartups` drops the newest instead, which lets a flood of idle
//!   connections lock everyone out until their deadline passes). A peer that holds a place
//!   without finishing its HELLO thus holds it only until [`MAX_PENDING`] newer connections
//!   arrive, and an honest peer, whose handshake takes a few round trips, gets through as long
//!   as it is quicker than that many accepts; its Connect dials again if it is dropped anyway
//!   (see [`crate::engine::conn::redial`]). Evictions are logged as a warning at most every [`WARN_EVERY`].
//!   Established connections do not count: they are bounded by [`MAX_SERVED`](crate::engine::limits::MAX_SERVED),
//!   and a connection leaves the table (so it can no longer be shut down here) as soon as its
//!   HELLO has arrived ([`Slot::settle`]).
//! - the whole HELLO must arrive within [`HELLO_DEADLINE`] of the accept ([`Until`]): a peer
//!   that trickles one byte at a time does not extend it.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::limits::MAX_PENDING;
use crate::logging::TARGET;
use crate::sync::lock;

/// How long a new connection has, from its accept, to send its whole HELLO.
pub const HELLO_DEADLINE: Duration = Duration::from_secs(10);
/// Least time between two warnings about evicted connections.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The connections in their handshake, oldest first: an id and a clone of the stream, to shut
/// it down when it is evicted (its thread then reads end of file and ends at once).
#[derive(Default)]
struct Table {
    next: u64,
    places: VecDeque<(u64, TcpStream)>,
}

type Shared = Arc<Mutex<Table>>;

/// The pending handshakes of one listener, and its evictions since the last warning.
#[derive(Default)]
pub struct Admission {
    table: Shared,
    evicted: u64,
    warned: Option<Instant>,
}

/// A place among the pending handshakes, given back when settled or dropped.
pub struct Slot {
    id: u64,
    table: Shared,
}

impl Slot {
    /// The HELLO has arrived: the connection leaves the table, so it is no longer evicted
    /// (from here it is bounded by the served-connection limit). `false` when it was evicted
    /// already (its stream is shut down: nothing more can be said on it).
    pub fn settle(&self) -> bool {
        let mut t = lock(&self.table);
        match t.places.iter().position(|(id, _)| *id == self.id) {
            Some(i) => {
                t.places.remove(i);
                true
            }
            None => false,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.settle();
    }
}

impl Admission {
    /// A slot for `stream`, just accepted. When [`MAX_PENDING`] are taken, the oldest pending
    /// connection is shut down and loses its place (counted, warned about at most every
    /// [`WARN_EVERY`]). `None` only when the stream cannot be cloned (out of descriptors):
    /// then the caller closes it. Only the listener thread calls it.
    pub fn admit(&mut self, stream: &TcpStream, engine: &str) -> Option<Slot> {
        let clone = stream.try_clone().ok()?;
        let mut t = lock(&self.table);
        let evicted = if t.places.len() >= MAX_PENDING { t.places.pop_front() } else { None };
        let id = t.next;
        t.next += 1;
        t.places.push_back((id, clone));
        drop(t);
        if let Some((_, old)) = evicted {
            let _ = old.shutdown(Shutdown::Both);
            self.evicted += 1;
            if self.warned.is_none_or(|t| t.elapsed() >= WARN_EVERY) {
                log::warn!(
                    target: TARGET,
                    "{engine}: {MAX_PENDING} connections have not finished their HELLO; closed the oldest to admit new ones ({} so far)",
                    self.evicted
                );
                self.evicted = 0;
                self.warned = Some(Instant::now());
            }
        }
        Some(Slot { id, table: self.table.clone() })
    }

    /// Shuts down every pending connection (the listener is stopping), so their threads end
    /// now rather than at their deadline.
    pub fn close_all(&mut self) {
        for (_, s) in lock(&self.table).places.drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// How many connections are in their handshake.
    #[cfg(test)]
    fn pending(&self) -> usize {
        lock(&self.table).places.len()
    }
}

/// A stream read under one deadline for all its reads: each read waits at most for what is
/// left, and none starts after it (`TimedOut`).
pub struct Until<'a> {
    pub stream: &'a TcpStream,
    pub deadline: Instant,
}

impl Read for Until<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self
            .deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(io::ErrorKind::TimedOut)?;
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connected pair: (the client's end, the server's end).
    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (a, l.accept().unwrap().0)
    }

    fn shut_down(client: &TcpStream) -> bool {
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        matches!((&mut &*client).read(&mut [0u8; 1]), Ok(0) | Err(_))
    }

    #[test]
    fn beyond_max_pending_the_oldest_is_shut_down_and_loses_its_place() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut a = Admission::default();
        let mut conns = Vec::new();
        let mut slots = Vec::new();
        for _ in 0..MAX_PENDING + 2 {
            let (client, server) = pair(&l);
            slots.push(a.admit(&server, "e").unwrap());
            conns.push((client, server));
        }
        assert_eq!(a.pending(), MAX_PENDING);
        assert_eq!(
            a.evicted, 1,
            "the first eviction was warned about; the second waits for the next warning"
        );
        assert!(shut_down(&conns[0].0) && shut_down(&conns[1].0), "the two oldest are shut down");
        assert!(!slots[0].settle() && !slots[1].settle(), "an evicted connection cannot settle");
        // The newest settle: they leave the table and are never evicted.
        assert!(slots[MAX_PENDING + 1].settle());
        assert_eq!(a.pending(), MAX_PENDING - 1);
        let (client, server) = pair(&l);
        let _late = a.admit(&server, "e").unwrap();
        assert_eq!(a.pending(), MAX_PENDING, "the settled one's place was free: no eviction");
        drop(slots.drain(2..));
        assert_eq!(a.pending(), 1, "dropping a slot gives its place back");
        a.close_all();
        assert!(shut_down(&client));
        assert_eq!(a.pending(), 0);
    }

    #[test]
    fn a_trickle_does_not_extend_the_deadline() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let start = Instant::now();
        let writer = std::thread::spawn(move || {
            for _ in 0..20 {
                if crate::sys::stream_io::send_all(&a, b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let mut r = Until { stream: &b, deadline: start + Duration::from_millis(500) };
        let mut buf = [0u8; 64];
        let e = r.read_exact(&mut buf).unwrap_err();
        assert!(matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock), "{e:?}");
        assert!(start.elapsed() < Duration::from_millis(1500), "{:?}", start.elapsed());
        writer.join().unwrap();
    }
}
