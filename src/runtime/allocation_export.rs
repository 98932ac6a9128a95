//! An allocation of the runtime (`aclrtMalloc`, `aclrtMallocHost`, the engine's `MallocMem`)
//! exported as physical memory behind a fabric handle: what `adxl::AdxlEngine::
//! ExportToShareableHandle` gives. Another process imports it with
//! `aclrtMemImportFromShareableHandleV2(..., ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, ...)` and maps it
//! into a reservation with `aclrtMapMem`, exactly as a physical allocation's fabric handle.
//!
//! It is the same export as `aclrtMemExportToShareableHandleV2`'s (one more offer to the IPC
//! broker, of kind physical memory), only of an allocation's memory file instead of a physical
//! allocation's. The ADXL call has no whitelist, so the export does not validate pids: any
//! process of the exporter's user that holds the handle's 128-bit key may import (the kernel's
//! credentials decide, as for exports with `..._DISABLE_PID_VALIDATION`).

use std::sync::Arc;

use super::device_ids;
use super::memory::{self, Placement};
use super::share::{FABRIC_HANDLE_SIZE, HOST_DEVICE, Shareable, check_sharing_supported};
use crate::config::Settings;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ipc::{self, ExportKind, Key, Offer};

/// `aclrtMemAttr` values the importer's physical allocation reports: `ACL_DDR_MEM` for host
/// memory, `ACL_HBM_MEM` for device memory (both in the granularity the allocation has).
const ATTR_HOST: u32 = 0;
const ATTR_DEVICE: u32 = 1;

/// Exports the whole allocation starting at `addr` and returns its key (the caller keeps it to
/// withdraw the export when the allocation is freed) and the fabric handle's bytes.
/// 107000 for an address that is not the start of a live allocation of this process.
pub fn export(addr: usize, s: &Settings) -> AclResult<(Key, [u8; FABRIC_HANDLE_SIZE])> {
    check_sharing_supported("shareable handles", s)?;
    let b = memory::backing(addr).filter(|b| b.start == addr && !b.imported).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{addr:#x} is not the start of a live allocation of this process: nothing to export"),
        )
    })?;
    let (device, attr) = match b.placement {
        Placement::Device(d) => (device_ids::shared_id(d, s)?, ATTR_DEVICE),
        // Managed memory is host-accessible memory: the importer sees host memory.
        Placement::Host | Placement::Managed(_) => (HOST_DEVICE, ATTR_HOST),
    };
    let key = ipc::export(Offer {
        kind: ExportKind::Physical,
        fd: b.fd,
        offset: 0,
        len: b.len as u64,
        device,
        notify_id: attr,
        validate_pid: false,
        importers: Arc::default(),
    })?;
    Ok((key, Shareable::fabric_bytes(&key)))
}

/// Withdraws an export made by [`export`] (the allocation is being freed): later imports fail
/// with 107000; processes that imported it keep their mapping of the pages.
pub fn withdraw(key: &Key) {
    let _ = ipc::revoke(key);
}
