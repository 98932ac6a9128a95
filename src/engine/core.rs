//! [`Core`]: the state of an initialised engine, shared by its calls and its threads. It wires
//! the services together, each with its own file and lock: the links ([`Links`]), the served
//! connections ([`ServedConns`]), the TransferAsync requests ([`Requests`]) and the notifies
//! received ([`PeerNotifies`]), besides the registry, the relay pool, the same-host server
//! and UCX.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::access::Access;
use super::conn::dialer::Dialer;
use super::conn::link::Link;
use super::conn::listener;
use super::conn::served::ServedConns;
use super::connect_async::ConnectPool;
use super::links::Links;
use super::name::EngineName;
use super::options::{Options, Settings, Transport};
use super::path::relay::RelayPool;
use super::path::{direct, shm, ucx};
use super::peer_notify::PeerNotifies;
use super::registry::Registry;
use super::requests::Requests;
use crate::sync::lock;

pub(crate) struct Core {
    pub(super) name: EngineName,
    pub(super) options: Options,
    /// Shared with the same-host server, which sends it to new peers.
    pub(super) registry: Arc<Registry>,
    pub(super) pool: RelayPool,
    /// Shared with the heartbeat, which needs nothing else.
    pub(super) links: Arc<Links>,
    pub(super) served: ServedConns,
    pub(super) stopping: AtomicBool,
    pub(super) listener: Mutex<Option<listener::Listening>>,
    /// `adxl.Transport`, else `ASCENDLESS_TRANSPORT`.
    pub(super) transport: Transport,
    /// `adxl.Secret` and `adxl.RemoteAccess`, else their variables.
    pub(super) access: Access,
    /// The time limit of each TransferAsync request (`ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS`).
    pub(super) async_timeout: Duration,
    /// The same-host listener (engines with a port, unless forced to TCP).
    pub(super) shm: Mutex<Option<Arc<shm::Server>>>,
    pub(super) counters: direct::Counters,
    pub(super) requests: Requests,
    /// ConnectAsync/DisconnectAsync (set once the core is shared, as its tasks refer to it).
    pub(super) connects: std::sync::OnceLock<ConnectPool>,
    /// Notifies received, until GetNotifies.
    pub(super) notifies: PeerNotifies,
    /// The UCX context, once a link or a peer wanted it.
    pub(super) ucx: ucx::State,
}

impl Core {
    /// The core of an engine named `name` with its resolved settings (the heartbeat's, which
    /// the core does not run, are the caller's). Fails when the request workers cannot be set
    /// up.
    pub(super) fn new(name: EngineName, settings: Settings) -> io::Result<Core> {
        let Settings { options, transport, access, async_timeout, rdma, channel_pool, .. } = settings;
        Ok(Core {
            pool: RelayPool::new(options.buffer_pool),
            name,
            options,
            registry: Arc::default(),
            links: Arc::new(Links::new(channel_pool)),
            served: ServedConns::default(),
            stopping: AtomicBool::new(false),
            listener: Mutex::new(None),
            transport,
            access,
            async_timeout,
            shm: Mutex::new(None),
            counters: direct::Counters::default(),
            requests: Requests::new()?,
            connects: std::sync::OnceLock::new(),
            notifies: PeerNotifies::default(),
            ucx: ucx::State::new(rdma),
        })
    }

    /// What dialling a peer needs: this engine's name, secret, transport and registry.
    pub(super) fn dialer(&self) -> Dialer<'_> {
        Dialer {
            name: &self.name.text,
            secret: self.access.secret.as_ref(),
            transport: self.transport,
            registry: &self.registry,
        }
    }

    pub(super) fn link(&self, remote: &str) -> Option<Arc<Link>> {
        self.links.get(remote)
    }

    pub(super) fn shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
        self.served.close();
        if let Some(listening) = lock(&self.listener).take() {
            listening.stop();
        }
        if let Some(s) = lock(&self.shm).take() {
            s.stop();
        }
        if let Some(pool) = self.connects.get() {
            pool.stop();
        }
        self.served.close_all();
        self.links.close_all();
        self.requests.stop();
        self.ucx.stop();
        self.registry.clear();
    }
}
