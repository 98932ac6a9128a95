//! RegisterMem with `MemDesc::local_only` (`hixl::MemDesc` and `adxl::MemDesc`).

use std::ffi::c_void;

use super::handle::{AscendlessEngine, UintptrArg, vouch};
use crate::engine::Engine;
use crate::engine::{MemType, Offer};
use crate::error::EngineResult;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::{resolve, to_c};
use crate::ffi::ptr::Out;

/// `RegisterMem` of a `MemDesc` whose `local_only` may be set: as
/// `ascendless_engine_register_mem`, but with `local_only` nonzero the region serves only this
/// engine's own transfers (as their local side): it is never offered to peers (not announced,
/// not mapped for peers on the same host, not registered with UCX), and a peer's transfer
/// into it is served as if the range were not registered (refused under
/// `adxl.RemoteAccess=registered` or with the relay pool off).
///
/// # Safety
/// As `ascendless_engine_register_mem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_register_mem_with(
    engine: AscendlessEngine,
    addr: UintptrArg,
    len: usize,
    mem_type: i32,
    local_only: i32,
    mem_handle: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_register_mem_with", || {
        let offer = Offer { local_only: local_only != 0, ..Offer::default() };
        // SAFETY: forwarded from this function's contract.
        unsafe { register_offered(engine, addr, len, mem_type, offer, mem_handle) }
    })
}

/// RegisterMem offered to peers as `offer` says: the body of every RegisterMem variant.
///
/// # Safety
/// As `ascendless_engine_register_mem`.
pub(super) unsafe fn register_offered(
    engine: AscendlessEngine,
    addr: UintptrArg,
    len: usize,
    mem_type: i32,
    offer: Offer,
    mem_handle: *mut *mut c_void,
) -> EngineResult<()> {
    // SAFETY: forwarded from this function's contract.
    let out = unsafe { Out::new(mem_handle, "mem_handle") }?;
    let e = resolve::<Engine>(engine, "engine")?;
    let kind = MemType::from_raw(mem_type)?;
    // SAFETY: the caller promises the memory stays valid while registered.
    let h = e.register_mem_with(addr, len, kind, offer, |r| unsafe { vouch(r) })?;
    out.write(to_c(h));
    Ok(())
}
