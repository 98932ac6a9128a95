//! The error model: every number a caller can see, the error values the core returns, and the
//! per-thread "most recent error" text behind `aclGetRecentErrMsg`.
//!
//! The numbers live in [`acl_codes`], [`rt_codes`] and [`adxl_status`], one constant each, and
//! nowhere else; the generated headers are made from those files.

pub mod acl_codes;
pub mod adxl_status;
mod recent;
pub mod rt_codes;

pub use recent::{clear_recent, recent_message, record_recent, take_recent};

use acl_codes::aclError;
use adxl_status::AdxlStatus;

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

/// A failed ADXL call: the `adxl::Status` the caller gets and the text it can read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (status {status})")]
pub struct AdxlError {
    pub status: AdxlStatus,
    pub message: String,
}

impl AdxlError {
    pub fn new(status: AdxlStatus, message: impl Into<String>) -> Self {
        AdxlError { status, message: message.into() }
    }
}

pub type AclResult<T> = Result<T, AclError>;
pub type AdxlResult<T> = Result<T, AdxlError>;
