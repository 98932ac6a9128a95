//! The initiator's side of TransferSync: the call's descriptors go out in as few requests as
//! the limits allow (all sent before the first answer is read), payloads stream straight from
//! and into the caller's memory, and the call returns when every request is COMPLETE.

use std::io;
use std::time::Instant;

use super::link::{Conn, Link, io_status, remaining, wire_status};
use crate::adxl::wire::{Desc, MAX_DESCS, Message};
use crate::error::adxl_status::ADXL_FAILED;
use crate::error::{AdxlError, AdxlResult};
use crate::sys::span::RawSpan;
use crate::sys::stream_io::{Part, send_all, send_gather};

/// READ (remote into local) or WRITE (local into remote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferOp {
    Read,
    Write,
}

/// One descriptor, its local side resolved to memory the engine may touch.
pub struct Local {
    pub span: RawSpan,
    pub desc: Desc,
}

/// How a failed conversation leaves the connection.
enum Fault {
    /// The peer answered with an error status; the connection is still in step.
    Refused(AdxlError),
    /// Time-out or protocol error: the connection's state is unknown, drop it.
    Lost(AdxlError),
    /// End of file or reset: the peer is gone.
    Broken(AdxlError),
}

fn from_io(remote: &str, e: io::Error) -> Fault {
    let err = io_status(remote, "transfer with", &e);
    if err.status == ADXL_FAILED { Fault::Broken(err) } else { Fault::Lost(err) }
}

/// Runs the whole call on one connection of `link`.
pub fn run(
    core: &super::Core,
    link: &Link,
    op: TransferOp,
    locals: &[Local],
    deadline: Instant,
) -> AdxlResult<()> {
    let mut conn = link.take(core, deadline)?;
    match converse(&mut conn, &link.remote, op, locals, deadline) {
        Ok(()) => {
            link.give_back(conn);
            Ok(())
        }
        Err(Fault::Refused(e)) => {
            link.give_back(conn);
            Err(e)
        }
        Err(Fault::Lost(e)) => {
            link.discard(conn, false);
            Err(e)
        }
        Err(Fault::Broken(e)) => {
            link.discard(conn, true);
            Err(e)
        }
    }
}

fn set_timeouts(conn: &Conn, remote: &str, deadline: Instant) -> Result<(), Fault> {
    let left = remaining(deadline, remote, "transfer with").map_err(Fault::Lost)?;
    conn.stream.set_read_timeout(Some(left)).map_err(|e| from_io(remote, e))?;
    conn.stream.set_write_timeout(Some(left)).map_err(|e| from_io(remote, e))
}

fn converse(
    conn: &mut Conn,
    remote: &str,
    op: TransferOp,
    locals: &[Local],
    deadline: Instant,
) -> Result<(), Fault> {
    let io = |e: io::Error| from_io(remote, e);
    let batches: Vec<&[Local]> = locals.chunks(MAX_DESCS).collect();
    set_timeouts(conn, remote, deadline)?;
    match op {
        TransferOp::Write => {
            for (id, batch) in batches.iter().enumerate() {
                let frame =
                    Message::Write { id: id as u64, descs: batch.iter().map(|l| l.desc).collect() }.encode();
                let mut parts = Vec::with_capacity(batch.len() + 1);
                parts.push(Part::Bytes(&frame));
                parts.extend(batch.iter().map(|l| Part::Span(&l.span, 0, l.span.len())));
                send_gather(&conn.stream, &parts, Some(deadline)).map_err(io)?;
            }
        }
        TransferOp::Read => {
            let mut frames = Vec::new();
            for (id, batch) in batches.iter().enumerate() {
                frames.extend(
                    Message::Read { id: id as u64, descs: batch.iter().map(|l| l.desc).collect() }.encode(),
                );
            }
            send_all(&conn.stream, &frames).map_err(io)?;
        }
    }
    let mut first_error = None;
    for (id, batch) in batches.iter().enumerate() {
        let id = id as u64;
        let mut msg = next(conn, remote)?;
        if let (TransferOp::Read, Message::ReadData { id: got, len }) = (op, &msg) {
            let expected: u64 = batch.iter().map(|l| l.desc.len).sum();
            if *got != id || *len != expected {
                return Err(Fault::Lost(AdxlError::new(
                    ADXL_FAILED,
                    format!("{remote} sent READ_DATA out of order"),
                )));
            }
            let ranges: Vec<(&RawSpan, usize, usize)> =
                batch.iter().map(|l| (&l.span, 0, l.span.len())).collect();
            conn.reader.payload(&conn.stream, &ranges, Some(deadline)).map_err(io)?;
            msg = next(conn, remote)?;
        }
        match msg {
            Message::Complete { id: got, status, failed, message } if got == id => {
                if status != 0 && first_error.is_none() {
                    let at = if failed == u32::MAX {
                        String::new()
                    } else {
                        format!(" (descriptor {})", id as usize * MAX_DESCS + failed as usize)
                    };
                    first_error = Some(AdxlError::new(status, format!("{remote}: {message}{at}")));
                }
            }
            _ => {
                return Err(Fault::Lost(AdxlError::new(
                    ADXL_FAILED,
                    format!("{remote} answered out of order"),
                )));
            }
        }
        if id + 1 < batches.len() as u64 {
            set_timeouts(conn, remote, deadline)?;
        }
    }
    match first_error {
        Some(e) => Err(Fault::Refused(e)),
        None => Ok(()),
    }
}

/// The next frame that answers a request (announcements are skipped).
fn next(conn: &mut Conn, remote: &str) -> Result<Message, Fault> {
    loop {
        match conn.reader.frame(&conn.stream) {
            Ok(Message::MemAdd { .. } | Message::MemRemove { .. }) => continue,
            Ok(m) => return Ok(m),
            Err(e) => {
                let err = wire_status(remote, "transfer with", e);
                return Err(if err.status == ADXL_FAILED { Fault::Broken(err) } else { Fault::Lost(err) });
            }
        }
    }
}
