//! Virtual devices: ids, `aclrtSetDevice` reference counts, default contexts and peer access.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::context::{self, Context};
use super::lifecycle_callbacks::{device_changed, device_state};
use crate::config::{MAX_DEVICE_COUNT, Settings};
use crate::error::rt_codes::{
    ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_NO_DEVICE, ACL_ERROR_RT_PARAM_INVALID,
};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync;

#[derive(Default)]
struct Device {
    /// `aclrtSetDevice` calls not yet matched by `aclrtResetDevice`.
    refs: u32,
    default_context: Option<Arc<Context>>,
    /// Devices this one may access (`aclrtDeviceEnablePeerAccess` from this device).
    peers: BTreeSet<i32>,
}

static DEVICES: Mutex<Vec<Device>> = Mutex::new(Vec::new());

fn devices() -> MutexGuard<'static, Vec<Device>> {
    let mut d = sync::lock(&DEVICES);
    if d.is_empty() {
        // Room for every device a process may be configured with; ids are checked against the
        // configured count by `check_id`.
        d.resize_with(MAX_DEVICE_COUNT as usize, Device::default);
    }
    d
}

/// `Ok` (its index in the device table) for a user id of a device this process sees (the
/// machine `s` describes, through `ASCEND_RT_VISIBLE_DEVICES`), else 107001.
pub fn check_id(id: i32, s: &Settings) -> AclResult<usize> {
    if let Some(why) = s.visible.fault_text() {
        return Err(AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("device id {id} is invalid: {why}"),
        ));
    }
    let count = s.visible.count();
    usize::try_from(id).ok().filter(|&i| i < count as usize).ok_or_else(|| {
        let note = s.visible.setting.as_ref().map(|v| format!(" (ASCEND_RT_VISIBLE_DEVICES={v:?})"));
        AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!(
                "device id {id} is invalid: this process sees devices {}{}",
                s.visible.user_range(),
                note.unwrap_or_default()
            ),
        )
    })
}

/// `aclrtGetDeviceCount`: the devices this process sees; 207004 when
/// `ASCEND_RT_VISIBLE_DEVICES` leaves it none.
pub fn count(s: &Settings) -> AclResult<u32> {
    match s.visible.fault_text() {
        Some(why) => Err(AclError::new(ACL_ERROR_RT_NO_DEVICE, why)),
        None => Ok(s.visible.count()),
    }
}

/// `aclrtSetDevice`: counts one use of the device, creating its default context on the first,
/// and makes that context current on this thread.
pub fn set(id: i32, s: &Settings) -> AclResult<()> {
    let i = check_id(id, s)?;
    // As the vendor's, the device state callbacks hear of the device being opened (its first
    // use) and closed (its last reset), not of every count.
    let fresh = devices()[i].default_context.is_none();
    if fresh {
        device_changed(id, device_state::SET_PRE);
    }
    let (ctx, created) = {
        let mut d = devices();
        let dev = &mut d[i];
        let (ctx, created) = match &dev.default_context {
            Some(c) => (Arc::clone(c), false),
            None => {
                let c = Context::create(id, false)?;
                dev.default_context = Some(Arc::clone(&c));
                (c, true)
            }
        };
        dev.refs += 1;
        (ctx, created)
    };
    if created {
        ctx.announce();
    }
    context::set_current(Some(ctx));
    if created {
        device_changed(id, device_state::SET_POST);
    }
    Ok(())
}

/// `aclrtResetDevice` (`force`: `aclrtResetDeviceForce`): takes one use away (all, when
/// forced); at zero the device's default context, its streams and its memory are released.
/// Resetting a device that is not in use is a no-op.
pub fn reset(id: i32, force: bool, s: &Settings) -> AclResult<()> {
    reset_checked(check_id(id, s)?, force);
    Ok(())
}

/// `reset` of the device at index `i` of the table, a checked id.
fn reset_checked(i: usize, force: bool) {
    let id = i as i32;
    let released = {
        let mut d = devices();
        let dev = &mut d[i];
        if dev.refs == 0 {
            log::debug!(target: TARGET, "device {id} reset while not in use: nothing to do");
            return;
        }
        dev.refs = if force { 0 } else { dev.refs - 1 };
        if dev.refs > 0 {
            return;
        }
        dev.peers.clear();
        dev.default_context.take()
    };
    let closing = released.is_some();
    if closing {
        device_changed(id, device_state::RESET_PRE);
    }
    if let Some(ctx) = released {
        context::clear_current_if(ctx.handle);
        ctx.destroy(force);
    }
    super::sys_params::forget_device(id);
    super::limits::reset_device_res(id);
    run_release_hooks(id);
    if closing {
        device_changed(id, device_state::RESET_POST);
    }
}

/// A module's way to free its per-device state when a device's last use is reset: how many
/// objects it freed, named `what` in the log.
#[derive(Clone, Copy)]
struct ReleaseHook {
    what: &'static str,
    release: fn(i32) -> usize,
}

static RELEASE_HOOKS: Mutex<Vec<ReleaseHook>> = Mutex::new(Vec::new());

/// Has `release` run when a device's last use is reset. A module that keeps state per device
/// (memory, notifies) registers when it first keeps some, so this module needs to know none of
/// them. Registering `what` again is harmless.
pub fn on_release(what: &'static str, release: fn(i32) -> usize) {
    let mut hooks = sync::lock(&RELEASE_HOOKS);
    if !hooks.iter().any(|h| h.what == what) {
        hooks.push(ReleaseHook { what, release });
    }
}

/// Runs the release hooks for `device` (outside the hooks' lock: a hook may register another).
fn run_release_hooks(device: i32) {
    let hooks = sync::lock(&RELEASE_HOOKS).clone();
    let freed: Vec<String> = (hooks.iter())
        .map(|h| ((h.release)(device), h.what))
        .filter(|&(n, _)| n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if !freed.is_empty() {
        log::debug!(target: TARGET, "device {device} released with {} still live", freed.join(" and "));
    }
}

/// `aclrtGetPrimaryCtxState`: whether device `id`'s default context exists (the device is set
/// and not reset).
pub fn primary_active(id: i32, s: &Settings) -> AclResult<bool> {
    let i = check_id(id, s)?;
    Ok(devices()[i].default_context.is_some())
}

/// `aclrtDeviceCanAccessPeer`: every pair of distinct devices of one server can.
pub fn can_access_peer(id: i32, peer: i32, s: &Settings) -> AclResult<bool> {
    check_id(id, s)?;
    check_id(peer, s)?;
    Ok(id != peer)
}

/// `aclrtDeviceEnablePeerAccess` from the current device to `peer` (one direction).
pub fn enable_peer(peer: i32, flags: u32, s: &Settings) -> AclResult<()> {
    if flags != 0 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flags must be 0, got {flags}")));
    }
    let me = context::current_device()?;
    let p = check_id(peer, s)?;
    if me == peer {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("device {peer} is the current device; peer access is between two devices"),
        ));
    }
    devices()[check_id(me, s)?].peers.insert(p as i32);
    Ok(())
}

/// `aclrtDeviceDisablePeerAccess` from the current device to `peer`; disabling access that is
/// not enabled is a no-op.
pub fn disable_peer(peer: i32, s: &Settings) -> AclResult<()> {
    let me = context::current_device()?;
    check_id(peer, s)?;
    devices()[check_id(me, s)?].peers.remove(&peer);
    Ok(())
}

/// `aclrtDevicePeerAccessStatus`: whether `id` has enabled access to `peer`.
pub fn peer_access_enabled(id: i32, peer: i32, s: &Settings) -> AclResult<bool> {
    let i = check_id(id, s)?;
    check_id(peer, s)?;
    Ok(devices()[i].peers.contains(&peer))
}

/// Enables access from `id` to `peer` on behalf of an IPC import with the ENABLE_PEER_ACCESS
/// flag (the importing thread's device need not be the current one of another thread).
pub fn enable_peer_from(id: i32, peer: i32, s: &Settings) -> AclResult<()> {
    let i = check_id(id, s)?;
    check_id(peer, s)?;
    if id != peer {
        devices()[i].peers.insert(peer);
    }
    Ok(())
}

/// Releases every device in use, whatever its count (`aclFinalize`).
pub fn release_all() {
    let in_use: Vec<usize> =
        devices().iter().enumerate().filter(|(_, d)| d.refs > 0).map(|(i, _)| i).collect();
    for i in in_use {
        reset_checked(i, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    static RELEASED: AtomicI32 = AtomicI32::new(-1);

    fn note(device: i32) -> usize {
        RELEASED.store(device, Ordering::SeqCst);
        0
    }

    #[test]
    fn a_registered_hook_runs_once_per_release_however_often_it_registers() {
        on_release("test marker(s)", note);
        on_release("test marker(s)", note);
        let registered = sync::lock(&RELEASE_HOOKS).iter().filter(|h| h.what == "test marker(s)").count();
        assert_eq!(registered, 1);
        // A device id no other test uses: the other hooks find nothing to free on it.
        run_release_hooks(97);
        assert_eq!(RELEASED.load(Ordering::SeqCst), 97);
    }

    #[test]
    fn ids_are_checked_against_the_machine_passed_in() {
        let machine = |count: &'static str| {
            crate::config::from_env(move |v| (v == "ASCENDLESS_DEVICE_COUNT").then(|| count.to_owned()))
        };
        let (four, sixteen) = (machine("4"), machine("16"));
        let err = check_id(5, &four).unwrap_err();
        assert_eq!(err.code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(err.message.contains("0..3"), "{}", err.message);
        assert_eq!(check_id(5, &sixteen).unwrap(), 5);
        assert!(can_access_peer(3, 12, &sixteen).unwrap());
        assert_eq!(can_access_peer(3, 12, &four).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
    }

    #[test]
    fn ids_and_count_follow_the_visible_devices() {
        let with = |visible: &'static str| {
            crate::config::from_env(move |v| (v == "ASCEND_RT_VISIBLE_DEVICES").then(|| visible.to_owned()))
        };
        let two = with("3,6");
        assert_eq!(count(&two).unwrap(), 2);
        assert_eq!(check_id(1, &two).unwrap(), 1);
        let err = check_id(2, &two).unwrap_err();
        assert_eq!(err.code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(err.message.contains("0..1") && err.message.contains("3,6"), "{}", err.message);
        let none = with("6,3");
        assert_eq!(count(&none).unwrap_err().code, ACL_ERROR_RT_NO_DEVICE);
        assert_eq!(check_id(0, &none).unwrap_err().code, ACL_ERROR_RT_INVALID_DEVICEID);
    }
}
