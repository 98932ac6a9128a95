//! The error model: every number a caller can see, the error values the core returns, and the
//! per-thread "most recent error" text behind `aclGetRecentErrMsg`.
//!
//! The numbers live in [`acl_codes`], [`rt_codes`] and [`adxl_status`], one constant each, and
//! nowhere else; the generated headers are made from those files.

#![forbid(unsafe_code)]

pub mod acl_codes;
pub mod adxl_status;
mod recent;
pub mod rt_codes;

pub use recent::{clear_recent, recent_message, record_recent, take_recent};

use acl_codes::aclError;
use adxl_status::AdxlStatus;

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
pub type AdxlResult<T> = Result<T, AdxlError>;
