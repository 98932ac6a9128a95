//! An engine's life: its handle made and freed, the engine initialised and finalized.

use std::ffi::c_char;

use super::handle::{AscendlessEngine, ENGINES};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::error::engine_status::{ADXL_PARAM_INVALID, EngineStatus};
use crate::ffi::adxl_call;
use crate::ffi::handles::{release, resolve, to_c};
use crate::ffi::ptr::{Out, required_str};

/// Creates an engine (not yet initialised) and stores its handle in `*engine`. A NULL or
/// misaligned `engine` is `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `engine` is NULL or valid for a write of an `AscendlessEngine`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_create(engine: *mut AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_create", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(engine, "engine") }?;
        out.write(to_c(ENGINES.insert(Engine::new())));
        Ok(())
    })
}

/// Finalizes the engine (if it was initialised) and frees its handle; the handle is invalid
/// afterwards (using it again is `ADXL_PARAM_INVALID`, never a crash).
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_engine_destroy(engine: AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_destroy", || {
        let e = release::<Engine>(engine, "engine")?;
        e.finalize();
        Ok(())
    })
}

/// `AdxlEngine::Initialize`: `local_engine` is `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`
/// (with a port > 0 the engine listens there); the options are `num_options` key/value pairs
/// (`BufferPool`, `RdmaTrafficClass`, `RdmaServiceLevel`, `LocalCommRes`, each also with the
/// `adxl.` prefix, `AutoConnect`, `EnableUseFabricMem`, `GlobalResourceConfig`, and
/// ascendless's own keys: docs/engine-options.md). A bad name, option or pointer is
/// `ADXL_PARAM_INVALID`; an engine already initialised, or a port that cannot be bound,
/// `ADXL_FAILED`. An engine may be initialised again after `ascendless_engine_finalize`.
///
/// # Safety
/// `local_engine` is NULL or a NUL-terminated string; `option_keys` and `option_values` are
/// NULL (only when `num_options` is 0) or arrays of `num_options` NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_initialize(
    engine: AscendlessEngine,
    local_engine: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_initialize", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let name = unsafe { required_str(local_engine, "local_engine") }?;
        let mut options = Vec::with_capacity(num_options.min(64));
        if num_options > 0 {
            if option_keys.is_null() || option_values.is_null() {
                return Err(EngineError::new(ADXL_PARAM_INVALID, "option arrays must not be NULL"));
            }
            for i in 0..num_options {
                // SAFETY: both arrays hold `num_options` pointers by the caller's contract.
                let (k, v) = unsafe { (*option_keys.add(i), *option_values.add(i)) };
                // SAFETY: each element is a NUL-terminated string by the caller's contract.
                let (k, v) = unsafe { (required_str(k, "option key")?, required_str(v, "option value")?) };
                options.push((k, v));
            }
        }
        e.initialize(name, &options)
    })
}

/// `AdxlEngine::Finalize`: stops listening and closes every connection (transfers in flight
/// fail); idempotent. After it every call but initialize and destroy is `ADXL_FAILED`.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_engine_finalize(engine: AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_finalize", || {
        resolve::<Engine>(engine, "engine")?.finalize();
        Ok(())
    })
}
