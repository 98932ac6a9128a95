//! Where a rank of an HCCL rank table listens: LLM-DataDist's `link` by rank table (the C++
//! face) finds each rank's engine by it, with the rules of [`crate::hccl::rank_table`].

use std::ffi::c_char;

use crate::error::EngineError;
use crate::error::engine_status::{ADXL_PARAM_INVALID, EngineStatus};
use crate::ffi::adxl_call;
use crate::ffi::ptr::{BadPointer, required_str};
use crate::hccl::rank_table::RankTable;

/// The engine name ("ip:port", "[ipv6]:port") of rank `rank_id` of the HCCL rank table
/// `rank_table` (its JSON text), with its NUL, into `address` of `address_len` bytes (64 hold
/// any). The rank is at its `device_ip` and `device_port`, 16666 when the table gives none. A
/// table HCCL would refuse (not JSON, `status` not "completed", ranks not numbered 0..n-1 once
/// each, two ranks at one address, ...), a rank it does not list, or a buffer too small is
/// `ADXL_PARAM_INVALID`, the message naming the field.
///
/// # Safety
/// `rank_table` is NULL or a NUL-terminated string; `address` is NULL or valid for
/// `address_len` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_rank_table_address(
    rank_table: *const c_char,
    rank_id: u32,
    address: *mut c_char,
    address_len: usize,
) -> EngineStatus {
    adxl_call("ascendless_rank_table_address", || {
        // SAFETY: forwarded contract.
        let json = unsafe { required_str(rank_table, "rank_table") }?;
        if address.is_null() {
            return Err(BadPointer { what: "address", why: "must not be NULL" }.into());
        }
        let table =
            RankTable::parse(json).map_err(|e| EngineError::new(ADXL_PARAM_INVALID, e.to_string()))?;
        let rank = table.rank(rank_id).ok_or_else(|| {
            EngineError::new(
                ADXL_PARAM_INVALID,
                format!("rank table: no rank {rank_id} (it lists ranks 0 to {})", table.len() - 1),
            )
        })?;
        let mut bytes = rank.engine_name().into_bytes();
        bytes.push(0);
        if bytes.len() > address_len {
            return Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("address holds {address_len} bytes; rank {rank_id}'s needs {}", bytes.len()),
            ));
        }
        // SAFETY: `address` is non-NULL and valid for `address_len` >= bytes.len() writes by
        // this function's contract; the source is a local vector that cannot overlap it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), address.cast::<u8>(), bytes.len()) };
        Ok(())
    })
}
