//! `hixl::Hixl`'s additions to asynchronous transfers: TransferAsync with
//! `TransferArgs::user_data`, and the batched GetTransferStatus over all of an engine's
//! requests.

use std::ffi::{c_char, c_void};

use super::handle::{AscendlessEngine, vouch};
use super::transfer::{AscendlessTransferDesc, copy_descs};
use crate::engine::Engine;
use crate::engine::TransferOp;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::{resolve, to_c};
use crate::ffi::ptr::{Out, required_str};

/// One request reported by `ascendless_engine_get_transfer_statuses` (`hixl::TransferResult`
/// without its reserved bytes): the request, the `user_data` it was submitted with, and its
/// status (0 `WAITING`, 1 `COMPLETED`, 2 `TIMEOUT`, 3 `FAILED`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscendlessTransferResult {
    pub req: *mut c_void,
    pub user_data: *const c_void,
    pub status: i32,
}

/// `Hixl::TransferAsync`: `ascendless_engine_transfer_async` with `TransferArgs::user_data`,
/// which `ascendless_engine_get_transfer_statuses` hands back with the request (the library
/// never reads through it).
///
/// # Safety
/// As `ascendless_engine_transfer_async`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_transfer_async_with_user_data(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    operation: i32,
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
    user_data: *const c_void,
    req: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_transfer_async_with_user_data", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(req, "req") }?;
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let op = TransferOp::from_raw(operation)?;
        // SAFETY: forwarded contract.
        let descs = unsafe { copy_descs(op_descs, num_descs) }?;
        // SAFETY: the caller promises the local ranges stay valid until the request is done.
        let h = e.transfer_async_with(remote, op, &descs, user_data as usize, |r| unsafe { vouch(r) })?;
        out.write(to_c(h));
        Ok(())
    })
}

/// `Hixl::GetTransferStatus(args, results)`: one pass over the engine's requests in
/// submission order, storing at most `max_query_count` of them (0: none) in a new array
/// `*results` of `*count` elements, to be freed with `ascendless_transfer_results_free`; none:
/// `*results` NULL and `*count` 0. Requests still `WAITING` are left out when `skip_waiting` is nonzero.
/// A request reported `COMPLETED`, `TIMEOUT` or `FAILED` is freed (its handle is invalid from
/// then on) and not reported again; a request whose link went away is `FAILED`. Works on
/// every transport. NULL pointers: `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `results` and `count` are NULL or valid for a write of their type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_transfer_statuses(
    engine: AscendlessEngine,
    max_query_count: u32,
    skip_waiting: i32,
    results: *mut *mut AscendlessTransferResult,
    count: *mut usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_transfer_statuses", || {
        // SAFETY: forwarded from this function's contract.
        let (results, count) = unsafe { (Out::new(results, "results")?, Out::new(count, "count")?) };
        let polled =
            resolve::<Engine>(engine, "engine")?.transfer_statuses(max_query_count, skip_waiting != 0)?;
        let n = polled.len();
        let out: *mut AscendlessTransferResult = if n == 0 {
            std::ptr::null_mut()
        } else {
            let array: Box<[AscendlessTransferResult]> = polled
                .into_iter()
                .map(|p| AscendlessTransferResult {
                    req: to_c(p.handle),
                    user_data: std::ptr::without_provenance(p.user_data),
                    status: p.status,
                })
                .collect();
            Box::into_raw(array).cast()
        };
        results.write(out);
        count.write(n);
        Ok(())
    })
}

/// Frees an array from `ascendless_engine_get_transfer_statuses` (`count` as it reported);
/// NULL is ignored.
///
/// # Safety
/// `results` is NULL or an array returned by `ascendless_engine_get_transfer_statuses` with
/// `count` elements, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_transfer_results_free(
    results: *mut AscendlessTransferResult,
    count: usize,
) {
    if results.is_null() || count == 0 {
        return;
    }
    // SAFETY: by the contract, the array was made by `Box::into_raw` of `count` elements and is
    // freed once.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(results, count)) });
}
