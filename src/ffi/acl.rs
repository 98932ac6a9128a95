//! `acl/acl.h`: initialisation and the most recent error.

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::path::Path;

use super::ptr::{Out, optional_str};
use super::{acl_call, boundary};
use crate::error::acl_codes::aclError;
use crate::error::take_recent;
use crate::runtime::init;

/// Size of the key buffers of the IPC export calls: a key of at most 64 characters and its NUL.
pub const ACL_IPC_HANDLE_SIZE: usize = 65;

/// Initialises AscendCL for this process. `configPath` may be NULL or empty; otherwise it names
/// a JSON file that must exist and parse (its settings have no effect here).
///
/// Returns `ACL_ERROR_REPEAT_INITIALIZE` (100002) when already initialised, which callers treat
/// as success; every call, repeated or not, counts for `aclFinalizeReference`. The callbacks of
/// `aclInitCallbackRegister` then run with the file's text; one failing fails the call.
///
/// # Safety
/// `configPath` is NULL or a NUL-terminated string.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(configPath: *const c_char) -> aclError {
    acl_call("aclInit", || {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { optional_str(configPath, "configPath") }?;
        init::init(path.filter(|p| !p.is_empty()).map(Path::new))
    })
}

/// Finalises AscendCL whatever the initialisation count, after the callbacks of
/// `aclFinalizeCallbackRegister`. A second call returns
/// `ACL_ERROR_REPEAT_FINALIZE` (100037); a call before any `aclInit` returns
/// `ACL_ERROR_UNINITIALIZE` (100001).
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> aclError {
    acl_call("aclFinalize", init::finalize)
}

/// Takes one `aclInit` count away and finalises when none is left. `refCount` (may be NULL)
/// receives the count left.
///
/// # Safety
/// `refCount` is NULL or valid for a write of a `uint64_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeReference(refCount: *mut u64) -> aclError {
    acl_call("aclFinalizeReference", || {
        // SAFETY: forwarded from this function's contract.
        let ref_count = unsafe { Out::optional(refCount, "refCount") }?;
        let left = init::finalize_reference()?;
        if let Some(out) = ref_count {
            out.write(left);
        }
        Ok(())
    })
}

thread_local! {
    /// The text handed out last on this thread: the caller may hold its address until the
    /// next `aclGetRecentErrMsg` on the same thread.
    static HANDED_OUT: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// The text of this thread's most recent error, or NULL if there was none since the last read.
/// Reading consumes the message; the returned string stays valid until this thread's next call.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    boundary("aclGetRecentErrMsg", std::ptr::null(), hand_out_recent)
}

/// Moves this thread's unread message into the hand-out slot and returns its address.
pub(crate) fn hand_out_recent() -> *const c_char {
    HANDED_OUT
        .try_with(|slot| {
            let mut slot = slot.borrow_mut();
            *slot = take_recent();
            slot.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
        })
        .unwrap_or(std::ptr::null())
}
