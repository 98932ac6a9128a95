//! The table of registered host memory (`aclrtHostRegister`, `aclrtHostRegisterV2`): ranges of
//! the caller's own memory (from `malloc`, `mmap`, `aclrtMallocHost`...) that the runtime may
//! use as device-accessible memory until `aclrtHostUnregister`.
//!
//! A leaf: it knows nothing of allocations. What a registration must not overlap (device
//! memory) is checked by the registry before it calls [`HostRegistrations::insert`].
//!
//! # The device pointer
//! On this machine the "device" is the host, so a mapped registration's device address is the
//! host address itself, as the vendor's driver also hands out on machines with shared virtual
//! addressing. Host code may keep using the host pointer; the device pointer works wherever the
//! runtime takes device memory (the device end of `aclrtMemcpy`), and nowhere is it a second
//! mapping that could go stale.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::rt_codes::{
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
};
use crate::error::{AclError, AclResult};
use crate::sync;

/// What a registration was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostFlags {
    /// Mapped for the device (`ACL_HOST_REGISTER_MAPPED`, `ACL_HOST_REG_MAPPED`): it has a
    /// device pointer and may be a copy's device end.
    pub mapped: bool,
    /// Page-locked (`ACL_HOST_REG_PINNED`).
    pub pinned: bool,
}

/// One registered range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub start: usize,
    pub len: usize,
    pub flags: HostFlags,
    /// The current device when it was registered; a reset of that device ends it.
    pub device: i32,
}

impl Registration {
    pub fn end(&self) -> usize {
        self.start + self.len
    }

    /// Whether `[addr, addr + len)` lies wholly inside the range.
    pub fn holds(&self, addr: usize, len: usize) -> bool {
        addr >= self.start && addr.checked_add(len).is_some_and(|end| end <= self.end())
    }

    /// The device address of the host address `addr` inside a mapped registration: the same
    /// address (see the module documentation).
    pub fn device_pointer(&self, addr: usize) -> Option<usize> {
        (self.flags.mapped && addr >= self.start && addr < self.end()).then_some(addr)
    }
}

/// The registered ranges, by start; they never overlap.
#[derive(Debug, Default)]
pub struct HostRegistrations {
    live: Mutex<BTreeMap<usize, Registration>>,
}

impl HostRegistrations {
    pub const fn new() -> Self {
        HostRegistrations { live: Mutex::new(BTreeMap::new()) }
    }

    /// Records `r`; a range sharing a byte with a registered one is
    /// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`, as the vendor's runtime reports it.
    pub fn insert(&self, r: Registration) -> AclResult<()> {
        let mut live = sync::lock(&self.live);
        if let Some(old) = overlapping(&live, r.start, r.len) {
            return Err(AclError::new(
                ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                format!(
                    "{:#x} + {} bytes overlaps the host memory registered at {:#x} ({} bytes); \
                     unregister that range first (aclrtHostUnregister) or register a disjoint one",
                    r.start, r.len, old.start, old.len
                ),
            ));
        }
        live.insert(r.start, r);
        Ok(())
    }

    /// Ends the registration starting at `addr` (`aclrtHostUnregister` takes the address that
    /// was registered, not one inside it).
    pub fn remove(&self, addr: usize) -> AclResult<Registration> {
        let mut live = sync::lock(&self.live);
        if let Some(r) = live.remove(&addr) {
            return Ok(r);
        }
        let why = match containing(&live, addr) {
            Some(r) => format!(
                "{addr:#x} points {} bytes into the host memory registered at {:#x}; pass the address \
                 that was registered",
                addr - r.start,
                r.start
            ),
            None => format!("{addr:#x} is not the start of host memory registered with aclrtHostRegister"),
        };
        Err(AclError::new(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, why))
    }

    /// The registration containing `addr`, if any.
    pub fn find(&self, addr: usize) -> Option<Registration> {
        containing(&sync::lock(&self.live), addr).copied()
    }

    /// The mapped registration holding all of `[addr, addr + len)`, if any: such memory may be
    /// the device end of a copy.
    pub fn mapped_holding(&self, addr: usize, len: usize) -> Option<Registration> {
        self.find(addr).filter(|r| r.flags.mapped && r.holds(addr, len))
    }

    /// Ends every registration made while `device` was current (a device reset); returns how
    /// many.
    pub fn release_device(&self, device: i32) -> usize {
        let mut live = sync::lock(&self.live);
        let before = live.len();
        live.retain(|_, r| r.device != device);
        before - live.len()
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        sync::lock(&self.live).len()
    }
}

fn containing(live: &BTreeMap<usize, Registration>, addr: usize) -> Option<&Registration> {
    live.range(..=addr).next_back().map(|(_, r)| r).filter(|r| addr < r.end())
}

fn overlapping(live: &BTreeMap<usize, Registration>, addr: usize, len: usize) -> Option<&Registration> {
    let end = addr.saturating_add(len);
    // Ranges are disjoint: only the last one starting before `end` can reach past `addr`.
    live.range(..end).next_back().map(|(_, r)| r).filter(|r| r.end() > addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPPED: HostFlags = HostFlags { mapped: true, pinned: false };
    const PINNED: HostFlags = HostFlags { mapped: false, pinned: true };

    fn reg(start: usize, len: usize, flags: HostFlags, device: i32) -> Registration {
        Registration { start, len, flags, device }
    }

    #[test]
    fn overlapping_ranges_are_already_registered_and_neighbours_are_not() {
        let t = HostRegistrations::new();
        t.insert(reg(0x10000, 0x2000, MAPPED, 0)).unwrap();
        for (start, len) in
            [(0x10000, 0x2000), (0xF000, 0x1001), (0x11FFF, 1), (0x11000, 0x10), (0x8000, 0x10000)]
        {
            let e = t.insert(reg(start, len, MAPPED, 0)).unwrap_err();
            assert_eq!(e.code, ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "{start:#x}+{len:#x}");
        }
        t.insert(reg(0xF000, 0x1000, PINNED, 0)).unwrap();
        t.insert(reg(0x12000, 0x1000, MAPPED, 0)).unwrap();
        assert_eq!(t.count(), 3);
    }

    #[test]
    fn unregister_takes_the_registered_start_only() {
        let t = HostRegistrations::new();
        t.insert(reg(0x20000, 0x3000, MAPPED, 1)).unwrap();
        let e = t.remove(0x21000).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        assert!(e.message.contains("4096 bytes into"), "{}", e.message);
        assert_eq!(t.remove(0x90000).unwrap_err().code, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        assert_eq!(t.remove(0x20000).unwrap().len, 0x3000);
        assert_eq!(t.remove(0x20000).unwrap_err().code, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "twice");
        assert_eq!(t.find(0x20000), None);
    }

    #[test]
    fn lookups_answer_for_every_byte_and_only_those() {
        let t = HostRegistrations::new();
        t.insert(reg(0x40000, 0x1000, MAPPED, 0)).unwrap();
        t.insert(reg(0x50000, 0x1000, PINNED, 0)).unwrap();
        assert_eq!(t.find(0x40FFF).unwrap().start, 0x40000);
        assert_eq!(t.find(0x41000), None);
        assert_eq!(t.find(0x3FFFF), None);
        assert!(t.mapped_holding(0x40800, 0x800).is_some());
        assert!(t.mapped_holding(0x40800, 0x801).is_none(), "runs past the end");
        assert!(t.mapped_holding(0x50000, 1).is_none(), "pinned only: no device mapping");
        let r = t.find(0x40000).unwrap();
        assert_eq!(r.device_pointer(0x40010), Some(0x40010), "the device address is the host address");
        assert_eq!(r.device_pointer(0x41000), None);
        assert_eq!(t.find(0x50000).unwrap().device_pointer(0x50000), None);
    }

    #[test]
    fn a_device_reset_ends_that_devices_registrations() {
        let t = HostRegistrations::new();
        t.insert(reg(0x60000, 0x1000, MAPPED, 3)).unwrap();
        t.insert(reg(0x70000, 0x1000, MAPPED, 4)).unwrap();
        assert_eq!(t.release_device(3), 1);
        assert_eq!(t.find(0x60000), None);
        assert!(t.find(0x70000).is_some());
        assert_eq!(t.release_device(3), 0);
    }
}
