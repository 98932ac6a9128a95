//! The listener of an engine named with a port: it accepts connections, admits them
//! ([`crate::engine::conn::admit`] bounds in number and time the ones that have not finished
//! HELLO) and hands each to a serving thread ([`crate::engine::conn::serve`]). It knows nothing
//! of the engine beyond its name.
//!
//! A connection is served by one thread for its life. The threads are one pool for the whole
//! process that keeps a few idle ones ([`KEEP_IDLE`]) rather than one spawned per connection:
//! starting and ending a thread costs more than the rest of a loopback Connect's work on the
//! serving side, and Connect, Disconnect, Connect again, or a new engine in place of the last,
//! is what a process sees most.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::engine::conn::admit::{Admission, Slot};
use crate::error::engine_status::ADXL_FAILED;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sync::{Job, Pool, PoolOptions, spawn_named};

/// Connections the kernel may complete before the listener accepts them (capped by
/// `net.core.somaxconn`): a burst from a flood is queued rather than answered by dropping
/// SYNs, which would cost an honest peer caught in it a second per dropped SYN. The listener
/// takes them quickly: each only evicts the oldest pending handshake ([`crate::engine::conn::admit`]).
pub const BACKLOG: u32 = 4096;

/// Idle serving threads kept for the next connections (as many as a burst of connections to
/// the engines of a process usually needs at once).
const KEEP_IDLE: usize = 64;
/// Idle serving threads end after this long (well within the time tests give a server's
/// thread count to settle after a flood).
const IDLE_EXIT: Duration = Duration::from_secs(2);
/// Serving threads at most, over all engines: far above what engines admit (each bounds its
/// own connections, served and in their handshake); a connection beyond waits for a thread.
const MAX_SERVING: usize = 16384;

/// Runs `job` (serving one connection) on the process's serving threads; `false` if refused.
fn serve_on_a_thread(job: Job) -> bool {
    static SERVING: OnceLock<Option<Pool>> = OnceLock::new();
    let pool = SERVING.get_or_init(|| {
        Pool::new(PoolOptions {
            name: "adxl-serve".into(),
            min_workers: 0,
            max_workers: MAX_SERVING,
            capacity: MAX_SERVING,
            idle_exit: Some(IDLE_EXIT),
            max_idle: KEEP_IDLE,
        })
        .inspect_err(|e| log::warn!(target: TARGET, "cannot make the serving threads' pool: {e}"))
        .ok()
    });
    pool.as_ref().is_some_and(|p| p.submit(job).is_ok())
}

/// Binds `addr` and starts accepting for the engine `name`: each connection admitted is given
/// to `serve` on a serving thread, with its place among the pending handshakes. Returns the
/// listener's thread; it ends when `stopping()` says so and a connection wakes it ([`wake`]).
pub fn listen<S>(
    addr: SocketAddr,
    name: String,
    stopping: impl Fn() -> bool + Send + 'static,
    serve: S,
) -> EngineResult<JoinHandle<()>>
where
    S: Fn(TcpStream, Slot) + Clone + Send + 'static,
{
    let listener = TcpListener::bind(addr)
        .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot listen on {addr}: {e}")))?;
    if let Err(e) = crate::sys::stream_io::set_backlog(&listener, BACKLOG) {
        log::debug!(target: TARGET, "{addr}: the listen backlog stays at the default: {e}");
    }
    spawn_named("adxl-listen", move || {
        let mut admission = Admission::default();
        for stream in listener.incoming() {
            if stopping() {
                break;
            }
            let Ok(stream) = stream else {
                // E.g. out of descriptors: do not spin.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            // Out of descriptors for its clone: the stream is dropped here, closed before
            // a byte is read.
            let Some(slot) = admission.admit(&stream, &name) else { continue };
            let serve = serve.clone();
            // Refused: the stream is dropped, closed.
            serve_on_a_thread(Box::new(move || serve(stream, slot)));
        }
        admission.close_all();
    })
    .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot start the listener thread: {e}")))
}

/// Wakes the listener so it sees `stopping` and exits.
pub fn wake(addr: SocketAddr) {
    let mut target = addr;
    if target.ip().is_unspecified() {
        target.set_ip(if addr.is_ipv4() {
            [127, 0, 0, 1].into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let _ = TcpStream::connect_timeout(&target, Duration::from_secs(1));
}
