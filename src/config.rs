//! Settings read from the environment, once per process.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `ASCENDLESS_DEVICE_COUNT` | 8 | number of virtual devices (1..=64) |
//! | `ASCENDLESS_SOC` | `Ascend910B1` | SoC name `aclrtGetSocName` returns; picks the product profile |
//! | `ASCENDLESS_DEVICE_MEMORY` | `64G` | device memory per device (bytes, or with K/M/G/T suffix) |
//! | `ASCENDLESS_STRICT_DEVICE_MEMORY` | `0` | `1`: host code cannot dereference device memory |
//! | `ASCENDLESS_VIRTUAL_INSTANCE` | `0` | `1`: behave as a virtual NPU instance (IPC import unsupported) |
//! | `ASCEND_RT_VISIBLE_DEVICES` | unset | devices this process sees, e.g. `1,2,3` (ascending logical ids), renumbered 0.. ([`visible`]) |
//!
//! A value that does not parse is reported in the log and the default is used: a typo must not
//! turn into a different machine silently, but it must not stop the program either. The
//! vendor's `ASCEND_RT_VISIBLE_DEVICES` follows the vendor's rules instead ([`visible`]): a
//! value it refuses leaves the process without devices.

pub mod visible;

use std::ffi::CString;
use std::sync::OnceLock;

use crate::logging::TARGET;
use crate::profile::Product;
use visible::VisibleDevices;

pub const DEFAULT_DEVICE_COUNT: u32 = 8;
pub const MAX_DEVICE_COUNT: u32 = 64;
pub const DEFAULT_SOC: &str = "Ascend910B1";
/// An Atlas A2 part (910B1) has 64 GB of on-chip memory.
pub const DEFAULT_DEVICE_MEMORY: u64 = 64 << 30;

#[derive(Debug, Clone)]
pub struct Settings {
    pub device_count: u32,
    pub soc: CString,
    pub product: Product,
    pub device_memory: u64,
    pub strict_device_memory: bool,
    pub virtual_instance: bool,
    /// The devices this process sees (`ASCEND_RT_VISIBLE_DEVICES`) among `device_count`.
    pub visible: VisibleDevices,
}

/// The settings of this process (read on first use).
pub fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| from_env(|name| std::env::var(name).ok()))
}

/// Builds settings from a variable lookup (the environment, or a table in tests).
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Settings {
    let device_count = parse_or_default(var("ASCENDLESS_DEVICE_COUNT"), "ASCENDLESS_DEVICE_COUNT", |v| {
        v.parse::<u32>().ok().filter(|n| (1..=MAX_DEVICE_COUNT).contains(n))
    })
    .unwrap_or(DEFAULT_DEVICE_COUNT);
    let soc = parse_or_default(var("ASCENDLESS_SOC"), "ASCENDLESS_SOC", |v| {
        Product::from_soc(v).map(|p| (v.to_owned(), p))
    })
    .unwrap_or_else(|| {
        (DEFAULT_SOC.to_owned(), Product::from_soc(DEFAULT_SOC).expect("default SoC is known"))
    });
    let device_memory =
        parse_or_default(var("ASCENDLESS_DEVICE_MEMORY"), "ASCENDLESS_DEVICE_MEMORY", parse_size)
            .unwrap_or(DEFAULT_DEVICE_MEMORY);
    let flag = |name: &str| {
        parse_or_default(var(name), name, |v| match v {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        })
        .unwrap_or(false)
    };
    let strict_device_memory = flag("ASCENDLESS_STRICT_DEVICE_MEMORY");
    let virtual_instance = flag("ASCENDLESS_VIRTUAL_INSTANCE");
    let visible = VisibleDevices::parse(var("ASCEND_RT_VISIBLE_DEVICES").as_deref(), device_count);
    if let Some(why) = visible.fault_text() {
        log::warn!(target: TARGET, "{why}");
    }
    Settings {
        device_count,
        soc: CString::new(soc.0).unwrap_or_else(|_| CString::from(c"Ascend910B1")),
        product: soc.1,
        device_memory,
        strict_device_memory,
        virtual_instance,
        visible,
    }
}

fn parse_or_default<T>(value: Option<String>, name: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    let value = value?;
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return None;
    }
    let parsed = parse(trimmed);
    if parsed.is_none() {
        log::warn!(target: TARGET, "{name}={value:?} is not valid; using the default");
    }
    parsed
}

/// "4096", "512K", "64M", "16G", "1T" (optionally "GiB"/"GB"), at least one byte.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    number.checked_mul(1u64 << shift).filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Settings {
        from_env(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn defaults_are_an_eight_device_a2_server() {
        let s = with(&[]);
        assert_eq!(s.device_count, 8);
        assert_eq!(s.soc.to_str().unwrap(), "Ascend910B1");
        assert_eq!(s.product, Product::AtlasA2);
        assert_eq!(s.device_memory, 64 << 30);
        assert!(!s.strict_device_memory);
        assert!(!s.virtual_instance);
        assert_eq!((s.visible.count(), s.visible.fault.clone()), (8, None));
    }

    #[test]
    fn visible_devices_are_chosen_among_the_machine_s() {
        let s = with(&[("ASCENDLESS_DEVICE_COUNT", "4"), ("ASCEND_RT_VISIBLE_DEVICES", "1,3,5")]);
        assert_eq!((s.visible.count(), s.visible.logical_of_user(1)), (2, Some(3)));
        let s = with(&[("ASCEND_RT_VISIBLE_DEVICES", "4,2")]);
        assert_eq!(s.visible.fault, Some(visible::Fault::NotAscending));
        assert_eq!(s.visible.count(), 0);
    }

    #[test]
    fn values_are_read_and_bad_ones_fall_back() {
        let s = with(&[
            ("ASCENDLESS_DEVICE_COUNT", "2"),
            ("ASCENDLESS_SOC", "Ascend910_9391"),
            ("ASCENDLESS_DEVICE_MEMORY", "1G"),
            ("ASCENDLESS_STRICT_DEVICE_MEMORY", "1"),
            ("ASCENDLESS_VIRTUAL_INSTANCE", "1"),
        ]);
        assert!(s.virtual_instance);
        assert_eq!(
            (s.device_count, s.product, s.device_memory, s.strict_device_memory),
            (2, Product::AtlasA3, 1 << 30, true)
        );
        let s = with(&[
            ("ASCENDLESS_DEVICE_COUNT", "0"),
            ("ASCENDLESS_SOC", "Pentium"),
            ("ASCENDLESS_DEVICE_MEMORY", "lots"),
        ]);
        assert_eq!((s.device_count, s.product, s.device_memory), (8, Product::AtlasA2, 64 << 30));
        assert_eq!(with(&[("ASCENDLESS_DEVICE_COUNT", "65")]).device_count, 8);
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("16GiB"), Some(16 << 30));
        assert_eq!(parse_size("2GB"), Some(2 << 30));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(parse_size("3X"), None);
    }
}
