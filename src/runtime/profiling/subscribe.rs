//! Model subscriptions (`aclprofModelSubscribe`): while a model is subscribed, each task of its
//! runs (`aclmdlRIExecuteAsync` / `aclmdlRIExecute` of the model whose `aclmdlRIGetId` is the
//! id) is written to the subscriber's pipe as one record of the vendor's layout
//! (`ProfOpDesc`, [`OP_DESC_SIZE`] bytes with its signature), which `aclprofGetOp*` parse.
//! Unsubscribing closes the pipe when no other subscription uses it, as the vendor does, so
//! a reader sees the end of the data.
//!
//! A model id is known when a live model has it, or when `MsprofSetDeviceIdByGeModelIdx` named
//! it (what the vendor's model loading does for its own ids); any other id is 100011.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use super::config::{AICORE_NONE, metrics_name};
use super::{clock, session, signature::signature};
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::prof_codes::{ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_PROF_REPEAT_SUBSCRIBE};
use crate::error::{AclError, AclResult};
use crate::handle_kind;
use crate::logging::TARGET;
use crate::sync;

/// Bytes of one record (`sizeof(ProfOpDesc)`).
pub const OP_DESC_SIZE: usize = 80;
/// `aclprofSubscribeOpFlag`: `ACL_SUBSCRIBE_OP` and `ACL_SUBSCRIBE_OP_THREAD`.
pub const FLAG_OP: u32 = 0;
pub const FLAG_OP_THREAD: u32 = 2;
/// How long a full pipe may hold a model's stream before its records are dropped.
const PIPE_TIMEOUT: Duration = Duration::from_secs(1);
/// Most op names and types waiting to be read (`aclprofGetOpType`/`aclprofGetOpName` take them).
const MAX_NAMES: usize = 1 << 20;

pub struct SubscribeConfig {
    pub time_info: bool,
    pub metrics: u32,
    pub fd: RawFd,
}

handle_kind!(pub static SUBSCRIBE_CONFIGS: ProfSubscribeConfig => SubscribeConfig, AclError);

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// `aclprofCreateSubscribeConfig` (the pipe's number is read now).
pub fn create_config(time_info: i8, metrics: u32, fd: RawFd) -> AclResult<u64> {
    if metrics_name(metrics).is_none() {
        return Err(invalid(format!("aicoreMetrics {metrics} is not an aclprofAicoreMetrics value")));
    }
    if fd < 0 {
        return Err(invalid(format!("the pipe descriptor {fd} is not a descriptor")));
    }
    Ok(SUBSCRIBE_CONFIGS.insert(SubscribeConfig { time_info: time_info != 0, metrics, fd }))
}

pub fn destroy_config(h: u64) -> AclResult<()> {
    SUBSCRIBE_CONFIGS.remove(h).map(drop).map_err(|e| invalid(format!("profSubscribeConfig: {e}")))
}

struct Sub {
    fd: RawFd,
    device: u32,
    /// The pipe stayed full past the timeout once: no more records.
    stalled: bool,
}

static SUBS: Mutex<Option<HashMap<u32, Sub>>> = Mutex::new(None);
/// Subscriptions active: zero makes [`op_clock`] one load.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static MODEL_DEVICES: Mutex<Option<HashMap<u32, u32>>> = Mutex::new(None);
/// A record's op type and op name, each `None` once read.
type Texts = (Option<String>, Option<String>);
static NAMES: Mutex<Option<HashMap<u64, Texts>>> = Mutex::new(None);
static NEXT_OP: AtomicU64 = AtomicU64::new(1);

/// `MsprofSetDeviceIdByGeModelIdx`: model `model` runs on `device`.
pub fn set_model_device(model: u32, device: u32) {
    sync::lock(&MODEL_DEVICES).get_or_insert_with(HashMap::new).insert(model, device);
}

fn model_device(model: u32) -> Option<u32> {
    if let Some(d) = sync::lock(&MODEL_DEVICES).as_ref().and_then(|m| m.get(&model).copied()) {
        return Some(d);
    }
    crate::runtime::capture::model_device(model).map(|d| d.max(0) as u32)
}

/// `aclprofModelSubscribe`.
pub fn subscribe(model: u32, config: u64) -> AclResult<()> {
    let c = SUBSCRIBE_CONFIGS.get(config).map_err(|e| invalid(format!("profSubscribeConfig: {e}")))?;
    if !c.time_info && c.metrics == AICORE_NONE {
        return Err(invalid(
            "the subscription asks for nothing: set timeInfoSwitch to 1 to receive op records",
        ));
    }
    let Some(device) = model_device(model) else {
        return Err(AclError::new(ACL_ERROR_INVALID_MODEL_ID, format!("model {model} is not loaded")));
    };
    let mut subs = sync::lock(&SUBS);
    let subs = subs.get_or_insert_with(HashMap::new);
    if subs.contains_key(&model) {
        return Err(AclError::new(
            ACL_ERROR_PROF_REPEAT_SUBSCRIBE,
            format!("model {model} is already subscribed"),
        ));
    }
    session::enter_subscribe()?;
    subs.insert(model, Sub { fd: c.fd, device, stalled: false });
    ACTIVE.fetch_add(1, Ordering::AcqRel);
    Ok(())
}

/// `aclprofModelUnSubscribe`: ends the subscription and closes its pipe unless another
/// subscription writes to the same descriptor.
pub fn unsubscribe(model: u32) -> AclResult<()> {
    session::check_unsubscribe()?;
    let mut guard = sync::lock(&SUBS);
    let subs = guard.get_or_insert_with(HashMap::new);
    let Some(sub) = subs.remove(&model) else {
        return Err(AclError::new(ACL_ERROR_INVALID_MODEL_ID, format!("model {model} is not subscribed")));
    };
    ACTIVE.fetch_sub(1, Ordering::AcqRel);
    if !subs.values().any(|s| s.fd == sub.fd) {
        if let Err(e) = crate::sys::user_fd::close(sub.fd) {
            log::warn!(target: TARGET, "aclprofModelUnSubscribe: closing the pipe {}: {e}", sub.fd);
        }
    }
    if subs.is_empty() {
        session::leave_subscribe();
    }
    Ok(())
}

/// The start time of a task of model `model` about to run, when the model is subscribed.
#[inline]
pub fn op_clock(model: u32) -> Option<u64> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return None;
    }
    sync::lock(&SUBS).as_ref().is_some_and(|s| s.contains_key(&model)).then(clock::now_ns)
}

/// A task of a subscribed model has run: its record goes to the subscriber's pipe.
pub fn op_ran(model: u32, _device: i32, task: &'static str, seq: u32, start_ns: u64) {
    let end_ns = clock::now_ns();
    let mut guard = sync::lock(&SUBS);
    let Some(sub) = guard.as_mut().and_then(|s| s.get_mut(&model)) else { return };
    if sub.stalled {
        return;
    }
    let op_index = NEXT_OP.fetch_add(1, Ordering::Relaxed);
    {
        let mut names = sync::lock(&NAMES);
        let names = names.get_or_insert_with(HashMap::new);
        if names.len() >= MAX_NAMES {
            return;
        }
        names.insert(op_index, (Some(task.to_owned()), Some(format!("model{model}/task{seq}"))));
    }
    let (start, end) = (start_ns / 1000, end_ns / 1000);
    let desc = OpDesc {
        model_id: model,
        flag: FLAG_OP,
        thread_id: crate::sys::thread_id(),
        op_index,
        duration: end - start,
        start,
        end,
        execution_time: end - start,
        dev_id: sub.device,
    };
    if let Err(e) = crate::sys::user_fd::write_all(sub.fd, &desc.encode(), PIPE_TIMEOUT) {
        log::warn!(target: TARGET, "model {model}'s subscription: the pipe took no record ({e}); no more are sent");
        sub.stalled = true;
    }
}

/// One record (`ProfOpDesc`): what the parsing functions read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpDesc {
    pub model_id: u32,
    pub flag: u32,
    pub thread_id: u32,
    pub op_index: u64,
    /// Microseconds.
    pub duration: u64,
    pub start: u64,
    pub end: u64,
    pub execution_time: u64,
    pub dev_id: u32,
}

impl OpDesc {
    /// The vendor's layout: u32 signature, model, flag, thread; u64 op index, duration, start,
    /// end, execution time, cube and vector fops; u32 device; 4 bytes of padding.
    pub fn encode(&self) -> [u8; OP_DESC_SIZE] {
        let mut b = [0u8; OP_DESC_SIZE];
        b[4..8].copy_from_slice(&self.model_id.to_ne_bytes());
        b[8..12].copy_from_slice(&self.flag.to_ne_bytes());
        b[12..16].copy_from_slice(&self.thread_id.to_ne_bytes());
        for (at, v) in [
            (16, self.op_index),
            (24, self.duration),
            (32, self.start),
            (40, self.end),
            (48, self.execution_time),
        ] {
            b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        }
        b[72..76].copy_from_slice(&self.dev_id.to_ne_bytes());
        let sig = signature(&b[4..]);
        b[..4].copy_from_slice(&sig.to_ne_bytes());
        b
    }

    fn decode(b: &[u8]) -> OpDesc {
        let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default());
        let u64_at = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default());
        OpDesc {
            model_id: u32_at(4),
            flag: u32_at(8),
            thread_id: u32_at(12),
            op_index: u64_at(16),
            duration: u64_at(24),
            start: u64_at(32),
            end: u64_at(40),
            execution_time: u64_at(48),
            dev_id: u32_at(72),
        }
    }
}

/// The number of records in `data`, each checked against its signature (the vendor's
/// `CheckData`).
pub fn count(data: &[u8]) -> AclResult<u32> {
    if data.len() % OP_DESC_SIZE != 0 {
        return Err(invalid(format!(
            "opInfoLen {} is not a multiple of the record size {OP_DESC_SIZE}",
            data.len()
        )));
    }
    for (i, rec) in data.chunks_exact(OP_DESC_SIZE).enumerate() {
        let sig = u32::from_ne_bytes(rec[..4].try_into().unwrap_or_default());
        if sig != signature(&rec[4..]) {
            return Err(invalid(format!("record {i} of opInfo is not a subscription record")));
        }
    }
    Ok((data.len() / OP_DESC_SIZE) as u32)
}

/// Record `index` of `data`, checked.
pub fn record(data: &[u8], index: u32) -> AclResult<OpDesc> {
    let n = count(data)?;
    if index >= n {
        return Err(invalid(format!("index {index} is out of range: opInfo holds {n} records")));
    }
    let at = index as usize * OP_DESC_SIZE;
    Ok(OpDesc::decode(&data[at..at + OP_DESC_SIZE]))
}

/// Which string of a record: its op type or op name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    Type,
    Name,
}

fn with_text<R>(op_index: u64, which: Text, f: impl FnOnce(&mut Option<String>) -> R) -> AclResult<R> {
    let mut names = sync::lock(&NAMES);
    let entry = names.get_or_insert_with(HashMap::new).get_mut(&op_index);
    let slot = entry.map(|e| if which == Text::Type { &mut e.0 } else { &mut e.1 });
    match slot {
        Some(s) if s.is_some() => Ok(f(s)),
        _ => Err(invalid(format!(
            "the {} of op {op_index} is not known: it was read already, or the record is of another process",
            if which == Text::Type { "type" } else { "name" }
        ))),
    }
}

/// The length of a record's op type or name, with its terminating NUL.
pub fn text_len(data: &[u8], index: u32, which: Text) -> AclResult<usize> {
    let r = record(data, index)?;
    with_text(r.op_index, which, |s| s.as_ref().map_or(0, String::len) + 1)
}

/// A record's op type or name in a buffer of `cap` bytes, NUL-terminated (cut to fit at most
/// one byte short, as the vendor's copy); it can be read once, as the vendor's.
pub fn text(data: &[u8], index: u32, which: Text, cap: usize) -> AclResult<Vec<u8>> {
    if cap == 0 {
        return Err(invalid("the buffer length must not be 0"));
    }
    let r = record(data, index)?;
    let mut names = sync::lock(&NAMES);
    let map = names.get_or_insert_with(HashMap::new);
    let Some(entry) = map.get_mut(&r.op_index) else {
        return Err(invalid(format!("the strings of op {} are not known (read already?)", r.op_index)));
    };
    let slot = if which == Text::Type { &mut entry.0 } else { &mut entry.1 };
    let Some(s) = slot.as_ref() else {
        return Err(invalid(format!("this string of op {} was read already", r.op_index)));
    };
    if s.len() > cap {
        return Err(invalid(format!("the buffer of {cap} bytes cannot hold the {} bytes", s.len() + 1)));
    }
    let mut out = vec![0u8; cap];
    out[..s.len()].copy_from_slice(s.as_bytes());
    out[cap - 1] = 0;
    *slot = None;
    if entry.0.is_none() && entry.1.is_none() {
        map.remove(&r.op_index);
    }
    Ok(out)
}
