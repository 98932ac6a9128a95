//! Tagged memory: RegisterMem with a tag a peer's face finds the region by, and the lookup of
//! a peer's region by tag. A face that names memory by its own ids (LLM-DataDist's cache ids
//! and tensor indexes) tags its registrations, so the peer that pulls or pushes learns the
//! addresses from the engine's own memory announcements: no second channel.

use std::ffi::{c_char, c_void};

use super::handle::{AscendlessEngine, UintptrArg};
use super::local_only::register_offered;
use crate::engine::wire::MemKind;
use crate::engine::{Engine, NO_TAG, Offer};
use crate::error::EngineError;
use crate::error::engine_status::{ADXL_PARAM_INVALID, EngineStatus};
use crate::ffi::adxl_call;
use crate::ffi::handles::resolve;
use crate::ffi::ptr::{Out, required_str};

/// `RegisterMem` with a tag: as `ascendless_engine_register_mem`, and the region is announced
/// to peers with `tag`, which `ascendless_engine_peer_region` on a connected peer finds it by.
/// `tag` 0 means none (`ADXL_PARAM_INVALID`: use `ascendless_engine_register_mem`). Tags are
/// the caller's: the engine does not check that they are unique.
///
/// # Safety
/// As `ascendless_engine_register_mem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_register_mem_tagged(
    engine: AscendlessEngine,
    addr: UintptrArg,
    len: usize,
    mem_type: i32,
    tag: u32,
    mem_handle: *mut *mut c_void,
) -> EngineStatus {
    adxl_call("ascendless_engine_register_mem_tagged", || {
        if tag == NO_TAG {
            return Err(EngineError::new(ADXL_PARAM_INVALID, "tag 0 means no tag"));
        }
        // SAFETY: forwarded from this function's contract.
        unsafe {
            register_offered(engine, addr, len, mem_type, Offer { tag, ..Offer::default() }, mem_handle)
        }
    })
}

/// The region that `remote_engine` announced with `tag`: its address, length and memory type
/// (0 `MEM_DEVICE`, 1 `MEM_HOST`). Only the engine that connected to `remote_engine` hears its
/// regions. A tag not heard of yet asks the peer once, within `timeout_in_millis`. No link:
/// `ADXL_NOT_CONNECTED`; no region with that tag (never registered, or deregistered; or `tag`
/// 0): `ADXL_PARAM_INVALID`, with a message; `timeout_in_millis` <= 0: `ADXL_PARAM_INVALID`; no
/// answer in time: `ADXL_TIMEOUT`. Out-parameters are written only on success.
///
/// # Safety
/// `remote_engine` is NULL or a NUL-terminated string; `addr`, `len` and `mem_type` are NULL or
/// valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ascendless_engine_peer_region(
    engine: AscendlessEngine,
    remote_engine: *const c_char,
    tag: u32,
    timeout_in_millis: i32,
    addr: *mut usize,
    len: *mut usize,
    mem_type: *mut i32,
) -> EngineStatus {
    adxl_call("ascendless_engine_peer_region", || {
        // SAFETY: forwarded from this function's contract.
        let (out_addr, out_len, out_type) =
            unsafe { (Out::new(addr, "addr")?, Out::new(len, "len")?, Out::new(mem_type, "mem_type")?) };
        let e = resolve::<Engine>(engine, "engine")?;
        // SAFETY: forwarded contract.
        let remote = unsafe { required_str(remote_engine, "remote_engine") }?;
        let region = e.peer_region(remote, tag, timeout_in_millis)?.ok_or_else(|| {
            EngineError::new(ADXL_PARAM_INVALID, format!("{remote} announced no memory with tag {tag}"))
        })?;
        out_addr.write(region.addr as usize);
        out_len.write(region.len as usize);
        out_type.write(if region.kind == MemKind::Device { 0 } else { 1 });
        Ok(())
    })
}
