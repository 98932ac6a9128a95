//! A communicator: the ranks that run collectives together, and this process's place in them.
//!
//! Every rank has an ADXL engine of its own ([`crate::engine::Engine`]): ranks reach each other
//! over the engine's links (same-host memory between processes of one host, TCP or UCX between
//! hosts), with its authentication, and say what they are doing with its notifies. See
//! docs/hccl.md for the protocol.

use std::sync::Arc;

use crate::error::hccl_codes::HcclError;
use crate::hccl::ops::Op;
use crate::runtime::stream::Stream;
use crate::sys::span::{HostRange, RawSpan};

/// `sizeof(HcclRootInfo)`: `char internal[HCCL_ROOT_INFO_BYTES]`.
pub const ROOT_INFO_BYTES: usize = 4108;

/// `HCCL_COMM_NAME_MAX_LENGTH`-style bound on a communicator's name.
pub const MAX_COMM_NAME: usize = 128;

/// How the FFI layer vouches for a caller's host memory that is not the runtime's (see
/// [`crate::sys::span`]); the core never calls it for runtime memory.
pub type Vouch = fn(HostRange) -> RawSpan;

/// What `HcclCommConfig` sets that has a meaning here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `hcclBufferSize`, in MiB: the staging memory of reductions (else `HCCL_BUFFSIZE`).
    pub buffer_mib: Option<u32>,
    /// `hcclCommName` (else one made from the root info or the rank table).
    pub name: Option<String>,
}

/// One rank's communicator.
pub struct Comm {
    inner: Arc<crate::hccl::run::Shared>,
}

/// `HcclGetRootInfo`: the root info rank 0 hands the others out of band.
pub fn get_root_info() -> Result<[u8; ROOT_INFO_BYTES], HcclError> {
    todo!()
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
        let _ = (nranks, root, rank, config);
        todo!()
    }

    /// `HcclCommInitClusterInfo` / `HcclCommInitClusterInfoConfig`: the rank table at `path`.
    pub fn init_cluster_info(path: &str, rank: u32, config: &Config) -> Result<Comm, HcclError> {
        let _ = (path, rank, config);
        todo!()
    }

    /// `HcclCommInitAll`: `ndev` ranks in this process, one communicator each, rank i at index i.
    pub fn init_all(ndev: u32) -> Result<Vec<Comm>, HcclError> {
        let _ = ndev;
        todo!()
    }

    pub fn rank(&self) -> u32 {
        todo!()
    }

    pub fn size(&self) -> u32 {
        todo!()
    }

    /// `HcclGetCommName`.
    pub fn name(&self) -> String {
        todo!()
    }

    /// The first error an operation of this communicator met (`HcclGetCommAsyncError`): 0 when
    /// none has.
    pub fn async_error(&self) -> i32 {
        todo!()
    }

    /// `HcclCommDestroy`: waits (bounded) for the operations queued, then leaves; later
    /// operations are `HCCL_E_PARA`. Idempotent; dropping the communicator does it too.
    pub fn destroy(&self) -> Result<(), HcclError> {
        todo!()
    }

    /// Queues `op` on `stream`, after the stream's earlier tasks. Arguments are checked now
    /// (`HCCL_E_PARA`); what goes wrong while it runs fails the stream's task, which
    /// `aclrtSynchronizeStream` reports, and is kept for [`Comm::async_error`].
    pub fn submit(&self, op: Op, stream: &Arc<Stream>, vouch: Vouch) -> Result<(), HcclError> {
        let _ = (op, stream, vouch, &self.inner);
        todo!()
    }
}
