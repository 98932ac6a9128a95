//! Checked access to pointers received from C.
//!
//! Only NULL and misalignment can be detected; everything else about a pointer is the caller's
//! contract, stated in the function's `# Safety` section.

use std::ffi::{CStr, c_char};

use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{AclError, EngineError};

/// A pointer argument that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadPointer {
    pub what: &'static str,
    pub why: &'static str,
}

impl From<BadPointer> for AclError {
    fn from(b: BadPointer) -> Self {
        AclError::new(ACL_ERROR_INVALID_PARAM, format!("{} {}", b.what, b.why))
    }
}

impl From<BadPointer> for EngineError {
    fn from(b: BadPointer) -> Self {
        EngineError::new(ADXL_PARAM_INVALID, format!("{} {}", b.what, b.why))
    }
}

/// The error for a required pointer argument that is NULL.
pub(crate) fn null_argument(what: &'static str) -> AclError {
    BadPointer { what, why: "must not be NULL" }.into()
}

fn check<T>(p: *const T, what: &'static str) -> Result<(), BadPointer> {
    if p.is_null() {
        Err(BadPointer { what, why: "must not be NULL" })
    } else if !p.is_aligned() {
        Err(BadPointer { what, why: "is not aligned for its type" })
    } else {
        Ok(())
    }
}

/// Writes `value` to the out-parameter `p` (named `what` in messages).
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, value: T, what: &'static str) -> Result<(), BadPointer> {
    check(p, what)?;
    // SAFETY: non-NULL and aligned (checked above); valid for writes by the caller's contract.
    unsafe { p.write(value) };
    Ok(())
}

/// Checks an optional out-parameter before any work is done, so a bad one fails the call
/// without side effects; NULL passes.
pub(crate) fn check_optional<T>(p: *mut T, what: &'static str) -> Result<(), BadPointer> {
    if p.is_null() { Ok(()) } else { check(p, what) }
}

/// Writes `value` to `p` when the caller passed one; NULL means "not wanted".
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub(crate) unsafe fn write_optional<T>(p: *mut T, value: T, what: &'static str) -> Result<(), BadPointer> {
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: forwarded contract; non-NULL here.
    unsafe { write_out(p, value, what) }
}

/// Reads a NUL-terminated UTF-8 string argument; NULL gives `None`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn optional_str<'a>(
    p: *const c_char,
    what: &'static str,
) -> Result<Option<&'a str>, BadPointer> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, NUL-terminated and live for 'a by the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map(Some).map_err(|_| BadPointer { what, why: "is not valid UTF-8" })
}

/// Reads a NUL-terminated UTF-8 string argument that must be present.
///
/// # Safety
/// As for [`optional_str`].
pub(crate) unsafe fn required_str<'a>(p: *const c_char, what: &'static str) -> Result<&'a str, BadPointer> {
    check(p, what)?;
    // SAFETY: forwarded contract.
    unsafe { optional_str(p, what) }.map(Option::unwrap_or_default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_misaligned_out_pointers_are_refused() {
        // SAFETY: NULL is never written.
        let e = unsafe { write_out::<u32>(std::ptr::null_mut(), 1, "count") }.unwrap_err();
        assert_eq!(AclError::from(e.clone()).code, ACL_ERROR_INVALID_PARAM);
        assert_eq!(EngineError::from(e).status, ADXL_PARAM_INVALID);
        let mut buf = [0u64; 2];
        let odd = (buf.as_mut_ptr() as *mut u8).wrapping_add(1) as *mut u64;
        // SAFETY: misaligned pointers are refused before any write.
        let e = unsafe { write_out(odd, 5u64, "value") }.unwrap_err();
        assert_eq!(e.why, "is not aligned for its type");
        // SAFETY: valid, aligned destination.
        unsafe { write_out(&mut buf[0], 9u64, "value") }.unwrap();
        assert_eq!(buf[0], 9);
        // SAFETY: NULL means not wanted.
        unsafe { write_optional::<u64>(std::ptr::null_mut(), 1, "value") }.unwrap();
    }

    #[test]
    fn strings_are_checked() {
        // SAFETY: NULL and literals with NUL are valid inputs.
        unsafe {
            assert_eq!(optional_str(std::ptr::null(), "path").unwrap(), None);
            assert_eq!(optional_str(c"abc".as_ptr(), "key").unwrap(), Some("abc"));
            assert!(required_str(std::ptr::null(), "key").is_err());
            assert_eq!(required_str(c"abc".as_ptr(), "key").unwrap(), "abc");
            assert!(optional_str(c"\xff".as_ptr(), "key").is_err());
        }
    }
}
