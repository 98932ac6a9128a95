//! `AdxlEngine::MallocMem` / `FreeMem`: memory for transfers, of either type, allocated so it
//! can be shared with other processes (the same memfd-backed allocations as `aclrtMalloc` and
//! `aclrtMallocHost`, so the engine can hand them to a peer on the same host).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::MemType;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::engine_status::{ADXL_FAILED, ADXL_PARAM_INVALID, ADXL_RESOURCE_EXHAUSTED};
use crate::error::rt_codes::{ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, EngineError, EngineResult};
use crate::runtime::context;
use crate::runtime::memory::{self, AllocKind, Limits};
use crate::sync::lock;

/// Policy of device allocations: huge pages first, as the vendor's allocator prefers.
const HUGE_FIRST: u32 = 0;

/// What `malloc` handed out and not yet freed: `free` takes only these.
static OWNED: Mutex<BTreeMap<usize, AllocKind>> = Mutex::new(BTreeMap::new());

fn owned() -> std::sync::MutexGuard<'static, BTreeMap<usize, AllocKind>> {
    lock(&OWNED)
}

/// The runtime's error as an ADXL status: out of memory is RESOURCE_EXHAUSTED.
fn adxl(e: AclError) -> EngineError {
    let status = match e.code {
        ACL_ERROR_RT_MEMORY_ALLOCATION => ADXL_RESOURCE_EXHAUSTED,
        ACL_ERROR_INVALID_PARAM | ACL_ERROR_RT_PARAM_INVALID => ADXL_PARAM_INVALID,
        _ => ADXL_FAILED,
    };
    EngineError::new(status, e.message)
}

/// Allocates `size` bytes: device memory on the calling thread's current device, or pinned
/// host memory; device memory counts against `limits`. Size 0: PARAM_INVALID; device memory
/// without a current device: FAILED.
pub fn malloc(mem_type: MemType, size: usize, limits: &Limits) -> EngineResult<usize> {
    if size == 0 {
        return Err(EngineError::new(ADXL_PARAM_INVALID, "size must not be 0"));
    }
    let (addr, kind) = match mem_type {
        MemType::Device => {
            let device = context::current_device().map_err(|_| {
                EngineError::new(
                    ADXL_FAILED,
                    "device memory needs a current device: call aclrtSetDevice first",
                )
            })?;
            (memory::alloc_device(device, size, HUGE_FIRST, limits).map_err(adxl)?, AllocKind::Device)
        }
        MemType::Host => (memory::alloc_host(size).map_err(adxl)?, AllocKind::Host),
    };
    owned().insert(addr, kind);
    Ok(addr)
}

/// Frees memory from [`malloc`]; anything else (NULL included) is PARAM_INVALID.
pub fn free(addr: usize) -> EngineResult<()> {
    let kind = owned().remove(&addr).ok_or_else(|| {
        EngineError::new(
            ADXL_PARAM_INVALID,
            format!("{addr:#x} was not returned by MallocMem (or was freed already)"),
        )
    })?;
    memory::free(addr, kind).map_err(adxl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::device;

    const LIMITS: Limits = Limits { capacity: 64 << 30, strict: false };

    #[test]
    fn host_memory_round_trip_and_bad_frees() {
        let a = malloc(MemType::Host, 100, &LIMITS).unwrap();
        assert_eq!(a % crate::sys::page_size(), 0);
        assert_eq!(free(a + 1).unwrap_err().status, ADXL_PARAM_INVALID);
        free(a).unwrap();
        assert_eq!(free(a).unwrap_err().status, ADXL_PARAM_INVALID, "freed twice");
        assert_eq!(free(0).unwrap_err().status, ADXL_PARAM_INVALID);
        assert_eq!(malloc(MemType::Host, 0, &LIMITS).unwrap_err().status, ADXL_PARAM_INVALID);
    }

    #[test]
    fn device_memory_needs_a_current_device() {
        std::thread::spawn(|| {
            assert_eq!(malloc(MemType::Device, 64, &LIMITS).unwrap_err().status, ADXL_FAILED);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn device_memory_counts_against_the_limits_passed_in() {
        std::thread::spawn(|| {
            let machine = crate::config::from_env(|_| None);
            device::set(3, &machine).unwrap();
            let small = Limits { capacity: 1 << 20, strict: false };
            let err = malloc(MemType::Device, 2 << 20, &small).unwrap_err();
            assert!(err.message.contains("capacity") || err.message.contains("memory"), "{}", err.message);
            let a = malloc(MemType::Device, 2 << 20, &LIMITS).unwrap();
            free(a).unwrap();
            device::reset(3, false, &machine).unwrap();
        })
        .join()
        .unwrap();
    }
}
