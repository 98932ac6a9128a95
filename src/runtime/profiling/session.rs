//! The profiling session: `aclprofInit` names where the data goes, each `aclprofStart` of a
//! configuration makes a directory `PROF_<n>_<ms>_<pid>` there, and its `aclprofStop` writes
//! what was recorded meanwhile (task times per device, host events) into it.
//!
//! Order and codes as the vendor's `ProfAclMgr` prechecks: a second `aclprofInit` is 100002;
//! start, stop and finalize before `aclprofInit` are 100043 (`ACL_ERROR_PROF_NOT_RUN`); any of
//! them while a model subscription is active (and a subscription during the session) 148047
//! (`ACL_ERROR_PROF_API_CONFLICT`); starting a device already started 100042.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::json;

use super::config::{self, ACL_PROF_MSPROFTX, CONFIGS, ProfConfig, TASK_TIME_ANY};
use super::records::{self, Record};
use super::{ANY, TASKS, TX, clock, set_recording};
use crate::error::acl_codes::{ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_REPEAT_INITIALIZE};
use crate::error::prof_codes::*;
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sync;

/// Longest result path `aclprofInit` takes.
pub const MAX_PATH_LEN: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    /// Between `aclprofInit` and `aclprofFinalize`.
    Api,
    /// A model subscription is active.
    Subscribe,
}

struct Started {
    config: ProfConfig,
    dir: PathBuf,
    start_ns: u64,
}

struct State {
    mode: Mode,
    /// The result path (`None` before the first `aclprofInit`).
    path: Option<PathBuf>,
    started: Vec<Started>,
    /// msproftx records from a start with `ACL_PROF_MSPROFTX` until finalize (as the vendor's
    /// msproftx manager lives until `aclprofFinalize`), and the directory that gets them.
    tx_dir: Option<PathBuf>,
    runs: u32,
}

static STATE: Mutex<State> =
    Mutex::new(State { mode: Mode::Off, path: None, started: Vec::new(), tx_dir: None, runs: 0 });

fn state() -> std::sync::MutexGuard<'static, State> {
    sync::lock(&STATE)
}

/// start, stop and finalize need the session (`ProfStartPrecheck`).
fn in_session(s: &State, api: &str) -> AclResult<()> {
    match s.mode {
        Mode::Api => Ok(()),
        Mode::Off => Err(AclError::new(ACL_ERROR_PROF_NOT_RUN, format!("call aclprofInit before {api}"))),
        Mode::Subscribe => Err(conflict(api)),
    }
}

fn conflict(api: &str) -> AclError {
    AclError::new(
        ACL_ERROR_PROF_API_CONFLICT,
        format!(
            "{api} cannot be called while a model subscription (aclprofModelSubscribe) is active: \
             the session and subscriptions exclude each other"
        ),
    )
}

/// `aclprofInit`: the result path (absolute, or relative to the working directory).
pub fn init(path: &str) -> AclResult<()> {
    let mut s = state();
    match s.mode {
        Mode::Api => {
            return Err(AclError::new(
                ACL_ERROR_REPEAT_INITIALIZE,
                "profiling is already initialised (aclprofFinalize first)",
            ));
        }
        Mode::Subscribe => return Err(conflict("aclprofInit")),
        Mode::Off => {}
    }
    let p = result_path(path)?;
    log::info!(target: TARGET, "aclprofInit: profiling data goes to {}", p.display());
    s.path = Some(p);
    s.mode = Mode::Api;
    Ok(())
}

fn result_path(path: &str) -> AclResult<PathBuf> {
    if path.trim().is_empty() {
        return Err(AclError::new(ACL_ERROR_INVALID_FILE, "the profiling result path is empty"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PARAM,
            format!("the result path is longer than {MAX_PATH_LEN} bytes"),
        ));
    }
    if path.chars().any(char::is_control) {
        return Err(AclError::new(
            ACL_ERROR_INVALID_FILE,
            format!("the result path {path:?} holds control characters"),
        ));
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| {
        AclError::new(ACL_ERROR_INVALID_FILE, format!("no working directory for {path}: {e}"))
    })?;
    Ok(cwd.join(p))
}

/// `aclprofSetConfig`: before `aclprofInit` only `ACL_PROF_PATH` may be set (a session's
/// settings need one otherwise, `ProfSetConfigPrecheck`).
pub fn set_config(t: u32, value: &str) -> AclResult<()> {
    let s = state();
    if s.mode == Mode::Off && t != config::SETTING_PATH {
        return Err(AclError::new(ACL_ERROR_PROF_NOT_RUN, "call aclprofInit before aclprofSetConfig"));
    }
    drop(s);
    config::set(t, value)
}

fn get_config(handle: u64) -> AclResult<ProfConfig> {
    CONFIGS
        .get(handle)
        .map(|c| (*c).clone())
        .map_err(|e| AclError::new(ACL_ERROR_INVALID_PARAM, format!("profilerConfig: {e}")))
}

/// `aclprofStart`.
pub fn start(handle: u64) -> AclResult<PathBuf> {
    let mut s = state();
    in_session(&s, "aclprofStart")?;
    let config = get_config(handle)?;
    for other in &s.started {
        if let Some(d) = config.devices.iter().find(|d| other.config.devices.contains(d)) {
            return Err(AclError::new(
                ACL_ERROR_PROF_ALREADY_RUN,
                format!("profiling of device {d} is already started"),
            ));
        }
        if config.devices.is_empty() && other.config == config {
            return Err(AclError::new(ACL_ERROR_PROF_ALREADY_RUN, "this configuration is already started"));
        }
    }
    let root =
        config::path_setting().map_or_else(|| Ok(s.path.clone().unwrap_or_default()), |p| result_path(&p))?;
    s.runs += 1;
    let start_ns = clock::now_ns();
    let dir = root.join(format!("PROF_{:06}_{}_{}", s.runs, start_ns / 1_000_000, std::process::id()));
    std::fs::create_dir_all(dir.join("host")).map_err(|e| {
        AclError::new(
            ACL_ERROR_INVALID_FILE,
            format!("cannot make the profiling directory {}: {e}", dir.display()),
        )
    })?;
    for d in &config.devices {
        let _ = std::fs::create_dir_all(dir.join(format!("device_{d}")));
    }
    let started = Started { config, dir: dir.clone(), start_ns };
    write_info(&started, None).map_err(|e| {
        AclError::new(ACL_ERROR_INVALID_FILE, format!("cannot write into {}: {e}", dir.display()))
    })?;
    if started.config.data_types & ACL_PROF_MSPROFTX != 0 {
        s.tx_dir = Some(dir.clone());
    }
    s.started.push(started);
    update_recording(&s);
    log::info!(target: TARGET, "aclprofStart: profiling into {}", dir.display());
    Ok(dir)
}

/// `aclprofStop`: the configuration started with the same devices, metrics and data types.
pub fn stop(handle: u64) -> AclResult<()> {
    let mut s = state();
    in_session(&s, "aclprofStop")?;
    let config = get_config(handle)?;
    let Some(at) = s.started.iter().position(|st| st.config == config) else {
        return Err(AclError::new(
            ACL_ERROR_INVALID_PROFILING_CONFIG,
            "no started profiling matches this configuration (aclprofStop takes the one given to aclprofStart)",
        ));
    };
    let started = s.started.remove(at);
    update_recording(&s);
    let others_take_host = s.started.iter().any(|o| o.config.data_types & ACL_PROF_MSPROFTX != 0);
    drop(s);
    flush(&started, !others_take_host)
}

/// `aclprofFinalize`: stops what is still started, writes the rest, ends the session.
pub fn finalize() -> AclResult<()> {
    let mut s = state();
    in_session(&s, "aclprofFinalize")?;
    let started = std::mem::take(&mut s.started);
    let tx_dir = s.tx_dir.take();
    s.mode = Mode::Off;
    set_recording(0);
    drop(s);
    let mut result = Ok(());
    for st in &started {
        result = result.and(flush(st, true));
    }
    if let Some(dir) = tx_dir {
        let host = records::take_host();
        if !host.is_empty() {
            if let Err(e) = write_host(&dir, &host) {
                result = result.and(Err(e));
            }
        }
    }
    let dropped = records::clear();
    if dropped > 0 {
        log::warn!(target: TARGET, "aclprofFinalize: {dropped} profiling records were dropped (more than {} at once)", records::MAX_RECORDS);
    }
    config::clear_configured();
    result
}

fn update_recording(s: &State) {
    let mut bits = 0;
    if !s.started.is_empty() {
        bits |= ANY;
    }
    if s.started.iter().any(|st| st.config.data_types & TASK_TIME_ANY != 0) {
        bits |= TASKS;
    }
    if s.tx_dir.is_some() {
        bits |= TX;
    }
    set_recording(bits);
}

/// Writes a stopped configuration's records into its directory (the host ones when `host`).
fn flush(st: &Started, host: bool) -> AclResult<()> {
    let tasks = records::take_tasks(&st.config.devices);
    let mut by_device: BTreeMap<u32, Vec<Record>> = BTreeMap::new();
    for r in tasks {
        if let Record::Task { device, .. } = r {
            by_device.entry(device).or_default().push(r);
        }
    }
    let fail = |e: std::io::Error| {
        AclError::new(
            ACL_ERROR_PROFILING_FAILURE,
            format!("cannot write profiling data into {}: {e}", st.dir.display()),
        )
    };
    for (d, rs) in &by_device {
        records::append(&st.dir.join(format!("device_{d}")).join("task_time.jsonl"), rs).map_err(fail)?;
    }
    if host {
        let rs = records::take_host();
        write_host(&st.dir, &rs)?;
    }
    write_info(st, Some(clock::now_ns())).map_err(fail)
}

fn write_host(dir: &Path, rs: &[Record]) -> AclResult<()> {
    let (steps, tx): (Vec<Record>, Vec<Record>) =
        rs.iter().cloned().partition(|r| matches!(r, Record::Host { event: "step", .. }));
    let host = dir.join("host");
    let write = |name: &str, rs: &[Record]| {
        if rs.is_empty() {
            return Ok(());
        }
        records::append(&host.join(name), rs).map_err(|e| {
            AclError::new(
                ACL_ERROR_PROFILING_FAILURE,
                format!("cannot write {}: {e}", host.join(name).display()),
            )
        })
    };
    write("msproftx.jsonl", &tx)?;
    write("step_trace.jsonl", &steps)
}

/// `info.json`: what was asked, when, and what the host can and cannot record.
fn write_info(st: &Started, stop_ns: Option<u64>) -> std::io::Result<()> {
    let c = &st.config;
    let info = json!({
        "producer": "ascendless",
        "pid": std::process::id(),
        "devices": c.devices,
        "aicore_metrics": config::metrics_name(c.metrics),
        "data_type_config": format!("{:#x}", c.requested),
        "data_type_config_effective": format!("{:#x}", c.data_types),
        "settings": config::configured(),
        "start_ns": st.start_ns,
        "stop_ns": stop_ns,
        "dropped_records": records::dropped(),
        "recorded": {
            "device_<id>/task_time.jsonl": "each stream task of the device, with start and end (data types with task time)",
            "host/msproftx.jsonl": "msproftx marks, push/pop and ranges, aclprofMarkEx, aclprofStr2Id (ACL_PROF_MSPROFTX)",
            "host/step_trace.jsonl": "aclprofGetStepTimestamp, when the stream reached it",
        },
        "not_recorded": "AI Core metrics, L2 cache, AI CPU, HCCL, memory and API traces: there is no NPU",
    });
    let text = serde_json::to_string_pretty(&info).map_err(std::io::Error::other)?;
    std::fs::write(st.dir.join("info.json"), text)
}

/// A model subscription begins: refused during a session (148047).
pub(crate) fn enter_subscribe() -> AclResult<()> {
    let mut s = state();
    match s.mode {
        Mode::Api => Err(AclError::new(
            ACL_ERROR_PROF_API_CONFLICT,
            "aclprofModelSubscribe cannot be called between aclprofInit and aclprofFinalize",
        )),
        _ => {
            s.mode = Mode::Subscribe;
            Ok(())
        }
    }
}

/// Unsubscribing is refused during a session (148047).
pub(crate) fn check_unsubscribe() -> AclResult<()> {
    if state().mode == Mode::Api {
        return Err(AclError::new(
            ACL_ERROR_PROF_API_CONFLICT,
            "aclprofModelUnSubscribe cannot be called between aclprofInit and aclprofFinalize",
        ));
    }
    Ok(())
}

/// The last model subscription has ended.
pub(crate) fn leave_subscribe() {
    let mut s = state();
    if s.mode == Mode::Subscribe {
        s.mode = Mode::Off;
    }
}
