//! `hccl/*.h`: HCCL's C API over the communicators of [`crate::hccl`]. One file per header
//! (`hccl_types.rs` holds the types of `hccl/hccl_types.h` and what the others share); the
//! result numbers come from [`crate::error::hccl_codes`], the single place they are defined.
//! The rules where the vendor is silent are in docs/hccl.md.

pub mod hccl_types;

pub mod hccl_comm;

// HcclGroupStart/HcclGroupEnd: the operations a group holds.
mod group;

#[allow(clippy::module_inception)]
pub mod hccl;

pub mod hccl_mc2;
