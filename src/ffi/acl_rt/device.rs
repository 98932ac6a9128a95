//! `acl/acl_rt.h`: devices and peer access.

use std::ffi::c_char;

use crate::config::{Settings, settings};
use crate::error::AclResult;
use crate::error::acl_codes::aclError;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::stream::millis;
use crate::ffi::boundary;
use crate::ffi::ptr::Out;
use crate::runtime::{context, device, device_ids};

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

/// The number of devices this process sees: `ASCENDLESS_DEVICE_COUNT` (default 8), or those
/// `ASCEND_RT_VISIBLE_DEVICES` selects (207004 when its value leaves none).
///
/// # Safety
/// `count` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    acl_call("aclrtGetDeviceCount", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(count, "count") }?;
        out.write(device::count(settings())?);
        Ok(())
    })
}

/// Blocks until every stream of the current device (all its contexts) has run the tasks queued
/// before the call; reports the first task failure found.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDevice() -> aclError {
    acl_call("aclrtSynchronizeDevice", || context::synchronize_device(context::current_device()?, None))
}

/// As `aclrtSynchronizeDevice`, giving up after `timeout` ms (-1: no limit; 0 and below -1 are
/// 107000) with 507046.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError {
    acl_call("aclrtSynchronizeDeviceWithTimeout", || {
        let limit = millis(timeout)?;
        context::synchronize_device(context::current_device()?, limit)
    })
}

/// Runs a device id conversion for an entry point: the out-parameter is checked first (100000
/// when NULL), then `convert` (107000 for a negative id, 107001 for an unknown one).
///
/// # Safety
/// `out` is NULL or valid for a write of an `int32_t`.
unsafe fn convert_id(
    out: *mut i32,
    what: &'static str,
    id: i32,
    convert: fn(i32, &Settings) -> AclResult<i32>,
) -> AclResult<()> {
    // SAFETY: forwarded from the caller's contract.
    let out = unsafe { Out::new(out, what) }?;
    out.write(convert(id, settings())?);
    Ok(())
}

/// The logical id of the device this process calls `userDevid` (its entry in
/// `ASCEND_RT_VISIBLE_DEVICES`; the same number without the variable).
///
/// # Safety
/// `logicDevId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetLogicDevIdByUserDevId(userDevid: i32, logicDevId: *mut i32) -> aclError {
    acl_call("aclrtGetLogicDevIdByUserDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(logicDevId, "logicDevId", userDevid, device_ids::logical_of_user) }
    })
}

/// The user id under which this process sees logical device `logicDevId` (107001 when
/// `ASCEND_RT_VISIBLE_DEVICES` hides it).
///
/// # Safety
/// `userDevid` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetUserDevIdByLogicDevId(logicDevId: i32, userDevid: *mut i32) -> aclError {
    acl_call("aclrtGetUserDevIdByLogicDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(userDevid, "userDevid", logicDevId, device_ids::user_of_logical) }
    })
}

/// As the vendor documents, the "logical" id this answers is the user id (the id
/// `aclrtSetDevice` takes): the same as `aclrtGetUserDevIdByPhyDevId`.
///
/// # Safety
/// `logicDevId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetLogicDevIdByPhyDevId(phyDevId: i32, logicDevId: *mut i32) -> aclError {
    acl_call("aclrtGetLogicDevIdByPhyDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(logicDevId, "logicDevId", phyDevId, device_ids::user_of_physical) }
    })
}

/// As the vendor documents, the "logical" id this takes is the user id (what `aclrtGetDevice`
/// gives): the same as `aclrtGetPhyDevIdByUserDevId`. Physical ids are `0..ASCENDLESS_DEVICE_COUNT`.
///
/// # Safety
/// `phyDevId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetPhyDevIdByLogicDevId(logicDevId: i32, phyDevId: *mut i32) -> aclError {
    acl_call("aclrtGetPhyDevIdByLogicDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(phyDevId, "phyDevId", logicDevId, device_ids::physical_of_user) }
    })
}

/// The user id under which this process sees physical device `phyDevId` (107001 when
/// `ASCEND_RT_VISIBLE_DEVICES` hides it).
///
/// # Safety
/// `userDevId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetUserDevIdByPhyDevId(phyDevId: i32, userDevId: *mut i32) -> aclError {
    acl_call("aclrtGetUserDevIdByPhyDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(userDevId, "userDevId", phyDevId, device_ids::user_of_physical) }
    })
}

/// The physical id of the device this process calls `userDevId`: the id that names it in
/// every process.
///
/// # Safety
/// `phyDevId` is NULL or valid for a write of an `int32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetPhyDevIdByUserDevId(userDevId: i32, phyDevId: *mut i32) -> aclError {
    acl_call("aclrtGetPhyDevIdByUserDevId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { convert_id(phyDevId, "phyDevId", userDevId, device_ids::physical_of_user) }
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
