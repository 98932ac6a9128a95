//! The initiator's side of TransferSync: the call's descriptors go out in as few requests as
//! the limits allow (all sent before the first answer is read), payloads stream straight from
//! and into the caller's memory, and the call returns when every request is COMPLETE.
//!
//! A large call in direct mode is striped: its bytes are split evenly over [`STRIPES`]
//! connections of the link, run side by side; a stripe whose connection breaks shuts the
//! others down, so the call fails at once. Calls that may relay are never striped, so the
//! peer sees the whole call in order and can apply the relay rule to it.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::conn::dialer::Dialer;
use crate::engine::conn::link::{Conn, Link};
use crate::engine::conn::status::{io_status, remaining, wire_status};
use crate::engine::conn::watch::Conversation;
use crate::engine::wire::{Desc, MAX_DESCS, Message};
use crate::error::engine_status::{ADXL_FAILED, ADXL_NOTIFY_FAILED, ADXL_TIMEOUT};
use crate::error::{EngineError, EngineResult};
use crate::sync::lock;
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

/// Connections a large call is spread over.
pub const STRIPES: usize = 2;
/// Calls moving at least this many bytes are striped (when in direct mode).
pub const STRIPE_MIN: usize = 16 << 20;

/// A part of one descriptor: `len` bytes from `offset` of its local span (and of its remote
/// range).
#[derive(Clone, Copy)]
struct Piece<'a> {
    local: &'a Local,
    offset: usize,
    len: usize,
}

impl Piece<'_> {
    fn desc(&self) -> Desc {
        let d = self.local.desc;
        Desc {
            remote_addr: d.remote_addr + self.offset as u64,
            len: self.len as u64,
            local_kind: d.local_kind,
        }
    }
}

/// Splits the call's bytes into `k` stripes of (nearly) equal size, cutting descriptors where
/// needed.
fn stripes(locals: &[Local], k: usize) -> Vec<Vec<Piece<'_>>> {
    let total: usize = locals.iter().map(|l| l.span.len()).sum();
    let share = total.div_ceil(k).max(1);
    let mut out = vec![Vec::new()];
    let mut room = share;
    for l in locals {
        let mut offset = 0;
        let len = l.span.len();
        if len == 0 {
            out.last_mut().expect("one stripe at least").push(Piece { local: l, offset: 0, len: 0 });
            continue;
        }
        while offset < len {
            if room == 0 {
                out.push(Vec::new());
                room = share;
            }
            let n = room.min(len - offset);
            out.last_mut().expect("one stripe at least").push(Piece { local: l, offset, len: n });
            offset += n;
            room -= n;
        }
    }
    out
}

/// The connections of a striped call's stripes. A stripe whose connection breaks shuts the
/// others down, so the call fails at once instead of waiting for a stripe that may be slow or
/// stalled (up to the time-out) when its result no longer matters.
struct Siblings {
    /// Clones of the connections of the stripes still talking, by stripe; `None` once one
    /// broke (and the others were shut down).
    open: Mutex<Option<Vec<(usize, TcpStream)>>>,
}

impl Siblings {
    fn open(&self) -> std::sync::MutexGuard<'_, Option<Vec<(usize, TcpStream)>>> {
        lock(&self.open)
    }

    /// Records stripe `i`'s connection; `false` when another stripe broke already.
    fn join(&self, i: usize, conn: &Conn) -> bool {
        let mut open = self.open();
        match open.as_mut() {
            Some(v) => {
                if let Ok(clone) = conn.stream.try_clone() {
                    v.push((i, clone));
                }
                true
            }
            None => false,
        }
    }

    /// Stripe `i` is done with its connection; `false` when it was shut down meanwhile.
    fn leave(&self, i: usize) -> bool {
        match self.open().as_mut() {
            Some(v) => {
                v.retain(|(j, _)| *j != i);
                true
            }
            None => false,
        }
    }

    /// A stripe broke: every other stripe's connection is shut down.
    fn broke(&self) {
        for (_, s) in self.open().take().unwrap_or_default() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// How a failed conversation leaves the connection.
pub(super) enum Fault {
    /// The peer answered with an error status; the connection is still in step.
    Refused(EngineError),
    /// Time-out or protocol error: the connection's state is unknown, drop it.
    Lost(EngineError),
    /// End of file or reset: the peer is gone.
    Broken(EngineError),
}

pub(super) fn from_io(remote: &str, e: io::Error) -> Fault {
    let err = io_status(remote, "transfer with", &e);
    if err.status == ADXL_FAILED { Fault::Broken(err) } else { Fault::Lost(err) }
}

/// Runs the call: on one connection of `link`, or striped over several when `striped` (the
/// caller knows every range is registered on both sides) and the call is large.
pub fn run(
    dialer: &Dialer,
    link: &Link,
    op: TransferOp,
    locals: &[Local],
    striped: bool,
    deadline: Instant,
) -> EngineResult<()> {
    let total: usize = locals.iter().map(|l| l.span.len()).sum();
    if !striped || total < STRIPE_MIN {
        let pieces: Vec<Piece> =
            locals.iter().map(|l| Piece { local: l, offset: 0, len: l.span.len() }).collect();
        return run_one(dialer, link, op, &pieces, deadline, None);
    }
    let parts = stripes(locals, STRIPES);
    let siblings = Siblings { open: Mutex::new(Some(Vec::new())) };
    let results: Vec<EngineResult<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let siblings = &siblings;
                scope.spawn(move || run_one(dialer, link, op, p, deadline, Some((i, siblings))))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Err(EngineError::new(ADXL_FAILED, "a transfer stripe panicked")))
            })
            .collect()
    });
    results.into_iter().collect()
}

/// Runs `pieces` on one connection of `link`; a stripe of a call also gets its number and
/// its [`Siblings`].
fn run_one(
    dialer: &Dialer,
    link: &Link,
    op: TransferOp,
    pieces: &[Piece],
    deadline: Instant,
    stripe: Option<(usize, &Siblings)>,
) -> EngineResult<()> {
    let mut conn = link.take(dialer, deadline)?;
    if let Some((i, siblings)) = stripe {
        if !siblings.join(i, &conn) {
            link.give_back(conn);
            return Err(EngineError::new(
                ADXL_FAILED,
                format!("transfer with {}: another stripe failed", link.remote),
            ));
        }
    }
    let result = converse(&mut conn, link, op, pieces, deadline);
    if let (Err(Fault::Broken(_)), Some((_, siblings))) = (&result, stripe) {
        siblings.broke();
    }
    // A connection a broken sibling shut down is in no state to be used again.
    let usable = stripe.is_none_or(|(i, siblings)| siblings.leave(i));
    match result {
        Ok(()) if usable => {
            link.give_back(conn);
            Ok(())
        }
        Err(Fault::Refused(e)) if usable => {
            link.give_back(conn);
            Err(e)
        }
        Ok(()) => {
            link.discard(conn, false);
            Ok(())
        }
        Err(Fault::Refused(e) | Fault::Lost(e)) => {
            link.discard(conn, false);
            Err(e)
        }
        Err(Fault::Broken(e)) => {
            link.discard(conn, true);
            Err(e)
        }
    }
}

/// Bounds every wait on the connection by what is left of `deadline`. The socket keeps its
/// time-out between calls, and one already set that is at most a tenth (and a millisecond)
/// longer is kept: a caller repeating the same time-out pays no system call per transfer, and
/// a wait ends at most that much after the deadline.
pub(super) fn set_timeouts(conn: &mut Conn, remote: &str, deadline: Instant) -> Result<(), Fault> {
    let left = remaining(deadline, remote, "transfer with").map_err(Fault::Lost)?;
    let slack = left / 10 + Duration::from_millis(1);
    if conn.timeout.is_some_and(|t| t >= left && t <= left + slack) {
        return Ok(());
    }
    conn.timeout = None;
    conn.stream.set_read_timeout(Some(left)).map_err(|e| from_io(remote, e))?;
    conn.stream.set_write_timeout(Some(left)).map_err(|e| from_io(remote, e))?;
    conn.timeout = Some(left);
    Ok(())
}

fn converse(
    conn: &mut Conn,
    link: &Link,
    op: TransferOp,
    pieces: &[Piece],
    deadline: Instant,
) -> Result<(), Fault> {
    let remote = link.remote.as_str();
    let io = |e: io::Error| from_io(remote, e);
    let batches: Vec<&[Piece]> = pieces.chunks(MAX_DESCS).collect();
    let talking = Conversation::start();
    set_timeouts(conn, remote, deadline)?;
    match op {
        TransferOp::Write => {
            for (id, batch) in batches.iter().enumerate() {
                if id > 0 {
                    set_timeouts(conn, remote, deadline)?;
                }
                let frame =
                    Message::Write { id: id as u64, descs: batch.iter().map(Piece::desc).collect() }.encode();
                let mut parts = Vec::with_capacity(batch.len() + 1);
                parts.push(Part::Bytes(&frame));
                parts.extend(batch.iter().map(|p| Part::Span(&p.local.span, p.offset, p.len)));
                send_gather(&conn.stream, &parts, Some(deadline)).map_err(io)?;
            }
        }
        TransferOp::Read => {
            let mut frames = Vec::new();
            for (id, batch) in batches.iter().enumerate() {
                frames.extend(
                    Message::Read { id: id as u64, descs: batch.iter().map(Piece::desc).collect() }.encode(),
                );
            }
            send_all(&conn.stream, &frames).map_err(io)?;
        }
    }
    let mut first_error = None;
    for (id, batch) in batches.iter().enumerate() {
        let id = id as u64;
        // Each wait gets what is left of the time-out: the socket's, set for an earlier wait,
        // would let a late one run that long again, past the deadline.
        set_timeouts(conn, remote, deadline)?;
        if !conn.reader.has_buffered() {
            talking.watch_for_reply(&conn.stream);
        }
        let mut msg = next(conn, link)?;
        if let (TransferOp::Read, Message::ReadData { id: got, len }) = (op, &msg) {
            let expected: u64 = batch.iter().map(|p| p.len as u64).sum();
            if *got != id || *len != expected {
                return Err(Fault::Lost(EngineError::new(
                    ADXL_FAILED,
                    format!("{remote} sent READ_DATA out of order"),
                )));
            }
            let ranges: Vec<(&RawSpan, usize, usize)> =
                batch.iter().map(|p| (&p.local.span, p.offset, p.len)).collect();
            set_timeouts(conn, remote, deadline)?;
            conn.reader.payload(&conn.stream, &ranges, Some(deadline)).map_err(io)?;
            set_timeouts(conn, remote, deadline)?;
            msg = next(conn, link)?;
        }
        match msg {
            Message::Complete { id: got, status, failed, message } if got == id => {
                if status != 0 && first_error.is_none() {
                    let at = if failed == u32::MAX {
                        String::new()
                    } else {
                        format!(" (descriptor {})", id as usize * MAX_DESCS + failed as usize)
                    };
                    first_error = Some(EngineError::new(status, format!("{remote}: {message}{at}")));
                }
            }
            _ => {
                return Err(Fault::Lost(EngineError::new(
                    ADXL_FAILED,
                    format!("{remote} answered out of order"),
                )));
            }
        }
    }
    match first_error {
        Some(e) => Err(Fault::Refused(e)),
        None => Ok(()),
    }
}

/// Sends `message` (NOTIFY or PING, id 0) on `conn` and reads its COMPLETE: the peer's
/// status and message.
fn exchange(
    conn: &mut Conn,
    link: &Link,
    message: &Message,
    deadline: Instant,
) -> Result<(u32, String), Fault> {
    let remote = link.remote.as_str();
    set_timeouts(conn, remote, deadline)?;
    send_all(&conn.stream, &message.encode()).map_err(|e| from_io(remote, e))?;
    match next(conn, link)? {
        Message::Complete { id: 0, status, message, .. } => Ok((status, message)),
        _ => Err(Fault::Lost(EngineError::new(ADXL_FAILED, format!("{remote} answered out of order")))),
    }
}

/// SendNotify on one connection of `link`: the peer's refusal is returned as is; a broken
/// connection is NOTIFY_FAILED; a time-out TIMEOUT.
pub fn notify(dialer: &Dialer, link: &Link, name: &str, msg: &str, deadline: Instant) -> EngineResult<()> {
    let mut conn = link.take(dialer, deadline)?;
    let message = Message::Notify { id: 0, name: name.to_owned(), msg: msg.to_owned() };
    let notify_failed = |e: EngineError| EngineError::new(ADXL_NOTIFY_FAILED, e.message);
    match exchange(&mut conn, link, &message, deadline) {
        Ok((0, _)) => {
            link.give_back(conn);
            Ok(())
        }
        Ok((status, why)) => {
            link.give_back(conn);
            Err(EngineError::new(status, format!("{}: {why}", link.remote)))
        }
        Err(Fault::Refused(e)) => {
            link.give_back(conn);
            Err(e)
        }
        Err(Fault::Lost(e)) => {
            link.discard(conn, false);
            Err(if e.status == ADXL_TIMEOUT { e } else { notify_failed(e) })
        }
        Err(Fault::Broken(e)) => {
            link.discard(conn, true);
            Err(notify_failed(e))
        }
    }
}

/// One heartbeat on an idle connection of `link` (none idle: the link is busy, so alive):
/// `Ok(())` when the peer answered, `Err(true)` when the connection broke (end of file,
/// reset), `Err(false)` on a time-out.
pub fn ping(link: &Link, deadline: Instant) -> Result<(), bool> {
    let Some(mut conn) = link.take_idle() else { return Ok(()) };
    match exchange(&mut conn, link, &Message::Ping { id: 0 }, deadline) {
        Ok(_) | Err(Fault::Refused(_)) => {
            link.give_back(conn);
            Ok(())
        }
        Err(Fault::Lost(_)) => {
            link.discard(conn, false);
            Err(false)
        }
        Err(Fault::Broken(_)) => {
            link.discard(conn, true);
            Err(true)
        }
    }
}

/// The next frame that answers a request (announcements are skipped).
pub(super) fn next(conn: &mut Conn, link: &Link) -> Result<Message, Fault> {
    let remote = link.remote.as_str();
    loop {
        match conn.reader.frame(&conn.stream) {
            Ok(m @ (Message::MemAdd { .. } | Message::MemRemove { .. })) => link.note(&m),
            Ok(m) => return Ok(m),
            Err(e) => {
                let err = wire_status(remote, "transfer with", e);
                return Err(if err.status == ADXL_FAILED { Fault::Broken(err) } else { Fault::Lost(err) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::wire::MemKind;
    use crate::runtime::memory;

    fn local(len: usize, remote: u64) -> Local {
        let a = memory::alloc_host(len.max(1)).unwrap();
        Local {
            span: memory::runtime_span(a, len).unwrap(),
            desc: Desc { remote_addr: remote, len: len as u64, local_kind: MemKind::Host },
        }
    }

    #[test]
    fn stripes_share_the_bytes_evenly_and_cover_every_byte_once() {
        let locals =
            [local(10 << 20, 0x1000_0000), local(0, 0x5000), local(1, 0x7000), local(20 << 20, 0x2000_0000)];
        let parts = stripes(&locals, 2);
        assert_eq!(parts.len(), 2);
        let sizes: Vec<usize> = parts.iter().map(|p| p.iter().map(|x| x.len).sum()).collect();
        let total = (30 << 20) + 1;
        assert_eq!(sizes.iter().sum::<usize>(), total);
        assert!(sizes[0] == total.div_ceil(2), "{sizes:?}");
        // Each descriptor's pieces are contiguous and remote addresses follow the offsets.
        let all: Vec<Desc> = parts.iter().flatten().map(Piece::desc).collect();
        let big: Vec<&Desc> = all.iter().filter(|d| d.remote_addr >= 0x2000_0000).collect();
        assert_eq!(big.len(), 2);
        assert_eq!(big[0].remote_addr + big[0].len, big[1].remote_addr);
        assert_eq!(big[0].len + big[1].len, 20 << 20);
    }
}
