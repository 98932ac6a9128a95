//! Registering host memory with the runtime: the flag rules of `aclrtHostRegister` /
//! `aclrtHostRegisterV2`, and the checks that need both tables (a registration may not cover
//! device memory; pinning memory that is already pinned is refused).
//!
//! Error numbers, as the vendor's runtime gives them: a V1 `type` other than
//! `ACL_HOST_REGISTER_MAPPED` is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000, the IO-memory and
//! read-only types are reserved); a V2 `flag` that is 0 or has a bit outside the four
//! `ACL_HOST_REG_*` values is 107000, and the reserved IO-memory and read-only bits are 207000.
//! An address that is not 4 KiB-aligned, a range that wraps or touches device memory, and
//! `ACL_HOST_REG_PINNED` on `aclrtMallocHost` memory are 107000; a range overlapping a
//! registered one is `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED` (507910); unregistering
//! anything but a registered start is `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED` (507911).

use super::allocation::invalid;
use super::host_register::{HostFlags, Registration};
use super::placement::Placement;
use super::registry::Registry;
use crate::error::rt_codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use crate::error::{AclError, AclResult};

/// `aclrtHostRegisterType` values.
const REGISTER_MAPPED: u32 = 0;
const REGISTER_IOMEMORY: u32 = 0x04;
const REGISTER_READONLY: u32 = 0x08;

/// `ACL_HOST_REG_*` bits of `aclrtHostRegisterV2`.
const REG_MAPPED: u32 = 0x2;
const REG_IOMEMORY: u32 = 0x4;
const REG_READONLY: u32 = 0x8;
const REG_PINNED: u32 = 0x1000_0000;
const REG_ALL: u32 = REG_MAPPED | REG_IOMEMORY | REG_READONLY | REG_PINNED;

/// The alignment the vendor documents for a registered address.
const REGISTER_ALIGN: usize = 4096;

fn reserved(what: &str) -> AclError {
    AclError::new(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        format!(
            "{what} is reserved by AscendCL and not supported (there is no third-party PCIe IO space \
             or read-only device mapping here); register with ACL_HOST_REGISTER_MAPPED / ACL_HOST_REG_MAPPED"
        ),
    )
}

/// The flags of an `aclrtHostRegister(type)`: always mapped (it returns a device pointer).
pub fn flags_v1(register_type: u32) -> AclResult<HostFlags> {
    match register_type {
        REGISTER_MAPPED => Ok(HostFlags { mapped: true, pinned: false }),
        t if t & !(REGISTER_IOMEMORY | REGISTER_READONLY) == 0 => {
            Err(reserved(&format!("aclrtHostRegisterType {t:#x} (IO memory / read-only)")))
        }
        t => Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("type {t:#x} is not an aclrtHostRegisterType: use ACL_HOST_REGISTER_MAPPED (0)"),
        )),
    }
}

/// The flags of an `aclrtHostRegisterV2(flag)`.
pub fn flags_v2(flag: u32) -> AclResult<HostFlags> {
    if flag == 0 || flag & !REG_ALL != 0 {
        return Err(invalid(format!(
            "flag {flag:#x} is not an OR of ACL_HOST_REG_MAPPED (0x2), ACL_HOST_REG_IOMEMORY (0x4), \
             ACL_HOST_REG_READONLY (0x8) and ACL_HOST_REG_PINNED (0x10000000)"
        )));
    }
    if flag & (REG_IOMEMORY | REG_READONLY) != 0 {
        return Err(reserved(&format!("flag {flag:#x} (ACL_HOST_REG_IOMEMORY / ACL_HOST_REG_READONLY)")));
    }
    Ok(HostFlags { mapped: flag & REG_MAPPED != 0, pinned: flag & REG_PINNED != 0 })
}

/// `aclrtHacType` values whose engines exist here: the stream scheduler (STARS) and the copy
/// engines (PCIe DMA, SDMA), which are the runtime's own threads and reach registered memory.
/// No kernel (AI CPU, AI Core, Vector Core), DVPP, RDMA, UDMA or CCU engine runs on this machine.
const HAC_STARS: u32 = 0;
const HAC_PCIEDMA: u32 = 4;
const HAC_SDMA: u32 = 6;
/// One past the last `aclrtHacType` (`ACL_RT_HAC_TYPE_CCU` is 9).
const HAC_END: u32 = 10;

/// `aclrtHostMemMapCapabilities`: whether the engine `hac` can reach registered host memory.
pub fn engine_reaches_registered_memory(hac: u32) -> AclResult<bool> {
    match hac {
        HAC_STARS | HAC_PCIEDMA | HAC_SDMA => Ok(true),
        h if h < HAC_END => Ok(false),
        h => Err(invalid(format!("hacType {h} is not an aclrtHacType (0..={})", HAC_END - 1))),
    }
}

impl Registry {
    /// Registers the caller's `[addr, addr + len)` while `device` is current. The caller (the
    /// FFI layer) has refused NULL and length 0 already.
    pub fn register_host(&self, addr: usize, len: usize, flags: HostFlags, device: i32) -> AclResult<()> {
        if addr % REGISTER_ALIGN != 0 {
            return Err(invalid(format!(
                "host address {addr:#x} is not 4 KiB-aligned; register page-aligned memory \
                 (posix_memalign, mmap or aclrtMallocHost)"
            )));
        }
        if addr.checked_add(len).is_none() {
            return Err(invalid(format!("{addr:#x} + {len} bytes wraps the address space")));
        }
        if let Some(d) = self.with_live(|l| l.device_overlapping(addr, len).cloned()) {
            return Err(invalid(format!(
                "{addr:#x} + {len} bytes touches device memory (the allocation at {:#x}); only host \
                 memory can be registered",
                d.start
            )));
        }
        if flags.pinned {
            if let Some(h) = self.find(addr).filter(|a| a.placement == Placement::Host) {
                return Err(invalid(format!(
                    "{addr:#x} is pinned memory from aclrtMallocHost (at {:#x}) already; \
                     ACL_HOST_REG_PINNED is for pageable memory, register it with ACL_HOST_REG_MAPPED",
                    h.start
                )));
            }
        }
        self.host.insert(Registration { start: addr, len, flags, device })
    }

    /// `aclrtHostUnregister(addr)`.
    pub fn unregister_host(&self, addr: usize) -> AclResult<()> {
        self.host.remove(addr).map(drop)
    }

    /// `aclrtHostGetDevicePointer(addr)`: the device address of registered host memory.
    pub fn host_device_pointer(&self, addr: usize) -> AclResult<usize> {
        match self.host.find(addr) {
            Some(r) => r.device_pointer(addr).ok_or_else(|| {
                invalid(format!(
                    "{addr:#x} is registered (at {:#x}) without ACL_HOST_REG_MAPPED, so it has no device \
                     address; register it with ACL_HOST_REG_MAPPED",
                    r.start
                ))
            }),
            None => Err(invalid(format!(
                "{addr:#x} is not host memory registered for device mapping (aclrtHostRegister, or \
                 aclrtHostRegisterV2 with ACL_HOST_REG_MAPPED)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rt_codes::{
        ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
        ACL_ERROR_RT_PARAM_INVALID,
    };
    use crate::runtime::memory::{HostRange, Limits};

    const MAPPED: HostFlags = HostFlags { mapped: true, pinned: false };
    const PINNED: HostFlags = HostFlags { mapped: false, pinned: true };

    /// A page-aligned address range nobody maps (the registry never touches registered bytes).
    const USER: usize = 0x7000_0000_0000;

    #[test]
    fn v1_types() {
        assert_eq!(flags_v1(0).unwrap(), MAPPED);
        for t in [4, 8, 12] {
            assert_eq!(flags_v1(t).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reserved {t}");
        }
        for t in [1, 2, 0x10, u32::MAX] {
            assert_eq!(flags_v1(t).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "unknown {t}");
        }
    }

    #[test]
    fn only_the_copy_engines_reach_registered_memory() {
        let reached: Vec<u32> = (0..10).filter(|&h| engine_reaches_registered_memory(h).unwrap()).collect();
        assert_eq!(reached, [0, 4, 6]);
        assert_eq!(engine_reaches_registered_memory(10).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn v2_flags() {
        assert_eq!(flags_v2(REG_MAPPED).unwrap(), MAPPED);
        assert_eq!(flags_v2(REG_PINNED).unwrap(), PINNED);
        assert_eq!(flags_v2(REG_MAPPED | REG_PINNED).unwrap(), HostFlags { mapped: true, pinned: true });
        for f in [0, 1, 0x10, REG_MAPPED | 0x100, 0x8000_0000] {
            assert_eq!(flags_v2(f).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "bad {f:#x}");
        }
        for f in [REG_IOMEMORY, REG_READONLY, REG_MAPPED | REG_READONLY] {
            assert_eq!(flags_v2(f).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reserved {f:#x}");
        }
    }

    #[test]
    fn registrations_give_device_pointers_until_unregistered() {
        let reg = Registry::new();
        reg.register_host(USER, 10_000, MAPPED, 0).unwrap();
        assert_eq!(reg.host_device_pointer(USER + 9_999).unwrap(), USER + 9_999);
        assert_eq!(reg.host_device_pointer(USER + 10_000).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let e = reg.register_host(USER + 8192, 4096, MAPPED, 0).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        reg.register_host(USER + 12_288, 4096, PINNED, 0).unwrap();
        assert_eq!(
            reg.host_device_pointer(USER + 12_288).unwrap_err().code,
            ACL_ERROR_RT_PARAM_INVALID,
            "not mapped"
        );
        assert_eq!(reg.unregister_host(USER + 4096).unwrap_err().code, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
        reg.unregister_host(USER).unwrap();
        reg.unregister_host(USER + 12_288).unwrap();
        assert_eq!(reg.host_device_pointer(USER).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn unaligned_wrapping_and_device_ranges_are_refused() {
        let reg = Registry::new();
        assert_eq!(reg.register_host(USER + 8, 64, MAPPED, 0).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let top = usize::MAX - 4095;
        assert_eq!(reg.register_host(top, 8192, MAPPED, 0).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let limits = Limits { capacity: 1 << 30, strict: false };
        let dev = reg.alloc_device(0, 8192, 2, &limits).unwrap();
        let e = reg.register_host(dev, 4096, MAPPED, 0).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.message.contains("device memory"), "{}", e.message);
        assert_eq!(
            reg.register_host(dev - 4096, 8192, MAPPED, 0).unwrap_err().code,
            ACL_ERROR_RT_PARAM_INVALID
        );
    }

    #[test]
    fn mapped_registrations_are_device_ends_of_copies_until_unregistered() {
        const D2D: i32 = 3;
        const H2D: i32 = 1;
        let reg = Registry::new();
        // Plain host memory the registry does not know: the runtime view of a strict allocation.
        let keep = reg.alloc_device(98, 8192, 2, &Limits { capacity: 1 << 30, strict: true }).unwrap();
        let keep = reg.find(keep).unwrap();
        let user = keep.runtime_addr();
        let vouch = |r: HostRange| keep.runtime_span(keep.start + (r.addr - user), r.len).unwrap();
        let dev = reg.alloc_device(0, 8192, 2, &Limits { capacity: 1 << 30, strict: false }).unwrap();
        reg.plan_memset(dev, 16, 7, 16).unwrap().vouch(|r| panic!("{r:?} is device memory")).run();

        let e = reg.plan_copy(user, 16, dev, 16, D2D).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "not registered: not a device end");
        reg.register_host(user + 4096, 4096, PINNED, 0).unwrap();
        let e = reg.plan_copy(user + 4096, 16, dev, 16, D2D).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "pinned only: no device mapping");
        reg.register_host(user, 4096, MAPPED, 0).unwrap();
        reg.plan_copy(user, 16, dev, 16, D2D).unwrap().vouch(vouch).run();
        reg.plan_copy(dev + 100, 16, user, 16, D2D).unwrap().vouch(vouch).run();
        reg.plan_copy(user + 32, 16, user, 16, H2D).unwrap().vouch(vouch).run();
        let e = reg.plan_copy(user + 4090, 16, dev, 16, D2D).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "runs past the registration");
        let mut got = [0u8; 48];
        keep.runtime_span(keep.start, 48).unwrap().read_into(&mut got);
        assert_eq!(got[..16], [7; 16]);
        assert_eq!(got[32..], [7; 16]);
        let mut back = [0u8; 16];
        reg.find(dev).unwrap().runtime_span(dev + 100, 16).unwrap().read_into(&mut back);
        assert_eq!(back, [7; 16]);

        reg.unregister_host(user).unwrap();
        let e = reg.plan_copy(user, 16, dev, 16, D2D).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "unregistered again");
    }

    #[test]
    fn pinned_host_memory_may_be_mapped_but_not_pinned_again() {
        let reg = Registry::new();
        let host = reg.alloc_host(8192).unwrap();
        let e = reg.register_host(host, 8192, PINNED, 0).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.message.contains("aclrtMallocHost"), "{}", e.message);
        reg.register_host(host, 8192, MAPPED, 0).unwrap();
        assert_eq!(reg.host_device_pointer(host).unwrap(), host);
    }
}
