//! `acl/acl_rt.h`: shared buffers (`aclrtMbuf`) and their chains (`runtime/mbuf.rs`).

use std::ffi::c_void;

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
    acl_call("aclrtAllocBuf", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(buf, "buf") }?;
        out.write(to_c(mbuf::alloc(size)?));
        Ok(())
    })
}

/// Frees a buffer; the data block goes with its last reference. Freeing a chain's head frees
/// its members; a member alone cannot be freed (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeBuf(buf: aclrtMbuf) -> aclError {
    acl_call("aclrtFreeBuf", || mbuf::free(raw(buf)))
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
    acl_call("aclrtGetBufData", || {
        // SAFETY: forwarded from this function's contract.
        let (out_ptr, out_size) = unsafe { (Out::new(dataPtr, "dataPtr")?, Out::new(size, "size")?) };
        let (addr, len) = mbuf::get(raw(buf), "buf")?.data();
        out_ptr.write(std::ptr::with_exposed_provenance_mut(addr));
        out_size.write(len);
        Ok(())
    })
}

/// The buffer's valid length (0 until `aclrtSetBufDataLen`).
///
/// # Safety
/// `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufDataLen(buf: aclrtMbuf, len: *mut usize) -> aclError {
    acl_call("aclrtGetBufDataLen", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(len, "len") }?;
        out.write(mbuf::get(raw(buf), "buf")?.len());
        Ok(())
    })
}

/// Sets the buffer's valid length: at most its data area's size (107000 beyond).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetBufDataLen(buf: aclrtMbuf, len: usize) -> aclError {
    acl_call("aclrtSetBufDataLen", || mbuf::get(raw(buf), "buf")?.set_len(len))
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
    acl_call("aclrtGetBufUserData", || {
        let b = mbuf::get(raw(buf), "buf")?;
        let mut tmp = vec![0u8; size.min(mbuf::USER_DATA_SIZE + 1)];
        b.user_data(offset, &mut tmp)?;
        if size > 0 {
            if dataPtr.is_null() {
                return Err(ptr::null_argument("dataPtr"));
            }
            // SAFETY: non-NULL; valid for `size` bytes by this function's contract; `tmp` holds
            // exactly `size` bytes (the area checked the size above).
            unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), dataPtr.cast::<u8>(), size) };
        }
        Ok(())
    })
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
    acl_call("aclrtSetBufUserData", || {
        // SAFETY: forwarded from this function's contract.
        let data = unsafe { ptr::slice(dataPtr.cast::<u8>(), size, "dataPtr") }?;
        mbuf::get(raw(buf), "buf")?.set_user_data(offset, data)
    })
}

/// A new buffer referring to the same data area, with a copy of the valid length and user data.
///
/// # Safety
/// `newBuf` is NULL or valid for a write of an `aclrtMbuf`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCopyBufRef(buf: aclrtMbuf, newBuf: *mut aclrtMbuf) -> aclError {
    acl_call("aclrtCopyBufRef", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(newBuf, "newBuf") }?;
        out.write(to_c(mbuf::copy_ref(raw(buf))?));
        Ok(())
    })
}

/// Appends `buf` to the chain headed by `headBuf` (at most 128 buffers, the head included); the
/// chain then owns it (freed with the head).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAppendBufChain(headBuf: aclrtMbuf, buf: aclrtMbuf) -> aclError {
    acl_call("aclrtAppendBufChain", || mbuf::append(raw(headBuf), raw(buf)))
}

/// How many buffers the chain headed by `headBuf` holds, the head included.
///
/// # Safety
/// `num` is NULL or valid for a write.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetBufChainNum(headBuf: aclrtMbuf, num: *mut u32) -> aclError {
    acl_call("aclrtGetBufChainNum", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(num, "num") }?;
        out.write(mbuf::chain_len(raw(headBuf))?);
        Ok(())
    })
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
    acl_call("aclrtGetBufFromChain", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(buf, "buf") }?;
        out.write(to_c(mbuf::chain_member(raw(headBuf), index)?));
        Ok(())
    })
}
