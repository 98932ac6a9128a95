//! The UCX transport, built (the parent module says how it fits the engine).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::slot::Peer;
use crate::engine::conn::dialer::Dialer;
use crate::engine::conn::link::{Conn, Link};
use crate::engine::conn::status::wire_status;
use crate::engine::options::{Rdma, Transport};
use crate::engine::path::direct::Counters;
use crate::engine::path::tcp::{self, Local, TransferOp};
use crate::engine::registry::Registered;
use crate::engine::wire::{MAX_BODY, MAX_REGIONS, MemKind, Message, UcxKey};
use crate::error::engine_status::{ADXL_FAILED, ADXL_TIMEOUT, ADXL_UNSUPPORTED};
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::sync::{lock, spawn_named};
use crate::sys::stream_io::{peer_closed, readable, send_all};
use crate::sys::ucx::{Context, Item, MemMap, Op, RunError, rdma_devices_present};

/// How long the progress thread waits on the worker's event descriptor before it looks
/// whether the engine is finalizing.
const PROGRESS_WAIT: Duration = Duration::from_millis(50);
/// Room kept in a UCX_INFO frame for everything but the keys.
const INFO_SLACK: usize = 4096;

/// Whether this build has the UCX transport.
pub const BUILT: bool = true;

/// UCX is compiled in: every transport can be asked for.
pub fn check_built(_transport: Transport) -> EngineResult<()> {
    Ok(())
}

/// The engine's UCX context, started at first use (a link that wants UCX, or a peer's
/// UCX_QUERY), so engines that never use UCX never load its transports.
#[derive(Default)]
pub struct State {
    started: OnceLock<Result<Arc<Running>, String>>,
    /// What the context is configured with beyond UCX's own configuration.
    config: Vec<(&'static str, String)>,
}

/// UCX's names for the engine's RDMA settings: `RdmaTrafficClass` is the IB/RoCE traffic
/// class (`UCX_IB_TRAFFIC_CLASS`, the same 8 bits: DSCP << 2 on RoCE), `RdmaServiceLevel` the
/// InfiniBand service level (`UCX_IB_SL`). Only settings that were given (option or `HCCL_`
/// variable) are passed, so UCX's own configuration stays in charge otherwise.
pub fn rdma_config(rdma: Rdma) -> Vec<(&'static str, String)> {
    let mut config = Vec::new();
    if let Some(tc) = rdma.traffic_class {
        config.push(("IB_TRAFFIC_CLASS", tc.to_string()));
    }
    if let Some(sl) = rdma.service_level {
        config.push(("IB_SL", sl.to_string()));
    }
    config
}

impl State {
    /// The state of an engine with these RDMA settings. They are set only on a host with RDMA
    /// devices: elsewhere no UCX transport has them, and UCX would warn that they are unused.
    pub fn new(rdma: Rdma) -> State {
        let config = if rdma_devices_present() { rdma_config(rdma) } else { Vec::new() };
        State { started: OnceLock::new(), config }
    }
}

/// A started context: its worker's progress thread and the registered memory it mapped.
pub struct Running {
    ctx: Arc<Context>,
    /// Registered memory mapped with UCP, by the address of its bytes here and its handle.
    maps: Mutex<BTreeMap<(usize, u64), Mapped>>,
    stop: Arc<AtomicBool>,
    progress: Mutex<Option<JoinHandle<()>>>,
}

struct Mapped {
    /// The region's address as peers name it (the registration's, not where its bytes are).
    addr: u64,
    map: Arc<MemMap>,
    /// The packed remote key, made once.
    rkey: Vec<u8>,
}

impl State {
    fn get(&self, dialer: &Dialer) -> Result<Arc<Running>, String> {
        self.started.get_or_init(|| start(dialer, &self.config)).clone()
    }

    fn running(&self) -> Option<Arc<Running>> {
        self.started.get().and_then(|r| r.as_ref().ok().cloned())
    }

    /// Finalize: stops the progress thread and unmaps the registered memory (links were closed
    /// first, so their endpoints are gone or going).
    pub fn stop(&self) {
        if let Some(r) = self.running() {
            r.stop.store(true, Ordering::Release);
            if let Some(t) = lock(&r.progress).take() {
                let _ = t.join();
            }
            lock(&r.maps).clear();
        }
    }
}

fn start(dialer: &Dialer, config: &[(&'static str, String)]) -> Result<Arc<Running>, String> {
    let ctx = Context::with_config(None, config).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (ctx, stop) = (ctx.clone(), stop.clone());
        spawn_named("adxl-ucx", move || {
            while !stop.load(Ordering::Acquire) {
                ctx.wait(PROGRESS_WAIT);
            }
        })
        .map_err(|e| format!("starting the UCX progress thread: {e}"))?
    };
    let running = Arc::new(Running {
        ctx,
        maps: Mutex::new(BTreeMap::new()),
        stop,
        progress: Mutex::new(Some(thread)),
    });
    for r in dialer.registry.all() {
        running.map(&r);
    }
    log::debug!(target: TARGET, "engine {}: UCX started (settings {config:?})", dialer.name);
    Ok(running)
}

impl Running {
    /// Maps a registration (once).
    fn map(&self, r: &Registered) {
        let key = (r.span.addr(), r.handle);
        if lock(&self.maps).contains_key(&key) {
            return;
        }
        let mapped = self.ctx.map(&r.span).and_then(|map| Ok((map.packed_rkey()?, map)));
        match mapped {
            Ok((rkey, map)) => {
                lock(&self.maps).entry(key).or_insert(Mapped {
                    addr: r.addr as u64,
                    map: Arc::new(map),
                    rkey,
                });
            }
            Err(e) => log::warn!(
                target: TARGET,
                "UCX cannot map registered memory {:#x} + {} bytes ({e}); transfers on it use TCP",
                r.addr,
                r.len
            ),
        }
    }

    /// The mapping that holds every byte of each local span; `None` if one has none.
    fn mappings(&self, locals: &[Local]) -> Option<Vec<Arc<MemMap>>> {
        let maps = lock(&self.maps);
        let mut last: Option<(usize, usize, &Arc<MemMap>)> = None;
        locals
            .iter()
            .map(|l| {
                let (start, end) = (l.span.addr(), l.span.addr() + l.span.len());
                // Descriptors of one call usually fall in one registration: try the last first.
                if let Some((_, _, m)) = last.filter(|&(b, t, _)| b <= start && end <= t) {
                    return Some(m.clone());
                }
                let ((base, _), m) =
                    maps.range(..=(start, u64::MAX)).rev().find(|((b, _), m)| end <= b + m.map.len())?;
                last = Some((*base, base + m.map.len(), &m.map));
                Some(m.map.clone())
            })
            .collect()
    }

    /// The keys of the mapped regions, as many as fit one frame beside `worker`.
    fn keys(&self, worker: usize) -> Vec<UcxKey> {
        let maps = lock(&self.maps);
        let mut room = MAX_BODY - INFO_SLACK - worker;
        let mut keys = Vec::new();
        for m in maps.values() {
            let size = 28 + m.rkey.len();
            if size > room || keys.len() == MAX_REGIONS {
                log::warn!(target: TARGET, "UCX_INFO holds {} of {} regions; the rest use TCP", keys.len(), maps.len());
                break;
            }
            room -= size;
            keys.push(UcxKey {
                addr: m.addr,
                len: m.map.len() as u64,
                base: m.map.base(),
                rkey: m.rkey.clone(),
            });
        }
        keys
    }
}

/// A registration of this engine: mapped when UCX runs.
pub fn registered(ucx: &State, r: &Registered) {
    if let Some(running) = ucx.running() {
        running.map(r);
    }
}

/// A deregistration: its mapping goes (a transfer still using it keeps it until it ends).
pub fn deregistered(ucx: &State, r: &Registered) {
    if let Some(running) = ucx.running() {
        lock(&running.maps).remove(&(r.span.addr(), r.handle));
    }
}

/// The server's answer to UCX_QUERY.
pub fn answer(ucx: &State, dialer: &Dialer, id: u64) -> Message {
    let refuse = |status, message: String| Message::UcxInfo {
        id,
        status,
        message,
        worker: Vec::new(),
        keys: Vec::new(),
    };
    if matches!(dialer.transport, Transport::Tcp | Transport::Shm) {
        let t = if dialer.transport == Transport::Tcp { "tcp" } else { "shm" };
        return refuse(ADXL_UNSUPPORTED, format!("this engine's transport is {t}"));
    }
    match ucx.get(dialer) {
        Ok(running) => {
            let worker = running.ctx.address();
            let keys = running.keys(worker.len());
            Message::UcxInfo { id, status: 0, message: String::new(), worker, keys }
        }
        Err(why) => refuse(ADXL_FAILED, format!("UCX did not start on this engine: {why}")),
    }
}

/// How asking the peer went wrong.
enum Fault {
    /// The peer does not offer UCX, or UCX here cannot reach it; the connection is fine.
    Refused(String),
    /// The connection failed (`true`: the peer is gone).
    Conn(EngineError, bool),
}

/// A failed conversation of the TCP path's helpers.
impl From<tcp::Fault> for Fault {
    fn from(f: tcp::Fault) -> Fault {
        match f {
            tcp::Fault::Refused(e) | tcp::Fault::Lost(e) => Fault::Conn(e, false),
            tcp::Fault::Broken(e) => Fault::Conn(e, true),
        }
    }
}

/// Applies the announcements already waiting on the connection (no waiting for more).
fn drain(conn: &mut Conn, link: &Link, deadline: Instant) -> Result<(), Fault> {
    if !conn.reader.has_buffered() && !readable(&conn.stream) {
        return Ok(());
    }
    tcp::set_timeouts(conn, &link.remote, deadline)?;
    while conn.reader.has_buffered() || readable(&conn.stream) {
        let m = next_or_announcement(conn, link)?;
        if let Some(other) = m {
            return Err(Fault::Conn(
                EngineError::new(ADXL_FAILED, format!("{} sent {other:?} unasked", link.remote)),
                false,
            ));
        }
    }
    Ok(())
}

/// One frame: `None` when it was an announcement (applied).
fn next_or_announcement(conn: &mut Conn, link: &Link) -> Result<Option<Message>, Fault> {
    match conn.reader.frame(&conn.stream) {
        Ok(m @ (Message::MemAdd { .. } | Message::MemRemove { .. })) => {
            link.note(&m);
            Ok(None)
        }
        Ok(m) => Ok(Some(m)),
        Err(e) => {
            let e = wire_status(&link.remote, "transfer with", e);
            let broken = e.status == ADXL_FAILED;
            Err(Fault::Conn(e, broken))
        }
    }
}

/// UCX_QUERY on `conn`: the peer's worker address and keys.
fn ask(conn: &mut Conn, link: &Link, deadline: Instant) -> Result<(Vec<u8>, Vec<UcxKey>), Fault> {
    tcp::set_timeouts(conn, &link.remote, deadline)?;
    send_all(&conn.stream, &Message::UcxQuery { id: 0 }.encode())
        .map_err(|e| tcp::from_io(&link.remote, e))?;
    match tcp::next(conn, link)? {
        Message::UcxInfo { id: 0, status: 0, worker, keys, .. } => Ok((worker, keys)),
        Message::UcxInfo { status, message, .. } => {
            Err(Fault::Refused(format!("the peer does not offer UCX ({status}: {message})")))
        }
        other => Err(Fault::Conn(
            EngineError::new(ADXL_FAILED, format!("{} answered UCX_QUERY with {other:?}", link.remote)),
            false,
        )),
    }
}

/// Asks the peer and makes an endpoint to it with its keys.
fn establish(running: &Running, conn: &mut Conn, link: &Link, deadline: Instant) -> Result<Arc<Peer>, Fault> {
    let (worker, keys) = ask(conn, link, deadline)?;
    let ep = running
        .ctx
        .connect(&worker, deadline)
        .map_err(|e| Fault::Refused(format!("UCX cannot reach it: {e}")))?;
    let peer = Arc::new(Peer { ep, keys: Mutex::new(Vec::new()) });
    peer.set_keys(&keys, &link.remote);
    link.ucx.stale.store(false, Ordering::Release);
    *lock(&link.ucx.peer) = Some(peer.clone());
    Ok(peer)
}

/// At Connect, after HELLO: whether the link will use UCX. Forced (`ucx`), a peer or a
/// context that cannot is FAILED; under `auto` the link keeps TCP.
pub fn open(ucx: &State, dialer: &Dialer, link: &Link, deadline: Instant) -> EngineResult<bool> {
    let forced = dialer.transport == Transport::Ucx;
    let refused = |why: String| {
        if forced {
            Err(EngineError::new(
                ADXL_FAILED,
                format!("connect to {}: the transport is ucx but {why}", link.remote),
            ))
        } else {
            log::debug!(target: TARGET, "{}: TCP ({why})", link.remote);
            Ok(false)
        }
    };
    let running = match ucx.get(dialer) {
        Ok(r) => r,
        Err(why) => return refused(format!("UCX did not start here: {why}")),
    };
    let mut conn = link.take(dialer, deadline)?;
    match establish(&running, &mut conn, link, deadline) {
        Ok(_) => {
            link.give_back(conn);
            link.ucx.in_use.store(true, Ordering::Release);
            log::debug!(target: TARGET, "{}: UCX", link.remote);
            Ok(true)
        }
        Err(Fault::Refused(why)) => {
            link.give_back(conn);
            refused(why)
        }
        Err(Fault::Conn(e, broken)) => {
            link.discard(conn, broken);
            Err(e)
        }
    }
}

/// What a call on UCX came to.
enum Run {
    Done(EngineResult<()>),
    /// Not for UCX (a range without a key): the caller goes on with TCP.
    Tcp,
    /// The borrowed connection failed (`true`: the peer is gone).
    Lost(EngineError, bool),
}

/// The call over UCX, when the link uses it and every range is mapped and keyed; `None` sends
/// it to TCP.
pub fn try_run(
    ucx: &State,
    dialer: &Dialer,
    counters: &Counters,
    link: &Link,
    op: TransferOp,
    locals: &[Local],
    deadline: Instant,
) -> Option<EngineResult<()>> {
    if !link.ucx.in_use() || locals.iter().any(|l| l.desc.local_kind == MemKind::Unregistered) {
        return None;
    }
    let running = ucx.running()?;
    let maps = running.mappings(locals)?;
    let mut conn = match link.take(dialer, deadline) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    match run(counters, &running, link, &mut conn, op, locals, &maps, deadline) {
        Run::Done(r) => {
            link.give_back(conn);
            Some(r)
        }
        Run::Tcp => {
            link.give_back(conn);
            None
        }
        Run::Lost(e, broken) => {
            link.discard(conn, broken);
            if broken {
                link.ucx.clear(true);
            }
            Some(Err(e))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    counters: &Counters,
    running: &Running,
    link: &Link,
    conn: &mut Conn,
    op: TransferOp,
    locals: &[Local],
    maps: &[Arc<MemMap>],
    deadline: Instant,
) -> Run {
    let remote = link.remote.as_str();
    let lost = |f: Fault| match f {
        Fault::Conn(e, broken) => Run::Lost(e, broken),
        Fault::Refused(why) => {
            Run::Done(Err(EngineError::new(ADXL_FAILED, format!("transfer with {remote}: {why}"))))
        }
    };
    // Announcements waiting here first, so a region the peer removed has lost its key.
    if let Err(f) = drain(conn, link, deadline) {
        return lost(f);
    }
    let peer = match link.ucx.current() {
        Some(p) => p,
        None => match establish(running, conn, link, deadline) {
            Ok(p) => p,
            Err(f) => return lost(f),
        },
    };
    let mut keys = peer.cover(locals.iter().map(|l| (l.desc.remote_addr, l.desc.len)));
    if keys.is_none() && link.ucx.stale.swap(false, Ordering::AcqRel) {
        match ask(conn, link, deadline) {
            Ok((_, fresh)) => peer.set_keys(&fresh, remote),
            Err(f) => return lost(f),
        }
        keys = peer.cover(locals.iter().map(|l| (l.desc.remote_addr, l.desc.len)));
    }
    let Some(keys) = keys else { return Run::Tcp };
    let items: Vec<Item> = locals
        .iter()
        .zip(&keys)
        .zip(maps)
        .map(|((l, k), m)| Item {
            local: &l.span,
            offset: 0,
            len: l.span.len(),
            memh: Some(m),
            remote_addr: k.base + (l.desc.remote_addr - k.addr),
            rkey: &k.rkey,
        })
        .collect();
    counters.ucx(locals.iter().map(|l| l.span.len()).sum());
    let ucx_op = match op {
        TransferOp::Read => Op::Get,
        TransferOp::Write => Op::Put,
    };
    let stream = &conn.stream;
    match peer.ep.run(ucx_op, &items, deadline, &mut || !peer_closed(stream)) {
        Ok(()) => Run::Done(Ok(())),
        Err(RunError::Timeout) => {
            link.ucx.forget(&peer);
            Run::Done(Err(EngineError::new(ADXL_TIMEOUT, format!("transfer with {remote}: timed out"))))
        }
        Err(RunError::PeerGone(why)) => {
            link.ucx.forget(&peer);
            Run::Lost(
                EngineError::new(ADXL_FAILED, format!("transfer with {remote}: the peer is gone ({why})")),
                true,
            )
        }
        Err(RunError::Failed(e)) => {
            link.ucx.forget(&peer);
            Run::Done(Err(EngineError::new(ADXL_FAILED, format!("transfer with {remote} over UCX: {e}"))))
        }
    }
}

#[cfg(test)]
mod rdma_tests {
    use super::*;

    #[test]
    fn rdma_settings_are_ucx_ib_options_when_given() {
        assert!(rdma_config(Rdma::default()).is_empty());
        let config = rdma_config(Rdma { traffic_class: Some(132), service_level: Some(4) });
        assert_eq!(config, [("IB_TRAFFIC_CLASS", "132".to_owned()), ("IB_SL", "4".to_owned())]);
        assert_eq!(
            rdma_config(Rdma { traffic_class: None, service_level: Some(0) }),
            [("IB_SL", "0".to_owned())]
        );
    }
}
