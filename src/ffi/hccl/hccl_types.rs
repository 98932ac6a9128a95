//! `hccl/hccl_types.h`: the Rust layouts of the header's types (the header is written by hand,
//! as cbindgen cannot write its C/C++ constants or its enums' spellings; tests/hccl_abi.rs
//! compiles it and checks every size, offset and value against this file and
//! [`crate::error::hccl_codes`]), and what every HCCL entry point shares: the communicator
//! handle table, the conversion of pointer and runtime errors into `HcclResult`s, and the
//! vouching for the caller's memory.

#![allow(non_snake_case, non_camel_case_types)]

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::error::AclError;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::hccl_codes::{HCCL_E_PARA, HCCL_E_PTR, HCCL_E_RUNTIME, HcclError};
use crate::error::rt_codes::{ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_INVALID_HANDLE};
use crate::ffi::ptr::BadPointer;
use crate::handle::{FromHandleError, HandleError};
use crate::hccl::comm::Comm;
use crate::runtime::context::{self, StreamRef};
use crate::runtime::stream::Stream;
use crate::sys::span::{HostRange, RawSpan};

pub use crate::error::hccl_codes::HcclResult;

/// A communicator: a handle of [`COMMS`], never a pointer.
pub type HcclComm = *mut c_void;
/// A connection (`HcclConn`; no function of the installed headers takes one).
pub type HcclConn = *mut c_void;
/// A symmetric memory window (`HcclCommSymWindow`).
pub type HcclCommSymWindow = *mut c_void;
/// The C enums arrive as their `int` values and are checked where they are read.
pub type HcclDataType = i32;
pub type HcclReduceOp = i32;
pub type HcclConfig = i32;
pub type HcclSendRecvType = i32;
pub type HcclCommStatus = i32;
pub type HcclCommStatePhase = i32;
/// `HcclConfigType` (`hccl/hccl_comm.h`).
pub type HcclConfigType = i32;

/// `HCCL_ROOT_INFO_BYTES`.
pub const HCCL_ROOT_INFO_BYTES: usize = crate::hccl::comm::ROOT_INFO_BYTES;
/// `COMM_NAME_MAX_LENGTH`: a communicator's name, its NUL included.
pub const COMM_NAME_MAX_LENGTH: usize = 128;
pub const BUFFER_NAME_MAX_LENGTH: usize = 128;
pub const UDI_MAX_LENGTH: usize = 128;
pub const HCCL_COMM_ALGO_MAX_LENGTH: usize = 1600;
pub const HCCL_COMM_RETRY_ENABLE_MAX_LENGTH: usize = 50;
pub const HCCL_COMM_RETRY_PARAMS_MAX_LENGTH: usize = 128;
pub const HCCL_COMM_CONFIG_INFO_BYTES: usize = 24;
pub const HCCL_COMM_CONFIG_MAGIC_WORD: u32 = 0xf0f0_f0f0;
pub const HCCL_COMM_CONFIG_VERSION: u32 = 10;
pub const HCCL_COMM_DEFAULT_BUFFSIZE: u32 = 200;
pub const HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET: u32 = 0xffff_ffff;
pub const HCCL_COMM_DEFAULT_DETERMINISTIC: u32 = 0;
pub const HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET: u32 = 0xffff_ffff;
pub const HCCL_COMM_DEFAULT_OP_EXPANSION_MODE: u32 = 0;
pub const HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET: u32 = 0xffff_ffff;
pub const HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET: u32 = 0xffff_ffff;
pub const HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET: i32 = -1;
pub const HCCL_COMM_QOS_CONFIG_NOT_SET: u32 = 0xffff_ffff;
pub const HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE: u64 = 16;

/// `HcclSendRecvType`.
pub const HCCL_SEND: i32 = 0;
pub const HCCL_RECV: i32 = 1;
/// `HcclConfig`.
pub const HCCL_DETERMINISTIC: i32 = 0;
/// `HcclCommStatePhase`.
pub const HCCL_COMM_STATE_PHASE_DESTROY_PRE: i32 = 0;
pub const HCCL_COMM_STATE_PHASE_DESTROY_POST: i32 = 1;
/// `HcclCommStatus`.
pub const HCCL_COMM_STATUS_READY: i32 = 0;
/// `HcclCommConfigCapability`: the items below this one are understood
/// (`HcclGetCommConfigCapability`): buffer size, deterministic, name.
pub const HCCL_COMM_CONFIG_OP_EXPANSION_MODE: u32 = 3;
/// `HcclConfigType` and `HcclOpExpansionMode` (`hccl/hccl_comm.h`).
pub const HCCL_CONFIG_TYPE_OP_EXPANSION_MODE: i32 = 0;
pub const HCCL_OP_EXPANSION_MODE_HOST: i32 = 2;

/// `HcclRootInfo`: what rank 0's `HcclGetRootInfo` writes and every rank passes to
/// `HcclCommInitRootInfo`.
#[repr(C)]
pub struct HcclRootInfo {
    pub internal: [c_char; HCCL_ROOT_INFO_BYTES],
}

/// `HcclCommConfig`, as `HcclCommConfigInit` fills it: `reserved` starts with the size of the
/// struct the caller was compiled with, the magic word and the version.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HcclCommConfig {
    pub reserved: [c_char; HCCL_COMM_CONFIG_INFO_BYTES],
    pub hcclBufferSize: u32,
    pub hcclDeterministic: u32,
    pub hcclCommName: [c_char; COMM_NAME_MAX_LENGTH],
    pub hcclUdi: [c_char; UDI_MAX_LENGTH],
    pub hcclOpExpansionMode: u32,
    pub hcclRdmaTrafficClass: u32,
    pub hcclRdmaServiceLevel: u32,
    pub hcclWorldRankID: u32,
    pub hcclJobID: u64,
    pub aclGraphZeroCopyEnable: u8,
    pub hcclExecTimeOut: i32,
    pub hcclAlgo: [c_char; HCCL_COMM_ALGO_MAX_LENGTH],
    pub hcclRetryEnable: [c_char; HCCL_COMM_RETRY_ENABLE_MAX_LENGTH],
    pub hcclRetryParams: [c_char; HCCL_COMM_RETRY_PARAMS_MAX_LENGTH],
    pub hcclBufferName: [c_char; BUFFER_NAME_MAX_LENGTH],
    pub hcclQos: u32,
    pub hcclSymWinMaxMemSizePerRank: u64,
}

/// The head of `HcclCommConfig::reserved` (`HcclCommConfigInit` writes it).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HcclCommConfigInfo {
    pub size: usize,
    pub magicWord: u32,
    pub version: u32,
    pub reserved: u64,
}

/// `HcclSendRecvItem`, one item of `HcclBatchSendRecv`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HcclSendRecvItem {
    pub sendRecvType: HcclSendRecvType,
    pub buf: *mut c_void,
    pub count: u64,
    pub dataType: HcclDataType,
    pub remoteRank: u32,
}

/// `union HcclConfigValue`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union HcclConfigValue {
    pub value: i32,
}

crate::handle_kind!(
    /// Every communicator made through the C API, by handle.
    /// (NULL is HCCL_E_PTR; a stale, foreign or other kind of handle HCCL_E_PARA.)
    pub(crate) static COMMS: HcclComm => Comm, HcclError);

/// A bad communicator handle: NULL is `HCCL_E_PTR`, as the vendor's null-pointer checks give,
/// anything else that names no live communicator `HCCL_E_PARA`.
impl FromHandleError for HcclError {
    fn from_handle_error(what: &str, e: HandleError) -> Self {
        match e {
            HandleError::Null => HcclError::new(HCCL_E_PTR, format!("{what} must not be NULL")),
            _ => HcclError::new(HCCL_E_PARA, format!("{what}: {e}")),
        }
    }
}

/// A NULL pointer argument is `HCCL_E_PTR`; a misaligned one, or a string that is not UTF-8,
/// `HCCL_E_PARA`.
impl From<BadPointer> for HcclError {
    fn from(b: BadPointer) -> Self {
        let code = if b.why == "must not be NULL" { HCCL_E_PTR } else { HCCL_E_PARA };
        HcclError::new(code, format!("{} {}", b.what, b.why))
    }
}

/// `HCCL_E_PTR` for the pointer argument `what` when it is NULL.
pub(crate) fn non_null<T>(p: *const T, what: &str) -> Result<(), HcclError> {
    if p.is_null() { Err(HcclError::new(HCCL_E_PTR, format!("{what} must not be NULL"))) } else { Ok(()) }
}

/// The communicator C handle `comm` names.
pub(crate) fn comm_of(comm: HcclComm) -> Result<Arc<Comm>, HcclError> {
    crate::ffi::handles::resolve::<Comm>(comm, "comm")
}

/// The runtime's error in HCCL's numbers: no current context (no `aclrtSetDevice` on this
/// thread) is `HCCL_E_RUNTIME`, a bad stream `HCCL_E_PARA`.
pub(crate) fn runtime_error(e: AclError) -> HcclError {
    let code = match e.code {
        ACL_ERROR_RT_CONTEXT_NULL => HCCL_E_RUNTIME,
        ACL_ERROR_RT_INVALID_HANDLE | ACL_ERROR_INVALID_PARAM => HCCL_E_PARA,
        _ => HCCL_E_RUNTIME,
    };
    HcclError::new(code, format!("{} (runtime error {})", e.message, e.code))
}

/// The stream an operation is queued on: NULL is the current context's default stream.
pub(crate) fn stream_of(stream: *mut c_void) -> Result<Arc<Stream>, HcclError> {
    match context::stream(crate::ffi::handles::raw(stream)).map_err(runtime_error)? {
        StreamRef::Default(ctx) => Ok(Arc::clone(&ctx.default_stream)),
        StreamRef::Created(s) => Ok(s),
    }
}

/// Vouches for the caller's host memory an operation reads or writes (the core reaches the
/// runtime's memory, device memory included, without it).
pub(crate) fn vouch(r: HostRange) -> RawSpan {
    // SAFETY: every HCCL operation's contract (hccl/hccl.h, as the vendor's): its buffers are
    // valid for the counts given, and stay so until the operation has run on its stream (the
    // caller synchronises the stream before it frees or reuses them), which is as long as the
    // core keeps a span of them.
    unsafe { r.vouch() }
}
