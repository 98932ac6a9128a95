//! The numbers callers pass to `aclrtMalloc` (`aclrtMemMallocPolicy`, with OR-able bits) and to
//! `aclrtGetMemInfo` (`aclrtMemAttr`), and what they mean here.

use crate::error::rt_codes::{ACL_ERROR_RT_INVALID_MEMORY_TYPE, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::sys::mapping::HUGE_PAGE;
use crate::sys::page_size;

const HUGE_FIRST: u32 = 0;
const HUGE_ONLY: u32 = 1;
const HUGE_FIRST_P2P: u32 = 3;
const HUGE_ONLY_P2P: u32 = 4;
const HUGE1G_ONLY: u32 = 6;
const HUGE1G_ONLY_P2P: u32 = 7;
/// The largest page-policy value (`ACL_MEM_MALLOC_HUGE1G_ONLY_P2P`).
const LAST_POLICY: u32 = 7;
/// `ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_ACCESS_USER_SPACE_READONLY`:
/// accepted and without effect (there is one kind of memory here, and the runtime must write
/// it even when user code may only read it).
const EXTRA_BITS: u32 = 0x100 | 0x1000 | 0x10_0000;

/// The alignment (and size granule) `policy` asks for: 2 MiB for every huge-page policy, the
/// page size for the normal ones.
///
/// The 1 GiB policies also get 2 MiB: 1 GiB alignment would waste up to a gigabyte of address
/// space per allocation, and no caller can tell (they see an aligned address and working memory).
pub fn alignment(policy: u32) -> AclResult<usize> {
    let page_policy = policy & 0xFF;
    let extra = policy & !0xFF;
    if page_policy > LAST_POLICY || extra & !EXTRA_BITS != 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "memory policy {policy:#x} is not an aclrtMemMallocPolicy (0..=7), optionally OR-ed \
                 with 0x100, 0x1000 or 0x100000"
            ),
        ));
    }
    Ok(match page_policy {
        HUGE_FIRST | HUGE_ONLY | HUGE_FIRST_P2P | HUGE_ONLY_P2P | HUGE1G_ONLY | HUGE1G_ONLY_P2P => HUGE_PAGE,
        _ => page_size(),
    })
}

/// The largest `aclrtMemAttr` value (`ACL_MEM_P2P_HUGE1G`): the vendor's list grew from the ten
/// DDR/HBM values to eighteen (1 GiB pages, and the `ACL_MEM_*` values that name no medium).
const LAST_MEM_ATTR: i32 = 17;

/// Checks an `aclrtMemAttr` value (`ACL_DDR_MEM` 0 ... `ACL_MEM_P2P_HUGE1G` 17); anything else
/// is `ACL_ERROR_RT_INVALID_MEMORY_TYPE`, as the vendor's runtime reports it.
pub fn check_mem_attr(attr: i32) -> AclResult<()> {
    if (0..=LAST_MEM_ATTR).contains(&attr) {
        Ok(())
    } else {
        Err(AclError::new(
            ACL_ERROR_RT_INVALID_MEMORY_TYPE,
            format!("memory attribute {attr} is not an aclrtMemAttr (0..={LAST_MEM_ATTR})"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_page_policies_are_2_mib_aligned_and_normal_ones_page_aligned() {
        for p in [0, 1, 3, 4, 6, 7] {
            assert_eq!(alignment(p).unwrap(), HUGE_PAGE, "policy {p}");
        }
        for p in [2, 5] {
            assert_eq!(alignment(p).unwrap(), page_size(), "policy {p}");
        }
    }

    #[test]
    fn the_documented_bits_may_be_or_ed_in() {
        assert_eq!(alignment(2 | 0x100).unwrap(), page_size());
        assert_eq!(alignment(1 | 0x1000).unwrap(), HUGE_PAGE);
        assert_eq!(alignment(5 | 0x10_0000 | 0x100).unwrap(), page_size());
    }

    #[test]
    fn other_values_are_refused() {
        for p in [8, 0xFF, 0x200, 0x2000, 0x20_0000, 0x8000_0000, 2 | 0x10] {
            assert_eq!(alignment(p).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "policy {p:#x}");
        }
    }

    #[test]
    fn mem_attrs_are_0_to_17() {
        for a in 0..=17 {
            check_mem_attr(a).unwrap();
        }
        for a in [-1, 18, i32::MAX] {
            assert_eq!(check_mem_attr(a).unwrap_err().code, ACL_ERROR_RT_INVALID_MEMORY_TYPE);
        }
    }
}
