//! `acl/acl_rt.h`: devices and peer access.

use std::ffi::c_char;

use crate::config::settings;
use crate::error::acl_codes::aclError;
use crate::ffi::ptr::Out;
use crate::ffi::{acl_call, boundary};
use crate::runtime::{context, device};

/// Makes `deviceId` the current device of this thread (its default context becomes current).
/// Counted: each call needs one `aclrtResetDevice`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(deviceId: i32) -> aclError {
    acl_call("aclrtSetDevice", || device::set(deviceId, settings()))
}

/// Takes one `aclrtSetDevice` count away; at zero the device's streams, events' pending work
/// and memory are released. Resetting a device not in use does nothing.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(deviceId: i32) -> aclError {
    acl_call("aclrtResetDevice", || device::reset(deviceId, false, settings()))
}

/// Releases the device at once, whatever its count; pending stream work is dropped.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceForce(deviceId: i32) -> aclError {
    acl_call("aclrtResetDeviceForce", || device::reset(deviceId, true, settings()))
}

/// The current device of this thread; 107002 when none is set.
///
/// # Safety
/// `deviceId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(deviceId: *mut i32) -> aclError {
    acl_call("aclrtGetDevice", || {
        let id = context::current_device()?;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(deviceId, "deviceId") }?.write(id);
        Ok(())
    })
}

/// The number of virtual devices (`ASCENDLESS_DEVICE_COUNT`, default 8).
///
/// # Safety
/// `count` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    acl_call("aclrtGetDeviceCount", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(count, "count") }?.write(settings().device_count);
        Ok(())
    })
}

/// The SoC name of the emulated product (`ASCENDLESS_SOC`, default "Ascend910B1"); never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSocName() -> *const c_char {
    boundary("aclrtGetSocName", c"Ascend910B1".as_ptr(), || settings().soc.as_ptr())
}

/// The process id other processes must whitelist to import this process's exports.
///
/// # Safety
/// `pid` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetBareTgid(pid: *mut i32) -> aclError {
    acl_call("aclrtDeviceGetBareTgid", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(pid, "pid") }?.write(std::process::id() as i32);
        Ok(())
    })
}

/// Whether `deviceId` can access `peerDeviceId`: 1 for two distinct devices, 0 for the same.
///
/// # Safety
/// `canAccessPeer` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceCanAccessPeer(
    canAccessPeer: *mut i32,
    deviceId: i32,
    peerDeviceId: i32,
) -> aclError {
    acl_call("aclrtDeviceCanAccessPeer", || {
        let can = device::can_access_peer(deviceId, peerDeviceId, settings())?;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(canAccessPeer, "canAccessPeer") }?.write(i32::from(can));
        Ok(())
    })
}

/// Enables access from the current device to `peerDeviceId` (one direction); `flags` must be 0.
/// Enabling twice is harmless.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> aclError {
    acl_call("aclrtDeviceEnablePeerAccess", || device::enable_peer(peerDeviceId, flags, settings()))
}

/// Disables access from the current device to `peerDeviceId`; a no-op if it was not enabled.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> aclError {
    acl_call("aclrtDeviceDisablePeerAccess", || device::disable_peer(peerDeviceId, settings()))
}

/// 1 if `deviceId` has enabled access to `peerDeviceId`, else 0.
///
/// # Safety
/// `status` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDevicePeerAccessStatus(
    deviceId: i32,
    peerDeviceId: i32,
    status: *mut i32,
) -> aclError {
    acl_call("aclrtDevicePeerAccessStatus", || {
        let on = device::peer_access_enabled(deviceId, peerDeviceId, settings())?;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(status, "status") }?.write(i32::from(on));
        Ok(())
    })
}
