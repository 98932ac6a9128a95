//! The C ABI: `extern "C"` entry points and nothing else.
//!
//! Every entry point follows the same conventions (docs/api-conventions.md):
//! - it runs its body inside [`boundary`], so a panic never unwinds into C: it becomes
//!   `ACL_ERROR_INTERNAL_ERROR` (500000) or ADXL `FAILED`, with a message;
//! - it checks every pointer before use ([`ptr`]): NULL where not allowed is
//!   `ACL_ERROR_INVALID_PARAM` (100000) or ADXL `PARAM_INVALID`;
//! - it resolves handles through [`crate::handle::HandleTable`], so a stale or foreign handle is
//!   an error code, never a dereference;
//! - on failure it records the message for `aclGetRecentErrMsg` and logs it.
//!
//! One file per public header (wasmtime's layout): `acl.rs` is `acl/acl.h`, `acl_base.rs` is
//! `acl/acl_base.h`, `acl_rt/` is `acl/acl_rt.h`, `engine/` is `ascendless.h`, `hccl/` is
//! `hccl/*.h`.

pub mod acl;
pub mod acl_base;
pub mod acl_base_data;
pub mod acl_dump;
pub mod acl_prof;
pub mod acl_rt;
pub mod acl_rt_allocator;
pub mod acl_tdt;
pub mod acl_tdt_queue;
pub mod aprof_pub;
pub mod engine;
pub mod handles;
pub mod hccl;
pub mod ptr;

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::acl_codes::{ACL_ERROR_INTERNAL_ERROR, ACL_SUCCESS, aclError};
use crate::error::engine_status::{ADXL_FAILED, ADXL_SUCCESS, EngineStatus};
use crate::error::hccl_codes::{HCCL_E_INTERNAL, HCCL_SUCCESS, HcclError, HcclResult};
use crate::error::{AclResult, EngineResult, record_last, record_recent};
use crate::logging::TARGET;

/// Runs `body` for the C entry point `api`; a panic becomes `on_panic`, reported as an
/// internal error.
pub(crate) fn boundary<R>(api: &str, on_panic: R, body: impl FnOnce() -> R) -> R {
    crate::logging::init();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            report(api, &format!("internal error: {what}"), false);
            on_panic
        }
    }
}

/// Logs and records a failure. Never panics (it runs on the way out of `boundary`, where a
/// panic would abort the host): a logger failing, e.g. during thread teardown, only loses the
/// log line.
fn report(api: &str, message: &str, benign: bool) {
    let text = format!("{api}: {message}");
    record_recent(&text);
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if benign {
            log::warn!(target: TARGET, "{text}");
        } else {
            log::error!(target: TARGET, "{text}");
        }
    }));
}

/// An AscendCL entry point: `Ok` is `ACL_SUCCESS`, an error is its code and message.
pub(crate) fn acl_call(api: &str, body: impl FnOnce() -> AclResult<()>) -> aclError {
    let code = boundary(api, ACL_ERROR_INTERNAL_ERROR, || match body() {
        Ok(()) => ACL_SUCCESS,
        Err(e) => {
            report(api, &e.message, e.benign);
            e.code
        }
    });
    // Every failure, a panic's included, is this thread's last error (`aclrtGetLastError`).
    if code != ACL_SUCCESS {
        record_last(code);
    }
    code
}

/// An AscendCL entry point that returns a value rather than a code (a pointer, a size): an
/// error gives `fallback`, with its message recorded as any failure's.
pub(crate) fn acl_value<R: Copy>(api: &str, fallback: R, body: impl FnOnce() -> AclResult<R>) -> R {
    let mut failed = None;
    let r = boundary(api, None, || match body() {
        Ok(r) => Some(r),
        Err(e) => {
            report(api, &e.message, e.benign);
            failed = Some(e.code);
            None
        }
    });
    if r.is_none() {
        record_last(failed.unwrap_or(ACL_ERROR_INTERNAL_ERROR));
    }
    r.unwrap_or(fallback)
}

/// An ADXL entry point (native C API or the C++ class): `Ok` is `SUCCESS`.
pub(crate) fn adxl_call(api: &str, body: impl FnOnce() -> EngineResult<()>) -> EngineStatus {
    boundary(api, ADXL_FAILED, || match body() {
        Ok(()) => ADXL_SUCCESS,
        Err(e) => {
            report(api, &e.message, false);
            e.status
        }
    })
}

/// An HCCL entry point: `Ok` is `HCCL_SUCCESS`, an error is its `HcclResult` and message
/// (recorded for `aclGetRecentErrMsg` and logged, as the other families'); a panic is
/// `HCCL_E_INTERNAL`.
pub(crate) fn hccl_call(api: &str, body: impl FnOnce() -> Result<(), HcclError>) -> HcclResult {
    boundary(api, HCCL_E_INTERNAL, || match body() {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => {
            report(api, &e.message, false);
            e.code
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{AclError, EngineError, take_recent};

    #[test]
    fn a_panic_becomes_an_internal_error_with_a_message() {
        let code = acl_call("aclTest", || panic!("boom"));
        assert_eq!(code, ACL_ERROR_INTERNAL_ERROR);
        let msg = take_recent().unwrap().into_string().unwrap();
        assert!(msg.contains("aclTest") && msg.contains("boom"), "{msg}");
        assert_eq!(adxl_call("Adxl", || panic!("x")), ADXL_FAILED);
        assert_eq!(hccl_call("HcclTest", || panic!("y")), HCCL_E_INTERNAL);
        let msg = take_recent().unwrap().into_string().unwrap();
        assert!(msg.contains("HcclTest") && msg.contains('y'), "{msg}");
    }

    #[test]
    fn errors_keep_their_code_and_message() {
        assert_eq!(acl_call("aclTest", || Err(AclError::new(107000, "bad value"))), 107000);
        assert_eq!(take_recent().unwrap().to_str().unwrap(), "aclTest: bad value");
        assert_eq!(adxl_call("Adxl", || Err(EngineError::new(103900, "bad"))), 103900);
        assert_eq!(acl_call("aclTest", || Ok(())), ACL_SUCCESS);
    }
}
