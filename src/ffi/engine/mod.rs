//! `ascendless.h`: the library's own C API, the native face of the engine
//! ([`crate::engine`]). One file per concept; the ADXL status numbers of the header come from
//! [`crate::error::engine_status`], the single place they are defined.
//!
//! The header lists the functions in the order of the modules below (cbindgen reads them in
//! turn), so they are declared in that order, not alphabetically.

use std::ffi::c_void;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::sys::span::{HostRange, RawSpan};

// The library: version, last error, capabilities.
mod info;

// Memory the library allocates for transfers.
mod memory;

// An engine's handle and its Initialize/Finalize.
mod lifecycle;

// RegisterMem/DeregisterMem and the counters of each path.
mod registration;

// Connect/Disconnect.
mod connect;

// TransferSync and the descriptors.
mod transfer;

// TransferAsync and its requests.
mod requests;

// SendNotify/GetNotifies.
mod notify;

pub use connect::*;
pub use info::*;
pub use lifecycle::*;
pub use memory::*;
pub use notify::*;
pub use registration::*;
pub use requests::*;
pub use transfer::*;

/// An address, printed as `uintptr_t` in the header (a plain `usize` would print as `size_t`).
pub type UintptrArg = usize;

/// An ADXL engine: a handle made by `ascendless_engine_create`, never a pointer.
pub type AscendlessEngine = *mut c_void;

crate::handle_kind!(
    /// Every engine made through this API, by handle.
    /// (A NULL, stale or foreign engine handle is PARAM_INVALID.)
    static ENGINES: Engine => Engine, EngineError);

/// Vouches for a range of the caller's host memory (the engine reaches runtime memory, such
/// as device memory, through the runtime's view and never calls this for it).
///
/// # Safety
/// The range is valid memory (writable when `r.writable`) for as long as the engine uses it:
/// until the registration is removed (RegisterMem) or the call returns (TransferSync).
unsafe fn vouch(r: HostRange) -> RawSpan {
    // SAFETY: forwarded contract.
    unsafe { r.vouch() }
}
