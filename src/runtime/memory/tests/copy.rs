//! Copy and memset planning.

use std::cell::RefCell;

use super::*;
use crate::error::AclError;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::runtime::memory::{AllocKind, CopyPlan, HostRange, RawSpan, ReadyCopy, ReadyFill};

const H2H: i32 = 0;
const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const DEFAULT: i32 = 4;
const H2BUF2D: i32 = 5;
const INNER: i32 = 6;
const INTER: i32 = 7;

/// A plan whose ends the registry resolved itself: vouching must not be asked for.
fn run_owned(plan: CopyPlan) {
    plan.vouch(|r| panic!("asked to vouch for {r:?}, which the registry owns")).run();
}

fn copy(reg: &Registry, dst: usize, src: usize, count: usize, kind: i32) {
    run_owned(reg.plan_copy(dst, count, src, count, kind).unwrap());
}

fn refused(result: Result<impl std::fmt::Debug, AclError>, code: i32, says: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.code, code, "{}", e.message);
    assert!(e.message.contains(says), "{:?} does not say {says:?}", e.message);
}

struct Setup {
    reg: Registry,
    dev: usize,
    dev2: usize,
    host: usize,
}

fn setup() -> Setup {
    let reg = Registry::new();
    let dev = reg.alloc_device(0, 8192, NORMAL_ONLY, &roomy()).unwrap();
    let dev2 = reg.alloc_device(1, 8192, HUGE_ONLY, &roomy()).unwrap();
    let host = reg.alloc_host(8192).unwrap();
    Setup { reg, dev, dev2, host }
}

#[test]
fn every_kind_moves_bytes_between_registered_memory() {
    let Setup { reg, dev, dev2, host } = setup();
    poke(&reg, host, b"hello");
    copy(&reg, dev, host, 5, H2D);
    copy(&reg, dev2 + 100, dev, 5, D2D);
    copy(&reg, dev + 200, dev2 + 100, 5, INNER);
    copy(&reg, dev2 + 300, dev + 200, 5, INTER);
    copy(&reg, dev + 400, host, 5, H2BUF2D);
    copy(&reg, host + 1000, dev2 + 300, 5, D2H);
    copy(&reg, host + 2000, host + 1000, 5, H2H);
    assert_eq!(peek(&reg, host + 2000, 5), b"hello");
    assert_eq!(peek(&reg, dev + 400, 5), b"hello");
}

#[test]
fn default_infers_each_end_from_the_registry() {
    let Setup { reg, dev, dev2, host } = setup();
    let (_keep, user) = foreign_host_buffer(&reg, 4096);
    poke(&reg, host, b"abc");
    copy(&reg, dev, host, 3, DEFAULT);
    copy(&reg, dev2, dev, 3, DEFAULT);
    copy(&reg, host + 10, dev2, 3, DEFAULT);
    assert_eq!(peek(&reg, host + 10, 3), b"abc");
    // An end in memory the registry does not know is host memory the caller vouches for.
    let asked = RefCell::new(Vec::new());
    let plan = reg.plan_copy(user, 3, dev2, 3, DEFAULT).unwrap();
    plan.vouch(|r| {
        asked.borrow_mut().push(r);
        vouch_foreign(&_keep, r)
    })
    .run();
    assert_eq!(*asked.borrow(), [HostRange { addr: user, len: 3, writable: true }]);
    assert_eq!(peek_foreign(&_keep, 3), b"abc");
}

/// The span for `r`, a range of the foreign host buffer `keep` (see `foreign_host_buffer`):
/// the foreign address is the runtime view, so the span comes from it.
fn vouch_foreign(keep: &Allocation, r: HostRange) -> RawSpan {
    let s =
        keep.runtime_span(keep.start + (r.addr - keep.runtime_addr()), r.len).expect("a range of the buffer");
    assert_eq!(s.addr(), r.addr);
    s
}

fn peek_foreign(keep: &Allocation, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    keep.runtime_span(keep.start, len).unwrap().read_into(&mut out);
    out
}

#[test]
fn user_host_ends_are_vouched_for_with_the_right_access() {
    let Setup { reg, dev, .. } = setup();
    let (keep, user) = foreign_host_buffer(&reg, 4096);
    keep.runtime_span(keep.start, 4).unwrap().write_slice(b"data");
    let asked = RefCell::new(Vec::new());
    let vouch = |r: HostRange| {
        asked.borrow_mut().push(r);
        vouch_foreign(&keep, r)
    };
    reg.plan_copy(dev, 4, user, 4, H2D).unwrap().vouch(vouch).run();
    reg.plan_copy(user + 8, 4, dev, 4, D2H).unwrap().vouch(vouch).run();
    reg.plan_copy(user + 16, 4, user, 4, H2H).unwrap().vouch(vouch).run();
    let range = |addr, writable| HostRange { addr, len: 4, writable };
    assert_eq!(
        *asked.borrow(),
        [range(user, false), range(user + 8, true), range(user + 16, true), range(user, false)]
    );
    assert_eq!(peek_foreign(&keep, 20), b"data\0\0\0\0data\0\0\0\0data");
}

#[test]
#[should_panic(expected = "is not the requested")]
fn a_span_for_another_range_is_a_bug() {
    let Setup { reg, dev, .. } = setup();
    let (keep, user) = foreign_host_buffer(&reg, 4096);
    reg.plan_copy(dev, 4, user, 4, H2D)
        .unwrap()
        .vouch(|r| vouch_foreign(&keep, HostRange { addr: r.addr + 1, ..r }));
}

#[test]
fn kinds_outside_0_to_7_are_refused() {
    let Setup { reg, dev, host, .. } = setup();
    for kind in [-1, 8, 100] {
        refused(reg.plan_copy(dev, 4, host, 4, kind), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpyKind");
        refused(reg.plan_copy(dev, 0, host, 0, kind), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpyKind");
    }
}

#[test]
fn count_0_is_a_no_op_and_null_is_refused_otherwise() {
    let Setup { reg, dev, .. } = setup();
    let plan = reg.plan_copy(0, 0, 0, 0, H2D).unwrap();
    assert!(plan.is_noop());
    run_owned(plan);
    refused(reg.plan_copy(0, 4, dev, 4, D2H), ACL_ERROR_INVALID_PARAM, "dst must not be NULL");
    refused(reg.plan_copy(dev, 4, 0, 4, H2D), ACL_ERROR_INVALID_PARAM, "src must not be NULL");
}

#[test]
fn count_beyond_dest_max_is_refused() {
    let Setup { reg, dev, host, .. } = setup();
    refused(reg.plan_copy(dev, 3, host, 4, H2D), ACL_ERROR_RT_PARAM_INVALID, "larger than destMax 3");
    reg.plan_copy(dev, 5, host, 4, H2D).unwrap();
}

#[test]
fn overlapping_ranges_are_refused() {
    let Setup { reg, dev, host, .. } = setup();
    refused(reg.plan_copy(dev + 4, 8, dev, 8, D2D), ACL_ERROR_RT_PARAM_INVALID, "overlap");
    refused(reg.plan_copy(dev, 8, dev + 7, 8, DEFAULT), ACL_ERROR_RT_PARAM_INVALID, "overlap");
    refused(reg.plan_copy(host, 8, host, 8, H2H), ACL_ERROR_RT_PARAM_INVALID, "overlap");
    copy(&reg, dev + 8, dev, 8, D2D); // adjacent is fine
}

#[test]
fn a_device_end_must_be_live_device_memory() {
    let Setup { reg, dev, host, .. } = setup();
    let stack = [0u8; 16];
    let foreign = stack.as_ptr() as usize;
    refused(
        reg.plan_copy(host, 4, host + 8, 4, H2D),
        ACL_ERROR_RT_PARAM_INVALID,
        "host memory (aclrtMallocHost",
    );
    refused(
        reg.plan_copy(foreign, 4, host, 4, H2D),
        ACL_ERROR_RT_PARAM_INVALID,
        "not device memory (freed?)",
    );
    refused(reg.plan_copy(host, 4, foreign, 4, D2H), ACL_ERROR_RT_PARAM_INVALID, "src");
    refused(reg.plan_copy(dev + 8190, 4, host, 4, H2D), ACL_ERROR_RT_PARAM_INVALID, "runs past the end");
    let gone = reg.alloc_device(0, 100, NORMAL_ONLY, &roomy()).unwrap();
    reg.free(gone, AllocKind::Device).unwrap();
    refused(reg.plan_copy(dev, 4, gone + 1, 4, D2D), ACL_ERROR_RT_PARAM_INVALID, "not device memory (freed:");
}

#[test]
fn a_host_end_must_not_be_device_memory() {
    let Setup { reg, dev, host, .. } = setup();
    let (_keep, user) = foreign_host_buffer(&reg, 4096);
    let says = "kind says host but this is device memory";
    refused(reg.plan_copy(dev, 4, host, 4, D2H), ACL_ERROR_RT_PARAM_INVALID, says);
    refused(reg.plan_copy(dev, 4, dev + 100, 4, H2D), ACL_ERROR_RT_PARAM_INVALID, says);
    refused(reg.plan_copy(user, 4, dev + 4, 4, H2H), ACL_ERROR_RT_PARAM_INVALID, says);
    // A host range that starts outside our memory and runs into device memory is caught too.
    let mut start = dev - 8;
    while let Some(a) = reg.find(start) {
        start = a.start - 8;
    }
    let count = dev + 8 - start;
    let dst = vec![0u8; count];
    refused(reg.plan_copy(dst.as_ptr() as usize, count, start, count, H2H), ACL_ERROR_RT_PARAM_INVALID, says);
}

#[test]
fn ranges_that_wrap_the_address_space_are_refused() {
    let Setup { reg, dev, .. } = setup();
    refused(reg.plan_copy(usize::MAX - 2, 8, dev, 8, DEFAULT), ACL_ERROR_RT_PARAM_INVALID, "wraps");
    refused(reg.plan_memset(usize::MAX - 2, 8, 0, 8), ACL_ERROR_RT_PARAM_INVALID, "wraps");
}

#[test]
fn memset_fills_device_or_host_memory_with_the_low_byte() {
    let Setup { reg, dev, host, .. } = setup();
    let fill = |addr, value, count| {
        reg.plan_memset(addr, count, value, count).unwrap().vouch(|r| panic!("vouch for {r:?}")).run()
    };
    fill(dev + 1, 0x1AB, 3);
    assert_eq!(peek(&reg, dev, 5), [0, 0xAB, 0xAB, 0xAB, 0]);
    fill(host, -1, 2);
    assert_eq!(peek(&reg, host, 3), [0xFF, 0xFF, 0]);
    let (keep, user) = foreign_host_buffer(&reg, 4096);
    let asked = RefCell::new(None);
    reg.plan_memset(user, 4, 7, 4)
        .unwrap()
        .vouch(|r| {
            *asked.borrow_mut() = Some(r);
            vouch_foreign(&keep, r)
        })
        .run();
    assert_eq!(*asked.borrow(), Some(HostRange { addr: user, len: 4, writable: true }));
    assert_eq!(peek_foreign(&keep, 5), [7, 7, 7, 7, 0]);
}

#[test]
fn memset_checks_its_arguments() {
    let Setup { reg, dev, .. } = setup();
    assert!(reg.plan_memset(0, 0, 1, 0).unwrap().is_noop());
    refused(reg.plan_memset(0, 4, 1, 4), ACL_ERROR_INVALID_PARAM, "devPtr must not be NULL");
    refused(reg.plan_memset(dev, 3, 1, 4), ACL_ERROR_RT_PARAM_INVALID, "larger than maxCount 3");
    refused(reg.plan_memset(dev + 8190, 4, 1, 4), ACL_ERROR_RT_PARAM_INVALID, "runs past the end");
}

#[test]
fn a_plan_keeps_its_memory_alive_across_a_free() {
    let Setup { reg, dev, host, .. } = setup();
    poke(&reg, dev, b"survives");
    let queued: ReadyCopy = reg.plan_copy(host, 8, dev, 8, D2H).unwrap().vouch(|_| unreachable!());
    let fill: ReadyFill = reg.plan_memset(dev + 100, 1, 1, 1).unwrap().vouch(|_| unreachable!());
    reg.free(dev, AllocKind::Device).unwrap();
    assert_eq!(reg.usage(0), 0, "the capacity is returned at once");
    refused(reg.plan_copy(host, 8, dev, 8, D2H), ACL_ERROR_RT_PARAM_INVALID, "not device memory (freed:");
    // The queued work runs later, on another thread, on memory the user already freed.
    std::thread::spawn(move || {
        queued.run();
        fill.run();
    })
    .join()
    .unwrap();
    assert_eq!(peek(&reg, host, 8), b"survives");
}

#[test]
fn ready_work_can_cross_threads() {
    fn assert_send<T: Send + 'static>() {}
    assert_send::<ReadyCopy>();
    assert_send::<ReadyFill>();
    assert_send::<CopyPlan>();
}

#[test]
fn strict_device_memory_is_copied_through_its_runtime_view() {
    let reg = Registry::new();
    let strict = Limits { capacity: 1 << 30, strict: true };
    let a = reg.alloc_device(0, 4096, NORMAL_ONLY, &strict).unwrap();
    let b = reg.alloc_device(0, 4096, HUGE_ONLY, &strict).unwrap();
    assert_eq!(b % HUGE_PAGE, 0);
    let host = reg.alloc_host(4096).unwrap();
    poke(&reg, host, b"strict");
    copy(&reg, a, host, 6, H2D);
    copy(&reg, b, a, 6, D2D);
    copy(&reg, host + 100, b, 6, D2H);
    assert_eq!(peek(&reg, host + 100, 6), b"strict");
    let view = alloc_at(&reg, a);
    assert_ne!(view.runtime_addr(), a, "strict users get a separate, inaccessible view");
}
