//! The runtime's `ACL_ERROR_RT_*` numbers of `acl/error_codes/rt_error_codes.h`.
//!
//! This file is the single source of these numbers: the Rust core returns them and cbindgen
//! copies them into the checked-in header.

use super::acl_codes::aclError;

pub const ACL_ERROR_RT_PARAM_INVALID: aclError = 107000;
pub const ACL_ERROR_RT_INVALID_DEVICEID: aclError = 107001;
pub const ACL_ERROR_RT_CONTEXT_NULL: aclError = 107002;
pub const ACL_ERROR_RT_STREAM_CONTEXT: aclError = 107003;
pub const ACL_ERROR_RT_INVALID_MEMORY_TYPE: aclError = 107016;
pub const ACL_ERROR_RT_INVALID_HANDLE: aclError = 107017;
pub const ACL_ERROR_RT_WAIT_TIMEOUT: aclError = 107019;
pub const ACL_ERROR_RT_TASK_TIMEOUT: aclError = 107020;
pub const ACL_ERROR_RT_STREAM_ABORT: aclError = 107023;

pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT: aclError = 207000;
pub const ACL_ERROR_RT_MEMORY_ALLOCATION: aclError = 207001;
pub const ACL_ERROR_RT_NO_DEVICE: aclError = 207004;
pub const ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: aclError = 207005;
pub const ACL_ERROR_RT_NO_PERMISSION: aclError = 207006;
pub const ACL_ERROR_RT_NO_NOTIFY_RESOURCE: aclError = 207009;
pub const ACL_ERROR_RT_OVER_LIMIT: aclError = 207012;
pub const ACL_ERROR_RT_DEVICE_OOM: aclError = 207018;
pub const ACL_ERROR_RT_TIMEOUT: aclError = 207020;

pub const ACL_ERROR_RT_FAILURE: aclError = 500003;
pub const ACL_ERROR_RT_INTERNAL_ERROR: aclError = 507000;
pub const ACL_ERROR_RT_STREAM_NOT_COMPLETE: aclError = 507004;
pub const ACL_ERROR_RT_EVENT_NOT_COMPLETE: aclError = 507006;
pub const ACL_ERROR_RT_IPC_ERROR: aclError = 507022;
pub const ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: aclError = 507046;
pub const ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: aclError = 507047;
pub const ACL_ERROR_RT_LINK_ERROR: aclError = 507056;
pub const ACL_ERROR_RT_SOCKET_CLOSE: aclError = 507901;
pub const ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: aclError = 507910;
pub const ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: aclError = 507911;
