//! `aclrtMemcpy2d` and `aclrtMemcpy2dAsync`: `height` rows of `width` bytes, rows `spitch`
//! bytes apart in the source and `dpitch` bytes apart in the destination.
//!
//! # Rules (the vendor's, in its order)
//! - `width` or `height` 0: 107000 (the vendor's API layer skips its own checks for an empty
//!   copy, and its runtime then refuses it).
//! - NULL `dst`/`src`, `width` greater than `dpitch` or `spitch`, or a kind other than
//!   host-to-device, device-to-host, device-to-device or default: `ACL_ERROR_INVALID_PARAM`.
//! - `height` above 5 Mi rows (5242880) or `width` above 5000000 bytes: 107000.
//! - The synchronous form copies host to device or device to host only: device-to-device is
//!   `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, and a default kind whose ends turn out both host or
//!   both device is 107000. The asynchronous form also takes device to device.
//! - Each end spans `(height - 1) * pitch + width` bytes; a device end must lie wholly in one
//!   device (or managed) allocation, a host end must not touch device memory, and the two spans
//!   must not overlap (107000), as for `aclrtMemcpy`.

use super::copy::{Expect, Side, check_disjoint, expectations, invalid, null, resolve};
use super::registry::Registry;
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::rt_codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use crate::error::{AclError, AclResult};
use crate::sys::span::{HostRange, RawSpan};

/// The largest `height` the vendor takes.
pub const MAX_HEIGHT: usize = 5 * 1024 * 1024;
/// The largest `width` the vendor takes.
pub const MAX_WIDTH: usize = 5_000_000;

const HOST_TO_DEVICE: i32 = 1;
const DEVICE_TO_HOST: i32 = 2;
const DEVICE_TO_DEVICE: i32 = 3;
const DEFAULT: i32 = 4;

/// The shape of a 2D copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub dpitch: usize,
    pub spitch: usize,
    pub width: usize,
    pub height: usize,
}

impl Shape {
    /// Bytes from the first row's start to the last row's end, for rows `pitch` apart.
    fn extent(&self, pitch: usize) -> Option<usize> {
        (self.height - 1).checked_mul(pitch)?.checked_add(self.width)
    }
}

/// A checked 2D copy; complete it with [`Plan2d::vouch`].
#[derive(Debug)]
pub struct Plan2d {
    sides: (Side, Side),
    shape: Shape,
}

impl Plan2d {
    /// Whether an end is plain host memory (the vendor then copies synchronously even in the
    /// asynchronous form).
    pub fn touches_user_memory(&self) -> bool {
        matches!(self.sides.0, Side::User(_)) || matches!(self.sides.1, Side::User(_))
    }

    /// As `CopyPlan::vouch`.
    pub fn vouch(self, mut vouch: impl FnMut(HostRange) -> RawSpan) -> Ready2d {
        let (d, s) = self.sides;
        Ready2d { spans: (d.vouch(&mut vouch), s.vouch(&mut vouch)), shape: self.shape }
    }
}

/// A 2D copy ready to run; it keeps the memory it touches mapped.
#[derive(Debug)]
pub struct Ready2d {
    spans: (RawSpan, RawSpan),
    shape: Shape,
}

impl Ready2d {
    pub fn run(&self) {
        let (dst, src) = &self.spans;
        let s = self.shape;
        for row in 0..s.height {
            dst.copy_part_from(row * s.dpitch, src, row * s.spitch, s.width);
        }
    }
}

impl Registry {
    /// Checks a 2D copy (see the module documentation); `asynchronous` for `aclrtMemcpy2dAsync`.
    pub fn plan_copy2d(
        &self,
        dst: usize,
        src: usize,
        shape: Shape,
        kind: i32,
        asynchronous: bool,
    ) -> AclResult<Plan2d> {
        if shape.width == 0 || shape.height == 0 {
            // The vendor's API layer lets an empty copy through, and its runtime then refuses a
            // width or height of 0 with 107000: so do we.
            return Err(invalid(format!(
                "a 2D copy of width {} and height {} copies nothing: both must be positive",
                shape.width, shape.height
            )));
        }
        let bad = |m: String| AclError::new(ACL_ERROR_INVALID_PARAM, m);
        if dst == 0 {
            return Err(bad(null("dst").message));
        }
        if src == 0 {
            return Err(bad(null("src").message));
        }
        if shape.width > shape.spitch || shape.width > shape.dpitch {
            return Err(bad(format!(
                "width {} must not exceed spitch {} or dpitch {}",
                shape.width, shape.spitch, shape.dpitch
            )));
        }
        if !matches!(kind, HOST_TO_DEVICE | DEVICE_TO_HOST | DEVICE_TO_DEVICE | DEFAULT) {
            return Err(bad(format!(
                "copy kind {kind} is not supported by a 2D copy: use ACL_MEMCPY_HOST_TO_DEVICE, \
                 ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE or ACL_MEMCPY_DEFAULT"
            )));
        }
        if shape.height > MAX_HEIGHT {
            return Err(invalid(format!("height {} is more than {MAX_HEIGHT} rows", shape.height)));
        }
        if shape.width > MAX_WIDTH {
            return Err(invalid(format!("width {} is more than {MAX_WIDTH} bytes", shape.width)));
        }
        if kind == DEVICE_TO_DEVICE && !asynchronous {
            return Err(AclError::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "aclrtMemcpy2d copies host to device or device to host only; use aclrtMemcpy2dAsync \
                 for device to device",
            ));
        }
        let overflow = || invalid(format!("a 2D copy of {shape:?} spans more than the address space"));
        let dst_len = shape.extent(shape.dpitch).ok_or_else(overflow)?;
        let src_len = shape.extent(shape.spitch).ok_or_else(overflow)?;
        check_disjoint(dst, src, dst_len, src_len)?;
        let (dst_is, src_is) = expectations(kind)?;
        self.with_live(|live| {
            let (dst_is, src_is) = if kind == DEFAULT {
                // The registry decides, and the result must still cross between host and device.
                let dev = |a: usize| live.find(a).is_some_and(|x| x.is_device());
                let (d, s) = (dev(dst), dev(src));
                match (d, s) {
                    (true, false) => (Expect::Device, Expect::Host),
                    (false, true) => (Expect::Host, Expect::Device),
                    (true, true) if asynchronous => (Expect::Device, Expect::Device),
                    _ => {
                        return Err(invalid(format!(
                            "a 2D copy with ACL_MEMCPY_DEFAULT from {src:#x} to {dst:#x} is {}; it must \
                             go between host and device{}",
                            if d { "device to device" } else { "host to host" },
                            if asynchronous { " (or device to device)" } else { "" }
                        )));
                    }
                }
            } else {
                (dst_is, src_is)
            };
            let dst_side = resolve(live, "dst", dst, dst_len, dst_is, true)?;
            let src_side = resolve(live, "src", src, src_len, src_is, false)?;
            Ok(Plan2d { sides: (dst_side, src_side), shape })
        })
    }
}
