//! Device memory and the last error message through the C API, for tests that check the bytes
//! a stream task wrote (`#[path]`-included by each test binary that uses it).
#![allow(dead_code)]

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl::aclGetRecentErrMsg;
use ascendless::ffi::acl_rt::memory::{aclrtMalloc, aclrtMemcpy};

/// The message of the last failed call on this thread.
pub fn recent() -> String {
    let p = aclGetRecentErrMsg();
    assert!(!p.is_null(), "a failed call leaves a message");
    // SAFETY: a NUL-terminated message owned by the runtime, read at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `size` bytes of the current device's memory.
pub fn device_alloc(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, 0) }, ACL_SUCCESS);
    p
}

/// Copies `src` to device memory at `dst`.
pub fn h2d(dst: *mut c_void, src: &[u8]) {
    // SAFETY: `src` is a live slice; `dst` device memory of at least its length.
    assert_eq!(unsafe { aclrtMemcpy(dst, src.len(), src.as_ptr().cast(), src.len(), 1) }, ACL_SUCCESS);
}

/// The `len` bytes of device memory at `src`.
pub fn d2h(src: *mut c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is a live buffer of `len` bytes.
    assert_eq!(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, src, len, 2) }, ACL_SUCCESS);
    out
}
