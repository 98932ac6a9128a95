//! Tests of the memory core. Each test makes its own [`Registry`], so tests running in
//! parallel cannot see each other's usage; the process-wide functions are tested on device ids
//! no other test uses.

mod alloc;
mod batch;
mod copy;

use std::sync::Arc;

use super::allocation::Allocation;
use super::registry::Registry;
use super::{Limits, Placement};
use crate::sys::mapping::HUGE_PAGE;

const NORMAL_ONLY: u32 = 2;
const HUGE_ONLY: u32 = 1;

fn limits(capacity: u64) -> Limits {
    Limits { capacity, strict: false }
}

fn roomy() -> Limits {
    limits(1 << 40)
}

/// The allocation at `addr`, which must exist.
fn alloc_at(reg: &Registry, addr: usize) -> Arc<Allocation> {
    reg.find(addr).expect("a live allocation")
}

/// Writes `data` at user address `addr` through the runtime view.
fn poke(reg: &Registry, addr: usize, data: &[u8]) {
    alloc_at(reg, addr).runtime_span(addr, data.len()).unwrap().write_slice(data);
}

/// Reads `len` bytes at user address `addr` through the runtime view.
fn peek(reg: &Registry, addr: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    alloc_at(reg, addr).runtime_span(addr, len).unwrap().read_into(&mut out);
    out
}

/// Host memory the registry does not know, which the tests can vouch for without `unsafe`: the
/// runtime view of a strict device allocation (its user address is elsewhere). Returns the
/// allocation (keep it alive) and the host address.
fn foreign_host_buffer(reg: &Registry, len: usize) -> (Arc<Allocation>, usize) {
    let dev = reg.alloc_device(99, len, NORMAL_ONLY, &Limits { capacity: 1 << 40, strict: true }).unwrap();
    let a = alloc_at(reg, dev);
    let host = a.runtime_addr();
    assert_ne!(host, dev);
    assert!(reg.find(host).is_none(), "the runtime view is not a registered user address");
    (a, host)
}

#[test]
fn placement_is_recorded() {
    let reg = Registry::new();
    let d = reg.alloc_device(3, 10, NORMAL_ONLY, &roomy()).unwrap();
    let h = reg.alloc_host(10).unwrap();
    assert_eq!(alloc_at(&reg, d).placement, Placement::Device(3));
    assert_eq!(alloc_at(&reg, h).placement, Placement::Host);
}
