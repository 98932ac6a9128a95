//! Runs a planned operation on one rank.

/// What a communicator's operations share.
pub struct Shared {}
