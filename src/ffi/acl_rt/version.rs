//! `acl/acl_rt.h`: the versions of the emulated toolkit (`runtime/version.rs` holds them).

#![allow(non_snake_case)]

use std::ffi::c_char;

use crate::error::acl_codes::aclError;
use crate::ffi::acl_call;
use crate::ffi::ptr::{Out, required_str};
use crate::runtime::version;

/// Size of the version string buffers (`aclsysGetVersionStr`, `aclCANNPackageVersion`).
pub const ACL_PKG_VERSION_MAX_SIZE: usize = 128;
/// Size of each part of `aclCANNPackageVersion`.
pub const ACL_PKG_VERSION_PARTS_MAX_SIZE: usize = 64;

/// The AscendCL interface major version this library implements.
pub const ACL_MAJOR_VERSION: i32 = 1;
/// The AscendCL interface minor version this library implements.
pub const ACL_MINOR_VERSION: i32 = 17;
/// The AscendCL interface patch version this library implements.
pub const ACL_PATCH_VERSION: i32 = 0;

/// The packages `aclsysGetCANNVersion` knows.
#[repr(C)]
pub enum aclCANNPackageName {
    ACL_PKG_NAME_CANN = 0,
    ACL_PKG_NAME_RUNTIME = 1,
    ACL_PKG_NAME_COMPILER = 2,
    ACL_PKG_NAME_HCCL = 3,
    ACL_PKG_NAME_TOOLKIT = 4,
    ACL_PKG_NAME_OPP = 5,
    ACL_PKG_NAME_OPP_KERNEL = 6,
    ACL_PKG_NAME_DRIVER = 7,
}

/// An `aclCANNPackageName` value as received (any integer).
pub type CANNPackageNameArg = i32;

/// A package's version, whole and in parts (each NUL-terminated).
#[repr(C)]
pub struct aclCANNPackageVersion {
    pub version: [c_char; ACL_PKG_VERSION_MAX_SIZE],
    pub majorVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub minorVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub releaseVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub patchVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub reserved: [c_char; ACL_PKG_VERSION_MAX_SIZE],
}

/// `text` as a NUL-terminated C array of `N` (texts here are short; longer ones are cut).
fn c_array<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *o = b as c_char;
    }
    out
}

/// The version of package `name` (an `aclCANNPackageName`; 100000 for another value), split
/// as the vendor splits it (missing parts "0"). Deprecated by the vendor for
/// `aclsysGetVersionStr`, which answers the same.
///
/// # Safety
/// `version` is NULL or valid for a write of an `aclCANNPackageVersion`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetCANNVersion(
    name: CANNPackageNameArg,
    version: *mut aclCANNPackageVersion,
) -> aclError {
    acl_call("aclsysGetCANNVersion", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(version, "version") }?;
        let text = version::of_enum(name)?;
        let [major, minor, release, patch] = version::parts(text);
        out.write(aclCANNPackageVersion {
            version: c_array(text),
            majorVersion: c_array(&major),
            minorVersion: c_array(&minor),
            releaseVersion: c_array(&release),
            patchVersion: c_array(&patch),
            reserved: [0; ACL_PKG_VERSION_MAX_SIZE],
        });
        Ok(())
    })
}

/// The version string of package `pkgName` ("cann", "runtime", "compiler", "hccl", "toolkit",
/// "opp", "opp_kernel" or "opp-kernel": the toolkit's, 9.0.0; "driver", "firmware": 25.5.0)
/// into `versionStr`, which must hold `ACL_PKG_VERSION_MAX_SIZE` bytes. An unknown package is
/// 100003, as one not installed.
///
/// # Safety
/// `pkgName` is NULL or a NUL-terminated string; `versionStr` is NULL or valid for writes of
/// `ACL_PKG_VERSION_MAX_SIZE` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> aclError {
    acl_call("aclsysGetVersionStr", || {
        // SAFETY: forwarded from this function's contract (an array of the documented size).
        let out = unsafe { Out::new(versionStr.cast::<[c_char; ACL_PKG_VERSION_MAX_SIZE]>(), "versionStr") }?;
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { required_str(pkgName, "pkgName") }?;
        out.write(c_array(version::of_package(name)?));
        Ok(())
    })
}

/// The version of package `pkgName` (as `aclsysGetVersionStr`) as a number that orders
/// releases: major·10⁷ + minor·10⁵ + patch·10³ (9.0.0 is 90000000), as the vendor computes it.
///
/// # Safety
/// `pkgName` is NULL or a NUL-terminated string; `versionNum` is NULL or valid for a write of
/// an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> aclError {
    acl_call("aclsysGetVersionNum", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(versionNum, "versionNum") }?;
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { required_str(pkgName, "pkgName") }?;
        let text = version::of_package(name)?;
        out.write(version::number(text).expect("the packages' versions are well formed"));
        Ok(())
    })
}

/// The AscendCL interface version: 1.17.0 (`ACL_MAJOR_VERSION` and friends of the header).
/// Every pointer is required.
///
/// # Safety
/// Each pointer is NULL or valid for a write of an `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(
    majorVersion: *mut i32,
    minorVersion: *mut i32,
    patchVersion: *mut i32,
) -> aclError {
    acl_call("aclrtGetVersion", || {
        // SAFETY: forwarded from this function's contract.
        let (major, minor, patch) = unsafe {
            (
                Out::new(majorVersion, "majorVersion")?,
                Out::new(minorVersion, "minorVersion")?,
                Out::new(patchVersion, "patchVersion")?,
            )
        };
        let (ma, mi, pa) = version::ACL_INTERFACE_VERSION;
        major.write(ma);
        minor.write(mi);
        patch.write(pa);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_s_version_is_the_runtime_s() {
        assert_eq!((ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION), version::ACL_INTERFACE_VERSION);
    }
}
