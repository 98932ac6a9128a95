//! TransferSync and the transfer descriptors every transfer call takes.

use std::ffi::c_char;

use super::handle::{AscendlessEngine, UintptrArg, vouch};
use crate::engine::Engine;
use crate::engine::{TransferDesc, TransferOp};
use crate::error::EngineResult;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::resolve;
use crate::ffi::ptr::{required_str, slice};

/// One transfer descriptor; the layout of `adxl::TransferOpDesc` (24 bytes on 64-bit).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscendlessTransferDesc {
    /// This engine's memory (destination of a READ, source of a WRITE).
    pub local_addr: UintptrArg,
    /// The remote engine's memory.
    pub remote_addr: UintptrArg,
    /// Bytes to move.
    pub len: usize,
}

/// `AdxlEngine::TransferSync`: `operation` 0 (`READ`) copies each descriptor's remote range
/// into its local range, 1 (`WRITE`) the other way; returns when every byte has landed.
/// `timeout_in_millis` <= 0, a zero address, a NULL `op_descs` with `num_descs` > 0, or a
/// relay the seed forbids (unregistered memory with `adxl.BufferPool` 0:0; descriptors of
/// different transfer types in relay mode; an unregistered remote address that is not valid)
/// is `ADXL_PARAM_INVALID`; no link `ADXL_NOT_CONNECTED` (unless `AutoConnect`); out of time
/// `ADXL_TIMEOUT`; a peer that died `ADXL_FAILED` (at once, not at the time-out).
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `op_descs` is NULL or an array of
/// `num_descs` descriptors; every local range that is not runtime memory is valid (writable
/// for READ) until the call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_transfer_sync(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    operation: i32,
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_transfer_sync", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let op = TransferOp::from_raw(operation)?;
        // SAFETY: forwarded contract.
        let descs = unsafe { copy_descs(op_descs, num_descs) }?;
        // SAFETY: the caller promises the local ranges are valid until this call returns.
        e.transfer_sync(remote, op, &descs, timeout_in_millis, |r| unsafe { vouch(r) })
    })
}

/// Copies the C descriptor array (NULL allowed only with `num_descs` 0).
///
/// # Safety
/// `op_descs` is NULL or an array of `num_descs` descriptors.
pub(super) unsafe fn copy_descs(
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
) -> EngineResult<Vec<TransferDesc>> {
    // SAFETY: forwarded contract.
    let descs = unsafe { slice(op_descs, num_descs, "op_descs") }?;
    Ok(descs
        .iter()
        .map(|d| TransferDesc { local_addr: d.local_addr, remote_addr: d.remote_addr, len: d.len })
        .collect())
}
