//! Memory for transfers that the library allocates (`adxl::AdxlEngine::MallocMem` and
//! `FreeMem`).

use std::ffi::c_void;

use crate::engine::MemType;
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
