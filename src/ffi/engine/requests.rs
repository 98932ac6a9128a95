//! Asynchronous transfers: TransferAsync and the requests it hands out (GetTransferStatus).

use std::ffi::{c_char, c_void};

use super::handle::{AscendlessEngine, vouch};
use super::transfer::{AscendlessTransferDesc, copy_descs};
use crate::engine::Engine;
use crate::engine::TransferOp;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::{raw, resolve, to_c};
use crate::ffi::ptr::{Out, required_str};

/// `AdxlEngine::TransferAsync`: checks and copies the descriptors (the array may be reused
/// once this returns), queues the transfer and stores a request handle in `*req` at once; the
/// engine's worker threads move the data (same host or TCP, as TransferSync). Errors found at
/// submission are those of `ascendless_engine_transfer_sync` (no link without `AutoConnect`:
/// `ADXL_NOT_CONNECTED`); a NULL `req` is `ADXL_PARAM_INVALID`; 4096 requests already held by
/// the engine (submitted and not yet reported done by `ascendless_engine_get_transfer_status`)
/// is `ADXL_RESOURCE_EXHAUSTED`. Each request has a time limit of 60 s
/// (`ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS` changes it), past which it is reported `TIMEOUT`; a
/// dead peer fails it at once.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `op_descs` is NULL or an array of
/// `num_descs` descriptors; `req` is NULL or valid for a write of a `void *`; every local
/// range that is not runtime memory stays valid (writable for READ) until the request is
/// reported COMPLETED, TIMEOUT or FAILED.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_transfer_async(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    operation: i32,
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
    req: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_transfer_async", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let op = TransferOp::from_raw(operation)?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(req, "req") }?;
        // SAFETY: forwarded contract.
        let descs = unsafe { copy_descs(op_descs, num_descs) }?;
        // SAFETY: the caller promises the local ranges stay valid until the request is done.
        let h = e.transfer_async(remote, op, &descs, |r| unsafe { vouch(r) })?;
        out.write(to_c(h));
        Ok(())
    })
}

/// `AdxlEngine::GetTransferStatus`: stores in `*status` 0 (`WAITING`), 1 (`COMPLETED`), 2
/// (`TIMEOUT`: the request's time limit passed before its data had landed; its worker has
/// stopped, so its memory may be reused) or 3 (`FAILED`). After COMPLETED, TIMEOUT or FAILED
/// the request is freed: asking again is `ADXL_PARAM_INVALID`, as is a value that is not a
/// request of this engine. A NULL `req` is `ADXL_FAILED`; a NULL `status`
/// `ADXL_PARAM_INVALID`. A request that failed because its link went away (peer died,
/// Disconnect, Finalize) stores `FAILED` (`TIMEOUT` if the time-out broke the link) and
/// returns `ADXL_NOT_CONNECTED`; any other failure stores its status and returns
/// `ADXL_SUCCESS` (the reason is logged).
///
/// # Safety
/// `status` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_transfer_status(
    engine: AscendlessEngine,
    req: *mut c_void,
    status: *mut i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_transfer_status", || {
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(status, "status") }?;
        let (value, result) = e.transfer_status(raw(req));
        if let Some(v) = value {
            out.write(v);
        }
        result
    })
}
