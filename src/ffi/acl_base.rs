//! `acl/acl_base.h`: the basic types. The error numbers of that header come from
//! `crate::error::acl_codes`, the single place they are defined.

#![allow(non_camel_case_types)]

use std::ffi::c_void;

/// A stream: an in-order queue of asynchronous tasks. NULL means the current context's default
/// stream.
pub type aclrtStream = *mut c_void;
/// An event recorded on a stream.
pub type aclrtEvent = *mut c_void;
/// A context: a device plus its default stream, current per thread.
pub type aclrtContext = *mut c_void;
/// A task of a model run instance (`aclmdlRI*`).
pub type aclmdlRITask = *mut c_void;
/// A label: a point in a stream (`aclrtCreateLabel`).
pub type aclrtLabel = *mut c_void;
/// A list of labels (`aclrtCreateLabelList`).
pub type aclrtLabelList = *mut c_void;
/// A shared buffer (`aclrtAllocBuf`): a reference to a ref-counted block of host memory.
pub type aclrtMbuf = *mut c_void;
/// A description of a user allocator (`acl/acl_rt_allocator.h`).
pub type aclrtAllocatorDesc = *mut c_void;
/// The user's allocator object, handed back to its own functions.
pub type aclrtAllocator = *mut c_void;
/// A block the user's allocator handed out.
pub type aclrtAllocatorBlock = *mut c_void;
/// An address the user's allocator is advised to allocate at.
pub type aclrtAllocatorAddr = *mut c_void;

/// The type of a tensor's elements (the vendor's numbering).
#[repr(C)]
pub enum aclDataType {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41,
}

/// An `aclDataType` value as received (any integer).
pub type DataTypeArg = i32;
/// A task group of a capture (`aclmdlRICaptureTaskGrpEnd`).
pub type aclrtTaskGrp = *mut c_void;
