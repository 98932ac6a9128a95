//! Conversions between C handle values (`void *`) and handle-table values. Handles are
//! numbers, never addresses, so both directions are plain integer casts.

use std::ffi::c_void;

pub(crate) fn raw(h: *mut c_void) -> u64 {
    h.addr() as u64
}

pub(crate) fn to_c(h: u64) -> *mut c_void {
    std::ptr::without_provenance_mut(h as usize)
}
