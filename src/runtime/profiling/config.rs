//! `aclprofConfig` (what `aclprofCreateConfig` builds) and the settings of `aclprofSetConfig`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{AclError, AclResult};
use crate::handle_kind;
use crate::sync;

pub const ACL_PROF_ACL_API: u64 = 0x0001;
pub const ACL_PROF_TASK_TIME: u64 = 0x0002;
pub const ACL_PROF_AICORE_METRICS: u64 = 0x0004;
pub const ACL_PROF_MSPROFTX: u64 = 0x0080;
pub const ACL_PROF_TASK_TIME_L0: u64 = 0x0800;
pub const ACL_PROF_TASK_TIME_L2: u64 = 0x2000;
pub const ACL_PROF_OP_ATTR: u64 = 0x4000;
pub const ACL_PROF_TASK_TIME_L3: u64 = 0x8000;
pub const ACL_PROF_API_STATS: u64 = 0x4_0000_0000;
/// The vendor's `PROF_TRAINING_TRACE`, added with task time.
const TRAINING_TRACE: u64 = 0x0040;

/// Any of these asks for the time of each task.
pub const TASK_TIME_ANY: u64 =
    ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME_L2 | ACL_PROF_TASK_TIME_L3;

/// `ACL_AICORE_NONE`.
pub const AICORE_NONE: u32 = 0xFF;
/// Most devices a configuration names (the vendor's `PROF_MAX_DEV_NUM`).
pub const MAX_DEVICES: usize = 64;

/// The `aclprofAicoreMetrics` values: the AI Core counters to read, of which the host has none.
pub fn metrics_name(m: u32) -> Option<&'static str> {
    Some(match m {
        0 => "ArithmeticUtilization",
        1 => "PipeUtilization",
        2 => "Memory",
        3 => "MemoryL0",
        4 => "ResourceConflictRatio",
        5 => "MemoryUB",
        6 => "L2Cache",
        7 => "PipelineExecuteUtilization",
        8 => "MemoryAccess",
        AICORE_NONE => "None",
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfConfig {
    pub devices: Vec<u32>,
    pub metrics: u32,
    /// The data types as given.
    pub requested: u64,
    /// With what the vendor adds: a task-time level brings the lower ones, task time brings
    /// the training trace; `ACL_PROF_API_STATS` alone keeps only the API data.
    pub data_types: u64,
}

handle_kind!(pub static CONFIGS: ProfConfig => ProfConfig, AclError);

fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// `aclprofCreateConfig`'s checks (the vendor's `IsValidProfConfig`), then the configuration.
pub fn create(devices: &[u32], metrics: u32, events: bool, requested: u64, count: u32) -> AclResult<u64> {
    if events {
        return Err(invalid("aicoreEvents must be NULL (the vendor supports no AI Core events)".into()));
    }
    if devices.len() > MAX_DEVICES {
        return Err(invalid(format!("deviceNums {}: at most {MAX_DEVICES} devices", devices.len())));
    }
    if devices.len() > count as usize {
        return Err(invalid(format!("deviceNums {}: there are {count} devices", devices.len())));
    }
    for (i, &d) in devices.iter().enumerate() {
        if d >= count {
            return Err(invalid(format!("device id {d} is not in range [0, {count})")));
        }
        if devices[..i].contains(&d) {
            return Err(invalid(format!("device id {d} is set twice")));
        }
    }
    if devices.is_empty() && requested & ACL_PROF_MSPROFTX == 0 {
        return Err(invalid("deviceNums can not be 0 unless only ACL_PROF_MSPROFTX is profiled".into()));
    }
    if metrics_name(metrics).is_none() {
        return Err(invalid(format!("aicoreMetrics {metrics} is not an aclprofAicoreMetrics value")));
    }
    let mut data_types = requested;
    if requested & (ACL_PROF_TASK_TIME_L2 | ACL_PROF_OP_ATTR | ACL_PROF_TASK_TIME_L3) != 0 {
        data_types |= ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0;
    }
    if requested & ACL_PROF_TASK_TIME_L3 != 0 {
        data_types |= ACL_PROF_TASK_TIME_L2;
    }
    if requested & ACL_PROF_TASK_TIME != 0 {
        data_types |= ACL_PROF_TASK_TIME_L0;
    }
    if data_types & ACL_PROF_TASK_TIME_L0 != 0 {
        data_types |= TRAINING_TRACE;
    }
    if requested & ACL_PROF_API_STATS != 0 {
        data_types = ACL_PROF_ACL_API | ACL_PROF_API_STATS;
    }
    Ok(CONFIGS.insert(ProfConfig { devices: devices.to_vec(), metrics, requested, data_types }))
}

/// `aclprofConfigType` values (`ACL_PROF_ARGS_MIN` < type < `ACL_PROF_ARGS_MAX`, 2 unused).
pub fn setting_name(t: u32) -> Option<&'static str> {
    Some(match t {
        1 => "storage_limit",
        3 => "sys_hardware_mem_freq",
        4 => "llc_mode",
        5 => "sys_io_sampling_freq",
        6 => "sys_interconnection_freq",
        7 => "dvpp_freq",
        8 => "host_sys",
        9 => "host_sys_usage",
        10 => "host_sys_usage_freq",
        11 => "sys_lp_freq",
        12 => "sys_mem_serviceflow",
        13 => "sys_cpu_freq",
        14 => "optype",
        15 => "nts_metrics",
        16 => "path",
        _ => return None,
    })
}

/// `ACL_PROF_PATH`.
pub const SETTING_PATH: u32 = 16;
/// Longest value `aclprofSetConfig` takes.
pub const MAX_SETTING_LEN: usize = 256;

/// The settings whose value is a sampling frequency (a positive whole number).
fn is_frequency(t: u32) -> bool {
    matches!(t, 3 | 5 | 6 | 7 | 10 | 11 | 13)
}

static SETTINGS: Mutex<BTreeMap<u32, String>> = Mutex::new(BTreeMap::new());

/// Checks and keeps one `aclprofSetConfig` value (a later one replaces it).
pub fn set(t: u32, value: &str) -> AclResult<()> {
    let Some(name) = setting_name(t) else {
        return Err(invalid(format!("configType {t} is not an aclprofConfigType value")));
    };
    if value.is_empty() || value.len() > MAX_SETTING_LEN {
        return Err(invalid(format!("the value of {name} must be 1 to {MAX_SETTING_LEN} bytes")));
    }
    if is_frequency(t) && !value.parse::<u32>().is_ok_and(|v| v > 0) {
        return Err(invalid(format!("the value of {name} must be a positive whole number, not {value:?}")));
    }
    sync::lock(&SETTINGS).insert(t, value.to_owned());
    Ok(())
}

/// The `aclprofSetConfig` values made so far, by name.
pub fn configured() -> BTreeMap<&'static str, String> {
    sync::lock(&SETTINGS).iter().filter_map(|(t, v)| setting_name(*t).map(|n| (n, v.clone()))).collect()
}

/// The `ACL_PROF_PATH` setting, if made.
pub fn path_setting() -> Option<String> {
    sync::lock(&SETTINGS).get(&SETTING_PATH).cloned()
}

/// Forgets the `aclprofSetConfig` values (`aclprofFinalize`).
pub fn clear_configured() {
    sync::lock(&SETTINGS).clear();
}
