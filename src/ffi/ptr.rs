//! Checked access to pointers received from C.
//!
//! Only NULL and misalignment can be detected; everything else about a pointer is the caller's
//! contract, stated in the function's `# Safety` section.
//!
//! Out-parameters are taken as [`Out`] before a call does any work: a bad one then fails the
//! call with nothing done, and the final write cannot fail, so no call needs code to undo a
//! creation whose handle could not be handed out.

use std::ffi::{CStr, c_char};
use std::marker::PhantomData;
use std::ptr::NonNull;

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

/// An out-parameter known to be non-NULL and aligned, so writing it cannot fail.
pub(crate) struct Out<'a, T> {
    p: NonNull<T>,
    _writes: PhantomData<&'a mut T>,
}

impl<'a, T> Out<'a, T> {
    /// Checks the out-parameter `p` (named `what` in messages).
    ///
    /// # Safety
    /// `p` is NULL or valid for a write of `T` for `'a`.
    pub(crate) unsafe fn new(p: *mut T, what: &'static str) -> Result<Out<'a, T>, BadPointer> {
        check(p, what)?;
        let p = NonNull::new(p).ok_or(BadPointer { what, why: "must not be NULL" })?;
        Ok(Out { p, _writes: PhantomData })
    }

    /// Checks an optional out-parameter: NULL (not wanted) gives `None`.
    ///
    /// # Safety
    /// As for [`Out::new`].
    pub(crate) unsafe fn optional(p: *mut T, what: &'static str) -> Result<Option<Out<'a, T>>, BadPointer> {
        // SAFETY: forwarded contract.
        if p.is_null() { Ok(None) } else { unsafe { Out::new(p, what) }.map(Some) }
    }

    /// Hands `value` out.
    pub(crate) fn write(self, value: T) {
        // SAFETY: non-NULL and aligned (checked by `new`); valid for a write of `T` for 'a by
        // `new`'s contract.
        unsafe { self.p.as_ptr().write(value) }
    }
}

/// The C array `p` of `len` elements (named `what` in messages). NULL is allowed for an empty
/// array; with `len > 0` it is the caller's error, as is a misaligned `p`.
///
/// # Safety
/// `p` is NULL or points to `len` readable `T` that stay valid and unchanged for `'a`.
pub(crate) unsafe fn slice<'a, T>(
    p: *const T,
    len: usize,
    what: &'static str,
) -> Result<&'a [T], BadPointer> {
    if len == 0 {
        return Ok(&[]);
    }
    check(p, what)?;
    // SAFETY: non-NULL and aligned (checked above); `len` readable values, valid for 'a, by
    // the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
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
        let e = unsafe { Out::<u32>::new(std::ptr::null_mut(), "count") }.err().unwrap();
        assert_eq!(AclError::from(e.clone()).code, ACL_ERROR_INVALID_PARAM);
        assert_eq!(EngineError::from(e).status, ADXL_PARAM_INVALID);
        let mut buf = [0u64; 2];
        let odd = (buf.as_mut_ptr() as *mut u8).wrapping_add(1) as *mut u64;
        // SAFETY: misaligned pointers are refused before any write.
        let e = unsafe { Out::new(odd, "value") }.err().unwrap();
        assert_eq!(e.why, "is not aligned for its type");
        // SAFETY: valid, aligned destination.
        unsafe { Out::new(&mut buf[0], "value") }.unwrap().write(9u64);
        assert_eq!(buf[0], 9);
        // SAFETY: NULL means not wanted.
        assert!(unsafe { Out::<u64>::optional(std::ptr::null_mut(), "value") }.unwrap().is_none());
    }

    #[test]
    fn an_out_parameter_is_checked_when_taken_and_then_written_without_fail() {
        let mut v = 0u32;
        // SAFETY: a valid, aligned destination that outlives `out`.
        let out = unsafe { Out::new(&mut v, "value") }.unwrap();
        out.write(7);
        assert_eq!(v, 7);
        // SAFETY: NULL is refused before anything is written.
        assert!(unsafe { Out::<u32>::new(std::ptr::null_mut(), "value") }.is_err());
    }

    #[test]
    fn a_c_array_may_be_null_only_when_empty() {
        let values = [1u32, 2, 3];
        // SAFETY: NULL with length 0, and a live array of 3 values.
        unsafe {
            assert_eq!(slice::<u32>(std::ptr::null(), 0, "values").unwrap(), &[] as &[u32]);
            assert_eq!(slice(values.as_ptr(), 3, "values").unwrap(), &values);
            let e = slice::<u32>(std::ptr::null(), 2, "values").unwrap_err();
            assert_eq!(e.why, "must not be NULL");
            let odd = (values.as_ptr() as *const u8).wrapping_add(1) as *const u32;
            assert_eq!(slice(odd, 1, "values").unwrap_err().why, "is not aligned for its type");
        }
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
