//! Dialling again when a peer drops a connection in its handshake.
//!
//! A listening engine keeps at most [`MAX_PENDING`](crate::engine::limits::MAX_PENDING) connections in their handshake and
//! shuts the oldest down to admit a new one, so that a flood of idle connections cannot lock
//! honest peers out. An honest Connect caught in such a flood may be shut down too, before its
//! HELLO_ACK: that is worth another try, not a failure. A connection closed or reset by the
//! peer before HELLO_ACK is therefore dialled again, after a short pause (doubling from
//! [`FIRST_PAUSE`] up to [`MAX_PAUSE`]), until the call's deadline. Anything else is final: a
//! peer that is not listening, a refusal in HELLO_ACK (wrong secret, the served-connection
//! limit), a malformed answer, a time-out. A time-out of a try made *after* a drop is the
//! deadline catching the redialling, not a new kind of failure: the call then reports the
//! drop (FAILED, with the number of tries), as it would have had it not tried again.

use std::io;
use std::time::{Duration, Instant};

use crate::engine::conn::status::{io_status, wire_status};
use crate::engine::wire::WireError;
use crate::error::EngineError;
use crate::error::engine_status::ADXL_TIMEOUT;
use crate::logging::TARGET;

/// The pause before the first new try.
pub const FIRST_PAUSE: Duration = Duration::from_millis(5);
/// The longest pause between two tries.
pub const MAX_PAUSE: Duration = Duration::from_millis(100);

/// How one try to open a connection failed.
#[derive(Debug)]
pub enum Attempt {
    /// The peer closed or reset the connection before its HELLO_ACK: dial again.
    Dropped(EngineError),
    /// Anything else: the call fails with it.
    Final(EngineError),
}

impl From<EngineError> for Attempt {
    fn from(e: EngineError) -> Attempt {
        Attempt::Final(e)
    }
}

impl Attempt {
    pub fn into_error(self) -> EngineError {
        match self {
            Attempt::Dropped(e) | Attempt::Final(e) => e,
        }
    }
}

/// Whether `e` says the peer closed or reset the connection.
fn dropped(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(e.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof)
}

/// An I/O error of the handshake, as [`io_status`] reports it, marked [`Attempt::Dropped`]
/// when the peer closed or reset the connection.
pub fn io(remote: &str, what: &str, e: &io::Error) -> Attempt {
    let status = io_status(remote, what, e);
    if dropped(e) { Attempt::Dropped(status) } else { Attempt::Final(status) }
}

/// A frame that could not be read in the handshake, as [`wire_status`] reports it, marked as
/// [`io`] does.
pub fn wire(remote: &str, what: &str, e: WireError) -> Attempt {
    match e {
        WireError::Io(e) => io(remote, what, &e),
        other => Attempt::Final(wire_status(remote, what, other)),
    }
}

/// Runs `attempt` until it succeeds, fails for good, or a dropped try leaves no time before
/// `deadline` (then the last try's error is returned, saying how many were made).
pub fn until<T>(
    deadline: Instant,
    remote: &str,
    mut attempt: impl FnMut() -> Result<T, Attempt>,
) -> Result<T, EngineError> {
    let mut pause = FIRST_PAUSE;
    let mut tries = 0u32;
    let mut last_drop: Option<EngineError> = None;
    let gave_up =
        |e: EngineError, tries: u32| EngineError::new(e.status, format!("{} ({tries} tries)", e.message));
    loop {
        tries += 1;
        let e = match attempt() {
            Ok(t) => return Ok(t),
            Err(Attempt::Final(e)) => match last_drop {
                Some(drop) if e.status == ADXL_TIMEOUT => return Err(gave_up(drop, tries)),
                _ => return Err(e),
            },
            Err(Attempt::Dropped(e)) => e,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left <= pause {
            return Err(gave_up(e, tries));
        }
        last_drop = Some(e.clone());
        log::debug!(target: TARGET, "{remote} dropped the connection in its handshake ({}); dialling again", e.message);
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::engine_status::ADXL_FAILED;

    fn failed(why: &str) -> EngineError {
        EngineError::new(ADXL_FAILED, why)
    }

    #[test]
    fn dropped_tries_are_repeated_until_one_succeeds() {
        let mut n = 0;
        let r = until(Instant::now() + Duration::from_secs(5), "p", || {
            n += 1;
            if n < 4 { Err(Attempt::Dropped(failed("reset"))) } else { Ok(n) }
        });
        assert_eq!(r.unwrap(), 4);
    }

    #[test]
    fn a_final_failure_is_not_repeated() {
        let mut n = 0;
        let r: Result<(), _> = until(Instant::now() + Duration::from_secs(5), "p", || {
            n += 1;
            Err(Attempt::Final(failed("refused")))
        });
        assert_eq!((n, r.unwrap_err().message.as_str()), (1, "refused"));
    }

    #[test]
    fn a_time_out_after_a_drop_reports_the_drop() {
        let mut n = 0;
        let r: Result<(), _> = until(Instant::now() + Duration::from_secs(5), "p", || {
            n += 1;
            if n == 1 {
                Err(Attempt::Dropped(failed("reset")))
            } else {
                Err(Attempt::Final(EngineError::new(ADXL_TIMEOUT, "out of time")))
            }
        });
        let e = r.unwrap_err();
        assert_eq!((e.status, e.message.as_str()), (ADXL_FAILED, "reset (2 tries)"));
        let first: Result<(), _> = until(Instant::now() + Duration::from_secs(5), "p", || {
            Err(Attempt::Final(EngineError::new(ADXL_TIMEOUT, "out of time")))
        });
        assert_eq!(first.unwrap_err().status, ADXL_TIMEOUT, "a first try's time-out stays one");
    }

    #[test]
    fn dropped_tries_stop_at_the_deadline_with_the_count() {
        let start = Instant::now();
        let r: Result<(), _> =
            until(start + Duration::from_millis(300), "p", || Err(Attempt::Dropped(failed("reset"))));
        let e = r.unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(300), "{:?}", start.elapsed());
        assert!(e.message.starts_with("reset (") && e.message.ends_with(" tries)"), "{}", e.message);
    }

    #[test]
    fn resets_and_ends_of_file_are_dropped_connections_time_outs_are_not() {
        let kind = |k: io::ErrorKind| matches!(io("p", "connect to", &k.into()), Attempt::Dropped(_));
        assert!(kind(io::ErrorKind::ConnectionReset));
        assert!(kind(io::ErrorKind::UnexpectedEof));
        assert!(kind(io::ErrorKind::BrokenPipe));
        assert!(!kind(io::ErrorKind::TimedOut));
        assert!(!kind(io::ErrorKind::ConnectionRefused));
        assert!(matches!(wire("p", "connect to", WireError::BadMagic), Attempt::Final(_)));
    }
}
