//! The error model: every number a caller can see, the error values the core returns, and the
//! per-thread "most recent error" text behind `aclGetRecentErrMsg`.
//!
//! The numbers live in [`acl_codes`], [`rt_codes`] and [`engine_status`], one constant each, and
//! nowhere else; the generated headers are made from those files.

pub mod acl_codes;
pub mod engine_status;
mod recent;
pub mod rt_codes;

pub use recent::{clear_recent, recent_message, record_recent, take_recent};

use acl_codes::aclError;
use engine_status::EngineStatus;

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

pub type AclResult<T> = Result<T, AclError>;
pub type EngineResult<T> = Result<T, EngineError>;
