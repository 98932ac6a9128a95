//! `acl/acl_rt.h`: managed (unified) memory: `aclrtMemAllocManaged`, advice, prefetches and
//! the attributes that report them. The memory is host and device memory at once (one
//! mapping every copy and host code use), so advice and prefetches are checked and recorded
//! rather than acted on; see `runtime::memory`'s `managed` for the rules and the answers.

// The vendor's field and parameter names are the ABI's documentation.
#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::AclError;
use crate::error::AclResult;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::ffi::ptr::{self, Out};
use crate::runtime::context;
use crate::runtime::memory::{self, ManagedLocation, ManagedRange};
use crate::runtime::task::TaskInfo;

/// An `aclrtMemManagedAdviseType` value as received (any integer).
pub type MemManagedAdviseTypeArg = u32;
/// An `aclrtMemManagedLocationType` value as received (any integer).
pub type MemManagedLocationTypeArg = u32;
/// An `aclrtMemManagedRangeAttribute` value as received (any integer).
pub type MemManagedRangeAttributeArg = i32;

/// `aclrtMemAllocManaged` flag: the memory is usable from the host and every device.
pub const ACL_RT_MEM_ATTACH_GLOBAL: u32 = 0x01u32;

/// Advice on how managed memory will be used.
#[repr(C)]
pub enum aclrtMemManagedAdviseType {
    ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
    ACL_MEM_ADVISE_UNSET_READ_MOSTLY = 1,
    ACL_MEM_ADVISE_SET_PREFERRED_LOCATION = 2,
    ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 3,
    ACL_MEM_ADVISE_SET_ACCESSED_BY = 4,
    ACL_MEM_ADVISE_UNSET_ACCESSED_BY = 5,
}

/// The kind of place managed memory may be advised to or prefetched to.
#[repr(C)]
pub enum aclrtMemManagedLocationType {
    ACL_MEM_LOCATIONTYPE_INVALID = 0,
    ACL_MEM_LOCATIONTYPE_DEVICE = 1,
    ACL_MEM_LOCATIONTYPE_HOST = 2,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA = 3,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT = 4,
}

/// A place for managed memory: a device or NUMA id, unused for the other types.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtMemManagedLocation {
    pub r#type: MemManagedLocationTypeArg,
    pub id: i32,
}

/// What `aclrtMemManagedGetAttr` reports on.
#[repr(C)]
pub enum aclrtMemManagedRangeAttribute {
    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
    ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 4,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 5,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 6,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8,
}

fn location(l: aclrtMemManagedLocation) -> AclResult<ManagedLocation> {
    ManagedLocation { kind: l.r#type, id: l.id }.check(crate::config::settings().device_count)
}

fn invalid_arg(message: &str) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// Allocates `size` bytes of managed memory (rounded up to 2 MiB, 2 MiB-aligned), readable and
/// writable by host code and usable by every copy as host or device memory. `flag` must be
/// `ACL_RT_MEM_ATTACH_GLOBAL`. Free with `aclrtFree`.
///
/// # Safety
/// `ptr` is NULL or valid for a write of a `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemAllocManaged(ptr: *mut *mut c_void, size: u64, flag: u32) -> aclError {
    acl_call("aclrtMemAllocManaged", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(ptr, "ptr") }?;
        if flag != ACL_RT_MEM_ATTACH_GLOBAL {
            return Err(invalid_arg("flag must be ACL_RT_MEM_ATTACH_GLOBAL (1)"));
        }
        if size == 0 {
            return Err(invalid_arg("size must not be 0"));
        }
        let device = context::current_device()?;
        let size = usize::try_from(size)
            .map_err(|_| AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("size {size} is too large")))?;
        let addr = memory::alloc_managed(device, size)?;
        out.write(std::ptr::with_exposed_provenance_mut::<c_void>(addr));
        Ok(())
    })
}

/// Advises how `size` bytes (a multiple of 2 MiB) of managed memory at `ptr` will be used;
/// `aclrtMemManagedGetAttr` reports the advice.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedAdvise(
    ptr: *const c_void,
    size: u64,
    advise: MemManagedAdviseTypeArg,
    location: aclrtMemManagedLocation,
) -> aclError {
    acl_call("aclrtMemManagedAdvise", || {
        if ptr.is_null() {
            return Err(invalid_arg("ptr must not be NULL"));
        }
        if size == 0 {
            return Err(invalid_arg("size must not be 0"));
        }
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        let range = memory::managed_range(ptr.addr(), size, true)?;
        let count = crate::config::settings().device_count;
        memory::managed_advise(
            range,
            advise,
            ManagedLocation { kind: location.r#type, id: location.id },
            count,
        )
    })
}

/// Queues a prefetch of `size` bytes (a multiple of 2 MiB) of managed memory to `location` on
/// `stream` (NULL: the default stream). `flags` must be 0. When the task has run,
/// `ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION` reports the location.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedPrefetchAsync(
    ptr: *const c_void,
    size: usize,
    location: aclrtMemManagedLocation,
    flags: u32,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemManagedPrefetchAsync", || {
        if ptr.is_null() {
            return Err(invalid_arg("ptr must not be NULL"));
        }
        if size == 0 {
            return Err(invalid_arg("size must not be 0"));
        }
        if flags != 0 {
            return Err(invalid_arg("flags is reserved and must be 0"));
        }
        let s = context::stream_for_work(raw(stream))?;
        let to = self::location(location)?;
        let range = memory::managed_range(ptr.addr(), size, true)?;
        s.submit_op(TaskInfo::plain("prefetch"), move |_| {
            memory::managed_prefetched(range, to);
            Ok(())
        })
    })
}

/// Queues prefetches of `count` ranges as one task: `prefetchLocs[k]` is where the ranges from
/// `prefetchLocIdxs[k]` to the next index go (the first index is 0, the indexes increase and
/// stay below `count`). `flags` must be 0.
///
/// # Safety
/// `ptrs` and `sizes` hold `count` elements, `prefetchLocs` and `prefetchLocIdxs`
/// `numPrefetchLocs` (or are NULL).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemManagedPrefetchBatchAsync(
    ptrs: *mut *const c_void,
    sizes: *mut usize,
    count: usize,
    prefetchLocs: *mut aclrtMemManagedLocation,
    prefetchLocIdxs: *mut usize,
    numPrefetchLocs: usize,
    flags: u64,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtMemManagedPrefetchBatchAsync", || {
        for (null, what) in [
            (ptrs.is_null(), "ptrs"),
            (sizes.is_null(), "sizes"),
            (prefetchLocs.is_null(), "prefetchLocs"),
            (prefetchLocIdxs.is_null(), "prefetchLocIdxs"),
        ] {
            if null {
                return Err(invalid_arg(&format!("{what} must not be NULL")));
            }
        }
        if count == 0 || numPrefetchLocs == 0 {
            return Err(invalid_arg("count and numPrefetchLocs must not be 0"));
        }
        if flags != 0 {
            return Err(invalid_arg("flags is reserved and must be 0"));
        }
        if count < numPrefetchLocs {
            return Err(invalid_arg("numPrefetchLocs must not be more than count"));
        }
        // SAFETY: non-NULL arrays of the lengths this function's contract gives; a pointer
        // has the size and alignment of a `usize` and is only read as an integer.
        let (addrs, sizes, locs, idxs) = unsafe {
            (
                ptr::slice(ptrs.cast_const().cast::<usize>(), count, "ptrs")?,
                ptr::slice(sizes.cast_const(), count, "sizes")?,
                ptr::slice(prefetchLocs.cast_const(), numPrefetchLocs, "prefetchLocs")?,
                ptr::slice(prefetchLocIdxs.cast_const(), numPrefetchLocs, "prefetchLocIdxs")?,
            )
        };
        let bad = |m: String| AclError::new(ACL_ERROR_RT_PARAM_INVALID, m);
        if idxs[0] != 0 {
            return Err(bad(format!("prefetchLocIdxs[0] is {}, it must be 0", idxs[0])));
        }
        for k in 0..idxs.len() {
            if idxs[k] >= count {
                return Err(bad(format!("prefetchLocIdxs[{k}] is {}, not below count {count}", idxs[k])));
            }
            if k > 0 && idxs[k] <= idxs[k - 1] {
                return Err(bad(format!(
                    "prefetchLocIdxs must increase (prefetchLocIdxs[{k}] is {})",
                    idxs[k]
                )));
            }
        }
        if let Some(i) = addrs.iter().position(|&a| a == 0) {
            return Err(bad(format!("ptrs[{i}] must not be NULL")));
        }
        let targets = locs.iter().map(|&l| location(l)).collect::<AclResult<Vec<_>>>()?;
        let s = context::stream_for_work(raw(stream))?;
        let mut work: Vec<(ManagedRange, ManagedLocation)> = Vec::with_capacity(count);
        let mut k = 0;
        for i in 0..count {
            while k + 1 < idxs.len() && i >= idxs[k + 1] {
                k += 1;
            }
            work.push((memory::managed_range(addrs[i], sizes[i], true)?, targets[k]));
        }
        s.submit_op(TaskInfo::plain("batch prefetch"), move |_| {
            for &(range, to) in &work {
                memory::managed_prefetched(range, to);
            }
            Ok(())
        })
    })
}

/// Checks an attribute query's common arguments and answers it.
fn answer(attribute: i32, ptr: *const c_void, size: usize, data_size: usize) -> AclResult<Vec<i32>> {
    if size == 0 {
        return Err(invalid_arg("size must not be 0"));
    }
    if !(1..=8).contains(&attribute) {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("attribute {attribute} is not an aclrtMemManagedRangeAttribute (1..=8)"),
        ));
    }
    let range = memory::managed_range(ptr.addr(), size, false)?;
    memory::managed_attribute(range, attribute, data_size)
}

/// Writes `values` as C `int`s at `data`.
///
/// # Safety
/// `data` is valid for writes of `values.len()` `int`s (checked for NULL and alignment here).
unsafe fn write_ints(data: *mut c_void, values: &[i32], what: &'static str) -> AclResult<()> {
    let p = data.cast::<i32>();
    if p.is_null() || !p.is_aligned() {
        return Err(invalid_arg(&format!("{what} must be a non-NULL, int-aligned buffer")));
    }
    for (i, &v) in values.iter().enumerate() {
        // SAFETY: element `i < values.len()` of a buffer valid for that many `int`s (this
        // function's contract); non-NULL and aligned (checked above).
        unsafe { p.add(i).write(v) };
    }
    Ok(())
}

/// Reports `attribute` of `size` bytes of managed memory at `ptr` into `data` (`dataSize`
/// bytes: 4 for every attribute but `ACCESSED_BY`, which takes a multiple of 4). A value not
/// the same over the whole range is reported as invalid (-2, or type 0).
///
/// # Safety
/// `data` is NULL or valid for writes of `dataSize` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemManagedGetAttr(
    attribute: MemManagedRangeAttributeArg,
    ptr: *const c_void,
    size: usize,
    data: *mut c_void,
    dataSize: usize,
) -> aclError {
    acl_call("aclrtMemManagedGetAttr", || {
        if ptr.is_null() || data.is_null() {
            return Err(invalid_arg("ptr and data must not be NULL"));
        }
        let values = answer(attribute, ptr, size, dataSize)?;
        // SAFETY: `data` holds `dataSize` bytes, which `answer` matched to `values`.
        unsafe { write_ints(data, &values, "data") }
    })
}

/// `aclrtMemManagedGetAttr` for `numAttributes` attributes at once: `data[i]` receives
/// `attributes[i]` (`dataSizes[i]` bytes). Nothing is written unless every query is valid.
///
/// # Safety
/// The arrays hold `numAttributes` elements; each `data[i]` is valid for `dataSizes[i]` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemManagedGetAttrs(
    attributes: *mut MemManagedRangeAttributeArg,
    numAttributes: usize,
    ptr: *const c_void,
    size: usize,
    data: *mut *mut c_void,
    dataSizes: *mut usize,
) -> aclError {
    acl_call("aclrtMemManagedGetAttrs", || {
        if ptr.is_null() || attributes.is_null() || data.is_null() || dataSizes.is_null() {
            return Err(invalid_arg("ptr, attributes, data and dataSizes must not be NULL"));
        }
        // SAFETY: non-NULL arrays of `numAttributes` elements by this function's contract.
        let (attrs, outs, sizes) = unsafe {
            (
                ptr::slice(attributes.cast_const(), numAttributes, "attributes")?,
                ptr::slice(data.cast_const(), numAttributes, "data")?,
                ptr::slice(dataSizes.cast_const(), numAttributes, "dataSizes")?,
            )
        };
        let answers = (0..numAttributes)
            .map(|i| answer(attrs[i], ptr, size, sizes[i]))
            .collect::<AclResult<Vec<_>>>()?;
        if let Some(i) = outs.iter().position(|d| d.is_null() || !d.cast::<i32>().is_aligned()) {
            return Err(invalid_arg(&format!("data[{i}] must be a non-NULL, int-aligned buffer")));
        }
        for (values, &out) in answers.iter().zip(outs) {
            // SAFETY: `out` holds its `dataSizes` entry's bytes, which `answer` matched.
            unsafe { write_ints(out, values, "data") }?;
        }
        Ok(())
    })
}
