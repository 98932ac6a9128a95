//! `acl/acl_rt.h`: kernel argument blocks (`aclrtKernelArgs*`), built on the host.
//!
//! A block is the argument area of one launch: each appended argument takes the next slot, its
//! size rounded up to 8 bytes, in order; a placeholder takes an 8-byte slot that holds the
//! address of its buffer (`aclrtKernelArgsGetPlaceHolderBuffer`). Launching a block needs a
//! kernel, which needs an NPU (`aclrtLaunchKernelWithConfig`: 207000), but building one works.
//!
//! No function handle can be had here (loading a binary is 207000), so the functions that take
//! one do not consult it: a block's layout depends only on what is appended to it. Blocks of
//! `aclrtKernelArgsInit` live in the runtime until the process ends (the vendor frees them with
//! the function's binary, which cannot exist here); blocks of `aclrtKernelArgsInitByUserMem`
//! are named by the caller's handle memory and write their argument area into the caller's
//! memory as it is built.

#![allow(non_snake_case)]

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_call;
use crate::ffi::acl_rt::kernel_types::{aclrtArgsHandle, aclrtFuncHandle, aclrtParamHandle};
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::handle::HandleError;
use crate::handle_kind;
use crate::sync;

/// Bytes of handle memory `aclrtKernelArgsInitByUserMem` takes (`aclrtKernelArgsGetHandleMemSize`):
/// the runtime keeps its bookkeeping itself and uses the memory only as the block's name.
pub const HANDLE_MEM_SIZE: usize = 64;
/// Every slot of the argument area starts at a multiple of this.
const SLOT_ALIGN: usize = 8;

struct Param {
    offset: usize,
    size: usize,
    /// A placeholder's buffer, once asked for, with its address (exposed once, when made; the
    /// same address is in the slot and handed out every time).
    holder: Option<(Box<[u64]>, usize)>,
    placeholder: bool,
}

struct Block {
    data: Vec<u8>,
    params: Vec<Param>,
    finalized: bool,
    /// The caller's memory (address, size) the area is written to (`InitByUserMem`).
    user: Option<(usize, usize)>,
}

struct ArgsCell(Mutex<Block>);

handle_kind!(static ARGS: KernelArgs => ArgsCell, AclError);

/// Blocks of `aclrtKernelArgsInitByUserMem`, by the address of their handle memory.
static USER_BLOCKS: Mutex<Option<HashMap<usize, Arc<ArgsCell>>>> = Mutex::new(None);

fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

fn block(h: aclrtArgsHandle) -> AclResult<Arc<ArgsCell>> {
    if h.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "argsHandle must not be NULL"));
    }
    match ARGS.get(raw(h)) {
        Ok(b) => Ok(b),
        Err(HandleError::Foreign) => {
            sync::lock(&USER_BLOCKS).as_ref().and_then(|m| m.get(&h.addr()).cloned()).ok_or_else(|| {
                invalid(
                    "argsHandle is not a block from aclrtKernelArgsInit or aclrtKernelArgsInitByUserMem"
                        .into(),
                )
            })
        }
        Err(e) => Err(invalid(format!("argsHandle: {e}"))),
    }
}

fn param_index(b: &Block, p: aclrtParamHandle) -> AclResult<usize> {
    match p.addr().checked_sub(1) {
        Some(i) if i < b.params.len() => Ok(i),
        _ => Err(invalid("paramHandle is not an argument of this block".into())),
    }
}

fn param_handle(index: usize) -> aclrtParamHandle {
    std::ptr::without_provenance_mut(index + 1)
}

impl Block {
    fn new(user: Option<(usize, usize)>) -> Block {
        Block { data: Vec::new(), params: Vec::new(), finalized: false, user }
    }

    /// Appends a slot of `bytes` (rounded up to 8); returns its index.
    fn append(&mut self, bytes: &[u8], placeholder: bool) -> AclResult<usize> {
        if self.finalized {
            return Err(invalid(
                "the block is finalized (aclrtKernelArgsFinalize): nothing more can be appended".into(),
            ));
        }
        let offset = self.data.len();
        let end = offset
            .checked_add(bytes.len().next_multiple_of(SLOT_ALIGN))
            .ok_or_else(|| invalid("the argument area would overflow".into()))?;
        if let Some((_, cap)) = self.user
            && end > cap
        {
            return Err(invalid(format!(
                "the argument area would need {end} bytes; the caller's memory holds {cap} (aclrtKernelArgsGetMemSize)"
            )));
        }
        self.data.extend_from_slice(bytes);
        self.data.resize(end, 0);
        self.params.push(Param { offset, size: bytes.len(), holder: None, placeholder });
        Ok(self.params.len() - 1)
    }

    /// Writes the area into the caller's memory, for blocks over it.
    fn publish(&self) {
        if let Some((addr, _)) = self.user {
            // SAFETY: `addr` is the caller's memory of `cap` >= data.len() bytes (checked by
            // `append`), valid for writes while the block is used by
            // aclrtKernelArgsInitByUserMem's contract; `data` is our own vector.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.data.as_ptr(),
                    std::ptr::with_exposed_provenance_mut::<u8>(addr),
                    self.data.len(),
                )
            };
        }
    }
}

/// The handle memory `aclrtKernelArgsInitByUserMem` needs: 64 bytes. `funcHandle` is not
/// consulted (see the module's notes).
///
/// # Safety
/// `memSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsGetHandleMemSize(
    funcHandle: aclrtFuncHandle,
    memSize: *mut usize,
) -> aclError {
    let _ = funcHandle;
    acl_call("aclrtKernelArgsGetHandleMemSize", || {
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(memSize, "memSize") }?.write(HANDLE_MEM_SIZE);
        Ok(())
    })
}

/// The argument memory for `userArgsSize` bytes of arguments: the same, rounded up to 8 (the
/// area holds nothing else here).
///
/// # Safety
/// `actualArgsSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsGetMemSize(
    funcHandle: aclrtFuncHandle,
    userArgsSize: usize,
    actualArgsSize: *mut usize,
) -> aclError {
    let _ = funcHandle;
    acl_call("aclrtKernelArgsGetMemSize", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(actualArgsSize, "actualArgsSize") }?;
        let size = userArgsSize
            .checked_next_multiple_of(SLOT_ALIGN)
            .ok_or_else(|| invalid(format!("userArgsSize {userArgsSize} is too large")))?;
        out.write(size);
        Ok(())
    })
}

/// A new, empty argument block in the runtime's memory.
///
/// # Safety
/// `argsHandle` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsInit(
    funcHandle: aclrtFuncHandle,
    argsHandle: *mut aclrtArgsHandle,
) -> aclError {
    let _ = funcHandle;
    acl_call("aclrtKernelArgsInit", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(argsHandle, "argsHandle") }?;
        out.write(to_c(ARGS.insert(ArgsCell(Mutex::new(Block::new(None))))));
        Ok(())
    })
}

/// A new, empty argument block named by the caller's handle memory `argsHandle`
/// (`aclrtKernelArgsGetHandleMemSize` bytes), whose area is written into `userHostMem`
/// (`actualArgsSize` bytes). Initialising the same handle memory again starts a new block.
///
/// # Safety
/// `userHostMem` is valid for writes of `actualArgsSize` bytes while the block is used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsInitByUserMem(
    funcHandle: aclrtFuncHandle,
    argsHandle: aclrtArgsHandle,
    userHostMem: *mut c_void,
    actualArgsSize: usize,
) -> aclError {
    let _ = funcHandle;
    acl_call("aclrtKernelArgsInitByUserMem", || {
        if argsHandle.is_null() || userHostMem.is_null() {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "argsHandle and userHostMem must not be NULL",
            ));
        }
        if actualArgsSize == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "actualArgsSize must not be 0"));
        }
        let cell = Arc::new(ArgsCell(Mutex::new(Block::new(Some((
            userHostMem.expose_provenance(),
            actualArgsSize,
        ))))));
        sync::lock(&USER_BLOCKS).get_or_insert_with(HashMap::new).insert(argsHandle.addr(), cell);
        Ok(())
    })
}

/// Appends a copy of the `paramSize` bytes at `param` as the next argument.
///
/// # Safety
/// `param` is valid for reads of `paramSize` bytes; `paramHandle` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsAppend(
    argsHandle: aclrtArgsHandle,
    param: *mut c_void,
    paramSize: usize,
    paramHandle: *mut aclrtParamHandle,
) -> aclError {
    acl_call("aclrtKernelArgsAppend", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(paramHandle, "paramHandle") }?;
        if paramSize == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "paramSize must not be 0"));
        }
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { ptr::slice(param.cast_const().cast::<u8>(), paramSize, "param") }?;
        let cell = block(argsHandle)?;
        let mut b = sync::lock(&cell.0);
        let i = b.append(bytes, false)?;
        b.publish();
        out.write(param_handle(i));
        Ok(())
    })
}

/// Appends a placeholder: an 8-byte slot that will hold the address of its buffer.
///
/// # Safety
/// `paramHandle` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsAppendPlaceHolder(
    argsHandle: aclrtArgsHandle,
    paramHandle: *mut aclrtParamHandle,
) -> aclError {
    acl_call("aclrtKernelArgsAppendPlaceHolder", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(paramHandle, "paramHandle") }?;
        let cell = block(argsHandle)?;
        let mut b = sync::lock(&cell.0);
        let i = b.append(&[0; 8], true)?;
        b.publish();
        out.write(param_handle(i));
        Ok(())
    })
}

/// The buffer of placeholder `paramHandle`, of `dataSize` bytes (zeroed), owned by the block; its
/// address goes into the placeholder's slot. Asked again: the same buffer if it is big enough.
///
/// # Safety
/// `bufferAddr` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsGetPlaceHolderBuffer(
    argsHandle: aclrtArgsHandle,
    paramHandle: aclrtParamHandle,
    dataSize: usize,
    bufferAddr: *mut *mut c_void,
) -> aclError {
    acl_call("aclrtKernelArgsGetPlaceHolderBuffer", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(bufferAddr, "bufferAddr") }?;
        if dataSize == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "dataSize must not be 0"));
        }
        let cell = block(argsHandle)?;
        let mut b = sync::lock(&cell.0);
        let i = param_index(&b, paramHandle)?;
        let p = &mut b.params[i];
        if !p.placeholder {
            return Err(invalid(
                "paramHandle was appended with aclrtKernelArgsAppend, not as a placeholder".into(),
            ));
        }
        let words = dataSize.div_ceil(8);
        let addr = match &mut p.holder {
            Some((h, addr)) if h.len() >= words => *addr,
            Some((h, _)) => {
                return Err(invalid(format!(
                    "the placeholder already has a buffer of {} bytes; ask for at most that",
                    h.len() * 8
                )));
            }
            none => {
                // The caller writes through this address; the block keeps the allocation until
                // the process ends and never reads, moves or borrows it again.
                let mut h = vec![0u64; words].into_boxed_slice();
                let addr = h.as_mut_ptr().expose_provenance();
                none.insert((h, addr)).1
            }
        };
        let offset = p.offset;
        b.data[offset..offset + 8].copy_from_slice(&(addr as u64).to_ne_bytes());
        b.publish();
        let addr = std::ptr::with_exposed_provenance_mut::<c_void>(addr);
        out.write(addr);
        Ok(())
    })
}

/// Replaces the value of argument `paramHandle` (appended with `aclrtKernelArgsAppend`) with the
/// `paramSize` bytes at `param`; the size must be the one appended.
///
/// # Safety
/// `param` is valid for reads of `paramSize` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsParaUpdate(
    argsHandle: aclrtArgsHandle,
    paramHandle: aclrtParamHandle,
    param: *mut c_void,
    paramSize: usize,
) -> aclError {
    acl_call("aclrtKernelArgsParaUpdate", || {
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { ptr::slice(param.cast_const().cast::<u8>(), paramSize, "param") }?;
        let cell = block(argsHandle)?;
        let mut b = sync::lock(&cell.0);
        let i = param_index(&b, paramHandle)?;
        let (offset, size, placeholder) = (b.params[i].offset, b.params[i].size, b.params[i].placeholder);
        if placeholder {
            return Err(invalid("paramHandle is a placeholder: write its buffer instead".into()));
        }
        if paramSize != size {
            return Err(invalid(format!(
                "paramSize {paramSize}: the argument was appended with {size} bytes"
            )));
        }
        b.data[offset..offset + size].copy_from_slice(bytes);
        b.publish();
        Ok(())
    })
}

/// Marks the block complete: nothing more can be appended (updates still can).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtKernelArgsFinalize(argsHandle: aclrtArgsHandle) -> aclError {
    acl_call("aclrtKernelArgsFinalize", || {
        let cell = block(argsHandle)?;
        sync::lock(&cell.0).finalized = true;
        Ok(())
    })
}
