//! `aclrtMemsetD32` and `aclrtMemsetD32Async`: `N` 32-bit words set to one value.
//!
//! # Rules (the vendor's, in its order)
//! - `N` 0: success, nothing written, nothing checked.
//! - NULL `ptr`, `ptr` not 4-byte aligned, `memSize < N * 4`: `ACL_ERROR_INVALID_PARAM`.
//! - The memory must come from `aclrtMalloc` (or its variants) or `aclrtMallocHost`: plain host
//!   memory and managed memory are `ACL_ERROR_INVALID_PARAM`, as the vendor's check of the
//!   pointer's attributes makes them.
//! - The `N * 4` bytes must lie wholly inside that allocation: 107000 otherwise.
//!
//! Device memory is filled on the stream in the asynchronous form; pinned host memory is
//! filled at once in both forms, as the vendor documents.

use std::sync::Arc;

use super::allocation::Allocation;
use super::copy::invalid;
use super::placement::Placement;
use super::registry::Registry;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{AclError, AclResult};
use crate::sys::span::RawSpan;

/// Bytes of the pattern written at once.
const CHUNK: usize = 16 * 1024;

/// A checked fill of 32-bit words, ready to run (all its memory is the runtime's own, so there
/// is nothing to vouch for).
#[derive(Debug)]
pub struct ReadyFill32 {
    target: Option<RawSpan>,
    value: u32,
    /// Whether the memory is device memory (queued on a stream by the asynchronous form).
    device: bool,
}

impl ReadyFill32 {
    pub fn is_device(&self) -> bool {
        self.device
    }

    pub fn run(&self) {
        let Some(t) = &self.target else { return };
        let pattern: Vec<u8> =
            self.value.to_ne_bytes().iter().copied().cycle().take(CHUNK.min(t.len())).collect();
        let mut at = 0;
        while at < t.len() {
            let n = (t.len() - at).min(pattern.len());
            t.write_at(at, &pattern[..n]);
            at += n;
        }
    }
}

impl Registry {
    /// Checks an `aclrtMemsetD32(ptr, mem_size, value, n)`.
    pub fn plan_memset_d32(
        &self,
        ptr: usize,
        mem_size: usize,
        value: u32,
        n: usize,
    ) -> AclResult<ReadyFill32> {
        if n == 0 {
            return Ok(ReadyFill32 { target: None, value, device: false });
        }
        let bad = |m: String| AclError::new(ACL_ERROR_INVALID_PARAM, m);
        if ptr == 0 {
            return Err(bad("ptr must not be NULL".into()));
        }
        if ptr % 4 != 0 {
            return Err(bad(format!("ptr {ptr:#x} is not 4-byte aligned")));
        }
        let bytes = n.checked_mul(4).filter(|&b| b <= mem_size).ok_or_else(|| {
            bad(format!("N {n} words (4 bytes each) do not fit in memSize {mem_size} bytes"))
        })?;
        let found: Option<Arc<Allocation>> = self.find(ptr);
        let Some(a) = found.filter(|a| matches!(a.placement, Placement::Device(_) | Placement::Host)) else {
            return Err(bad(format!(
                "ptr {ptr:#x} is not memory from aclrtMalloc or aclrtMallocHost, the only memory \
                 aclrtMemsetD32 fills (use aclrtMemset or a plain loop for other memory)"
            )));
        };
        let span = a.runtime_span(ptr, bytes).ok_or_else(|| {
            invalid(format!(
                "{n} words at {ptr:#x} run past the end of the allocation ({:#x}, {} bytes)",
                a.start, a.len
            ))
        })?;
        Ok(ReadyFill32 { target: Some(span), value, device: a.is_device() })
    }
}
