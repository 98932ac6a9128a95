//! What a process exports: the description the broker keeps and the importer gets back.

use std::sync::Arc;

use super::importers::Importers;
use crate::sys::memfd::MemFd;

/// What an export is; the importer gets it back to check it imported what it expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Notify,
    Memory,
    /// A physical allocation (`aclrtMallocPhysical`) shared by a shareable handle.
    Physical,
    /// An IPC event's shared cell (`aclrtIpcGetEventHandle`): same cells as a notify, read as
    /// a record sequence and a completion sequence.
    Event,
}

#[derive(Debug)]
/// What to export: `len` bytes at `offset` of `fd`, described as `kind` on `device` (and, for a
/// notify, its id; for physical memory, its `aclrtMemAttr`, in the same field).
pub struct Offer {
    pub kind: ExportKind,
    pub fd: Arc<MemFd>,
    pub offset: u64,
    pub len: u64,
    pub device: i32,
    pub notify_id: u32,
    /// Only whitelisted pids may import ([`allow_pids`]); when false, any process of the
    /// exporter's user may (the vendor's `..._DISABLE_PID_VALIDATION` flags).
    pub validate_pid: bool,
    /// Kept up to date by the broker as imports come and go (make it with `Arc::default()`).
    pub importers: Arc<Importers>,
}
