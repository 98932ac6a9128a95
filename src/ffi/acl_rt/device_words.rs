//! Small records kept in device memory (the descriptors of `aclrtCmoSetDesc` and
//! `aclrtSetMemcpyDesc`, the base addresses of `aclrtMemcpyAsyncWithOffset`), read and written
//! through the runtime's copies, so they work in strict mode too, where host code cannot touch
//! device memory.

use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::runtime::memory::{self, RangeKind};

const HOST_TO_DEVICE: i32 = 1;
const DEVICE_TO_HOST: i32 = 2;

/// The device the range `addr..addr + len` is device memory of, or 107000 naming it `what`.
pub(crate) fn device_of(addr: usize, len: usize, what: &str) -> AclResult<i32> {
    let info = memory::attributes_of(addr);
    match (info.kind, info.range) {
        (RangeKind::Device { device, .. }, Some((start, size)))
            if addr.checked_add(len).is_some_and(|end| end <= start + size) =>
        {
            Ok(device)
        }
        _ => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{what} ({addr:#x}, {len} bytes) is not inside one live device allocation (aclrtMalloc)"),
        )),
    }
}

/// Checks that `addr..addr + len` is device memory of `device` (a stream's), or 107000 naming
/// it `what`.
pub(crate) fn on_device(addr: usize, len: usize, what: &str, device: i32) -> AclResult<()> {
    let owner = device_of(addr, len, what)?;
    if owner != device {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{what} is memory of device {owner}, the stream is of device {device}"),
        ));
    }
    Ok(())
}

/// Reads `N` 64-bit words at device address `addr`.
pub(crate) fn read<const N: usize>(addr: usize, what: &str) -> AclResult<[u64; N]> {
    device_of(addr, N * 8, what)?;
    let mut words = [0u64; N];
    let plan = memory::plan_copy(words.as_mut_ptr().addr(), N * 8, addr, N * 8, DEVICE_TO_HOST)?;
    // SAFETY: the host end is `words`, a local array of N * 8 bytes that lives until the copy,
    // run right here, is done.
    plan.vouch(|r| unsafe { r.vouch() }).run();
    Ok(words)
}

/// Writes `words` to device address `addr`.
pub(crate) fn write<const N: usize>(addr: usize, words: [u64; N], what: &str) -> AclResult<()> {
    device_of(addr, N * 8, what)?;
    let plan = memory::plan_copy(addr, N * 8, words.as_ptr().addr(), N * 8, HOST_TO_DEVICE)?;
    // SAFETY: the host end is `words`, N * 8 readable bytes alive until the copy, run right
    // here, is done.
    plan.vouch(|r| unsafe { r.vouch() }).run();
    Ok(())
}

/// Reads `len` bytes of device memory at `addr`.
pub(crate) fn read_bytes(addr: usize, len: usize, what: &str) -> AclResult<Vec<u8>> {
    device_of(addr, len, what)?;
    let mut out = vec![0u8; len];
    let plan = memory::plan_copy(out.as_mut_ptr().addr(), len, addr, len, DEVICE_TO_HOST)?;
    // SAFETY: the host end is `out`, `len` bytes alive until the copy, run right here, is done.
    plan.vouch(|r| unsafe { r.vouch() }).run();
    Ok(out)
}

/// Writes `bytes` to device memory at `addr`.
pub(crate) fn write_bytes(addr: usize, bytes: &[u8], what: &str) -> AclResult<()> {
    device_of(addr, bytes.len(), what)?;
    let plan = memory::plan_copy(addr, bytes.len(), bytes.as_ptr().addr(), bytes.len(), HOST_TO_DEVICE)?;
    // SAFETY: the host end is `bytes`, alive until the copy, run right here, is done.
    plan.vouch(|r| unsafe { r.vouch() }).run();
    Ok(())
}
