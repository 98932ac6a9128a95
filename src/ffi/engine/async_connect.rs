//! Asynchronous links (`hixl::Hixl`): ConnectAsync, DisconnectAsync and the states of their
//! tasks (GetAsyncConnectStatus, for one remote or all).

use std::ffi::{CString, c_char};

use super::handle::AscendlessEngine;
use crate::engine::Engine;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::resolve;
use crate::ffi::ptr::{Out, required_str};

/// One remote's async connect state, as `ascendless_engine_get_async_connect_statuses` hands
/// it out: the remote's name and its `hixl::AsyncConnectStatus` value (0 `NOT_CONNECT`, 1
/// `CONNECT_PENDING`, 2 `CONNECTING`, 3 `CONNECTED`, 4 `CONNECT_FAILED`, 5
/// `DISCONNECT_PENDING`, 6 `DISCONNECTING`).
#[repr(C)]
#[derive(Debug)]
pub struct AscendlessAsyncConnectStatus {
    pub remote_engine: *mut c_char,
    pub status: i32,
}

/// `Hixl::ConnectAsync`: queues a Connect to `remote_engine` and returns at once; the remote's
/// state is `CONNECT_PENDING`, then `CONNECTING`, then `CONNECTED` (also when it was connected
/// already) or `CONNECT_FAILED`. Tasks for one remote run in submission order; different
/// remotes concurrently, on a pool of 2 workers with room for 128 waiting tasks (the vendor's
/// defaults). `timeout_in_millis` <= 0 or a bad name is `ADXL_PARAM_INVALID`; the queue full
/// `ADXL_RESOURCE_EXHAUSTED`; an engine not initialised `ADXL_FAILED`.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_connect_async(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_connect_async", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.connect_async(remote, timeout_in_millis)
    })
}

/// `Hixl::DisconnectAsync`: queues a Disconnect from `remote_engine`; the state is
/// `DISCONNECT_PENDING`, then `DISCONNECTING`, then (whatever the result) `NOT_CONNECT`, the
/// remote leaving the table. Errors as `ascendless_engine_connect_async`.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_disconnect_async(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_disconnect_async", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.disconnect_async(remote, timeout_in_millis)
    })
}

/// `Hixl::GetAsyncConnectStatus(remote_engine, status)`: stores in `*status` the state of the
/// latest async task for `remote_engine` (see `AscendlessAsyncConnectStatus`); a remote
/// without one is 0 (`NOT_CONNECT`). NULL pointers: `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `status` is NULL or valid for a write
/// of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_async_connect_status(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    status: *mut i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_async_connect_status", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        out.write(e.async_connect_status(remote)? as i32);
        Ok(())
    })
}

/// `Hixl::GetAsyncConnectStatus(statuses)`: stores every remote whose state is not
/// `NOT_CONNECT` in a new array `*statuses` of `*count` elements (by name), to be freed with
/// `ascendless_async_connect_statuses_free`; none: `*statuses` NULL and `*count` 0. NULL
/// pointers: `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `statuses` and `count` are NULL or valid for a write of their type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_async_connect_statuses(
    engine: AscendlessEngine,
    statuses: *mut *mut AscendlessAsyncConnectStatus,
    count: *mut usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_async_connect_statuses", || {
        // SAFETY: forwarded from this function's contract.
        let (statuses, count) = unsafe { (Out::new(statuses, "statuses")?, Out::new(count, "count")?) };
        let all = resolve::<Engine>(engine, "engine")?.async_connect_statuses()?;
        let n = all.len();
        let out: *mut AscendlessAsyncConnectStatus = if n == 0 {
            std::ptr::null_mut()
        } else {
            let array: Box<[AscendlessAsyncConnectStatus]> = all
                .into_iter()
                .map(|(name, s)| AscendlessAsyncConnectStatus {
                    // Engine names come from C strings, so they hold no NUL.
                    remote_engine: CString::new(name).unwrap_or_default().into_raw(),
                    status: s as i32,
                })
                .collect();
            Box::into_raw(array).cast()
        };
        statuses.write(out);
        count.write(n);
        Ok(())
    })
}

/// Frees an array from `ascendless_engine_get_async_connect_statuses` (`count` as it
/// reported); NULL is ignored.
///
/// # Safety
/// `statuses` is NULL or an array returned by `ascendless_engine_get_async_connect_statuses`
/// with `count` elements, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_async_connect_statuses_free(
    statuses: *mut AscendlessAsyncConnectStatus,
    count: usize,
) {
    if statuses.is_null() || count == 0 {
        return;
    }
    // SAFETY: by the contract, the array was made by `Box::into_raw` of `count` elements whose
    // names came from `CString::into_raw`, and is freed once.
    unsafe {
        let array = Box::from_raw(std::ptr::slice_from_raw_parts_mut(statuses, count));
        for s in array.iter() {
            drop(CString::from_raw(s.remote_engine));
        }
    }
}
