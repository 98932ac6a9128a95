//! `acl/acl_rt.h`: device and pinned host memory, copies and fills.
//!
//! The enum parameters arrive as plain integers (`MemMallocPolicyArg` and friends, renamed to
//! the vendor's enum names in the header): a C caller may pass any value, and a Rust enum
//! holding an undeclared value would be undefined behaviour. The core validates them.

use std::ffi::c_void;

use crate::error::AclResult;
use crate::error::acl_codes::aclError;
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::ffi::ptr::Out;
use crate::runtime::context;
use crate::runtime::memory::{self, AllocKind, Limits, ReadyCopy, ReadyFill};
use crate::runtime::task::TaskInfo;

/// An `aclrtMemMallocPolicy` value as received (any integer).
pub type MemMallocPolicyArg = u32;
/// An `aclrtMemcpyKind` value as received (any integer).
pub type MemcpyKindArg = i32;
/// An `aclrtMemAttr` value as received (any integer).
pub type MemAttrArg = i32;

fn limits() -> Limits {
    Limits::of(crate::config::settings())
}

/// Allocates `size` bytes on the current device. Huge-page policies give 2 MiB-aligned memory,
/// the others page-aligned. Beyond the device's capacity (`ASCENDLESS_DEVICE_MEMORY`):
/// `ACL_ERROR_RT_MEMORY_ALLOCATION`. With `ASCENDLESS_STRICT_DEVICE_MEMORY=1` the memory cannot
/// be read or written by host code, only through the runtime's functions.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
) -> aclError {
    acl_call("aclrtMalloc", || {
        let device = context::current_device()?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        out.write(handed_out(memory::alloc_device(device, size, policy, &limits())?));
        Ok(())
    })
}

/// Frees memory from `aclrtMalloc` (any device).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFree(devPtr: *mut c_void) -> aclError {
    acl_call("aclrtFree", || memory::free(devPtr.addr(), AllocKind::Device))
}

/// Allocates `size` bytes of page-aligned pinned host memory (shareable like device memory,
/// always readable and writable by host code).
///
/// # Safety
/// `hostPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> aclError {
    acl_call("aclrtMallocHost", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(hostPtr, "hostPtr") }?;
        out.write(handed_out(memory::alloc_host(size)?));
        Ok(())
    })
}

/// Frees memory from `aclrtMallocHost`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeHost(hostPtr: *mut c_void) -> aclError {
    acl_call("aclrtFreeHost", || memory::free(hostPtr.addr(), AllocKind::Host))
}

/// The pointer C code receives for a new allocation at `addr`.
fn handed_out(addr: usize) -> *mut c_void {
    // The address is the start of a live mapping the registry owns: give it the provenance of
    // an exposed address, as C code would receive it.
    std::ptr::with_exposed_provenance_mut::<c_void>(addr)
}

/// A synchronous copy or fill while captures are in progress: 107030 when the capture modes
/// forbid it to this thread (`runtime::capture::mode`).
pub(crate) fn allow_sync_call(api: &str) -> AclResult<()> {
    if !crate::runtime::capture::mode::any_active() {
        return Ok(());
    }
    match context::current() {
        Ok(ctx) => crate::runtime::capture::mode::allow_unsafe_call(ctx.handle, crate::sys::thread_id(), api),
        // No context: the call fails on its own.
        Err(_) => Ok(()),
    }
}

/// Resolves a copy, vouching for its plain host ends on the C caller's word.
///
/// # Safety
/// `dst`/`src` host ranges are valid for `count` bytes until the copy has run.
pub(crate) unsafe fn prepare_copy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: MemcpyKindArg,
) -> AclResult<ReadyCopy> {
    let plan = memory::plan_copy(dst.addr(), dest_max, src.addr(), count, kind)?;
    // SAFETY: the C caller promises the host ends are valid memory of `count` bytes for as
    // long as the copy takes (for async copies: until the stream has run it).
    Ok(plan.vouch(|r| unsafe { r.vouch() }))
}

/// # Safety
/// As for [`prepare_copy`], for one range.
unsafe fn prepare_fill(dev: *mut c_void, max_count: usize, value: i32, count: usize) -> AclResult<ReadyFill> {
    let plan = memory::plan_memset(dev.addr(), max_count, value, count)?;
    // SAFETY: the C caller promises the range is valid memory until the fill has run.
    Ok(plan.vouch(|r| unsafe { r.vouch() }))
}

/// Copies `count` bytes from `src` to `dst` now. `kind` says which ends are device memory
/// (`ACL_MEMCPY_DEFAULT`: the runtime finds out); `count > destMax`, overlapping ranges, a device
/// end outside live device memory (freed?) or a host end inside device memory: 107000.
///
/// # Safety
/// Host ends are valid for `count` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: MemcpyKindArg,
) -> aclError {
    acl_call("aclrtMemcpy", || {
        allow_sync_call("aclrtMemcpy")?;
        // SAFETY: forwarded from this function's contract.
        unsafe { prepare_copy(dst, destMax, src, count, kind) }?.run();
        Ok(())
    })
}

/// Queues the copy of `aclrtMemcpy` on `stream` (NULL: the default stream); checks happen now.
///
/// # Safety
/// Host ends are valid for `count` bytes until the stream has run the copy.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemcpyAsync", || {
        let s = context::stream_for_work(raw(stream))?;
        // SAFETY: forwarded from this function's contract.
        let copy = unsafe { prepare_copy(dst, destMax, src, count, kind) }?;
        s.submit_op(TaskInfo::plain("memcpy"), move |_| {
            copy.run();
            Ok(())
        })
    })
}

/// Sets `count` bytes at `devPtr` (device or pinned host memory, or other host memory) to the
/// low byte of `value`; `count > maxCount`: 107000.
///
/// # Safety
/// A plain host range is valid for `count` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count: usize,
) -> aclError {
    acl_call("aclrtMemset", || {
        allow_sync_call("aclrtMemset")?;
        // SAFETY: forwarded from this function's contract.
        unsafe { prepare_fill(devPtr, maxCount, value, count) }?.run();
        Ok(())
    })
}

/// Queues the fill of `aclrtMemset` on `stream` (NULL: the default stream).
///
/// # Safety
/// A plain host range is valid for `count` bytes until the stream has run the fill.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemsetAsync", || {
        let s = context::stream_for_work(raw(stream))?;
        // SAFETY: forwarded from this function's contract.
        let fill = unsafe { prepare_fill(devPtr, maxCount, value, count) }?;
        s.submit_op(TaskInfo::plain("memset"), move |_| {
            fill.run();
            Ok(())
        })
    })
}

/// Free and total bytes of the current device's memory. Every `aclrtMemAttr` (0..=17) reports
/// the one pool each device has (HBM and DDR, huge and normal pages are not told apart); another
/// value is `ACL_ERROR_RT_INVALID_MEMORY_TYPE`.
///
/// # Safety
/// `free` and `total` are NULL or valid for a write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(attr: MemAttrArg, free: *mut usize, total: *mut usize) -> aclError {
    acl_call("aclrtGetMemInfo", || {
        // The vendor's order: NULL pointers, then the attribute, then the current device. Both
        // pointers are checked before either is written, so a bad `total` leaves `free` untouched.
        // SAFETY: forwarded from this function's contract.
        let (free, total) = unsafe { (Out::new(free, "free")?, Out::new(total, "total")?) };
        memory::check_mem_attr(attr)?;
        let device = context::current_device()?;
        let (f, t) = memory::mem_info(device, attr, &limits())?;
        free.write(f as usize);
        total.write(t as usize);
        Ok(())
    })
}
