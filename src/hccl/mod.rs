//! HCCL on a host: communicators of ranks in processes of one or several hosts, and the
//! collectives and point-to-point transfers they run as stream tasks (`libhccl.so`'s core;
//! the C face is `src/ffi/hccl`). Also the rank table, which LLM-DataDist's
//! `link(comm_name, cluster_rank_info, rank_table)` passes on.
//!
//! A communicator is a new face of the ADXL engine, not a transport of its own: each rank has
//! an engine (`endpoint.rs`), ranks coordinate with its notifies and move bytes with its reads
//! (same-host memory, TCP, UCX), authenticated with a secret carried in the root info
//! (`root_info.rs`). `comm.rs` makes communicators, `plan.rs` checks arguments, `run.rs` runs
//! each operation's steps, `env.rs` reads the vendor's variables. See docs/hccl.md.

pub mod comm;
mod endpoint;
mod env;
pub mod ops;
mod plan;
pub mod rank_table;
mod root_info;
mod run;
pub mod types;

#[cfg(test)]
mod tests;
