//! The three codes of the IPC layer, each with the message that says what happened.

use crate::error::AclError;
use crate::error::rt_codes::{
    ACL_ERROR_RT_IPC_ERROR, ACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_PARAM_INVALID,
};

pub(super) fn param_invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

pub(super) fn no_permission(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_NO_PERMISSION, message)
}

pub(super) fn ipc_error(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_IPC_ERROR, message)
}
