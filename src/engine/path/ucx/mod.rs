//! The UCX transport (build feature `ucx`): TransferSync and TransferAsync as UCP one-sided
//! puts and gets, for clusters whose networks UCX drives (InfiniBand, RoCE; also its TCP and
//! shared-memory transports, which is how it is tested on one machine).
//!
//! How it fits the engine:
//! - **Selection** (Connect, once `Link::open` made the link): `adxl.Transport`/`ASCENDLESS_TRANSPORT` `ucx` forces UCX for
//!   every peer, this host's too; `auto` in a build with the feature tries the same-host path
//!   first, at Connect ([`BUILT`]: without UCX the first transfer opens it), and UCX next, and
//!   keeps TCP when the peer does not offer UCX.
//! - **Keys**: after HELLO the initiator asks (UCX_QUERY) for the server's worker address and
//!   the packed remote key of each registered region (UCX_INFO), on the existing, authenticated
//!   control connection. The server maps its registered memory with `ucp_mem_map` when UCX
//!   starts (lazily, at the first query or link) and each region registered later. A MEM_ADD
//!   from the peer makes the initiator ask again when a range is not covered; a MEM_REMOVE
//!   drops the keys of the removed regions at once.
//! - **Transfers**: a call whose local ranges are all registered (mapped) and whose remote
//!   ranges all lie inside keyed regions goes to UCX: one put or get per descriptor, then an
//!   endpoint flush, and the call returns once everything completed (puts remotely). Any other
//!   call (unregistered memory on either side) takes the TCP conversation, where the relay rule
//!   applies, exactly as before.
//! - **Liveness**: the call borrows one of the link's TCP connections for its duration and
//!   watches it, so a peer that dies turns into FAILED within about a millisecond of its
//!   connection closing, whatever UCX's own detection takes; a time-out or failure force-closes
//!   the UCX endpoint (no request may touch the caller's memory after the call returns) and the
//!   next call makes a new one.
//! - **Progress**: a worker thread per engine drives the UCX worker (event-driven), so
//!   software-emulated transports (TCP, shared memory) serve peers' puts and gets.
//!
//! Built without the feature, [`off`] answers every query with UNSUPPORTED and Initialize
//! with transport `ucx` fails UNSUPPORTED.

#[cfg(not(feature = "ucx"))]
mod off;
#[cfg(not(feature = "ucx"))]
pub use off::*;
#[cfg(feature = "ucx")]
mod on;
#[cfg(feature = "ucx")]
pub use on::*;
#[cfg(feature = "ucx")]
pub mod slot;

/// A link's UCX state: none in a build without the feature.
#[cfg(not(feature = "ucx"))]
pub mod slot {
    use crate::engine::wire::Message;

    #[derive(Default)]
    pub struct PeerSlot {}

    impl PeerSlot {
        pub fn clear(&self, _peer_gone: bool) {}

        pub fn note(&self, _message: &Message) {}
    }
}
