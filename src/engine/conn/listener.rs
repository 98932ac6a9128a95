//! The listener of an engine named with a port: it accepts connections, admits them
//! ([`crate::engine::conn::admit`] bounds in number and time the ones that have not finished
//! HELLO) and gives each to the handshake ([`crate::engine::conn::serve`]). It knows nothing
//! of the engine beyond its name.
//!
//! The socket waits with every other listening socket of the process
//! ([`crate::engine::acceptor`]): the thread woken for a connection accepts it and serves it for
//! its life.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::{Arc, Mutex};

use crate::engine::acceptor::{self, Accept, Found, Registration};
use crate::engine::conn::admit::{Admission, Slot};
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sync::{Job, lock};

/// Connections the kernel may complete before the listener accepts them (capped by
/// `net.core.somaxconn`): a burst from a flood is queued rather than answered by dropping
/// SYNs, which would cost an honest peer caught in it a second per dropped SYN. The listener
/// takes them quickly: each only evicts the oldest pending handshake ([`crate::engine::conn::admit`]).
pub const BACKLOG: u32 = 4096;

/// An engine's listening socket, in the process's wait for connections.
pub struct Listening {
    registration: Registration,
}

impl Listening {
    /// Closes the socket and the connections still in their handshake; connections past it
    /// are the engine's to close. Wakes no thread.
    pub fn stop(self) {
        self.registration.remove();
    }
}

/// Binds `addr` and starts accepting for the engine `name`: each connection admitted is given
/// to `handshake`, with its place among the pending handshakes, and what it returns (serving
/// the connection's requests) runs next. When `at_once` says the handshake cannot wait, it
/// runs before the wait for connections moves on.
pub fn listen<A, H>(addr: SocketAddr, name: String, at_once: A, handshake: H) -> EngineResult<Listening>
where
    A: Fn(&TcpStream) -> bool + Send + Sync + 'static,
    H: Fn(TcpStream, Slot) -> Option<Job> + Clone + Send + Sync + 'static,
{
    let failed = |e: std::io::Error| EngineError::new(ADXL_FAILED, format!("cannot listen on {addr}: {e}"));
    let listener = TcpListener::bind(addr).map_err(failed)?;
    if let Err(e) = crate::sys::stream_io::set_backlog(&listener, BACKLOG) {
        log::debug!(target: TARGET, "{addr}: the listen backlog stays at the default: {e}");
    }
    listener.set_nonblocking(true).map_err(failed)?;
    let source = Arc::new(Source {
        listener: Mutex::new(Some(listener)),
        admission: Mutex::new(Admission::default()),
        name,
        at_once,
        handshake,
    });
    let registration = {
        let listener = lock(&source.listener);
        let fd = listener.as_ref().expect("the socket was just put there").as_fd();
        acceptor::add(fd, source.clone()).map_err(failed)?
    };
    Ok(Listening { registration })
}

/// One engine's listening socket and its pending handshakes.
struct Source<A, H> {
    /// `None` once closed.
    listener: Mutex<Option<TcpListener>>,
    admission: Mutex<Admission>,
    name: String,
    at_once: A,
    handshake: H,
}

impl<A, H> Accept for Source<A, H>
where
    A: Fn(&TcpStream) -> bool + Send + Sync + 'static,
    H: Fn(TcpStream, Slot) -> Option<Job> + Clone + Send + Sync + 'static,
{
    fn accept(&self) -> Found {
        let accepted = match lock(&self.listener).as_ref().map(TcpListener::accept) {
            None => return Found::Nothing,
            Some(Ok((stream, _))) => stream,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::WouldBlock => return Found::Nothing,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionAborted => return Found::Nothing,
            // E.g. out of descriptors.
            Some(Err(_)) => return Found::Failed,
        };
        // Accepted sockets do not inherit O_NONBLOCK on Linux; set it back all the same.
        if accepted.set_nonblocking(false).is_err() {
            return Found::Nothing;
        }
        // Out of descriptors for its clone: the stream is dropped here, closed before a byte
        // is read.
        let Some(slot) = lock(&self.admission).admit(&accepted, &self.name) else { return Found::Nothing };
        let handshake = self.handshake.clone();
        // Nothing in the handshake waits when the peer has sent all of its part: the peer
        // has its answer one hand-over sooner. Otherwise the wait moves on first: a peer slow
        // with its HELLO must not hold the accepts.
        Found::Connection {
            at_once: (self.at_once)(&accepted),
            work: Box::new(move || handshake(accepted, slot)),
        }
    }

    fn close(&self, unwatch: &dyn Fn(BorrowedFd<'_>)) {
        if let Some(l) = lock(&self.listener).take() {
            unwatch(l.as_fd());
        }
        lock(&self.admission).close_all();
    }
}
