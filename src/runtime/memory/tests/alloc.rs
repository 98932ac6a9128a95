//! Allocation, capacity, free, device release, imports, mem info.

use std::sync::Arc;

use super::*;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::{
    ACL_ERROR_RT_INVALID_MEMORY_TYPE, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
};
use crate::runtime::memory::{self as api, AllocKind, MemFd};
use crate::sys::page_size;

#[test]
fn every_policy_gives_its_alignment_and_rounds_the_size() {
    let reg = Registry::new();
    for policy in 0..=7u32 {
        let huge = ![2, 5].contains(&policy);
        let align = if huge { HUGE_PAGE } else { page_size() };
        let before = reg.usage(0);
        let addr = reg.alloc_device(0, 1, policy, &roomy()).unwrap();
        assert_eq!(addr % align, 0, "policy {policy}");
        assert_eq!(reg.usage(0) - before, align as u64, "policy {policy} counts its rounded size");
        assert_eq!(alloc_at(&reg, addr).len, align);
    }
    let addr = reg.alloc_device(0, HUGE_PAGE + 1, HUGE_ONLY | 0x1000, &roomy()).unwrap();
    assert_eq!(alloc_at(&reg, addr).len, 2 * HUGE_PAGE);
}

#[test]
fn new_memory_is_zeroed_and_usable() {
    let reg = Registry::new();
    let d = reg.alloc_device(0, 5000, NORMAL_ONLY, &roomy()).unwrap();
    assert_eq!(peek(&reg, d, 5000), vec![0; 5000]);
    poke(&reg, d + 4990, &[1, 2, 3]);
    assert_eq!(peek(&reg, d + 4990, 3), [1, 2, 3]);
    let h = reg.alloc_host(3).unwrap();
    assert_eq!(h % page_size(), 0);
    assert_eq!(alloc_at(&reg, h).runtime_addr(), h, "pinned host memory is its own runtime view");
}

#[test]
fn size_0_and_bad_policies_are_refused() {
    let reg = Registry::new();
    assert_eq!(reg.alloc_device(0, 0, NORMAL_ONLY, &roomy()).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    assert_eq!(reg.alloc_host(0).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    for policy in [8, 0x200, 0x2000 | 2, 0x8000_0000] {
        let e = reg.alloc_device(0, 1, policy, &roomy()).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "policy {policy:#x}");
    }
    let e = reg.alloc_device(0, usize::MAX - 10, HUGE_ONLY, &roomy()).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert_eq!(reg.usage(0), 0, "failed allocations use nothing");
}

#[test]
fn capacity_is_enforced_per_device_and_freeing_returns_it() {
    let reg = Registry::new();
    let cap = limits(2 * HUGE_PAGE as u64);
    let a = reg.alloc_device(1, HUGE_PAGE, HUGE_ONLY, &cap).unwrap();
    let b = reg.alloc_device(1, 1, HUGE_ONLY, &cap).unwrap();
    let e = reg.alloc_device(1, 1, NORMAL_ONLY, &cap).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_MEMORY_ALLOCATION);
    let used = 2 * HUGE_PAGE;
    let wanted =
        format!("device 1 is out of memory: {used} bytes in use, {} requested, capacity {used}", page_size());
    assert!(e.message.contains(&wanted), "{}", e.message);
    // Another device has its own capacity; host memory counts against none.
    reg.alloc_device(2, HUGE_PAGE, HUGE_ONLY, &cap).unwrap();
    reg.alloc_host(HUGE_PAGE).unwrap();
    reg.free(a, AllocKind::Device).unwrap();
    assert_eq!(reg.usage(1), HUGE_PAGE as u64);
    reg.alloc_device(1, HUGE_PAGE, NORMAL_ONLY, &cap).unwrap();
    reg.free(b, AllocKind::Device).unwrap();
    assert_eq!(reg.usage(1), HUGE_PAGE as u64);
}

#[test]
fn free_says_why_it_refuses() {
    let reg = Registry::new();
    let d = reg.alloc_device(0, 100, NORMAL_ONLY, &roomy()).unwrap();
    let h = reg.alloc_host(100).unwrap();
    let refusal = |addr, kind| {
        let e = reg.free(addr, kind).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "{}", e.message);
        e.message
    };
    assert!(refusal(d + 8, AllocKind::Device).contains("points 8 bytes into the allocation"));
    assert!(refusal(h, AllocKind::Device).contains("host memory from aclrtMallocHost"));
    assert!(refusal(d, AllocKind::Host).contains("device memory from aclrtMalloc"));
    let stack_value = 0u64;
    assert!(
        refusal(&stack_value as *const u64 as usize, AllocKind::Device)
            .contains("not an address returned by aclrtMalloc")
    );
    assert_eq!(reg.free(0, AllocKind::Device).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    reg.free(d, AllocKind::Device).unwrap();
    reg.free(h, AllocKind::Host).unwrap();
    assert!(refusal(d, AllocKind::Device).contains("already freed (double free)"));
    assert!(refusal(h + 1, AllocKind::Host).contains("already freed"));
}

#[test]
fn the_freed_record_is_bounded() {
    let reg = Registry::new();
    for _ in 0..4100 {
        let h = reg.alloc_host(1).unwrap();
        reg.free(h, AllocKind::Host).unwrap();
    }
    assert_eq!(reg.freed_remembered(), 4096);
}

#[test]
fn releasing_a_device_frees_only_its_memory() {
    let reg = Registry::new();
    let mine: Vec<_> = (0..3).map(|_| reg.alloc_device(4, 10, NORMAL_ONLY, &roomy()).unwrap()).collect();
    let other = reg.alloc_device(5, 10, NORMAL_ONLY, &roomy()).unwrap();
    let host = reg.alloc_host(10).unwrap();
    assert_eq!(reg.release_device(4), 3);
    assert_eq!(reg.usage(4), 0);
    for a in mine {
        assert!(reg.find(a).is_none());
        assert!(reg.free(a, AllocKind::Device).unwrap_err().message.contains("already freed"));
    }
    assert!(reg.find(other).is_some() && reg.find(host).is_some());
    assert_eq!(reg.release_device(4), 0);
}

#[test]
fn imports_are_device_memory_that_only_close_releases() {
    let reg = Registry::new();
    let len = 2 * page_size();
    let file = MemFd::create("ascendless-test-export", len).unwrap();
    let exporter = Arc::new(crate::sys::mapping::Mapping::shared_rw(&file, len, 0).unwrap());
    crate::sys::span::RawSpan::of_mapping(&exporter, 10, 3).unwrap().write_slice(&[7, 8, 9]);
    let fd = MemFd::from(file.as_fd().try_clone_to_owned().unwrap());
    let addr = reg.register_import(6, fd, 0, len, false).unwrap();
    assert_eq!(peek(&reg, addr + 10, 3), [7, 8, 9], "the import shares the exporter's bytes");
    assert_eq!(alloc_at(&reg, addr).placement, Placement::Device(6));
    assert_eq!(reg.usage(6), 0, "imports do not count against capacity");
    assert!(reg.backing(addr + 1).unwrap().imported);
    for (at, kind) in [(addr, AllocKind::Device), (addr + 8, AllocKind::Device), (addr, AllocKind::Host)] {
        let e = reg.free(at, kind).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(e.message.contains("imported with aclrtIpcMemImportByKey"), "{}", e.message);
        assert!(e.message.contains("release it with aclrtIpcMemClose"), "{}", e.message);
    }
    assert_eq!(reg.release_device(6), 0, "a device reset leaves imports to the IPC layer");
    assert_eq!(reg.close_import(addr + 1).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    reg.close_import(addr).unwrap();
    assert_eq!(reg.close_import(addr).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    let e = reg.free(addr, AllocKind::Device).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
    assert!(!e.message.contains("double free"), "a closed import was never ours to free: {}", e.message);
    assert!(e.message.contains("already released with aclrtIpcMemClose"), "{}", e.message);
    let short = MemFd::create("ascendless-test-short", page_size()).unwrap();
    assert_eq!(reg.register_import(6, short, 0, len, false).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn an_import_may_start_inside_the_exported_file() {
    let reg = Registry::new();
    let page = page_size();
    let file = MemFd::create("ascendless-test-export", 3 * page).unwrap();
    let exporter = Arc::new(crate::sys::mapping::Mapping::shared_rw(&file, 3 * page, 0).unwrap());
    crate::sys::span::RawSpan::of_mapping(&exporter, page + 5, 2).unwrap().write_slice(&[4, 2]);
    let fd = MemFd::from(file.as_fd().try_clone_to_owned().unwrap());
    let addr = reg.register_import(1, fd, page as u64, page, false).unwrap();
    assert_eq!(peek(&reg, addr + 5, 2), [4, 2], "offset one page into the file");
    let fd = MemFd::from(file.as_fd().try_clone_to_owned().unwrap());
    let e = reg.register_import(1, fd, 2 * page as u64, 2 * page, false).unwrap_err();
    assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "past the end of the file");
    let fd = MemFd::from(file.as_fd().try_clone_to_owned().unwrap());
    assert_eq!(reg.register_import(1, fd, 100, page, false).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    reg.close_import(addr).unwrap();
}

#[test]
fn backing_names_the_file_behind_an_address() {
    let reg = Registry::new();
    let d = reg.alloc_device(0, 3 * page_size(), NORMAL_ONLY, &roomy()).unwrap();
    let b = reg.backing(d + page_size()).unwrap();
    assert_eq!((b.start, b.len, b.placement, b.imported), (d, 3 * page_size(), Placement::Device(0), false));
    assert_eq!(b.fd.size().unwrap(), 3 * page_size() as u64);
    assert!(reg.backing(d + 3 * page_size()).is_none());
}

#[test]
fn concurrent_allocations_and_frees_balance() {
    let reg = Arc::new(Registry::new());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let reg = Arc::clone(&reg);
            std::thread::spawn(move || {
                for i in 0..200 {
                    let a = reg.alloc_device(7, 1 + i, NORMAL_ONLY, &roomy()).unwrap();
                    reg.free(a, AllocKind::Device).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(reg.usage(7), 0);
}

/// The process-wide functions, on device ids no other test uses.
#[test]
fn the_process_wide_api_allocates_frees_and_reports_mem_info() {
    let cap = limits(8 * HUGE_PAGE as u64);
    let a = api::alloc_device(901, 1, HUGE_ONLY, &cap).unwrap();
    assert_eq!(api::usage(901), HUGE_PAGE as u64);
    for attr in 0..=17 {
        assert_eq!(api::mem_info(901, attr, &cap).unwrap(), (7 * HUGE_PAGE as u64, 8 * HUGE_PAGE as u64));
    }
    for attr in [-1, 18] {
        assert_eq!(api::mem_info(901, attr, &cap).unwrap_err().code, ACL_ERROR_RT_INVALID_MEMORY_TYPE);
    }
    assert_eq!(api::backing(a).unwrap().placement, Placement::Device(901));
    api::free(a, AllocKind::Device).unwrap();
    assert_eq!(api::mem_info(901, 1, &cap).unwrap(), (8 * HUGE_PAGE as u64, 8 * HUGE_PAGE as u64));
    let h = api::alloc_host(10).unwrap();
    api::free(h, AllocKind::Host).unwrap();
    api::alloc_device(902, 10, NORMAL_ONLY, &cap).unwrap();
    assert_eq!(api::release_device(902), 1);
    assert_eq!(api::usage(902), 0);
}
