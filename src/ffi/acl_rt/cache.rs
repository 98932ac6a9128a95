//! `acl/acl_rt.h`: cache maintenance (`aclrtMemFlush`, `aclrtMemInvalidate`, `aclrtCmo*`,
//! `aclrtDeviceL2CacheFlush`).
//!
//! Device memory here is host memory, kept coherent by the CPU: there is no cache to write
//! back or drop. The calls check their arguments as the vendor's do (device memory of one live
//! allocation, a known operation, a live stream) and the asynchronous ones queue a task that
//! does nothing, so they still order the stream. The barrier forms accept only streams bound to
//! a model run instance on the vendor's, which this runtime has not: 207000.

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::device_words;
use crate::ffi::acl_rt::kernel_types::{CmoTypeArg, aclrtBarrierTaskInfo};
use crate::ffi::acl_rt::npu_only::npu_only;
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::runtime::context;

/// Bytes of a cache maintenance descriptor (`aclrtCmoGetDescSize`): the address and the size,
/// two 64-bit words.
pub const CMO_DESC_SIZE: usize = 16;

const PREFETCH: CmoTypeArg = 0;
const FLUSH: CmoTypeArg = 3;

const MODEL_STREAMS: &str = "cache operations with barriers run on streams bound to a model run instance \
     (aclmdlRIBindStream), which this runtime does not have";

/// `size` bytes at `addr` are device memory of the current device.
fn check_range(addr: *mut c_void, size: usize, what: &str) -> AclResult<()> {
    if addr.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL")));
    }
    if size == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
    }
    let device = device_words::device_of(addr.addr(), size, what)?;
    let current = context::current_device()?;
    if device != current {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{what} is memory of device {device}; cache operations act on the current device ({current})"
            ),
        ));
    }
    Ok(())
}

/// The vendor accepts only `ACL_RT_CMO_TYPE_PREFETCH` for the stream operations.
fn check_prefetch(cmoType: CmoTypeArg) -> AclResult<()> {
    match cmoType {
        PREFETCH => Ok(()),
        1..=FLUSH => Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("cmoType {cmoType}: only ACL_RT_CMO_TYPE_PREFETCH (0) is supported, as on the vendor's"),
        )),
        t => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("cmoType {t} is not an aclrtCmoType (0..=3)"),
        )),
    }
}

/// Queues a task that does nothing on `stream`: the operation's place in the stream's order.
fn queue_noop(stream: aclrtStream) -> AclResult<()> {
    context::stream_for_work(raw(stream))?.submit(Box::new(|_| Ok(())))
}

/// Writes the cache back to memory and drops it, for `size` bytes of device memory at `devPtr`:
/// nothing to do on a coherent host once the range is checked.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemFlush(devPtr: *mut c_void, size: usize) -> aclError {
    acl_call("aclrtMemFlush", || check_range(devPtr, size, "devPtr"))
}

/// Drops the cache of `size` bytes of device memory at `devPtr`: as `aclrtMemFlush`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemInvalidate(devPtr: *mut c_void, size: usize) -> aclError {
    acl_call("aclrtMemInvalidate", || check_range(devPtr, size, "devPtr"))
}

/// Queues a cache operation on `size` bytes of device memory at `src` (only
/// `ACL_RT_CMO_TYPE_PREFETCH`, as on the vendor's): an ordered task that does nothing.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsync(
    src: *mut c_void,
    size: usize,
    cmoType: CmoTypeArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtCmoAsync", || {
        check_prefetch(cmoType)?;
        check_range(src, size, "src")?;
        queue_noop(stream)
    })
}

/// A cache operation with a barrier id: 207000 (only model-bound streams take it).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsyncWithBarrier(
    src: *mut c_void,
    size: usize,
    cmoType: CmoTypeArg,
    barrierId: u32,
    stream: aclrtStream,
) -> aclError {
    let _ = (src, size, cmoType, barrierId, stream);
    npu_only("aclrtCmoAsyncWithBarrier", MODEL_STREAMS)
}

/// Waits for the cache operations of barriers: 207000 (only model-bound streams take it).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoWaitBarrier(
    taskInfo: *mut aclrtBarrierTaskInfo,
    stream: aclrtStream,
    flag: u32,
) -> aclError {
    let _ = (taskInfo, stream, flag);
    npu_only("aclrtCmoWaitBarrier", MODEL_STREAMS)
}

/// The size of a cache operation descriptor: 16 bytes (the address and size it records).
///
/// # Safety
/// `size` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCmoGetDescSize(size: *mut usize) -> aclError {
    acl_call("aclrtCmoGetDescSize", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(size, "size") }?.write(CMO_DESC_SIZE);
        Ok(())
    })
}

/// Records `src` and `size` (device memory of the current device) in the descriptor at
/// `cmoDesc`, 16 bytes of device memory.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoSetDesc(cmoDesc: *mut c_void, src: *mut c_void, size: usize) -> aclError {
    acl_call("aclrtCmoSetDesc", || {
        if cmoDesc.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "cmoDesc must not be NULL"));
        }
        check_range(src, size, "src")?;
        device_words::write(cmoDesc.addr(), [src.addr() as u64, size as u64], "cmoDesc")
    })
}

/// Queues the cache operation the descriptor at `cmoDesc` records (only
/// `ACL_RT_CMO_TYPE_PREFETCH`); the descriptor is read when the task runs, as the vendor's
/// device reads it, and a range no longer valid then fails the task. `reserve` must be NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsyncWithDesc(
    cmoDesc: *mut c_void,
    cmoType: CmoTypeArg,
    stream: aclrtStream,
    reserve: *const c_void,
) -> aclError {
    acl_call("aclrtCmoAsyncWithDesc", || {
        if !reserve.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "reserve must be NULL"));
        }
        check_prefetch(cmoType)?;
        let desc = cmoDesc.addr();
        device_words::device_of(desc, CMO_DESC_SIZE, "cmoDesc")?;
        context::stream_for_work(raw(stream))?.submit(Box::new(move |_| {
            let [addr, size] = device_words::read::<2>(desc, "cmoDesc")?;
            device_words::device_of(addr as usize, size as usize, "the descriptor's range").map(drop)
        }))
    })
}

/// Writes back the device's L2 cache: nothing to do on a coherent host; `rsv` must be NULL and a
/// device current.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceL2CacheFlush(rsv: *mut c_void) -> aclError {
    acl_call("aclrtDeviceL2CacheFlush", || {
        if !rsv.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "rsv must be NULL"));
        }
        context::current_device().map(drop)
    })
}
