//! IPC export and import of notifies and device memory (`aclrtNotifyGetExportKey`,
//! `aclrtNotifyImportByKey`, `aclrtIpcMem*`), on the transport of [`crate::ipc`].
//!
//! Rules (the vendor's, and our choices where it is silent; the README repeats them):
//! - Export flags: notify 0 or 2, memory 0 or 1 (else 107000); the flag that disables pid
//!   validation lets any process of the same user import, otherwise only pids given to
//!   `...SetImportPid` (checked by the kernel's word, `SO_PEERCRED`). A notify is exported at
//!   most once (507000); a range of memory may be exported under several keys.
//! - Import flags: notify up to 3, memory up to 1 (else 107000). The ENABLE_PEER_ACCESS bit
//!   enables access from the current device to the exporter's device, as
//!   `aclrtDeviceEnablePeerAccess` would; without it nothing is enabled (the caller does it).
//! - Import is not supported (207000) on products the seed marks so (Atlas 200I/500 A2) and in
//!   a virtual instance (`ASCENDLESS_VIRTUAL_INSTANCE=1`).
//! - Destroying an exported notify, or closing an exported key, withdraws the export: later
//!   imports of its key fail with 107000. Existing imports keep working on the shared pages.
//! - An exported notify moves to a memory file of its own, the only thing an importer is
//!   handed (no neighbouring notify is reachable through it).
//! - Importers come and go without effect on each other: a wait with a time-out ends with a
//!   record or its time-out, whoever dies. A wait without limit ends with 507022 while an
//!   importer has died and none is left (it would otherwise hang); a new import re-arms it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::memory;
use super::notify::cell::{self, CELL_SIZE, Cell};
use super::notify::{self, Notify};
use super::{context, device};
use crate::config::Settings;
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::ipc::{self, ExportKind, ImportLink, Importers, Key, Offer};
use crate::sync;

/// How long an import waits for the exporter's answer.
pub const IMPORT_TIMEOUT: Duration = Duration::from_secs(5);

const NOTIFY_EXPORT_NO_PID_CHECK: u64 = 0x2;
const NOTIFY_IMPORT_PEER_ACCESS: u64 = 0x2;
const MEM_EXPORT_NO_PID_CHECK: u64 = 0x1;
const MEM_IMPORT_PEER_ACCESS: u64 = 0x1;

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

/// The product rules for importing.
fn check_import_supported(what: &str, s: &Settings) -> AclResult<()> {
    if s.virtual_instance {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "importing {what} is not supported in a virtual instance (ASCENDLESS_VIRTUAL_INSTANCE=1)"
            ),
        ));
    }
    if !s.product.supports_ipc_import() {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("importing {what} is not supported on {} (Atlas 200I/500 A2)", s.soc.to_string_lossy()),
        ));
    }
    Ok(())
}

/// Enables peer access from the current device to `device` for an import that asked for it.
fn peer_access(asked: bool, device: i32, s: &Settings) -> AclResult<()> {
    let me = context::current_device()?;
    if asked && me != device && device::check_id(device, s).is_ok() {
        device::enable_peer_from(me, device, s)?;
    }
    Ok(())
}

// ---- notifies ----

/// `aclrtNotifyGetExportKey`: exports `n` (once) and returns its key.
pub fn export_notify(n: &Arc<Notify>, flags: u64) -> AclResult<Key> {
    if flags & !NOTIFY_EXPORT_NO_PID_CHECK != 0 {
        return Err(invalid(format!(
            "export flags {flags:#x}: use ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT (0) or ..._DISABLE_PID_VALIDATION (2)"
        )));
    }
    if n.imported {
        return Err(invalid("this notify was imported from another process; only its creator may export it"));
    }
    let mut export = sync::lock(&n.export);
    if export.is_some() {
        return Err(AclError::new(ACL_ERROR_RT_INTERNAL_ERROR, "this notify has been exported already"));
    }
    // The export hands over a file holding this notify's cell and nothing else.
    let own = cell::alone().map_err(|e| {
        AclError::new(
            ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("cannot allocate the exported notify's memory: {e}"),
        )
    })?;
    let importers = Arc::new(Importers::default());
    let key = ipc::export(Offer {
        kind: ExportKind::Notify,
        fd: Arc::clone(own.page_fd()),
        offset: own.offset() as u64,
        len: CELL_SIZE as u64,
        device: n.device,
        notify_id: n.id,
        validate_pid: flags & NOTIFY_EXPORT_NO_PID_CHECK == 0,
        importers: Arc::clone(&importers),
    })?;
    // Under the export lock, so a notify is moved at most once.
    let moved = n.move_to_own_cell(own, importers);
    debug_assert!(moved, "a notify is exported once");
    *export = Some(key);
    Ok(key)
}

/// `aclrtNotifySetImportPid`: whitelists `pids` for the notify's export.
pub fn allow_notify_pids(n: &Notify, pids: &[i32]) -> AclResult<()> {
    let export = sync::lock(&n.export);
    let key = export
        .as_ref()
        .ok_or_else(|| invalid("export the notify (aclrtNotifyGetExportKey) before whitelisting pids"))?;
    ipc::allow_pids(key, pids)
}

/// `aclrtNotifySetImportPidInterServer`: only on super-node products; the server id is not
/// checked (one server here), the pids are whitelisted.
pub fn allow_notify_pids_inter_server(n: &Notify, pids: &[i32], s: &Settings) -> AclResult<()> {
    if !s.product.is_super_node() {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "whitelisting processes of other servers needs a super-node product (Atlas A3, Ascend 950)",
        ));
    }
    allow_notify_pids(n, pids)
}

/// `aclrtNotifyImportByKey`: returns the handle of the imported notify.
pub fn import_notify(key: &str, flags: u64, s: &Settings) -> AclResult<u64> {
    if flags > 3 {
        return Err(invalid(format!("import flags {flags:#x}: values up to 3 are allowed")));
    }
    check_import_supported("notifies", s)?;
    context::current_device()?;
    let got = ipc::import(key, IMPORT_TIMEOUT)?;
    if got.kind != ExportKind::Notify {
        return Err(invalid("this key names IPC memory, not a notify: use aclrtIpcMemImportByKey"));
    }
    peer_access(flags & NOTIFY_IMPORT_PEER_ACCESS != 0, got.device, s)?;
    let cell = Cell::import(got.fd, got.offset as usize)
        .map_err(|e| AclError::new(ACL_ERROR_RT_IPC_ERROR, format!("cannot map the imported notify: {e}")))?;
    Ok(notify::adopt_import(cell, got.device, got.notify_id, got.link))
}

// ---- memory ----

struct MemExport {
    key: Key,
}

struct MemImport {
    addr: usize,
    _link: ImportLink,
}

#[derive(Default)]
struct Shared {
    exports: BTreeMap<String, MemExport>,
    imports: BTreeMap<String, MemImport>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

fn with_shared<R>(f: impl FnOnce(&mut Shared) -> R) -> R {
    let mut g = sync::lock(&SHARED);
    f(g.get_or_insert_with(Shared::default))
}

/// `aclrtIpcMemGetExportKey`: exports `[addr, addr + size)` of device memory (page-aligned
/// start, inside one allocation of this process; the size is rounded up to whole pages).
pub fn export_memory(addr: usize, size: usize, flags: u64) -> AclResult<Key> {
    if flags & !MEM_EXPORT_NO_PID_CHECK != 0 {
        return Err(invalid(format!(
            "export flags {flags:#x}: use ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT (0) or ..._DISABLE_PID_VALIDATION (1)"
        )));
    }
    let page = crate::sys::page_size();
    if size == 0 || addr % page != 0 {
        return Err(invalid(format!(
            "cannot export {size} bytes at {addr:#x}: the range must start on a page and not be empty"
        )));
    }
    let b = memory::backing(addr)
        .ok_or_else(|| invalid(format!("{addr:#x} is not device memory of this process")))?;
    let device = match b.placement {
        memory::Placement::Device(d) if !b.imported => d,
        memory::Placement::Device(_) => {
            return Err(invalid("memory imported from another process cannot be exported again"));
        }
        memory::Placement::Host | memory::Placement::Managed(_) => {
            return Err(invalid("only device memory (aclrtMalloc) can be exported"));
        }
    };
    let offset = addr - b.start;
    let len = size.checked_next_multiple_of(page).filter(|&l| offset + l <= b.len).ok_or_else(|| {
        invalid(format!("{size} bytes at {addr:#x} run past the end of the allocation ({} bytes)", b.len))
    })?;
    let key = ipc::export(Offer {
        kind: ExportKind::Memory,
        fd: b.fd,
        offset: offset as u64,
        len: len as u64,
        device,
        notify_id: 0,
        validate_pid: flags & MEM_EXPORT_NO_PID_CHECK == 0,
        importers: Arc::default(),
    })?;
    with_shared(|s| s.exports.insert(key.to_string(), MemExport { key }));
    Ok(key)
}

/// `aclrtIpcMemSetImportPid`.
pub fn allow_memory_pids(key: &str, pids: &[i32]) -> AclResult<()> {
    let k = with_shared(|s| s.exports.get(key).map(|e| e.key))
        .ok_or_else(|| invalid("this process has not exported that key (or has closed it)"))?;
    ipc::allow_pids(&k, pids)
}

/// `aclrtIpcMemImportByKey`: maps the exported range into this process as device memory.
pub fn import_memory(key: &str, flags: u64, settings: &Settings) -> AclResult<usize> {
    if flags > MEM_IMPORT_PEER_ACCESS {
        return Err(invalid(format!(
            "import flags {flags:#x}: use 0 or ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS (1)"
        )));
    }
    check_import_supported("IPC memory", settings)?;
    context::current_device()?;
    if with_shared(|s| s.imports.contains_key(key)) {
        return Err(invalid("this key is already imported in this process; close it first"));
    }
    let got = ipc::import(key, IMPORT_TIMEOUT)?;
    if got.kind != ExportKind::Memory {
        return Err(invalid("this key names a notify, not IPC memory: use aclrtNotifyImportByKey"));
    }
    peer_access(flags & MEM_IMPORT_PEER_ACCESS != 0, got.device, settings)?;
    let len = usize::try_from(got.len).map_err(|_| invalid("imported length too large"))?;
    let addr = memory::register_import(got.device, got.fd, got.offset, len, settings.strict_device_memory)?;
    with_shared(|s| s.imports.insert(key.to_owned(), MemImport { addr, _link: got.link }));
    Ok(addr)
}

/// `aclrtIpcMemClose`: an importer unmaps the memory it imported with `key`; the exporter
/// withdraws the export.
pub fn close_memory(key: &str) -> AclResult<()> {
    if let Some(import) = with_shared(|s| s.imports.remove(key)) {
        return memory::close_import(import.addr);
    }
    if let Some(export) = with_shared(|s| s.exports.remove(key)) {
        return ipc::revoke(&export.key);
    }
    Err(invalid("this process neither exported nor imported that key (or closed it already)"))
}
