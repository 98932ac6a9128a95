//! One allocation: a memfd, the runtime's read-write view of it and, in strict mode, the
//! user's inaccessible view.

use std::io;
use std::sync::Arc;

use super::placement::Placement;
use crate::error::rt_codes::{ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::sys::mapping::Mapping;
use crate::sys::memfd::MemFd;
use crate::sys::span::RawSpan;

/// Where an allocation came from, which decides who may release it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `aclrtMalloc` / `aclrtMallocHost`: freed with `aclrtFree` / `aclrtFreeHost`.
    Owned,
    /// Mapped from another process's export: released by the IPC layer, never by `aclrtFree`,
    /// and not counted against this process's device capacity.
    Imported,
    /// A physical allocation mapped into reserved address space (`aclrtMapMem`): released by
    /// `aclrtUnmapMem`; the physical allocation, not the mapping, counts against the capacity.
    /// `imported` when the physical allocation came from another process's shareable handle.
    Mapped { imported: bool },
}

/// One live allocation.
#[derive(Debug)]
pub struct Allocation {
    /// The address the user holds.
    pub start: usize,
    pub len: usize,
    pub placement: Placement,
    pub origin: Origin,
    /// The page size the memory was mapped with (its alignment: 2 MiB for the huge-page
    /// policies), reported by `aclrtPointerGetAttributes`.
    pub page_size: usize,
    fd: Arc<MemFd>,
    /// Where `start` lies in the file (an import may be of a part of another process's file).
    pub file_offset: u64,
    /// The read-write view every runtime copy goes through; the user's view too, unless strict.
    runtime: Arc<Mapping>,
    /// Strict mode's inaccessible user view; unmapped when the allocation is dropped.
    _user: Option<Mapping>,
}

impl Allocation {
    pub fn end(&self) -> usize {
        self.start + self.len
    }

    pub fn is_device(&self) -> bool {
        matches!(self.placement, Placement::Device(_))
    }

    /// Managed memory: host and device memory at once.
    pub fn is_managed(&self) -> bool {
        matches!(self.placement, Placement::Managed(_))
    }

    /// Where the runtime view is mapped (the user's address too, unless strict).
    #[cfg(test)]
    pub fn runtime_addr(&self) -> usize {
        self.runtime.addr()
    }

    /// Whether `[addr, addr + len)` lies wholly inside this allocation.
    pub fn holds(&self, addr: usize, len: usize) -> bool {
        addr >= self.start && addr.checked_add(len).is_some_and(|end| end <= self.end())
    }

    /// The file holding the bytes (at [`Allocation::file_offset`] is `start`).
    pub fn file(&self) -> Arc<MemFd> {
        Arc::clone(&self.fd)
    }

    /// The runtime view of the user range `[addr, addr + len)`; it keeps the memory mapped for
    /// as long as it exists. `None` if the range is not inside the allocation.
    pub fn runtime_span(&self, addr: usize, len: usize) -> Option<RawSpan> {
        if !self.holds(addr, len) {
            return None;
        }
        RawSpan::of_mapping(&self.runtime, addr - self.start, len)
    }
}

/// A new zero-filled allocation: a memfd and its views.
pub fn map_new(placement: Placement, len: usize, align: usize, strict: bool) -> AclResult<Allocation> {
    let name = match placement {
        Placement::Device(d) => format!("ascendless-device{d}"),
        Placement::Host => "ascendless-host".to_owned(),
        Placement::Managed(d) => format!("ascendless-managed{d}"),
    };
    let fd = MemFd::create(&name, len).map_err(|e| os_failure(len, e))?;
    map_file(placement, Origin::Owned, Arc::new(fd), 0, len, align, strict)
}

pub fn map_file(
    placement: Placement,
    origin: Origin,
    fd: Arc<MemFd>,
    offset: u64,
    len: usize,
    align: usize,
    strict: bool,
) -> AclResult<Allocation> {
    let runtime = Arc::new(Mapping::shared_rw_at(&fd, offset, len, align).map_err(|e| os_failure(len, e))?);
    let user = if strict {
        Some(Mapping::shared_no_access_at(&fd, offset, len, align).map_err(|e| os_failure(len, e))?)
    } else {
        None
    };
    let start = user.as_ref().map_or(runtime.addr(), Mapping::addr);
    Ok(Allocation {
        start,
        len,
        placement,
        origin,
        page_size: align,
        fd,
        file_offset: offset,
        runtime,
        _user: user,
    })
}

/// The registry's record of `len` bytes of `fd` (from offset 0) that a virtual-memory mapping
/// shows the user at `start`: the user's view belongs to the reservation, so the allocation
/// holds only the runtime's own read-write view of the same file.
pub fn map_view(
    placement: Placement,
    imported: bool,
    fd: Arc<MemFd>,
    len: usize,
    start: usize,
    page_size: usize,
) -> AclResult<Allocation> {
    let runtime = Arc::new(Mapping::shared_rw_at(&fd, 0, len, 0).map_err(|e| os_failure(len, e))?);
    let origin = Origin::Mapped { imported };
    Ok(Allocation { start, len, placement, origin, page_size, fd, file_offset: 0, runtime, _user: None })
}

fn os_failure(len: usize, e: io::Error) -> AclError {
    if e.kind() == io::ErrorKind::InvalidInput {
        invalid(format!("cannot map {len} bytes: {e}"))
    } else {
        AclError::new(ACL_ERROR_RT_MEMORY_ALLOCATION, format!("cannot allocate {len} bytes: {e}"))
    }
}

pub fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}
