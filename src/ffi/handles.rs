//! Handles at the C edge: a C handle (`void *`) is a handle-table value, never an address, so
//! both directions are plain integer casts; [`resolve`] and [`release`] look one up in its
//! kind's table and report a bad one in its API's codes.

use std::ffi::c_void;
use std::sync::Arc;

use crate::handle::Handle;

/// The table value of C handle `h`.
pub(crate) fn raw(h: *mut c_void) -> u64 {
    h.addr() as u64
}

/// The C handle of table value `h`.
pub(crate) fn to_c(h: u64) -> *mut c_void {
    std::ptr::without_provenance_mut(h as usize)
}

/// The live object C handle `h` names, or the error (NULL, stale, foreign, wrong kind) in the
/// codes of `H`'s API, naming the parameter `what`.
pub(crate) fn resolve<H: Handle>(h: *mut c_void, what: &str) -> Result<Arc<H::Target>, H::Error> {
    H::resolve(raw(h), what)
}

/// Removes the object C handle `h` names, which is stale from then on; errors as [`resolve`].
pub(crate) fn release<H: Handle>(h: *mut c_void, what: &str) -> Result<Arc<H::Target>, H::Error> {
    H::release(raw(h), what)
}
