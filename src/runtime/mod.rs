//! The emulated AscendCL runtime (safe Rust).

pub mod context;
pub mod device;
pub mod event;
pub mod init;
pub mod memory;
pub mod notify;
pub mod product;
pub mod share;
pub mod stream;

/// Called when a device's last use is reset: frees the memory and the notifies made on it.
fn on_device_released(device: i32) {
    let freed = memory::release_device(device);
    let notifies = notify::release_device(device);
    if freed + notifies > 0 {
        log::debug!(
            target: crate::logging::TARGET,
            "device {device} released with {freed} allocation(s) and {notifies} notify(ies) still live"
        );
    }
}
