//! Batches, 2D copies, 32-bit fills and managed memory in the core.

use std::cell::RefCell;

use super::*;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::runtime::memory::batch::{
    BatchArgs, BatchAttr, BatchForm, LOC_DEVICE, LOC_HOST, LOC_MANAGED, MemLoc,
};
use crate::runtime::memory::copy2d::Shape;
use crate::runtime::memory::managed::{Location, ManagedState};
use crate::runtime::memory::{HostRange, RawSpan};

fn vouch_foreign(keep: &Allocation, r: HostRange) -> RawSpan {
    keep.runtime_span(keep.start + (r.addr - keep.runtime_addr()), r.len).expect("a range of the buffer")
}

fn attr(dst: (u32, u32), src: (u32, u32)) -> BatchAttr {
    BatchAttr {
        dst: MemLoc { kind: dst.0, id: dst.1 },
        src: MemLoc { kind: src.0, id: src.1 },
        reserved_zero: true,
    }
}

/// One copy: destination, source, length.
type Copy3 = (usize, usize, usize);

/// The arrays of a batch of `(dst, src, len)` copies under one attribute per group.
struct Arrays {
    dsts: Vec<usize>,
    maxs: Vec<usize>,
    srcs: Vec<usize>,
    sizes: Vec<usize>,
    attrs: Vec<BatchAttr>,
    idxs: Vec<usize>,
}

impl Arrays {
    fn new(groups: &[(BatchAttr, Vec<Copy3>)]) -> Arrays {
        let mut a =
            Arrays { dsts: vec![], maxs: vec![], srcs: vec![], sizes: vec![], attrs: vec![], idxs: vec![] };
        for (at, copies) in groups {
            a.idxs.push(a.dsts.len());
            a.attrs.push(*at);
            for &(d, s, n) in copies {
                a.dsts.push(d);
                a.srcs.push(s);
                a.maxs.push(n);
                a.sizes.push(n);
            }
        }
        a
    }

    fn args(&self) -> BatchArgs<'_> {
        BatchArgs {
            dsts: &self.dsts,
            dest_maxs: &self.maxs,
            srcs: &self.srcs,
            sizes: &self.sizes,
            attrs: &self.attrs,
            attr_indexes: &self.idxs,
        }
    }
}

const D: (u32, u32) = (LOC_DEVICE, 4);
const H: (u32, u32) = (LOC_HOST, 0);

#[test]
fn a_batch_holds_one_span_per_buffer_and_moves_every_block() {
    let reg = Registry::new();
    let dev = reg.alloc_device(4, 64 * 64, NORMAL_ONLY, &roomy()).unwrap();
    let pinned = reg.alloc_host(64 * 64).unwrap();
    let (keep, user) = foreign_host_buffer(&reg, 64 * 64);
    let data: Vec<u8> = (0..64 * 64).map(|i| (i % 253) as u8).collect();
    keep.runtime_span(keep.start, data.len()).unwrap().write_slice(&data);
    // Blocks of the plain buffer in order, written to the device in reverse order.
    let up: Vec<_> = (0..64).map(|i| (dev + (63 - i) * 64, user + i * 64, 64)).collect();
    let a = Arrays::new(&[(attr(D, H), up)]);
    let plan = reg.plan_batch(&a.args(), BatchForm::Sync).unwrap().unwrap();
    assert!(plan.touches_user_memory());
    let asked = RefCell::new(Vec::new());
    let ready = plan.vouch(|r| {
        asked.borrow_mut().push(r);
        vouch_foreign(&keep, r)
    });
    assert_eq!(
        *asked.borrow(),
        [HostRange { addr: user, len: 64 * 64, writable: false }],
        "one span for the buffer"
    );
    assert_eq!(ready.len(), 64);
    ready.run();
    let on_dev = peek(&reg, dev, 64 * 64);
    for i in 0..64 {
        assert_eq!(on_dev[(63 - i) * 64..(64 - i) * 64], data[i * 64..(i + 1) * 64]);
    }
    // Device to pinned host: both ends the registry's own, nothing to vouch for.
    let down: Vec<_> = (0..64).map(|i| (pinned + i * 64, dev + i * 64, 64)).collect();
    let a = Arrays::new(&[(attr(H, D), down)]);
    let plan = reg.plan_batch(&a.args(), BatchForm::Async).unwrap().unwrap();
    assert!(!plan.touches_user_memory());
    plan.vouch(|r| panic!("asked to vouch for {r:?}")).run();
    assert_eq!(peek(&reg, pinned, 64 * 64), on_dev);
}

#[test]
fn the_failure_index_names_the_copy_only_for_location_and_direction() {
    let reg = Registry::new();
    let dev = reg.alloc_device(4, 4096, NORMAL_ONLY, &roomy()).unwrap();
    let dev2 = reg.alloc_device(4, 4096, NORMAL_ONLY, &roomy()).unwrap();
    let host = reg.alloc_host(4096).unwrap();
    let fail = |a: &Arrays, form| {
        let e = reg.plan_batch(&a.args(), form).unwrap_err();
        (e.error.code, e.index)
    };
    // Device to device, at index 1.
    let a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8)]), (attr(D, D), vec![(dev2, dev, 8)])]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, Some(1)));
    // Host to host.
    let a = Arrays::new(&[(attr(H, H), vec![(host, host + 64, 8)])]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, Some(0)));
    // Another device's id; memory said to be managed.
    let a = Arrays::new(&[(attr((LOC_DEVICE, 5), H), vec![(dev, host, 8)])]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, Some(0)));
    let a = Arrays::new(&[(attr(D, (LOC_MANAGED, 0)), vec![(dev, host, 8)])]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, Some(0)));
    // Not about one copy: no index.
    let mut a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8), (dev, host, 8)])]);
    a.maxs[1] = 4;
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_INVALID_PARAM, None));
    let mut a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8)])]);
    a.attrs.clear();
    a.idxs.clear();
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, None));
    let mut a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8)])]);
    a.attrs[0].reserved_zero = false;
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_INVALID_PARAM, None));
    // Zero-byte copies: skipped synchronously, refused asynchronously (when others are not 0).
    let a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8), (dev, host, 0)])]);
    assert_eq!(
        reg.plan_batch(&a.args(), BatchForm::Sync).unwrap().unwrap().vouch(|_| unreachable!()).len(),
        1
    );
    assert_eq!(fail(&a, BatchForm::Async), (ACL_ERROR_RT_PARAM_INVALID, Some(1)));
    let a = Arrays::new(&[(attr(D, H), vec![(0, 0, 0), (dev, host, 0)])]);
    assert!(reg.plan_batch(&a.args(), BatchForm::Async).unwrap().is_none(), "all sizes 0");
    // 4097 copies: only the asynchronous form takes them.
    let many: Vec<_> = (0..4097).map(|i| (dev + i % 4000, host + i % 4000, 1)).collect();
    let a = Arrays::new(&[(attr(D, H), many)]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, None));
    assert!(reg.plan_batch(&a.args(), BatchForm::Async).is_ok());
    // A copy past its allocation is that copy's error.
    let a = Arrays::new(&[(attr(D, H), vec![(dev, host, 8), (dev + 4090, host, 8)])]);
    assert_eq!(fail(&a, BatchForm::Sync), (ACL_ERROR_RT_PARAM_INVALID, Some(1)));
}

#[test]
fn plain_host_memory_running_into_device_memory_is_refused() {
    let reg = Registry::new();
    let dev = reg.alloc_device(4, 8192, NORMAL_ONLY, &roomy()).unwrap();
    // A "host" range starting just before the device allocation and running into it.
    let a = Arrays::new(&[(attr(H, D), vec![(dev - 16, dev + 4096, 32)])]);
    let e = reg.plan_batch(&a.args(), BatchForm::Sync).unwrap_err();
    assert_eq!((e.error.code, e.index), (ACL_ERROR_RT_PARAM_INVALID, Some(0)), "{}", e.error.message);
    assert!(e.error.message.contains("runs into device memory"));
}

#[test]
fn two_dimensional_copies_move_rows_and_leave_the_gaps() {
    let reg = Registry::new();
    let dev = reg.alloc_device(4, 4096, NORMAL_ONLY, &roomy()).unwrap();
    let host = reg.alloc_host(4096).unwrap();
    let src: Vec<u8> = (0..40 * 8).map(|i| i as u8).collect();
    poke(&reg, host, &src);
    poke(&reg, dev, &[0xEE; 64 * 8]);
    let shape = Shape { dpitch: 64, spitch: 40, width: 30, height: 8 };
    let plan = reg.plan_copy2d(dev, host, shape, 1, false).unwrap();
    plan.vouch(|r| panic!("asked to vouch for {r:?}")).run();
    let got = peek(&reg, dev, 64 * 8);
    for row in 0..8 {
        assert_eq!(got[row * 64..row * 64 + 30], src[row * 40..row * 40 + 30]);
        assert!(got[row * 64 + 30..(row + 1) * 64].iter().all(|&b| b == 0xEE));
    }
    let code = |r: Result<_, crate::error::AclError>| r.map(|_| ()).unwrap_err().code;
    assert_eq!(
        code(reg.plan_copy2d(dev, host, Shape { width: 65, ..shape }, 1, false)),
        ACL_ERROR_INVALID_PARAM
    );
    assert_eq!(code(reg.plan_copy2d(dev, host, shape, 3, false)), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    assert_eq!(code(reg.plan_copy2d(dev, host, shape, 0, false)), ACL_ERROR_INVALID_PARAM);
    // DEFAULT between two host buffers is neither direction.
    assert_eq!(code(reg.plan_copy2d(host + 2048, host, shape, 4, true)), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(
        code(reg.plan_copy2d(0, 0, Shape { height: 0, ..shape }, 99, false)),
        ACL_ERROR_RT_PARAM_INVALID
    );
}

#[test]
fn d32_fills_repeat_the_word_over_any_length() {
    let reg = Registry::new();
    let dev = reg.alloc_device(4, 64 << 10, NORMAL_ONLY, &roomy()).unwrap();
    let fill = reg.plan_memset_d32(dev + 4, 64 << 10, 0xA1B2C3D4, 5000).unwrap();
    assert!(fill.is_device());
    fill.run();
    let got = peek(&reg, dev, 4 * 5002);
    assert_eq!(got[..4], [0; 4]);
    assert!(got[4..4 * 5001].chunks(4).all(|c| c == 0xA1B2C3D4u32.to_ne_bytes()));
    assert_eq!(got[4 * 5001..], [0; 4]);
    let host = reg.alloc_host(64).unwrap();
    assert!(!reg.plan_memset_d32(host, 64, 1, 16).unwrap().is_device());
    let managed = reg.alloc_managed(4, 100).unwrap();
    assert_eq!(reg.plan_memset_d32(managed, 64, 1, 16).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    assert_eq!(reg.plan_memset_d32(dev, 7, 1, 2).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    assert_eq!(reg.plan_memset_d32(dev + 1, 64, 1, 2).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    assert_eq!(reg.plan_memset_d32(dev, usize::MAX, 1, 20_000).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn managed_memory_records_advice_and_prefetches_per_chunk() {
    let reg = Registry::new();
    let state = ManagedState::new();
    let m = reg.alloc_managed(4, 5 << 20).unwrap();
    let len = alloc_at(&reg, m).len;
    assert_eq!(len, 6 << 20, "rounded to 2 MiB");
    state.created(m, len);
    let all = reg.managed_range(m, len, true).unwrap();
    let first = reg.managed_range(m, 2 << 20, true).unwrap();
    let dev1 = Location { kind: 1, id: 1 };
    let host = Location { kind: 2, id: 0 };
    assert_eq!(state.attribute(all, 1, 4).unwrap(), [0]);
    state.advise(first, 0, host, 8).unwrap();
    assert_eq!(
        (state.attribute(first, 1, 4).unwrap(), state.attribute(all, 1, 4).unwrap()),
        (vec![1], vec![0])
    );
    state.advise(all, 2, dev1, 8).unwrap();
    assert_eq!(state.attribute(all, 2, 4).unwrap(), [1]);
    state.advise(first, 3, host, 8).unwrap();
    assert_eq!(state.attribute(all, 2, 4).unwrap(), [-2], "unset on one chunk: not the same over the range");
    assert_eq!(state.attribute(all, 4, 4).unwrap(), [0], "type invalid");
    state.advise(all, 4, dev1, 8).unwrap();
    state.advise(all, 4, host, 8).unwrap();
    assert_eq!(state.attribute(all, 3, 16).unwrap(), [-1, 1, -2, -2]);
    state.prefetched(first, dev1);
    assert_eq!(
        (state.attribute(first, 6, 4).unwrap(), state.attribute(all, 6, 4).unwrap()),
        (vec![1], vec![-2])
    );
    assert_eq!(state.attribute(first, 7, 4).unwrap(), [1]);
    // The rules.
    assert_eq!(reg.managed_range(m, 4096, true).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    assert!(reg.managed_range(m + 4096, 4096, false).is_ok());
    assert_eq!(reg.managed_range(m, len + (2 << 20), true).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(state.advise(all, 6, host, 8).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(
        state.advise(all, 2, Location { kind: 1, id: 8 }, 8).unwrap_err().code,
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(
        state.advise(all, 2, Location { kind: 0, id: 0 }, 8).unwrap_err().code,
        ACL_ERROR_RT_PARAM_INVALID
    );
    assert_eq!(state.attribute(all, 1, 8).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(state.attribute(all, 3, 6).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    let dev = reg.alloc_device(4, 4096, NORMAL_ONLY, &roomy()).unwrap();
    assert_eq!(reg.managed_range(dev, 4096, false).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    // Freed: the record goes with it.
    reg.free(m, crate::runtime::memory::AllocKind::Device).unwrap();
    state.freed(m);
    assert!(state.advise(all, 0, host, 8).is_err());
}

#[test]
fn a_batch_reaches_strict_device_memory_through_the_runtime_view() {
    let reg = Registry::new();
    let strict = Limits { capacity: 1 << 40, strict: true };
    let dev = reg.alloc_device(4, 4096, NORMAL_ONLY, &strict).unwrap();
    assert_ne!(alloc_at(&reg, dev).runtime_addr(), dev, "the user's view is not the runtime's");
    let host = reg.alloc_host(4096).unwrap();
    poke(&reg, host, &[9; 4096]);
    let copies: Vec<_> = (0..16).map(|i| (dev + i * 256, host + i * 256, 256)).collect();
    let a = Arrays::new(&[(attr(D, H), copies)]);
    reg.plan_batch(&a.args(), BatchForm::Sync).unwrap().unwrap().vouch(|r| panic!("asked for {r:?}")).run();
    assert_eq!(peek(&reg, dev, 4096), vec![9; 4096]);
}
