//! IPC export and import of notifies, events and device memory (`aclrtNotifyGetExportKey`,
//! `aclrtNotifyImportByKey`, `aclrtIpcGetEventHandle`, `aclrtIpcOpenEventHandle`,
//! `aclrtIpcMem*`), on the transport of [`crate::ipc`].
//!
//! Rules (the vendor's, and our choices where it is silent; docs/ipc.md repeats them):
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
//! - Shareable handles of physical memory (`aclrtMemExportToShareableHandle` and friends) are
//!   one more kind of export on the same broker, with the same whitelist and lifeline: see
//!   "Shareable handles" below.
//! - Importers come and go without effect on each other: a wait with a time-out ends with a
//!   record or its time-out, whoever dies. A wait without limit ends with 507022 while an
//!   importer has died and none is left (it would otherwise hang); a new import re-arms it.
//! - The device an export names crosses processes as its physical id (`device_ids`), which
//!   means the same device in every process whatever `ASCEND_RT_VISIBLE_DEVICES` each has; an
//!   importer records it under its own user id for that device, or -1 when it does not see it
//!   (the import still works; peer access to it cannot be enabled).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::event::{Event, Origin};
use super::ipc_event::{self, IpcEvent};
use super::memory;
use super::notify::cell::{self, CELL_SIZE, Cell};
use super::notify::{self, Notify};
use super::{context, device, device_ids};
use crate::config::Settings;
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::ipc::{self, ExportKind, ImportLink, Importers, Key, Offer};
use crate::sync;

/// How long an import waits for the exporter's answer.
pub const IMPORT_TIMEOUT: Duration = Duration::from_secs(5);

const NOTIFY_EXPORT_NO_PID_CHECK: u64 = 0x2;
/// `ACL_EVENT_IPC`, the flag of every IPC event.
pub const IPC_EVENT_FLAG: u32 = 0x40;
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

/// This process's user id for the device an exporter named by its physical id (-1: not
/// visible here).
fn imported_device(physical: i32, s: &Settings) -> i32 {
    device_ids::from_shared_id(physical, s).unwrap_or(-1)
}

/// Enables peer access from the current device to `device` (a user id of this process, -1
/// for none) for an import that asked for it.
fn peer_access(asked: bool, device: i32, s: &Settings) -> AclResult<()> {
    let me = context::current_device()?;
    if asked && me != device && device::check_id(device, s).is_ok() {
        device::enable_peer_from(me, device, s)?;
    }
    Ok(())
}

// ---- notifies ----

/// `aclrtNotifyGetExportKey`: exports `n` (once) and returns its key.
pub fn export_notify(n: &Arc<Notify>, flags: u64, s: &Settings) -> AclResult<Key> {
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
        device: device_ids::shared_id(n.device, s)?,
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
    let device = imported_device(got.device, s);
    peer_access(flags & NOTIFY_IMPORT_PEER_ACCESS != 0, device, s)?;
    let cell = Cell::import(got.fd, got.offset as usize)
        .map_err(|e| AclError::new(ACL_ERROR_RT_IPC_ERROR, format!("cannot map the imported notify: {e}")))?;
    Ok(notify::adopt_import(cell, device, got.notify_id, got.link))
}

// ---- IPC events ----
//
// Rules (the vendor's, and our choices where it is silent):
// - Only events made by aclrtCreateEventExWithFlag(ACL_EVENT_IPC) are exported (107000), by
//   their creator (an opened event: 107000). A second aclrtIpcGetEventHandle gives the same
//   handle again.
// - The vendor has no whitelist call for IPC events, so an export is open to any process of
//   the creator's user, as a notify exported with ..._DISABLE_PID_VALIDATION: the kernel's word
//   on the importer (SO_PEERCRED) refuses other users with 207006.
// - Destroying the creator's event withdraws the export: later opens fail with 107000; events
//   opened already keep working (they map the cell). An opener's destroy ends its import only.
// - Not supported (207000) where IPC import is not (virtual instance, Atlas 200I/500 A2).

/// A new IPC event's shared state: a cell of its own file, ready to be exported.
pub fn new_ipc_event() -> AclResult<IpcEvent> {
    let own = cell::alone().map_err(|e| {
        AclError::new(
            ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("cannot allocate the IPC event's memory: {e}"),
        )
    })?;
    Ok(IpcEvent::new(own, None))
}

/// `aclrtIpcGetEventHandle`: exports the event (once) and returns its 64-byte handle.
pub fn export_event(e: &Event, s: &Settings) -> AclResult<[u8; ipc_event::HANDLE_SIZE]> {
    let Some(ipc) = e.ipc.as_ref() else {
        return Err(invalid(
            "only an event created by aclrtCreateEventExWithFlag with ACL_EVENT_IPC can be shared",
        ));
    };
    if ipc.imported() {
        return Err(invalid(
            "this event was opened from another process's handle; only its creator exports it",
        ));
    }
    check_import_supported("IPC events", s)?;
    let mut export = sync::lock(&ipc.export);
    if let Some((key, _)) = export.as_ref() {
        return Ok(ipc_event::handle_bytes(key));
    }
    let importers = Arc::new(Importers::default());
    let key = ipc::export(Offer {
        kind: ExportKind::Event,
        fd: Arc::clone(ipc.cell.page_fd()),
        offset: ipc.cell.offset() as u64,
        len: CELL_SIZE as u64,
        device: -1,
        notify_id: e.id,
        validate_pid: false,
        importers: Arc::clone(&importers),
    })?;
    *export = Some((key, importers));
    Ok(ipc_event::handle_bytes(&key))
}

/// `aclrtIpcOpenEventHandle`: the event another process exported, as an event of this one.
pub fn open_event(handle: &[u8; ipc_event::HANDLE_SIZE], s: &Settings) -> AclResult<Event> {
    check_import_supported("IPC events", s)?;
    context::current_device()?;
    let key = ipc_event::handle_key(handle)
        .ok_or_else(|| invalid("this aclrtIpcEventHandle was not written by aclrtIpcGetEventHandle"))?;
    let got = ipc::import(&key, IMPORT_TIMEOUT)?;
    if got.kind != ExportKind::Event {
        return Err(invalid("this handle names another kind of export, not an IPC event"));
    }
    let cell = Cell::import(got.fd, got.offset as usize).map_err(|e| {
        AclError::new(ACL_ERROR_RT_IPC_ERROR, format!("cannot map the opened IPC event: {e}"))
    })?;
    Ok(Event::with(IPC_EVENT_FLAG, Origin::Ex, Some(IpcEvent::new(cell, Some(got.link)))))
}

/// `aclrtDestroyEvent` of an exported event: later opens of its handle fail.
pub fn withdraw_event(e: &Event) {
    if let Some(ipc) = &e.ipc {
        if let Some((key, _)) = sync::lock(&ipc.export).take() {
            let _ = ipc::revoke(&key);
        }
    }
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
pub fn export_memory(addr: usize, size: usize, flags: u64, s: &Settings) -> AclResult<Key> {
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
        device: device_ids::shared_id(device, s)?,
        notify_id: 0,
        validate_pid: flags & MEM_EXPORT_NO_PID_CHECK == 0,
        importers: Arc::default(),
    })?;
    with_shared(|sh| sh.exports.insert(key.to_string(), MemExport { key }));
    Ok(key)
}

/// `aclrtIpcMemSetImportPid`.
pub fn allow_memory_pids(key: &str, pids: &[i32]) -> AclResult<()> {
    let k = with_shared(|s| s.exports.get(key).map(|e| e.key))
        .ok_or_else(|| invalid("this process has not exported that key (or has closed it)"))?;
    ipc::allow_pids(&k, pids)
}

/// `aclrtIpcMemImportPidInterServer`: as [`allow_memory_pids`] for processes of other servers
/// of a super-node (207000 on other products).
pub fn allow_memory_pids_inter_server(key: &str, pids: &[i32], s: &Settings) -> AclResult<()> {
    if !s.product.is_super_node() {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "whitelisting processes of other servers needs a super-node product (Atlas A3, Ascend 950)",
        ));
    }
    allow_memory_pids(key, pids)
}

/// `aclrtIpcMemSetAttr`: the link importers reach the memory by (`ACL_RT_IPC_MEM_ATTR_ACCESS_LINK`,
/// 0 to 3). The key must be one this process exported; every link reaches the same host pages,
/// so the choice is checked and has no further effect.
pub fn set_memory_attr(key: &str, attr_type: i32, value: u64) -> AclResult<()> {
    if attr_type != 0 {
        return Err(invalid(format!(
            "type {attr_type}: the only attribute is ACL_RT_IPC_MEM_ATTR_ACCESS_LINK (0)"
        )));
    }
    if value > 3 {
        return Err(invalid(format!(
            "link {value}: use an ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_* value (0 to 3)"
        )));
    }
    with_shared(|s| s.exports.get(key).map(|_| ()))
        .ok_or_else(|| invalid("this process has not exported that key (or has closed it)"))
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
    let device = imported_device(got.device, settings);
    peer_access(flags & MEM_IMPORT_PEER_ACCESS != 0, device, settings)?;
    let len = usize::try_from(got.len).map_err(|_| invalid("imported length too large"))?;
    let addr = memory::register_import(device, got.fd, got.offset, len, settings.strict_device_memory)?;
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

// ---- shareable handles (physical memory) ----
//
// Rules (the vendor's, and our choices where it is silent):
// - Only this process's own allocations are exported (an imported one: 107000), host physical
//   memory (fabric memory) too, which stays host memory in the importer; each at most once, whichever type (107000 the second time: the vendor's one-to-one rule).
// - Export flags: ACL_RT_VMM_EXPORT_FLAG_DEFAULT (only pids given to
//   aclrtMemSetPidToShareableHandle may import, by the kernel's word) or ..._DISABLE_PID_VALIDATION
//   (any process of the same user); others 107000.
// - The 64-bit handle is a shareable id (`ipc::shareable`); the fabric handle (128 bytes) holds
//   a marker and the export's full IPC key. Both are plain data for any channel. The fabric type
//   works on every product here: all processes share one host.
// - Importing needs a valid device id (107001); importing a handle of this very process is 207000
//   (the vendor supports sharing across processes only); importing the same handle again while
//   the first import's handle is live is 107000 (one-to-one). Not supported (207000) in a virtual
//   instance and on products without IPC import, for export and import alike.
// - Freeing the exported handle withdraws the export: later imports fail with 107000. An
//   exporter that has died fails them with 507022 at once (nothing serves its socket any more).

const VMM_EXPORT_NO_PID_CHECK: u64 = 0x1;
/// The device an export of host physical memory names.
pub(super) const HOST_DEVICE: i32 = -1;
/// First bytes of a fabric handle made here, so a blob of another origin is recognised as such.
const FABRIC_MAGIC: &[u8; 8] = b"AsFab\x01\0\0";
/// Size of `aclrtMemFabricHandle`.
pub const FABRIC_HANDLE_SIZE: usize = 128;

/// A shareable handle as the caller holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shareable {
    /// `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT`: the 64-bit id.
    Id(u64),
    /// `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`: the key the 128-byte blob carries.
    Fabric(Key),
}

impl Shareable {
    /// The 128 bytes of a fabric handle for `key`.
    pub fn fabric_bytes(key: &Key) -> [u8; FABRIC_HANDLE_SIZE] {
        let mut b = [0u8; FABRIC_HANDLE_SIZE];
        b[..8].copy_from_slice(FABRIC_MAGIC);
        let text = key.to_string();
        b[8..8 + text.len()].copy_from_slice(text.as_bytes());
        b
    }

    /// Reads a fabric handle's bytes; 107000 for bytes this library did not write.
    pub fn from_fabric(b: &[u8; FABRIC_HANDLE_SIZE]) -> AclResult<Shareable> {
        if &b[..8] != FABRIC_MAGIC {
            return Err(invalid(
                "this aclrtMemFabricHandle was not written by aclrtMemExportToShareableHandleV2",
            ));
        }
        let text = &b[8..];
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let text =
            std::str::from_utf8(&text[..end]).map_err(|_| invalid("the fabric handle's key is not text"))?;
        Ok(Shareable::Fabric(Key::parse(text)?))
    }

    fn exporter(&self) -> Option<u32> {
        match self {
            Shareable::Id(id) => ipc::shareable::exporter_of(*id),
            Shareable::Fabric(key) => Some(key.pid()),
        }
    }

    fn name(&self) -> String {
        match self {
            Shareable::Id(id) => format!("id:{id:x}"),
            Shareable::Fabric(key) => key.to_string(),
        }
    }
}

#[derive(Default)]
struct Handles {
    /// Exported 64-bit ids and the keys behind them (while the allocation lives).
    exports: BTreeMap<u64, (Key, Weak<memory::Physical>)>,
    /// What this process imported, so the same handle is not imported twice at once.
    imports: BTreeMap<String, Weak<memory::Physical>>,
}

static HANDLES: Mutex<Option<Handles>> = Mutex::new(None);

fn with_handles<R>(f: impl FnOnce(&mut Handles) -> R) -> R {
    let mut g = sync::lock(&HANDLES);
    f(g.get_or_insert_with(Handles::default))
}

fn live(w: &Weak<memory::Physical>) -> bool {
    w.upgrade().is_some_and(|p| p.is_live())
}

pub(super) fn check_sharing_supported(what: &str, s: &Settings) -> AclResult<()> {
    check_import_supported(what, s)
}

/// `aclrtMemExportToShareableHandle` (`fabric` false) / `...V2`: exports `p` once.
pub fn export_physical(
    p: &Arc<memory::Physical>,
    flags: u64,
    fabric: bool,
    s: &Settings,
) -> AclResult<Shareable> {
    if flags & !VMM_EXPORT_NO_PID_CHECK != 0 {
        return Err(invalid(format!(
            "export flags {flags:#x}: use ACL_RT_VMM_EXPORT_FLAG_DEFAULT (0) or ..._DISABLE_PID_VALIDATION (1)"
        )));
    }
    check_sharing_supported("shareable handles", s)?;
    if p.imported {
        return Err(invalid(
            "this physical memory was imported from another process; only its owner exports it",
        ));
    }
    // Host physical memory (fabric memory) is exported too, described as device -1; a device
    // is named by its physical id, the one that means the same device in every process.
    let device = match p.device() {
        Some(d) => device_ids::shared_id(d, s)?,
        None => HOST_DEVICE,
    };
    if p.export().is_some() {
        return Err(invalid(
            "this physical memory handle was exported already (one shareable handle per handle)",
        ));
    }
    let key = ipc::export(Offer {
        kind: ExportKind::Physical,
        fd: p.file(),
        offset: 0,
        len: p.len as u64,
        device,
        notify_id: p.props.attr as u32,
        validate_pid: flags & VMM_EXPORT_NO_PID_CHECK == 0,
        importers: Arc::default(),
    })?;
    let shared = if fabric {
        Shareable::Fabric(key)
    } else {
        match ipc::publish(&key) {
            Ok(id) => Shareable::Id(id),
            Err(e) => {
                let _ = ipc::revoke(&key);
                return Err(e);
            }
        }
    };
    if !p.set_export(key) {
        // Another thread exported it meanwhile: this export goes.
        let _ = ipc::revoke(&key);
        return Err(invalid(
            "this physical memory handle was exported already (one shareable handle per handle)",
        ));
    }
    if let Shareable::Id(id) = shared {
        with_handles(|h| {
            h.exports.retain(|_, (_, w)| live(w));
            h.exports.insert(id, (key, Arc::downgrade(p)));
        });
    }
    Ok(shared)
}

/// `aclrtMemSetPidToShareableHandle` / `...V2`: whitelists `pids` for an export of this process.
pub fn allow_shareable_pids(handle: Shareable, pids: &[i32]) -> AclResult<()> {
    let key = match handle {
        Shareable::Id(id) => with_handles(|h| h.exports.get(&id).map(|(k, _)| *k)).ok_or_else(|| {
            invalid(format!(
                "{id:#x} is not a shareable handle this process exported (or its memory was freed)"
            ))
        })?,
        Shareable::Fabric(key) => key,
    };
    ipc::allow_pids(&key, pids)
}

/// `aclrtMemImportFromShareableHandle` / `...V2`: the allocation another process exported, as a
/// physical memory handle of this process on `device`.
/// `device` `None` imports it on the exporter's device.
pub fn import_physical(handle: Shareable, device: Option<i32>, s: &Settings) -> AclResult<u64> {
    check_sharing_supported("shareable handles", s)?;
    if let Some(d) = device {
        device::check_id(d, s)?;
    }
    let exporter = handle.exporter().ok_or_else(|| invalid("this value is not a shareable handle"))?;
    if exporter == std::process::id() {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "this shareable handle was exported by this process: shareable handles are imported by other \
             processes only (use the physical memory handle itself here)",
        ));
    }
    let name = handle.name();
    if with_handles(|h| h.imports.get(&name).is_some_and(live)) {
        return Err(invalid(
            "this shareable handle is imported in this process already; use its handle (or free it first)",
        ));
    }
    let got = match handle {
        Shareable::Id(id) => ipc::import_id(id, IMPORT_TIMEOUT)?,
        Shareable::Fabric(key) => ipc::import(&key.to_string(), IMPORT_TIMEOUT)?,
    };
    if got.kind != ExportKind::Physical {
        return Err(invalid("this key names a notify or IPC memory, not physical memory"));
    }
    let len = usize::try_from(got.len).map_err(|_| invalid("imported length too large"))?;
    let device = match (got.device, device) {
        (HOST_DEVICE, _) => None,
        (_, Some(d)) => Some(d),
        (theirs, None) => Some(device_ids::from_shared_id(theirs, s).ok_or_else(|| {
            AclError::new(
                ACL_ERROR_RT_INVALID_DEVICEID,
                format!(
                    "the memory is on physical device {theirs}, which ASCEND_RT_VISIBLE_DEVICES hides from                      this process: import it onto a device you see (the V2 call's deviceId)"
                ),
            )
        })?),
    };
    let (h, phys) = memory::adopt_physical(device, got.notify_id as i32, got.fd, len, got.link)?;
    with_handles(|hs| {
        hs.imports.retain(|_, w| live(w));
        hs.imports.insert(name, Arc::downgrade(&phys));
    });
    Ok(h)
}

#[cfg(test)]
mod shareable_tests {
    use super::*;
    use crate::config::from_env;
    use crate::runtime::memory::{Limits, Location, PHYSICALS, Props};

    fn settings(env: &'static [(&'static str, &'static str)]) -> Settings {
        from_env(|name| env.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    fn physical(s: &Settings) -> Arc<memory::Physical> {
        let props =
            Props { handle_type: 0, allocation_type: 0, attr: 5, location: Location { kind: 1, id: 7 } };
        let h = memory::malloc_physical(1, &props, 0, &Limits::of(s), s).unwrap();
        PHYSICALS.get(h).unwrap()
    }

    #[test]
    fn fabric_handles_round_trip_and_foreign_bytes_are_refused() {
        let key = Key::new(0x4d2, 7, 0xfeed);
        let bytes = Shareable::fabric_bytes(&key);
        assert_eq!(Shareable::from_fabric(&bytes).unwrap(), Shareable::Fabric(key));
        let mut junk = bytes;
        junk[0] = b'x';
        assert_eq!(Shareable::from_fabric(&junk).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let mut cut = bytes;
        cut[20] = 0;
        assert_eq!(Shareable::from_fabric(&cut).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn sharing_is_not_supported_in_virtual_instances_or_on_atlas_200i_500_a2() {
        for env in [&[("ASCENDLESS_VIRTUAL_INSTANCE", "1")][..], &[("ASCENDLESS_SOC", "Ascend310B1")]] {
            let s = settings(env);
            let p = physical(&s);
            assert_eq!(export_physical(&p, 0, false, &s).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            let id = ipc::shareable::make_id(1, 2).unwrap();
            assert_eq!(
                import_physical(Shareable::Id(id), Some(0), &s).unwrap_err().code,
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            p.free().unwrap();
        }
    }

    #[test]
    fn an_export_is_made_once_and_withdrawn_by_the_last_free() {
        let s = settings(&[]);
        let p = physical(&s);
        let Shareable::Id(id) = export_physical(&p, 0, false, &s).unwrap() else { panic!("an id") };
        assert_eq!(ipc::shareable::exporter_of(id), Some(std::process::id()));
        assert_eq!(export_physical(&p, 0, true, &s).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(export_physical(&p, 2, false, &s).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        allow_shareable_pids(Shareable::Id(id), &[1]).unwrap();
        assert_eq!(
            import_physical(Shareable::Id(id), Some(0), &s).unwrap_err().code,
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "not from this very process"
        );
        let key = p.export().unwrap();
        assert_eq!(ipc::importers(&key), 0);
        p.free().unwrap();
        let e = allow_shareable_pids(Shareable::Id(id), &[1]).unwrap_err();
        assert!(e.message.contains("revoked"), "{}", e.message);
    }
}
