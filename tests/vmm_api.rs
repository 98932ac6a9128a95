//! Virtual memory management and shareable handles through the C entry points: reserve,
//! allocate, map, copy, set access, unmap, release in one process; export, whitelist, import,
//! map and share bytes between two real processes. The child is this test binary re-run with a
//! role variable, scripted one command per line (as in `ipc_api.rs`).

use std::ffi::c_void;
use std::io::{BufRead, Write};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

mod common;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::ipc::*;
use ascendless::ffi::acl_rt::location::aclrtMemLocation;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::vmm::*;
use common::Scripted;

const ROLE: &str = "ASCENDLESS_VMM_TEST_CHILD";
const MIB2: usize = 2 << 20;

fn prop(device: u32) -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: 0,
        allocationType: 0,
        memAttr: 5, // ACL_HBM_MEM_NORMAL, as the vendor's samples use
        location: aclrtMemLocation { id: device, r#type: 1 },
        reserve: 0,
    }
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

fn copy_in(dst: *mut c_void, data: &[u8]) -> i32 {
    // SAFETY: `data` is a live buffer of its length.
    unsafe { aclrtMemcpy(dst, data.len(), data.as_ptr().cast(), data.len(), 1) }
}

fn copy_out(src: *mut c_void, len: usize) -> (i32, Vec<u8>) {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is a live buffer of `len` bytes.
    let rc = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, src, len, 2) };
    (rc, out)
}

/// `aclrtMemcpy` with `ACL_MEMCPY_DEFAULT`: the runtime tells host from device memory.
fn copy_default(dst: *mut c_void, src: *const c_void, n: usize) -> i32 {
    // SAFETY: the callers pass live ranges of `n` bytes.
    unsafe { aclrtMemcpy(dst, n, src, n, 4) }
}

/// A physical allocation of `len` bytes on `device`.
fn malloc_physical(len: usize, device: u32) -> aclrtDrvMemHandle {
    let mut h = null_mut();
    // SAFETY: valid out-pointer and property struct.
    assert_eq!(unsafe { aclrtMallocPhysical(&mut h, len, &prop(device), 0) }, ACL_SUCCESS);
    h
}

fn reserve(len: usize) -> *mut c_void {
    let mut va = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtReserveMemAddress(&mut va, len, 0, null_mut(), 0) }, ACL_SUCCESS);
    va
}

/// Reserves and maps `h` (`len` bytes) with read-write access for `device`; the address.
fn reserve_and_map(h: aclrtDrvMemHandle, len: usize, device: u32) -> *mut c_void {
    let va = reserve(len);
    assert_eq!(aclrtMapMem(va, len, 0, h, 0), ACL_SUCCESS);
    let mut desc =
        aclrtMemAccessDesc { flags: 3, location: aclrtMemLocation { id: device, r#type: 1 }, rsv: [0; 12] };
    // SAFETY: one valid descriptor.
    assert_eq!(unsafe { aclrtMemSetAccess(va, len, &mut desc, 1) }, ACL_SUCCESS);
    va
}

fn unmap_and_release(va: *mut c_void, h: aclrtDrvMemHandle) {
    assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
    assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS);
}

fn fabric_hex(f: &aclrtMemFabricHandle) -> String {
    f.data.iter().map(|b| format!("{b:02x}")).collect()
}

fn fabric_from_hex(text: &str) -> aclrtMemFabricHandle {
    let mut f = aclrtMemFabricHandle { data: [0; 128] };
    for (i, b) in f.data.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap();
    }
    f
}

/// The permissions `/proc/self/maps` shows for the mapping holding `addr` ("rw-s", "---s").
fn prot_of(addr: usize) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for line in maps.lines() {
        let mut words = line.split_whitespace();
        let (range, perms) = (words.next().unwrap(), words.next().unwrap());
        let (lo, hi) = range.split_once('-').unwrap();
        let (lo, hi) = (usize::from_str_radix(lo, 16).unwrap(), usize::from_str_radix(hi, 16).unwrap());
        if (lo..hi).contains(&addr) {
            return perms.to_owned();
        }
    }
    panic!("{addr:#x} is not mapped");
}

fn set_access(va: *mut c_void, len: usize, flags: i32, device: u32) -> i32 {
    let mut desc =
        aclrtMemAccessDesc { flags, location: aclrtMemLocation { id: device, r#type: 1 }, rsv: [0; 12] };
    // SAFETY: one valid descriptor.
    unsafe { aclrtMemSetAccess(va, len, &mut desc, 1) }
}

// ---- the child ----

/// Runs commands from standard input until "exit" or end of input.
fn child_main() {
    assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
    let mut handle: aclrtDrvMemHandle = null_mut();
    let mut va: *mut c_void = null_mut();
    let mut len = 0usize;
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["pid"] => {
                let mut pid = 0;
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtDeviceGetBareTgid(&mut pid) };
                format!("{rc} {pid}")
            }
            // Imports a 64-bit shareable handle on device 3, maps it, and answers the length.
            ["import", id] => {
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtMemImportFromShareableHandle(id.parse().unwrap(), 3, &mut handle) };
                format!("{rc}")
            }
            ["import_fabric", hex] => {
                let mut f = fabric_from_hex(hex);
                // SAFETY: a valid fabric handle and out-pointer.
                let rc =
                    unsafe { aclrtMemImportFromShareableHandleV2((&raw mut f).cast(), 2, 0, &mut handle) };
                format!("{rc}")
            }
            ["map"] => {
                let mut p = prop(0);
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtMemGetAllocationPropertiesFromHandle(handle, &mut p) };
                assert_eq!(rc, ACL_SUCCESS);
                assert_eq!((p.location.id, p.location.r#type, p.memAttr), (3, 1, 5), "imported on device 3");
                len = MIB2 * 2;
                va = reserve_and_map(handle, len, 3);
                let mut base = null_mut();
                let mut size = 0;
                // SAFETY: valid out-pointers.
                assert_eq!(unsafe { aclrtMemGetAddressRange(va.byte_add(5), &mut base, &mut size) }, 0);
                assert_eq!((base, size), (va, len));
                "0".to_owned()
            }
            // Maps the imported handle (`bytes` long) and answers its location type.
            ["map_any", bytes] => {
                let mut p = prop(0);
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtMemGetAllocationPropertiesFromHandle(handle, &mut p) };
                assert_eq!(rc, ACL_SUCCESS);
                len = bytes.parse().unwrap();
                va = reserve(len);
                format!("{} {}", aclrtMapMem(va, len, 0, handle, 0), p.location.r#type)
            }
            ["check_head", seed, n] => {
                let n: usize = n.parse().unwrap();
                let mut got = vec![0u8; n];
                let rc = copy_default(got.as_mut_ptr().cast(), va, n);
                format!("{rc} {}", u8::from(got == pattern(seed.parse().unwrap(), n)))
            }
            ["check", seed] => {
                let (rc, got) = copy_out(va, len);
                format!("{rc} {}", u8::from(got == pattern(seed.parse().unwrap(), len)))
            }
            ["write", seed] => format!("{}", copy_in(va, &pattern(seed.parse().unwrap(), len))),
            // Reads through the mapping with plain host loads (non-strict mode).
            ["peek", offset] => {
                let off: usize = offset.parse().unwrap();
                // SAFETY: the mapping is live and read-write for host code; `off < len`.
                format!("0 {}", unsafe { va.cast::<u8>().add(off).read_volatile() })
            }
            ["release"] => {
                unmap_and_release(va, handle);
                "0".to_owned()
            }
            ["free"] => format!("{}", aclrtFreePhysical(handle)),
            // A local allocation mapped read-write: copies work; what may host code do?
            ["local"] => {
                handle = malloc_physical(MIB2, 3);
                len = MIB2;
                va = reserve_and_map(handle, len, 3);
                let data = pattern(8, len);
                let rc = copy_in(va, &data);
                let (rc2, back) = copy_out(va, len);
                assert_eq!((rc, rc2, back == data), (0, 0, true), "copies work in any mode");
                format!("0 {}", prot_of(va.addr()))
            }
            // Exports a new allocation filled with `seed` (pid validation off when `open`).
            ["export", seed, open] => {
                handle = malloc_physical(2 * MIB2, 3);
                len = 2 * MIB2;
                va = reserve_and_map(handle, len, 3);
                assert_eq!(copy_in(va, &pattern(seed.parse().unwrap(), len)), 0);
                let mut id = 0u64;
                let flags = if *open == "1" { ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION } else { 0 };
                // SAFETY: valid out-pointer.
                let rc = unsafe { aclrtMemExportToShareableHandle(handle, 0, flags, &mut id) };
                format!("{rc} {id}")
            }
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

/// The other process, scripted command by command.
struct Peer(Scripted);

impl Peer {
    fn start() -> Peer {
        Peer(Scripted::spawn(ROLE, &[]))
    }

    fn ask(&mut self, command: &str) -> Vec<String> {
        self.0.send(command);
        self.0.reply_words(command)
    }

    fn code(&mut self, command: &str) -> i32 {
        self.ask(command)[0].parse().unwrap()
    }

    fn value(&mut self, command: &str) -> u64 {
        let r = self.ask(command);
        assert_eq!(r[0], "0", "{command}: {r:?}");
        r[1].parse().unwrap()
    }

    fn pid(&mut self) -> i32 {
        self.value("pid") as i32
    }
}

fn on_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f).join().unwrap();
}

// ---- one process ----

#[test]
fn reserve_map_copy_unmap_release() {
    on_thread(|| {
        // Device 4 is this test's alone: the free-memory figures are not shared.
        assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
        let mut g = 0usize;
        let mut p = prop(4);
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAllocationGranularity(&mut p, 0, &mut g) }, ACL_SUCCESS);
        assert_eq!(g, MIB2, "device memory comes in 2 MiB units");
        let (mut free_before, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        unsafe { aclrtGetMemInfo(0, &mut free_before, &mut total) };

        let len = 2 * g;
        let h = malloc_physical(len, 4);
        let mut free_after = 0usize;
        // SAFETY: valid out-pointers.
        unsafe { aclrtGetMemInfo(0, &mut free_after, &mut total) };
        assert_eq!(free_before - free_after, len, "physical memory counts against the device");

        let va = reserve(4 * g);
        assert_eq!(va.addr() % g, 0, "reservations are granularity aligned");
        let at = va.wrapping_byte_add(g);
        assert_eq!(aclrtMapMem(at, len, 0, h, 0), ACL_SUCCESS);
        let data = pattern(11, len);
        assert_eq!(copy_in(at, &data), ACL_SUCCESS, "mapped memory is device memory to aclrtMemcpy");
        let (rc, back) = copy_out(at, len);
        assert_eq!((rc, back == data), (ACL_SUCCESS, true));
        // SAFETY: mapped read-write for host code (not strict); inside the mapping.
        assert_eq!(unsafe { at.cast::<u8>().add(12345).read_volatile() }, data[12345], "the same pages");
        // SAFETY: a mapped range of `len` bytes.
        assert_eq!(unsafe { aclrtMemset(at, len, 0x5a, 4096) }, ACL_SUCCESS);
        assert_eq!(copy_out(at, 1).1[0], 0x5a);
        assert_eq!(copy_in(va, &data[..16]), ACL_ERROR_RT_PARAM_INVALID, "unmapped part of the reservation");

        // Address range, properties, retain, access.
        let (mut base, mut size) = (null_mut(), 0usize);
        // SAFETY: valid out-pointers.
        assert_eq!(unsafe { aclrtMemGetAddressRange(at.wrapping_byte_add(777), &mut base, &mut size) }, 0);
        assert_eq!((base, size), (at, len));
        let mut props = prop(0);
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemGetAllocationPropertiesFromHandle(h, &mut props) }, 0);
        assert_eq!((props.handleType, props.allocationType, props.memAttr), (0, 0, 5));
        assert_eq!((props.location.id, props.location.r#type), (4, 1));
        let mut again = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemRetainAllocationHandle(at, &mut again) }, ACL_SUCCESS);
        assert_eq!(again, h, "the same handle, one more reference");
        let mut flag = 99u64;
        let mut me = aclrtMemLocation { id: 4, r#type: 1 };
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAccess(at, &mut me, &mut flag) }, 0);
        assert_eq!(flag, 3, "aclrtMapMem grants read-write to the memory's device");
        let mut other = aclrtMemLocation { id: 2, r#type: 1 };
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAccess(at, &mut other, &mut flag) }, 0);
        assert_eq!(flag, 0);

        // IPC memory export of a mapped range: it is device memory of this process.
        let mut key = [0 as std::ffi::c_char; 65];
        // SAFETY: a 65-byte buffer.
        assert_eq!(unsafe { aclrtIpcMemGetExportKey(at, len, key.as_mut_ptr(), 65, 0) }, ACL_SUCCESS);
        // SAFETY: the key the library wrote.
        assert_eq!(unsafe { aclrtIpcMemClose(key.as_ptr()) }, ACL_SUCCESS);

        assert_eq!(aclrtFree(at), ACL_ERROR_RT_PARAM_INVALID, "not aclrtMalloc memory");
        assert_eq!(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID, "still mapped");
        assert_eq!(aclrtUnmapMem(at), ACL_SUCCESS);
        assert_eq!(copy_in(at, &data[..16]), ACL_ERROR_RT_PARAM_INVALID, "unmapped: no longer device memory");
        assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS);
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS, "the retained reference");
        assert_eq!(aclrtFreePhysical(h), ACL_ERROR_RT_INVALID_HANDLE, "freed");
        let mut free_end = 0usize;
        // SAFETY: valid out-pointers.
        unsafe { aclrtGetMemInfo(0, &mut free_end, &mut total) };
        assert_eq!(free_end, free_before, "all given back");
    });
}

#[test]
fn freeing_a_mapped_handle_keeps_the_mapping_until_unmapped() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let h = malloc_physical(MIB2, 1);
        let va = reserve(MIB2);
        assert_eq!(aclrtMapMem(va, MIB2, 0, h, 0), ACL_SUCCESS);
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS, "the vendor: freed for real after the unmap");
        let data = pattern(3, MIB2);
        assert_eq!(copy_in(va, &data), ACL_SUCCESS, "still mapped, still usable");
        assert_eq!(copy_out(va, MIB2).1, data);
        assert_eq!(aclrtMapMem(va, MIB2, 0, h, 0), ACL_ERROR_RT_INVALID_HANDLE, "the handle is gone");
        let mut back = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemRetainAllocationHandle(va, &mut back) }, ACL_SUCCESS);
        assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
        assert_eq!(aclrtFreePhysical(back), ACL_SUCCESS);
        assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    });
}

#[test]
fn bad_input_gets_the_documented_codes() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let h = malloc_physical(2 * MIB2, 1);
        let va = reserve(4 * MIB2);
        // Unaligned or oversized mappings, offsets, flags.
        assert_eq!(aclrtMapMem(va, MIB2 + 4096, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtMapMem(va, 4 * MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtMapMem(va, MIB2, MIB2, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtMapMem(va, MIB2, 0, h, 1), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtMapMem(va.wrapping_byte_add(1), MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        let mut stack = 0u8;
        assert_eq!(aclrtMapMem((&raw mut stack).cast(), MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            aclrtMapMem(va.wrapping_byte_add(3 * MIB2), 2 * MIB2, 0, h, 0),
            ACL_ERROR_RT_PARAM_INVALID
        );
        // Double map, unmap of what is not mapped.
        assert_eq!(aclrtMapMem(va, 2 * MIB2, 0, h, 0), ACL_SUCCESS);
        assert_eq!(aclrtMapMem(va.wrapping_byte_add(MIB2), 2 * MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtUnmapMem(va.wrapping_byte_add(MIB2)), ACL_ERROR_RT_PARAM_INVALID, "inside");
        assert_eq!(aclrtUnmapMem(va.wrapping_byte_add(3 * MIB2)), ACL_ERROR_RT_PARAM_INVALID, "not mapped");
        assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
        assert_eq!(aclrtUnmapMem(va), ACL_ERROR_RT_PARAM_INVALID, "unmapped twice");
        // Access descriptors.
        assert_eq!(aclrtMapMem(va, 2 * MIB2, 0, h, 0), ACL_SUCCESS);
        let mut desc =
            aclrtMemAccessDesc { flags: 2, location: aclrtMemLocation { id: 1, r#type: 1 }, rsv: [0; 12] };
        // SAFETY: one valid descriptor (an invalid value in it).
        assert_eq!(unsafe { aclrtMemSetAccess(va, 2 * MIB2, &mut desc, 1) }, ACL_ERROR_RT_PARAM_INVALID);
        desc.flags = 3;
        // SAFETY: one valid descriptor.
        assert_eq!(unsafe { aclrtMemSetAccess(va, MIB2, &mut desc, 1) }, ACL_ERROR_RT_PARAM_INVALID, "part");
        desc.location.id = 999;
        // SAFETY: one valid descriptor.
        assert_eq!(unsafe { aclrtMemSetAccess(va, 2 * MIB2, &mut desc, 1) }, ACL_ERROR_RT_INVALID_DEVICEID);
        // SAFETY: NULL array.
        assert_eq!(unsafe { aclrtMemSetAccess(va, 2 * MIB2, null_mut(), 1) }, ACL_ERROR_INVALID_PARAM);
        // SAFETY: an empty array.
        assert_eq!(unsafe { aclrtMemSetAccess(va, 2 * MIB2, &mut desc, 0) }, ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
        // NULL pointers and sizes.
        let mut out = null_mut();
        // SAFETY: NULL and valid pointers, as each case says.
        unsafe {
            assert_eq!(aclrtReserveMemAddress(null_mut(), MIB2, 0, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtReserveMemAddress(&mut out, 0, 0, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocPhysical(null_mut(), MIB2, &prop(1), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocPhysical(&mut out, MIB2, null(), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocPhysical(&mut out, 0, &prop(1), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocPhysical(&mut out, MIB2, &prop(999), 0), ACL_ERROR_RT_INVALID_DEVICEID);
            let mut bad = prop(1);
            bad.memAttr = 3; // DDR memory on a device
            assert_eq!(aclrtMallocPhysical(&mut out, MIB2, &bad, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtMallocPhysical(&mut out, MIB2, &prop(1), 7), ACL_ERROR_RT_PARAM_INVALID);
            let mut g = 0usize;
            assert_eq!(aclrtMemGetAllocationGranularity(null_mut(), 0, &mut g), ACL_ERROR_INVALID_PARAM);
            let mut p = prop(1);
            assert_eq!(aclrtMemGetAllocationGranularity(&mut p, 0xFFFF, &mut g), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtMemGetAllocationGranularity(&mut p, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemGetAllocationPropertiesFromHandle(h, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtMemGetAllocationPropertiesFromHandle(null_mut(), &mut p),
                ACL_ERROR_INVALID_PARAM
            );
            let mut flag = 0u64;
            assert_eq!(aclrtMemGetAccess(va, null_mut(), &mut flag), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemRetainAllocationHandle(va, &mut out), ACL_ERROR_RT_PARAM_INVALID, "unmapped");
            let mut size = 0usize;
            assert_eq!(aclrtMemGetAddressRange(va, &mut out, &mut size), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtMemGetAddressRange(va, null_mut(), &mut size), ACL_ERROR_INVALID_PARAM);
            let mut id = 0u64;
            assert_eq!(aclrtMemExportToShareableHandle(h, 0, 4, &mut id), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtMemExportToShareableHandle(h, 0, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtMemExportToShareableHandleV2(h, 0, 3, (&raw mut id).cast()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtMemImportFromShareableHandle(12345, 3, &mut out), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtMemImportFromShareableHandle(1 << 42, 999, &mut out),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            let mut junk = aclrtMemFabricHandle { data: [7; 128] };
            assert_eq!(
                aclrtMemImportFromShareableHandleV2((&raw mut junk).cast(), 2, 0, &mut out),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let mut pid = 1;
            assert_eq!(
                aclrtMemSetPidToShareableHandle(id, &mut pid, 1),
                ACL_ERROR_RT_PARAM_INVALID,
                "not exported"
            );
            assert_eq!(aclrtMemSetPidToShareableHandle(id, null_mut(), 1), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(aclrtReleaseMemAddress(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtUnmapMem(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtFreePhysical(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            aclrtReleaseMemAddress(va.wrapping_byte_add(MIB2)),
            ACL_ERROR_RT_PARAM_INVALID,
            "interior"
        );
        assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
        assert_eq!(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID, "released twice");
        assert_eq!(aclrtMapMem(va, MIB2, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID, "released");
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS);
    });
}

#[test]
fn a_process_does_not_import_its_own_shareable_handle_and_exports_once() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let h = malloc_physical(MIB2, 1);
        let mut id = 0u64;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtMemExportToShareableHandle(h, 0, 0, &mut id), ACL_SUCCESS);
            assert_eq!(aclrtMemExportToShareableHandle(h, 0, 0, &mut id), ACL_ERROR_RT_PARAM_INVALID, "once");
            let mut f = aclrtMemFabricHandle { data: [0; 128] };
            assert_eq!(
                aclrtMemExportToShareableHandleV2(h, 0, 2, (&raw mut f).cast()),
                ACL_ERROR_RT_PARAM_INVALID,
                "one shareable handle per handle, whatever its type"
            );
            let mut out = null_mut();
            assert_eq!(aclrtMemImportFromShareableHandle(id, 1, &mut out), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        }
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS);
    });
}

#[test]
fn access_rights_protect_the_users_view() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        let h = malloc_physical(MIB2, 5);
        let va = reserve(MIB2);
        assert_eq!(prot_of(va.addr()), "---p", "a reservation is inaccessible");
        assert_eq!(aclrtMemMapNoAccess(va, MIB2, 0, h, 0), ACL_SUCCESS);
        assert_eq!(prot_of(va.addr()), "---s", "mapped without access");
        let mut flag = 9u64;
        let mut me = aclrtMemLocation { id: 5, r#type: 1 };
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAccess(va, &mut me, &mut flag) }, 0);
        assert_eq!(flag, 0);
        let data = pattern(1, MIB2);
        assert_eq!(copy_in(va, &data), ACL_SUCCESS, "runtime copies are not bound by the rights");
        assert_eq!(set_access(va, MIB2, 1, 5), ACL_SUCCESS);
        assert_eq!(prot_of(va.addr()), "r--s");
        // SAFETY: readable now, inside the mapping.
        assert_eq!(unsafe { va.cast::<u8>().add(99).read_volatile() }, data[99]);
        assert_eq!(set_access(va, MIB2, 3, 0), ACL_SUCCESS, "another device may write");
        assert_eq!(prot_of(va.addr()), "rw-s", "the most permissive location decides");
        let mut host = aclrtMemLocation { id: 0, r#type: 0 };
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAccess(va, &mut host, &mut flag) }, 0);
        assert_eq!(flag, 0, "nothing set for the host");
        assert_eq!(set_access(va, MIB2, 0, 0), ACL_SUCCESS);
        assert_eq!(set_access(va, MIB2, 0, 5), ACL_SUCCESS);
        assert_eq!(prot_of(va.addr()), "---s");
        assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
        assert_eq!(prot_of(va.addr()), "---p", "unmapped: reserved again");
        assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS);
    });
}

#[test]
fn strict_mode_keeps_host_code_out_of_mapped_device_memory() {
    let mut strict = Peer(Scripted::spawn(ROLE, &[("ASCENDLESS_STRICT_DEVICE_MEMORY", "1")]));
    assert_eq!(strict.ask("local"), ["0", "---s"], "read-write rights, yet no host access");
    strict.0.finish();
    let mut normal = Peer::start();
    assert_eq!(normal.ask("local"), ["0", "rw-s"]);
    normal.0.finish();
}

// ---- two processes ----

#[test]
fn two_processes_share_physical_memory_through_a_whitelisted_handle() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let len = 2 * MIB2;
        let h = malloc_physical(len, 2);
        let va = reserve_and_map(h, len, 2);
        assert_eq!(copy_in(va, &pattern(41, len)), ACL_SUCCESS);
        let mut id = 0u64;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemExportToShareableHandle(h, 0, 0, &mut id) }, ACL_SUCCESS);

        let mut peer = Peer::start();
        let mut stranger = Peer::start();
        let mut pid = peer.pid();
        // SAFETY: one readable pid.
        assert_eq!(unsafe { aclrtMemSetPidToShareableHandle(id, &mut pid, 1) }, ACL_SUCCESS);
        // The handle is plain data: it reaches the other process as text here.
        assert_eq!(stranger.code(&format!("import {id}")), ACL_ERROR_RT_NO_PERMISSION, "not whitelisted");
        assert_eq!(peer.code(&format!("import {id}")), ACL_SUCCESS);
        assert_eq!(peer.code(&format!("import {id}")), ACL_ERROR_RT_PARAM_INVALID, "imported already");
        assert_eq!(peer.code("map"), ACL_SUCCESS);
        assert_eq!(peer.ask("check 41"), ["0", "1"], "the importer reads the exact bytes");
        assert_eq!(peer.ask("peek 100"), ["0", &pattern(41, 101)[100].to_string()], "host loads too");
        assert_eq!(peer.code("write 99"), ACL_SUCCESS);
        let (rc, seen) = copy_out(va, len);
        assert_eq!(
            (rc, seen == pattern(99, len)),
            (ACL_SUCCESS, true),
            "the exporter sees the importer's bytes"
        );

        // Freeing the exported handle withdraws the export; the importer keeps its pages.
        unmap_and_release(va, h);
        assert_eq!(
            stranger.code(&format!("import {id}")),
            ACL_ERROR_RT_PARAM_INVALID,
            "freed by its exporter"
        );
        assert_eq!(peer.ask("check 99"), ["0", "1"]);
        assert_eq!(peer.code("release"), ACL_SUCCESS);
        peer.0.finish();
        stranger.0.finish();
    });
}

#[test]
fn fabric_handles_without_pid_validation() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let len = 2 * MIB2;
        let h = malloc_physical(len, 2);
        let va = reserve_and_map(h, len, 2);
        assert_eq!(copy_in(va, &pattern(5, len)), ACL_SUCCESS);
        let mut f = aclrtMemFabricHandle { data: [0; 128] };
        // SAFETY: a fabric handle to write.
        let rc = unsafe {
            aclrtMemExportToShareableHandleV2(
                h,
                ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                2,
                (&raw mut f).cast(),
            )
        };
        assert_eq!(rc, ACL_SUCCESS);
        let mut peer = Peer::start();
        assert_eq!(peer.code(&format!("import_fabric {}", fabric_hex(&f))), ACL_SUCCESS);
        assert_eq!(peer.code("map"), ACL_SUCCESS);
        assert_eq!(peer.ask("check 5"), ["0", "1"]);
        assert_eq!(peer.code("write 6"), ACL_SUCCESS);
        assert_eq!(copy_out(va, len).1, pattern(6, len));
        assert_eq!(peer.code("release"), ACL_SUCCESS);
        peer.0.finish();
        unmap_and_release(va, h);
    });
}

/// Host physical memory in 1 GiB pages, reserved with the huge-page flag and shared by a fabric
/// handle: what Mooncake's fabric memory does.
#[test]
fn host_physical_memory_is_shared_like_fabric_memory() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        const GIB: usize = 1 << 30;
        let host = aclrtPhysicalMemProp {
            handleType: 0,
            allocationType: 0,
            memAttr: 17, // ACL_MEM_P2P_HUGE1G
            location: aclrtMemLocation { id: 0, r#type: 4 },
            reserve: 0,
        };
        let (mut g, mut h, mut va) = (0usize, null_mut(), null_mut());
        // SAFETY: valid pointers.
        unsafe {
            let mut p = host;
            assert_eq!(aclrtMemGetAllocationGranularity(&mut p, 0, &mut g), ACL_SUCCESS);
            assert_eq!(g, GIB);
            assert_eq!(aclrtMallocPhysical(&mut h, GIB, &host, 0), ACL_SUCCESS);
            assert_eq!(aclrtReserveMemAddress(&mut va, GIB, 0, null_mut(), 1), ACL_SUCCESS);
        }
        assert_eq!(aclrtMapMem(va, GIB, 0, h, 0), ACL_SUCCESS);
        let head = pattern(77, 1 << 20);
        assert_eq!(copy_in(va, &head), ACL_ERROR_RT_PARAM_INVALID, "host memory, not device memory");
        assert_eq!(copy_default(va, head.as_ptr().cast(), head.len()), ACL_SUCCESS);
        let mut f = aclrtMemFabricHandle { data: [0; 128] };
        // SAFETY: a fabric handle to write.
        let rc = unsafe {
            aclrtMemExportToShareableHandleV2(
                h,
                ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                2,
                (&raw mut f).cast(),
            )
        };
        assert_eq!(rc, ACL_SUCCESS);
        let mut peer = Peer::start();
        assert_eq!(peer.code(&format!("import_fabric {}", fabric_hex(&f))), ACL_SUCCESS);
        assert_eq!(peer.ask(&format!("map_any {GIB}")), ["0", "4"], "host memory in the importer too");
        assert_eq!(peer.ask(&format!("check_head 77 {}", 1 << 20)), ["0", "1"]);
        assert_eq!(peer.code("release"), ACL_SUCCESS);
        peer.0.finish();
        unmap_and_release(va, h);
    });
}

#[test]
fn an_exporter_that_died_fails_later_imports_promptly() {
    on_thread(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let mut exporter = Peer::start();
        let id = exporter.value("export 21 1");
        let mut h = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemImportFromShareableHandle(id, 2, &mut h) }, ACL_SUCCESS);
        let va = reserve_and_map(h, 2 * MIB2, 2);
        assert_eq!(copy_out(va, 2 * MIB2).1, pattern(21, 2 * MIB2));
        exporter.0.child.kill().unwrap();
        exporter.0.child.wait().unwrap();
        let t = Instant::now();
        let mut again = null_mut();
        assert_eq!(aclrtFreePhysical(h), ACL_SUCCESS, "the handle goes, the mapping stays");
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtMemImportFromShareableHandle(id, 2, &mut again) }, ACL_ERROR_RT_IPC_ERROR);
        assert!(t.elapsed() < Duration::from_secs(1), "promptly: {:?}", t.elapsed());
        assert_eq!(copy_out(va, 2 * MIB2).1, pattern(21, 2 * MIB2), "the pages outlive their exporter");
        assert_eq!(aclrtUnmapMem(va), ACL_SUCCESS);
        assert_eq!(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    });
}

/// What the rest of the runtime says of mapped memory: device memory of the allocation's
/// device, with its granularity as page size, and reserved memory to `aclrtCheckMemType`;
/// after the unmap, nothing.
#[test]
fn pointer_attributes_see_mapped_memory_as_reserved_device_memory() {
    use ascendless::ffi::acl_rt::pointer::{
        aclrtCheckMemType, aclrtPointerGetAttributes, aclrtPtrAttributes,
    };
    on_thread(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let h = malloc_physical(MIB2, 2);
        let va = reserve_and_map(h, MIB2, 2);
        let attrs = |p: *const c_void| {
            let mut a = aclrtPtrAttributes {
                location: aclrtMemLocation { id: 99, r#type: 99 },
                pageSize: 0,
                rsv: [7; 4],
            };
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { aclrtPointerGetAttributes(p, &mut a) }, ACL_SUCCESS);
            (a.location.r#type, a.location.id, a.pageSize)
        };
        // ACL_MEM_LOCATION_TYPE_DEVICE (1) on device 2, pages of the 2 MiB granularity.
        assert_eq!(attrs(va.cast::<u8>().wrapping_add(4096).cast()), (1, 2, MIB2 as u32));
        let check = |mem_type: u32| {
            let list = [va];
            let mut result = 9u32;
            // SAFETY: a list of one address and a valid out-pointer.
            let rc = unsafe { aclrtCheckMemType(list.as_ptr().cast_mut(), 1, mem_type, &mut result, 0) };
            assert_eq!(rc, ACL_SUCCESS);
            result
        };
        assert_eq!(check(0x10), 1, "ACL_RT_MEM_TYPE_RSVD");
        assert_eq!(check(0x2), 1, "ACL_RT_MEM_TYPE_DEV");
        unmap_and_release(va, h);
        // ACL_MEM_LOCATION_TYPE_UNREGISTERED (2) once unmapped.
        assert_eq!(attrs(va).0, 2);
        assert_eq!(aclrtResetDevice(2), ACL_SUCCESS);
    });
}
