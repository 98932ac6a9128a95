//! `acl/acl_rt.h`: core groups. On the device a group is a share of the AI Cores (made with the
//! driver's tools); an emulated device has one group, id 0, holding the whole device as the
//! product profile describes it (`profile::Figures`).

#![allow(non_snake_case)]

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::config::settings;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::ptr::{Out, null_argument};
use crate::ffi::{acl_call, boundary};
use crate::profile::{Figures, GROUP_SDMA_CHANNELS, GROUP_STREAMS};
use crate::runtime::{context, sys_params};
use crate::sync;

/// A group attribute (`aclrtGetGroupInfoDetail`); every value is an `int32_t`.
#[repr(C)]
pub enum aclrtGroupAttr {
    ACL_GROUP_AICORE_INT = 0,
    ACL_GROUP_AIV_INT = 1,
    ACL_GROUP_AIC_INT = 2,
    ACL_GROUP_SDMANUM_INT = 3,
    ACL_GROUP_ASQNUM_INT = 4,
    ACL_GROUP_GROUPID_INT = 5,
}

/// An `aclrtGroupAttr` value as received (any integer).
pub type GroupAttrArg = i32;

/// The groups of the current context, read with `aclrtGetGroupInfoDetail` after
/// `aclrtGetAllGroupInfo` filled it.
pub struct tagRtGroupInfo {
    /// The one group's attributes, by `aclrtGroupAttr`, once filled.
    attrs: Option<[i32; 6]>,
}

/// The group information block `aclrtCreateGroupInfo` makes.
pub type aclrtGroupInfo = tagRtGroupInfo;

/// Blocks made and not destroyed: a pointer not among them is refused, never dereferenced.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn live<R>(f: impl FnOnce(&mut HashSet<usize>) -> R) -> R {
    f(sync::lock(&LIVE).get_or_insert_with(HashSet::new))
}

fn check_live(p: *const aclrtGroupInfo) -> AclResult<()> {
    if p.is_null() {
        return Err(null_argument("groupInfo"));
    }
    if !live(|l| l.contains(&p.addr())) {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "groupInfo was not made by aclrtCreateGroupInfo (or is destroyed)",
        ));
    }
    Ok(())
}

/// Uses group `groupId` for the current context's work: only group 0 exists (another id is
/// 107000); 107002 without a current context.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetGroup(groupId: i32) -> aclError {
    acl_call("aclrtSetGroup", || sys_params::set_group(context::current()?.handle, groupId))
}

/// The groups of the current context: 1 (107002 without a current context).
///
/// # Safety
/// `count` is NULL or valid for a write of a `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetGroupCount(count: *mut u32) -> aclError {
    acl_call("aclrtGetGroupCount", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(count, "count") }?;
        context::current()?;
        out.write(1);
        Ok(())
    })
}

/// Makes a group information block for the groups there are (one); free it with
/// `aclrtDestroyGroupInfo`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCreateGroupInfo() -> *mut aclrtGroupInfo {
    boundary("aclrtCreateGroupInfo", std::ptr::null_mut(), || {
        let p = Box::into_raw(Box::new(tagRtGroupInfo { attrs: None }));
        live(|l| l.insert(p.addr()));
        p
    })
}

/// Frees a block of `aclrtCreateGroupInfo` (NULL: 100000; another pointer: 107000).
///
/// # Safety
/// `groupInfo` is NULL or any pointer (only blocks this library made are touched).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyGroupInfo(groupInfo: *mut aclrtGroupInfo) -> aclError {
    acl_call("aclrtDestroyGroupInfo", || {
        check_live(groupInfo)?;
        live(|l| l.remove(&groupInfo.addr()));
        // SAFETY: made by `Box::into_raw` in `aclrtCreateGroupInfo` and removed from the live set
        // just now, so it is freed once.
        drop(unsafe { Box::from_raw(groupInfo) });
        Ok(())
    })
}

/// Fills `groupInfo` with the current context's group: all the device's AI Cores, Vector
/// Cores and AI CPUs, 4 SDMA channels (an assumption), 32 streams, id 0.
///
/// # Safety
/// `groupInfo` is NULL or any pointer (only blocks this library made are touched), not used by
/// another thread meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetAllGroupInfo(groupInfo: *mut aclrtGroupInfo) -> aclError {
    acl_call("aclrtGetAllGroupInfo", || {
        check_live(groupInfo)?;
        context::current()?;
        let s = settings();
        let f = Figures::of(s.soc.to_str().unwrap_or_default(), s.product);
        let attrs = [
            f.ai_cores,
            f.vector_cores,
            f.ai_cpus,
            GROUP_SDMA_CHANNELS,
            GROUP_STREAMS,
            sys_params::GROUP_ID as u32,
        ]
        .map(|v| v as i32);
        // SAFETY: a live block of this library (checked above), used by this thread only.
        unsafe { (*groupInfo).attrs = Some(attrs) };
        Ok(())
    })
}

/// Attribute `attr` of group `groupIndex` (0, the one group) of a block `aclrtGetAllGroupInfo`
/// filled, as an `int32_t` into `attrValue` (`valueLen` at least 4; `paramRetSize` receives 4).
///
/// # Safety
/// `groupInfo` is NULL or any pointer; `attrValue` is NULL or valid for `valueLen` bytes;
/// `paramRetSize` is NULL or valid for a write of a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetGroupInfoDetail(
    groupInfo: *const aclrtGroupInfo,
    groupIndex: i32,
    attr: GroupAttrArg,
    attrValue: *mut c_void,
    valueLen: usize,
    paramRetSize: *mut usize,
) -> aclError {
    acl_call("aclrtGetGroupInfoDetail", || {
        // SAFETY: forwarded from this function's contract.
        let ret = unsafe { Out::new(paramRetSize, "paramRetSize") }?;
        // SAFETY: an `int32_t` in a buffer the caller says holds `valueLen` bytes (checked below).
        let value = unsafe { Out::new(attrValue.cast::<i32>(), "attrValue") }?;
        check_live(groupInfo)?;
        let bad = |m: String| AclError::new(ACL_ERROR_RT_PARAM_INVALID, m);
        if valueLen < size_of::<i32>() {
            return Err(bad(format!("valueLen {valueLen}: the attribute is an int32_t (4 bytes)")));
        }
        if groupIndex != 0 {
            return Err(bad(format!("groupIndex {groupIndex}: there is one group, index 0")));
        }
        let i = usize::try_from(attr)
            .ok()
            .filter(|&i| i < 6)
            .ok_or_else(|| bad(format!("attr {attr} is not an aclrtGroupAttr (0..=5)")))?;
        // SAFETY: a live block of this library (checked above).
        let attrs = unsafe { (*groupInfo).attrs }
            .ok_or_else(|| bad("groupInfo is not filled yet: call aclrtGetAllGroupInfo first".to_owned()))?;
        value.write(attrs[i]);
        ret.write(size_of::<i32>());
        Ok(())
    })
}
