//! The serving side: one thread per accepted connection ([`crate::engine::conn::listener`]
//! accepts them) that answers HELLO and then READ, WRITE, NOTIFY and UCX_QUERY requests.
//!
//! Every range of a request is checked against this engine's own registry: inside a
//! registration it is read or written in place (device memory through the runtime's view);
//! outside, it is relayed through the bounded pool with the kernel doing the copy
//! (`sys::safe_copy`), so a bad address becomes PARAM_INVALID in COMPLETE, never a fault here;
//! with `adxl.RemoteAccess=registered`, outside is PARAM_INVALID.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::access::RemoteAccess;
use crate::engine::conn::admit::{HELLO_DEADLINE, Slot, Until};
use crate::engine::conn::auth;
use crate::engine::conn::listener;
use crate::engine::conn::reader::FrameReader;
use crate::engine::conn::served::Served;
use crate::engine::core::Core;
use crate::engine::limits::MAX_SERVED;
use crate::engine::path::ucx;
use crate::engine::peer_notify::Notified;
use crate::engine::registry::Registered;
use crate::engine::wire::{Desc, MemKind, Message};
use crate::error::EngineResult;
use crate::error::engine_status::{ADXL_PARAM_INVALID, ADXL_RESOURCE_EXHAUSTED};
use crate::logging::TARGET;
use crate::runtime::memory;
use crate::sync::{Job, lock};
use crate::sys::safe_copy;
use crate::sys::stream_io::{Part, send_all, send_from, send_gather};

/// A peer that accepts no bytes for this long, or sends none in the middle of a WRITE's
/// payload, loses its connection (a send or receive makes no progress).
pub const STALL: Duration = Duration::from_secs(10);

/// Listens on `addr` for the engine and serves every connection admitted; the loop ends when
/// the engine is stopping and [`listener::Listening::stop`] is called.
pub fn start(core: &Arc<Core>, addr: SocketAddr) -> EngineResult<listener::Listening> {
    let (quick, serving) = (core.clone(), core.clone());
    listener::listen(
        addr,
        core.name.text.clone(),
        move |stream: &TcpStream| answers_at_once(&quick, stream),
        move |stream, slot| handshake(&serving, stream, slot),
    )
}

/// Most registrations for which HELLO_ACK (16 bytes a region, plus names) surely fits the send
/// buffer of a new connection (at least 16 KiB), so sending it cannot wait.
const QUICK_REGIONS: usize = 256;

/// Whether the handshake of a new connection can run to its end without waiting: the engine
/// has no secret (one message each way), the peer's whole HELLO has arrived, and HELLO_ACK is
/// small. Then the thread that accepted it answers before it does anything else.
fn answers_at_once(core: &Core, stream: &TcpStream) -> bool {
    if core.access.secret.is_some() || core.registry.len() > QUICK_REGIONS {
        return false;
    }
    crate::engine::conn::reader::small_frame_arrived(stream)
}

/// Runs the handshake of one accepted connection: `Some` (serving its requests, to run next)
/// once HELLO_ACK went out. `slot` (its place among the pending handshakes) is given back once
/// its HELLO has arrived; the stream is shut down if the slot is evicted before.
fn handshake(core: &Arc<Core>, stream: TcpStream, slot: Slot) -> Option<Job> {
    let _ = stream.set_nodelay(true);
    // HELLO_ACK (up to 16384 regions) is sent under the write lock: a peer that reads nothing
    // must not hold it, and the thread, for ever.
    let _ = stream.set_write_timeout(Some(STALL));
    // One deadline for the whole handshake (authentication and HELLO), not one per read.
    let mut until = Until { stream: &stream, deadline: Instant::now() + HELLO_DEADLINE };
    let hello = auth::accept(&stream, &mut until, core.access.secret.as_ref(), &core.name.text)?;
    // From here the connection is bounded by MAX_SERVED, no longer by the pending places.
    if !slot.settle() {
        return None;
    }
    let peer = hello.name;
    let clone = stream.try_clone().ok()?;
    let served = Arc::new(Served::new(clone));
    // Registered and answered under the write lock, so no announcement precedes HELLO_ACK;
    // the memory list is read after registering, so no registration is missed either.
    let turn = served.turn();
    let Some(id) = core.served.add(served.clone()) else {
        let ack = Message::HelloAck {
            status: ADXL_RESOURCE_EXHAUSTED,
            name: core.name.text.clone(),
            regions: vec![],
            message: format!("{} already serves {MAX_SERVED} connections", core.name.text),
            host: None,
        };
        let _ = send_all(&stream, &ack.encode());
        return None;
    };
    let ack = Message::HelloAck {
        status: 0,
        name: core.name.text.clone(),
        regions: core.registry.regions(),
        message: String::new(),
        host: lock(&core.shm).as_ref().and_then(|s| s.offer(hello.host.as_ref())),
    };
    let ok = send_all(&stream, &ack.encode()).is_ok() && stream.set_read_timeout(None).is_ok();
    drop(turn);
    let core = core.clone();
    let end = move |core: &Core, stream: &TcpStream| {
        let _ = stream.shutdown(Shutdown::Both);
        core.served.remove(id);
    };
    if !ok {
        end(&core, &stream);
        return None;
    }
    Some(Box::new(move || {
        if let Err(e) = requests(&core, &stream, &served, &peer) {
            log::debug!(target: TARGET, "connection from {peer} closed: {e}");
        }
        end(&core, &stream);
    }))
}

/// Answers requests until BYE, end of file or a malformed frame.
fn requests(core: &Core, s: &TcpStream, served: &Served, peer: &str) -> io::Result<()> {
    let mut reader = FrameReader::default();
    loop {
        let m = reader.frame(s).map_err(|e| io::Error::other(e.to_string()))?;
        // Finalize left this connection to its thread (input was waiting): it ends here.
        if core.served.is_closed() {
            return Ok(());
        }
        match m {
            Message::Write { id, descs } => {
                // The payload is read without the write lock (announcements may go out
                // meanwhile) and under a stall bound, so a peer that stops in the middle
                // holds neither this engine's RegisterMem nor the thread for ever.
                s.set_read_timeout(Some(STALL))?;
                let refusal = serve_write(core, s, &mut reader, &descs)?;
                s.set_read_timeout(None)?;
                let _turn = served.turn();
                complete(s, id, refusal)?
            }
            Message::Read { id, descs } => {
                let _turn = served.turn();
                serve_read(core, s, id, &descs)?
            }
            Message::Notify { id, name, msg } => {
                let status = core.notifies.push(peer, Notified { name, msg });
                let message = if status == 0 { String::new() } else { "too many notifies queued".into() };
                let _turn = served.turn();
                send_all(s, &Message::Complete { id, status, failed: u32::MAX, message }.encode())?
            }
            Message::Ping { id } => {
                let _turn = served.turn();
                send_all(
                    s,
                    &Message::Complete { id, status: 0, failed: u32::MAX, message: String::new() }.encode(),
                )?
            }
            Message::UcxQuery { id } => {
                let answer = ucx::answer(&core.ucx, &core.dialer(), id).encode();
                let _turn = served.turn();
                send_all(s, &answer)?
            }
            Message::MemAdd { .. } | Message::MemRemove { .. } => {}
            Message::Bye => return Ok(()),
            other => return Err(io::Error::other(format!("unexpected {other:?}"))),
        }
    }
}

enum Target {
    Direct(Arc<Registered>),
    Relay,
}

/// A refusal: status, the descriptor at fault, why.
type Refusal = (u32, u32, String);

/// Where each descriptor goes, or why the request is refused (the seed's relay rule).
fn plan(core: &Core, descs: &[Desc]) -> Result<Vec<Target>, Refusal> {
    let invalid = |i: usize, why: String| (ADXL_PARAM_INVALID, i as u32, why);
    let mut targets = Vec::with_capacity(descs.len());
    let (mut relay, mut first_pair, mut mixed) = (false, None, None);
    let host_if_unregistered = |k: MemKind| if k == MemKind::Unregistered { MemKind::Host } else { k };
    for (i, d) in descs.iter().enumerate() {
        let (Ok(addr), Ok(len)) = (usize::try_from(d.remote_addr), usize::try_from(d.len)) else {
            return Err(invalid(i, "address out of range".into()));
        };
        if addr == 0 || addr.checked_add(len).is_none() {
            return Err(invalid(i, format!("remote range {addr:#x} + {len} bytes is not valid")));
        }
        let (target, kind) = match core.registry.find_shared(addr, len) {
            Some(r) => {
                let k = r.kind;
                (Target::Direct(r), k)
            }
            None if core.access.remote_access == RemoteAccess::Registered => {
                return Err(invalid(
                    i,
                    format!(
                        "remote range {addr:#x} + {len} bytes is not inside memory registered with {}, which only allows registered memory (adxl.RemoteAccess=registered)",
                        core.name.text
                    ),
                ));
            }
            None if core.pool.enabled() => (Target::Relay, MemKind::Unregistered),
            None => {
                return Err(invalid(
                    i,
                    format!(
                        "remote range {addr:#x} + {len} bytes is not registered and the relay pool is off (BufferPool 0:0)"
                    ),
                ));
            }
        };
        relay |= kind == MemKind::Unregistered || d.local_kind == MemKind::Unregistered;
        let pair = (host_if_unregistered(d.local_kind), host_if_unregistered(kind));
        match first_pair {
            None => first_pair = Some(pair),
            Some(p) if p != pair && mixed.is_none() => mixed = Some(i),
            _ => {}
        }
        targets.push(target);
    }
    if let (true, Some(i)) = (relay, mixed) {
        return Err(invalid(
            i,
            "relay mode needs every descriptor of a call to have the same transfer type".into(),
        ));
    }
    Ok(targets)
}

fn complete(s: &TcpStream, id: u64, refusal: Option<Refusal>) -> io::Result<()> {
    let (status, failed, message) = refusal.unwrap_or((0, u32::MAX, String::new()));
    send_all(s, &Message::Complete { id, status, failed, message }.encode())
}

/// Reads and throws away `len` bytes (the payload of a refused WRITE).
fn drain(s: &TcpStream, reader: &mut FrameReader, mut len: u64) -> io::Result<()> {
    let mut scratch = [0u8; 64 * 1024];
    while len > 0 {
        let n = (len as usize).min(scratch.len());
        reader.read_exact(s, &mut scratch[..n])?;
        len -= n as u64;
    }
    Ok(())
}

fn bad_address(i: usize, addr: usize, e: &io::Error) -> Refusal {
    (ADXL_PARAM_INVALID, i as u32, format!("unregistered address {addr:#x} cannot be accessed: {e}"))
}

/// Reads a WRITE's payload into place; the refusal to answer with, if any.
fn serve_write(
    core: &Core,
    s: &TcpStream,
    reader: &mut FrameReader,
    descs: &[Desc],
) -> io::Result<Option<Refusal>> {
    let (targets, mut refusal) = match plan(core, descs) {
        Ok(t) => (t, None),
        Err(r) => (Vec::new(), Some(r)),
    };
    if refusal.is_none() && targets.iter().all(|t| matches!(t, Target::Direct(_))) {
        // Every range registered: the whole payload lands in place with few system calls.
        let ranges: Vec<(&crate::sys::span::RawSpan, usize, usize)> = descs
            .iter()
            .zip(&targets)
            .filter_map(|(d, t)| match t {
                Target::Direct(r) => Some((&r.span, d.remote_addr as usize - r.addr, d.len as usize)),
                Target::Relay => None,
            })
            .collect();
        reader.payload(s, &ranges, None)?;
        return Ok(None);
    }
    for (i, d) in descs.iter().enumerate() {
        let (addr, len) = (d.remote_addr as usize, d.len as usize);
        if refusal.is_some() {
            drain(s, reader, d.len)?;
            continue;
        }
        match &targets[i] {
            Target::Direct(r) => reader.payload(s, &[(&r.span, addr - r.addr, len)], None)?,
            Target::Relay => {
                let mut buf = core.pool.take().expect("planned relays have a pool");
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(buf.bytes().len());
                    reader.read_exact(s, &mut buf.bytes()[..n])?;
                    if refusal.is_none() {
                        if let Err(e) = relay_write(addr + done, &buf.bytes()[..n]) {
                            refusal = Some(bad_address(i, addr + done, &e));
                        }
                    }
                    done += n;
                }
            }
        }
    }
    Ok(refusal)
}

fn serve_read(core: &Core, s: &TcpStream, id: u64, descs: &[Desc]) -> io::Result<()> {
    let targets = match plan(core, descs) {
        Ok(t) => t,
        Err(r) => return complete(s, id, Some(r)),
    };
    let total = descs.iter().map(|d| d.len).sum();
    let head = Message::ReadData { id, len: total }.encode();
    if targets.iter().all(|t| matches!(t, Target::Direct(_))) {
        // Every range registered: header, data and COMPLETE leave together, from memory.
        let tail = Message::Complete { id, status: 0, failed: u32::MAX, message: String::new() }.encode();
        let mut parts = Vec::with_capacity(descs.len() + 2);
        parts.push(Part::Bytes(&head));
        for (d, t) in descs.iter().zip(&targets) {
            if let Target::Direct(r) = t {
                parts.push(Part::Span(&r.span, d.remote_addr as usize - r.addr, d.len as usize));
            }
        }
        parts.push(Part::Bytes(&tail));
        return send_gather(s, &parts, None);
    }
    send_all(s, &head)?;
    let mut refusal = None;
    for (i, d) in descs.iter().enumerate() {
        let (addr, len) = (d.remote_addr as usize, d.len as usize);
        match &targets[i] {
            _ if refusal.is_some() => send_zeros(s, len)?,
            Target::Direct(r) => send_from(s, &r.span, addr - r.addr, len)?,
            Target::Relay => {
                let mut buf = core.pool.take().expect("planned relays have a pool");
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(buf.bytes().len());
                    let chunk = &mut buf.bytes()[..n];
                    if refusal.is_none() {
                        if let Err(e) = relay_read(addr + done, chunk) {
                            refusal = Some(bad_address(i, addr + done, &e));
                        }
                    }
                    if refusal.is_some() {
                        chunk.fill(0);
                    }
                    send_all(s, chunk)?;
                    done += n;
                }
            }
        }
    }
    complete(s, id, refusal)
}

/// Copies into unregistered memory: through the runtime's view when it is the runtime's
/// (device memory may be inaccessible to host code), else by the kernel, which checks it.
fn relay_write(addr: usize, data: &[u8]) -> io::Result<()> {
    match memory::runtime_span(addr, data.len()) {
        Some(span) => {
            span.write_slice(data);
            Ok(())
        }
        None => safe_copy::write(addr, data),
    }
}

/// As [`relay_write`], the other way.
fn relay_read(addr: usize, out: &mut [u8]) -> io::Result<()> {
    match memory::runtime_span(addr, out.len()) {
        Some(span) => {
            span.read_into(out);
            Ok(())
        }
        None => safe_copy::read(addr, out),
    }
}

/// The rest of a READ_DATA whose request failed: zeros, so the stream stays in step.
fn send_zeros(s: &TcpStream, mut len: usize) -> io::Result<()> {
    let zeros = [0u8; 64 * 1024];
    while len > 0 {
        let n = len.min(zeros.len());
        send_all(s, &zeros[..n])?;
        len -= n;
    }
    Ok(())
}
