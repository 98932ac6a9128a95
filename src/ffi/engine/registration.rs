//! Memory an engine offers its peers (RegisterMem, DeregisterMem), and the counters of how
//! its transfers moved their bytes (declared between the two, where the header has always had
//! them).

use std::ffi::c_void;

use super::handle::{AscendlessEngine, UintptrArg, vouch};
use crate::engine::Engine;
use crate::engine::MemType;
use crate::error::engine_status::EngineStatus;
use crate::ffi::adxl_call;
use crate::ffi::handles::{raw, resolve, to_c};
use crate::ffi::ptr::Out;

/// How an engine's TransferSync calls moved their bytes (`ascendless_engine_get_counters`):
/// calls and bytes per path since the engine was initialised. `direct`: copied by the caller's
/// thread through a mapping of the peer's shared memory (same host); `kernel_copy`: copied by
/// the kernel between the two processes (`process_vm_readv`/`process_vm_writev`; same host,
/// memory that cannot be shared); `tcp`: sent over the engines' TCP connections; `ucx`: moved
/// as UCX one-sided puts and gets (libraries built with the `ucx` feature; zero otherwise).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct AscendlessEngineCounters {
    pub direct_calls: u64,
    pub direct_bytes: u64,
    pub kernel_copy_calls: u64,
    pub kernel_copy_bytes: u64,
    pub tcp_calls: u64,
    pub tcp_bytes: u64,
    pub ucx_calls: u64,
    pub ucx_bytes: u64,
}

/// `AdxlEngine::RegisterMem`: makes `[addr, addr + len)` available to peers and stores the
/// registration's handle in `*mem_handle`. `mem_type` 0 is `MEM_DEVICE`, 1 `MEM_HOST`. Device
/// memory from `aclrtMalloc` is reached through the runtime (so it works with strict device
/// memory). `addr` 0, `len` 0, a range that wraps, a range running past its device
/// allocation, another `mem_type` or a bad `mem_handle` is `ADXL_PARAM_INVALID`. Memory
/// registered after Connect is announced to connected peers and usable at once.
///
/// # Safety
/// `mem_handle` is NULL or valid for a write of a `void *`. Host memory must stay valid (and
/// writable) until it is deregistered or the engine finalized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_register_mem(
    engine: AscendlessEngine,
    addr: UintptrArg,
    len: usize,
    mem_type: i32,
    mem_handle: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_register_mem", || {
        let e = resolve::<Engine>(engine, "engine")?;
        let kind = MemType::from_raw(mem_type)?;
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(mem_handle, "mem_handle") }?;
        // SAFETY: the caller promises the memory stays valid while registered.
        let h = e.register_mem(addr, len, kind, |r| unsafe { vouch(r) })?;
        out.write(to_c(h));
        Ok(())
    })
}

/// Our extension: stores in `*out` how the engine's TransferSync calls moved their bytes
/// (see `AscendlessEngineCounters`); all zeros before Initialize or after Finalize. A bad
/// engine handle or a NULL `out` is `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `out` is NULL or valid for a write of an `AscendlessEngineCounters`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_counters(
    engine: AscendlessEngine,
    out: *mut AscendlessEngineCounters,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_counters", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(out, "out") }?;
        let c = resolve::<Engine>(engine, "engine")?.counters();
        let value = AscendlessEngineCounters {
            direct_calls: c.direct_calls,
            direct_bytes: c.direct_bytes,
            kernel_copy_calls: c.kernel_calls,
            kernel_copy_bytes: c.kernel_bytes,
            tcp_calls: c.tcp_calls,
            tcp_bytes: c.tcp_bytes,
            ucx_calls: c.ucx_calls,
            ucx_bytes: c.ucx_bytes,
        };
        out.write(value);
        Ok(())
    })
}

/// `AdxlEngine::DeregisterMem`: a NULL handle is `ADXL_PARAM_INVALID`; a handle this engine
/// does not know is `ADXL_SUCCESS` (logged as a warning), as the vendor does.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_engine_deregister_mem(
    engine: AscendlessEngine,
    mem_handle: *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_deregister_mem", || {
        resolve::<Engine>(engine, "engine")?.deregister_mem(raw(mem_handle))
    })
}
