//! The library itself: its version, the last error of this thread, the optional features
//! this build has.

use std::ffi::c_char;

use crate::engine::capability;
use crate::error::engine_status::EngineStatus;
use crate::ffi::acl::hand_out_recent;
use crate::ffi::ptr::Out;
use crate::ffi::{adxl_call, boundary};

/// Version of this library as "MAJOR.MINOR.PATCH".
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The text of this thread's most recent error from any ascendless or AscendCL call, or NULL
/// if there was none since the last read. The same store as `aclGetRecentErrMsg`: reading
/// consumes the message, and the string stays valid until this thread's next read.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_last_error() -> *const c_char {
    boundary("ascendless_last_error", std::ptr::null(), hand_out_recent)
}

/// Whether this build has an optional ADXL feature (`adxl::AdxlEngine::GetCapability`).
/// `feature_type` is an `adxl::FeatureType` value (0 `AUTO_CONNECT`, 1 `CLIENT_SERVER_COMM`);
/// `*value` receives 1 (supported) or 0 (not supported, also for values this build does not
/// know). A negative `feature_type` or a NULL `value` is `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `value` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_get_capability(feature_type: i32, value: *mut i32) -> EngineStatus {
    adxl_call("ascendless_get_capability", || {
        let answer = capability::capability(feature_type)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(value, "value") }?.write(answer);
        Ok(())
    })
}

/// Logs `message` through the library's logger (`ASCEND_GLOBAL_LOG_LEVEL`, `RUST_LOG`) at
/// `level`: 0 debug, 1 info, 2 warning, 3 error (the vendor's `aclLogLevel`; others count as
/// errors). `aclAppLog`, which Rust cannot define (it is variadic), formats its arguments in C++
/// and logs through this. NULL logs nothing.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_log(level: i32, message: *const c_char) {
    boundary("ascendless_log", (), || {
        if message.is_null() {
            return;
        }
        // SAFETY: non-NULL and NUL-terminated by this function's contract.
        let text = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy();
        let level = match level {
            0 => log::Level::Debug,
            1 => log::Level::Info,
            2 => log::Level::Warn,
            _ => log::Level::Error,
        };
        log::log!(target: crate::logging::TARGET, level, "{text}");
    })
}

/// Records `message` as this thread's most recent error (what `aclGetRecentErrMsg` and
/// `ascendless_last_error` return next) and logs it as an error: for the C++ faces, whose own
/// argument checks (LLM-DataDist's) fail before any native call could say why. NULL records
/// nothing.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_record_error(message: *const c_char) {
    boundary("ascendless_record_error", (), || {
        if message.is_null() {
            return;
        }
        // SAFETY: non-NULL and NUL-terminated by this function's contract.
        let text = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy();
        log::error!(target: crate::logging::TARGET, "{text}");
        crate::error::record_recent(&text);
    })
}
