//! The UCX transport in a build without the `ucx` feature: never used, never offered.

use std::time::Instant;

use crate::engine::conn::dialer::Dialer;
use crate::engine::conn::link::Link;
use crate::engine::options::{Rdma, Transport};
use crate::engine::path::direct::Counters;
use crate::engine::path::tcp::{Local, TransferOp};
use crate::engine::registry::Registered;
use crate::engine::wire::Message;
use crate::error::engine_status::ADXL_UNSUPPORTED;
use crate::error::{EngineError, EngineResult};

/// The engine's UCX state: none in this build.
#[derive(Default)]
pub struct State {}

impl State {
    /// RDMA settings have no use without UCX.
    pub fn new(_rdma: Rdma) -> State {
        State {}
    }

    pub fn stop(&self) {}
}

/// Whether this build has the UCX transport.
pub const BUILT: bool = false;

/// Transport `ucx` needs the feature.
pub fn check_built(transport: Transport) -> EngineResult<()> {
    if transport == Transport::Ucx {
        return Err(EngineError::new(
            ADXL_UNSUPPORTED,
            "the transport is ucx but this library was built without the ucx feature",
        ));
    }
    Ok(())
}

/// The answer to UCX_QUERY: not offered.
pub fn answer(_ucx: &State, _dialer: &Dialer, id: u64) -> Message {
    Message::UcxInfo {
        id,
        status: ADXL_UNSUPPORTED,
        message: "this engine was built without the ucx feature".into(),
        worker: Vec::new(),
        keys: Vec::new(),
    }
}

pub fn registered(_ucx: &State, _r: &Registered) {}

pub fn deregistered(_ucx: &State, _r: &Registered) {}

/// Whether the link uses UCX: never.
pub fn open(_ucx: &State, _dialer: &Dialer, _link: &Link, _deadline: Instant) -> EngineResult<bool> {
    Ok(false)
}

pub fn try_run(
    _ucx: &State,
    _dialer: &Dialer,
    _counters: &Counters,
    _link: &Link,
    _op: TransferOp,
    _locals: &[Local],
    _deadline: Instant,
) -> Option<EngineResult<()>> {
    None
}
