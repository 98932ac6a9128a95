//! [`Dialer`]: what opening a connection to a peer needs from this engine, and nothing else:
//! its name and secret (for the handshake and HELLO), its transport (whether to offer shared
//! memory) and its registry (the memory HELLO lists). Links, the TCP and UCX paths take it
//! instead of the whole engine, so they depend on these services only.

use crate::engine::access::Secret;
use crate::engine::options::Transport;
use crate::engine::registry::Registry;

/// A view of the engine's parts that dialling reads (made by the engine's core for a call).
#[derive(Clone, Copy)]
pub struct Dialer<'a> {
    /// This engine's name, as HELLO gives it.
    pub name: &'a str,
    /// `adxl.Secret`, else `ASCENDLESS_ADXL_SECRET`: every connection proves it first.
    pub secret: Option<&'a Secret>,
    /// `adxl.Transport`, else `ASCENDLESS_TRANSPORT`.
    pub transport: Transport,
    /// This engine's registered memory.
    pub registry: &'a Registry,
}

impl Dialer<'_> {
    /// Whether links may use shared memory with a peer on this host (and HELLO says where
    /// this engine runs).
    pub fn may_share(&self) -> bool {
        matches!(self.transport, Transport::Auto | Transport::Shm)
    }
}
