//! `acl/acl_rt.h`: copies whose addresses are read from device memory when they run
//! (`aclrtMemcpyAsyncWithDesc`, `aclrtMemcpyAsyncWithOffset`), and the deprecated
//! `aclrtMemcpyAsyncWithCondition`.
//!
//! The vendor's device reads the descriptor (or base address) when it runs the task, so a
//! descriptor rewritten after queuing and before running counts; the stream's worker does the
//! same here. Only `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`, as on the vendor's.

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::device_words;
use crate::ffi::acl_rt::memory::MemcpyKindArg;
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::runtime::context;
use crate::runtime::memory;

/// Bytes of a copy descriptor (`aclrtGetMemcpyDescSize`): source, destination and length, three
/// 64-bit words, and one reserved.
pub const MEMCPY_DESC_SIZE: usize = 32;

const INNER_DEVICE_TO_DEVICE: MemcpyKindArg = 6;

fn check_kind(kind: MemcpyKindArg) -> AclResult<()> {
    if kind == INNER_DEVICE_TO_DEVICE {
        return Ok(());
    }
    Err(AclError::new(
        ACL_ERROR_RT_PARAM_INVALID,
        format!("kind {kind}: only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6) is supported, as on the vendor's"),
    ))
}

/// Copies `count` bytes between two device ranges now (on the stream's worker).
fn copy_device(dst: usize, dest_max: usize, src: usize, count: usize) -> AclResult<()> {
    device_words::device_of(dst, count.min(dest_max), "the destination")?;
    device_words::device_of(src, count, "the source")?;
    let plan = memory::plan_copy(dst, dest_max, src, count, INNER_DEVICE_TO_DEVICE)?;
    // Both ends were just found to be device memory, which the registry resolves itself: there
    // is no host range to vouch for.
    plan.vouch(unreachable_host).run();
    Ok(())
}

fn unreachable_host(_: memory::HostRange) -> crate::sys::span::RawSpan {
    unreachable!("an inner device-to-device copy has no host end")
}

/// The size of a copy descriptor for `kind` (only `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`): 32 bytes.
///
/// # Safety
/// `descSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemcpyDescSize(kind: MemcpyKindArg, descSize: *mut usize) -> aclError {
    acl_call("aclrtGetMemcpyDescSize", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(descSize, "descSize") }?;
        check_kind(kind)?;
        out.write(MEMCPY_DESC_SIZE);
        Ok(())
    })
}

/// Records a copy of `count` bytes from `srcAddr` to `dstAddr` in the descriptor at `desc` (32
/// bytes of device memory). Both ends are checked when the copy runs; `config` must be NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetMemcpyDesc(
    desc: *mut c_void,
    kind: MemcpyKindArg,
    srcAddr: *mut c_void,
    dstAddr: *mut c_void,
    count: usize,
    config: *mut c_void,
) -> aclError {
    acl_call("aclrtSetMemcpyDesc", || {
        if desc.is_null() || srcAddr.is_null() || dstAddr.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "desc, srcAddr and dstAddr must not be NULL"));
        }
        if !config.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "config must be NULL"));
        }
        check_kind(kind)?;
        let words = [srcAddr.addr() as u64, dstAddr.addr() as u64, count as u64, 0];
        device_words::write(desc.addr(), words, "desc")
    })
}

/// Queues the copy the descriptor at `desc` records; the descriptor is read when the copy runs
/// (a bad range then fails the task, reported as a stream error).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyAsyncWithDesc(
    desc: *mut c_void,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpyAsyncWithDesc", || {
        check_kind(kind)?;
        let at = desc.addr();
        device_words::device_of(at, MEMCPY_DESC_SIZE, "desc")?;
        context::stream_for_work(raw(stream))?.submit(Box::new(move |_| {
            let [src, dst, count, _] = device_words::read::<4>(at, "desc")?;
            copy_device(dst as usize, count as usize, src as usize, count as usize)
        }))
    })
}

/// Queues a copy of `count` bytes from `*src + srcDataOffset` to `*dst + dstDataOffset`, where
/// `*src` and `*dst` are base addresses held in device memory and read when the copy runs.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyAsyncWithOffset(
    dst: *mut *mut c_void,
    destMax: usize,
    dstDataOffset: usize,
    src: *mut *const c_void,
    count: usize,
    srcDataOffset: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpyAsyncWithOffset", || {
        check_kind(kind)?;
        let (dst_at, src_at) = (dst.addr(), src.addr());
        device_words::device_of(dst_at, 8, "dst")?;
        device_words::device_of(src_at, 8, "src")?;
        context::stream_for_work(raw(stream))?.submit(Box::new(move |_| {
            let [dst_base] = device_words::read::<1>(dst_at, "dst")?;
            let [src_base] = device_words::read::<1>(src_at, "src")?;
            let at = |base: u64, off: usize, what: &str| {
                (base as usize).checked_add(off).ok_or_else(|| {
                    AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("{what} base + offset overflows"))
                })
            };
            copy_device(
                at(dst_base, dstDataOffset, "dst")?,
                destMax,
                at(src_base, srcDataOffset, "src")?,
                count,
            )
        }))
    })
}

/// Deprecated by the vendor for `aclrtMemcpyAsync`, and the same here: it is that call
/// (recorded alike when the stream is captured).
///
/// # Safety
/// As for `aclrtMemcpyAsync`: host ends are valid for `count` bytes until the stream has run
/// the copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithCondition(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: the same contract.
    unsafe { super::memory::aclrtMemcpyAsync(dst, destMax, src, count, kind, stream) }
}
