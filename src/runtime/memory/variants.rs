//! The allocation variants: `aclrtMallocAlign32`, `aclrtMallocCached`, `aclrtMallocWithCfg`
//! and `aclrtMallocHostWithCfg`, and the `aclrtMallocConfig` attributes they take.
//!
//! # Policies
//! Unlike `aclrtMalloc` here, the variants follow the vendor's documented fallback: a policy
//! that is not exactly one `aclrtMemMallocPolicy` page value (`aclrtMallocCached`: one of
//! `HUGE_FIRST`, `HUGE_ONLY`, `NORMAL_ONLY`, `HUGE1G_ONLY`) is not refused but means "huge
//! pages from 2 MiB on, normal pages below". `aclrtMallocWithCfg` also takes the band-width and
//! read-only bits OR-ed in (they have no effect: there is one kind of memory here). Every
//! allocation is page-aligned at least, which meets the vendor's 32- and 64-byte promises.
//!
//! # Configuration attributes
//! Repeated attributes: the last one counts. Device memory: `ACL_RT_MEM_ATTR_RSV` is ignored,
//! `_MODULE_ID` is accepted (it only labels memory for the vendor's diagnostics),
//! `_DEVICE_ID` must name the current device; anything else is 107000. Host memory:
//! `_MODULE_ID` as above and `_VA_FLAG` 0 or 1 (host and device addresses are one already, so
//! VA consistency holds either way); anything else is 107000.

use super::copy::invalid;
use crate::error::AclResult;
use crate::sys::mapping::HUGE_PAGE;
use crate::sys::page_size;

/// `aclrtMallocAttrType` values.
pub const ATTR_RSV: u32 = 0;
pub const ATTR_MODULE_ID: u32 = 1;
pub const ATTR_DEVICE_ID: u32 = 2;
pub const ATTR_VA_FLAG: u32 = 3;

/// One `aclrtMallocAttribute` as received: its type and the 8 bytes of its value union.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfgAttr {
    pub kind: u32,
    pub value: [u8; 8],
}

impl CfgAttr {
    fn u32_value(&self) -> u32 {
        u32::from_ne_bytes([self.value[0], self.value[1], self.value[2], self.value[3]])
    }
}

const HUGE_FIRST: u32 = 0;
const HUGE_ONLY: u32 = 1;
const NORMAL_ONLY: u32 = 2;
const HUGE1G_ONLY: u32 = 6;
/// The page-policy part of a policy (the vendor's `MEM_POLICY_MASK`).
const PAGE_POLICY_MASK: u32 = 0xFF;

/// Which allocation function chose the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Align32,
    Cached,
    WithCfg,
}

/// The alignment (and size granule) of a variant's allocation of `size` bytes with `policy`.
pub fn alignment(variant: Variant, policy: u32, size: usize) -> usize {
    let page_policy = match variant {
        Variant::WithCfg => Some(policy & PAGE_POLICY_MASK),
        Variant::Align32 => Some(policy),
        Variant::Cached => {
            Some(policy).filter(|p| matches!(*p, HUGE_FIRST | HUGE_ONLY | NORMAL_ONLY | HUGE1G_ONLY))
        }
    };
    match page_policy.filter(|&p| p <= 7).map(super::policy::alignment) {
        Some(Ok(align)) => align,
        _ if size >= HUGE_PAGE => HUGE_PAGE,
        _ => page_size(),
    }
}

/// Checks the attributes of an `aclrtMallocWithCfg` made while `current` is the current device.
pub fn check_device_cfg(attrs: &[CfgAttr], current: i32) -> AclResult<()> {
    let mut device = None;
    for (i, a) in attrs.iter().enumerate() {
        match a.kind {
            ATTR_RSV | ATTR_MODULE_ID => {}
            ATTR_DEVICE_ID => device = Some(a.u32_value()),
            other => {
                return Err(invalid(format!(
                    "cfg->attrs[{i}].attr is {other}: device memory takes ACL_RT_MEM_ATTR_RSV, \
                     ACL_RT_MEM_ATTR_MODULE_ID or ACL_RT_MEM_ATTR_DEVICE_ID (0..=2)"
                )));
            }
        }
    }
    match device {
        Some(d) if i64::from(d) != i64::from(current) => Err(invalid(format!(
            "the configured device id {d} is not the current device {current}; set that device \
             current first, or leave ACL_RT_MEM_ATTR_DEVICE_ID out"
        ))),
        _ => Ok(()),
    }
}

/// Checks the attributes of an `aclrtMallocHostWithCfg`.
pub fn check_host_cfg(attrs: &[CfgAttr]) -> AclResult<()> {
    for (i, a) in attrs.iter().enumerate() {
        match a.kind {
            ATTR_MODULE_ID => {}
            ATTR_VA_FLAG if a.u32_value() <= 1 => {}
            ATTR_VA_FLAG => {
                return Err(invalid(format!(
                    "cfg->attrs[{i}].value.vaFlag is {}: it is 0 (off) or 1 (on)",
                    a.u32_value()
                )));
            }
            other => {
                return Err(invalid(format!(
                    "cfg->attrs[{i}].attr is {other}: host memory takes ACL_RT_MEM_ATTR_MODULE_ID (1) \
                     or ACL_RT_MEM_ATTR_VA_FLAG (3)"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;

    fn attr(kind: u32, v: u32) -> CfgAttr {
        let mut value = [0; 8];
        value[..4].copy_from_slice(&v.to_ne_bytes());
        CfgAttr { kind, value }
    }

    #[test]
    fn documented_policies_keep_their_alignment_and_others_go_by_size() {
        assert_eq!(alignment(Variant::Align32, 2, 10 << 20), page_size());
        assert_eq!(alignment(Variant::Align32, 1, 100), HUGE_PAGE);
        // Out of range: by size.
        assert_eq!(alignment(Variant::Align32, 99, 100), page_size());
        assert_eq!(alignment(Variant::Align32, 99, 4 << 20), HUGE_PAGE);
        // OR-ed bits are out of range for Align32 and Cached, but fine for WithCfg.
        assert_eq!(alignment(Variant::Align32, 2 | 0x1000, 4 << 20), HUGE_PAGE);
        assert_eq!(alignment(Variant::WithCfg, 2 | 0x1000, 4 << 20), page_size());
        // Cached takes no P2P policy: NORMAL_ONLY_P2P of 4 MiB goes by size.
        assert_eq!(alignment(Variant::Cached, 5, 4 << 20), HUGE_PAGE);
        assert_eq!(alignment(Variant::Cached, 2, 4 << 20), page_size());
    }

    #[test]
    fn device_config_checks_the_device_and_the_attribute_types() {
        check_device_cfg(&[], 3).unwrap();
        check_device_cfg(&[attr(ATTR_MODULE_ID, 33), attr(ATTR_DEVICE_ID, 3), attr(ATTR_RSV, 0)], 3).unwrap();
        let e = check_device_cfg(&[attr(ATTR_DEVICE_ID, 2)], 3).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID);
        // The last of repeated attributes counts.
        check_device_cfg(&[attr(ATTR_DEVICE_ID, 2), attr(ATTR_DEVICE_ID, 3)], 3).unwrap();
        assert!(check_device_cfg(&[attr(ATTR_VA_FLAG, 0)], 3).is_err());
        assert!(check_device_cfg(&[attr(77, 0)], 3).is_err());
    }

    #[test]
    fn host_config_takes_module_id_and_va_flag() {
        check_host_cfg(&[attr(ATTR_MODULE_ID, 33), attr(ATTR_VA_FLAG, 1)]).unwrap();
        assert!(check_host_cfg(&[attr(ATTR_VA_FLAG, 2)]).is_err());
        assert!(check_host_cfg(&[attr(ATTR_DEVICE_ID, 0)]).is_err());
        assert!(check_host_cfg(&[attr(ATTR_RSV, 0)]).is_err());
    }
}
