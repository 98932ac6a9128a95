//! `acl/acl_rt.h`: batches of copies, 2D copies and 32-bit fills.
//!
//! The rules and codes are the core's (`runtime::memory`'s `batch`, `copy2d` and `fill32`);
//! this file reads the C arrays, vouches for plain host memory on the caller's word and
//! decides when the bytes move: the asynchronous forms queue one stream task, except that
//! (as the vendor documents) memory that is not the runtime's own is copied before the call
//! returns, after the stream's earlier work.

// The vendor's field and parameter names are the ABI's documentation.
#![allow(non_snake_case)]

use std::ffi::c_void;

use super::location::aclrtMemLocation;
use crate::error::AclError;
use crate::error::AclResult;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::memory::MemcpyKindArg;
use crate::ffi::handles::raw;
use crate::ffi::ptr::{self, Out};
use crate::runtime::context;
use crate::runtime::drain;
use crate::runtime::memory::{self, BatchArgs, BatchAttr, BatchError, BatchForm, MemLoc, Shape};
use crate::runtime::task::TaskInfo;

/// What the copies of a batch go between; `rsv` must be all 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtMemcpyBatchAttr {
    pub dstLoc: aclrtMemLocation,
    pub srcLoc: aclrtMemLocation,
    pub rsv: [u8; 16],
}

fn core_loc(l: aclrtMemLocation) -> MemLoc {
    MemLoc { id: l.id, kind: l.r#type }
}

fn bad(what: &str) -> BatchError {
    AclError::new(ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL")).into()
}

/// The C arrays of a batch call.
struct Arrays {
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    n: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    indexes: *mut usize,
    m: usize,
}

/// Checks, plans and runs (or queues on `stream`) a batch.
///
/// # Safety
/// The arrays are NULL or hold `n` (`m` for `attrs` and `indexes`) readable elements, and every
/// plain host range they name is valid for its size until the copy has run.
unsafe fn batch(a: Arrays, stream: Option<aclrtStream>) -> Result<(), BatchError> {
    if a.sizes.is_null() {
        return Err(bad("sizes"));
    }
    if a.n == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "numBatches must not be 0").into());
    }
    // SAFETY: non-NULL, `n` elements by this function's contract.
    let sizes = unsafe { ptr::slice(a.sizes.cast_const(), a.n, "sizes") }.map_err(AclError::from)?;
    if sizes.iter().all(|&s| s == 0) {
        return Ok(());
    }
    for (p, what) in [
        (a.dsts.is_null(), "dsts"),
        (a.dest_maxs.is_null(), "destMaxs"),
        (a.srcs.is_null(), "srcs"),
        (a.attrs.is_null(), "attrs"),
        (a.indexes.is_null(), "attrsIndexes"),
    ] {
        if p {
            return Err(bad(what));
        }
    }
    // SAFETY: non-NULL arrays of `n` / `m` elements by this function's contract; a `void *`
    // has the size and alignment of a `usize`, and the addresses are only read as integers.
    let args = unsafe {
        let dsts = ptr::slice(a.dsts.cast_const().cast::<usize>(), a.n, "dsts").map_err(AclError::from)?;
        let srcs = ptr::slice(a.srcs.cast_const().cast::<usize>(), a.n, "srcs").map_err(AclError::from)?;
        let dest_maxs = ptr::slice(a.dest_maxs.cast_const(), a.n, "destMaxs").map_err(AclError::from)?;
        let attrs = ptr::slice(a.attrs.cast_const(), a.m, "attrs").map_err(AclError::from)?;
        let indexes = ptr::slice(a.indexes.cast_const(), a.m, "attrsIndexes").map_err(AclError::from)?;
        (dsts, srcs, dest_maxs, attrs, indexes)
    };
    let (dsts, srcs, dest_maxs, c_attrs, attr_indexes) = args;
    let attrs: Vec<BatchAttr> = c_attrs
        .iter()
        .map(|x| BatchAttr {
            dst: core_loc(x.dstLoc),
            src: core_loc(x.srcLoc),
            reserved_zero: x.rsv.iter().all(|&b| b == 0),
        })
        .collect();
    let stream = match stream {
        Some(s) => Some(context::stream_for_work(raw(s))?),
        None => None,
    };
    let form = if stream.is_some() { BatchForm::Async } else { BatchForm::Sync };
    let args = BatchArgs { dsts, dest_maxs, srcs, sizes, attrs: &attrs, attr_indexes };
    let Some(plan) = memory::plan_batch(&args, form)? else { return Ok(()) };
    let user = plan.touches_user_memory();
    // SAFETY: the C caller promises every plain host range is valid for its size until the
    // copy has run (for the asynchronous form: until the stream has run it).
    let ready = plan.vouch(|r| unsafe { r.vouch() });
    match stream {
        None => ready.run(),
        Some(s) if user => {
            // Plain host memory: after the stream's earlier work, now (the vendor's rule).
            drain::wait_for_stream(&s);
            ready.run();
        }
        Some(s) => s.submit_op(TaskInfo::plain("batch copy"), move |_| {
            ready.run();
            Ok(())
        })?,
    }
    Ok(())
}

/// Runs `body` and hands out the failure index: the failing copy's, else `SIZE_MAX`.
fn with_fail_index(fail: Out<'_, usize>, body: impl FnOnce() -> Result<(), BatchError>) -> AclResult<()> {
    match body() {
        Ok(()) => {
            fail.write(usize::MAX);
            Ok(())
        }
        Err(e) => {
            fail.write(e.index.unwrap_or(usize::MAX));
            Err(e.error)
        }
    }
}

/// Copies `numBatches` ranges at once: `sizes[i]` bytes from `srcs[i]` to `dsts[i]`, each
/// host to device or device to host as `attrs` says (`attrs[k]` covers the copies from
/// `attrsIndexes[k]` to the next index). Every copy is checked before any byte moves; on
/// failure `*failIndex` is the bad copy's index for a wrong location or direction, else
/// `SIZE_MAX` (also on success). At most 4096 copies.
///
/// # Safety
/// The arrays hold `numBatches` (`numAttrs`) elements; host ranges are valid for their sizes;
/// `failIndex` is valid for a write.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatch(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
) -> aclError {
    acl_call("aclrtMemcpyBatch", || {
        // SAFETY: forwarded from this function's contract.
        let fail = unsafe { Out::new(failIndex, "failIndex") }?;
        let a = Arrays {
            dsts,
            dest_maxs: destMaxs,
            srcs,
            sizes,
            n: numBatches,
            attrs,
            indexes: attrsIndexes,
            m: numAttrs,
        };
        // SAFETY: forwarded from this function's contract.
        with_fail_index(fail, || unsafe { batch(a, None) })
    })
}

/// `aclrtMemcpyBatch` without the failure index.
///
/// # Safety
/// As for `aclrtMemcpyBatch`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchV2(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
) -> aclError {
    acl_call("aclrtMemcpyBatchV2", || {
        let a = Arrays {
            dsts,
            dest_maxs: destMaxs,
            srcs,
            sizes,
            n: numBatches,
            attrs,
            indexes: attrsIndexes,
            m: numAttrs,
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { batch(a, None) }.map_err(|e| e.error)
    })
}

/// Queues the copies of `aclrtMemcpyBatch` on `stream` (NULL: the default stream) as one task;
/// every copy is checked now. Copies touching plain host memory (not from `aclrtMallocHost`)
/// run before the call returns, after the stream's earlier work, as the vendor does. No limit
/// on the number of copies; a copy of 0 bytes is refused.
///
/// # Safety
/// As for `aclrtMemcpyBatch`, with host ranges valid until the stream has run the copies.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpyBatchAsync", || {
        // SAFETY: forwarded from this function's contract.
        let fail = unsafe { Out::new(failIndex, "failIndex") }?;
        let a = Arrays {
            dsts,
            dest_maxs: destMaxs,
            srcs,
            sizes,
            n: numBatches,
            attrs,
            indexes: attrsIndexes,
            m: numAttrs,
        };
        // SAFETY: forwarded from this function's contract.
        with_fail_index(fail, || unsafe { batch(a, Some(stream)) })
    })
}

/// `aclrtMemcpyBatchAsync` without the failure index.
///
/// # Safety
/// As for `aclrtMemcpyBatchAsync`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchAsyncV2(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpyBatchAsyncV2", || {
        let a = Arrays {
            dsts,
            dest_maxs: destMaxs,
            srcs,
            sizes,
            n: numBatches,
            attrs,
            indexes: attrsIndexes,
            m: numAttrs,
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { batch(a, Some(stream)) }.map_err(|e| e.error)
    })
}

/// Copies `height` rows of `width` bytes, `spitch` bytes apart at `src` and `dpitch` bytes
/// apart at `dst`, host to device or device to host (`ACL_MEMCPY_DEFAULT`: the runtime finds
/// out). `width` above a pitch or a kind not for 2D: `ACL_ERROR_INVALID_PARAM`; device to
/// device: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (use `aclrtMemcpy2dAsync`); a width or height of
/// 0, more than 5242880 rows or 5000000 bytes a row: 107000.
///
/// # Safety
/// Host ends are valid for `(height - 1) * pitch + width` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: MemcpyKindArg,
) -> aclError {
    acl_call("aclrtMemcpy2d", || {
        super::memory::allow_sync_call("aclrtMemcpy2d")?;
        let shape = Shape { dpitch, spitch, width, height };
        let plan = memory::plan_copy2d(dst.addr(), src.addr(), shape, kind, false)?;
        // SAFETY: the C caller promises the host ends are valid for their extents.
        plan.vouch(|r| unsafe { r.vouch() }).run();
        Ok(())
    })
}

/// Queues the copy of `aclrtMemcpy2d` on `stream` (NULL: the default stream); device to
/// device is allowed too. A plain host end (not from `aclrtMallocHost`) makes the copy run
/// before the call returns, after the stream's earlier work, as the vendor does.
///
/// # Safety
/// Host ends are valid for their extents until the stream has run the copy.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy2dAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpy2dAsync", || {
        let s = context::stream_for_work(raw(stream))?;
        let shape = Shape { dpitch, spitch, width, height };
        let plan = memory::plan_copy2d(dst.addr(), src.addr(), shape, kind, true)?;
        let user = plan.touches_user_memory();
        // SAFETY: the C caller promises the host ends are valid until the copy has run.
        let ready = plan.vouch(|r| unsafe { r.vouch() });
        if user {
            drain::wait_for_stream(&s);
            ready.run();
            return Ok(());
        }
        s.submit_op(TaskInfo::plain("2D copy"), move |_| {
            ready.run();
            Ok(())
        })
    })
}

/// Sets `N` 32-bit words at `ptr` (memory from `aclrtMalloc` or `aclrtMallocHost`, 4-byte
/// aligned) to `value`. `N * 4 > memSize`, a misaligned or NULL `ptr`, or other memory:
/// `ACL_ERROR_INVALID_PARAM`; words past the end of the allocation: 107000.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemsetD32(ptr: *mut c_void, memSize: usize, value: u32, N: usize) -> aclError {
    acl_call("aclrtMemsetD32", || {
        memory::plan_memset_d32(ptr.addr(), memSize, value, N)?.run();
        Ok(())
    })
}

/// Queues the fill of `aclrtMemsetD32` on `stream` (NULL: the default stream) for device
/// memory; pinned host memory is filled at once, as the vendor documents.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemsetD32Async(
    ptr: *mut c_void,
    memSize: usize,
    value: u32,
    N: usize,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemsetD32Async", || {
        let fill = memory::plan_memset_d32(ptr.addr(), memSize, value, N)?;
        if N == 0 {
            return Ok(());
        }
        let s = context::stream_for_work(raw(stream))?;
        if !fill.is_device() {
            fill.run();
            return Ok(());
        }
        s.submit_op(TaskInfo::plain("32-bit fill"), move |_| {
            fill.run();
            Ok(())
        })
    })
}
