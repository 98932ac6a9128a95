//! Limits a process sets on its devices: `aclrtDeviceSetLimit` (stack and printf sizes of
//! kernels, process-wide) and the core counts kernels may use (`aclrtSetDeviceResLimit` per
//! device, `aclrtSetStreamResLimit` per stream, `aclrtUseStreamResInCurrentThread` per thread).
//!
//! No kernel runs here, so nothing consumes them; they are checked as the vendor checks them,
//! kept, and read back with the vendor's precedence (stream > process > hardware), so a program
//! that configures and verifies them behaves as on the device.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::profile::{Figures, Product};
use crate::sync;

/// `aclrtDeviceLimit` values.
pub mod device_limit {
    pub const SIMT_STACK_SIZE: u32 = 0;
    pub const SIMT_DVG_WARP_STACK_SIZE: u32 = 1;
    pub const SIMD_STACK_SIZE: u32 = 2;
    pub const SIMD_PRINTF_FIFO_SIZE_PER_CORE: u32 = 3;
    pub const SIMT_PRINTF_FIFO_SIZE: u32 = 4;
}

/// The vendor's defaults of the five `aclrtDeviceLimit`s, in bytes.
const LIMIT_DEFAULTS: [usize; 5] = [1152, 1024, 32 << 10, 32 << 10, 2 << 20];

/// Values set by `aclrtDeviceSetLimit` (None: the default).
static DEVICE_LIMITS: Mutex<[Option<usize>; 5]> = Mutex::new([None; 5]);

fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

fn check_limit(limit: u32, product: Product) -> AclResult<usize> {
    if limit > device_limit::SIMT_PRINTF_FIFO_SIZE {
        return Err(invalid(format!("limit {limit} is not an aclrtDeviceLimit (0..=4)")));
    }
    if !product.supports_device_limit(limit) {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "limit {limit} is not supported on this product (SIMT limits need Ascend 950; SIMD ones Atlas A2, A3 or Ascend 950)"
            ),
        ));
    }
    Ok(limit as usize)
}

/// `aclrtDeviceSetLimit`: checks `value` against the vendor's range for `limit` on `product`,
/// rounds it as the vendor does, and keeps it for the whole process.
pub fn set_device_limit(limit: u32, value: usize, product: Product) -> AclResult<()> {
    use device_limit::*;
    let i = check_limit(limit, product)?;
    let stored = match limit {
        SIMT_STACK_SIZE | SIMT_DVG_WARP_STACK_SIZE => value.div_ceil(128) * 128,
        SIMD_STACK_SIZE => {
            let max = if product == Product::Ascend950 { 128 << 10 } else { 192 << 10 };
            if value > max {
                return Err(invalid(format!("SIMD stack size {value} is above the product's {max} bytes")));
            }
            if value <= 32 << 10 { 32 << 10 } else { value.div_ceil(16 << 10) * (16 << 10) }
        }
        _ => {
            let (min, max) = if limit == SIMD_PRINTF_FIFO_SIZE_PER_CORE {
                (1 << 10, 64 << 20)
            } else {
                (1 << 20, 64 << 20)
            };
            if !(min..=max).contains(&value) {
                return Err(invalid(format!("printf buffer size {value} is outside {min}..={max} bytes")));
            }
            value.div_ceil(8) * 8
        }
    };
    let mut limits = sync::lock(&DEVICE_LIMITS);
    if matches!(limit, SIMT_STACK_SIZE | SIMT_DVG_WARP_STACK_SIZE) && stored == 0 {
        let other =
            if limit == SIMT_STACK_SIZE { SIMT_DVG_WARP_STACK_SIZE } else { SIMT_STACK_SIZE } as usize;
        if limits[other].unwrap_or(LIMIT_DEFAULTS[other]) == 0 {
            return Err(invalid("the SIMT stack and divergence stack sizes cannot both be 0".to_owned()));
        }
    }
    limits[i] = Some(stored);
    Ok(())
}

/// `aclrtDeviceGetLimit`: the value set (or the default); the SIMT stack size is reported per
/// warp (32 threads), as the vendor does.
pub fn device_limit(limit: u32, product: Product) -> AclResult<usize> {
    let i = check_limit(limit, product)?;
    let v = sync::lock(&DEVICE_LIMITS)[i].unwrap_or(LIMIT_DEFAULTS[i]);
    Ok(if limit == device_limit::SIMT_STACK_SIZE { v * 32 } else { v })
}

/// `aclrtDevResLimitType`: Cube Cores (AI Cores on the older products) or Vector Cores.
fn res_index(kind: i32) -> AclResult<usize> {
    match kind {
        0 | 1 => Ok(kind as usize),
        other => Err(invalid(format!("type {other} is not an aclrtDevResLimitType (0 cube, 1 vector)"))),
    }
}

/// The hardware's count of resource `kind` (the default limit).
fn hardware(kind: usize, f: &Figures) -> u32 {
    if kind == 0 { f.cube_cores } else { f.vector_cores }
}

/// As the vendor's, a limit may be any count up to the hardware's.
fn check_value(kind: usize, value: u32, f: &Figures) -> AclResult<()> {
    let max = hardware(kind, f);
    if value > max {
        let what = if kind == 0 { "cube (AI) cores" } else { "vector cores" };
        return Err(invalid(format!("{value} {what}: the device has {max}; use at most {max}")));
    }
    Ok(())
}

/// Per-device and per-stream values set, and which stream each thread uses.
struct Res {
    /// Keyed by user device id.
    devices: HashMap<i32, [Option<u32>; 2]>,
    /// Keyed by stream id (`aclrtStreamGetId`, never reused in a process).
    streams: HashMap<u32, [Option<u32>; 2]>,
}

static RES: Mutex<Option<Res>> = Mutex::new(None);

fn with_res<R>(f: impl FnOnce(&mut Res) -> R) -> R {
    let mut guard = sync::lock(&RES);
    f(guard.get_or_insert_with(|| Res { devices: HashMap::new(), streams: HashMap::new() }))
}

/// `aclrtGetDeviceResLimit`: the process's limit on `device` (a checked id), or the hardware's.
pub fn device_res(device: i32, kind: i32, f: &Figures) -> AclResult<u32> {
    let k = res_index(kind)?;
    Ok(with_res(|r| r.devices.get(&device).and_then(|v| v[k])).unwrap_or_else(|| hardware(k, f)))
}

/// `aclrtSetDeviceResLimit`.
pub fn set_device_res(device: i32, kind: i32, value: u32, f: &Figures) -> AclResult<()> {
    let k = res_index(kind)?;
    check_value(k, value, f)?;
    with_res(|r| r.devices.entry(device).or_default()[k] = Some(value));
    Ok(())
}

/// `aclrtResetDeviceResLimit`: back to the hardware's counts. Also run when the device's
/// last use is reset: as the vendor's, the limits belong to the open device.
pub fn reset_device_res(device: i32) {
    with_res(|r| r.devices.remove(&device));
}

/// A stream as the resource limits see it: its id and device.
#[derive(Debug, Clone, Copy)]
pub struct StreamKey {
    pub id: u32,
    pub device: i32,
}

/// `aclrtGetStreamResLimit`: the stream's limit, else its device's, else the hardware's.
pub fn stream_res(stream: StreamKey, kind: i32, f: &Figures) -> AclResult<u32> {
    let k = res_index(kind)?;
    match with_res(|r| r.streams.get(&stream.id).and_then(|v| v[k])) {
        Some(v) => Ok(v),
        None => device_res(stream.device, kind, f),
    }
}

/// `aclrtSetStreamResLimit`.
pub fn set_stream_res(stream: StreamKey, kind: i32, value: u32, f: &Figures) -> AclResult<()> {
    let k = res_index(kind)?;
    check_value(k, value, f)?;
    with_res(|r| r.streams.entry(stream.id).or_default()[k] = Some(value));
    Ok(())
}

/// `aclrtResetStreamResLimit`.
pub fn reset_stream_res(stream: StreamKey) {
    with_res(|r| r.streams.remove(&stream.id));
}

/// Forgets a destroyed stream's limits.
pub fn forget_stream(id: u32) {
    with_res(|r| r.streams.remove(&id));
}

thread_local! {
    /// The stream whose limits this thread uses (`aclrtUseStreamResInCurrentThread`).
    static IN_USE: Cell<Option<StreamKey>> = const { Cell::new(None) };
}

/// `aclrtUseStreamResInCurrentThread`: the last call wins.
pub fn use_in_thread(stream: StreamKey) {
    IN_USE.with(|c| c.set(Some(stream)));
}

/// `aclrtUnuseStreamResInCurrentThread`: stops using `stream`'s limits (nothing if the thread
/// uses another stream's or none).
pub fn unuse_in_thread(stream: StreamKey) {
    IN_USE.with(|c| {
        if c.get().is_some_and(|s| s.id == stream.id) {
            c.set(None);
        }
    });
}

/// `aclrtGetResInCurrentThread`: the limits of the stream this thread uses, else those of
/// `device` (the current one), else the hardware's.
pub fn thread_res(device: i32, kind: i32, f: &Figures) -> AclResult<u32> {
    match IN_USE.with(Cell::get) {
        Some(s) => stream_res(s, kind, f),
        None => device_res(device, kind, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn res_limits_fall_back_stream_device_hardware() {
        let f = Figures::of("Ascend910B1", Product::AtlasA2);
        let s = StreamKey { id: 900_001, device: 41 };
        assert_eq!(stream_res(s, 1, &f).unwrap(), 48);
        set_device_res(41, 1, 20, &f).unwrap();
        assert_eq!(stream_res(s, 1, &f).unwrap(), 20);
        set_stream_res(s, 1, 10, &f).unwrap();
        assert_eq!(stream_res(s, 1, &f).unwrap(), 10);
        assert_eq!(thread_res(41, 1, &f).unwrap(), 20);
        use_in_thread(s);
        assert_eq!(thread_res(41, 1, &f).unwrap(), 10);
        unuse_in_thread(s);
        assert_eq!(set_stream_res(s, 0, 25, &f).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        set_stream_res(s, 0, 0, &f).unwrap();
        assert_eq!(stream_res(s, 2, &f).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        reset_stream_res(s);
        reset_device_res(41);
        assert_eq!(stream_res(s, 0, &f).unwrap(), 24);
    }

    #[test]
    fn device_limits_round_and_check_per_product() {
        use device_limit::*;
        assert_eq!(
            set_device_limit(SIMT_STACK_SIZE, 256, Product::AtlasA2).unwrap_err().code,
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(
            set_device_limit(7, 256, Product::Ascend950).unwrap_err().code,
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(set_device_limit(SIMD_STACK_SIZE, 200 << 10, Product::AtlasA2).is_err());
        assert!(set_device_limit(SIMD_PRINTF_FIFO_SIZE_PER_CORE, 100, Product::AtlasA2).is_err());
    }
}
