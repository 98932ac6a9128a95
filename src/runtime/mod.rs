//! The emulated AscendCL runtime (safe Rust).

pub mod init;
pub mod memory;
