//! The emulated AscendCL runtime (safe Rust).

pub mod allocation_export;
pub(crate) mod capture;
pub mod context;
pub mod device;
pub mod device_ids;
pub(crate) mod drain;
pub(crate) mod event;
pub mod exception;
pub(crate) mod host_task;
pub mod init;
pub(crate) mod ipc_event;
pub mod memory;
pub mod notify;
pub(crate) mod report;
pub mod share;
pub(crate) mod stream;
pub(crate) mod task;
pub(crate) mod value;
