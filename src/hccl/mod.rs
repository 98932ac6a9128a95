//! HCCL's host-side concepts, which faces other than HCCL's own also meet. Today the rank
//! table: the JSON that names every rank of a communicator and where it is, which
//! LLM-DataDist's `link(comm_name, cluster_rank_info, rank_table)` passes to HCCL on the
//! vendor's stack, and from which ascendless finds each rank's engine.

pub mod comm;
pub mod ops;
pub mod rank_table;
mod run;
pub mod types;
