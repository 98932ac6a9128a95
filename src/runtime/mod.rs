//! The emulated AscendCL runtime (safe Rust).

pub mod allocation_export;
pub mod context;
pub mod device;
pub mod device_ids;
pub mod device_info;
pub(crate) mod drain;
pub(crate) mod event;
pub mod exception;
pub(crate) mod host_task;
pub mod init;
pub(crate) mod ipc_event;
pub mod label;
pub(crate) mod last_task;
pub mod lifecycle_callbacks;
pub mod limits;
pub mod mbuf;
pub mod memory;
pub mod notify;
pub mod reduce;
pub(crate) mod report;
pub mod share;
pub(crate) mod stream;
pub mod sys_params;
pub(crate) mod value;
pub mod version;
