//! `acl/acl_rt.h`: callbacks at the runtime's own events (`runtime/lifecycle_callbacks.rs`):
//! `aclInit`/`aclFinalize`, device set/reset, stream creation/destruction and device task
//! aborts; and the id of the last task a thread queued.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::to_c;
use crate::ffi::ptr::{Out, required_str};
use crate::runtime::{init, last_task, lifecycle_callbacks as hooks};

/// Who registers an init/finalize callback (the vendor's components); `ACL_REG_TYPE_OTHER`
/// callbacks run last.
#[repr(C)]
pub enum aclRegisterCallbackType {
    ACL_REG_TYPE_ACL_MODEL = 0,
    ACL_REG_TYPE_ACL_OP_EXECUTOR = 1,
    ACL_REG_TYPE_ACL_OP_CBLAS = 2,
    ACL_REG_TYPE_ACL_OP_COMPILER = 3,
    ACL_REG_TYPE_ACL_TDT_CHANNEL = 4,
    ACL_REG_TYPE_ACL_TDT_QUEUE = 5,
    ACL_REG_TYPE_ACL_DVPP = 6,
    ACL_REG_TYPE_ACL_RETR = 7,
    ACL_REG_TYPE_OTHER = 0xFFFF,
}

/// An `aclRegisterCallbackType` value as received (any integer).
pub type RegisterCallbackTypeArg = i32;

/// Called by `aclInit` with the configuration file's text and length.
pub type aclInitCallbackFunc =
    Option<unsafe extern "C" fn(configStr: *const c_char, len: usize, userData: *mut c_void) -> aclError>;
/// Called by `aclFinalize`.
pub type aclFinalizeCallbackFunc = Option<unsafe extern "C" fn(userData: *mut c_void) -> aclError>;

/// A device's state change (`aclrtRegDeviceStateCallback`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum aclrtDeviceState {
    ACL_RT_DEVICE_STATE_SET_PRE = 0,
    ACL_RT_DEVICE_STATE_SET_POST = 1,
    ACL_RT_DEVICE_STATE_RESET_PRE = 2,
    ACL_RT_DEVICE_STATE_RESET_POST = 3,
}

/// Called around `aclrtSetDevice` and `aclrtResetDevice`.
pub type aclrtDeviceStateCallback =
    Option<unsafe extern "C" fn(deviceId: i32, state: aclrtDeviceState, args: *mut c_void)>;

/// A stream's state change (`aclrtRegStreamStateCallback`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum aclrtStreamState {
    ACL_RT_STREAM_STATE_CREATE_POST = 1,
    ACL_RT_STREAM_STATE_DESTROY_PRE = 2,
}

/// Called after a stream is created and before it is destroyed.
pub type aclrtStreamStateCallback =
    Option<unsafe extern "C" fn(stm: aclrtStream, state: aclrtStreamState, args: *mut c_void)>;

/// When a device task abort callback runs.
#[repr(C)]
#[derive(Clone, Copy)]
pub enum aclrtDeviceTaskAbortStage {
    ACL_RT_DEVICE_TASK_ABORT_PRE = 0,
    ACL_RT_DEVICE_TASK_ABORT_POST = 1,
}

/// Called before and after `aclrtDeviceTaskAbort`.
pub type aclrtDeviceTaskAbortCallback = Option<
    unsafe extern "C" fn(
        deviceId: i32,
        stage: aclrtDeviceTaskAbortStage,
        timeout: u32,
        args: *mut c_void,
    ) -> i32,
>;

/// User data carried to a callback; the caller keeps what it points to valid while registered.
#[derive(Clone, Copy)]
struct UserData(usize);

impl UserData {
    fn of(p: *mut c_void) -> UserData {
        UserData(p.expose_provenance())
    }
    fn get(self) -> *mut c_void {
        std::ptr::with_exposed_provenance_mut(self.0)
    }
}

fn required<T>(f: Option<T>, what: &str) -> Result<T, AclError> {
    f.ok_or_else(|| AclError::new(ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL")))
}

/// Registers `cbFunc` (with `userData`) to run in `aclInit`, given the configuration file's
/// text ("" without one) and its length; callbacks run by `type`, `ACL_REG_TYPE_OTHER` last,
/// and a failing one fails `aclInit`. Registered after `aclInit`, it runs at once and its
/// result is this call's. The same function and type again replaces the user data.
///
/// # Safety
/// `cbFunc` stays callable, and `userData` valid for it, while registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInitCallbackRegister(
    r#type: RegisterCallbackTypeArg,
    cbFunc: aclInitCallbackFunc,
    userData: *mut c_void,
) -> aclError {
    acl_call("aclInitCallbackRegister", || {
        let cb = required(cbFunc, "cbFunc")?;
        let data = UserData::of(userData);
        let hook: hooks::InitHook = Arc::new(move |text: &[u8]| {
            // SAFETY: registered as an `aclInitCallbackFunc` with this user data (this
            // function's contract); `text` lives for the call.
            unsafe { cb(text.as_ptr().cast(), text.len(), data.get()) }
        });
        hooks::register_init(r#type, cb as usize, hook, init::config_if_initialized())
    })
}

/// Removes an init callback (NULL: 100000; one not registered: success).
#[unsafe(no_mangle)]
pub extern "C" fn aclInitCallbackUnRegister(
    r#type: RegisterCallbackTypeArg,
    cbFunc: aclInitCallbackFunc,
) -> aclError {
    acl_call("aclInitCallbackUnRegister", || {
        hooks::unregister_init(r#type, required(cbFunc, "cbFunc")? as usize)
    })
}

/// Registers `cbFunc` (with `userData`) to run in `aclFinalize` (and in the
/// `aclFinalizeReference` that finalises), before the devices are released; a failing one is
/// logged and finalising goes on.
///
/// # Safety
/// `cbFunc` stays callable, and `userData` valid for it, while registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeCallbackRegister(
    r#type: RegisterCallbackTypeArg,
    cbFunc: aclFinalizeCallbackFunc,
    userData: *mut c_void,
) -> aclError {
    acl_call("aclFinalizeCallbackRegister", || {
        let cb = required(cbFunc, "cbFunc")?;
        let data = UserData::of(userData);
        let hook: hooks::FinalizeHook = Arc::new(move || {
            // SAFETY: registered as an `aclFinalizeCallbackFunc` with this user data.
            unsafe { cb(data.get()) }
        });
        hooks::register_finalize(r#type, cb as usize, hook)
    })
}

/// Removes a finalize callback (NULL: 100000; one not registered: success).
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalizeCallbackUnRegister(
    r#type: RegisterCallbackTypeArg,
    cbFunc: aclFinalizeCallbackFunc,
) -> aclError {
    acl_call("aclFinalizeCallbackUnRegister", || {
        hooks::unregister_finalize(r#type, required(cbFunc, "cbFunc")? as usize)
    })
}

/// Registers `callback` under the unique name `regName`, called on the calling thread when a
/// device opens (before and after the `aclrtSetDevice` that first uses it) and closes (before
/// and after the reset that releases it, `aclFinalize`'s included), as the vendor's runtime. A NULL `callback` unregisters `regName`; a name already
/// registered is 107000; an empty or NULL name is 100000.
///
/// # Safety
/// `regName` is NULL or a NUL-terminated string; `callback` stays callable, and `args` valid
/// for it, while registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRegDeviceStateCallback(
    regName: *const c_char,
    callback: aclrtDeviceStateCallback,
    args: *mut c_void,
) -> aclError {
    acl_call("aclrtRegDeviceStateCallback", || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { required_str(regName, "regName") }?;
        let data = UserData::of(args);
        let hook = callback.map(|cb| -> hooks::DeviceHook {
            Arc::new(move |device, state| {
                let state = match state {
                    hooks::device_state::SET_PRE => aclrtDeviceState::ACL_RT_DEVICE_STATE_SET_PRE,
                    hooks::device_state::SET_POST => aclrtDeviceState::ACL_RT_DEVICE_STATE_SET_POST,
                    hooks::device_state::RESET_PRE => aclrtDeviceState::ACL_RT_DEVICE_STATE_RESET_PRE,
                    _ => aclrtDeviceState::ACL_RT_DEVICE_STATE_RESET_POST,
                };
                // SAFETY: registered as an `aclrtDeviceStateCallback` with this user data.
                unsafe { cb(device, state, data.get()) }
            })
        });
        hooks::set_device_hook(name, hook)
    })
}

/// Registers `callback` under the unique name `regName`, called after every stream is created
/// (default streams included, when their context is) and before it is destroyed (also when its
/// context or device goes). NULL `callback` unregisters; a name already registered is 107000.
///
/// # Safety
/// As for `aclrtRegDeviceStateCallback`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRegStreamStateCallback(
    regName: *const c_char,
    callback: aclrtStreamStateCallback,
    args: *mut c_void,
) -> aclError {
    acl_call("aclrtRegStreamStateCallback", || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { required_str(regName, "regName") }?;
        let data = UserData::of(args);
        let hook = callback.map(|cb| -> hooks::StreamHook {
            Arc::new(move |handle, state| {
                let state = if state == hooks::stream_state::CREATE_POST {
                    aclrtStreamState::ACL_RT_STREAM_STATE_CREATE_POST
                } else {
                    aclrtStreamState::ACL_RT_STREAM_STATE_DESTROY_PRE
                };
                // SAFETY: registered as an `aclrtStreamStateCallback` with this user data.
                unsafe { cb(to_c(handle), state, data.get()) }
            })
        });
        hooks::set_stream_hook(name, hook)
    })
}

/// Registers `callback` under the unique name `regName`, called before
/// (`ACL_RT_DEVICE_TASK_ABORT_PRE`) and after (`..._POST`) every `aclrtDeviceTaskAbort`, with
/// its device and time-out; a non-zero return is logged and the abort goes on. NULL `callback`
/// unregisters; a name already registered is 107000.
///
/// # Safety
/// As for `aclrtRegDeviceStateCallback`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDeviceTaskAbortCallback(
    regName: *const c_char,
    callback: aclrtDeviceTaskAbortCallback,
    args: *mut c_void,
) -> aclError {
    acl_call("aclrtSetDeviceTaskAbortCallback", || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { required_str(regName, "regName") }?;
        let data = UserData::of(args);
        let hook = callback.map(|cb| -> hooks::AbortHook {
            Arc::new(move |device, stage, timeout| {
                let stage = if stage == hooks::abort_stage::PRE {
                    aclrtDeviceTaskAbortStage::ACL_RT_DEVICE_TASK_ABORT_PRE
                } else {
                    aclrtDeviceTaskAbortStage::ACL_RT_DEVICE_TASK_ABORT_POST
                };
                // SAFETY: registered as an `aclrtDeviceTaskAbortCallback` with this user data.
                unsafe { cb(device, stage, timeout, data.get()) }
            })
        });
        hooks::set_abort_hook(name, hook)
    })
}

/// The id of the last task this thread queued on a stream: its place on that stream from 0
/// (the task id exception callbacks report). Before the thread queued any: 0.
///
/// # Safety
/// `taskId` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetThreadLastTaskId(taskId: *mut u32) -> aclError {
    acl_call("aclrtGetThreadLastTaskId", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(taskId, "taskId") }?.write(last_task::last().unwrap_or(0));
        Ok(())
    })
}
