//! The versions the emulated toolkit reports (`aclsysGetVersionStr`, `aclsysGetVersionNum`,
//! `aclsysGetCANNVersion`, `aclrtGetVersion`).
//!
//! The vendor reads them from the `version.info` files of the installed packages; here the
//! packages are the library itself, so their versions are fixed: one table, below. The numeric
//! form follows the vendor's weights, so a program comparing numbers orders them as on a
//! machine with the same packages.

use crate::error::acl_codes::{ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM};
use crate::error::{AclError, AclResult};

/// The AscendCL interface version of the header this library implements (`ACL_MAJOR_VERSION`
/// and friends of the vendor's `acl_rt.h`).
pub const ACL_INTERFACE_VERSION: (i32, i32, i32) = (1, 17, 0);

/// The toolkit release the emulated packages claim.
pub const CANN_VERSION: &str = "9.0.0";
/// The driver and firmware release the emulated machine claims.
pub const DRIVER_VERSION: &str = "25.5.0";

/// The installed packages and their versions. Names are the directory names of the vendor's
/// `share/info`, plus `driver` and `firmware`.
const PACKAGES: &[(&str, &str)] = &[
    ("cann", CANN_VERSION),
    ("runtime", CANN_VERSION),
    ("compiler", CANN_VERSION),
    ("hccl", CANN_VERSION),
    ("toolkit", CANN_VERSION),
    ("opp", CANN_VERSION),
    ("opp_kernel", CANN_VERSION),
    ("driver", DRIVER_VERSION),
    ("firmware", DRIVER_VERSION),
];

/// The names of `aclCANNPackageName` (0..=7), in its order.
const ENUM_NAMES: [&str; 8] =
    ["cann", "runtime", "compiler", "hccl", "toolkit", "opp", "opp_kernel", "driver"];

/// The version string of package `name`; as the vendor, `-` and `_` are interchangeable
/// (`opp-kernel` is `opp_kernel`). An unknown package is 100003, as a missing `version.info`.
pub fn of_package(name: &str) -> AclResult<&'static str> {
    let wanted = name.replace('-', "_");
    PACKAGES.iter().find(|(n, _)| *n == wanted).map(|(_, v)| *v).ok_or_else(|| {
        let known: Vec<&str> = PACKAGES.iter().map(|(n, _)| *n).collect();
        AclError::new(
            ACL_ERROR_INVALID_FILE,
            format!("package {name:?} is not installed; the emulated toolkit has {}", known.join(", ")),
        )
    })
}

/// The version string of the package `aclCANNPackageName` value `name` names (100000 when it
/// names none).
pub fn of_enum(name: i32) -> AclResult<&'static str> {
    let pkg = usize::try_from(name).ok().and_then(|i| ENUM_NAMES.get(i)).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("package name {name} is not an aclCANNPackageName (0..=7)"),
        )
    })?;
    of_package(pkg)
}

/// The vendor's numeric form of `version` ("X.Y.Z" with an optional alpha/beta/rc suffix):
/// X·10⁷ + Y·10⁵ + Z·10³, less 300/200/100 for alpha/beta/rc plus the pre-release number.
pub fn number(version: &str) -> Option<i32> {
    let mut parts = version.splitn(3, '.');
    let major: i32 = parts.next()?.parse().ok()?;
    let minor: i32 = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let patch: i32 = rest[..digits].parse().ok()?;
    let base = major.checked_mul(10_000_000)? + minor * 100_000 + patch * 1_000;
    let suffix = rest[digits..].to_ascii_lowercase();
    if suffix.is_empty() {
        return Some(base);
    }
    let tail = suffix.trim_start_matches(['-', '.', '_']);
    let (weight, number) = [("alpha", 300), ("beta", 200), ("rc", 100)]
        .iter()
        .find_map(|(k, w)| tail.strip_prefix(k).map(|n| (*w, n)))?;
    let n: i32 = number.trim_start_matches(['-', '.', '_']).parse().ok()?;
    Some(base - weight + n)
}

/// "X.Y.Z" split into the four parts of `aclCANNPackageVersion` (major, minor, release,
/// patch), missing ones "0", as the vendor fills them.
pub fn parts(version: &str) -> [String; 4] {
    let mut p: Vec<String> = version.split('.').map(str::to_owned).collect();
    p.resize(4, "0".to_owned());
    [p[0].clone(), p[1].clone(), p[2].clone(), p[3].clone()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_vendor_s_weights() {
        assert_eq!(number("9.0.0"), Some(90_000_000));
        assert_eq!(number("8.5.1"), Some(80_501_000));
        assert!(number("9.0.0-alpha.1") < number("9.0.0-beta.1"));
        assert!(number("9.0.0-beta.2") < number("9.0.0-rc.1"));
        assert!(number("9.0.0-rc.2") < number("9.0.0"));
        assert_eq!(number("9.0.0-rc.2"), Some(90_000_000 - 100 + 2));
        assert_eq!(number("9.0"), None);
        assert_eq!(number("9.0.0-gamma"), None);
    }

    #[test]
    fn packages_are_found_by_either_spelling() {
        assert_eq!(of_package("opp-kernel").unwrap(), CANN_VERSION);
        assert_eq!(of_package("driver").unwrap(), DRIVER_VERSION);
        assert_eq!(of_package("nope").unwrap_err().code, ACL_ERROR_INVALID_FILE);
        assert_eq!(of_enum(7).unwrap(), DRIVER_VERSION);
        assert_eq!(of_enum(8).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
        assert_eq!(parts("9.0.0"), ["9", "0", "0", "0"].map(String::from));
    }
}
