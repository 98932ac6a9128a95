//! The transfer engine (safe Rust): Initialize/Finalize, RegisterMem/DeregisterMem,
//! Connect/Disconnect, TransferSync/TransferAsync and SendNotify/GetNotifies, over TCP, UCX, or
//! shared memory with engines on the same host. It serves every face: the native C API
//! (`ascendless.h`, `src/ffi/engine/`), the C++ `adxl::AdxlEngine` and `hixl::Hixl` in `src/cxx/` (which call
//! the native C API) and Python's `acl.adxl`; none of their vocabulary belongs here.
//!
//! One concern per file. [`Engine`] (here) is the facade; [`core`] wires the services of an
//! initialised engine together, each with its own file and lock:
//! - [`links`] (the links this engine made), [`conn::served`] (the connections it serves),
//!   [`requests`] (TransferAsync requests and the workers that run them), [`connect_async`]
//!   (HIXL's ConnectAsync/DisconnectAsync on a bounded pool), [`peer_notify`] (the
//!   SendNotify/GetNotifies queue; not `aclrtNotify`, which is `crate::runtime::notify`);
//! - [`registry`] (registered memory), [`heartbeat`] (the heartbeat of engines with
//!   AutoConnect, which needs only the links), [`limits`] (every count the engine bounds);
//!   [`threads`] (the process's pool of threads engines block on: serving, accepting,
//!   following a same-host peer); locks and workers come from the crate's shared layer,
//!   [`crate::sync`];
//! - [`conn`]: connections, the ones this engine makes (links, the [`conn::dialer`] they are
//!   given instead of the whole core, the secret's handshake, redialling) and the ones it
//!   serves (listener, admission, serving, served connections);
//! - [`path`]: the paths of a transfer's bytes (same-host direct, UCX, TCP, relay);
//! - what the faces parse and share: [`name`], [`options`] (with the [`Settings`] an engine
//!   runs with, resolved at Initialize: nothing below this facade reads the environment),
//!   [`access`], [`capability`], [`memory`] (MallocMem/FreeMem), and the wire format, [`wire`].
//!
//! No file of the engine imports one that imports it (`tests/module_graph.rs` checks).
//!
//! # Access control (our extension)
//! `adxl.Secret` makes every connection start with a mutual challenge-response ([`conn::auth`]); a
//! Connect it refuses (either side has no secret, or they differ) is FAILED.
//! `adxl.RemoteAccess=registered` makes the serving side refuse ranges outside its
//! registrations (PARAM_INVALID) instead of relaying. See [`access`].
//!
//! # Who vouches for memory
//! The engine is safe Rust: it touches memory only through [`RawSpan`]s. Memory of the
//! runtime (device memory from `aclrtMalloc`, pinned host memory) is reached through the
//! runtime's own view ([`crate::runtime::memory::runtime_span`]), so device memory works in strict mode. Any
//! other local range, registered or passed to TransferSync, is made into a span by the `vouch`
//! closure the caller passes (the FFI layer's single `unsafe` step, on the strength of the C
//! caller's contract). Remote engines' addresses that are not registered are never trusted:
//! they are copied by the kernel (`sys::safe_copy`).
//!
//! # States and statuses
//! Every call before Initialize or after Finalize is FAILED; Finalize is idempotent, and an
//! engine may be initialised again after it. Statuses follow the spec's "Behaviour and error
//! returns"; where it is silent: a second Initialize is FAILED; registering 0 bytes is
//! PARAM_INVALID; a 513th link is RESOURCE_EXHAUSTED (links to dead peers that were never
//! disconnected are dropped first); connecting to a name without a port is FAILED (nobody
//! listens there); a transfer in flight when its peer dies is FAILED at once (end of file or
//! reset, not the time-out); the next transfer or Connect dials again, so a restarted peer is
//! reachable without a Disconnect.

mod acceptor;
pub(crate) mod access;
pub(crate) mod capability;
mod conn;
pub mod connect_async;
mod core;
mod heartbeat;
pub(crate) mod limits;
mod links;
pub mod memory;
pub mod name;
pub(crate) mod options;
mod path;
mod peer_notify;
mod registry;
mod requests;
mod threads;
pub mod wire;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use conn::admit::HELLO_DEADLINE;
pub use conn::serve::STALL;
pub use connect_async::AsyncConnectStatus;
pub use limits::{
    MAX_LINKS, MAX_NOTIFIES, MAX_PENDING as MAX_PENDING_HELLOS, MAX_REQUESTS, MAX_SAME_HOST_PEERS, MAX_SERVED,
};
pub use options::{DEFAULT_ASYNC_TIMEOUT, HEARTBEAT_INTERVAL, HEARTBEAT_MISSES, Settings, Transport};
pub use path::direct::CounterValues;
pub use path::tcp::TransferOp;
pub use peer_notify::{MAX_LEN as MAX_NOTIFY_LEN, Notified};
pub use requests::{
    Outcome, Polled, TRANSFER_COMPLETED, TRANSFER_FAILED, TRANSFER_TIMEOUT, TRANSFER_WAITING,
};

use self::core::Core;
use crate::error::engine_status::*;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;
use crate::runtime::memory::{self as runtime_memory, Placement};
use crate::sync::{Refused, lock, spawn_named};
use crate::sys::span::{HostRange, RawSpan};
use conn::link::Link;
use conn::{serve, watch};
use name::EngineName;
use options::Options;
use path::tcp::{self, Local};
use path::{direct, shm, ucx};
pub use registry::Offer;
use requests::Poll;
use wire::{Desc, MemKind, Message};
pub use wire::{NO_TAG, Region};

/// `adxl::MemType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemType {
    Device,
    Host,
}

impl MemType {
    /// 0 `MEM_DEVICE`, 1 `MEM_HOST`; anything else PARAM_INVALID.
    pub fn from_raw(raw: i32) -> EngineResult<MemType> {
        match raw {
            0 => Ok(MemType::Device),
            1 => Ok(MemType::Host),
            _ => Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("memory type {raw} is not MEM_DEVICE (0) or MEM_HOST (1)"),
            )),
        }
    }
}

impl TransferOp {
    /// 0 `READ`, 1 `WRITE`; anything else PARAM_INVALID.
    pub fn from_raw(raw: i32) -> EngineResult<TransferOp> {
        match raw {
            0 => Ok(TransferOp::Read),
            1 => Ok(TransferOp::Write),
            _ => Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("operation {raw} is not READ (0) or WRITE (1)"),
            )),
        }
    }
}

/// `adxl::TransferOpDesc`: addresses as integers; the engine resolves and checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferDesc {
    pub local_addr: usize,
    pub remote_addr: usize,
    pub len: usize,
}

enum State {
    New,
    Running(Arc<Core>),
    Finalized,
}

/// One ADXL engine. Every method may be called from any thread.
pub struct Engine {
    state: Mutex<State>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.finalize();
    }
}

fn positive_timeout(timeout_ms: i32) -> EngineResult<Duration> {
    if timeout_ms <= 0 {
        return Err(EngineError::new(ADXL_PARAM_INVALID, format!("timeout {timeout_ms} ms must be > 0")));
    }
    Ok(Duration::from_millis(timeout_ms as u64))
}

/// Zero addresses and ranges that wrap are PARAM_INVALID.
fn check_descs(descs: &[TransferDesc]) -> EngineResult<()> {
    for (i, d) in descs.iter().enumerate() {
        if d.local_addr == 0 || d.remote_addr == 0 {
            return Err(EngineError::new(ADXL_PARAM_INVALID, format!("descriptor {i} has a zero address")));
        }
        if d.local_addr.checked_add(d.len).is_none() || d.remote_addr.checked_add(d.len).is_none() {
            return Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("descriptor {i} wraps the address space"),
            ));
        }
    }
    Ok(())
}

/// The span for a local range: the runtime's view of its memory, or the caller's word.
fn local_span(
    addr: usize,
    len: usize,
    writable: bool,
    vouch: &mut impl FnMut(HostRange) -> RawSpan,
) -> EngineResult<RawSpan> {
    if let Some(span) = runtime_memory::runtime_span(addr, len) {
        return Ok(span);
    }
    if let Some(b) = runtime_memory::backing(addr).filter(|b| matches!(b.placement, Placement::Device(_))) {
        return Err(EngineError::new(
            ADXL_PARAM_INVALID,
            format!(
                "{addr:#x} + {len} bytes runs past its device allocation ({:#x}, {} bytes)",
                b.start, b.len
            ),
        ));
    }
    Ok(vouch(HostRange { addr, len, writable }))
}

impl Engine {
    pub fn new() -> Engine {
        Engine { state: Mutex::new(State::New) }
    }

    fn core(&self) -> EngineResult<Arc<Core>> {
        match &*lock(&self.state) {
            State::Running(core) => Ok(core.clone()),
            State::New => Err(EngineError::new(ADXL_FAILED, "the engine is not initialized")),
            State::Finalized => Err(EngineError::new(ADXL_FAILED, "the engine was finalized")),
        }
    }

    /// `Initialize(local_engine, options)`: validates both, then listens when the name has a
    /// port > 0. The variables that options fall back to (`ASCENDLESS_TRANSPORT`, ...) are
    /// read from the process environment, here and only here.
    pub fn initialize(&self, local_engine: &str, options: &[(&str, &str)]) -> EngineResult<()> {
        self.initialize_with(local_engine, options, Settings::from_env)
    }

    /// [`Engine::initialize`] with the variables looked up by `var` instead of the process
    /// environment (for tests, and for hosts that configure engines otherwise).
    pub fn initialize_with_vars(
        &self,
        local_engine: &str,
        options: &[(&str, &str)],
        var: impl Fn(&str) -> Option<String>,
    ) -> EngineResult<()> {
        self.initialize_with(local_engine, options, |o| Settings::resolve(o, var))
    }

    fn initialize_with(
        &self,
        local_engine: &str,
        options: &[(&str, &str)],
        settle: impl FnOnce(Options) -> EngineResult<Settings>,
    ) -> EngineResult<()> {
        let mut state = lock(&self.state);
        if matches!(*state, State::Running(_)) {
            return Err(EngineError::new(ADXL_FAILED, "the engine is already initialized"));
        }
        let name = EngineName::parse(local_engine)?;
        let settings = settle(Options::parse(options.iter().copied())?)?;
        let transport = settings.transport;
        let heartbeat = (settings.heartbeat_interval, settings.heartbeat_misses);
        let connect_pool = settings.connect_pool;
        ucx::check_built(transport)?;
        let core = Core::new(name, settings)
            .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot start the request workers: {e}")))?;
        let core = Arc::new(core);
        let pool = connect_async::ConnectPool::new(connect_pool, Self::connect_runner(&core))
            .map_err(|e| EngineError::new(ADXL_FAILED, format!("cannot start the connect workers: {e}")))?;
        let _ = core.connects.set(pool);
        if let Some(addr) = core.name.listen_addr() {
            *lock(&core.listener) = Some(serve::start(&core, addr)?);
            if matches!(transport, Transport::Auto | Transport::Shm) {
                *lock(&core.shm) = shm::Server::start(&core.registry, addr.port());
            }
        }
        if core.options.auto_connect {
            let links = Arc::downgrade(&core.links);
            let _ = spawn_named("adxl-heartbeat", move || heartbeat::run(&links, heartbeat.0, heartbeat.1));
        }
        log::debug!(
            target: TARGET,
            "engine {local_engine} initialized ({transport:?}, secret {}, remote access {:?})",
            if core.access.secret.is_some() { "set" } else { "unset" },
            core.access.remote_access
        );
        *state = State::Running(core);
        Ok(())
    }

    /// `Finalize()`: stops listening, closes every connection; idempotent.
    pub fn finalize(&self) {
        let old = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut *state, State::Finalized) {
                State::New => {
                    *state = State::New;
                    None
                }
                State::Running(core) => Some(core),
                State::Finalized => None,
            }
        };
        if let Some(core) = old {
            core.shutdown();
        }
    }

    /// `RegisterMem({addr, len}, type)`: the handle. `vouch` makes the span for memory that
    /// is not the runtime's (see the module documentation). Peers already connected are told.
    pub fn register_mem(
        &self,
        addr: usize,
        len: usize,
        mem_type: MemType,
        vouch: impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<u64> {
        self.register_mem_with(addr, len, mem_type, Offer::default(), vouch)
    }

    /// [`Engine::register_mem`], offered to peers as `offer` says. A local-only region
    /// (`MemDesc::local_only`) serves this engine's own transfers and is never offered to peers
    /// (not announced, not mapped for same-host peers, not registered with UCX; their requests
    /// into it are served as for unregistered memory). A tagged one is announced with its tag,
    /// which a peer's face finds it by ([`Engine::peer_region`]).
    pub fn register_mem_with(
        &self,
        addr: usize,
        len: usize,
        mem_type: MemType,
        offer: Offer,
        mut vouch: impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<u64> {
        let core = self.core()?;
        if addr == 0 || len == 0 || addr.checked_add(len).is_none() {
            return Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("memory {addr:#x} + {len} bytes is not a valid range"),
            ));
        }
        let span = local_span(addr, len, true, &mut vouch)?;
        let kind = match mem_type {
            MemType::Device => MemKind::Device,
            MemType::Host => MemKind::Host,
        };
        let r = core.registry.add_with(addr, span, kind, offer);
        if offer.local_only {
            return Ok(r.handle);
        }
        ucx::registered(&core.ucx, &r);
        if let Some(s) = lock(&core.shm).clone() {
            s.added(&r);
        }
        let announce = Message::MemAdd { regions: vec![r.region()] };
        core.links.announce(&announce);
        core.served.push(&announce);
        Ok(r.handle)
    }

    /// `DeregisterMem(handle)`: NULL is PARAM_INVALID; a handle this engine does not know is
    /// SUCCESS with a warning (the vendor's behaviour).
    pub fn deregister_mem(&self, handle: u64) -> EngineResult<()> {
        let core = self.core()?;
        if handle == 0 {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "memory handle is NULL"));
        }
        match core.registry.remove(handle) {
            Some(r) if r.local_only => {}
            Some(r) => {
                ucx::deregistered(&core.ucx, &r);
                // Same-host peers drop their mapping before this returns (bounded wait).
                if let Some(s) = lock(&core.shm).clone() {
                    s.removed(&r);
                }
                let announce = Message::MemRemove { regions: vec![r.region()] };
                core.links.announce(&announce);
                core.served.push(&announce);
            }
            None => {
                log::warn!(target: TARGET, "DeregisterMem: handle {handle:#x} is not registered with this engine")
            }
        }
        Ok(())
    }

    /// Bytes and calls per path (direct copy, kernel copy, TCP) since Initialize; zeros when
    /// the engine is not initialised.
    pub fn counters(&self) -> CounterValues {
        self.core().map(|c| c.counters.get()).unwrap_or_default()
    }

    /// `Connect(remote_engine, timeout)`.
    pub fn connect(&self, remote: &str, timeout_ms: i32) -> EngineResult<()> {
        let core = self.core()?;
        let timeout = positive_timeout(timeout_ms)?;
        Self::connect_core(&core, remote, Instant::now() + timeout)
    }

    fn connect_core(core: &Core, remote: &str, deadline: Instant) -> EngineResult<()> {
        let name = EngineName::parse(remote)?;
        let addr = name.listen_addr().ok_or_else(|| {
            EngineError::new(
                ADXL_FAILED,
                format!("{remote} has no port: it does not listen, so it cannot be connected to"),
            )
        })?;
        core.links.room_for(remote)?;
        let dialer = core.dialer();
        let link = Link::open(&dialer, remote, addr, deadline)?;
        // With UCX built, whether the same-host channel opens decides between it and UCX (a
        // peer of this host in another network namespace is reached with UCX): opened now.
        // Otherwise the first transfer opens it.
        if core.transport == Transport::Auto && ucx::BUILT {
            link.same_host(&dialer, deadline);
        }
        // A peer that does not share this host may be reached over UCX.
        if link.shm().is_none() && matches!(core.transport, Transport::Auto | Transport::Ucx) {
            if let Err(e) = ucx::open(&core.ucx, &dialer, &link, deadline) {
                link.close();
                return Err(e);
            }
        }
        core.links.install(remote, Arc::new(link))
    }

    /// What the async connect pool's tasks do: Connect or Disconnect on this core, which they
    /// do not keep alive (a finalized engine's task fails).
    fn connect_runner(core: &Arc<Core>) -> connect_async::Runner {
        let weak = Arc::downgrade(core);
        Arc::new(move |kind, remote: &str, timeout| {
            let core = weak
                .upgrade()
                .filter(|c| !c.stopping.load(Ordering::Acquire))
                .ok_or_else(|| EngineError::new(ADXL_FAILED, "the engine was finalized"))?;
            match kind {
                connect_async::TaskKind::Connect => {
                    Self::connect_core(&core, remote, Instant::now() + timeout)
                }
                connect_async::TaskKind::Disconnect => Self::disconnect_core(&core, remote),
            }
        })
    }

    fn connect_pool_of(core: &Core) -> EngineResult<&connect_async::ConnectPool> {
        core.connects.get().ok_or_else(|| EngineError::new(ADXL_FAILED, "the engine is not initialized"))
    }

    /// `ConnectAsync(remote_engine, timeout)`: queues a Connect (see [`connect_async`]);
    /// timeout <= 0 or a bad name: PARAM_INVALID; the queue full: RESOURCE_EXHAUSTED.
    pub fn connect_async(&self, remote: &str, timeout_ms: i32) -> EngineResult<()> {
        let core = self.core()?;
        let timeout = positive_timeout(timeout_ms)?;
        EngineName::parse(remote)?;
        Self::connect_pool_of(&core)?.submit(remote, connect_async::TaskKind::Connect, timeout)
    }

    /// `DisconnectAsync(remote_engine, timeout)`: queues a Disconnect; errors as
    /// [`Engine::connect_async`].
    pub fn disconnect_async(&self, remote: &str, timeout_ms: i32) -> EngineResult<()> {
        let core = self.core()?;
        let timeout = positive_timeout(timeout_ms)?;
        EngineName::parse(remote)?;
        Self::connect_pool_of(&core)?.submit(remote, connect_async::TaskKind::Disconnect, timeout)
    }

    /// `GetAsyncConnectStatus(remote_engine, status)`: the state of the remote's latest async
    /// task; NOT_CONNECT for a remote without one.
    pub fn async_connect_status(&self, remote: &str) -> EngineResult<AsyncConnectStatus> {
        let core = self.core()?;
        Ok(Self::connect_pool_of(&core)?.status(remote))
    }

    /// `GetAsyncConnectStatus(statuses)`: every remote whose state is not NOT_CONNECT.
    pub fn async_connect_statuses(&self) -> EngineResult<Vec<(String, AsyncConnectStatus)>> {
        let core = self.core()?;
        Ok(Self::connect_pool_of(&core)?.statuses())
    }

    /// `Disconnect(remote_engine, timeout)`: local cleanup happens even when the peer is down.
    pub fn disconnect(&self, remote: &str, timeout_ms: i32) -> EngineResult<()> {
        let core = self.core()?;
        positive_timeout(timeout_ms)?;
        Self::disconnect_core(&core, remote)
    }

    fn disconnect_core(core: &Core, remote: &str) -> EngineResult<()> {
        let link = core
            .links
            .remove(remote)
            .ok_or_else(|| EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}")))?;
        link.close();
        Ok(())
    }

    /// `TransferSync(remote_engine, operation, op_descs, timeout)`: returns once every byte
    /// has landed. `vouch` makes spans for local memory that is not the runtime's.
    pub fn transfer_sync(
        &self,
        remote: &str,
        op: TransferOp,
        descs: &[TransferDesc],
        timeout_ms: i32,
        mut vouch: impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<()> {
        let core = self.core()?;
        let deadline = Instant::now() + positive_timeout(timeout_ms)?;
        check_descs(descs)?;
        let link = Self::resolve_link(&core, remote, deadline)?;
        let locals = Self::locals(&core, op, descs, &mut vouch)?;
        Self::execute(&core, &link, op, &locals, deadline, &direct::Helpers::Thread)
    }

    /// The link a transfer or notify to `remote` uses: the current one, or (with AutoConnect,
    /// or when a same-host peer's channel closed) a new one.
    fn resolve_link(core: &Core, remote: &str, deadline: Instant) -> EngineResult<Arc<Link>> {
        // A request queued before Finalize fails instead of dialling for a finalized engine.
        if core.stopping.load(Ordering::Acquire) {
            return Err(EngineError::new(ADXL_NOT_CONNECTED, "the engine was finalized"));
        }
        let link = match core.link(remote) {
            Some(l) if !l.is_broken() => l,
            found if core.options.auto_connect => {
                drop(found);
                match Self::connect_core(core, remote, deadline) {
                    Ok(()) | Err(EngineError { status: ADXL_ALREADY_CONNECTED, .. }) => {}
                    Err(e) => return Err(e),
                }
                core.link(remote).ok_or_else(|| {
                    EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}"))
                })?
            }
            Some(l) => l,
            None => return Err(EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}"))),
        };
        // A same-host peer whose channel closed is gone (finalized, exited, killed): dial
        // again, as TCP does after a dead connection, so a restarted peer is reached and a
        // dead one fails here (FAILED), never through its old memory.
        if link.shm().is_some_and(|s| !s.alive()) {
            match Self::connect_core(core, remote, deadline) {
                Ok(()) | Err(EngineError { status: ADXL_ALREADY_CONNECTED, .. }) => {}
                Err(e) => return Err(e),
            }
            return core
                .link(remote)
                .ok_or_else(|| EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}")));
        }
        Ok(link)
    }

    /// Resolves every descriptor's local side to memory the engine may touch.
    fn locals(
        core: &Core,
        op: TransferOp,
        descs: &[TransferDesc],
        vouch: &mut impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<Vec<Local>> {
        let mut locals = Vec::with_capacity(descs.len());
        // Descriptors of one call usually fall in one registration: try the last one first.
        let mut last: Option<Arc<registry::Registered>> = None;
        for (i, d) in descs.iter().enumerate() {
            let found = match &last {
                Some(r) if r.holds(d.local_addr, d.len) => Some(r.clone()),
                _ => core.registry.find(d.local_addr, d.len),
            };
            // A registered range is reached through the registration's own span.
            if let Some(span) = found.as_ref().and_then(|r| r.span.sub(d.local_addr - r.addr, d.len)) {
                let kind = found.as_ref().map_or(MemKind::Host, |r| r.kind);
                locals.push(Local {
                    span,
                    desc: Desc { remote_addr: d.remote_addr as u64, len: d.len as u64, local_kind: kind },
                });
                last = found;
                continue;
            }
            let local_kind = match found {
                Some(r) => r.kind,
                None if core.pool.enabled() => MemKind::Unregistered,
                None => {
                    return Err(EngineError::new(
                        ADXL_PARAM_INVALID,
                        format!(
                            "descriptor {i}: local memory {:#x} is not registered and the relay pool is off",
                            d.local_addr
                        ),
                    ));
                }
            };
            let span = local_span(d.local_addr, d.len, op == TransferOp::Read, vouch)?;
            locals.push(Local {
                span,
                desc: Desc { remote_addr: d.remote_addr as u64, len: d.len as u64, local_kind },
            });
        }
        Ok(locals)
    }

    /// `TransferAsync(remote_engine, operation, op_descs, args, req)`: checks and copies the
    /// descriptors, resolves local memory, and queues the transfer for the engine's workers;
    /// returns the request's handle at once. No link (without AutoConnect) is NOT_CONNECTED;
    /// [`MAX_REQUESTS`] requests held already is RESOURCE_EXHAUSTED. `vouch`'s spans must stay
    /// valid until the request is done.
    pub fn transfer_async(
        &self,
        remote: &str,
        op: TransferOp,
        descs: &[TransferDesc],
        vouch: impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<u64> {
        self.transfer_async_with(remote, op, descs, 0, vouch)
    }

    /// [`Engine::transfer_async`] carrying `user_data` (`TransferArgs::user_data`), which the
    /// batched [`Engine::transfer_statuses`] hands back with the request.
    pub fn transfer_async_with(
        &self,
        remote: &str,
        op: TransferOp,
        descs: &[TransferDesc],
        user_data: usize,
        mut vouch: impl FnMut(HostRange) -> RawSpan,
    ) -> EngineResult<u64> {
        let core = self.core()?;
        check_descs(descs)?;
        if !core.options.auto_connect && core.link(remote).is_none() {
            return Err(EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}")));
        }
        let locals = Self::locals(&core, op, descs, &mut vouch)?;
        let ticket = core.requests.start(remote, user_data).ok_or_else(|| {
            EngineError::new(
                ADXL_RESOURCE_EXHAUSTED,
                format!("already {MAX_REQUESTS} transfer requests held"),
            )
        })?;
        let deadline = Instant::now() + core.async_timeout;
        let handle = core.requests.handle(ticket);
        let job_core = core.clone();
        let remote_name = remote.to_owned();
        let job = Box::new(move || {
            let core = job_core;
            let remote = remote_name;
            let running = requests::Running::new(&core.requests, ticket);
            let (result, gone) = match Self::resolve_link(&core, &remote, deadline) {
                Err(e) => {
                    let gone = e.status == ADXL_NOT_CONNECTED;
                    (Err(e), gone)
                }
                Ok(link) => {
                    let offer = |pieces| core.requests.offer(ticket, pieces);
                    let helpers = direct::Helpers::Pollers(&offer);
                    let r = watch::sleeping(|| Self::execute(&core, &link, op, &locals, deadline, &helpers));
                    let gone = r.is_err()
                        && (link.is_broken() || !core.link(&remote).is_some_and(|l| Arc::ptr_eq(&l, &link)));
                    (r, gone)
                }
            };
            drop(locals);
            running.finish(result, gone);
        });
        if let Err(refused) = core.requests.submit(job) {
            // The job is dropped unrun: the request is not held any more.
            core.requests.cancel(ticket);
            return Err(match refused {
                Refused::Stopped => EngineError::new(ADXL_FAILED, "the engine is finalizing"),
                Refused::Full => EngineError::new(ADXL_RESOURCE_EXHAUSTED, "the transfer queue is full"),
            });
        }
        Ok(handle)
    }

    /// `GetTransferStatus(req, status)`: the status to report (0 WAITING, 1 COMPLETED, 2
    /// TIMEOUT, 3 FAILED; `None` when nothing is reported) and the call's result. A request
    /// reported COMPLETED, TIMEOUT or FAILED is freed (asking again: PARAM_INVALID). NULL:
    /// FAILED. A request whose time limit (`ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS`) passed before
    /// its data had landed: TIMEOUT, reported only once its job has stopped touching the
    /// caller's memory. A request whose link went away: NOT_CONNECTED, with status FAILED (or
    /// TIMEOUT when the time-out is what broke the link).
    pub fn transfer_status(&self, req: u64) -> (Option<i32>, EngineResult<()>) {
        let core = match self.core() {
            Ok(c) => c,
            Err(e) => return (None, Err(e)),
        };
        if req == 0 {
            return (None, Err(EngineError::new(ADXL_FAILED, "the transfer request is NULL")));
        }
        let (outcome, remote) = match core.requests.poll(req) {
            Ok(Poll::Waiting) => return (Some(TRANSFER_WAITING), Ok(())),
            Ok(Poll::Done { outcome, remote }) => (outcome, remote),
            Err(e) => return (None, Err(e)),
        };
        let reported = outcome.status();
        match outcome {
            Outcome::Failed { status, message, link_gone } => {
                log::debug!(target: TARGET, "transfer request to {remote} failed ({status}): {message}");
                if link_gone {
                    let e = EngineError::new(
                        ADXL_NOT_CONNECTED,
                        format!("the link to {remote} went away: {message}"),
                    );
                    (Some(reported), Err(e))
                } else {
                    (Some(reported), Ok(()))
                }
            }
            _ => (Some(reported), Ok(())),
        }
    }

    /// The batched `GetTransferStatus(args, results)`: one pass over this engine's requests
    /// in submission order, reporting at most `max` (0: none), leaving out the WAITING ones
    /// when `skip_waiting`; each request reported done is freed and not reported again. Works
    /// on every path (same host, UCX, TCP, relay).
    pub fn transfer_statuses(&self, max: u32, skip_waiting: bool) -> EngineResult<Vec<Polled>> {
        let core = self.core()?;
        Ok(core.requests.poll_batch(max as usize, skip_waiting))
    }

    /// `SendNotify(remote_engine, {name, msg}, timeout)`: returns once the peer has queued the
    /// notify. Transfers to `remote` submitted with TransferAsync before this call land first
    /// (the notify waits for them, within the time-out). Name or message over
    /// [`MAX_NOTIFY_LEN`] bytes, or timeout <= 0: PARAM_INVALID; no link (without AutoConnect):
    /// NOT_CONNECTED; no answer in time: TIMEOUT; the peer holds [`MAX_NOTIFIES`] from this
    /// engine already: RESOURCE_EXHAUSTED; the connection broke: NOTIFY_FAILED.
    pub fn send_notify(&self, remote: &str, name: &str, msg: &str, timeout_ms: i32) -> EngineResult<()> {
        let core = self.core()?;
        let deadline = Instant::now() + positive_timeout(timeout_ms)?;
        for (what, text) in [("name", name), ("message", msg)] {
            if text.len() > MAX_NOTIFY_LEN {
                return Err(EngineError::new(
                    ADXL_PARAM_INVALID,
                    format!("notify {what} of {} bytes is over {MAX_NOTIFY_LEN}", text.len()),
                ));
            }
        }
        let link = Self::resolve_link(&core, remote, deadline)?;
        if !core.requests.wait_in_flight_to(remote, deadline) {
            return Err(EngineError::new(
                ADXL_TIMEOUT,
                format!("notify to {remote}: earlier transfers did not finish in time"),
            ));
        }
        tcp::notify(&core.dialer(), &link, name, msg, deadline)
    }

    /// The region `remote` announced with `tag` (see [`Offer`]): `None` if it has none (never
    /// registered, or deregistered). No link to `remote`: NOT_CONNECTED; timeout <= 0:
    /// PARAM_INVALID. Only an initiator hears its peer's regions (HELLO_ACK, then MEM_ADD and
    /// MEM_REMOVE, which it reads with the answers to its requests), so only the side that
    /// connected can ask. A tag not heard of yet costs one heartbeat on an idle connection,
    /// within the time-out: announcements the peer sent before answering it are then read.
    pub fn peer_region(&self, remote: &str, tag: u32, timeout_ms: i32) -> EngineResult<Option<Region>> {
        let core = self.core()?;
        let deadline = Instant::now() + positive_timeout(timeout_ms)?;
        let link = core
            .link(remote)
            .filter(|l| !l.is_broken())
            .ok_or_else(|| EngineError::new(ADXL_NOT_CONNECTED, format!("not connected to {remote}")))?;
        if let Some(found) = link.peer_region(tag) {
            return Ok(Some(found));
        }
        if tag == NO_TAG {
            return Ok(None);
        }
        match tcp::ping(&link, deadline) {
            Ok(()) => Ok(link.peer_region(tag)),
            Err(_) => Err(EngineError::new(ADXL_TIMEOUT, format!("{remote} did not answer in time"))),
        }
    }

    /// Runs `f` on `len` bytes at `addr` of `remote`'s memory when this host maps them (a
    /// same-host peer's registered, offered memory): `None` when it does not (another host, or
    /// memory the peer has not offered), for the caller to transfer instead. For faces that
    /// compute on a peer's bytes (HCCL's reductions) without copying them first.
    pub fn with_peer_memory<R>(
        &self,
        remote: &str,
        addr: usize,
        len: usize,
        timeout_ms: i32,
        f: impl FnOnce(&RawSpan) -> R,
    ) -> EngineResult<Option<R>> {
        let core = self.core()?;
        let deadline = Instant::now() + positive_timeout(timeout_ms)?;
        let link = Self::resolve_link(&core, remote, deadline)?;
        link.same_host(&core.dialer(), deadline);
        let Some(shm) = link.shm() else { return Ok(None) };
        if !shm.alive() {
            return Err(EngineError::new(
                ADXL_FAILED,
                format!("{remote} is gone (its same-host channel closed)"),
            ));
        }
        let regions = shm.regions();
        Ok(regions.span(&link.remote, addr, len, &mut None).map(|span| f(&span)))
    }

    /// `GetNotifies(notifies)`: every notify received from any peer since the last call,
    /// oldest first; the queue is emptied.
    pub fn take_notifies(&self) -> EngineResult<Vec<Notified>> {
        Ok(self.core()?.notifies.take())
    }

    /// As [`Engine::take_notifies`], waiting up to `timeout` for one to arrive when none is
    /// queued (an empty list when none came). Not initialized or finalized: FAILED.
    pub fn wait_notifies(&self, timeout: Duration) -> EngineResult<Vec<Notified>> {
        Ok(self.core()?.notifies.wait_take(timeout))
    }

    /// Moves the bytes: the same-host path when it applies, else UCX when the link uses it and
    /// the call allows, else TCP.
    fn execute(
        core: &Core,
        link: &Link,
        op: TransferOp,
        locals: &[Local],
        deadline: Instant,
        helpers: &direct::Helpers,
    ) -> EngineResult<()> {
        let dialer = core.dialer();
        link.same_host(&dialer, deadline);
        if let Some(result) = direct::try_run(&core.counters, link, op, locals, helpers) {
            return result;
        }
        if let Some(result) = ucx::try_run(&core.ucx, &dialer, &core.counters, link, op, locals, deadline) {
            return result;
        }
        core.counters.tcp(locals.iter().map(|l| l.span.len()).sum());
        // Striping splits the call into several requests, which is only right when nothing
        // relays (the relay rule is about the whole call).
        let direct = locals.iter().all(|l| l.desc.local_kind != MemKind::Unregistered)
            && link.peer_holds(locals.iter().map(|l| (l.desc.remote_addr, l.desc.len)));
        tcp::run(&dialer, link, op, locals, direct, deadline)
    }
}

#[cfg(test)]
mod tests;
