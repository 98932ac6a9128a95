//! The engine handle of `ascendless.h` and the helpers every part of the C API shares.

use std::ffi::c_void;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::sys::span::{HostRange, RawSpan};

/// An address, printed as `uintptr_t` in the header (a plain `usize` would print as `size_t`).
pub type UintptrArg = usize;

/// An ADXL engine: a handle made by `ascendless_engine_create`, never a pointer.
pub type AscendlessEngine = *mut c_void;

crate::handle_kind!(
    /// Every engine made through this API, by handle.
    /// (A NULL, stale or foreign engine handle is PARAM_INVALID.)
    pub(super) static ENGINES: Engine => Engine, EngineError);

/// Vouches for a range of the caller's host memory (the engine reaches runtime memory, such
/// as device memory, through the runtime's view and never calls this for it).
///
/// # Safety
/// The range is valid memory (writable when `r.writable`) for as long as the engine uses it:
/// until the registration is removed (RegisterMem) or the call returns (TransferSync).
pub(super) unsafe fn vouch(r: HostRange) -> RawSpan {
    // SAFETY: forwarded contract.
    unsafe { r.vouch() }
}
