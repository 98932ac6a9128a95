//! `acl/acl_rt.h`: shared buffers (`aclrtMbuf`) and their chains (`runtime/mbuf.rs`).
//!
//! The same buffers are `acl/acl_tdt_queue.h`'s `acltdtBuf` (`acl_tdt_queue.rs`): its
//! `acltdt*Buf*` functions are a second face of these, and both faces run the bodies below
//! (`alloc_buf` … `get_buf_from_chain`). Each body takes the name of the function the program
//! called, so its errors (`aclGetRecentErrMsg`) name that function.

use std::ffi::c_void;

use crate::error::AclResult;
use crate::error::acl_codes::aclError;
use crate::ffi::acl_base::aclrtMbuf;
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::runtime::mbuf;

/// Allocates a shared buffer with a data area of `size` bytes (1 byte to 4 GiB) of pinned host
/// memory; its valid length starts at 0 and its 96-byte user data area zeroed.
///
/// # Safety
/// `buf` is NULL or valid for a write of an `aclrtMbuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocBuf(buf: *mut aclrtMbuf, size: usize) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { alloc_buf("aclrtAllocBuf", buf, size, || Ok(())) }
}

/// Frees a buffer; the data block goes with its last reference. Freeing a chain's head frees
/// its members; a member alone cannot be freed (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeBuf(buf: aclrtMbuf) -> aclError {
    free_buf("aclrtFreeBuf", buf)
}

/// The buffer's data area: its address (host memory) and size.
///
/// # Safety
/// `dataPtr` and `size` are NULL or valid for a write.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufData(
    buf: aclrtMbuf,
    dataPtr: *mut *mut c_void,
    size: *mut usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { get_buf_data("aclrtGetBufData", buf, dataPtr, size) }
}

/// The buffer's valid length (0 until `aclrtSetBufDataLen`).
///
/// # Safety
/// `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufDataLen(buf: aclrtMbuf, len: *mut usize) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { get_buf_data_len("aclrtGetBufDataLen", buf, len) }
}

/// Sets the buffer's valid length: at most its data area's size (107000 beyond).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetBufDataLen(buf: aclrtMbuf, len: usize) -> aclError {
    set_buf_data_len("aclrtSetBufDataLen", buf, len)
}

/// Copies `size` bytes of the buffer's user data area from `offset` to `dataPtr`;
/// `offset + size` beyond 96 bytes: 107000.
///
/// # Safety
/// `dataPtr` is valid for a write of `size` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufUserData(
    buf: aclrtMbuf,
    dataPtr: *mut c_void,
    size: usize,
    offset: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { get_buf_user_data("aclrtGetBufUserData", buf, dataPtr, size, offset) }
}

/// Copies `size` bytes from `dataPtr` into the buffer's user data area at `offset`;
/// `offset + size` beyond 96 bytes: 107000.
///
/// # Safety
/// `dataPtr` is valid for a read of `size` bytes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetBufUserData(
    buf: aclrtMbuf,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { set_buf_user_data("aclrtSetBufUserData", buf, dataPtr, size, offset) }
}

/// A new buffer referring to the same data area, with a copy of the valid length and user data.
///
/// # Safety
/// `newBuf` is NULL or valid for a write of an `aclrtMbuf`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCopyBufRef(buf: aclrtMbuf, newBuf: *mut aclrtMbuf) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { copy_buf_ref("aclrtCopyBufRef", buf, newBuf) }
}

/// Appends `buf` to the chain headed by `headBuf` (at most 128 buffers, the head included); the
/// chain then owns it (freed with the head).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAppendBufChain(headBuf: aclrtMbuf, buf: aclrtMbuf) -> aclError {
    append_buf_chain("aclrtAppendBufChain", headBuf, buf)
}

/// How many buffers the chain headed by `headBuf` holds, the head included.
///
/// # Safety
/// `num` is NULL or valid for a write.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufChainNum(headBuf: aclrtMbuf, num: *mut u32) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { get_buf_chain_num("aclrtGetBufChainNum", headBuf, num) }
}

/// The `index`-th buffer of the chain headed by `headBuf` (0 is the head).
///
/// # Safety
/// `buf` is NULL or valid for a write of an `aclrtMbuf`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufFromChain(
    headBuf: aclrtMbuf,
    index: u32,
    buf: *mut aclrtMbuf,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { get_buf_from_chain("aclrtGetBufFromChain", headBuf, index, buf) }
}

// The bodies of both faces (`aclrt*Buf*` above, `acltdt*Buf*`). `api` is the function called.

/// `aclrtAllocBuf`'s body, after `check` (the caller's own argument checks, made first).
///
/// # Safety
/// `buf` is NULL or valid for a write of an `aclrtMbuf`.
pub(crate) unsafe fn alloc_buf(
    api: &str,
    buf: *mut aclrtMbuf,
    size: usize,
    check: impl FnOnce() -> AclResult<()>,
) -> aclError {
    acl_call(api, || {
        check()?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(buf, "buf") }?;
        out.write(to_c(mbuf::alloc(size)?));
        Ok(())
    })
}

/// `aclrtFreeBuf`'s body.
pub(crate) fn free_buf(api: &str, buf: aclrtMbuf) -> aclError {
    acl_call(api, || mbuf::free(raw(buf)))
}

/// `aclrtGetBufData`'s body.
///
/// # Safety
/// `data_ptr` and `size` are NULL or valid for a write.
pub(crate) unsafe fn get_buf_data(
    api: &str,
    buf: aclrtMbuf,
    data_ptr: *mut *mut c_void,
    size: *mut usize,
) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let (out_ptr, out_size) = unsafe { (Out::new(data_ptr, "dataPtr")?, Out::new(size, "size")?) };
        let (addr, len) = mbuf::get(raw(buf), "buf")?.data();
        out_ptr.write(std::ptr::with_exposed_provenance_mut(addr));
        out_size.write(len);
        Ok(())
    })
}

/// `aclrtGetBufDataLen`'s body.
///
/// # Safety
/// `len` is NULL or valid for a write.
pub(crate) unsafe fn get_buf_data_len(api: &str, buf: aclrtMbuf, len: *mut usize) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(len, "len") }?;
        out.write(mbuf::get(raw(buf), "buf")?.len());
        Ok(())
    })
}

/// `aclrtSetBufDataLen`'s body.
pub(crate) fn set_buf_data_len(api: &str, buf: aclrtMbuf, len: usize) -> aclError {
    acl_call(api, || mbuf::get(raw(buf), "buf")?.set_len(len))
}

/// `aclrtGetBufUserData`'s body.
///
/// # Safety
/// `data_ptr` is valid for a write of `size` bytes.
pub(crate) unsafe fn get_buf_user_data(
    api: &str,
    buf: aclrtMbuf,
    data_ptr: *mut c_void,
    size: usize,
    offset: usize,
) -> aclError {
    acl_call(api, || {
        let b = mbuf::get(raw(buf), "buf")?;
        let mut tmp = vec![0u8; size.min(mbuf::USER_DATA_SIZE + 1)];
        b.user_data(offset, &mut tmp)?;
        if size > 0 {
            if data_ptr.is_null() {
                return Err(ptr::null_argument("dataPtr"));
            }
            // SAFETY: non-NULL; valid for `size` bytes by this function's contract; `tmp` holds
            // exactly `size` bytes (the area checked the size above).
            unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), data_ptr.cast::<u8>(), size) };
        }
        Ok(())
    })
}

/// `aclrtSetBufUserData`'s body.
///
/// # Safety
/// `data_ptr` is valid for a read of `size` bytes.
pub(crate) unsafe fn set_buf_user_data(
    api: &str,
    buf: aclrtMbuf,
    data_ptr: *const c_void,
    size: usize,
    offset: usize,
) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { ptr::slice(data_ptr.cast::<u8>(), size, "dataPtr") }?;
        mbuf::get(raw(buf), "buf")?.set_user_data(offset, data)
    })
}

/// `aclrtCopyBufRef`'s body.
///
/// # Safety
/// `new_buf` is NULL or valid for a write of an `aclrtMbuf`.
pub(crate) unsafe fn copy_buf_ref(api: &str, buf: aclrtMbuf, new_buf: *mut aclrtMbuf) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(new_buf, "newBuf") }?;
        out.write(to_c(mbuf::copy_ref(raw(buf))?));
        Ok(())
    })
}

/// `aclrtAppendBufChain`'s body.
pub(crate) fn append_buf_chain(api: &str, head_buf: aclrtMbuf, buf: aclrtMbuf) -> aclError {
    acl_call(api, || mbuf::append(raw(head_buf), raw(buf)))
}

/// `aclrtGetBufChainNum`'s body.
///
/// # Safety
/// `num` is NULL or valid for a write.
pub(crate) unsafe fn get_buf_chain_num(api: &str, head_buf: aclrtMbuf, num: *mut u32) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(num, "num") }?;
        out.write(mbuf::chain_len(raw(head_buf))?);
        Ok(())
    })
}

/// `aclrtGetBufFromChain`'s body.
///
/// # Safety
/// `buf` is NULL or valid for a write of an `aclrtMbuf`.
pub(crate) unsafe fn get_buf_from_chain(
    api: &str,
    head_buf: aclrtMbuf,
    index: u32,
    buf: *mut aclrtMbuf,
) -> aclError {
    acl_call(api, || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(buf, "buf") }?;
        out.write(to_c(mbuf::chain_member(raw(head_buf), index)?));
        Ok(())
    })
}
