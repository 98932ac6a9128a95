//! Links to other engines: Connect and Disconnect.

use std::ffi::c_char;

use super::handle::AscendlessEngine;
use crate::engine::Engine;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::resolve;
use crate::ffi::ptr::required_str;

/// `AdxlEngine::Connect`: connects to the engine that was initialised with exactly
/// `remote_engine` (it must listen: have a port). `timeout_in_millis` <= 0 or a bad name is
/// `ADXL_PARAM_INVALID`; already connected `ADXL_ALREADY_CONNECTED`; nobody listening
/// `ADXL_FAILED`; no answer in time `ADXL_TIMEOUT`; 512 links already `ADXL_RESOURCE_EXHAUSTED`.
/// A link whose peer died may be connected again (the peer restarted).
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_connect(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_connect", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.connect(remote, timeout_in_millis)
    })
}

/// `AdxlEngine::Disconnect`: closes the link (transfers in flight on it fail). `timeout_in_millis`
/// <= 0 is `ADXL_PARAM_INVALID`; no link `ADXL_NOT_CONNECTED`. The local side is cleaned up even
/// when the peer is down.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_disconnect(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_disconnect", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.disconnect(remote, timeout_in_millis)
    })
}
