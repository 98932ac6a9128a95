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
/// A task of a model run instance (`aclmdlRIGetTasksByStream`).
pub type aclmdlRITask = *mut c_void;
/// A task group of a capture (`aclmdlRICaptureTaskGrpEnd`).
pub type aclrtTaskGrp = *mut c_void;
