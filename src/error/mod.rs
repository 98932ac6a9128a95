//! The error model: every number a caller can see, the error values the core returns, and the
//! per-thread "most recent error" text behind `aclGetRecentErrMsg` and code behind
//! `aclrtGetLastError`.
//!
//! The numbers live in [`acl_codes`], [`rt_codes`] and [`engine_status`], one constant each, and
//! nowhere else; the generated headers are made from those files.

pub mod acl_codes;
pub mod engine_status;
pub mod hccl_codes;
mod last;
pub mod prof_codes;
mod recent;
pub mod rt_codes;

pub use last::{peek_last, record_last, take_last};
pub use recent::{clear_recent, recent_message, record_recent, take_recent};

use acl_codes::aclError;
use engine_status::EngineStatus;

use crate::handle::{FromHandleError, HandleError};

/// A failed AscendCL call: the `aclError` the caller gets and the text it can read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (error {code})")]
pub struct AclError {
    pub code: aclError,
    pub message: String,
    /// Some codes are reported but harmless (a repeated `aclInit`); they log as warnings.
    pub benign: bool,
}

impl AclError {
    pub fn new(code: aclError, message: impl Into<String>) -> Self {
        AclError { code, message: message.into(), benign: false }
    }

    /// An error code callers commonly treat as success; logged as a warning, not an error.
    pub fn benign(code: aclError, message: impl Into<String>) -> Self {
        AclError { code, message: message.into(), benign: true }
    }
}

/// A failed engine call: the status the caller gets (`adxl::Status` in C++, `AdxlStatus` in C)
/// and the text it can read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (status {status})")]
pub struct EngineError {
    pub status: EngineStatus,
    pub message: String,
}

impl EngineError {
    pub fn new(status: EngineStatus, message: impl Into<String>) -> Self {
        EngineError { status, message: message.into() }
    }
}

/// A bad handle passed to AscendCL: NULL is the caller's mistake in the arguments
/// (`ACL_ERROR_INVALID_PARAM`), anything else names no live object (`ACL_ERROR_RT_INVALID_HANDLE`).
impl FromHandleError for AclError {
    fn from_handle_error(what: &str, e: HandleError) -> Self {
        match e {
            HandleError::Null => {
                AclError::new(acl_codes::ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL"))
            }
            _ => AclError::new(rt_codes::ACL_ERROR_RT_INVALID_HANDLE, format!("{what}: {e}")),
        }
    }
}

pub type AclResult<T> = Result<T, AclError>;
/// A bad handle passed to the engine's API (an engine, a transfer request, a memory
/// registration): every case is `PARAM_INVALID`.
impl FromHandleError for EngineError {
    fn from_handle_error(what: &str, e: HandleError) -> Self {
        EngineError::new(engine_status::ADXL_PARAM_INVALID, format!("{what}: {e}"))
    }
}

pub type EngineResult<T> = Result<T, EngineError>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::HandleKind;

    #[test]
    fn a_null_handle_is_a_bad_argument_and_a_dead_one_an_invalid_handle_for_acl() {
        let null = AclError::from_handle_error("stream", HandleError::Null);
        assert_eq!(
            (null.code, null.message.as_str()),
            (acl_codes::ACL_ERROR_INVALID_PARAM, "stream must not be NULL")
        );
        let stale = AclError::from_handle_error("event", HandleError::Stale);
        assert_eq!(stale.code, rt_codes::ACL_ERROR_RT_INVALID_HANDLE);
        let wrong =
            AclError::from_handle_error("notify", HandleError::WrongKind { expected: HandleKind::Notify });
        assert_eq!(wrong.code, rt_codes::ACL_ERROR_RT_INVALID_HANDLE);
    }

    #[test]
    fn every_bad_handle_is_param_invalid_for_the_engine() {
        for e in [HandleError::Null, HandleError::Foreign, HandleError::Stale] {
            let got = EngineError::from_handle_error("engine", e);
            assert_eq!(got.status, engine_status::ADXL_PARAM_INVALID);
            assert!(got.message.starts_with("engine: "));
        }
    }
}
