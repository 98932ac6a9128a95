//! The statuses a connection's failures become, shared by everything that talks to a peer
//! (links, the handshakes, the transfer paths). A leaf: it knows errors, not connections.

use std::io;
use std::time::{Duration, Instant};

use crate::engine::wire::WireError;
use crate::error::engine_status::{ADXL_FAILED, ADXL_TIMEOUT};
use crate::error::{EngineError, EngineResult};

/// Maps an I/O error of a connection to the status the caller sees: a read or write time-out
/// is TIMEOUT, anything else (reset, end of file, refused) FAILED.
pub fn io_status(remote: &str, what: &str, e: &io::Error) -> EngineError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            EngineError::new(ADXL_TIMEOUT, format!("{what} {remote}: timed out"))
        }
        _ => EngineError::new(ADXL_FAILED, format!("{what} {remote}: {e}")),
    }
}

/// Maps a frame that could not be read: I/O errors as [`io_status`], a bad frame FAILED.
pub fn wire_status(remote: &str, what: &str, e: WireError) -> EngineError {
    match e {
        WireError::Io(io) => io_status(remote, what, &io),
        other => EngineError::new(ADXL_FAILED, format!("{what} {remote}: {other}")),
    }
}

/// What is left of `deadline`, or TIMEOUT.
pub fn remaining(deadline: Instant, remote: &str, what: &str) -> EngineResult<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| EngineError::new(ADXL_TIMEOUT, format!("{what} {remote}: timed out")))
}
