//! Callbacks at the runtime's own events: `aclInit`/`aclFinalize` (`aclInitCallbackRegister`,
//! `aclFinalizeCallbackRegister`), device set/reset (`aclrtRegDeviceStateCallback`), stream
//! creation/destruction (`aclrtRegStreamStateCallback`) and device task aborts
//! (`aclrtSetDeviceTaskAbortCallback`).
//!
//! As in `exception.rs`, the core keeps Rust closures (the C layer wraps its function pointer
//! and user data in one), so it never calls into C itself. Every list is copied before its
//! callbacks run, outside any lock: a callback may register, unregister or call the runtime.

use std::sync::{Arc, Mutex};

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync;

/// An init callback: given the configuration text, returns an `aclError`.
pub type InitHook = Arc<dyn Fn(&[u8]) -> aclError + Send + Sync>;
/// A finalize callback: returns an `aclError`.
pub type FinalizeHook = Arc<dyn Fn() -> aclError + Send + Sync>;
/// A device state callback: the device and the `aclrtDeviceState`.
pub type DeviceHook = Arc<dyn Fn(i32, u32) + Send + Sync>;
/// A stream state callback: the stream's handle and the `aclrtStreamState`.
pub type StreamHook = Arc<dyn Fn(u64, u32) + Send + Sync>;
/// A task abort callback: the device, the `aclrtDeviceTaskAbortStage` and the time-out.
pub type AbortHook = Arc<dyn Fn(i32, u32, u32) -> i32 + Send + Sync>;

/// `aclrtDeviceState` values.
pub mod device_state {
    pub const SET_PRE: u32 = 0;
    pub const SET_POST: u32 = 1;
    pub const RESET_PRE: u32 = 2;
    pub const RESET_POST: u32 = 3;
}

/// `aclrtStreamState` values.
pub mod stream_state {
    pub const CREATE_POST: u32 = 1;
    pub const DESTROY_PRE: u32 = 2;
}

/// `aclrtDeviceTaskAbortStage` values.
pub mod abort_stage {
    pub const PRE: u32 = 0;
    pub const POST: u32 = 1;
}

/// Callbacks of `aclInit`/`aclFinalize`, keyed by (`aclRegisterCallbackType`, function).
struct Keyed<H> {
    hooks: Vec<(i32, usize, H)>,
}

impl<H: Clone> Keyed<H> {
    const fn new() -> Self {
        Keyed { hooks: Vec::new() }
    }

    /// Registers `hook` under (`kind`, `key`); registering it again replaces its user data.
    fn register(&mut self, kind: i32, key: usize, hook: H) {
        match self.hooks.iter_mut().find(|(t, k, _)| *t == kind && *k == key) {
            Some(slot) => slot.2 = hook,
            None => self.hooks.push((kind, key, hook)),
        }
    }

    fn unregister(&mut self, kind: i32, key: usize) {
        self.hooks.retain(|(t, k, _)| !(*t == kind && *k == key));
    }

    /// The hooks in the order the vendor calls them: by type, `ACL_REG_TYPE_OTHER` last (its
    /// value is the largest), each type's in registration order.
    fn ordered(&self) -> Vec<H> {
        let mut all: Vec<&(i32, usize, H)> = self.hooks.iter().collect();
        all.sort_by_key(|(t, _, _)| *t);
        all.into_iter().map(|(_, _, h)| h.clone()).collect()
    }
}

static INIT: Mutex<Keyed<InitHook>> = Mutex::new(Keyed::new());
static FINALIZE: Mutex<Keyed<FinalizeHook>> = Mutex::new(Keyed::new());

/// `aclRegisterCallbackType` values: 0..=7 and `ACL_REG_TYPE_OTHER` (0xFFFF).
pub fn check_kind(kind: i32) -> AclResult<()> {
    if (0..=7).contains(&kind) || kind == 0xFFFF {
        Ok(())
    } else {
        Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("type {kind} is not an aclRegisterCallbackType (0..=7 or 0xFFFF)"),
        ))
    }
}

/// `aclInitCallbackRegister`: registers `hook`; when AscendCL is already initialised it runs at
/// once with `config` (as the vendor documents) and its code is the call's.
pub fn register_init(kind: i32, key: usize, hook: InitHook, config: Option<Vec<u8>>) -> AclResult<()> {
    check_kind(kind)?;
    sync::lock(&INIT).register(kind, key, Arc::clone(&hook));
    match config {
        Some(text) => code_to_result(hook(&text), "the init callback, run at registration"),
        None => Ok(()),
    }
}

pub fn unregister_init(kind: i32, key: usize) -> AclResult<()> {
    check_kind(kind)?;
    sync::lock(&INIT).unregister(kind, key);
    Ok(())
}

pub fn register_finalize(kind: i32, key: usize, hook: FinalizeHook) -> AclResult<()> {
    check_kind(kind)?;
    sync::lock(&FINALIZE).register(kind, key, hook);
    Ok(())
}

pub fn unregister_finalize(kind: i32, key: usize) -> AclResult<()> {
    check_kind(kind)?;
    sync::lock(&FINALIZE).unregister(kind, key);
    Ok(())
}

fn code_to_result(code: aclError, what: &str) -> AclResult<()> {
    if code == ACL_SUCCESS { Ok(()) } else { Err(AclError::new(code, format!("{what} returned {code}"))) }
}

/// Runs the init callbacks with the configuration text (`aclInit`); the first failure stops
/// them and is `aclInit`'s result.
pub fn run_init(config: &[u8]) -> AclResult<()> {
    let hooks = sync::lock(&INIT).ordered();
    hooks.iter().try_for_each(|h| code_to_result(h(config), "an init callback"))
}

/// Runs the finalize callbacks (`aclFinalize`); a failure is logged and the others still run,
/// so finalising always completes.
pub fn run_finalize() {
    let hooks = sync::lock(&FINALIZE).ordered();
    for h in hooks {
        let code = h();
        if code != ACL_SUCCESS {
            log::warn!(target: TARGET, "a finalize callback returned {code}; finalising anyway");
        }
    }
}

/// Callbacks registered under a unique name.
struct Named<H> {
    hooks: Vec<(String, H)>,
}

impl<H: Clone> Named<H> {
    const fn new() -> Self {
        Named { hooks: Vec::new() }
    }

    /// Registers `hook` under `name` (`Some`), or removes `name` (`None`); a name already
    /// registered is 107000, as the vendor refuses repeated registration.
    fn set(&mut self, name: &str, hook: Option<H>) -> AclResult<()> {
        if name.is_empty() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "regName must not be empty"));
        }
        match hook {
            None => self.hooks.retain(|(n, _)| n != name),
            Some(_) if self.hooks.iter().any(|(n, _)| n == name) => {
                return Err(AclError::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "a callback is already registered as {name:?}: unregister it (NULL callback) first"
                    ),
                ));
            }
            Some(h) => self.hooks.push((name.to_owned(), h)),
        }
        Ok(())
    }

    fn all(&self) -> Vec<H> {
        self.hooks.iter().map(|(_, h)| h.clone()).collect()
    }
}

static DEVICE: Mutex<Named<DeviceHook>> = Mutex::new(Named::new());
static STREAM: Mutex<Named<StreamHook>> = Mutex::new(Named::new());
static ABORT: Mutex<Named<AbortHook>> = Mutex::new(Named::new());

pub fn set_device_hook(name: &str, hook: Option<DeviceHook>) -> AclResult<()> {
    sync::lock(&DEVICE).set(name, hook)
}

pub fn set_stream_hook(name: &str, hook: Option<StreamHook>) -> AclResult<()> {
    sync::lock(&STREAM).set(name, hook)
}

pub fn set_abort_hook(name: &str, hook: Option<AbortHook>) -> AclResult<()> {
    sync::lock(&ABORT).set(name, hook)
}

/// Tells the device state callbacks that `device` reaches `state`.
pub fn device_changed(device: i32, state: u32) {
    let hooks = sync::lock(&DEVICE).all();
    hooks.iter().for_each(|h| h(device, state));
}

/// Tells the stream state callbacks that stream `handle` reaches `state`.
pub fn stream_changed(handle: u64, state: u32) {
    let hooks = sync::lock(&STREAM).all();
    hooks.iter().for_each(|h| h(handle, state));
}

/// Runs `abort` between the task abort callbacks' PRE and POST calls for `device`; a callback
/// that returns an error is logged (the abort goes on, as a hung callback must not keep the
/// device from recovering).
pub fn around_task_abort(
    device: i32,
    timeout_ms: u32,
    abort: impl FnOnce() -> AclResult<()>,
) -> AclResult<()> {
    let hooks = sync::lock(&ABORT).all();
    let run = |stage: u32| {
        for h in &hooks {
            let code = h(device, stage, timeout_ms);
            if code != 0 {
                log::warn!(target: TARGET, "a device task abort callback returned {code} (stage {stage})");
            }
        }
    };
    run(abort_stage::PRE);
    let result = abort();
    run(abort_stage::POST);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn names_are_unique_and_null_unregisters() {
        let mut n: Named<u32> = Named::new();
        n.set("a", Some(1)).unwrap();
        assert_eq!(n.set("a", Some(2)).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(n.set("", Some(2)).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
        n.set("a", None).unwrap();
        n.set("a", Some(3)).unwrap();
        assert_eq!(n.all(), vec![3]);
    }

    #[test]
    fn keyed_hooks_run_by_type_with_other_last() {
        let mut k: Keyed<u32> = Keyed::new();
        k.register(0xFFFF, 1, 9);
        k.register(3, 2, 3);
        k.register(0, 3, 0);
        k.register(3, 2, 4);
        assert_eq!(k.ordered(), vec![0, 4, 9]);
        k.unregister(3, 2);
        assert_eq!(k.ordered(), vec![0, 9]);
    }

    #[test]
    fn abort_callbacks_bracket_the_abort() {
        static SEEN: AtomicU32 = AtomicU32::new(0);
        set_abort_hook(
            "unit-bracket",
            Some(Arc::new(|d, stage, t| {
                if d == 61 && t == 5 {
                    SEEN.fetch_add(1 + stage * 10, Ordering::SeqCst);
                }
                0
            })),
        )
        .unwrap();
        around_task_abort(61, 5, || {
            assert_eq!(SEEN.load(Ordering::SeqCst), 1);
            Ok(())
        })
        .unwrap();
        assert_eq!(SEEN.load(Ordering::SeqCst), 12);
        set_abort_hook("unit-bracket", None).unwrap();
    }
}
