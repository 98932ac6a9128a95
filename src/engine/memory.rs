//! `AdxlEngine::MallocMem` / `FreeMem` / `ExportToShareableHandle`: memory for transfers, of
//! either type, allocated so it can be shared with other processes (the same memfd-backed
//! allocations as `aclrtMalloc` and `aclrtMallocHost`, so the engine can hand them to a peer on
//! the same host), and its export as a shareable (fabric) handle that another process imports.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::MemType;
use crate::config::Settings;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::engine_status::{
    ADXL_FAILED, ADXL_PARAM_INVALID, ADXL_RESOURCE_EXHAUSTED, ADXL_UNSUPPORTED,
};
use crate::error::rt_codes::{
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
};
use crate::error::{AclError, EngineError, EngineResult};
use crate::ipc::Key;
use crate::runtime::allocation_export;
use crate::runtime::context;
use crate::runtime::memory::{self, AllocKind, Limits};
use crate::sync::lock;

/// Policy of device allocations: huge pages first, as the vendor's allocator prefers.
const HUGE_FIRST: u32 = 0;

/// The bytes of a shareable handle (`adxl::ShareableHandle`, the vendor's
/// `aclrtMemFabricHandle`: 128 bytes of data).
pub const SHAREABLE_HANDLE_LEN: usize = 128;
pub type ShareableHandle = [u8; SHAREABLE_HANDLE_LEN];

/// One allocation `malloc` handed out: its kind, and its shareable handle once exported (the
/// vendor exports each allocation at most once and hands the same handle out again), with the
/// export's key, withdrawn when the allocation is freed.
struct Owned {
    kind: AllocKind,
    exported: Option<(ShareableHandle, Key)>,
}

/// What `malloc` handed out and not yet freed, by start address: `free` and
/// `export_shareable` take only these.
static OWNED: Mutex<BTreeMap<usize, Owned>> = Mutex::new(BTreeMap::new());

fn owned() -> std::sync::MutexGuard<'static, BTreeMap<usize, Owned>> {
    lock(&OWNED)
}

fn not_ours(addr: usize, what: &str) -> EngineError {
    EngineError::new(
        ADXL_PARAM_INVALID,
        format!("{addr:#x} {what}: it was not returned by MallocMem (or was freed already)"),
    )
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
    owned().insert(addr, Owned { kind, exported: None });
    Ok(addr)
}

/// Frees memory from [`malloc`]; anything else (NULL included) is PARAM_INVALID.
pub fn free(addr: usize) -> EngineResult<()> {
    let entry = owned().remove(&addr).ok_or_else(|| not_ours(addr, "cannot be freed"))?;
    if let Some((_, key)) = entry.exported {
        allocation_export::withdraw(&key);
    }
    memory::free(addr, entry.kind).map_err(adxl)
}

/// `ExportToShareableHandle(addr, handle)`: the shareable (fabric) handle of the allocation
/// that [`malloc`] returned at `addr`, which another process imports with
/// `aclrtMemImportFromShareableHandleV2(..., ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, ...)` and maps
/// with `aclrtMapMem` (`runtime::allocation_export`). Made on the first call; later calls get the
/// same handle until the memory is freed, which withdraws the export (processes that imported
/// it keep their mapping). NULL, an address inside an allocation, or one not from `malloc` (or
/// freed): PARAM_INVALID, as the vendor documents. The export runs under the table's lock, so
/// two threads asking at once get one handle.
pub fn export_shareable(addr: usize, s: &Settings) -> EngineResult<ShareableHandle> {
    let mut table = owned();
    let entry = table.get_mut(&addr).ok_or_else(|| not_ours(addr, "cannot be exported"))?;
    if let Some((handle, _)) = entry.exported {
        return Ok(handle);
    }
    let (key, handle) = allocation_export::export(addr, s).map_err(|e| {
        let status = if e.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT { ADXL_UNSUPPORTED } else { ADXL_FAILED };
        EngineError::new(status, format!("ExportToShareableHandle of {addr:#x}: {}", e.message))
    })?;
    entry.exported = Some((handle, key));
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::device;
    use crate::runtime::share::Shareable;

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
    fn export_takes_only_malloc_starts_runs_once_and_ends_with_free() {
        let machine = crate::config::from_env(|_| None);
        let a = malloc(MemType::Host, 4096, &LIMITS).unwrap();
        for bad in [0, a + 1] {
            assert_eq!(export_shareable(bad, &machine).unwrap_err().status, ADXL_PARAM_INVALID);
        }
        let first = export_shareable(a, &machine).unwrap();
        assert_eq!(export_shareable(a, &machine).unwrap(), first, "the same handle again");
        let Shareable::Fabric(key) = Shareable::from_fabric(&first).unwrap() else {
            panic!("a fabric handle")
        };
        // The export is live: the IPC layer serves it (this process may import its own keys).
        let got = crate::ipc::import(&key.to_string(), std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(got.len, 4096);
        drop(got);
        free(a).unwrap();
        assert_eq!(export_shareable(a, &machine).unwrap_err().status, ADXL_PARAM_INVALID, "freed");
        let gone = crate::ipc::import(&key.to_string(), std::time::Duration::from_secs(5)).unwrap_err();
        assert_eq!(gone.code, ACL_ERROR_RT_PARAM_INVALID, "freeing withdrew the export: {}", gone.message);
        // On a product without IPC import there is nothing to export to.
        let b = malloc(MemType::Host, 4096, &LIMITS).unwrap();
        let small = crate::config::from_env(|v| (v == "ASCENDLESS_SOC").then(|| "Ascend310B1".to_owned()));
        assert_eq!(export_shareable(b, &small).unwrap_err().status, ADXL_UNSUPPORTED);
        free(b).unwrap();
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
