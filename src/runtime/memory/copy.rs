//! Planning `aclrtMemcpy` and `aclrtMemset`: every check the runtime can make, then a plan the
//! FFI layer completes by vouching for the user's host memory.

use std::sync::Arc;

use super::allocation::Allocation;
use super::registry::{Live, Registry};
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::sys::span::{HostRange, RawSpan};

/// `aclrtMemcpyKind` values.
const HOST_TO_HOST: i32 = 0;
const HOST_TO_DEVICE: i32 = 1;
const DEVICE_TO_HOST: i32 = 2;
const DEVICE_TO_DEVICE: i32 = 3;
const DEFAULT: i32 = 4;
const HOST_TO_BUF_TO_DEVICE: i32 = 5;
const INNER_DEVICE_TO_DEVICE: i32 = 6;
const INTER_DEVICE_TO_DEVICE: i32 = 7;

/// One end of a copy or the target of a fill.
#[derive(Debug)]
pub(super) enum Side {
    /// Memory of one of our allocations, through the runtime view (kept mapped by the span).
    Mapped(RawSpan),
    /// User memory that only the caller can vouch for.
    User(HostRange),
}

impl Side {
    pub(super) fn vouch(self, vouch: &mut impl FnMut(HostRange) -> RawSpan) -> RawSpan {
        match self {
            Side::Mapped(span) => span,
            Side::User(range) => {
                let span = vouch(range);
                assert!(
                    span.addr() == range.addr
                        && span.len() == range.len
                        && (span.is_writable() || !range.writable),
                    "vouched span {span:?} is not the requested {range:?}"
                );
                span
            }
        }
    }
}

/// A checked `aclrtMemcpy`; run it after [`CopyPlan::vouch`].
#[derive(Debug)]
pub struct CopyPlan {
    /// Destination and source; `None` for a copy of 0 bytes.
    sides: Option<(Side, Side)>,
}

impl CopyPlan {
    /// Whether the copy moves no bytes (count 0).
    pub fn is_noop(&self) -> bool {
        self.sides.is_none()
    }

    /// Completes the plan: `vouch` is called once for each end in user host memory and must
    /// return the span for exactly that range (it is the FFI layer's one `unsafe` step,
    /// `HostRange::vouch`, on the strength of the C caller's contract).
    pub fn vouch(self, mut vouch: impl FnMut(HostRange) -> RawSpan) -> ReadyCopy {
        ReadyCopy { spans: self.sides.map(|(dst, src)| (dst.vouch(&mut vouch), src.vouch(&mut vouch))) }
    }
}

/// A copy ready to run, now or later on a stream's thread. It keeps the device memory it
/// touches mapped, so an `aclrtFree` racing with a queued copy cannot pull memory from under it.
#[derive(Debug)]
pub struct ReadyCopy {
    spans: Option<(RawSpan, RawSpan)>,
}

impl ReadyCopy {
    /// Runs the copy (again, for a replayed graph).
    pub fn run(&self) {
        if let Some((dst, src)) = &self.spans {
            dst.copy_from(src);
        }
    }
}

/// A checked `aclrtMemset`; run it after [`FillPlan::vouch`].
#[derive(Debug)]
pub struct FillPlan {
    target: Option<Side>,
    byte: u8,
}

impl FillPlan {
    pub fn is_noop(&self) -> bool {
        self.target.is_none()
    }

    /// As [`CopyPlan::vouch`].
    pub fn vouch(self, mut vouch: impl FnMut(HostRange) -> RawSpan) -> ReadyFill {
        ReadyFill { target: self.target.map(|t| t.vouch(&mut vouch)), byte: self.byte }
    }
}

/// A fill ready to run; like [`ReadyCopy`] it keeps its memory mapped.
#[derive(Debug)]
pub struct ReadyFill {
    target: Option<RawSpan>,
    byte: u8,
}

impl ReadyFill {
    /// Runs the fill (again, for a replayed graph).
    pub fn run(&self) {
        if let Some(t) = &self.target {
            t.fill(self.byte);
        }
    }
}

/// What a copy kind says one end is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    Device,
    Host,
    /// `ACL_MEMCPY_DEFAULT` (and memset): whatever the registry says the address is.
    Either,
}

pub(super) fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

pub(super) fn null(what: &str) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, format!("{what} must not be NULL"))
}

/// The end of `[addr, addr + len)`, or an error if the range wraps the address space.
pub(super) fn end_of(what: &str, addr: usize, len: usize) -> AclResult<usize> {
    addr.checked_add(len)
        .ok_or_else(|| invalid(format!("{what} {addr:#x} + {len} bytes wraps the address space")))
}

impl Registry {
    /// Checks an `aclrtMemcpy(dst, dest_max, src, count, kind)` (see the module documentation
    /// of `runtime::memory` for the rules).
    pub fn plan_copy(
        &self,
        dst: usize,
        dest_max: usize,
        src: usize,
        count: usize,
        kind: i32,
    ) -> AclResult<CopyPlan> {
        let (dst_is, src_is) = expectations(kind)?;
        if count == 0 {
            return Ok(CopyPlan { sides: None });
        }
        if dst == 0 {
            return Err(null("dst"));
        }
        if src == 0 {
            return Err(null("src"));
        }
        if count > dest_max {
            return Err(invalid(format!("count {count} is larger than destMax {dest_max}")));
        }
        check_disjoint(dst, src, count, count)?;
        self.with_live(|live| {
            let dst_side = resolve(live, "dst", dst, count, dst_is, true)?;
            let src_side = resolve(live, "src", src, count, src_is, false)?;
            Ok(CopyPlan { sides: Some((dst_side, src_side)) })
        })
    }

    /// Checks an `aclrtMemset(dev, max_count, value, count)`. As the vendor documents, the
    /// address says whether the memory is host or device; the byte written is `value`'s low
    /// byte (as `memset`).
    pub fn plan_memset(&self, dev: usize, max_count: usize, value: i32, count: usize) -> AclResult<FillPlan> {
        let byte = value as u8;
        if count == 0 {
            return Ok(FillPlan { target: None, byte });
        }
        if dev == 0 {
            return Err(null("devPtr"));
        }
        if count > max_count {
            return Err(invalid(format!("count {count} is larger than maxCount {max_count}")));
        }
        end_of("devPtr", dev, count)?;
        let target = self.with_live(|live| resolve(live, "devPtr", dev, count, Expect::Either, true))?;
        Ok(FillPlan { target: Some(target), byte })
    }
}

/// What `kind` says the destination and source are; 107000 for a value outside the enum.
pub(super) fn expectations(kind: i32) -> AclResult<(Expect, Expect)> {
    Ok(match kind {
        HOST_TO_HOST => (Expect::Host, Expect::Host),
        HOST_TO_DEVICE | HOST_TO_BUF_TO_DEVICE => (Expect::Device, Expect::Host),
        DEVICE_TO_HOST => (Expect::Host, Expect::Device),
        DEVICE_TO_DEVICE | INNER_DEVICE_TO_DEVICE | INTER_DEVICE_TO_DEVICE => {
            (Expect::Device, Expect::Device)
        }
        DEFAULT => (Expect::Either, Expect::Either),
        _ => return Err(invalid(format!("copy kind {kind} is not an aclrtMemcpyKind (0..=7)"))),
    })
}

/// Refuses overlapping `[dst, dst + dst_len)` and `[src, src + src_len)` (and wrapping ranges).
pub(super) fn check_disjoint(dst: usize, src: usize, dst_len: usize, src_len: usize) -> AclResult<()> {
    let dst_end = end_of("dst", dst, dst_len)?;
    let src_end = end_of("src", src, src_len)?;
    if dst < src_end && src < dst_end {
        return Err(invalid(format!("source {src:#x} and destination {dst:#x} overlap")));
    }
    Ok(())
}

/// One end of a copy resolved under the registry's lock: a span of an allocation's runtime
/// view, or user memory for the FFI layer to vouch for.
pub(super) fn resolve(
    live: &Live<'_>,
    what: &str,
    addr: usize,
    len: usize,
    expect: Expect,
    writable: bool,
) -> AclResult<Side> {
    let found = live.find(addr);
    // Managed memory is device memory to a kind that says device, and host memory otherwise.
    let device = found.filter(|a| a.is_device());
    match (expect, device) {
        // Host memory registered as mapped is device-accessible: the device end of a copy may
        // be it (through the device pointer, which is the host address).
        (Expect::Device, None) if live.host_mapped_holding(addr, len) => {
            host_side(live, what, addr, len, found, writable)
        }
        (Expect::Device, _) | (Expect::Either, Some(_)) => device_side(live, what, addr, len, found),
        (Expect::Host, _) | (Expect::Either, None) => host_side(live, what, addr, len, found, writable),
    }
}

/// The whole range must lie in one live device (or managed) allocation.
fn device_side(
    live: &Live<'_>,
    what: &str,
    addr: usize,
    len: usize,
    found: Option<&Arc<Allocation>>,
) -> AclResult<Side> {
    match found {
        Some(a) if a.is_device() || a.is_managed() => {
            a.runtime_span(addr, len).map(Side::Mapped).ok_or_else(|| {
                invalid(format!(
                    "{what} {addr:#x} + {len} bytes runs past the end of its device allocation \
                     ({:#x}, {} bytes)",
                    a.start, a.len
                ))
            })
        }
        Some(a) => Err(invalid(format!(
            "{what} {addr:#x} is host memory (aclrtMallocHost at {:#x}), but the copy kind says device",
            a.start
        ))),
        None => Err(invalid(match live.freed_at(addr) {
            Some(f) => format!(
                "{what} {addr:#x} is not device memory (freed: it was in {:#x}, {} bytes)",
                f.start, f.len
            ),
            None => format!("{what} {addr:#x} is not device memory (freed?)"),
        })),
    }
}

/// The range must not touch device memory; our own host (and managed) allocations are resolved
/// to spans we own, anything else is left for the FFI layer to vouch for.
fn host_side(
    live: &Live<'_>,
    what: &str,
    addr: usize,
    len: usize,
    found: Option<&Arc<Allocation>>,
    writable: bool,
) -> AclResult<Side> {
    if let Some(d) = live.device_overlapping(addr, len) {
        return Err(invalid(format!(
            "{what} {addr:#x} + {len} bytes: kind says host but this is device memory (allocation at {:#x})",
            d.start
        )));
    }
    Ok(match found.and_then(|a| a.runtime_span(addr, len)) {
        Some(span) => Side::Mapped(span),
        None => Side::User(HostRange { addr, len, writable }),
    })
}
