//! `acl/acl_rt_allocator.h`: user allocators, described once and registered per stream.
//!
//! The vendor's runtime keeps the registration for its operator and model executors
//! (`aclopExecuteV2`, `aclmdlExecuteAsync`), which take their workspace from it. This runtime
//! runs neither, so it never calls the user's functions: it keeps what was registered per
//! stream and hands it back (`aclrtAllocatorGetByStream`), which is what other libraries built
//! on the runtime read. The functions are stored as given; a description is copied when
//! registered, so destroying it afterwards leaves the registration intact.

#![allow(non_camel_case_types)]

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::{
    aclrtAllocator, aclrtAllocatorAddr, aclrtAllocatorBlock, aclrtAllocatorDesc, aclrtStream,
};
use crate::ffi::handles::{raw, release, resolve, to_c};
use crate::ffi::ptr::Out;
use crate::ffi::{acl_call, boundary};
use crate::handle_kind;
use crate::runtime::context;
use crate::sync;

/// Allocates a block of at least `size` bytes from `allocator`.
pub type aclrtAllocatorAllocFunc =
    Option<unsafe extern "C" fn(allocator: aclrtAllocator, size: usize) -> *mut c_void>;
/// Returns `block` to `allocator`.
pub type aclrtAllocatorFreeFunc =
    Option<unsafe extern "C" fn(allocator: aclrtAllocator, block: aclrtAllocatorBlock)>;
/// Allocates a block of `size` bytes at the advised address `addr`.
pub type aclrtAllocatorAllocAdviseFunc = Option<
    unsafe extern "C" fn(allocator: aclrtAllocator, size: usize, addr: aclrtAllocatorAddr) -> *mut c_void,
>;
/// The device address of a block.
pub type aclrtAllocatorGetAddrFromBlockFunc =
    Option<unsafe extern "C" fn(block: aclrtAllocatorBlock) -> *mut c_void>;

/// What a description holds: the user's object (as an address) and functions.
#[derive(Clone, Copy, Default)]
struct Desc {
    obj: usize,
    alloc: aclrtAllocatorAllocFunc,
    free: aclrtAllocatorFreeFunc,
    advise: aclrtAllocatorAllocAdviseFunc,
    addr_of: aclrtAllocatorGetAddrFromBlockFunc,
}

/// A description: filled by the `Set*ToDesc` calls.
struct DescCell(Mutex<Desc>);

handle_kind!(static DESCS: AllocatorDesc => DescCell, AclError);

/// A registration: the description's handle (as the caller knew it) and a copy of it.
#[derive(Clone, Copy)]
struct Registered {
    handle: u64,
    desc: Desc,
}

/// Registrations by stream handle. Stream handles are never reused, so a destroyed stream's
/// entry can only be found again by a caller passing that stale handle, which is refused first.
static REGISTERED: Mutex<Option<HashMap<u64, Registered>>> = Mutex::new(None);

fn with_desc(desc: aclrtAllocatorDesc, f: impl FnOnce(&mut Desc)) -> AclResult<()> {
    let cell: Arc<DescCell> = resolve::<DescCell>(desc, "allocatorDesc")?;
    f(&mut sync::lock(&cell.0));
    Ok(())
}

fn required<T>(func: Option<T>, what: &str) -> AclResult<Option<T>> {
    match func {
        Some(_) => Ok(func),
        None => Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL"))),
    }
}

/// Creates an empty allocator description; NULL (with a message) if that fails.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc {
    boundary("aclrtAllocatorCreateDesc", std::ptr::null_mut(), || {
        to_c(DESCS.insert(DescCell(Mutex::new(Desc::default()))))
    })
}

/// Destroys a description; registrations made from it stay.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc) -> aclError {
    acl_call("aclrtAllocatorDestroyDesc", || release::<DescCell>(allocatorDesc, "allocatorDesc").map(drop))
}

/// Sets the user's allocator object (handed to its functions; NULL is refused).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetObjToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    allocator: aclrtAllocator,
) -> aclError {
    acl_call("aclrtAllocatorSetObjToDesc", || {
        if allocator.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "allocator must not be NULL"));
        }
        with_desc(allocatorDesc, |d| d.obj = allocator.expose_provenance())
    })
}

/// Sets the function that allocates a block (NULL is refused).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocFunc,
) -> aclError {
    acl_call("aclrtAllocatorSetAllocFuncToDesc", || {
        let func = required(func, "func")?;
        with_desc(allocatorDesc, |d| d.alloc = func)
    })
}

/// Sets the function that frees a block (NULL is refused).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetFreeFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorFreeFunc,
) -> aclError {
    acl_call("aclrtAllocatorSetFreeFuncToDesc", || {
        let func = required(func, "func")?;
        with_desc(allocatorDesc, |d| d.free = func)
    })
}

/// Sets the function that allocates at an advised address (optional; NULL is refused here).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocAdviseFunc,
) -> aclError {
    acl_call("aclrtAllocatorSetAllocAdviseFuncToDesc", || {
        let func = required(func, "func")?;
        with_desc(allocatorDesc, |d| d.advise = func)
    })
}

/// Sets the function that gives a block's address (NULL is refused).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    acl_call("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", || {
        let func = required(func, "func")?;
        with_desc(allocatorDesc, |d| d.addr_of = func)
    })
}

/// Registers the allocator `allocatorDesc` describes on `stream` (not NULL), replacing an
/// earlier one. The description must hold the object and the alloc, free and get-address
/// functions (100000 names what is missing); the advise function is optional.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorRegister(stream: aclrtStream, allocatorDesc: aclrtAllocatorDesc) -> aclError {
    acl_call("aclrtAllocatorRegister", || {
        if stream.is_null() {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "stream must not be NULL: an allocator is registered on a created stream",
            ));
        }
        context::stream(raw(stream))?;
        let cell: Arc<DescCell> = resolve::<DescCell>(allocatorDesc, "allocatorDesc")?;
        let desc = *sync::lock(&cell.0);
        let missing = [
            (desc.obj == 0, "the allocator object (aclrtAllocatorSetObjToDesc)"),
            (desc.alloc.is_none(), "the alloc function (aclrtAllocatorSetAllocFuncToDesc)"),
            (desc.free.is_none(), "the free function (aclrtAllocatorSetFreeFuncToDesc)"),
            (
                desc.addr_of.is_none(),
                "the get-address function (aclrtAllocatorSetGetAddrFromBlockFuncToDesc)",
            ),
        ];
        if let Some((_, what)) = missing.iter().find(|(m, _)| *m) {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("allocatorDesc lacks {what}")));
        }
        let mut map = sync::lock(&REGISTERED);
        map.get_or_insert_with(HashMap::new)
            .insert(raw(stream), Registered { handle: raw(allocatorDesc), desc });
        Ok(())
    })
}

/// What is registered on `stream`: every out-parameter gets its part (all NULL when nothing is).
///
/// # Safety
/// Each out-parameter is NULL or valid for a write of its type.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorGetByStream(
    stream: aclrtStream,
    allocatorDesc: *mut aclrtAllocatorDesc,
    allocator: *mut aclrtAllocator,
    allocFunc: *mut aclrtAllocatorAllocFunc,
    freeFunc: *mut aclrtAllocatorFreeFunc,
    allocAdviseFunc: *mut aclrtAllocatorAllocAdviseFunc,
    getAddrFromBlockFunc: *mut aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    acl_call("aclrtAllocatorGetByStream", || {
        // SAFETY: forwarded from this function's contract.
        let outs = unsafe {
            (
                Out::new(allocatorDesc, "allocatorDesc")?,
                Out::new(allocator, "allocator")?,
                Out::new(allocFunc, "allocFunc")?,
                Out::new(freeFunc, "freeFunc")?,
                Out::new(allocAdviseFunc, "allocAdviseFunc")?,
                Out::new(getAddrFromBlockFunc, "getAddrFromBlockFunc")?,
            )
        };
        context::stream(raw(stream))?;
        let found = sync::lock(&REGISTERED).as_ref().and_then(|m| m.get(&raw(stream)).copied());
        let r = found.unwrap_or(Registered { handle: 0, desc: Desc::default() });
        outs.0.write(to_c(r.handle));
        outs.1.write(std::ptr::with_exposed_provenance_mut(r.desc.obj));
        outs.2.write(r.desc.alloc);
        outs.3.write(r.desc.free);
        outs.4.write(r.desc.advise);
        outs.5.write(r.desc.addr_of);
        Ok(())
    })
}

/// Removes the allocator registered on `stream`; nothing registered (or called twice): success.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError {
    acl_call("aclrtAllocatorUnregister", || {
        if let Some(m) = sync::lock(&REGISTERED).as_mut() {
            m.remove(&raw(stream));
        }
        Ok(())
    })
}
