//! Physical allocations of virtual memory management (`aclrtMallocPhysical`, or imported from
//! another process's shareable handle): a memfd, its properties, and who still holds it.
//!
//! An allocation lives as long as anything holds it: its handle (until `aclrtFreePhysical` has
//! been called once per `aclrtMallocPhysical` / import / `aclrtMemRetainAllocationHandle`) and
//! each mapping of it. So, as the vendor documents, freeing a mapped handle succeeds and the
//! memory stays usable through the mapping; it is given back to the device's capacity when the
//! last mapping goes. Freeing the handle withdraws its shareable-handle export (later imports
//! fail); processes that imported it keep their pages.

use std::sync::{Arc, Mutex};

use super::placement::Placement;
use super::registry::Registry;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ipc::{self, ImportLink, Key};
use crate::sync;
use crate::sys::memfd::MemFd;

crate::handle_kind!(pub static PHYSICALS: PhysicalMemory => Physical, AclError);

/// `aclrtMemLocationType` values.
pub const LOCATION_HOST: i32 = 0;
pub const LOCATION_DEVICE: i32 = 1;
pub const LOCATION_HOST_NUMA: i32 = 4;

/// Where memory is, or who accesses it (`aclrtMemLocation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// An `aclrtMemLocationType` value.
    pub kind: i32,
    pub id: u32,
}

/// The properties of a physical allocation (`aclrtPhysicalMemProp`), as the caller gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Props {
    /// `aclrtMemHandleType`: `ACL_MEM_HANDLE_TYPE_NONE` (0) or `..._POSIX` (2).
    pub handle_type: i32,
    /// `aclrtMemAllocationType`: only `ACL_MEM_ALLOCATION_TYPE_PINNED` (0).
    pub allocation_type: i32,
    /// `aclrtMemAttr`.
    pub attr: i32,
    pub location: Location,
}

/// What the memory's capacity charge gives back when the allocation ends.
struct Charge {
    registry: &'static Registry,
    device: i32,
    len: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.registry.uncharge(self.device, self.len);
    }
}

#[derive(Default)]
struct State {
    /// `aclrtFreePhysical` calls still owed; the handle is live while this is positive.
    refs: u32,
    /// The handle value while live.
    handle: Option<u64>,
    /// Live mappings of this allocation.
    mappings: usize,
    /// The shareable-handle export, once exported (one per allocation, as the vendor says).
    export: Option<Key>,
}

/// One physical allocation.
pub struct Physical {
    pub props: Props,
    pub placement: Placement,
    /// Bytes (a multiple of the granularity).
    pub len: usize,
    pub granularity: usize,
    /// Imported from another process (`aclrtMemImportFromShareableHandle`).
    pub imported: bool,
    fd: Arc<MemFd>,
    state: Mutex<State>,
    _charge: Option<Charge>,
    /// An import's lifeline to its exporter, released with the allocation.
    _link: Option<ImportLink>,
}

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

impl Physical {
    /// A new allocation charged against `device`'s capacity in `registry` (when on a device),
    /// not yet in the handle table.
    pub(super) fn owned(
        props: Props,
        placement: Placement,
        len: usize,
        granularity: usize,
        fd: MemFd,
        charged: Option<(&'static Registry, i32)>,
    ) -> Physical {
        let charge = charged.map(|(registry, device)| Charge { registry, device, len: len as u64 });
        Physical {
            props,
            placement,
            len,
            granularity,
            imported: false,
            fd: Arc::new(fd),
            state: Mutex::default(),
            _charge: charge,
            _link: None,
        }
    }

    /// Another process's allocation, received with its lifeline.
    pub(super) fn imported(
        props: Props,
        placement: Placement,
        len: usize,
        granularity: usize,
        fd: MemFd,
        link: ImportLink,
    ) -> Physical {
        Physical {
            props,
            placement,
            len,
            granularity,
            imported: true,
            fd: Arc::new(fd),
            state: Mutex::default(),
            _charge: None,
            _link: Some(link),
        }
    }

    /// The file holding the bytes (offset 0 is the allocation's first byte).
    pub fn file(&self) -> Arc<MemFd> {
        Arc::clone(&self.fd)
    }

    /// The device the memory is on (`None`: host memory).
    pub fn device(&self) -> Option<i32> {
        match self.placement {
            Placement::Device(d) => Some(d),
            // Physical allocations are never managed memory.
            Placement::Host | Placement::Managed(_) => None,
        }
    }

    /// Puts `this` in the handle table (its first reference) and returns the handle.
    pub(super) fn publish(this: Arc<Physical>) -> u64 {
        let mut st = sync::lock(&this.state);
        let handle = PHYSICALS.insert_arc(Arc::clone(&this));
        st.refs = 1;
        st.handle = Some(handle);
        handle
    }

    /// `aclrtMemRetainAllocationHandle`: one more reference; the handle is made again if every
    /// earlier one was freed while the memory stayed mapped.
    pub fn retain(this: &Arc<Physical>) -> u64 {
        let mut st = sync::lock(&this.state);
        st.refs += 1;
        match st.handle {
            Some(h) => h,
            None => {
                let h = PHYSICALS.insert_arc(Arc::clone(this));
                st.handle = Some(h);
                h
            }
        }
    }

    /// `aclrtFreePhysical`: drops one reference; the last one removes the handle and
    /// withdraws the shareable-handle export. The memory itself goes with the last mapping.
    pub fn free(&self) -> AclResult<()> {
        let (handle, export) = {
            let mut st = sync::lock(&self.state);
            if st.refs == 0 {
                return Err(invalid("this physical memory handle was already freed"));
            }
            st.refs -= 1;
            if st.refs > 0 {
                return Ok(());
            }
            (st.handle.take(), st.export.take())
        };
        if let Some(h) = handle {
            let _ = PHYSICALS.remove(h);
        }
        if let Some(key) = export {
            // Already revoked only if the broker forgot it, which it does not for live keys.
            let _ = ipc::revoke(&key);
        }
        Ok(())
    }

    /// Records the export of this allocation; false if it was exported already.
    pub fn set_export(&self, key: Key) -> bool {
        let mut st = sync::lock(&self.state);
        if st.export.is_some() {
            return false;
        }
        st.export = Some(key);
        true
    }

    /// The export key, if exported.
    pub fn export(&self) -> Option<Key> {
        sync::lock(&self.state).export
    }

    /// Whether the handle is live (not freed as often as it was made and retained).
    pub fn is_live(&self) -> bool {
        sync::lock(&self.state).refs > 0
    }

    pub(super) fn mapped(&self, delta: isize) {
        let mut st = sync::lock(&self.state);
        st.mappings = st.mappings.saturating_add_signed(delta);
    }

    /// Live mappings of this allocation.
    pub fn mappings(&self) -> usize {
        sync::lock(&self.state).mappings
    }
}

impl std::fmt::Debug for Physical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Physical")
            .field("placement", &self.placement)
            .field("len", &self.len)
            .field("imported", &self.imported)
            .finish()
    }
}
