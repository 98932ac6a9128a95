//! The emulated AscendCL runtime (safe Rust).

pub mod init;
