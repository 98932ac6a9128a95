//! `acl/acl_rt.h`: stream memory operations (`aclrtValueWrite`, `aclrtValueWait`).

use std::ffi::c_void;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::runtime::{context, value};

/// `aclrtValueWait` flag: wait until `(int64_t)(*devAddr - value) >= 0`.
pub const ACL_STREAM_WAIT_VALUE_GEQ: u32 = 0x00000000u32;
/// `aclrtValueWait` flag: wait until `*devAddr == value`.
pub const ACL_STREAM_WAIT_VALUE_EQ: u32 = 0x00000001u32;
/// `aclrtValueWait` flag: wait until `(*devAddr & value) != 0`.
pub const ACL_STREAM_WAIT_VALUE_AND: u32 = 0x00000002u32;
/// `aclrtValueWait` flag: wait until `~(*devAddr | value) != 0`.
pub const ACL_STREAM_WAIT_VALUE_NOR: u32 = 0x00000003u32;

fn address(dev_addr: *mut c_void) -> AclResult<usize> {
    if dev_addr.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "devAddr must not be NULL"));
    }
    Ok(dev_addr.addr())
}

/// Queues on `stream` (NULL: the default stream) the store of the 64-bit `value` at `devAddr`
/// (8-byte aligned device memory, IPC-imported memory included; 107000 otherwise). `flag` is
/// reserved: 0. A stream of another process waiting on the word with `aclrtValueWait` wakes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtValueWrite(
    devAddr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtValueWrite", || {
        let addr = address(devAddr)?;
        value::write(addr, value, flag, &*context::stream_for_work(raw(stream))?)
    })
}

/// Queues on `stream` (NULL: the default stream) a wait that holds its later tasks until the
/// 64-bit word at `devAddr` satisfies `flag` (`ACL_STREAM_WAIT_VALUE_GEQ`, `_EQ`, `_AND`,
/// `_NOR`) against `value`. The wait ends early when the stream is aborted or destroyed, or
/// after the `aclrtSetOpWaitTimeout` bound (the task fails with 107019).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtValueWait(
    devAddr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtValueWait", || {
        let addr = address(devAddr)?;
        value::wait(addr, value, flag, &*context::stream_for_work(raw(stream))?)
    })
}
