//! `acl/acl_rt.h`: the allocation variants (`aclrtMallocAlign32`, `aclrtMallocCached`,
//! `aclrtMallocWithCfg`, `aclrtMallocHostWithCfg`) and the frees that wait for the device
//! (`aclrtFreeWithDevSync`, `aclrtFreeHostWithDevSync`). The rules are the core's
//! (`runtime::memory`'s `variants`); the memory is the same as `aclrtMalloc`'s and
//! `aclrtMallocHost`'s, freed the same ways.

// The vendor's field and parameter names are the ABI's documentation.
#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::AclError;
use crate::error::AclResult;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::memory::MemMallocPolicyArg;
use crate::ffi::ptr::{self, Out};
use crate::runtime::memory::{self, AllocKind, CfgAttr, Limits, Placement, Variant};
use crate::runtime::{context, drain};

/// An `aclrtMallocAttrType` value as received (any integer).
pub type MallocAttrTypeArg = u32;

/// Which setting an `aclrtMallocAttribute` carries.
#[repr(C)]
pub enum aclrtMallocAttrType {
    /// Reserved: ignored by device allocations.
    ACL_RT_MEM_ATTR_RSV = 0,
    /// `value.moduleId`: a label for the vendor's diagnostics (accepted, no effect).
    ACL_RT_MEM_ATTR_MODULE_ID = 1,
    /// `value.deviceId`: must be the current device.
    ACL_RT_MEM_ATTR_DEVICE_ID = 2,
    /// `value.vaFlag` (host memory only): 0 or 1.
    ACL_RT_MEM_ATTR_VA_FLAG = 3,
}

/// The value of an `aclrtMallocAttribute`, read as its `attr` says.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtMallocAttrValue {
    pub moduleId: u16,
    pub deviceId: u32,
    pub vaFlag: u32,
    pub rsv: [u8; 8],
}

/// One allocation setting.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtMallocAttribute {
    pub attr: MallocAttrTypeArg,
    pub value: aclrtMallocAttrValue,
}

/// Settings of `aclrtMallocWithCfg` / `aclrtMallocHostWithCfg`: `numAttrs` attributes.
#[repr(C)]
pub struct aclrtMallocConfig {
    pub attrs: *mut aclrtMallocAttribute,
    pub numAttrs: usize,
}

fn limits() -> Limits {
    Limits::of(crate::config::settings())
}

/// The pointer C code receives for a new allocation at `addr`.
fn handed_out(addr: usize) -> *mut c_void {
    // The start of a live mapping the registry owns, handed out with an exposed provenance as
    // C code would receive it.
    std::ptr::with_exposed_provenance_mut::<c_void>(addr)
}

/// A configuration argument as read.
enum Cfg {
    /// `cfg` was NULL: no attributes.
    Absent,
    /// `cfg->attrs` was NULL, with this `numAttrs`.
    NoAttrs(usize),
    Attrs(Vec<CfgAttr>),
}

impl Cfg {
    /// The attributes, or the vendor's runtime-level refusal of a configuration without them
    /// (107000).
    fn attrs(self) -> AclResult<Vec<CfgAttr>> {
        match self {
            Cfg::Absent => Ok(Vec::new()),
            Cfg::NoAttrs(_) => Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "cfg->attrs must not be NULL when cfg is given (pass NULL for no configuration)",
            )),
            Cfg::Attrs(a) => Ok(a),
        }
    }
}

/// Reads `cfg`.
///
/// # Safety
/// `cfg` is NULL or points to a readable `aclrtMallocConfig` whose `attrs` is NULL or holds
/// `numAttrs` readable attributes.
unsafe fn read_cfg(cfg: *const aclrtMallocConfig) -> AclResult<Cfg> {
    if cfg.is_null() {
        return Ok(Cfg::Absent);
    }
    if !cfg.is_aligned() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "cfg is not aligned for its type"));
    }
    // SAFETY: non-NULL, aligned and readable by this function's contract.
    let c = unsafe { &*cfg };
    if c.attrs.is_null() {
        return Ok(Cfg::NoAttrs(c.numAttrs));
    }
    // SAFETY: `numAttrs` readable attributes by this function's contract.
    let attrs = unsafe { ptr::slice(c.attrs.cast_const(), c.numAttrs, "cfg->attrs") }?;
    Ok(Cfg::Attrs(
        attrs
            .iter()
            // SAFETY: every field of the union is plain bytes; `rsv` covers all 8 of them.
            .map(|a| CfgAttr { kind: a.attr, value: unsafe { a.value.rsv } })
            .collect(),
    ))
}

/// Allocates on the current device as `variant` reads `policy`.
///
/// # Safety
/// `dev_ptr` is NULL or valid for a write of a `void *`.
unsafe fn variant(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
    v: Variant,
) -> AclResult<()> {
    let device = context::current_device()?;
    // SAFETY: forwarded from this function's contract.
    let out = unsafe { Out::new(dev_ptr, "devPtr") }?;
    out.write(handed_out(memory::alloc_device_variant(device, size, v, policy, &limits())?));
    Ok(())
}

/// Allocates `size` bytes on the current device, as `aclrtMalloc` but without the vendor's
/// 32 bytes of padding (the size is rounded to 32 bytes; here, to the page). A policy that is
/// not one `aclrtMemMallocPolicy` value means huge pages from 2 MiB on, normal pages below.
/// Free with `aclrtFree` or `aclrtFreeWithDevSync`.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocAlign32(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtMallocAlign32", || unsafe { variant(devPtr, size, policy, Variant::Align32) })
}

/// Allocates `size` bytes on the current device with the cache enabled (all device memory is
/// here, as on the vendor's, so this is `aclrtMalloc`). Policies other than `HUGE_FIRST`,
/// `HUGE_ONLY`, `NORMAL_ONLY` and `HUGE1G_ONLY` mean huge pages from 2 MiB on.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocCached(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtMallocCached", || unsafe { variant(devPtr, size, policy, Variant::Cached) })
}

/// Allocates `size` bytes on the current device with settings (`cfg` may be NULL). The policy
/// may have the band-width and read-only bits OR-ed in; the attributes may be
/// `ACL_RT_MEM_ATTR_RSV`, `_MODULE_ID` and `_DEVICE_ID` (the current device only), else 107000.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`; `cfg` is NULL or a readable
/// configuration whose `attrs` holds `numAttrs` attributes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocWithCfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtMallocWithCfg", || unsafe { malloc_with_cfg(devPtr, size, policy, cfg) })
}

/// Allocates device memory the device's task scheduler uses, with settings, as
/// `aclrtMallocWithCfg` (the scheduler and host code see the same memory here). Free with
/// `aclrtFree`.
///
/// # Safety
/// As for `aclrtMallocWithCfg`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocForTaskScheduler(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    acl_call("aclrtMallocForTaskScheduler", || unsafe { malloc_with_cfg(devPtr, size, policy, cfg) })
}

/// # Safety
/// As for `aclrtMallocWithCfg`.
unsafe fn malloc_with_cfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: MemMallocPolicyArg,
    cfg: *mut aclrtMallocConfig,
) -> AclResult<()> {
    {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        // SAFETY: forwarded from this function's contract.
        let cfg = unsafe { read_cfg(cfg) }?;
        // The vendor's order: attributes missing though counted, size 0 (both 100000), then
        // the runtime's checks (107000).
        if let Cfg::NoAttrs(n @ 1..) = cfg {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("cfg->attrs must not be NULL when cfg->numAttrs is {n}"),
            ));
        }
        if size == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
        }
        let attrs = cfg.attrs()?;
        let device = context::current_device()?;
        memory::check_device_cfg(&attrs, device)?;
        out.write(handed_out(memory::alloc_device_variant(
            device,
            size,
            Variant::WithCfg,
            policy,
            &limits(),
        )?));
        Ok(())
    }
}

/// Allocates `size` bytes of pinned host memory with settings (`cfg` may be NULL), as
/// `aclrtMallocHost`; needs a current context, as the vendor's does. A configuration with NULL
/// `attrs` is 107000. The attributes may be
/// `ACL_RT_MEM_ATTR_MODULE_ID` and `_VA_FLAG` (0 or 1), else 107000. Free with `aclrtFreeHost`
/// or `aclrtFreeHostWithDevSync`.
///
/// # Safety
/// `ptr` is NULL or valid for a write of a `void *`; `cfg` as for `aclrtMallocWithCfg`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHostWithCfg(
    ptr: *mut *mut c_void,
    size: u64,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    acl_call("aclrtMallocHostWithCfg", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(ptr, "ptr") }?;
        if size == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
        }
        // SAFETY: forwarded from this function's contract.
        let attrs = unsafe { read_cfg(cfg) }?.attrs()?;
        memory::check_host_cfg(&attrs)?;
        context::current()?;
        let size = usize::try_from(size)
            .map_err(|_| AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("size {size} is too large")))?;
        out.write(handed_out(memory::alloc_host(size)?));
        Ok(())
    })
}

/// Waits, as the vendor's device synchronisation before these frees does, for the work queued
/// on the current device's streams (which needs a current context: 107002 otherwise) and, for
/// device memory of another device, on that device's too. Task failures stay for the streams'
/// own synchronisation. NULL and unknown pointers are left to the free to refuse.
fn sync_device_before_free(addr: usize) -> AclResult<()> {
    if addr == 0 {
        return Ok(());
    }
    let current = context::current_device()?;
    drain::wait_for_streams(current);
    if let Some(Placement::Device(d)) = memory::backing(addr).map(|b| b.placement) {
        if d != current {
            drain::wait_for_streams(d);
        }
    }
    Ok(())
}

/// Frees memory from `aclrtMalloc` (and its variants, or `aclrtMemAllocManaged`) after every
/// task queued on the current device's streams (and on the memory's device) has run, so queued
/// work using it finishes first. Needs a current context.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeWithDevSync(devPtr: *mut c_void) -> aclError {
    acl_call("aclrtFreeWithDevSync", || {
        sync_device_before_free(devPtr.addr())?;
        memory::free(devPtr.addr(), AllocKind::Device)
    })
}

/// Frees memory from `aclrtMallocHost` or `aclrtMallocHostWithCfg` after every task queued on
/// the current device's streams has run. Needs a current context.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> aclError {
    acl_call("aclrtFreeHostWithDevSync", || {
        sync_device_before_free(hostPtr.addr())?;
        memory::free(hostPtr.addr(), AllocKind::Host)
    })
}
