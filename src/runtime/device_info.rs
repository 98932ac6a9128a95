//! What a device says about itself: `aclrtGetDeviceInfo`, `aclrtGetDeviceCapability`,
//! `aclrtDeviceGetUuid`, `aclrtGetDevicesTopo`, the PCI bus ids, the atomic capabilities,
//! utilisation and status.
//!
//! Every answer comes from the emulated product (`profile::Figures`, `Product`) and the
//! settings, so two calls, two threads and two processes with the same settings agree.
//! docs/device.md lists the answers per product and the choices made where the vendor is
//! silent.

use crate::config::Settings;
use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::profile::{Figures, Product};

use super::{device, device_ids};

/// `aclrtDevAttr` values.
pub mod attr {
    pub const AICPU_CORE_NUM: i32 = 1;
    pub const AICORE_CORE_NUM: i32 = 101;
    pub const CUBE_CORE_NUM: i32 = 102;
    pub const VECTOR_CORE_NUM: i32 = 201;
    pub const WARP_SIZE: i32 = 202;
    pub const MAX_THREAD_PER_VECTOR_CORE: i32 = 203;
    pub const UBUF_PER_VECTOR_CORE: i32 = 204;
    pub const MAX_GRID_DIM_X: i32 = 205;
    pub const MAX_GRID_DIM_Y: i32 = 206;
    pub const MAX_GRID_DIM_Z: i32 = 207;
    pub const MAX_BLOCK_PER_GRID: i32 = 208;
    pub const MAX_THREADS_PER_BLOCK: i32 = 209;
    pub const MAX_BLOCK_DIM_X: i32 = 210;
    pub const MAX_BLOCK_DIM_Y: i32 = 211;
    pub const MAX_BLOCK_DIM_Z: i32 = 212;
    pub const TOTAL_GLOBAL_MEM_SIZE: i32 = 301;
    pub const L2_CACHE_SIZE: i32 = 302;
    pub const SMP_ID: i32 = 401;
    pub const PHY_CHIP_ID: i32 = 402;
    pub const SUPER_POD_DEVICE_ID: i32 = 403;
    pub const SUPER_POD_SERVER_ID: i32 = 404;
    pub const SUPER_POD_ID: i32 = 405;
    pub const CUST_OP_PRIVILEGE: i32 = 406;
    pub const MAINBOARD_ID: i32 = 407;
    pub const HD_CONNECT_TYPE: i32 = 408;
    pub const DEVICE_FORM_FACTOR: i32 = 409;
    pub const IS_VIRTUAL: i32 = 501;
    pub const NPU_ARCH: i32 = 601;
}

/// The SIMT figures of Ascend 950 (attributes 202..=212), the only product with SIMT; the
/// vendor does not publish them here, so they are assumptions (docs/device.md). Other products
/// answer 0, as the vendor documents.
fn simt(attr: i32) -> i64 {
    match attr {
        attr::WARP_SIZE => 32,
        attr::MAX_THREAD_PER_VECTOR_CORE => 2048,
        attr::UBUF_PER_VECTOR_CORE => 256 << 10,
        attr::MAX_GRID_DIM_X => i64::from(i32::MAX),
        attr::MAX_GRID_DIM_Y | attr::MAX_GRID_DIM_Z => 65535,
        attr::MAX_BLOCK_PER_GRID => i64::from(i32::MAX),
        attr::MAX_THREADS_PER_BLOCK => 1024,
        attr::MAX_BLOCK_DIM_X | attr::MAX_BLOCK_DIM_Y => 1024,
        attr::MAX_BLOCK_DIM_Z => 64,
        _ => 0,
    }
}

fn unsupported(what: &str) -> AclError {
    AclError::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, what.to_owned())
}

/// `aclrtGetDeviceInfo`: attribute `attr` of device `id` (a user id).
pub fn info(id: i32, attr: i32, s: &Settings) -> AclResult<i64> {
    device::check_id(id, s)?;
    let product = s.product;
    let f = Figures::of(s.soc.to_str().unwrap_or_default(), product);
    let physical = i64::from(device_ids::physical_of_user(id, s)?);
    let only_950 = |v: i64, what: &str| {
        if product == Product::Ascend950 {
            Ok(v)
        } else {
            Err(unsupported(&format!("{what} is answered on Ascend 950 only (ASCENDLESS_SOC)")))
        }
    };
    let super_node = |v: i64, what: &str| {
        if product.is_super_node() {
            Ok(v)
        } else {
            Err(unsupported(&format!("{what} exists on super-node products only (Atlas A3, Ascend 950)")))
        }
    };
    Ok(match attr {
        attr::AICPU_CORE_NUM => i64::from(f.ai_cpus),
        attr::AICORE_CORE_NUM => i64::from(f.ai_cores),
        attr::CUBE_CORE_NUM => i64::from(f.cube_cores),
        attr::VECTOR_CORE_NUM => i64::from(f.vector_cores),
        attr::WARP_SIZE..=attr::MAX_BLOCK_DIM_Z => {
            if product == Product::Ascend950 {
                simt(attr)
            } else {
                0
            }
        }
        attr::TOTAL_GLOBAL_MEM_SIZE => i64::try_from(s.device_memory).unwrap_or(i64::MAX),
        attr::L2_CACHE_SIZE => i64::try_from(f.l2_cache).unwrap_or(i64::MAX),
        // Every emulated device runs under this one operating system.
        attr::SMP_ID => 0,
        attr::PHY_CHIP_ID => physical,
        attr::SUPER_POD_DEVICE_ID => super_node(physical, "the super-pod device id")?,
        attr::SUPER_POD_SERVER_ID => super_node(0, "the super-pod server id")?,
        attr::SUPER_POD_ID => super_node(0, "the super-pod id")?,
        attr::CUST_OP_PRIVILEGE => {
            if product == Product::Ascend950 {
                return Err(unsupported("the custom operator privilege is not an Ascend 950 attribute"));
            }
            0
        }
        attr::MAINBOARD_ID => 0,
        attr::HD_CONNECT_TYPE => only_950(HD_CONNECT_PCIE, "the host-device connection type")?,
        attr::DEVICE_FORM_FACTOR => only_950(form_factor(), "the device form factor")?,
        attr::IS_VIRTUAL => i64::from(s.virtual_instance),
        attr::NPU_ARCH => i64::from(f.npu_arch),
        other => {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("attribute {other} is not an aclrtDevAttr"),
            ));
        }
    })
}

/// `ACL_HOST_DEVICE_CONNECT_TYPE_PCIE`: the emulated devices hang off the host like PCIe cards.
const HD_CONNECT_PCIE: i64 = 0;

/// `ACL_DEVICE_FORM_FACTOR_A_K` on an Arm (Kunpeng-like) host, `..._A_X` on any other: a
/// server whose host processor is the machine's.
fn form_factor() -> i64 {
    if cfg!(target_arch = "aarch64") { 1 } else { 2 }
}

/// `aclrtGetDeviceCapability`: whether device `id` has feature `feature`. Neither feature the
/// vendor defines exists here: updating AI Core tasks of the task scheduler (1) needs kernel
/// tasks, and queue events across devices (21) need the shared queues.
pub fn capability(id: i32, feature: i32, s: &Settings) -> AclResult<bool> {
    device::check_id(id, s)?;
    match feature {
        1 | 21 => Ok(false),
        other => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("feature {other} is not an aclrtDevFeatureType (1, 21)"),
        )),
    }
}

/// `aclrtDeviceGetUuid`: 16 bytes naming device `id` on this machine, the same in every process
/// (made from its physical id and the SoC name), different for every device.
pub fn uuid(id: i32, s: &Settings) -> AclResult<[u8; 16]> {
    device::check_id(id, s)?;
    let physical = device_ids::physical_of_user(id, s)?;
    let seed = format!("ascendless:{}:{physical}", s.soc.to_str().unwrap_or_default());
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&fnv1a(seed.as_bytes(), 0xcbf2_9ce4_8422_2325).to_be_bytes());
    out[8..].copy_from_slice(&fnv1a(seed.as_bytes(), 0x6c62_272e_07bb_0142).to_be_bytes());
    // An RFC 4122 name-based layout: version 5 bits, variant 10.
    out[6] = (out[6] & 0x0f) | 0x50;
    out[8] = (out[8] & 0x3f) | 0x80;
    Ok(out)
}

fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    bytes.iter().fold(seed, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// `ACL_RT_DEVS_TOPOLOGY_*` bits.
pub mod topology {
    pub const HCCS: u64 = 0x01;
    pub const PIX: u64 = 0x02;
    pub const PHB: u64 = 0x08;
    pub const SYS: u64 = 0x10;
    pub const SIO: u64 = 0x20;
    pub const HCCS_SW: u64 = 0x40;
}

/// `aclrtGetDevicesTopo`: how devices `a` and `b` (two distinct user ids) are linked, as on
/// the product's usual server: Atlas A2 and Ascend 950 servers link every pair by HCCS; an Atlas
/// A3 part holds two dies joined on chip (SIO), the rest meet through the HCCS switch; Atlas
/// training servers have two HCCS rings of four, linked through the host (SYS); the inference
/// products are PCIe cards under one host bridge (PHB).
pub fn topology(a: i32, b: i32, s: &Settings) -> AclResult<u64> {
    device::check_id(a, s)?;
    device::check_id(b, s)?;
    if a == b {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("deviceId and otherDeviceId are both {a}: the topology is between two devices"),
        ));
    }
    let (pa, pb) = (device_ids::physical_of_user(a, s)?, device_ids::physical_of_user(b, s)?);
    Ok(match s.product {
        Product::AtlasA2 | Product::Ascend950 => topology::HCCS,
        Product::AtlasA3 if pa / 2 == pb / 2 => topology::SIO,
        Product::AtlasA3 => topology::HCCS_SW,
        Product::AtlasTraining if pa / 4 == pb / 4 => topology::HCCS,
        Product::AtlasTraining => topology::SYS,
        Product::AtlasInference | Product::Atlas200I500A2 => topology::PHB,
    })
}

/// `aclrtDeviceGetPCIBusId`: device `id`'s bus address, `0000:BB:00.0` with bus number
/// physical id + 1 (each emulated card on a bus of its own).
pub fn pci_bus_id(id: i32, s: &Settings) -> AclResult<String> {
    device::check_id(id, s)?;
    let physical = device_ids::physical_of_user(id, s)?;
    Ok(format!("0000:{:02x}:00.0", physical + 1))
}

/// `aclrtDeviceGetByPCIBusId`: the user id of the device at bus address `text` (the
/// `domain:bus:device.function` form, hexadecimal, any case; the domain may be left out).
pub fn by_pci_bus_id(text: &str, s: &Settings) -> AclResult<i32> {
    let bad = |why: &str| AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("PCI bus id {text:?} {why}"));
    let parts: Vec<&str> = text.trim().split(':').collect();
    let (domain, bus, devfn) = match parts.as_slice() {
        [d, b, f] => (*d, *b, *f),
        [b, f] => ("0", *b, *f),
        _ => return Err(bad("is not domain:bus:device.function")),
    };
    let (dev, func) = devfn.split_once('.').ok_or_else(|| bad("has no .function"))?;
    let hex = |v: &str| u32::from_str_radix(v, 16).map_err(|_| bad("has a part that is not hexadecimal"));
    let (domain, bus, dev, func) = (hex(domain)?, hex(bus)?, hex(dev)?, hex(func)?);
    let physical = i32::try_from(bus).unwrap_or(i32::MAX) - 1;
    if domain != 0 || dev != 0 || func != 0 || physical < 0 || physical >= s.device_count as i32 {
        return Err(bad(&format!(
            "names no device of this machine (they are 0000:01:00.0 .. 0000:{:02x}:00.0)",
            s.device_count
        )));
    }
    device_ids::user_of_physical(physical, s)
}

/// `aclrtAtomicOperationCapability` bits.
pub mod atomic {
    pub const SIGNED: u32 = 1 << 0;
    pub const UNSIGNED: u32 = 1 << 1;
    pub const SCALAR32: u32 = 1 << 5;
    pub const SCALAR64: u32 = 1 << 6;
}

/// What atomic operation `op` (an `aclrtAtomicOperation`) can do on device memory, from the
/// host or from another device: device memory here is host memory, so the processor's 32- and
/// 64-bit atomics apply to the integer operations (signed and unsigned) and the float ones; there
/// is no DMA engine (30..=32) and no SIMD unit (40..=44) to do the others.
pub fn atomic_capability(op: i32) -> AclResult<u32> {
    use atomic::*;
    match op {
        0..=9 => Ok(SIGNED | UNSIGNED | SCALAR32 | SCALAR64),
        10..=12 => Ok(SCALAR32 | SCALAR64),
        30..=32 | 40..=44 => Ok(0),
        other => Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("operation {other} is not an aclrtAtomicOperation"),
        )),
    }
}

/// `aclrtGetDeviceUtilizationRate`: cube, vector, AI CPU and memory utilisation in percent.
/// No kernel ever runs on the emulated AI Cores, Vector Cores or AI CPUs, so they are idle (0);
/// a product without Vector Cores answers -1 for them, and memory is -1 as the vendor documents
/// (not measured).
pub fn utilization(id: i32, s: &Settings) -> AclResult<[i32; 4]> {
    device::check_id(id, s)?;
    let f = Figures::of(s.soc.to_str().unwrap_or_default(), s.product);
    Ok([0, if f.vector_cores == 0 { -1 } else { 0 }, 0, -1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(vars: &'static [(&'static str, &'static str)]) -> Settings {
        crate::config::from_env(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn figures_answer_per_product() {
        let a2 = machine(&[]);
        assert_eq!(info(0, attr::AICORE_CORE_NUM, &a2).unwrap(), 24);
        assert_eq!(info(0, attr::WARP_SIZE, &a2).unwrap(), 0);
        assert_eq!(info(0, attr::NPU_ARCH, &a2).unwrap(), 2201);
        assert_eq!(info(0, attr::HD_CONNECT_TYPE, &a2).unwrap_err().code, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let p950 = machine(&[("ASCENDLESS_SOC", "Ascend950PR_9579")]);
        assert_eq!(info(1, attr::WARP_SIZE, &p950).unwrap(), 32);
        assert_eq!(info(1, attr::SUPER_POD_DEVICE_ID, &p950).unwrap(), 1);
        assert_eq!(info(0, 9999, &a2).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn pci_ids_go_both_ways_through_the_visible_devices() {
        let s = machine(&[("ASCEND_RT_VISIBLE_DEVICES", "2,5")]);
        assert_eq!(pci_bus_id(1, &s).unwrap(), "0000:06:00.0");
        assert_eq!(by_pci_bus_id("0000:06:00.0", &s).unwrap(), 1);
        assert_eq!(by_pci_bus_id("03:00.0", &s).unwrap(), 0);
        assert!(by_pci_bus_id("0000:02:00.0", &s).is_err(), "physical 1 is hidden");
        assert!(by_pci_bus_id("0000:zz:00.0", &s).is_err());
    }

    #[test]
    fn uuids_differ_per_device_and_stay_put() {
        let s = machine(&[]);
        assert_eq!(uuid(3, &s).unwrap(), uuid(3, &s).unwrap());
        assert_ne!(uuid(3, &s).unwrap(), uuid(4, &s).unwrap());
    }
}
