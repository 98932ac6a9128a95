//! The paths a transfer's bytes take, chosen per call (see `Engine::execute`): the same-host
//! paths first, then UCX when the link uses it, else TCP.
//!
//! - [`direct`]: the same-host paths of a transfer (direct copy, kernel copy) and the
//!   per-engine counters of every path.
//! - [`pieces`]: a same-host copy cut into pieces that several threads take in turn.
//! - [`shm`]: the same-host channel (memfds of registered memory, checked peers) that
//!   [`direct`] uses.
//! - [`ucx`]: the UCX transport of the `ucx` build feature (one-sided puts and gets).
//! - [`tcp`]: the initiator's side of a transfer over TCP (and of SendNotify and the heartbeat's
//!   PING).
//! - [`relay`]: the bounded buffers that relay memory that is not registered.

pub mod direct;
pub mod pieces;
pub mod relay;
pub mod shm;
pub mod tcp;
pub mod ucx;
