//! `ascendless.h`: the library's own C API. The ADXL status numbers of that header come from
//! `crate::error::engine_status`, the single place they are defined.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::acl::hand_out_recent;
use super::ptr::{check_optional, required_str, write_out};
use super::{adxl_call, boundary};
use crate::engine::capability;
use crate::engine::{Engine, MemType, TransferDesc, TransferOp};
use crate::error::engine_status::{ADXL_PARAM_INVALID, EngineStatus};
use crate::error::{EngineError, EngineResult};
use crate::handle::{HandleKind, HandleTable};
use crate::sys::span::{HostRange, RawSpan};

/// Version of this library as "MAJOR.MINOR.PATCH".
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The text of this thread's most recent error from any ascendless or AscendCL call, or NULL
/// if there was none since the last read. The same store as `aclGetRecentErrMsg`: reading
/// consumes the message, and the string stays valid until this thread's next read.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_last_error() -> *const c_char {
    boundary("ascendless_last_error", std::ptr::null(), hand_out_recent)
}

/// Whether this build has an optional ADXL feature (`adxl::AdxlEngine::GetCapability`).
/// `feature_type` is an `adxl::FeatureType` value (0 `AUTO_CONNECT`, 1 `CLIENT_SERVER_COMM`);
/// `*value` receives 1 (supported) or 0 (not supported, also for values this build does not
/// know). A negative `feature_type` or a NULL `value` is `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `value` is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_get_capability(feature_type: i32, value: *mut i32) -> EngineStatus {
    adxl_call("ascendless_get_capability", || {
        let answer = capability::capability(feature_type)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { write_out(value, answer, "value") }?;
        Ok(())
    })
}

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
        if ptr.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "ptr must not be NULL"));
        }
        let addr = crate::engine::memory::malloc(kind, size)?;
        let p = std::ptr::with_exposed_provenance_mut::<c_void>(addr);
        // SAFETY: forwarded from this function's contract; non-NULL checked above.
        if let Err(e) = unsafe { write_out(ptr, p, "ptr") } {
            let _ = crate::engine::memory::free(addr);
            return Err(e.into());
        }
        Ok(())
    })
}

/// Frees memory from `ascendless_malloc_mem` (`adxl::AdxlEngine::FreeMem`); any other address,
/// NULL included, is `ADXL_PARAM_INVALID`.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_free_mem(ptr: *mut c_void) -> EngineStatus {
    adxl_call("ascendless_free_mem", || crate::engine::memory::free(ptr.addr()))
}

// ---- The ADXL engine ----

/// An address, printed as `uintptr_t` in the header (a plain `usize` would print as `size_t`).
pub type UintptrArg = usize;

/// An ADXL engine: a handle made by `ascendless_engine_create`, never a pointer.
pub type AscendlessEngine = *mut c_void;

/// One transfer descriptor; the layout of `adxl::TransferOpDesc` (24 bytes on 64-bit).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AscendlessTransferDesc {
    /// This engine's memory (destination of a READ, source of a WRITE).
    pub local_addr: UintptrArg,
    /// The remote engine's memory.
    pub remote_addr: UintptrArg,
    /// Bytes to move.
    pub len: usize,
}

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

static ENGINES: HandleTable<Engine> = HandleTable::new(HandleKind::Engine);

fn engine(h: AscendlessEngine) -> EngineResult<Arc<Engine>> {
    ENGINES.get(h.addr() as u64).map_err(|e| EngineError::new(ADXL_PARAM_INVALID, format!("engine: {e}")))
}

/// Vouches for a range of the caller's host memory (the engine reaches runtime memory, such
/// as device memory, through the runtime's view and never calls this for it).
///
/// # Safety
/// The range is valid memory (writable when `r.writable`) for as long as the engine uses it:
/// until the registration is removed (RegisterMem) or the call returns (TransferSync).
unsafe fn vouch(r: HostRange) -> RawSpan {
    // SAFETY: forwarded contract.
    unsafe { r.vouch() }
}

/// Creates an engine (not yet initialised) and stores its handle in `*engine`. A NULL or
/// misaligned `engine` is `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `engine` is NULL or valid for a write of an `AscendlessEngine`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_create(engine: *mut AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_create", || {
        check_optional(engine, "engine")?;
        if engine.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "engine must not be NULL"));
        }
        let h = ENGINES.insert(Engine::new());
        // SAFETY: forwarded from this function's contract; checked non-NULL and aligned.
        unsafe { write_out(engine, std::ptr::without_provenance_mut(h as usize), "engine") }?;
        Ok(())
    })
}

/// Finalizes the engine (if it was initialised) and frees its handle; the handle is invalid
/// afterwards (using it again is `ADXL_PARAM_INVALID`, never a crash).
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_engine_destroy(engine: AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_destroy", || {
        let e = ENGINES
            .remove(engine.addr() as u64)
            .map_err(|e| EngineError::new(ADXL_PARAM_INVALID, format!("engine: {e}")))?;
        e.finalize();
        Ok(())
    })
}

/// `AdxlEngine::Initialize`: `local_engine` is `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`
/// (with a port > 0 the engine listens there); the options are `num_options` key/value pairs
/// (`adxl.BufferPool`, `adxl.RdmaTrafficClass`, `adxl.RdmaServiceLevel`, `AutoConnect`,
/// `adxl.LocalCommRes`, or the short spellings). A bad name, option or pointer is
/// `ADXL_PARAM_INVALID`; an engine already initialised, or a port that cannot be bound,
/// `ADXL_FAILED`. An engine may be initialised again after `ascendless_engine_finalize`.
///
/// # Safety
/// `local_engine` is NULL or a NUL-terminated string; `option_keys` and `option_values` are
/// NULL (only when `num_options` is 0) or arrays of `num_options` NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_initialize(
    engine: AscendlessEngine,
    local_engine: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_initialize", || {
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let name = unsafe { required_str(local_engine, "local_engine") }?;
        let mut options = Vec::with_capacity(num_options.min(64));
        if num_options > 0 {
            if option_keys.is_null() || option_values.is_null() {
                return Err(EngineError::new(ADXL_PARAM_INVALID, "option arrays must not be NULL"));
            }
            for i in 0..num_options {
                // SAFETY: both arrays hold `num_options` pointers by the caller's contract.
                let (k, v) = unsafe { (*option_keys.add(i), *option_values.add(i)) };
                // SAFETY: each element is a NUL-terminated string by the caller's contract.
                let (k, v) = unsafe { (required_str(k, "option key")?, required_str(v, "option value")?) };
                options.push((k, v));
            }
        }
        e.initialize(name, &options)
    })
}

/// `AdxlEngine::Finalize`: stops listening and closes every connection (transfers in flight
/// fail); idempotent. After it every call but initialize and destroy is `ADXL_FAILED`.
#[unsafe(no_mangle)]
pub extern "C" fn ascendless_engine_finalize(engine: AscendlessEngine) -> EngineStatus {
    adxl_call("ascendless_engine_finalize", || {
        self::engine(engine)?.finalize();
        Ok(())
    })
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
        let e = self::engine(engine)?;
        let kind = MemType::from_raw(mem_type)?;
        if mem_handle.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "mem_handle must not be NULL"));
        }
        check_optional(mem_handle, "mem_handle")?;
        // SAFETY: the caller promises the memory stays valid while registered.
        let h = e.register_mem(addr, len, kind, |r| unsafe { vouch(r) })?;
        // SAFETY: forwarded contract; checked non-NULL and aligned.
        unsafe { write_out(mem_handle, std::ptr::without_provenance_mut(h as usize), "mem_handle") }?;
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
        check_optional(out, "out")?;
        if out.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "out must not be NULL"));
        }
        let c = self::engine(engine)?.counters();
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
        // SAFETY: forwarded from this function's contract; checked non-NULL and aligned.
        unsafe { write_out(out, value, "out") }?;
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
        self::engine(engine)?.deregister_mem(mem_handle.addr() as u64)
    })
}

/// `AdxlEngine::Connect`: connects to the engine that was initialised with exactly
/// `remote_engine` (it must listen: have a port). `timeout_in_millis` <= 0 or a bad name is
/// `ADXL_PARAM_INVALID`; already connected `ADXL_ALREADY_CONNECTED`; nobody listening
/// `ADXL_FAILED`; no answer in time `ADXL_TIMEOUT`; 512 links already `ADXL_RESOURCE_EXHAUSTED`.
/// A link whose peer died may be connected again (the peer restarted).
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_connect(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_connect", || {
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.connect(remote, timeout_in_millis)
    })
}

/// `AdxlEngine::Disconnect`: closes the link (transfers in flight on it fail). `timeout_in_millis`
/// <= 0 is `ADXL_PARAM_INVALID`; no link `ADXL_NOT_CONNECTED`. The local side is cleaned up even
/// when the peer is down.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_disconnect(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_disconnect", || {
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        e.disconnect(remote, timeout_in_millis)
    })
}

/// `AdxlEngine::TransferSync`: `operation` 0 (`READ`) copies each descriptor's remote range
/// into its local range, 1 (`WRITE`) the other way; returns when every byte has landed.
/// `timeout_in_millis` <= 0, a zero address, a NULL `op_descs` with `num_descs` > 0, or a
/// relay the seed forbids (unregistered memory with `adxl.BufferPool` 0:0; descriptors of
/// different transfer types in relay mode; an unregistered remote address that is not valid)
/// is `ADXL_PARAM_INVALID`; no link `ADXL_NOT_CONNECTED` (unless `AutoConnect`); out of time
/// `ADXL_TIMEOUT`; a peer that died `ADXL_FAILED` (at once, not at the time-out).
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `op_descs` is NULL or an array of
/// `num_descs` descriptors; every local range that is not runtime memory is valid (writable
/// for READ) until the call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_transfer_sync(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    operation: i32,
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_transfer_sync", || {
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let op = TransferOp::from_raw(operation)?;
        // SAFETY: forwarded contract.
        let descs = unsafe { copy_descs(op_descs, num_descs) }?;
        // SAFETY: the caller promises the local ranges are valid until this call returns.
        e.transfer_sync(remote, op, &descs, timeout_in_millis, |r| unsafe { vouch(r) })
    })
}

/// Copies the C descriptor array (NULL allowed only with `num_descs` 0).
///
/// # Safety
/// `op_descs` is NULL or an array of `num_descs` descriptors.
unsafe fn copy_descs(
    op_descs: *const AscendlessTransferDesc,
    num_descs: usize,
) -> EngineResult<Vec<TransferDesc>> {
    let descs: &[AscendlessTransferDesc] = if num_descs == 0 {
        &[]
    } else if op_descs.is_null() || !op_descs.is_aligned() {
        return Err(EngineError::new(ADXL_PARAM_INVALID, "op_descs must be a non-NULL, aligned array"));
    } else {
        // SAFETY: non-NULL and aligned (checked); `num_descs` elements by the contract.
        unsafe { std::slice::from_raw_parts(op_descs, num_descs) }
    };
    Ok(descs
        .iter()
        .map(|d| TransferDesc { local_addr: d.local_addr, remote_addr: d.remote_addr, len: d.len })
        .collect())
}

/// `AdxlEngine::TransferAsync`: checks and copies the descriptors (the array may be reused
/// once this returns), queues the transfer and stores a request handle in `*req` at once; the
/// engine's worker threads move the data (same host or TCP, as TransferSync). Errors found at
/// submission are those of `ascendless_engine_transfer_sync` (no link without `AutoConnect`:
/// `ADXL_NOT_CONNECTED`); a NULL `req` is `ADXL_PARAM_INVALID`; 4096 requests already held by
/// the engine (submitted and not yet reported done by `ascendless_engine_get_transfer_status`)
/// is `ADXL_RESOURCE_EXHAUSTED`. Each request has a time limit of 60 s
/// (`ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS` changes it); a dead peer fails it at once.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `op_descs` is NULL or an array of
/// `num_descs` descriptors; `req` is NULL or valid for a write of a `void *`; every local
/// range that is not runtime memory stays valid (writable for READ) until the request is
/// reported COMPLETED or FAILED.
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
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let op = TransferOp::from_raw(operation)?;
        if req.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "req must not be NULL"));
        }
        check_optional(req, "req")?;
        // SAFETY: forwarded contract.
        let descs = unsafe { copy_descs(op_descs, num_descs) }?;
        // SAFETY: the caller promises the local ranges stay valid until the request is done.
        let h = e.transfer_async(remote, op, &descs, |r| unsafe { vouch(r) })?;
        // SAFETY: forwarded contract; checked non-NULL and aligned.
        if let Err(err) = unsafe { write_out(req, std::ptr::without_provenance_mut(h as usize), "req") } {
            let _ = e.transfer_status(h);
            return Err(err.into());
        }
        Ok(())
    })
}

/// `AdxlEngine::GetTransferStatus`: stores in `*status` 0 (`WAITING`), 1 (`COMPLETED`) or 3
/// (`FAILED`). After COMPLETED or FAILED the request is freed: asking again is
/// `ADXL_PARAM_INVALID`, as is a value that is not a request of this engine. A NULL `req` is
/// `ADXL_FAILED`; a NULL `status` `ADXL_PARAM_INVALID`. A request that failed because its link
/// went away (peer died, Disconnect, Finalize) stores `FAILED` and returns
/// `ADXL_NOT_CONNECTED`; any other failure stores `FAILED` and returns `ADXL_SUCCESS` (the
/// reason is logged).
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
        let e = self::engine(engine)?;
        if status.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "status must not be NULL"));
        }
        check_optional(status, "status")?;
        let (value, result) = e.transfer_status(req.addr() as u64);
        if let Some(v) = value {
            // SAFETY: forwarded from this function's contract; checked non-NULL and aligned.
            unsafe { write_out(status, v, "status") }?;
        }
        result
    })
}

/// One notify received (`adxl::NotifyDesc`), as `ascendless_engine_get_notifies` hands it
/// out: two NUL-terminated strings owned by the array they are in.
#[repr(C)]
#[derive(Debug)]
pub struct AscendlessNotify {
    /// The notify's name.
    pub name: *mut c_char,
    /// The notify's message.
    pub notify_msg: *mut c_char,
}

/// `AdxlEngine::SendNotify`: sends `{name, notify_msg}` to `remote_engine` and returns once the
/// peer has queued it (acknowledged). Transfers to the same peer submitted with
/// `ascendless_engine_transfer_async` before this call land first (the notify waits for them
/// within the time-out). A name or message over 1024 bytes, `timeout_in_millis` <= 0, or a
/// NULL string: `ADXL_PARAM_INVALID`; no link (without `AutoConnect`): `ADXL_NOT_CONNECTED`;
/// no acknowledgement in time: `ADXL_TIMEOUT`; the peer already holds 4096 notifies from this
/// engine that its GetNotifies has not taken: `ADXL_RESOURCE_EXHAUSTED`; the connection broke:
/// `ADXL_NOTIFY_FAILED`.
///
/// # Safety
/// `remote_engine`, `name` and `notify_msg` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_send_notify(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    name: *const c_char,
    notify_msg: *const c_char,
    timeout_in_millis: i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_send_notify", || {
        let e = self::engine(engine)?;
        // SAFETY: forwarded contract.
        let (remote, name, msg) = unsafe {
            (
                required_str(remote_engine, "remote_engine")?,
                required_str(name, "name")?,
                required_str(notify_msg, "notify_msg")?,
            )
        };
        e.send_notify(remote, name, msg, timeout_in_millis)
    })
}

fn c_string(s: String) -> *mut c_char {
    let mut bytes = s.into_bytes();
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    std::ffi::CString::new(bytes).unwrap_or_default().into_raw()
}

/// `AdxlEngine::GetNotifies`: takes every notify received from any peer since the last call
/// (oldest first) and stores them in a new array `*notifies` of `*count` elements, to be
/// freed with `ascendless_notifies_free`; none: `*notifies` NULL and `*count` 0. NULL
/// pointers: `ADXL_PARAM_INVALID`.
///
/// # Safety
/// `notifies` and `count` are NULL or valid for a write of their type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_get_notifies(
    engine: AscendlessEngine,
    notifies: *mut *mut AscendlessNotify,
    count: *mut usize,
) -> EngineStatus {
    adxl_call("ascendless_engine_get_notifies", || {
        let e = self::engine(engine)?;
        if notifies.is_null() || count.is_null() {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "notifies and count must not be NULL"));
        }
        check_optional(notifies, "notifies")?;
        check_optional(count, "count")?;
        let taken = e.take_notifies()?;
        let n = taken.len();
        let out: *mut AscendlessNotify = if n == 0 {
            std::ptr::null_mut()
        } else {
            let array: Box<[AscendlessNotify]> = taken
                .into_iter()
                .map(|x| AscendlessNotify { name: c_string(x.name), notify_msg: c_string(x.msg) })
                .collect();
            Box::into_raw(array).cast()
        };
        // SAFETY: forwarded from this function's contract; checked non-NULL and aligned.
        unsafe {
            write_out(notifies, out, "notifies")?;
            write_out(count, n, "count")?;
        }
        Ok(())
    })
}

/// Frees an array from `ascendless_engine_get_notifies` (`count` as it reported); NULL is
/// ignored.
///
/// # Safety
/// `notifies` is NULL or an array returned by `ascendless_engine_get_notifies` with `count`
/// elements, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_notifies_free(notifies: *mut AscendlessNotify, count: usize) {
    if notifies.is_null() || count == 0 {
        return;
    }
    // SAFETY: by the contract, the array was made by `Box::into_raw` of `count` elements whose
    // strings came from `CString::into_raw`, and is freed once.
    unsafe {
        let array = Box::from_raw(std::ptr::slice_from_raw_parts_mut(notifies, count));
        for n in array.iter() {
            drop(std::ffi::CString::from_raw(n.name));
            drop(std::ffi::CString::from_raw(n.notify_msg));
        }
    }
}
