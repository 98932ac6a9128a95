//! Runtime settings a program sets and reads back: system parameters (`aclrtSetSysParamOpt`
//! per process, `aclrtCtxSetSysParamOpt` per context), the operator time-out
//! (`aclrtSetOpExecuteTimeOut` and friends), the floating-point overflow mode of a device
//! (`aclrtSetDeviceSatMode`), the task scheduler of a thread (`aclrtSetTsDevice`) and the core
//! group of a context (`aclrtSetGroup`).
//!
//! They steer how the NPU runs kernels; no kernel runs here, so they are checked as the vendor
//! checks them and kept, and the queries answer what was set (or the product's default).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::rt_codes::{
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
};
use crate::error::{AclError, AclResult};
use crate::profile::Product;
use crate::sync;

fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

/// Checks an `aclSysParamOpt` and its value: deterministic computing takes 0..=3, the other
/// switches 0 or 1.
pub fn check_param(opt: i32, value: i64) -> AclResult<()> {
    let max = match opt {
        0 => 3,
        1..=3 => 1,
        other => return Err(invalid(format!("option {other} is not an aclSysParamOpt (0..=3)"))),
    };
    if !(0..=max).contains(&value) {
        return Err(invalid(format!("option {opt} takes 0..={max}, got {value}")));
    }
    Ok(())
}

fn check_opt(opt: i32) -> AclResult<()> {
    check_param(opt, 0)
}

struct Params {
    process: HashMap<i32, i64>,
    /// Keyed by (context handle, option).
    contexts: HashMap<(u64, i32), i64>,
    /// The overflow mode set per user device id (`aclrtFloatOverflowMode`).
    sat_modes: HashMap<i32, u32>,
    /// The core group chosen per context (`aclrtSetGroup`).
    groups: HashMap<u64, i32>,
    /// The operator time-out set, in microseconds (effective value).
    op_timeout_us: Option<u64>,
}

static PARAMS: Mutex<Option<Params>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Params) -> R) -> R {
    let mut guard = sync::lock(&PARAMS);
    f(guard.get_or_insert_with(|| Params {
        process: HashMap::new(),
        contexts: HashMap::new(),
        sat_modes: HashMap::new(),
        groups: HashMap::new(),
        op_timeout_us: None,
    }))
}

/// `aclrtSetSysParamOpt`.
pub fn set_process_param(opt: i32, value: i64) -> AclResult<()> {
    check_param(opt, value)?;
    with(|p| p.process.insert(opt, value));
    Ok(())
}

/// `aclrtGetSysParamOpt`: the value set, 0 (off) when none was, as the vendor documents.
pub fn process_param(opt: i32) -> AclResult<i64> {
    check_opt(opt)?;
    Ok(with(|p| p.process.get(&opt).copied()).unwrap_or(0))
}

/// `aclrtCtxSetSysParamOpt` on context `ctx`.
pub fn set_context_param(ctx: u64, opt: i32, value: i64) -> AclResult<()> {
    check_param(opt, value)?;
    with(|p| p.contexts.insert((ctx, opt), value));
    Ok(())
}

/// `aclrtCtxGetSysParamOpt`: the value set on context `ctx`; a context parameter has no
/// default, so one never set is 107021, as the vendor documents.
pub fn context_param(ctx: u64, opt: i32) -> AclResult<i64> {
    check_opt(opt)?;
    with(|p| p.contexts.get(&(ctx, opt)).copied()).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
            format!("option {opt} was never set on this context (aclrtCtxSetSysParamOpt)"),
        )
    })
}

/// Forgets what was set on a destroyed context.
pub fn forget_context(ctx: u64) {
    with(|p| {
        p.contexts.retain(|(c, _), _| *c != ctx);
        p.groups.remove(&ctx);
    });
}

/// `aclrtSetOpExecuteTimeOut*`: sets the process's operator time-out to `us` microseconds
/// (0: the longest) and returns the value in effect, rounded to the product's steps.
pub fn set_op_timeout_us(us: u64, product: Product) -> u64 {
    let effective = product.op_timeout().effective_us(us);
    with(|p| p.op_timeout_us = Some(effective));
    effective
}

/// `aclrtGetOpExecuteTimeout`: the time-out in effect, in milliseconds (the product's default
/// until one is set).
pub fn op_timeout_ms(product: Product) -> u32 {
    match with(|p| p.op_timeout_us) {
        Some(us) => u32::try_from(us / 1000).unwrap_or(u32::MAX),
        None => product.op_timeout().default_ms,
    }
}

/// `aclrtFloatOverflowMode` values.
pub const SATURATION: u32 = 0;
pub const INFNAN: u32 = 1;

/// `aclrtSetDeviceSatMode` for device `device` (the current one): Inf/NaN or saturation where
/// the product takes it (Ascend 950 only Inf/NaN; the older products only saturation).
pub fn set_sat_mode(device: i32, mode: i32, product: Product) -> AclResult<()> {
    let mode = match mode {
        0 => SATURATION,
        1 => INFNAN,
        other => {
            return Err(invalid(format!(
                "mode {other} is not a float overflow mode (0 saturation, 1 Inf/NaN)"
            )));
        }
    };
    let allowed = match product {
        Product::Ascend950 => mode == INFNAN,
        Product::AtlasA2 | Product::AtlasA3 => true,
        _ => mode == SATURATION,
    };
    if !allowed {
        return Err(AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("this product does not take float overflow mode {mode}"),
        ));
    }
    with(|p| p.sat_modes.insert(device, mode));
    Ok(())
}

/// Forgets what was set on device `device` when its last use is reset: the device starts
/// afresh, with the product's default overflow mode.
pub fn forget_device(device: i32) {
    with(|p| p.sat_modes.remove(&device));
}

/// `aclrtGetDeviceSatMode` of device `device`.
pub fn sat_mode(device: i32, product: Product) -> u32 {
    with(|p| p.sat_modes.get(&device).copied()).unwrap_or(if product.default_overflow_mode_is_saturation() {
        SATURATION
    } else {
        INFNAN
    })
}

thread_local! {
    /// The task scheduler this thread chose (`aclrtSetTsDevice`).
    static TS: Cell<u32> = const { Cell::new(0) };
}

/// `aclrtSetTsDevice`: 0 (AI Core scheduler) or 1 (Vector Core scheduler); kept per thread.
pub fn set_ts(ts: i32) -> AclResult<()> {
    match ts {
        0 | 1 => {
            TS.with(|c| c.set(ts as u32));
            Ok(())
        }
        other => Err(invalid(format!("tsId {other} is not a task scheduler (0 AI Core, 1 vector)"))),
    }
}

/// The task scheduler this thread chose.
pub fn ts() -> u32 {
    TS.with(Cell::get)
}

/// The one core group every emulated device has: id 0, the whole device.
pub const GROUP_ID: i32 = 0;

/// `aclrtSetGroup` on context `ctx`: only the one group exists.
pub fn set_group(ctx: u64, group: i32) -> AclResult<()> {
    if group != GROUP_ID {
        return Err(invalid(format!(
            "group {group} does not exist: the device has one group, id {GROUP_ID}"
        )));
    }
    with(|p| p.groups.insert(ctx, group));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_check_their_ranges() {
        assert!(check_param(0, 3).is_ok());
        assert_eq!(check_param(0, 4).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(check_param(1, 2).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(check_param(4, 0).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(context_param(u64::MAX, 1).unwrap_err().code, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
        set_context_param(u64::MAX, 1, 1).unwrap();
        assert_eq!(context_param(u64::MAX, 1).unwrap(), 1);
        forget_context(u64::MAX);
    }

    #[test]
    fn sat_modes_follow_the_product() {
        assert_eq!(sat_mode(50, Product::AtlasA2), INFNAN);
        assert_eq!(sat_mode(50, Product::AtlasTraining), SATURATION);
        assert_eq!(
            set_sat_mode(51, 0, Product::Ascend950).unwrap_err().code,
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(set_sat_mode(51, 2, Product::AtlasA2).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        set_sat_mode(51, 0, Product::AtlasA2).unwrap();
        assert_eq!(sat_mode(51, Product::AtlasA2), SATURATION);
    }
}
