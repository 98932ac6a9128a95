//! Memory for transfers that the library allocates (`adxl::AdxlEngine::MallocMem` and
//! `FreeMem`) and its export to other processes (`ExportToShareableHandle`).

use std::ffi::c_void;

use crate::engine::MemType;
use crate::engine::memory::{SHAREABLE_HANDLE_LEN, export_shareable};
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::ptr::Out;
use crate::runtime::memory::Limits;

/// Allocates `size` bytes of memory for transfers (`adxl::AdxlEngine::MallocMem`):
/// `mem_type` 0 is device memory on the calling thread's current device (none: `ADXL_FAILED`),
/// 1 pinned host memory. Both are shareable with engines of other processes. Size 0, another
/// type or a NULL `ptr`: `ADXL_PARAM_INVALID`; out of memory: `ADXL_RESOURCE_EXHAUSTED`.
///
/// # Safety
/// `ptr` is NULL or valid for a write of a `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_malloc_mem(
    mem_type: i32,
    size: usize,
    ptr: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_malloc_mem", || {
        let kind = MemType::from_raw(mem_type)?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(ptr, "ptr") }?;
        let addr = crate::engine::memory::malloc(kind, size, &Limits::of(crate::config::settings()))?;
        out.write(std::ptr::with_exposed_provenance_mut::<c_void>(addr));
        Ok(())
    })
}

/// Frees memory from `ascendless_malloc_mem` (`adxl::AdxlEngine::FreeMem`); any other address,
/// NULL included, is `ADXL_PARAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_free_mem(ptr: *mut c_void) -> EngineStatus {
    adxl_call("ascendless_free_mem", || crate::engine::memory::free(ptr.addr()))
}

/// A shareable handle of memory from `ascendless_malloc_mem`: the same 128 bytes as the
/// vendor's `aclrtMemFabricHandle` (`adxl::ShareableHandle`), which another process passes to
/// `aclrtMemImportFromShareableHandleV2`.
#[repr(C)]
pub struct AscendlessShareableHandle {
    pub data: [u8; 128],
}

const _: () = assert!(SHAREABLE_HANDLE_LEN == 128, "the vendor's fabric handle holds 128 bytes");

/// Exports memory from `ascendless_malloc_mem` as a shareable handle
/// (`adxl::AdxlEngine::ExportToShareableHandle`): `addr` must be the start of an allocation
/// not yet freed, else `ADXL_PARAM_INVALID` (NULL and addresses inside an allocation too); a
/// NULL `handle` is `ADXL_PARAM_INVALID`. The first call exports the allocation, later ones
/// hand out the same handle; another process of the same user imports it with
/// `aclrtMemImportFromShareableHandleV2` (fabric type) and maps it with `aclrtMapMem`.
/// Freeing the memory withdraws the export. On a product without IPC import:
/// `ADXL_UNSUPPORTED`.
///
/// # Safety
/// `handle` is NULL or valid for a write of an `AscendlessShareableHandle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_export_to_shareable_handle(
    addr: *mut c_void,
    handle: *mut AscendlessShareableHandle,
) -> EngineStatus {
    adxl_call("ascendless_export_to_shareable_handle", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(handle, "handle") }?;
        let data = export_shareable(addr.addr(), crate::config::settings())?;
        out.write(AscendlessShareableHandle { data });
        Ok(())
    })
}
