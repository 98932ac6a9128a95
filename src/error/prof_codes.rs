//! The `aclError` numbers of profiling and dump, as the vendor's `acl/acl_base_rt.h` defines
//! them. They are not in our generated `acl/acl_base.h` (the vendor's `acl_base.h` has only the
//! common ones); the profiling and dump functions return them.

use super::acl_codes::aclError;

pub const ACL_ERROR_INVALID_DUMP_CONFIG: aclError = 100009;
pub const ACL_ERROR_INVALID_PROFILING_CONFIG: aclError = 100010;
pub const ACL_ERROR_INVALID_MODEL_ID: aclError = 100011;
pub const ACL_ERROR_PROF_ALREADY_RUN: aclError = 100042;
pub const ACL_ERROR_PROF_NOT_RUN: aclError = 100043;
pub const ACL_ERROR_DUMP_ALREADY_RUN: aclError = 100044;
pub const ACL_ERROR_DUMP_NOT_RUN: aclError = 100045;
pub const ACL_ERROR_PROF_REPEAT_SUBSCRIBE: aclError = 148046;
pub const ACL_ERROR_PROF_API_CONFLICT: aclError = 148047;
pub const ACL_ERROR_GE_FAILURE: aclError = 500002;
pub const ACL_ERROR_PROFILING_FAILURE: aclError = 500005;
