//! Virtual devices: ids, `aclrtSetDevice` reference counts, default contexts and peer access.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::context::{self, Context};
use crate::config::settings;
use crate::error::rt_codes::{ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_PARAM_INVALID};
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
        d.resize_with(settings().device_count as usize, Device::default);
    }
    d
}

/// Number of virtual devices.
pub fn count() -> u32 {
    settings().device_count
}

/// `Ok` for an id of an existing device, else 107001.
pub fn check_id(id: i32) -> AclResult<usize> {
    usize::try_from(id).ok().filter(|&i| i < count() as usize).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!("device id {id} is invalid: this machine has devices 0..{}", count().saturating_sub(1)),
        )
    })
}

/// `aclrtSetDevice`: counts one use of the device, creating its default context on the first,
/// and makes that context current on this thread.
pub fn set(id: i32) -> AclResult<()> {
    let i = check_id(id)?;
    let ctx = {
        let mut d = devices();
        let dev = &mut d[i];
        let ctx = match &dev.default_context {
            Some(c) => Arc::clone(c),
            None => {
                let c = Context::create(id, false)?;
                dev.default_context = Some(Arc::clone(&c));
                c
            }
        };
        dev.refs += 1;
        ctx
    };
    context::set_current(Some(ctx));
    Ok(())
}

/// `aclrtResetDevice` (`force`: `aclrtResetDeviceForce`): takes one use away (all, when
/// forced); at zero the device's default context, its streams and its memory are released.
/// Resetting a device that is not in use is a no-op.
pub fn reset(id: i32, force: bool) -> AclResult<()> {
    let i = check_id(id)?;
    let released = {
        let mut d = devices();
        let dev = &mut d[i];
        if dev.refs == 0 {
            log::debug!(target: TARGET, "device {id} reset while not in use: nothing to do");
            return Ok(());
        }
        dev.refs = if force { 0 } else { dev.refs - 1 };
        if dev.refs > 0 {
            return Ok(());
        }
        dev.peers.clear();
        dev.default_context.take()
    };
    if let Some(ctx) = released {
        context::clear_current_if(ctx.handle);
        ctx.destroy(force);
    }
    run_release_hooks(id);
    Ok(())
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

/// `aclrtDeviceCanAccessPeer`: every pair of distinct devices of one server can.
pub fn can_access_peer(id: i32, peer: i32) -> AclResult<bool> {
    check_id(id)?;
    check_id(peer)?;
    Ok(id != peer)
}

/// `aclrtDeviceEnablePeerAccess` from the current device to `peer` (one direction).
pub fn enable_peer(peer: i32, flags: u32) -> AclResult<()> {
    if flags != 0 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flags must be 0, got {flags}")));
    }
    let me = context::current_device()?;
    let p = check_id(peer)?;
    if me == peer {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("device {peer} is the current device; peer access is between two devices"),
        ));
    }
    devices()[check_id(me)?].peers.insert(p as i32);
    Ok(())
}

/// `aclrtDeviceDisablePeerAccess` from the current device to `peer`; disabling access that is
/// not enabled is a no-op.
pub fn disable_peer(peer: i32) -> AclResult<()> {
    let me = context::current_device()?;
    check_id(peer)?;
    devices()[check_id(me)?].peers.remove(&peer);
    Ok(())
}

/// `aclrtDevicePeerAccessStatus`: whether `id` has enabled access to `peer`.
pub fn peer_access_enabled(id: i32, peer: i32) -> AclResult<bool> {
    let i = check_id(id)?;
    check_id(peer)?;
    Ok(devices()[i].peers.contains(&peer))
}

/// Enables access from `id` to `peer` on behalf of an IPC import with the ENABLE_PEER_ACCESS
/// flag (the importing thread's device need not be the current one of another thread).
pub fn enable_peer_from(id: i32, peer: i32) -> AclResult<()> {
    let i = check_id(id)?;
    check_id(peer)?;
    if id != peer {
        devices()[i].peers.insert(peer);
    }
    Ok(())
}

/// Releases every device in use, whatever its count (`aclFinalize`).
pub fn release_all() {
    let in_use: Vec<i32> =
        devices().iter().enumerate().filter(|(_, d)| d.refs > 0).map(|(i, _)| i as i32).collect();
    for id in in_use {
        if let Err(e) = reset(id, true) {
            log::warn!(target: TARGET, "releasing device {id} at finalisation: {}", e.message);
        }
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
}
