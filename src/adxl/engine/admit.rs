//! Admission of new TCP connections, before they have said HELLO: the part of the serving side
//! that anyone who can reach the port gets to talk to, so it is bounded in count and in time.
//!
//! - at most [`MAX_PENDING`] connections may be in their handshake at once (each has a
//!   thread); one more is closed at once, with a warning logged at most every
//!   [`WARN_EVERY`]. Established connections do not count: they are bounded by
//!   [`super::serve::MAX_SERVED`], so a flood of idle connections cannot stop served links.
//! - the whole HELLO must arrive within [`HELLO_DEADLINE`] of the accept ([`Until`]): a peer
//!   that trickles one byte at a time does not extend it.

use std::io::{self, Read};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::logging::TARGET;

/// Most connections in their handshake (accepted, HELLO_ACK not sent yet) at once.
pub const MAX_PENDING: usize = 64;
/// How long a new connection has, from its accept, to send its whole HELLO.
pub const HELLO_DEADLINE: Duration = Duration::from_secs(10);
/// Least time between two warnings about refused connections.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The pending-handshake count of one listener, and its refusals since the last warning.
#[derive(Default)]
pub struct Admission {
    pending: Arc<AtomicUsize>,
    refused: u64,
    warned: Option<Instant>,
}

/// A place among the pending handshakes, given back when dropped.
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    /// A slot for a connection just accepted, or `None` (counted, warned about at most every
    /// [`WARN_EVERY`]) when [`MAX_PENDING`] are taken. Only the listener thread calls it.
    pub fn admit(&mut self, engine: &str) -> Option<Slot> {
        let taken = self.pending.fetch_add(1, Ordering::AcqRel);
        if taken < MAX_PENDING {
            return Some(Slot(self.pending.clone()));
        }
        self.pending.fetch_sub(1, Ordering::AcqRel);
        self.refused += 1;
        if self.warned.is_none_or(|t| t.elapsed() >= WARN_EVERY) {
            log::warn!(
                target: TARGET,
                "{engine}: {MAX_PENDING} connections have not finished their HELLO; closed {} new connection(s)",
                self.refused
            );
            self.refused = 0;
            self.warned = Some(Instant::now());
        }
        None
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

    #[test]
    fn at_most_max_pending_slots_and_dropping_one_frees_it() {
        let mut a = Admission::default();
        let slots: Vec<Slot> = (0..MAX_PENDING).map(|_| a.admit("e").unwrap()).collect();
        assert!(a.admit("e").is_none());
        assert!(a.admit("e").is_none());
        assert_eq!(a.refused, 1, "the first refusal was warned about; the second waits for the next warning");
        drop(slots);
        assert!(a.admit("e").is_some());
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
