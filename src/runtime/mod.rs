//! The emulated AscendCL runtime (safe Rust).

pub mod context;
pub mod device;
pub mod event;
pub mod init;
pub mod product;
pub mod stream;

/// Called when a device's last use is reset: releases what other modules hold for it.
fn on_device_released(_device: i32) {}
