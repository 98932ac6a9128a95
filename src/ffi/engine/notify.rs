//! Notifies between engines (SendNotify, GetNotifies): short named messages, not the
//! runtime's `aclrtNotify`.

use std::ffi::c_char;

use super::handle::AscendlessEngine;
use crate::engine::Engine;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::resolve;
use crate::ffi::ptr::{Out, required_str};

/// One notify received (`adxl::NotifyDesc`), as `ascendless_engine_get_notifies` hands it
/// out: two NUL-terminated strings owned by the array they are in.
#[repr(C)]
#[derive(Debug)]
pub struct AscendlessNotify {
    /// The notify's name.
    pub name: *mut c_char,
    /// The notify's message.
    pub notify_msg: *mut c_char,
}

/// `AdxlEngine::SendNotify`: sends `{name, notify_msg}` to `remote_engine` and returns once the
/// peer has queued it (acknowledged). Transfers to the same peer submitted with
/// `ascendless_engine_transfer_async` before this call land first (the notify waits for them
/// within the time-out). A name or message over 1024 bytes, `timeout_in_millis` <= 0, or a
/// NULL string: `ADXL_PARAM_INVALID`; no link (without `AutoConnect`): `ADXL_NOT_CONNECTED`;
/// no acknowledgement in time: `ADXL_TIMEOUT`; the peer already holds 4096 notifies from this
/// engine that its GetNotifies has not taken: `ADXL_RESOURCE_EXHAUSTED`; the connection broke:
/// `ADXL_NOTIFY_FAILED`.
///
/// # Safety
/// `remote_engine`, `name` and `notify_msg` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_send_notify(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    name: *const c_char,
    notify_msg: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_send_notify", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let (remote, name, msg) = unsafe {
            (
                required_str(remote_engine, "remote_engine")?,
                required_str(name, "name")?,
                required_str(notify_msg, "notify_msg")?,
            )
        };
        e.send_notify(remote, name, msg, timeout_in_millis)
    })
}

fn c_string(s: String) -> *mut c_char {
    let mut bytes = s.into_bytes();
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    std::ffi::CString::new(bytes).unwrap_or_default().into_raw()
}

/// `AdxlEngine::GetNotifies`: takes every notify received from any peer since the last call
/// (oldest first) and stores them in a new array `*notifies` of `*count` elements, to be
/// freed with `ascendless_notifies_free`; none: `*notifies` NULL and `*count` 0. NULL
/// pointers: `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `notifies` and `count` are NULL or valid for a write of their type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_notifies(
    engine: AscendlessEngine,
    notifies: *mut *mut AscendlessNotify,
    count: *mut usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_notifies", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded from this function's contract.
        let (notifies, count) = unsafe { (Out::new(notifies, "notifies")?, Out::new(count, "count")?) };
        let taken = e.take_notifies()?;
        let n = taken.len();
        let out: *mut AscendlessNotify = if n == 0 {
            std::ptr::null_mut()
        } else {
            let array: Box<[AscendlessNotify]> = taken
                .into_iter()
                .map(|x| AscendlessNotify { name: c_string(x.name), notify_msg: c_string(x.msg) })
                .collect();
            Box::into_raw(array).cast()
        };
        notifies.write(out);
        count.write(n);
        Ok(())
    })
}

/// Frees an array from `ascendless_engine_get_notifies` (`count` as it reported); NULL is
/// ignored.
///
/// # Safety
/// `notifies` is NULL or an array returned by `ascendless_engine_get_notifies` with `count`
/// elements, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_notifies_free(notifies: *mut AscendlessNotify, count: usize) {
    if notifies.is_null() || count == 0 {
        return;
    }
    // SAFETY: by the contract, the array was made by `Box::into_raw` of `count` elements whose
    // strings came from `CString::into_raw`, and is freed once.
    unsafe {
        let array = Box::from_raw(std::ptr::slice_from_raw_parts_mut(notifies, count));
        for n in array.iter() {
            drop(std::ffi::CString::from_raw(n.name));
            drop(std::ffi::CString::from_raw(n.notify_msg));
        }
    }
}
