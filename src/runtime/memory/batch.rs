//! `aclrtMemcpyBatch` and its async and V2 forms: many copies checked as one, then run as one.
//!
//! # The vendor's rules, in the order it applies them
//! 1. `sizes` missing or `numBatches` 0: `ACL_ERROR_INVALID_PARAM` (the FFI layer checks the
//!    arrays' pointers). Every size 0: success, nothing copied, nothing else checked.
//! 2. A `destMaxs[i] < sizes[i]`, or an attribute whose reserved bytes are not 0:
//!    `ACL_ERROR_INVALID_PARAM`.
//! 3. `numAttrs` 0 or greater than `numBatches`, `attrsIndexes` not starting at 0, not strictly
//!    increasing or reaching `numBatches`, or (synchronous form) more than
//!    [`MAX_SYNC_BATCH`] copies: `ACL_ERROR_RT_PARAM_INVALID`.
//! 4. Each copy in turn: its ends must be what its attribute says (`ACL_MEM_LOCATION_TYPE_HOST`
//!    or `_HOST_NUMA` for pinned and for plain host memory, `_DEVICE` with the device id for
//!    device memory, `_MANAGED` for managed memory) and they must differ (host to device or
//!    device to host; managed to either): `ACL_ERROR_RT_PARAM_INVALID`, and the failure index is
//!    that copy's. The asynchronous form also refuses a copy of 0 bytes or NULL ends there, as
//!    the vendor's does.
//!
//! The failure index is the index of the copy that failed step 4, `SIZE_MAX` otherwise (also
//! on success). Unlike the vendor's asynchronous form, which queues the copies before a bad
//! one, every copy is checked before any byte moves: a refused batch copies nothing.
//!
//! # Speed
//! Every address is resolved under one lock of the registry ([`Registry::with_live`]). A ready
//! batch holds one span per allocation it touches, and one per run of adjacent plain host
//! blocks, not one per copy: running 4096 small copies is 4096 `memcpy`s and nothing else.
//! Planning has a fast path: each end (destinations, sources) remembers the allocation, or the
//! gap between allocations, its previous copy was in, so the blocks of a few buffers are
//! checked without a lookup each (`docs/performance.md` has the figures).

use std::sync::Arc;

use super::allocation::Allocation;
use super::copy::{end_of, invalid};
use super::placement::Placement;
use super::registry::{Live, Registry};
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{AclError, AclResult};
use crate::sys::span::{HostRange, RawSpan};

/// The most copies the synchronous form takes at once (the driver's `DEVMM_MEMCPY_BATCH_MAX_COUNT`).
pub const MAX_SYNC_BATCH: usize = 4096;

/// `aclrtMemLocationType` values.
pub const LOC_HOST: u32 = 0;
pub const LOC_DEVICE: u32 = 1;
pub const LOC_UNREGISTERED: u32 = 2;
pub const LOC_MANAGED: u32 = 3;
pub const LOC_HOST_NUMA: u32 = 4;

/// An `aclrtMemLocation` as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemLoc {
    pub id: u32,
    pub kind: u32,
}

/// An `aclrtMemcpyBatchAttr` as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchAttr {
    pub dst: MemLoc,
    pub src: MemLoc,
    /// Whether the reserved bytes are all 0, as they must be.
    pub reserved_zero: bool,
}

/// The arrays of one batch call (addresses as integers).
#[derive(Debug, Clone, Copy)]
pub struct BatchArgs<'a> {
    pub dsts: &'a [usize],
    pub dest_maxs: &'a [usize],
    pub srcs: &'a [usize],
    pub sizes: &'a [usize],
    pub attrs: &'a [BatchAttr],
    pub attr_indexes: &'a [usize],
}

/// Which form of the call: the synchronous one has a size limit, the asynchronous one checks
/// each copy's size and pointers itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchForm {
    Sync,
    Async,
}

/// A refused batch: the error, and the copy it is about (`None`: the batch as a whole).
#[derive(Debug)]
pub struct BatchError {
    pub error: AclError,
    pub index: Option<usize>,
}

impl From<AclError> for BatchError {
    fn from(error: AclError) -> Self {
        BatchError { error, index: None }
    }
}

/// What the registry says one end of a copy is, as `aclrtPointerGetAttributes` would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Real {
    Host,
    Device(i32),
    Managed,
}

impl Real {
    fn class(self) -> u32 {
        match self {
            Real::Host => LOC_HOST,
            Real::Device(_) => LOC_DEVICE,
            Real::Managed => LOC_MANAGED,
        }
    }
}

fn location_name(kind: u32) -> String {
    match kind {
        LOC_HOST => "host".into(),
        LOC_DEVICE => "device".into(),
        LOC_UNREGISTERED => "unregistered".into(),
        LOC_MANAGED => "managed".into(),
        LOC_HOST_NUMA => "host (NUMA)".into(),
        other => format!("unknown location type {other}"),
    }
}

/// Where one end of one copy lies in a ready batch: an anchor span and an offset in it.
#[derive(Debug, Clone, Copy)]
struct At {
    anchor: usize,
    offset: usize,
}

#[derive(Debug, Clone, Copy)]
struct Op {
    dst: At,
    src: At,
    len: usize,
}

/// What an anchor is before vouching: a whole allocation (already a span) or user memory.
#[derive(Debug)]
enum Anchor {
    Mapped(RawSpan),
    User(HostRange),
}

/// A checked batch; complete it with [`BatchPlan::vouch`].
#[derive(Debug)]
pub struct BatchPlan {
    anchors: Vec<Anchor>,
    ops: Vec<Op>,
}

impl BatchPlan {
    /// Whether any copy touches plain (unregistered) host memory, which the vendor copies
    /// synchronously even in the asynchronous form.
    pub fn touches_user_memory(&self) -> bool {
        self.anchors.iter().any(|a| matches!(a, Anchor::User(_)))
    }

    /// Completes the plan: `vouch` is called once for each range of plain host memory (the FFI
    /// layer's `HostRange::vouch`, on the C caller's word).
    pub fn vouch(self, mut vouch: impl FnMut(HostRange) -> RawSpan) -> ReadyBatch {
        let anchors = self
            .anchors
            .into_iter()
            .map(|a| match a {
                Anchor::Mapped(span) => span,
                Anchor::User(range) => {
                    let span = vouch(range);
                    assert!(
                        span.addr() == range.addr
                            && span.len() == range.len
                            && (span.is_writable() || !range.writable),
                        "vouched span {span:?} is not the requested {range:?}"
                    );
                    span
                }
            })
            .collect();
        ReadyBatch { anchors, ops: self.ops }
    }
}

/// A batch ready to run, now or on a stream's thread; it keeps every allocation it touches
/// mapped until it is dropped.
#[derive(Debug)]
pub struct ReadyBatch {
    anchors: Vec<RawSpan>,
    ops: Vec<Op>,
}

impl ReadyBatch {
    pub fn run(&self) {
        for op in &self.ops {
            let dst = &self.anchors[op.dst.anchor];
            let src = &self.anchors[op.src.anchor];
            dst.copy_part_from(op.dst.offset, src, op.src.offset, op.len);
        }
    }

    /// How many copies the batch makes.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// Which end of a copy a lookup is for (each keeps its own cache).
const DST: usize = 0;
const SRC: usize = 1;

/// Collects anchors while a batch is resolved: consecutive copies in the same allocation share
/// its span. It also remembers the last allocation found and the last gap between allocations,
/// so that a batch of blocks of a few buffers costs few lookups in the registry's table.
struct Anchors<'l> {
    live: &'l Live<'l>,
    anchors: Vec<Anchor>,
    /// Allocations already anchored, most recent last: (allocation start, anchor index).
    seen: Vec<(usize, usize)>,
    /// Per end (0: destinations, 1: sources), which usually stay in one buffer each: the last
    /// allocation anchored, the last allocation found, and the last gap `[from, to)` known to
    /// hold none.
    last: [Option<(&'l Arc<Allocation>, usize)>; 2],
    found: [Option<&'l Arc<Allocation>>; 2],
    gap: [(usize, usize); 2],
    /// Per end, the anchor of its last range of plain host memory.
    user: [Option<usize>; 2],
}

impl<'l> Anchors<'l> {
    fn new(live: &'l Live<'l>, copies: usize) -> Self {
        Anchors {
            live,
            anchors: Vec::with_capacity(copies + 1),
            seen: Vec::new(),
            last: [None; 2],
            found: [None; 2],
            gap: [(0, 0); 2],
            user: [None; 2],
        }
    }

    /// The allocation containing `addr`, if any.
    fn find(&mut self, end: usize, addr: usize) -> Option<&'l Arc<Allocation>> {
        if let Some(a) = self.found[end].filter(|a| addr >= a.start && addr < a.end()) {
            return Some(a);
        }
        if addr >= self.gap[end].0 && addr < self.gap[end].1 {
            return None;
        }
        match self.live.find_or_gap(addr) {
            Ok(a) => {
                self.found[end] = Some(a);
                Some(a)
            }
            Err(gap) => {
                self.gap[end] = gap;
                None
            }
        }
    }

    /// A device allocation overlapping `[addr, addr + len)`, which holds no allocation's start.
    fn device_overlapping(&self, end: usize, addr: usize, len: usize) -> Option<&'l Arc<Allocation>> {
        let gap = self.gap[end];
        if addr >= gap.0 && addr.checked_add(len).is_some_and(|stop| stop <= gap.1) {
            return None;
        }
        self.live.device_overlapping(addr, len)
    }

    fn of_allocation(&mut self, end: usize, a: &'l Arc<Allocation>, addr: usize) -> At {
        if let Some((last, idx)) = self.last[end] {
            if Arc::ptr_eq(last, a) {
                return At { anchor: idx, offset: addr - a.start };
            }
        }
        let idx = match self.seen.iter().rev().take(8).find(|(start, _)| *start == a.start) {
            Some(&(_, idx)) => idx,
            None => {
                let span = a.runtime_span(a.start, a.len).expect("an allocation holds itself");
                self.anchors.push(Anchor::Mapped(span));
                let idx = self.anchors.len() - 1;
                self.seen.push((a.start, idx));
                idx
            }
        };
        self.last[end] = Some((a, idx));
        At { anchor: idx, offset: addr - a.start }
    }

    /// A range of plain host memory. A range that continues the previous one (the blocks of
    /// one host buffer, in order) extends its anchor: the caller vouches for both, so for their
    /// union, and the batch then holds one span for the buffer, not one per block.
    fn of_user(&mut self, side: usize, range: HostRange) -> At {
        if let Some(idx) = self.user[side] {
            if let Anchor::User(last) = &mut self.anchors[idx] {
                if last.writable == range.writable && last.addr + last.len == range.addr {
                    let offset = last.len;
                    last.len += range.len;
                    return At { anchor: idx, offset };
                }
            }
        }
        self.anchors.push(Anchor::User(range));
        self.user[side] = Some(self.anchors.len() - 1);
        At { anchor: self.anchors.len() - 1, offset: 0 }
    }

    /// The fast path for one end of a copy: in the allocation the previous copy's end of this
    /// side was in, or plain host memory inside the gap between allocations this side's last
    /// lookup found. Checks only; `None` sends the copy down the full path (which also words
    /// any error). [`Anchors::commit`] then records it.
    #[inline]
    fn quick(&self, side: usize, addr: usize, len: usize, said: MemLoc) -> Option<Quick> {
        let stop = addr.checked_add(len)?;
        if let Some((a, idx)) = self.last[side] {
            if addr >= a.start && stop <= a.end() {
                let real = real(Some(a));
                return location_matches(real, said).then_some(Quick {
                    kind: QuickKind::Mapped(At { anchor: idx, offset: addr - a.start }),
                    class: real.class(),
                });
            }
        }
        let gap = self.gap[side];
        if addr < gap.0 || stop > gap.1 || !location_matches(Real::Host, said) {
            return None;
        }
        let grow = self.user[side].and_then(|idx| match &self.anchors[idx] {
            Anchor::User(r) if r.addr + r.len == addr => {
                Some(QuickKind::Grow(At { anchor: idx, offset: r.len }, len))
            }
            _ => None,
        });
        let kind = grow.unwrap_or(QuickKind::New(HostRange { addr, len, writable: side == DST }));
        Some(Quick { kind, class: LOC_HOST })
    }

    /// Records what [`Anchors::quick`] found; where the end is.
    #[inline]
    fn commit(&mut self, side: usize, q: Quick) -> At {
        match q.kind {
            QuickKind::Mapped(at) => at,
            QuickKind::Grow(at, len) => {
                if let Anchor::User(r) = &mut self.anchors[at.anchor] {
                    r.len += len;
                }
                at
            }
            QuickKind::New(range) => {
                self.anchors.push(Anchor::User(range));
                self.user[side] = Some(self.anchors.len() - 1);
                At { anchor: self.anchors.len() - 1, offset: 0 }
            }
        }
    }
}

/// One end resolved by the fast path, and its location class.
struct Quick {
    kind: QuickKind,
    class: u32,
}

enum QuickKind {
    /// In an allocation already anchored.
    Mapped(At),
    /// Continuing a host anchor, which grows by the length.
    Grow(At, usize),
    /// Plain host memory needing an anchor of its own.
    New(HostRange),
}

impl Registry {
    /// Checks a batch (see the module documentation); `Ok(None)` when every size is 0.
    pub fn plan_batch(&self, args: &BatchArgs<'_>, form: BatchForm) -> Result<Option<BatchPlan>, BatchError> {
        let n = args.sizes.len();
        if n == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "numBatches must not be 0").into());
        }
        if args.sizes.iter().all(|&s| s == 0) {
            return Ok(None);
        }
        check_shape(args, form)?;
        self.with_live(|live| {
            let mut anchors = Anchors::new(live, n);
            let mut ops = Vec::with_capacity(n);
            let mut attr_at = 0;
            for i in 0..n {
                while attr_at + 1 < args.attrs.len() && i >= args.attr_indexes[attr_at + 1] {
                    attr_at += 1;
                }
                let attr = &args.attrs[attr_at];
                let (dst, src, len) = (args.dsts[i], args.srcs[i], args.sizes[i]);
                if len != 0 && dst != 0 && src != 0 {
                    if let (Some(d), Some(s)) =
                        (anchors.quick(DST, dst, len, attr.dst), anchors.quick(SRC, src, len, attr.src))
                    {
                        if d.class != s.class {
                            let dst_at = anchors.commit(DST, d);
                            let src_at = anchors.commit(SRC, s);
                            ops.push(Op { dst: dst_at, src: src_at, len });
                            continue;
                        }
                    }
                }
                let op = plan_one(&mut anchors, args, i, attr, form)
                    .map_err(|error| BatchError { error, index: Some(i) })?;
                if let Some(op) = op {
                    ops.push(op);
                }
            }
            Ok(Some(BatchPlan { anchors: anchors.anchors, ops }))
        })
    }
}

/// Steps 2 and 3 of the rules: the arrays' contents that are not about one copy.
fn check_shape(args: &BatchArgs<'_>, form: BatchForm) -> AclResult<()> {
    let n = args.sizes.len();
    if let Some(i) = (0..n).find(|&i| args.dest_maxs[i] < args.sizes[i]) {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "copy {i} of the batch is {} bytes, more than its destMaxs entry ({})",
                args.sizes[i], args.dest_maxs[i]
            ),
        ));
    }
    if let Some(k) = args.attrs.iter().position(|a| !a.reserved_zero) {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("attrs[{k}].rsv must be all 0")));
    }
    let m = args.attrs.len();
    if m == 0 {
        return Err(invalid("numAttrs must not be 0: every copy needs an attribute".into()));
    }
    if m > n {
        return Err(invalid(format!("numAttrs {m} is larger than numBatches {n}")));
    }
    if form == BatchForm::Sync && n > MAX_SYNC_BATCH {
        return Err(invalid(format!(
            "numBatches {n} is more than the {MAX_SYNC_BATCH} copies one synchronous batch may hold"
        )));
    }
    if args.attr_indexes[0] != 0 {
        return Err(invalid(format!("attrsIndexes[0] is {}, it must be 0", args.attr_indexes[0])));
    }
    for k in 1..m {
        let (prev, here) = (args.attr_indexes[k - 1], args.attr_indexes[k]);
        if here <= prev {
            return Err(invalid(format!(
                "attrsIndexes must increase: attrsIndexes[{k}] is {here}, attrsIndexes[{}] is {prev}",
                k - 1
            )));
        }
        if here >= n {
            return Err(invalid(format!("attrsIndexes[{k}] is {here}, not below numBatches {n}")));
        }
    }
    Ok(())
}

/// Why copy `i` is refused (the message is made only when needed).
#[derive(Debug, Clone, Copy)]
enum Why {
    ZeroBytes,
    Null(&'static str),
    Direction { from: u32, to: u32 },
}

#[cold]
#[inline(never)]
fn copy_error(i: usize, why: Why) -> AclError {
    invalid(match why {
        Why::ZeroBytes => format!("copy {i} of the batch is of 0 bytes"),
        Why::Null(what) => format!("copy {i} of the batch has a NULL {what}"),
        Why::Direction { from, to } => format!(
            "copy {i} of the batch goes from {} to {} memory: a batch copies only host to device or \
             device to host",
            location_name(from),
            location_name(to)
        ),
    })
}

/// Step 4 for copy `i`: `None` for a copy of 0 bytes (synchronous form).
fn plan_one<'l>(
    anchors: &mut Anchors<'l>,
    args: &BatchArgs<'_>,
    i: usize,
    attr: &BatchAttr,
    form: BatchForm,
) -> AclResult<Option<Op>> {
    let (dst, src, len) = (args.dsts[i], args.srcs[i], args.sizes[i]);
    if form == BatchForm::Async && len == 0 {
        return Err(copy_error(i, Why::ZeroBytes));
    }
    if dst == 0 || src == 0 {
        return Err(copy_error(i, Why::Null(if dst == 0 { "dst" } else { "src" })));
    }
    let dst_alloc = anchors.find(DST, dst);
    let src_alloc = anchors.find(SRC, src);
    let dst_real = real(dst_alloc);
    let src_real = real(src_alloc);
    check_location(i, "destination", dst, dst_real, attr.dst)?;
    check_location(i, "source", src, src_real, attr.src)?;
    if dst_real.class() == src_real.class() {
        return Err(copy_error(i, Why::Direction { from: src_real.class(), to: dst_real.class() }));
    }
    if len == 0 {
        return Ok(None);
    }
    end_of("dst", dst, len)?;
    end_of("src", src, len)?;
    let dst_at =
        end(anchors, DST, dst, len, dst_alloc, true).map_err(|b| bad_end(i, "destination", dst, len, b))?;
    let src_at =
        end(anchors, SRC, src, len, src_alloc, false).map_err(|b| bad_end(i, "source", src, len, b))?;
    Ok(Some(Op { dst: dst_at, src: src_at, len }))
}

fn real(found: Option<&Arc<Allocation>>) -> Real {
    match found.map(|a| a.placement) {
        Some(Placement::Device(d)) => Real::Device(d),
        Some(Placement::Managed(_)) => Real::Managed,
        Some(Placement::Host) | None => Real::Host,
    }
}

/// Whether memory that is `real` may be described as `said`.
#[inline]
fn location_matches(real: Real, said: MemLoc) -> bool {
    // Host memory may be described as host or host NUMA; plain host memory is host too.
    let said_class = if said.kind == LOC_HOST_NUMA { LOC_HOST } else { said.kind };
    said_class == real.class()
        && match real {
            Real::Device(d) => u32::try_from(d).is_ok_and(|d| d == said.id),
            _ => true,
        }
}

#[inline]
fn check_location(i: usize, what: &str, addr: usize, real: Real, said: MemLoc) -> AclResult<()> {
    if location_matches(real, said) { Ok(()) } else { Err(wrong_location(i, what, addr, real, said)) }
}

#[cold]
#[inline(never)]
fn wrong_location(i: usize, what: &str, addr: usize, real: Real, said: MemLoc) -> AclError {
    let actual = match real {
        Real::Device(d) => format!("device memory of device {d}"),
        Real::Managed => "managed memory".into(),
        Real::Host => "host memory".into(),
    };
    invalid(format!(
        "copy {i} of the batch: its {what} {addr:#x} is {actual}, but its attribute says {} (id {})",
        location_name(said.kind),
        said.id
    ))
}

/// Why an end of a copy cannot be used (the message is made only when needed).
#[derive(Debug, Clone, Copy)]
enum Bad {
    /// Runs past the end of the device or managed allocation at `start` (`len` bytes).
    PastEnd { start: usize, len: usize },
    /// Plain host memory running into the device allocation at `start`.
    IntoDevice { start: usize },
}

#[cold]
#[inline(never)]
fn bad_end(i: usize, what: &str, addr: usize, len: usize, why: Bad) -> AclError {
    invalid(match why {
        Bad::PastEnd { start, len: alloc_len } => format!(
            "copy {i} of the batch: its {what} {addr:#x} + {len} bytes runs past the end of its \
             allocation ({start:#x}, {alloc_len} bytes)"
        ),
        Bad::IntoDevice { start } => format!(
            "copy {i} of the batch: its {what} {addr:#x} + {len} bytes runs into device memory \
             (allocation at {start:#x})"
        ),
    })
}

/// Resolves one end of a copy to an anchor: the runtime view of its allocation (which must hold
/// the whole range), or plain host memory that must not touch device memory.
#[inline]
fn end<'l>(
    anchors: &mut Anchors<'l>,
    side: usize,
    addr: usize,
    len: usize,
    found: Option<&'l Arc<Allocation>>,
    writable: bool,
) -> Result<At, Bad> {
    match found {
        Some(a) if a.holds(addr, len) => Ok(anchors.of_allocation(side, a, addr)),
        Some(a) if a.is_device() || a.is_managed() => Err(Bad::PastEnd { start: a.start, len: a.len }),
        _ => match anchors.device_overlapping(side, addr, len) {
            Some(d) => Err(Bad::IntoDevice { start: d.start }),
            None => Ok(anchors.of_user(side, HostRange { addr, len, writable })),
        },
    }
}
