//! Dump configuration (`acl/acl_dump.h`, the vendor's libascend_dump.so, and `aclmdlInitDump` /
//! `aclmdlSetDump` / `aclmdlFinalizeDump` of `acl_mdl.h`): the dump section of a JSON file,
//! checked as the vendor documents it, kept, and answered back (`acldumpGetPath`,
//! `acldumpGetExceptionInfoPath`); the user's own tensors saved with `acldumpSaveExceptionInfo`.
//!
//! The data itself (each operator's inputs and outputs, the operator info of
//! `aclopStartDumpArgs`) comes from the NPU operators of the aclnn library, which ascendless
//! does not have: a registered callback is kept and never called, and no dump file is made.
//! docs/profiling.md says more.

use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use crate::error::acl_codes::*;
use crate::error::prof_codes::*;
use crate::error::{AclError, AclResult};
use crate::sync;

/// `acldumpType`.
pub const AIC_ERR_BRIEF_DUMP: u32 = 1;
pub const AIC_ERR_DETAIL_DUMP: u32 = 3;
pub const DATA_DUMP: u32 = 4;
pub const OVERFLOW_DUMP: u32 = 5;
/// `ACL_OP_DUMP_OP_AICORE_ARGS`, the one type `aclopStartDumpArgs` takes.
pub const OP_DUMP_AICORE_ARGS: u32 = 1;
/// `ACL_DUMP_MAX_SHAPE_NUM`.
pub const MAX_SHAPE_NUM: u32 = 25;
/// `ACL_DUMP_MAX_FILE_PATH_LENGTH`.
pub const MAX_PATH_LEN: usize = 4096;

/// The checked dump section of a configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpConfig {
    pub path: Option<String>,
    pub mode: String,
    /// Model or single-operator data dump (`dump_list` with entries, or `dump_op_switch` on).
    pub data: bool,
    /// Overflow dump (`dump_debug` on).
    pub overflow: bool,
    /// Exception dump: its scene (`aic_err_brief_dump`, ...).
    pub exception: Option<String>,
    pub watcher: bool,
}

fn bad(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_DUMP_CONFIG, message)
}

fn one_of<'a>(dump: &'a Value, key: &str, allowed: &[&str]) -> AclResult<Option<&'a str>> {
    match dump.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s)),
        Some(v) => Err(bad(format!("{key} is {v}; it takes one of {allowed:?}"))),
    }
}

/// Checks a configuration's `dump` object (the vendor's rules in docs 18: values of each key,
/// a dump path for data, overflow and watcher dumps, exception and overflow dumps apart from
/// data dumps).
pub fn parse_section(dump: &Value) -> AclResult<DumpConfig> {
    if !dump.is_object() {
        return Err(bad("the dump section must be a JSON object"));
    }
    let path = match dump.get("dump_path") {
        None => None,
        Some(Value::String(p)) if p.is_empty() => None,
        Some(Value::String(p)) if p.len() < MAX_PATH_LEN && !p.chars().any(char::is_control) => {
            Some(p.clone())
        }
        Some(v) => Err(bad(format!("dump_path {v} is not a path")))?,
    };
    let mode = one_of(dump, "dump_mode", &["input", "output", "all"])?.unwrap_or("output").to_owned();
    let op_switch = one_of(dump, "dump_op_switch", &["on", "off"])? == Some("on");
    let debug = one_of(dump, "dump_debug", &["on", "off"])? == Some("on");
    one_of(dump, "dump_data", &["tensor", "stats"])?;
    let scene = one_of(
        dump,
        "dump_scene",
        &["aic_err_brief_dump", "aic_err_norm_dump", "aic_err_detail_dump", "lite_exception", "watcher"],
    )?;
    let list_entries = match dump.get("dump_list") {
        None => 0,
        Some(Value::Array(items)) => {
            if let Some(i) = items.iter().position(|e| !e.is_object()) {
                return Err(bad(format!("dump_list entry {i} is not an object")));
            }
            items.len()
        }
        Some(v) => return Err(bad(format!("dump_list is {v}; it must be an array"))),
    };
    let watcher = scene == Some("watcher");
    let exception = scene.filter(|s| *s != "watcher").map(str::to_owned);
    let data = list_entries > 0 || op_switch;
    if (data || debug || watcher) && path.is_none() {
        return Err(bad("dump_path must be set for a data, overflow or watcher dump"));
    }
    if debug && data {
        return Err(bad("an overflow dump (dump_debug on) cannot be combined with a model or operator dump"));
    }
    if exception.is_some() && (data || debug) {
        return Err(bad("an exception dump (dump_scene) cannot be combined with a data or overflow dump"));
    }
    if watcher && (debug || op_switch) {
        return Err(bad("the watcher scene cannot be combined with dump_debug or dump_op_switch"));
    }
    Ok(DumpConfig { path, mode, data: data || watcher, overflow: debug, exception, watcher })
}

/// Reads and checks the dump configuration file `path` (`aclmdlSetDump`).
pub fn parse_file(path: &Path) -> AclResult<DumpConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        AclError::new(
            ACL_ERROR_INVALID_FILE,
            format!("cannot read the dump configuration {}: {e}", path.display()),
        )
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        AclError::new(
            ACL_ERROR_PARSE_FILE,
            format!("the dump configuration {} is not JSON: {e}", path.display()),
        )
    })?;
    let Some(dump) = value.get("dump") else {
        return Err(bad(format!("{} has no \"dump\" section", path.display())));
    };
    parse_section(dump)
}

struct State {
    /// Between `aclmdlInitDump` and `aclmdlFinalizeDump`.
    inited: bool,
    /// What `aclmdlSetDump` set.
    set: Option<DumpConfig>,
    /// The callback's address and flag (`acldumpRegCallback`).
    callback: Option<(usize, i32)>,
    /// `aclopStartDumpArgs`'s directory.
    args: Option<PathBuf>,
}

static STATE: Mutex<State> = Mutex::new(State { inited: false, set: None, callback: None, args: None });

fn state() -> std::sync::MutexGuard<'static, State> {
    sync::lock(&STATE)
}

/// The dump section of the `aclInit` in effect, checked (a bad one counts as none: `aclInit`
/// accepted the file).
fn from_init() -> Option<DumpConfig> {
    let text = crate::runtime::init::config_if_initialized()?;
    let value: Value = serde_json::from_slice(&text).ok()?;
    parse_section(value.get("dump")?).ok()
}

/// The configuration in effect: `aclmdlSetDump`'s, else `aclInit`'s.
pub fn current() -> Option<DumpConfig> {
    let set = state().set.clone();
    set.or_else(from_init)
}

/// `aclmdlInitDump`.
pub fn init_dump() -> AclResult<()> {
    if !crate::runtime::init::is_initialized() {
        return Err(AclError::new(ACL_ERROR_UNINITIALIZE, "call aclInit before aclmdlInitDump"));
    }
    if from_init().is_some_and(|c| c.data || c.overflow) {
        return Err(AclError::new(
            ACL_ERROR_DUMP_ALREADY_RUN,
            "aclInit's configuration already holds a dump; keep one way of configuring it",
        ));
    }
    let mut s = state();
    if s.inited {
        return Err(AclError::new(ACL_ERROR_REPEAT_INITIALIZE, "aclmdlInitDump was already called"));
    }
    s.inited = true;
    Ok(())
}

/// `aclmdlSetDump`: a later call replaces the configuration.
pub fn set_dump(path: &Path) -> AclResult<()> {
    if !state().inited {
        return Err(AclError::new(ACL_ERROR_DUMP_NOT_RUN, "call aclmdlInitDump before aclmdlSetDump"));
    }
    let c = parse_file(path)?;
    state().set = Some(c);
    Ok(())
}

/// `aclmdlFinalizeDump`.
pub fn finalize_dump() -> AclResult<()> {
    let mut s = state();
    if !s.inited {
        return Err(AclError::new(ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump without aclmdlInitDump"));
    }
    s.inited = false;
    s.set = None;
    Ok(())
}

/// `acldumpRegCallback`: `flag` must be 0 (no files as well), as the vendor's.
pub fn register_callback(addr: usize, flag: i32) -> AclResult<()> {
    if flag != 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, format!("flag {flag}: only 0 is supported")));
    }
    state().callback = Some((addr, flag));
    Ok(())
}

pub fn unregister_callback() -> bool {
    state().callback.take().is_some()
}

/// The registered callback's address, if any.
pub fn callback() -> Option<usize> {
    state().callback.map(|c| c.0)
}

/// `aclopStartDumpArgs`: the directory must exist or be made.
pub fn start_args(kind: u32, path: &str) -> AclResult<PathBuf> {
    if kind != OP_DUMP_AICORE_ARGS {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("dumpType {kind:#x}: only ACL_OP_DUMP_OP_AICORE_ARGS"),
        ));
    }
    if path.is_empty() || path.len() >= MAX_PATH_LEN {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "path must be 1 to 4095 bytes"));
    }
    let dir = absolute(path);
    std::fs::create_dir_all(&dir).map_err(|e| {
        AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("cannot make the dump directory {}: {e}", dir.display()),
        )
    })?;
    state().args = Some(dir.clone());
    Ok(dir)
}

pub fn stop_args(kind: u32) -> AclResult<()> {
    if kind != OP_DUMP_AICORE_ARGS {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("dumpType {kind:#x}: only ACL_OP_DUMP_OP_AICORE_ARGS"),
        ));
    }
    if state().args.take().is_none() {
        return Err(AclError::new(ACL_ERROR_DUMP_NOT_RUN, "aclopStopDumpArgs without aclopStartDumpArgs"));
    }
    Ok(())
}

/// `acldumpGetPath`: where dumps of `kind` go, or `None` when that dump is not configured.
/// An operator-args dump (`aclopStartDumpArgs`) answers for `DATA_DUMP` first.
pub fn path_of(kind: u32) -> Option<String> {
    if kind == DATA_DUMP {
        if let Some(p) = state().args.clone() {
            return Some(p.display().to_string());
        }
    }
    let c = current()?;
    match kind {
        DATA_DUMP if c.data => c.path,
        OVERFLOW_DUMP if c.overflow => c.path,
        AIC_ERR_BRIEF_DUMP..=AIC_ERR_DETAIL_DUMP if c.exception.is_some() => {
            Some(exception_root(&c).display().to_string())
        }
        _ => None,
    }
}

fn absolute(p: &str) -> PathBuf {
    let p = Path::new(p);
    let full =
        if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    full.components().filter(|c| *c != Component::CurDir).collect()
}

/// The exception dump's root: `NPU_COLLECT_PATH`, `ASCEND_WORK_PATH`, the configured path or
/// the working directory, in that order (docs 18).
fn exception_root(c: &DumpConfig) -> PathBuf {
    let env = ["NPU_COLLECT_PATH", "ASCEND_WORK_PATH"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    absolute(&env.or_else(|| c.path.clone()).unwrap_or_else(|| ".".to_owned()))
}

/// The configuration in effect when it enables the exception dump (100045 otherwise).
pub fn exception_config() -> AclResult<DumpConfig> {
    current().filter(|c| c.exception.is_some()).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_DUMP_NOT_RUN,
            "exception dump is not enabled (dump_scene in aclInit's or aclmdlSetDump's configuration)",
        )
    })
}

/// `acldumpGetExceptionInfoPath`: `<dumpPath>/extra-info/data-dump/<device>/`.
pub fn exception_path(device: i32) -> AclResult<String> {
    let c = exception_config()?;
    let mut p = exception_root(&c)
        .join("extra-info")
        .join("data-dump")
        .join(device.to_string())
        .display()
        .to_string();
    p.push('/');
    Ok(p)
}

/// One tensor for `acldumpSaveExceptionInfo`, its bytes read from device memory.
#[derive(Debug, Clone)]
pub struct SavedTensor {
    pub kind: u32,
    pub format: i32,
    pub data_type: i32,
    pub args_offset: u32,
    pub shape: Vec<u64>,
    pub origin_shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// The bytes of `[addr, addr + len)`, which must lie in one allocation of the runtime.
pub fn read_device(addr: usize, len: usize) -> AclResult<Vec<u8>> {
    let span = crate::runtime::memory::runtime_span(addr, len).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("tensorAddr {addr:#x} (+{len} bytes) is not device memory of the runtime"),
        )
    })?;
    let mut out = vec![0u8; len];
    span.read_into(&mut out);
    Ok(out)
}

/// `acldumpSaveExceptionInfo`: writes `<root>/<file_name>.custom.<yyyymmddHHMMSSmmm>`: one JSON
/// line (the user's tag and each tensor's description and size), then each tensor's bytes in
/// order. Returns the file written.
pub fn save_exception_info(
    device: i32,
    file_name: &str,
    tag: Option<&str>,
    tensors: &[SavedTensor],
) -> AclResult<PathBuf> {
    if file_name.is_empty()
        || Path::new(file_name).components().any(|c| c == Component::ParentDir)
        || file_name.starts_with('/')
    {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("fileName {file_name:?} must be a relative path without \"..\""),
        ));
    }
    let root = PathBuf::from(exception_path(device)?);
    let stamp = crate::runtime::profiling::clock::now_ns() / 1_000_000;
    let path = root.join(format!("{file_name}.custom.{}", calendar_ms(stamp)));
    let header = serde_json::json!({
        "user_tag": tag,
        "device": device,
        "tensors": tensors.iter().map(|t| serde_json::json!({
            "type": match t.kind { 0 => "input", 1 => "output", _ => "workspace" },
            "format": t.format, "data_type": t.data_type, "args_offset": t.args_offset,
            "shape": t.shape, "origin_shape": t.origin_shape, "size": t.data.len(),
        })).collect::<Vec<_>>(),
    });
    let mut bytes = serde_json::to_vec(&header).unwrap_or_default();
    bytes.push(b'\n');
    for t in tensors {
        bytes.extend_from_slice(&t.data);
    }
    let fail =
        |e: std::io::Error| AclError::new(ACL_ERROR_FAILURE, format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(&path, bytes).map_err(fail)?;
    Ok(path)
}

/// `yyyymmddHHMMSSmmm` (UTC) of `ms` since the Unix epoch.
fn calendar_ms(ms: u64) -> String {
    let (days, rest) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, min, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{y:04}{m:02}{d:02}{h:02}{min:02}{s:02}{milli:03}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_of_known_instants() {
        assert_eq!(calendar_ms(0), "19700101000000000");
        assert_eq!(calendar_ms(1_784_647_812_345), "20260721153012345");
    }

    #[test]
    fn sections_are_checked() {
        let p = |t: &str| parse_section(&serde_json::from_str(t).unwrap());
        assert!(
            p(r#"{"dump_path":"./","dump_list":[],"dump_op_switch":"on","dump_data":"tensor"}"#)
                .unwrap()
                .data
        );
        assert_eq!(p(r#"{"dump_list":[{}]}"#).unwrap_err().code, ACL_ERROR_INVALID_DUMP_CONFIG);
        assert_eq!(
            p(r#"{"dump_path":"o","dump_mode":"both"}"#).unwrap_err().code,
            ACL_ERROR_INVALID_DUMP_CONFIG
        );
        assert!(p(r#"{"dump_path":"o","dump_debug":"on","dump_op_switch":"on"}"#).is_err());
        let e = p(r#"{"dump_scene":"aic_err_brief_dump"}"#).unwrap();
        assert_eq!(e.exception.as_deref(), Some("aic_err_brief_dump"));
        assert!(p("{}").is_ok());
    }
}
