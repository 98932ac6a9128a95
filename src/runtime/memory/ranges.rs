//! What an address is: one query over every kind of range the runtime keeps
//! ([`Registry::attributes_of`]), and the answers built on it (`aclrtPointerGetAttributes`,
//! `aclrtCheckMemType`).
//!
//! A new kind of range (virtual memory mapped with `aclrtMapMem`, managed memory) is one more
//! [`RangeKind`] variant, found by one more lookup in `attributes_of`, and one more arm in each
//! `match` below; the compiler lists the arms that are missing.

use super::allocation::{Origin, invalid};
use super::host_register::HostFlags;
use super::placement::Placement;
use super::registry::Registry;
use crate::error::AclResult;
use crate::sys::page_size;

/// `ACL_RT_MEM_TYPE_*` bits of `aclrtCheckMemType`, as `acl/acl_rt.h` defines them.
pub const MEM_TYPE_DEV: u32 = 0x2;
pub const MEM_TYPE_DVPP: u32 = 0x8;
pub const MEM_TYPE_RSVD: u32 = 0x10;
const MEM_TYPE_ALL: u32 = MEM_TYPE_DEV | MEM_TYPE_DVPP | MEM_TYPE_RSVD;

/// What kind of memory a range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// Device memory of `device`: from `aclrtMalloc`, or another process's memory imported
    /// with `aclrtIpcMemImportByKey` or a shareable handle (`imported`); `reserved` when it is
    /// a physical allocation mapped into a reservation (`aclrtMapMem`).
    Device { device: i32, imported: bool, reserved: bool },
    /// Pinned host memory from `aclrtMallocHost`.
    PinnedHost,
    /// Managed memory of `aclrtMemAllocManaged`, made while this device was current.
    Managed(i32),
    /// The caller's host memory registered with `aclrtHostRegister` / `aclrtHostRegisterV2`.
    RegisteredHost(HostFlags),
    /// Memory the runtime knows nothing of (`malloc`, the stack, freed memory, nothing at all).
    Unregistered,
}

/// The answer for one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeInfo {
    pub kind: RangeKind,
    /// Start and length of the whole range holding the address; `None` when unregistered.
    pub range: Option<(usize, usize)>,
    /// The page size the memory is mapped with.
    pub page_size: usize,
}

/// Where memory lives, as `aclrtMemLocation` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Host memory the runtime knows (`ACL_MEM_LOCATION_TYPE_HOST`; the id means nothing).
    Host,
    /// Memory of this device (`ACL_MEM_LOCATION_TYPE_DEVICE`).
    Device(i32),
    /// Managed memory, made on this device (`ACL_MEM_LOCATION_TYPE_MANAGED`).
    Managed(i32),
    /// Host memory the runtime does not know (`ACL_MEM_LOCATION_TYPE_UNREGISTERED`).
    Unregistered,
}

impl RangeKind {
    /// The location `aclrtPointerGetAttributes` reports: registered host memory is host memory
    /// the runtime knows, as the vendor's runtime reports it.
    pub fn location(self) -> Location {
        match self {
            RangeKind::Device { device, .. } => Location::Device(device),
            RangeKind::Managed(device) => Location::Managed(device),
            RangeKind::PinnedHost | RangeKind::RegisteredHost(_) => Location::Host,
            RangeKind::Unregistered => Location::Unregistered,
        }
    }

    /// Whether memory of this kind is one of the `ACL_RT_MEM_TYPE_*` bits in `mem_type`.
    /// Device memory (owned or imported) is `ACL_RT_MEM_TYPE_DEV`, and device memory mapped
    /// into a reservation is also `ACL_RT_MEM_TYPE_RSVD`; there is no DVPP memory here.
    fn is_mem_type(self, mem_type: u32) -> bool {
        match self {
            RangeKind::Device { reserved, .. } => {
                mem_type & MEM_TYPE_DEV != 0 || (reserved && mem_type & MEM_TYPE_RSVD != 0)
            }
            RangeKind::Managed(_)
            | RangeKind::PinnedHost
            | RangeKind::RegisteredHost(_)
            | RangeKind::Unregistered => false,
        }
    }
}

impl Registry {
    /// What `addr` is. Allocations are looked up first: a registration never overlaps device
    /// memory (`register_host` refuses it), and registering `aclrtMallocHost` memory leaves it
    /// pinned host memory.
    pub fn attributes_of(&self, addr: usize) -> RangeInfo {
        if let Some(a) = self.find(addr) {
            let kind = match a.placement {
                Placement::Device(device) => {
                    let (imported, reserved) = match a.origin {
                        Origin::Imported => (true, false),
                        Origin::Mapped { imported } => (imported, true),
                        Origin::Owned => (false, false),
                    };
                    RangeKind::Device { device, imported, reserved }
                }
                Placement::Host => RangeKind::PinnedHost,
                Placement::Managed(device) => RangeKind::Managed(device),
            };
            return RangeInfo { kind, range: Some((a.start, a.len)), page_size: a.page_size };
        }
        if let Some(r) = self.host.find(addr) {
            return RangeInfo {
                kind: RangeKind::RegisteredHost(r.flags),
                range: Some((r.start, r.len)),
                page_size: page_size(),
            };
        }
        RangeInfo { kind: RangeKind::Unregistered, range: None, page_size: page_size() }
    }

    /// `aclrtCheckMemType`: whether every address of `addrs` is memory of one of the types in
    /// `mem_type`. An empty list, a type bit the header does not define and a `reserve` other
    /// than 0 are 107000.
    pub fn check_mem_type(&self, addrs: &[usize], mem_type: u32, reserve: u32) -> AclResult<bool> {
        if reserve != 0 {
            return Err(invalid(format!("reserve must be 0, not {reserve}")));
        }
        if addrs.is_empty() {
            return Err(invalid("the address list is empty (size 0)".to_owned()));
        }
        if mem_type & !MEM_TYPE_ALL != 0 {
            return Err(invalid(format!(
                "memType {mem_type:#x} is not an OR of ACL_RT_MEM_TYPE_DEV (0x2), ACL_RT_MEM_TYPE_DVPP (0x8) \
                 and ACL_RT_MEM_TYPE_RSVD (0x10)"
            )));
        }
        Ok(addrs.iter().all(|&a| self.attributes_of(a).kind.is_mem_type(mem_type)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
    use crate::runtime::memory::{Limits, MemFd};
    use crate::sys::mapping::HUGE_PAGE;

    const MAPPED: HostFlags = HostFlags { mapped: true, pinned: false };
    const USER: usize = 0x7100_0000_0000;

    fn limits() -> Limits {
        Limits { capacity: 1 << 30, strict: false }
    }

    #[test]
    fn every_kind_of_range_answers_for_its_bytes() {
        let reg = Registry::new();
        let huge = reg.alloc_device(5, 100, 1, &limits()).unwrap();
        let normal = reg.alloc_device(6, 100, 2, &limits()).unwrap();
        let host = reg.alloc_host(100).unwrap();
        let fd = MemFd::create("ranges-test", 8192).unwrap();
        let imported = reg.register_import(7, fd, 0, 8192, false).unwrap();
        reg.register_host(USER, 5000, MAPPED, 0).unwrap();

        let at = |a| reg.attributes_of(a);
        assert_eq!(at(huge + 99).kind, RangeKind::Device { device: 5, imported: false, reserved: false });
        assert_eq!(at(huge).page_size, HUGE_PAGE);
        assert_eq!(at(huge).range, Some((huge, HUGE_PAGE)));
        assert_eq!(at(normal).page_size, page_size());
        assert_eq!(at(normal).kind.location(), Location::Device(6));
        assert_eq!(at(host + 50).kind, RangeKind::PinnedHost);
        assert_eq!(at(host).kind.location(), Location::Host);
        assert_eq!(
            at(imported + 8191).kind,
            RangeKind::Device { device: 7, imported: true, reserved: false }
        );
        assert_eq!(at(USER + 4999).kind, RangeKind::RegisteredHost(MAPPED));
        assert_eq!(at(USER).kind.location(), Location::Host);
        assert_eq!(at(USER + 5000).kind, RangeKind::Unregistered);
        assert_eq!(at(USER + 5000).kind.location(), Location::Unregistered);

        reg.unregister_host(USER).unwrap();
        assert_eq!(at(USER).kind, RangeKind::Unregistered, "unregistered again");
        reg.close_import(imported).unwrap();
        assert_eq!(at(imported).kind, RangeKind::Unregistered, "closed");
        reg.free(normal, crate::runtime::memory::AllocKind::Device).unwrap();
        assert_eq!(at(normal).kind, RangeKind::Unregistered, "freed");
    }

    #[test]
    fn check_mem_type_wants_every_address_to_match() {
        let reg = Registry::new();
        let dev = reg.alloc_device(8, 100, 2, &limits()).unwrap();
        let host = reg.alloc_host(100).unwrap();
        assert!(reg.check_mem_type(&[dev, dev + 99], MEM_TYPE_DEV, 0).unwrap());
        assert!(reg.check_mem_type(&[dev], MEM_TYPE_DEV | MEM_TYPE_DVPP | MEM_TYPE_RSVD, 0).unwrap());
        assert!(!reg.check_mem_type(&[dev, host], MEM_TYPE_DEV, 0).unwrap());
        assert!(!reg.check_mem_type(&[dev], MEM_TYPE_DVPP, 0).unwrap());
        assert!(!reg.check_mem_type(&[0], MEM_TYPE_DEV, 0).unwrap());
        for (addrs, t, r) in
            [(&[dev][..], MEM_TYPE_DEV, 1), (&[], MEM_TYPE_DEV, 0), (&[dev], 0x20, 0), (&[dev], 0x4, 0)]
        {
            assert_eq!(
                reg.check_mem_type(addrs, t, r).unwrap_err().code,
                ACL_ERROR_RT_PARAM_INVALID,
                "{t:#x} {r}"
            );
        }
    }
}
