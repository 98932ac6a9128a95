//! The listener of an engine named with a port: it accepts connections, admits them
//! ([`crate::engine::conn::admit`] bounds in number and time the ones that have not finished
//! HELLO) and hands each to a serving thread ([`crate::engine::conn::serve`]). It knows nothing
//! of the engine beyond its name.
//!
//! A connection is served by one of the process's engine threads for its life
//! ([`crate::engine::threads`]), and the accept loop runs on one too; stopping it shuts the
//! listening socket down, which ends the loop's `accept` at once.
//!
//! The thread that accepts a connection serves it and hands the loop to another thread
//! ([`threads::hand_over`]): the peer's HELLO is answered by the thread already woken for it,
//! one wake-up fewer per Connect than handing the connection over.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::engine::conn::admit::{Admission, Slot};
use crate::engine::threads;
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sync::Job;

/// Connections the kernel may complete before the listener accepts them (capped by
/// `net.core.somaxconn`): a burst from a flood is queued rather than answered by dropping
/// SYNs, which would cost an honest peer caught in it a second per dropped SYN. The listener
/// takes them quickly: each only evicts the oldest pending handshake ([`crate::engine::conn::admit`]).
pub const BACKLOG: u32 = 4096;

/// An accept loop running for an engine.
pub struct Listening {
    /// The listening socket (a second descriptor of the loop's), to shut it down.
    socket: TcpListener,
}

impl Listening {
    /// Ends the loop (its `stopping()` must already say so): the socket stops listening at
    /// once, and the loop, woken, closes it and the connections still in their handshake.
    /// Not waited for: the port can be bound again meanwhile (it is only bound, not
    /// listening, and both sockets have `SO_REUSEADDR`), and waking a thread to wait for it
    /// would cost Finalize more than the rest of its work.
    pub fn stop(self) {
        if let Err(e) = crate::sys::socket::stop_accepting(&self.socket) {
            log::warn!(target: TARGET, "cannot shut the listening socket down ({e}): it closes when its loop next wakes");
        }
    }
}

/// Binds `addr` and starts accepting for the engine `name`: each connection admitted is given
/// to `handshake`, with its place among the pending handshakes, and what it returns (serving
/// the connection's requests) runs next. When `at_once` says the handshake cannot wait, the
/// thread that accepted runs it before it hands the loop on. The loop ends when `stopping()`
/// says so and [`Listening::stop`] wakes it.
pub fn listen<St, A, H>(
    addr: SocketAddr,
    name: String,
    stopping: St,
    at_once: A,
    handshake: H,
) -> EngineResult<Listening>
where
    St: Fn() -> bool + Send + 'static,
    A: Fn(&TcpStream) -> bool + Send + 'static,
    H: Fn(TcpStream, Slot) -> Option<Job> + Clone + Send + 'static,
{
    let listener = TcpListener::bind(addr)
        .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot listen on {addr}: {e}")))?;
    if let Err(e) = crate::sys::stream_io::set_backlog(&listener, BACKLOG) {
        log::debug!(target: TARGET, "{addr}: the listen backlog stays at the default: {e}");
    }
    let socket = listener
        .try_clone()
        .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot listen on {addr}: {e}")))?;
    let accept = AcceptLoop { listener, admission: Admission::default(), name, stopping, at_once, handshake };
    if threads::hand_over(accept, AcceptLoop::run).is_err() {
        return Err(EngineError::new(ADXL_FAILED, "cannot start the listener: no thread for it"));
    }
    Ok(Listening { socket })
}

/// The accept loop's state, which moves from thread to thread: the thread that accepts a
/// connection serves it and hands the loop to another ([`threads::hand_over`]), so a new
/// connection's HELLO is answered by the thread that was woken for it, not by one woken next.
struct AcceptLoop<St, A, H> {
    listener: TcpListener,
    admission: Admission,
    name: String,
    stopping: St,
    at_once: A,
    handshake: H,
}

impl<St, A, H> AcceptLoop<St, A, H>
where
    St: Fn() -> bool + Send + 'static,
    A: Fn(&TcpStream) -> bool + Send + 'static,
    H: Fn(TcpStream, Slot) -> Option<Job> + Clone + Send + 'static,
{
    fn run(mut self) {
        loop {
            let accepted = self.listener.accept();
            if (self.stopping)() {
                break;
            }
            let Ok((stream, _)) = accepted else {
                // E.g. out of descriptors: do not spin.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            // Out of descriptors for its clone: the stream is dropped here, closed before
            // a byte is read.
            let Some(slot) = self.admission.admit(&stream, &self.name) else { continue };
            // The handshake runs here before the loop moves on only when nothing in it waits
            // (the peer has sent all of its part): the peer has its answer one hand-over
            // sooner. Otherwise the loop moves on first: a peer slow with its HELLO must not
            // hold the accepts.
            let rest: Job = if (self.at_once)(&stream) {
                let serving = (self.handshake)(stream, slot);
                Box::new(move || {
                    if let Some(serve) = serving {
                        serve()
                    }
                })
            } else {
                let handshake = self.handshake.clone();
                Box::new(move || {
                    if let Some(serve) = handshake(stream, slot) {
                        serve()
                    }
                })
            };
            match threads::hand_over(self, Self::run) {
                Ok(()) => return rest(),
                Err(back) => {
                    self = back;
                    // No thread to spare: this one goes on accepting; refused, the stream is
                    // dropped, closed.
                    threads::run(rest);
                }
            }
        }
        self.admission.close_all();
    }
}
