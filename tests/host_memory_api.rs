//! Host memory registration and pointer attributes through the C entry points: the caller's own
//! page-aligned memory registered, copied into and out of as host and as device memory, its
//! device pointer, the attributes of every kind of pointer (device, pinned host, registered,
//! imported IPC, unknown) and how they change back, the bad-input codes, the capability and
//! type queries, the usage report, and a C program doing the same through the installed ABI.

use std::ffi::{c_char, c_void};
use std::path::PathBuf;
use std::process::Command;
use std::ptr::{null, null_mut};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::host_memory::*;
use ascendless::ffi::acl_rt::ipc::{aclrtIpcMemClose, aclrtIpcMemGetExportKey, aclrtIpcMemImportByKey};
use ascendless::ffi::acl_rt::location::aclrtMemLocationType::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::pointer::*;
use ascendless::ffi::acl_rt::stream::*;

const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const DEFAULT: i32 = 4;
const HUGE_ONLY: u32 = 1;
const NORMAL_ONLY: u32 = 2;
const MIB2: u32 = 2 << 20;
const PAGE: usize = 4096;
const MAPPED: u32 = ACL_HOST_REG_MAPPED as u32;
const PINNED: u32 = ACL_HOST_REG_PINNED as u32;

/// The caller's own page-aligned heap memory (`posix_memalign`), freed on drop.
struct UserBuf {
    ptr: *mut c_void,
    len: usize,
}

impl UserBuf {
    fn new(len: usize) -> UserBuf {
        let mut ptr = null_mut();
        // SAFETY: a valid out-pointer; the alignment is a power of two multiple of void*.
        assert_eq!(unsafe { libc::posix_memalign(&mut ptr, PAGE, len) }, 0);
        // SAFETY: `len` bytes just allocated.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, len) };
        UserBuf { ptr, len }
    }

    fn at(&self, offset: usize) -> *mut c_void {
        // SAFETY: offsets used stay inside (or one past) the buffer.
        unsafe { self.ptr.byte_add(offset) }
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes owned by this buffer; the tests read them only after copies ran.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for UserBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by posix_memalign and freed once.
        unsafe { libc::free(self.ptr) };
    }
}

fn on_device<R: Send + 'static>(device: i32, f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(move || {
        assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
        let r = f();
        assert_eq!(aclrtResetDevice(device), ACL_SUCCESS);
        r
    })
    .join()
    .unwrap()
}

fn malloc(size: usize, policy: u32) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, policy) }, ACL_SUCCESS);
    p
}

fn malloc_host(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, ACL_SUCCESS);
    p
}

/// `(location type, id, page size)` of `p`, checking the reserved words are 0.
fn attrs(p: *const c_void) -> (u32, u32, u32) {
    let mut a = aclrtPtrAttributes { location: aclrtMemLocation_zero(), pageSize: 7, rsv: [9; 4] };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtPointerGetAttributes(p, &mut a) }, ACL_SUCCESS);
    assert_eq!(a.rsv, [0; 4]);
    (a.location.r#type, a.location.id, a.pageSize)
}

#[allow(non_snake_case)]
fn aclrtMemLocation_zero() -> ascendless::ffi::acl_rt::location::aclrtMemLocation {
    ascendless::ffi::acl_rt::location::aclrtMemLocation { id: 99, r#type: 99 }
}

const HOST: u32 = ACL_MEM_LOCATION_TYPE_HOST as u32;
const DEVICE: u32 = ACL_MEM_LOCATION_TYPE_DEVICE as u32;
const UNREGISTERED: u32 = ACL_MEM_LOCATION_TYPE_UNREGISTERED as u32;

#[test]
fn a_registered_malloc_buffer_is_copied_into_and_out_of_as_host_and_as_device_memory() {
    on_device(1, || {
        let size = 64 * 1024;
        let mut buf = UserBuf::new(size);
        let dev = malloc(size, NORMAL_ONLY);
        let mut stream = null_mut();
        let mut devptr = null_mut();
        // SAFETY: valid pointers; `buf` outlives its registration and every synchronised copy.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpy(buf.ptr, size, dev, size, D2D),
                ACL_ERROR_RT_PARAM_INVALID,
                "plain host memory is not a device end"
            );
            assert_eq!(aclrtHostRegister(buf.ptr, size as u64, 0, &mut devptr), ACL_SUCCESS);
            assert_eq!(devptr, buf.ptr, "the device pointer is the host address");
            let mut inner = null_mut();
            assert_eq!(aclrtHostGetDevicePointer(buf.at(100), &mut inner, 0), ACL_SUCCESS);
            assert_eq!(inner, buf.at(100));

            // Host end: the caller fills it, the runtime copies it to device memory and back.
            for (i, b) in buf.bytes().iter_mut().enumerate() {
                *b = (i * 7 % 253) as u8;
            }
            let want = buf.bytes().to_vec();
            assert_eq!(aclrtMemcpy(dev, size, buf.ptr, size, H2D), ACL_SUCCESS);
            buf.bytes().fill(0);
            assert_eq!(aclrtMemcpyAsync(buf.ptr, size, dev, size, D2H, stream), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
            assert_eq!(buf.bytes(), &want[..]);

            // Device end, through the device pointer: device-to-device both ways.
            assert_eq!(aclrtMemset(dev, size, 0x5A, size / 2), ACL_SUCCESS);
            assert_eq!(aclrtMemcpyAsync(devptr, size, dev, size / 2, D2D, stream), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
            assert!(buf.bytes()[..size / 2].iter().all(|&b| b == 0x5A));
            assert_eq!(buf.bytes()[size / 2..], want[size / 2..]);
            buf.bytes()[..16].copy_from_slice(b"through-devptr!!");
            assert_eq!(aclrtMemcpy(dev.byte_add(PAGE), 16, devptr, 16, D2D), ACL_SUCCESS);
            let mut back = [0u8; 16];
            assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 16, dev.byte_add(PAGE), 16, D2H), ACL_SUCCESS);
            assert_eq!(&back, b"through-devptr!!");
            assert_eq!(aclrtMemcpy(devptr, 16, back.as_ptr().cast(), 16, DEFAULT), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpy(buf.at(size - 8), 16, dev, 16, D2D),
                ACL_ERROR_RT_PARAM_INVALID,
                "runs past the registration"
            );

            assert_eq!(attrs(buf.ptr), (HOST, 0, PAGE as u32));
            assert_eq!(attrs(buf.at(size - 1)), (HOST, 0, PAGE as u32));

            assert_eq!(aclrtHostUnregister(buf.at(PAGE)), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "interior");
            assert_eq!(aclrtHostUnregister(buf.ptr), ACL_SUCCESS);
            assert_eq!(attrs(buf.ptr).0, UNREGISTERED, "the attributes change back");
            assert_eq!(aclrtMemcpy(buf.ptr, size, dev, 16, D2D), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtHostGetDevicePointer(buf.ptr, &mut inner, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtHostUnregister(buf.ptr), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "twice");
            // Still plain host memory for host-kind copies.
            assert_eq!(aclrtMemcpy(buf.ptr, size, dev, 16, D2H), ACL_SUCCESS);

            assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        }
    });
}

#[test]
fn v2_registration_maps_and_pins_as_asked() {
    on_device(2, || {
        let pageable = UserBuf::new(4 * PAGE);
        let pinned = malloc_host(2 * PAGE);
        let dev = malloc(PAGE, NORMAL_ONLY);
        let mut p = null_mut();
        // SAFETY: valid pointers; the buffers outlive their registrations.
        unsafe {
            assert_eq!(aclrtHostRegisterV2(pageable.ptr, 2 * PAGE as u64, PINNED), ACL_SUCCESS);
            assert_eq!(
                aclrtHostGetDevicePointer(pageable.ptr, &mut p, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "pinned only: no device address"
            );
            assert_eq!(attrs(pageable.ptr).0, HOST);
            assert_eq!(aclrtMemcpy(pageable.ptr, 16, dev, 16, D2D), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtHostRegisterV2(pageable.at(2 * PAGE), 2 * PAGE as u64, MAPPED | PINNED),
                ACL_SUCCESS
            );
            assert_eq!(aclrtHostGetDevicePointer(pageable.at(3 * PAGE), &mut p, 0), ACL_SUCCESS);
            assert_eq!(p, pageable.at(3 * PAGE));
            assert_eq!(
                aclrtHostRegisterV2(pageable.at(PAGE), 2 * PAGE as u64, MAPPED),
                ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
            );

            // aclrtMallocHost memory is pinned already: it may be mapped (the vendor's sample),
            // not pinned again, and it stays pinned host memory after unregistering.
            assert_eq!(aclrtHostRegisterV2(pinned, 2 * PAGE as u64, PINNED), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtHostRegisterV2(pinned, 2 * PAGE as u64, MAPPED), ACL_SUCCESS);
            assert_eq!(aclrtHostGetDevicePointer(pinned, &mut p, 0), ACL_SUCCESS);
            assert_eq!(p, pinned);
            assert_eq!(aclrtMemcpy(dev, 16, p, 16, D2D), ACL_SUCCESS);
            assert_eq!(aclrtHostUnregister(pinned), ACL_SUCCESS);
            assert_eq!(attrs(pinned), (HOST, 0, PAGE as u32));

            assert_eq!(aclrtHostUnregister(pageable.ptr), ACL_SUCCESS);
            assert_eq!(aclrtHostUnregister(pageable.at(2 * PAGE)), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        }
    });
}

#[test]
fn every_kind_of_pointer_has_truthful_attributes() {
    on_device(3, || {
        let huge = malloc(100, HUGE_ONLY);
        let normal = malloc(100, NORMAL_ONLY);
        let host = malloc_host(100);
        let stack = [0u8; 16];
        let heap = Box::new([0u8; 16]);
        let mut key: [c_char; 65] = [0; 65];
        let mut imported = null_mut();
        // SAFETY: valid pointers and buffers of the stated sizes.
        unsafe {
            assert_eq!(attrs(huge), (DEVICE, 3, MIB2));
            assert_eq!(attrs(huge.byte_add(99)), (DEVICE, 3, MIB2));
            assert_eq!(attrs(normal), (DEVICE, 3, PAGE as u32));
            assert_eq!(attrs(host.byte_add(50)), (HOST, 0, PAGE as u32));
            assert_eq!(attrs(stack.as_ptr().cast()), (UNREGISTERED, 0, PAGE as u32));
            assert_eq!(attrs(heap.as_ptr().cast()).0, UNREGISTERED);
            assert_eq!(attrs(0x10 as *const c_void).0, UNREGISTERED, "nothing mapped there");

            // IPC memory imported in this process (the exporter may import its own export).
            assert_eq!(aclrtIpcMemGetExportKey(normal, PAGE, key.as_mut_ptr(), 65, 1), ACL_SUCCESS);
            assert_eq!(aclrtIpcMemImportByKey(&mut imported, key.as_ptr(), 0), ACL_SUCCESS);
            assert_ne!(imported, normal);
            assert_eq!(attrs(imported), (DEVICE, 3, PAGE as u32));
            assert_eq!(aclrtIpcMemClose(key.as_ptr()), ACL_SUCCESS, "the import");
            assert_eq!(attrs(imported).0, UNREGISTERED, "closed");
            assert_eq!(aclrtIpcMemClose(key.as_ptr()), ACL_SUCCESS, "the export");

            let mut a = aclrtPtrAttributes { location: aclrtMemLocation_zero(), pageSize: 0, rsv: [0; 4] };
            assert_eq!(aclrtPointerGetAttributes(null(), &mut a), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtPointerGetAttributes(huge, null_mut()), ACL_ERROR_INVALID_PARAM);

            assert_eq!(aclrtFree(huge), ACL_SUCCESS);
            assert_eq!(attrs(huge).0, UNREGISTERED, "freed");
            assert_eq!(aclrtFree(normal), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
            assert_eq!(attrs(host).0, UNREGISTERED, "freed");
        }
    });
    // Attributes need no current device, as the vendor's.
    let heap = Box::new([0u8; 4]);
    assert_eq!(attrs(heap.as_ptr().cast()).0, UNREGISTERED);
}

#[test]
fn registration_bad_inputs_get_the_vendors_codes() {
    on_device(4, || {
        let buf = UserBuf::new(4 * PAGE);
        let dev = malloc(PAGE, NORMAL_ONLY);
        let mut p = null_mut();
        // SAFETY: NULL or valid pointers; the buffer outlives every registration.
        unsafe {
            let cases = [
                ("V1 NULL ptr", aclrtHostRegister(null_mut(), 4096, 0, &mut p), ACL_ERROR_INVALID_PARAM),
                ("V1 NULL devPtr", aclrtHostRegister(buf.ptr, 4096, 0, null_mut()), ACL_ERROR_INVALID_PARAM),
                ("V1 size 0", aclrtHostRegister(buf.ptr, 0, 0, &mut p), ACL_ERROR_INVALID_PARAM),
                (
                    "V1 IOMEMORY",
                    aclrtHostRegister(buf.ptr, 4096, 4, &mut p),
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                ),
                (
                    "V1 READONLY",
                    aclrtHostRegister(buf.ptr, 4096, 8, &mut p),
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                ),
                ("V1 type 3", aclrtHostRegister(buf.ptr, 4096, 3, &mut p), ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
                ("V1 unaligned", aclrtHostRegister(buf.at(8), 64, 0, &mut p), ACL_ERROR_RT_PARAM_INVALID),
                ("V1 device memory", aclrtHostRegister(dev, 4096, 0, &mut p), ACL_ERROR_RT_PARAM_INVALID),
                ("V1 wraps", aclrtHostRegister(buf.ptr, u64::MAX, 0, &mut p), ACL_ERROR_RT_PARAM_INVALID),
                ("V2 NULL ptr", aclrtHostRegisterV2(null_mut(), 4096, MAPPED), ACL_ERROR_INVALID_PARAM),
                ("V2 size 0", aclrtHostRegisterV2(buf.ptr, 0, MAPPED), ACL_ERROR_INVALID_PARAM),
                ("V2 flag 0", aclrtHostRegisterV2(buf.ptr, 4096, 0), ACL_ERROR_RT_PARAM_INVALID),
                ("V2 flag 1", aclrtHostRegisterV2(buf.ptr, 4096, 1), ACL_ERROR_RT_PARAM_INVALID),
                ("V2 IOMEMORY", aclrtHostRegisterV2(buf.ptr, 4096, 4), ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
                (
                    "V2 READONLY",
                    aclrtHostRegisterV2(buf.ptr, 4096, MAPPED | 8),
                    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                ),
                ("get NULL host", aclrtHostGetDevicePointer(null_mut(), &mut p, 0), ACL_ERROR_INVALID_PARAM),
                ("get NULL out", aclrtHostGetDevicePointer(buf.ptr, null_mut(), 0), ACL_ERROR_INVALID_PARAM),
                ("get unknown", aclrtHostGetDevicePointer(buf.ptr, &mut p, 0), ACL_ERROR_RT_PARAM_INVALID),
                ("unregister NULL", aclrtHostUnregister(null_mut()), ACL_ERROR_INVALID_PARAM),
                ("unregister unknown", aclrtHostUnregister(buf.ptr), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED),
            ];
            let wrong: Vec<_> = cases.iter().filter(|(_, got, want)| got != want).collect();
            assert!(wrong.is_empty(), "{wrong:#?}");

            assert_eq!(aclrtHostRegister(buf.ptr, 2 * PAGE as u64, 0, &mut p), ACL_SUCCESS);
            assert_eq!(aclrtHostGetDevicePointer(buf.ptr, &mut p, 1), ACL_ERROR_INVALID_PARAM, "flag 1");
            for (at, len) in [(0, 2 * PAGE), (PAGE, PAGE), (PAGE, 3 * PAGE)] {
                assert_eq!(
                    aclrtHostRegister(buf.at(at), len as u64, 0, &mut p),
                    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                    "overlap at {at} + {len}"
                );
            }
            assert_eq!(
                aclrtHostRegisterV2(buf.at(2 * PAGE), 2 * PAGE as u64, MAPPED),
                ACL_SUCCESS,
                "adjacent"
            );
            assert_eq!(aclrtHostUnregister(buf.ptr), ACL_SUCCESS);
            assert_eq!(aclrtHostUnregister(buf.at(2 * PAGE)), ACL_SUCCESS);
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        }
    });
    // Without a current device (the vendor's context check).
    let buf = UserBuf::new(PAGE);
    let mut p = null_mut();
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(aclrtHostRegister(buf.ptr, 4096, 0, &mut p), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtHostRegisterV2(buf.ptr, 4096, MAPPED), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtHostUnregister(buf.ptr), ACL_ERROR_RT_CONTEXT_NULL);
    }
}

#[test]
fn a_device_reset_ends_its_registrations() {
    let buf = UserBuf::new(PAGE);
    let addr = buf.ptr.addr();
    on_device(6, move || {
        let mut p = null_mut();
        let ptr = std::ptr::with_exposed_provenance_mut::<c_void>(addr);
        // SAFETY: valid pointers; the buffer outlives the registration.
        assert_eq!(unsafe { aclrtHostRegister(ptr, 4096, 0, &mut p) }, ACL_SUCCESS);
        assert_eq!(attrs(ptr).0, HOST);
    });
    assert_eq!(attrs(buf.ptr).0, UNREGISTERED, "device 6 was reset");
}

#[test]
fn map_capabilities_name_the_engines_that_reach_registered_memory() {
    on_device(0, || {
        let ask = |device: u32, hac: u32| {
            let mut c = aclrtHostMemMapCapability::ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
            // SAFETY: a valid out-pointer.
            let code = unsafe { aclrtHostMemMapCapabilities(device, hac, &mut c) };
            (code, c as u32)
        };
        let supported: Vec<u32> = (0..10).filter(|&h| ask(0, h) == (ACL_SUCCESS, 1)).collect();
        assert_eq!(supported, [0, 4, 6], "STARS, PCIe DMA, SDMA");
        assert_eq!(ask(0, 2), (ACL_SUCCESS, 0), "no AI Core here");
        assert_eq!(ask(0, 10).0, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(ask(64, 0).0, ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(ask(u32::MAX, 0).0, ACL_ERROR_RT_INVALID_DEVICEID);
        // SAFETY: NULL is refused before any write.
        assert_eq!(unsafe { aclrtHostMemMapCapabilities(0, 0, null_mut()) }, ACL_ERROR_INVALID_PARAM);
    });
}

#[test]
fn check_mem_type_and_usage_info() {
    on_device(5, || {
        let a = malloc(3 * PAGE, NORMAL_ONLY);
        let b = malloc(100, HUGE_ONLY);
        let host = malloc_host(100);
        let mut result = 7u32;
        let mut infos: Vec<aclrtMemUsageInfo> = (0..4)
            .map(|_| aclrtMemUsageInfo { name: [1; 32], curMemSize: 1, memPeakSize: 1, reserved: [1; 8] })
            .collect();
        let mut n = 99usize;
        // SAFETY: valid pointers and arrays of the stated sizes.
        unsafe {
            let mut devs = [a, b.byte_add(50)];
            let dev = ACL_RT_MEM_TYPE_DEV;
            assert_eq!(aclrtCheckMemType(devs.as_mut_ptr(), 2, dev, &mut result, 0), ACL_SUCCESS);
            assert_eq!(result, 1);
            let all = dev | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD;
            assert_eq!(aclrtCheckMemType(devs.as_mut_ptr(), 2, all, &mut result, 0), ACL_SUCCESS);
            assert_eq!(result, 1);
            let mut mixed = [a, host];
            assert_eq!(aclrtCheckMemType(mixed.as_mut_ptr(), 2, dev, &mut result, 0), ACL_SUCCESS);
            assert_eq!(result, 0, "pinned host memory is not device memory");
            assert_eq!(
                aclrtCheckMemType(devs.as_mut_ptr(), 2, ACL_RT_MEM_TYPE_DVPP, &mut result, 0),
                ACL_SUCCESS
            );
            assert_eq!(result, 0, "no DVPP memory here");
            let bad = [
                aclrtCheckMemType(devs.as_mut_ptr(), 2, dev, &mut result, 1),
                aclrtCheckMemType(devs.as_mut_ptr(), 0, dev, &mut result, 0),
                aclrtCheckMemType(devs.as_mut_ptr(), 2, 0x4, &mut result, 0),
            ];
            assert_eq!(bad, [ACL_ERROR_RT_PARAM_INVALID; 3]);
            assert_eq!(aclrtCheckMemType(null_mut(), 2, dev, &mut result, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtCheckMemType(devs.as_mut_ptr(), 2, dev, null_mut(), 0), ACL_ERROR_INVALID_PARAM);

            assert_eq!(aclrtGetMemUsageInfo(5, infos.as_mut_ptr(), 4, &mut n), ACL_SUCCESS);
            assert_eq!(n, 1);
            let app = &infos[0];
            let name: Vec<u8> = app.name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
            assert_eq!(name, b"APP");
            assert_eq!(app.name[3..], [0; 29]);
            assert_eq!(app.curMemSize, (3 * PAGE + MIB2 as usize) as u64);
            assert_eq!(app.memPeakSize, app.curMemSize);
            assert_eq!(app.reserved, [0; 8]);
            assert_eq!(infos[1].curMemSize, 1, "entries past outputNum are untouched");
            assert_eq!(aclrtFree(b), ACL_SUCCESS);
            assert_eq!(aclrtGetMemUsageInfo(5, infos.as_mut_ptr(), 1, &mut n), ACL_SUCCESS);
            assert_eq!(
                (n, infos[0].curMemSize, infos[0].memPeakSize),
                (1, 3 * PAGE as u64, (3 * PAGE + MIB2 as usize) as u64)
            );
            assert_eq!(aclrtGetMemUsageInfo(5, infos.as_mut_ptr(), 0, &mut n), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtGetMemUsageInfo(64, infos.as_mut_ptr(), 4, &mut n),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(aclrtGetMemUsageInfo(5, null_mut(), 4, &mut n), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtGetMemUsageInfo(5, infos.as_mut_ptr(), 4, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtFree(a), ACL_SUCCESS);
            assert_eq!(aclrtGetMemUsageInfo(5, infos.as_mut_ptr(), 4, &mut n), ACL_SUCCESS);
            assert_eq!(n, 0, "nothing held, nothing listed");
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
        }
    });
    let mut r = 0u32;
    let mut list = [8 as *mut c_void];
    // SAFETY: valid pointers.
    let code = unsafe { aclrtCheckMemType(list.as_mut_ptr(), 1, ACL_RT_MEM_TYPE_DEV, &mut r, 0) };
    assert_eq!(code, ACL_ERROR_RT_CONTEXT_NULL, "needs a current device, as the vendor's");
}

#[test]
fn mem_info_takes_the_vendors_eighteen_attributes() {
    on_device(7, || {
        let (mut free, mut total) = (0usize, 0usize);
        for attr in 0..=17 {
            // SAFETY: valid out-pointers.
            assert_eq!(unsafe { aclrtGetMemInfo(attr, &mut free, &mut total) }, ACL_SUCCESS, "attr {attr}");
            assert!(free <= total && total > 0);
        }
        // SAFETY: valid out-pointers, or NULL.
        unsafe {
            assert_eq!(aclrtGetMemInfo(18, &mut free, &mut total), ACL_ERROR_RT_INVALID_MEMORY_TYPE);
            assert_eq!(aclrtGetMemInfo(-1, &mut free, &mut total), ACL_ERROR_RT_INVALID_MEMORY_TYPE);
            assert_eq!(aclrtGetMemInfo(18, null_mut(), &mut total), ACL_ERROR_INVALID_PARAM, "NULL first");
        }
    });
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(
            aclrtGetMemInfo(18, &mut free, &mut total),
            ACL_ERROR_RT_INVALID_MEMORY_TYPE,
            "then the attr"
        );
        assert_eq!(aclrtGetMemInfo(0, &mut free, &mut total), ACL_ERROR_RT_CONTEXT_NULL, "then the device");
    }
}

/// The layouts C code sees are the vendor's (x86-64 and AArch64 LP64).
#[test]
fn struct_layouts_are_the_vendors() {
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<ascendless::ffi::acl_rt::location::aclrtMemLocation>(), 8);
    assert_eq!(size_of::<aclrtPtrAttributes>(), 28);
    assert_eq!(offset_of!(aclrtPtrAttributes, pageSize), 8);
    assert_eq!(offset_of!(aclrtPtrAttributes, rsv), 12);
    assert_eq!(size_of::<aclrtMemUsageInfo>(), 112);
    assert_eq!(offset_of!(aclrtMemUsageInfo, curMemSize), 32);
    assert_eq!(offset_of!(aclrtMemUsageInfo, memPeakSize), 40);
    assert_eq!(offset_of!(aclrtMemUsageInfo, reserved), 48);
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's output directory for this build (holds libascendless.so next to `deps/`).
fn lib_dir() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().to_path_buf()
}

/// tests/c/host_memory.c, built against the generated headers and the shared library (which
/// `cargo build --lib` makes; `make test` builds it first), registers `malloc`'d memory,
/// copies through it and reads attributes as a C user does.
#[test]
fn a_c_program_registers_copies_and_reads_attributes() {
    let lib = lib_dir().join("libascendless.so");
    assert!(lib.exists(), "{} was not built: run `cargo build --lib` (or `make test`)", lib.display());
    let dir = lib_dir().join("host-memory-tests");
    std::fs::create_dir_all(&dir).unwrap();
    // The library under the soname the executable will ask for.
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(&lib, &so).unwrap();
    let exe = dir.join("host_memory");
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg(root().join("tests/c/host_memory.c"))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).env("ASCEND_GLOBAL_LOG_LEVEL", "4").output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("0 failures"),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
