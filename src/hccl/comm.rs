//! A communicator: the ranks that run collectives together, and this process's place in them.
//!
//! Every rank has an ADXL engine of its own ([`crate::engine::Engine`]): ranks reach each other
//! over the engine's links (same-host memory between processes of one host, TCP or UCX between
//! hosts), with its authentication, and say what they are doing with its notifies. See
//! docs/hccl.md for the protocol.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::engine::{Engine, Notified};
use crate::error::AclError;
use crate::error::engine_status::ADXL_ALREADY_CONNECTED;
use crate::error::hccl_codes::{
    HCCL_E_INTERNAL, HCCL_E_NOT_SUPPORT, HCCL_E_OPEN_FILE_FAILURE, HCCL_E_REMOTE, HCCL_E_RUNTIME,
    HCCL_E_TCP_CONNECT, HCCL_E_TIMEOUT, HcclError,
};
use crate::error::rt_codes::{
    ACL_ERROR_RT_COMM_OP_RETRY_FAIL, ACL_ERROR_RT_SUSPECT_REMOTE_ERROR, ACL_ERROR_RT_TASK_TIMEOUT,
};
use crate::hccl::endpoint::{Endpoint, ms_left};
use crate::hccl::env::Env;
use crate::hccl::ops::Op;
use crate::hccl::plan;
use crate::hccl::rank_table::RankTable;
use crate::hccl::root_info::{self, RootInfo};
use crate::hccl::run::Shared;
use crate::runtime::stream::Stream;
use crate::runtime::task::TaskInfo;

pub use crate::hccl::endpoint::Vouch;
pub use crate::hccl::env::Config;
pub use crate::hccl::root_info::ROOT_INFO_BYTES;

/// `HCCL_COMM_NAME_MAX_LENGTH`-style bound on a communicator's name.
pub const MAX_COMM_NAME: usize = 128;

/// One rank's communicator.
pub struct Comm {
    inner: Arc<Shared>,
}

fn random_hex() -> Result<(String, u64), HcclError> {
    let secret = crate::sys::random::u128()
        .map_err(|e| HcclError::new(HCCL_E_INTERNAL, format!("no random numbers: {e}")))?;
    Ok((format!("{secret:032x}"), secret as u64 ^ (secret >> 64) as u64))
}

/// An engine listening on a free port of `ip`, with `secret` when given.
fn start_engine(ip: IpAddr, secret: Option<&str>) -> Result<(Arc<Engine>, String), HcclError> {
    let mut last = String::new();
    for _ in 0..20 {
        let port = TcpListener::bind(SocketAddr::new(ip, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| {
                HcclError::new(
                    HCCL_E_TCP_CONNECT,
                    format!("cannot listen on {ip}: {e} (HCCL_IF_IP names this host's address)"),
                )
            })?
            .port();
        let name = SocketAddr::new(ip, port).to_string();
        let engine = Engine::new();
        let options: Vec<(&str, &str)> = secret.map(|s| ("adxl.Secret", s)).into_iter().collect();
        match engine.initialize(&name, &options) {
            Ok(()) => return Ok((Arc::new(engine), name)),
            Err(e) => last = e.message,
        }
    }
    Err(HcclError::new(HCCL_E_TCP_CONNECT, format!("cannot start this rank's engine on {ip}: {last}")))
}

/// Connects to every other rank (each may still be starting), then makes the communicator.
fn build(
    engine: Arc<Engine>,
    rank: u32,
    names: Vec<String>,
    early: Vec<Notified>,
    env: &Env,
    name: String,
    deadline: Instant,
) -> Result<Comm, HcclError> {
    for (p, peer) in names.iter().enumerate().filter(|(p, _)| *p != rank as usize) {
        loop {
            match engine.connect(peer, ms_left(deadline)) {
                Ok(()) => break,
                Err(e) if e.status == ADXL_ALREADY_CONNECTED => break,
                Err(e) if Instant::now() >= deadline => {
                    return Err(HcclError::new(
                        HCCL_E_TCP_CONNECT,
                        format!(
                            "rank {rank} cannot reach rank {p} ({peer}) within HCCL_CONNECT_TIMEOUT: {}",
                            e.message
                        ),
                    ));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
    let ep = Endpoint::new(engine, rank, names, early)?;
    log::debug!(target: "ascendless::hccl", "communicator {name}: rank {rank} of {} ready", ep.size());
    Ok(Comm { inner: Arc::new(Shared::new(ep, name, env.exec_timeout, env.buffer_bytes)) })
}

fn check_rank(rank: u32, nranks: u32) -> Result<(), HcclError> {
    if nranks == 0 || rank >= nranks {
        return Err(HcclError::para(format!("rank {rank} of {nranks} ranks")));
    }
    Ok(())
}

/// `HcclGetRootInfo`: the root info rank 0 hands the others out of band. Starts the root (see
/// [`crate::hccl::root_info`]), which waits up to `HCCL_CONNECT_TIMEOUT` for the ranks.
pub fn get_root_info() -> Result<[u8; ROOT_INFO_BYTES], HcclError> {
    let env = Env::from_process();
    let (secret, id) = random_hex()?;
    let (engine, root) = start_engine(env.if_ip, Some(&secret))?;
    root_info::serve(engine, env.connect_timeout)?;
    Ok(RootInfo { root, secret, id }.encode())
}

/// What a failed operation fails its stream task with (`aclrtSynchronizeStream` returns it).
fn task_error(e: HcclError) -> AclError {
    let code = match e.code {
        HCCL_E_REMOTE => ACL_ERROR_RT_SUSPECT_REMOTE_ERROR,
        HCCL_E_TIMEOUT => ACL_ERROR_RT_TASK_TIMEOUT,
        _ => ACL_ERROR_RT_COMM_OP_RETRY_FAIL,
    };
    AclError::new(code, e.to_string())
}

impl Comm {
    /// `HcclCommInitRootInfo` / `HcclCommInitRootInfoConfig`: blocks until every rank has joined
    /// or `HCCL_CONNECT_TIMEOUT` has passed.
    pub fn init_root_info(
        nranks: u32,
        root: &[u8; ROOT_INFO_BYTES],
        rank: u32,
        config: &Config,
    ) -> Result<Comm, HcclError> {
        check_rank(rank, nranks)?;
        let info = RootInfo::decode(root)?;
        let env = Env::from_process();
        let deadline = Instant::now() + env.connect_timeout;
        let (engine, own) = start_engine(env.if_ip, Some(&info.secret))?;
        let (names, early) = root_info::join(&engine, &info, rank, nranks, &own, deadline)?;
        let name = config.name.clone().unwrap_or_else(|| format!("hccl-{:016x}", info.id));
        build(engine, rank, names, early, &env.with(config), name, deadline)
    }

    /// `HcclCommInitClusterInfo` / `HcclCommInitClusterInfoConfig`: the rank table at `path`.
    /// Rank r's engine listens at its `device_ip`/`device_port` (see
    /// [`crate::hccl::rank_table`]); a rank table carries no secret, so these engines do not
    /// authenticate (docs/hccl.md).
    pub fn init_cluster_info(path: &str, rank: u32, config: &Config) -> Result<Comm, HcclError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            HcclError::new(HCCL_E_OPEN_FILE_FAILURE, format!("cannot read the rank table {path}: {e}"))
        })?;
        let table = RankTable::parse(&text).map_err(|e| HcclError::para(format!("{path}: {e}")))?;
        check_rank(rank, table.len() as u32)?;
        let env = Env::from_process();
        let deadline = Instant::now() + env.connect_timeout;
        let names: Vec<String> = table.ranks().iter().map(|r| r.engine_name()).collect();
        let own = &names[rank as usize];
        let engine = Engine::new();
        engine.initialize(own, &[]).map_err(|e| {
            HcclError::new(
                HCCL_E_TCP_CONNECT,
                format!("rank {rank} cannot listen at {own} (its rank table entry): {}", e.message),
            )
        })?;
        let name = config.name.clone().unwrap_or_else(|| "hccl_world_group".to_owned());
        build(Arc::new(engine), rank, names, Vec::new(), &env.with(config), name, deadline)
    }

    /// `HcclCommInitAll`: `ndev` ranks in this process, one communicator each, rank i at index i.
    pub fn init_all(ndev: u32) -> Result<Vec<Comm>, HcclError> {
        if ndev == 0 {
            return Err(HcclError::para("ndev is 0"));
        }
        let env = Env::from_process();
        let deadline = Instant::now() + env.connect_timeout;
        let (secret, id) = random_hex()?;
        let engines = (0..ndev)
            .map(|_| start_engine(IpAddr::V4(Ipv4Addr::LOCALHOST), Some(&secret)))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<String> = engines.iter().map(|(_, n)| n.clone()).collect();
        engines
            .into_iter()
            .enumerate()
            .map(|(i, (engine, _))| {
                build(engine, i as u32, names.clone(), Vec::new(), &env, format!("hccl-{id:016x}"), deadline)
            })
            .collect()
    }

    pub fn rank(&self) -> u32 {
        self.inner.ep.rank
    }

    pub fn size(&self) -> u32 {
        self.inner.ep.size()
    }

    /// `HcclGetCommName`.
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The first error an operation of this communicator met (`HcclGetCommAsyncError`): 0 when
    /// none has.
    pub fn async_error(&self) -> i32 {
        self.inner.async_error.load(Ordering::Acquire)
    }

    /// `HcclCommDestroy`: stops this rank's engine (operations still queued fail, and peers
    /// waiting for this rank see it gone) and frees its staging memory. Idempotent; dropping
    /// the communicator does it too.
    pub fn destroy(&self) -> Result<(), HcclError> {
        if !self.inner.destroyed.swap(true, Ordering::AcqRel) {
            self.inner.ep.close();
            self.inner.release();
        }
        Ok(())
    }

    /// Queues `op` on `stream`, after the stream's earlier tasks. Arguments are checked now
    /// (`HCCL_E_PARA`); what goes wrong while it runs fails the stream's task, which
    /// `aclrtSynchronizeStream` reports, and is kept for [`Comm::async_error`].
    pub(crate) fn submit(&self, op: Op, stream: &Arc<Stream>, vouch: Vouch) -> Result<(), HcclError> {
        if self.inner.destroyed.load(Ordering::Acquire) {
            return Err(HcclError::para(format!("{}: the communicator was destroyed", op.name())));
        }
        plan::check(&op, self.rank(), self.size())?;
        stream.refuse_if_captured(op.name()).map_err(|e| {
            HcclError::new(
                HCCL_E_NOT_SUPPORT,
                format!("{} cannot be captured into a graph here: {}", op.name(), e.message),
            )
        })?;
        let job = self.inner.job(op);
        let (shared, queued) = (self.inner.clone(), job.clone());
        let submitted = stream.submit_op(TaskInfo::plain("HCCL operation"), move |_| {
            shared.run(&queued, vouch).map_err(task_error)
        });
        submitted.map_err(|e| {
            self.inner.drop_job(&job);
            HcclError::new(HCCL_E_RUNTIME, format!("{}: {}", job.op.name(), e.message))
        })
    }

    /// Runs `op` at once on the calling thread (tests of the core, which have no stream).
    #[cfg(test)]
    pub(crate) fn run_now(&self, op: Op) -> Result<(), HcclError> {
        plan::check(&op, self.rank(), self.size())?;
        let job = self.inner.job(op);
        self.inner.run(&job, |_| unreachable!("core tests use runtime memory"))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        let _ = self.destroy();
    }
}
