//! Virtual memory management: reserving address space, making physical allocations, mapping
//! them into the reservations, and the access rights of each mapping.
//!
//! # How it is made
//! - A physical allocation ([`Physical`]) is a memfd, counted against its device's capacity
//!   like `aclrtMalloc` memory.
//! - A reservation is inaccessible address space ([`Reservation`], `PROT_NONE`, nothing
//!   committed), aligned to 2 MiB (1 GiB from 1 GiB up), or placed where the caller asked.
//! - `aclrtMapMem` maps the memfd shared at the given address (`MAP_FIXED` inside the
//!   reservation) and records the range in the memory registry as memory of the allocation's
//!   device (or pinned host memory for host allocations), with a read-write view of its own for
//!   the runtime: `aclrtMemcpy`, `aclrtMemset`, IPC memory export, `aclrtMemGetAddressRange`
//!   and the ADXL engine's RegisterMem treat it like `aclrtMalloc` memory. `aclrtUnmapMem`
//!   puts inaccessible address space back and forgets the range.
//!
//! # Rules where the vendor is silent (all 107000 unless said otherwise)
//! - Reserve: size 0 is 100000; the size is rounded up to whole pages; `alignment` 0 or a power
//!   of two (more than 2 MiB is honoured); `flags` 0 or 1 (a page-type hint, without effect);
//!   `expectPtr` must be page aligned and free (a used address is refused, never replaced).
//!   `aclrtReserveMemAddressNoUCMemory` needs `expectPtr` (NULL: 207000, as its header says) and
//!   a size that is a positive multiple of 1 GiB.
//! - Release: only the address a reserve returned, and only once every mapping in it is
//!   unmapped (the vendor requires unmapping first; it is refused, nothing is leaked).
//! - Map: `flags` 0 and `offset` 0, as documented; `virPtr` page aligned, the whole range inside
//!   one reservation and overlapping no mapping; `size` a positive multiple of the handle's
//!   granularity and at most its size. One reservation maps allocations of one device, and
//!   either this process's own allocations or imported ones, never both (the vendor's rules).
//! - Unmap: only the address a map used.
//! - Access: see [`set_access`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::physical::{LOCATION_DEVICE, LOCATION_HOST, LOCATION_HOST_NUMA, Location, Physical, Props};
use super::placement::Placement;
use super::registry::Registry;
use crate::config::Settings;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::{
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
};
use crate::error::{AclError, AclResult};
use crate::runtime::device;
use crate::sync;
use crate::sys::mapping::HUGE_PAGE;
use crate::sys::memfd::MemFd;
use crate::sys::page_size;
use crate::sys::reservation::{Protection, Reservation};

const GIB: usize = 1 << 30;

/// `aclrtMemAccessFlags` values.
pub const ACCESS_NONE: u32 = 0x0;
pub const ACCESS_READ: u32 = 0x1;
pub const ACCESS_READWRITE: u32 = 0x3;

/// `aclrtMemGranularityOptions` values.
const GRANULARITY_MINIMUM: i32 = 0;
const GRANULARITY_RECOMMENDED: i32 = 1;

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

// ---- properties and granularity ----

/// What an `aclrtMemAttr` value allows: its granularity on a device and on the host, or `None`
/// where it makes no sense (DDR kinds are host memory, HBM kinds device memory).
///
/// The vendor lists the 1 GiB kinds as device only, but its own partners allocate host memory
/// with them (`ACL_MEM_P2P_HUGE1G` at `ACL_MEM_LOCATION_TYPE_HOST_NUMA`, Mooncake's fabric
/// memory), which its drivers accept on the products that have it: accepted here, in 1 GiB units.
fn attr_granularity(attr: i32, on_device: bool) -> Option<usize> {
    match (attr, on_device) {
        // ACL_HBM_MEM_HUGE1G, ACL_HBM_MEM_P2P_HUGE1G: device memory in 1 GiB pages.
        (10 | 11, true) => Some(GIB),
        // ACL_MEM_HUGE1G, ACL_MEM_P2P_HUGE1G: either place, 1 GiB pages.
        (14 | 17, _) => Some(GIB),
        // ACL_DDR_MEM_HUGE, ACL_DDR_MEM_P2P_HUGE / ACL_DDR_MEM, ACL_DDR_MEM_NORMAL,
        // ACL_DDR_MEM_P2P_NORMAL: host only.
        (2 | 6, false) => Some(HUGE_PAGE),
        (0 | 3 | 7, false) => Some(page_size()),
        // ACL_HBM_*: device memory; the normal kind is backed by huge pages (the vendor's rule).
        (1 | 4 | 5 | 8 | 9, true) => Some(HUGE_PAGE),
        // ACL_MEM_NORMAL, ACL_MEM_HUGE, ACL_MEM_P2P_NORMAL, ACL_MEM_P2P_HUGE: either place;
        // device memory always comes in 2 MiB pages.
        (12 | 13 | 15 | 16, true) => Some(HUGE_PAGE),
        (13 | 16, false) => Some(HUGE_PAGE),
        (12 | 15, false) => Some(page_size()),
        _ => None,
    }
}

/// Checks `props` (without the device id) and returns where the memory goes and its
/// granularity.
fn check_props(p: &Props) -> AclResult<(bool, usize)> {
    if p.handle_type != 0 && p.handle_type != 2 {
        return Err(invalid(format!(
            "handleType {} is not ACL_MEM_HANDLE_TYPE_NONE (0) or ACL_MEM_HANDLE_TYPE_POSIX (2)",
            p.handle_type
        )));
    }
    if p.allocation_type != 0 {
        return Err(invalid(format!(
            "allocationType {} is not ACL_MEM_ALLOCATION_TYPE_PINNED (0)",
            p.allocation_type
        )));
    }
    let on_device = match p.location.kind {
        LOCATION_DEVICE => true,
        // The vendor calls ACL_MEM_LOCATION_TYPE_HOST reserved, yet callers fall back to it
        // when a NUMA node is refused: host memory either way (one NUMA node here).
        LOCATION_HOST_NUMA | LOCATION_HOST => false,
        other => {
            return Err(invalid(format!(
                "location.type {other}: physical memory is on a device (ACL_MEM_LOCATION_TYPE_DEVICE, 1) \
                 or in host memory (ACL_MEM_LOCATION_TYPE_HOST_NUMA, 4, or ACL_MEM_LOCATION_TYPE_HOST, 0)"
            )));
        }
    };
    let g = attr_granularity(p.attr, on_device).ok_or_else(|| {
        invalid(format!(
            "memAttr {} is not an aclrtMemAttr for {} memory (DDR kinds are host memory, HBM kinds \
             device memory)",
            p.attr,
            if on_device { "device" } else { "host" }
        ))
    })?;
    Ok((on_device, g))
}

/// `aclrtMemGetAllocationGranularity`: the size and alignment unit of allocations with `props`
/// (the recommended one is the minimum: nothing is faster with bigger units here).
pub fn granularity(props: &Props, option: i32) -> AclResult<usize> {
    if option != GRANULARITY_MINIMUM && option != GRANULARITY_RECOMMENDED {
        return Err(invalid(format!(
            "option {option} is not ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM (0) or ..._RECOMMENDED (1)"
        )));
    }
    Ok(check_props(props)?.1)
}

/// `aclrtMallocPhysical`: a new allocation of `size` bytes rounded up to the granularity, in
/// the handle table; returns the handle.
pub fn malloc_physical(
    registry: &'static Registry,
    size: usize,
    props: &Props,
    flags: u64,
    capacity: u64,
    s: &Settings,
) -> AclResult<u64> {
    if flags != 0 {
        return Err(invalid(format!("flags {flags:#x}: aclrtMallocPhysical takes 0")));
    }
    let (on_device, g) = check_props(props)?;
    if size == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
    }
    let len = size.checked_next_multiple_of(g).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("size {size} is larger than any allocation can be"),
        )
    })?;
    let placement = if on_device {
        let id = i32::try_from(props.location.id).map_err(|_| invalid("location.id is not a device id"))?;
        device::check_id(id, s)?;
        registry.charge(id, len as u64, capacity)?;
        Placement::Device(id)
    } else {
        Placement::Host
    };
    let charged = match placement {
        Placement::Device(d) => Some((registry, d)),
        Placement::Host | Placement::Managed(_) => None,
    };
    let name = match placement {
        Placement::Device(d) => format!("ascendless-physical{d}"),
        Placement::Host | Placement::Managed(_) => "ascendless-physical-host".to_owned(),
    };
    let fd = match MemFd::create(&name, len) {
        Ok(fd) => fd,
        Err(e) => {
            if let Placement::Device(d) = placement {
                registry.uncharge(d, len as u64);
            }
            return Err(AclError::new(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot allocate {len} bytes: {e}"),
            ));
        }
    };
    let phys = Physical::owned(*props, placement, len, g, fd, charged);
    Ok(Physical::publish(Arc::new(phys)))
}

/// An allocation received from another process (`len` bytes of `fd`, with the exporter's
/// `aclrtMemAttr`), made a handle of this process on `device`.
///
/// `device` `None`: the exporter's allocation was host memory, and stays host memory here.
pub fn adopt_physical(
    device: Option<i32>,
    attr: i32,
    fd: MemFd,
    len: usize,
    link: crate::ipc::ImportLink,
) -> AclResult<(u64, Arc<Physical>)> {
    let (location, placement) = match device {
        Some(d) => (Location { kind: LOCATION_DEVICE, id: d as u32 }, Placement::Device(d)),
        None => (Location { kind: LOCATION_HOST_NUMA, id: 0 }, Placement::Host),
    };
    let props = Props { handle_type: 0, allocation_type: 0, attr, location };
    let g = attr_granularity(attr, device.is_some()).unwrap_or(page_size());
    if len == 0 || len % page_size() != 0 {
        return Err(invalid(format!("the exporter described {len} bytes, not whole pages")));
    }
    let phys = Arc::new(Physical::imported(props, placement, len, g.min(len), fd, link));
    let handle = Physical::publish(Arc::clone(&phys));
    Ok((handle, phys))
}

// ---- reservations and mappings ----

/// One mapping inside a reservation.
struct Mapped {
    len: usize,
    phys: Arc<Physical>,
    /// Access flags set per location (absent: none).
    access: BTreeMap<Location, u32>,
}

struct Reserved {
    space: Reservation,
    /// Mappings by offset in the reservation; they never overlap.
    maps: BTreeMap<usize, Mapped>,
}

static RESERVATIONS: Mutex<BTreeMap<usize, Reserved>> = Mutex::new(BTreeMap::new());

/// `aclrtReserveMemAddress` (and, with `no_uc`, `...NoUCMemory`): returns the address.
pub fn reserve(size: usize, alignment: usize, expect: usize, flags: u64, no_uc: bool) -> AclResult<usize> {
    if size == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "size must not be 0"));
    }
    if flags > 1 {
        return Err(invalid(format!("flags {flags:#x}: use 0")));
    }
    if alignment != 0 && !alignment.is_power_of_two() {
        return Err(invalid(format!("alignment {alignment} is not 0 or a power of two")));
    }
    if no_uc {
        if expect == 0 {
            return Err(AclError::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "aclrtReserveMemAddressNoUCMemory needs expectPtr: the address is the caller's to choose",
            ));
        }
        if size % GIB != 0 {
            return Err(invalid(format!("size {size} is not a positive multiple of 1 GiB")));
        }
    }
    let len = size
        .checked_next_multiple_of(page_size())
        .ok_or_else(|| invalid(format!("size {size} is larger than any address space")))?;
    let space = if expect != 0 {
        if expect % page_size() != 0 || (alignment != 0 && expect % alignment != 0) {
            return Err(invalid(format!("expectPtr {expect:#x} is not aligned")));
        }
        Reservation::at(expect, len).map_err(|e| {
            invalid(format!(
                "cannot reserve {len} bytes at expectPtr {expect:#x}: {e}; choose free addresses or pass NULL"
            ))
        })?
    } else {
        let align = alignment.max(if len >= GIB { GIB } else { HUGE_PAGE });
        Reservation::new(len, align).map_err(|e| {
            AclError::new(ACL_ERROR_RT_MEMORY_ALLOCATION, format!("cannot reserve {len} bytes: {e}"))
        })?
    };
    let addr = space.addr();
    sync::lock(&RESERVATIONS).insert(addr, Reserved { space, maps: BTreeMap::new() });
    Ok(addr)
}

/// `aclrtReleaseMemAddress`.
pub fn release(addr: usize) -> AclResult<()> {
    let mut all = sync::lock(&RESERVATIONS);
    let Some(r) = all.get(&addr) else {
        return Err(not_reserved(&all, addr, "aclrtReleaseMemAddress"));
    };
    if let Some((&off, m)) = r.maps.iter().next() {
        return Err(invalid(format!(
            "{} mapping(s) remain in the reservation at {addr:#x} (the first at {:#x}, {} bytes); \
             unmap them with aclrtUnmapMem first",
            r.maps.len(),
            addr + off,
            m.len
        )));
    }
    let r = all.remove(&addr);
    drop(all);
    drop(r);
    Ok(())
}

/// The reservation holding `addr`, as (start, reservation).
fn holding(all: &BTreeMap<usize, Reserved>, addr: usize) -> Option<(usize, &Reserved)> {
    all.range(..=addr).next_back().filter(|(s, r)| addr - **s < r.space.len()).map(|(s, r)| (*s, r))
}

fn not_reserved(all: &BTreeMap<usize, Reserved>, addr: usize, api: &str) -> AclError {
    match holding(all, addr) {
        Some((start, _)) => invalid(format!(
            "{addr:#x} lies inside the reservation at {start:#x}; {api} takes the address aclrtReserveMemAddress returned"
        )),
        None => invalid(format!("{addr:#x} is not an address reserved with aclrtReserveMemAddress")),
    }
}

/// `aclrtMapMem` (`no_access` false) or `aclrtMemMapNoAccess` (true).
#[allow(clippy::too_many_arguments)] // the C function's five, plus which function and the mode
pub fn map(
    registry: &Registry,
    addr: usize,
    size: usize,
    offset: usize,
    phys: &Arc<Physical>,
    flags: u64,
    no_access: bool,
    strict: bool,
) -> AclResult<()> {
    if flags != 0 {
        return Err(invalid(format!("flags {flags:#x}: use 0")));
    }
    if offset != 0 {
        return Err(invalid(format!(
            "offset {offset}: only 0 is supported (map from the start of the allocation)"
        )));
    }
    if size == 0 || size % phys.granularity != 0 || size > phys.len {
        return Err(invalid(format!(
            "size {size} must be a positive multiple of the allocation's granularity ({}) and at most its size ({})",
            phys.granularity, phys.len
        )));
    }
    if !phys.is_live() {
        return Err(invalid("this physical memory handle was freed"));
    }
    let mut all = sync::lock(&RESERVATIONS);
    let Some((start, r)) = holding(&all, addr) else {
        return Err(invalid(format!(
            "{addr:#x} is not inside an address range reserved with aclrtReserveMemAddress"
        )));
    };
    let off = addr - start;
    if addr % page_size() != 0 || off.checked_add(size).is_none_or(|end| end > r.space.len()) {
        return Err(invalid(format!(
            "{size} bytes at {addr:#x} do not fit the reservation at {start:#x} ({} bytes) on page boundaries",
            r.space.len()
        )));
    }
    if let Some((&o, m)) = r.maps.range(..off + size).next_back().filter(|(o, m)| **o + m.len > off) {
        return Err(invalid(format!(
            "{addr:#x}..{:#x} overlaps the mapping at {:#x} ({} bytes); unmap it first",
            addr + size,
            start + o,
            m.len
        )));
    }
    if let Some(other) = r.maps.values().next() {
        if other.phys.placement != phys.placement {
            return Err(invalid(format!(
                "the reservation at {start:#x} already maps memory of {:?}; one reservation maps one device's memory",
                other.phys.placement
            )));
        }
        if other.phys.imported != phys.imported {
            return Err(invalid(format!(
                "the reservation at {start:#x} already maps {} allocations; imported and own allocations \
                 need separate reservations",
                if other.phys.imported { "imported" } else { "this process's own" }
            )));
        }
    }
    let host_blocked = strict && matches!(phys.placement, Placement::Device(_));
    let prot = if no_access || host_blocked { Protection::NoAccess } else { Protection::ReadWrite };
    let fd = phys.file();
    r.space.map_file(off, size, &fd, 0, prot).map_err(|e| {
        AclError::new(ACL_ERROR_RT_MEMORY_ALLOCATION, format!("cannot map {size} bytes at {addr:#x}: {e}"))
    })?;
    if let Err(e) = registry.register_mapped(phys.placement, phys.imported, fd, size, addr, phys.granularity)
    {
        let _ = r.space.unmap(off, size);
        return Err(e);
    }
    let mut access = BTreeMap::new();
    if !no_access {
        access.insert(own_location(phys), ACCESS_READWRITE);
    }
    phys.mapped(1);
    let r = all.get_mut(&start).expect("found under the same lock");
    r.maps.insert(off, Mapped { len: size, phys: Arc::clone(phys), access });
    Ok(())
}

/// The location whose access the mapping starts with: the allocation's own device (or host).
fn own_location(phys: &Physical) -> Location {
    match phys.placement {
        Placement::Device(d) => Location { kind: LOCATION_DEVICE, id: d as u32 },
        // Physical allocations are never managed memory.
        Placement::Host | Placement::Managed(_) => Location { kind: LOCATION_HOST, id: 0 },
    }
}

/// The mapping that starts at `addr`: (reservation start, offset).
fn mapping_at(all: &BTreeMap<usize, Reserved>, addr: usize, api: &str) -> AclResult<(usize, usize)> {
    let Some((start, r)) = holding(all, addr) else {
        return Err(invalid(format!(
            "{addr:#x} is not inside an address range reserved with aclrtReserveMemAddress"
        )));
    };
    let off = addr - start;
    if r.maps.contains_key(&off) {
        return Ok((start, off));
    }
    Err(invalid(match r.maps.range(..off).next_back().filter(|(o, m)| **o + m.len > off) {
        Some((o, _)) => format!(
            "{addr:#x} lies inside the mapping at {:#x}; {api} takes the address aclrtMapMem used",
            start + o
        ),
        None => format!("nothing is mapped at {addr:#x} (never mapped, or already unmapped)"),
    }))
}

/// `aclrtUnmapMem`.
pub fn unmap(registry: &Registry, addr: usize) -> AclResult<()> {
    let mut all = sync::lock(&RESERVATIONS);
    let (start, off) = mapping_at(&all, addr, "aclrtUnmapMem")?;
    registry.unregister_mapped(addr)?;
    let r = all.get_mut(&start).expect("found under the same lock");
    let m = r.maps.remove(&off).expect("found under the same lock");
    if let Err(e) = r.space.unmap(off, m.len) {
        // The file stays mapped at these addresses until the reservation is released.
        log::warn!(target: crate::logging::TARGET, "aclrtUnmapMem: could not put back address space at {addr:#x}: {e}");
    }
    m.phys.mapped(-1);
    drop(all);
    drop(m);
    Ok(())
}

/// Checks an access location: the host, or a device of this machine.
fn check_location(loc: Location, s: &Settings) -> AclResult<Location> {
    match loc.kind {
        LOCATION_HOST => Ok(Location { kind: LOCATION_HOST, id: 0 }),
        LOCATION_DEVICE => {
            let id = i32::try_from(loc.id).map_err(|_| invalid("location.id is not a device id"))?;
            device::check_id(id, s)?;
            Ok(loc)
        }
        other => Err(invalid(format!(
            "location.type {other}: access is set for the host (ACL_MEM_LOCATION_TYPE_HOST, 0) or a device \
             (ACL_MEM_LOCATION_TYPE_DEVICE, 1)"
        ))),
    }
}

/// `aclrtMemSetAccess`: sets the access flags of each `(flags, location)` for the mapping at
/// `addr` (`size` its whole length, as the vendor requires).
///
/// Here every device's code and the host's are the same processor, so the user's view of the
/// mapping is protected by the most permissive flags any location has (`NONE` faults, `READ`
/// is read-only, `READWRITE` both). In strict mode (`ASCENDLESS_STRICT_DEVICE_MEMORY=1`) device
/// memory stays inaccessible to host code whatever the flags, as `aclrtMalloc` memory is; the
/// flags are still recorded and reported. Runtime copies and fills go through the runtime's
/// own view and are not affected (as DMA is not by page-table rights).
pub fn set_access(
    addr: usize,
    size: usize,
    descs: &[(u32, Location)],
    strict: bool,
    s: &Settings,
) -> AclResult<()> {
    if descs.is_empty() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "desc must be a non-empty array (count > 0)"));
    }
    let mut checked = Vec::with_capacity(descs.len());
    for &(flags, loc) in descs {
        if ![ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE].contains(&flags) {
            return Err(invalid(format!(
                "access flags {flags:#x}: use ACL_RT_MEM_ACCESS_FLAGS_NONE (0), _READ (1) or _READWRITE (3)"
            )));
        }
        checked.push((flags, check_location(loc, s)?));
    }
    let mut all = sync::lock(&RESERVATIONS);
    let (start, off) = mapping_at(&all, addr, "aclrtMemSetAccess")?;
    let r = all.get_mut(&start).expect("found under the same lock");
    let m = r.maps.get_mut(&off).expect("found under the same lock");
    if size != m.len {
        return Err(invalid(format!(
            "size {size} is not the mapping's size ({}); set access for a whole mapping",
            m.len
        )));
    }
    let mut access = m.access.clone();
    for (flags, loc) in checked {
        access.insert(loc, flags);
    }
    let most = access.values().fold(ACCESS_NONE, |a, &b| a | b);
    let host_blocked = strict && matches!(m.phys.placement, Placement::Device(_));
    let prot = match most {
        _ if host_blocked => Protection::NoAccess,
        ACCESS_NONE => Protection::NoAccess,
        ACCESS_READ => Protection::Read,
        _ => Protection::ReadWrite,
    };
    r.space
        .protect(off, m.len, prot)
        .map_err(|e| invalid(format!("cannot change the access of {addr:#x}: {e}")))?;
    m.access = access;
    Ok(())
}

/// `aclrtMemGetAccess`: the flags of `location` for the mapping at `addr`.
pub fn get_access(addr: usize, location: Location, s: &Settings) -> AclResult<u32> {
    let loc = check_location(location, s)?;
    let all = sync::lock(&RESERVATIONS);
    let (start, off) = mapping_at(&all, addr, "aclrtMemGetAccess")?;
    Ok(all[&start].maps[&off].access.get(&loc).copied().unwrap_or(ACCESS_NONE))
}

/// `aclrtMemRetainAllocationHandle`: the handle of the allocation mapped at `addr`, with one
/// more reference (one more `aclrtFreePhysical` owed).
pub fn retain(addr: usize) -> AclResult<u64> {
    let all = sync::lock(&RESERVATIONS);
    let (start, off) = mapping_at(&all, addr, "aclrtMemRetainAllocationHandle")?;
    Ok(Physical::retain(&all[&start].maps[&off].phys))
}

#[cfg(test)]
mod tests {
    use super::super::physical::PHYSICALS;
    use super::*;
    use crate::error::rt_codes::ACL_ERROR_RT_INVALID_DEVICEID;

    fn dev(attr: i32, id: u32) -> Props {
        Props { handle_type: 0, allocation_type: 0, attr, location: Location { kind: LOCATION_DEVICE, id } }
    }

    fn host(attr: i32) -> Props {
        Props {
            handle_type: 0,
            allocation_type: 0,
            attr,
            location: Location { kind: LOCATION_HOST_NUMA, id: 0 },
        }
    }

    #[test]
    fn granularities_follow_the_memory_kind() {
        assert_eq!(granularity(&dev(5, 0), 0).unwrap(), HUGE_PAGE, "HBM normal is huge-page backed");
        assert_eq!(granularity(&dev(12, 0), 1).unwrap(), HUGE_PAGE);
        assert_eq!(granularity(&dev(14, 0), 0).unwrap(), GIB);
        assert_eq!(granularity(&host(3), 0).unwrap(), page_size());
        assert_eq!(granularity(&host(13), 0).unwrap(), HUGE_PAGE);
        assert_eq!(granularity(&host(17), 0).unwrap(), GIB, "1 GiB host pages, as fabric memory uses");
        for bad in [dev(3, 0), host(10), host(5), dev(18, 0), dev(-1, 0)] {
            assert_eq!(granularity(&bad, 0).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "{bad:?}");
        }
        assert_eq!(granularity(&dev(5, 0), 0xFFFF).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let mut p = host(16);
        p.location.kind = 0;
        assert_eq!(granularity(&p, 0).unwrap(), HUGE_PAGE, "ACL_MEM_LOCATION_TYPE_HOST is host memory too");
        p.location.kind = 3;
        assert!(granularity(&p, 0).is_err(), "managed memory is not physical memory");
        p = dev(5, 0);
        p.allocation_type = 1;
        assert!(granularity(&p, 0).is_err());
        p = dev(5, 0);
        p.handle_type = 1;
        assert!(granularity(&p, 0).is_err());
    }

    #[test]
    fn physical_memory_counts_until_its_handle_and_last_mapping_are_gone() {
        static REG: Registry = Registry::new();
        let s = crate::config::from_env(|_| None);
        let cap = 8 * HUGE_PAGE as u64;
        let h = malloc_physical(&REG, 1, &dev(5, 6), 0, cap, &s).unwrap();
        assert_eq!(REG.usage(6), HUGE_PAGE as u64, "rounded up to the granularity");
        let p = PHYSICALS.get(h).unwrap();
        let va = reserve(3 * HUGE_PAGE, 0, 0, 0, false).unwrap();
        assert_eq!(va % HUGE_PAGE, 0);
        map(&REG, va, HUGE_PAGE, 0, &p, 0, false, false).unwrap();
        assert!(REG.find(va + 5).is_some_and(|a| a.is_device()), "the registry knows the mapping");
        let span = REG.find(va).unwrap().runtime_span(va + 4096, 16).unwrap();
        span.fill(0x42); // how the ADXL engine and copies reach it: the runtime's own view
        assert_eq!(
            map(&REG, va, HUGE_PAGE, 0, &p, 0, false, false).unwrap_err().code,
            ACL_ERROR_RT_PARAM_INVALID,
            "double map"
        );
        p.free().unwrap();
        assert!(PHYSICALS.get(h).is_err(), "the handle is gone");
        assert_eq!(REG.usage(6), HUGE_PAGE as u64, "still mapped: still counted");
        assert_eq!(release(va).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "mapped: not released");
        let again = retain(va).unwrap();
        assert!(PHYSICALS.get(again).is_ok(), "retained: a handle again");
        p.free().unwrap();
        drop(p);
        unmap(&REG, va).unwrap();
        assert_eq!(unmap(&REG, va).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "unmapped twice");
        assert!(REG.find(va).is_none());
        assert_eq!(REG.usage(6), 0, "the last holder let go");
        release(va).unwrap();
        assert_eq!(release(va).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let e = malloc_physical(&REG, 9 * HUGE_PAGE, &dev(5, 6), 0, cap, &s).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION, "beyond the capacity");
        let e = malloc_physical(&REG, 1, &dev(5, 999), 0, cap, &s).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(
            malloc_physical(&REG, 0, &dev(5, 0), 0, cap, &s).unwrap_err().code,
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            malloc_physical(&REG, 1, &dev(5, 0), 1, cap, &s).unwrap_err().code,
            ACL_ERROR_RT_PARAM_INVALID
        );
    }

    #[test]
    fn access_flags_protect_the_users_view() {
        static REG: Registry = Registry::new();
        let s = crate::config::from_env(|_| None);
        let h = malloc_physical(&REG, HUGE_PAGE, &dev(5, 1), 0, u64::MAX, &s).unwrap();
        let p = PHYSICALS.get(h).unwrap();
        let va = reserve(HUGE_PAGE, 0, 0, 0, false).unwrap();
        map(&REG, va, HUGE_PAGE, 0, &p, 0, true, false).unwrap();
        let me = Location { kind: LOCATION_DEVICE, id: 1 };
        assert_eq!(get_access(va, me, &s).unwrap(), ACCESS_NONE, "mapped without access");
        set_access(va, HUGE_PAGE, &[(ACCESS_READ, me)], false, &s).unwrap();
        assert_eq!(get_access(va, me, &s).unwrap(), ACCESS_READ);
        let other = Location { kind: LOCATION_DEVICE, id: 2 };
        assert_eq!(get_access(va, other, &s).unwrap(), ACCESS_NONE);
        for (flags, loc, size) in
            [(2, me, HUGE_PAGE), (3, Location { kind: 3, id: 0 }, HUGE_PAGE), (3, me, 4096)]
        {
            assert!(set_access(va, size, &[(flags, loc)], false, &s).is_err(), "{flags} {loc:?} {size}");
        }
        assert!(set_access(va + 4096, HUGE_PAGE, &[(3, me)], false, &s).is_err(), "not a mapping start");
        unmap(&REG, va).unwrap();
        release(va).unwrap();
        p.free().unwrap();
    }

    #[test]
    fn reservations_check_their_arguments() {
        assert_eq!(reserve(0, 0, 0, 0, false).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
        assert_eq!(reserve(4096, 3, 0, 0, false).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(reserve(4096, 0, 0, 2, false).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(reserve(GIB, 0, 0, 0, true).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let va = reserve(GIB, 0, 0, 0, false).unwrap();
        assert_eq!(va % GIB, 0, "1 GiB and up is 1 GiB aligned");
        let e = reserve(4096, 0, va, 0, false).unwrap_err();
        assert!(e.message.contains("expectPtr"), "{}", e.message);
        release(va).unwrap();
        let fixed = reserve(GIB, 0, va, 0, true).unwrap();
        assert_eq!(fixed, va, "the caller's address");
        assert_eq!(release(fixed + 4096).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        release(fixed).unwrap();
        assert_eq!(reserve(GIB + 1, 0, va, 0, true).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }
}
