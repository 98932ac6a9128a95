//! The `aclError` numbers of `acl/acl_base.h`, exactly as the vendor defines them.
//!
//! This file is the single source of these numbers: the Rust core returns them and cbindgen
//! copies them into the checked-in `acl/acl_base.h`.

#![allow(non_camel_case_types)]

/// Return type of every `acl*` function: 0 on success, else one of the codes below.
pub type aclError = std::ffi::c_int;

pub const ACL_SUCCESS: aclError = 0;
/// Deprecated by the vendor in favour of `ACL_SUCCESS`; kept because old code uses it.
pub const ACL_ERROR_NONE: aclError = 0;

pub const ACL_ERROR_INVALID_PARAM: aclError = 100000;
pub const ACL_ERROR_UNINITIALIZE: aclError = 100001;
pub const ACL_ERROR_REPEAT_INITIALIZE: aclError = 100002;
pub const ACL_ERROR_INVALID_FILE: aclError = 100003;
pub const ACL_ERROR_PARSE_FILE: aclError = 100006;
pub const ACL_ERROR_REPEAT_FINALIZE: aclError = 100037;

pub const ACL_ERROR_BAD_ALLOC: aclError = 200000;
pub const ACL_ERROR_API_NOT_SUPPORT: aclError = 200001;
pub const ACL_ERROR_INVALID_DEVICE: aclError = 200002;
pub const ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: aclError = 200003;
pub const ACL_ERROR_INVALID_RESOURCE_HANDLE: aclError = 200005;
pub const ACL_ERROR_FEATURE_UNSUPPORTED: aclError = 200006;

pub const ACL_ERROR_INTERNAL_ERROR: aclError = 500000;
pub const ACL_ERROR_FAILURE: aclError = 500001;
