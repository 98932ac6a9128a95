//! msproftx on the host: stamps with a message, marks, push/pop (per thread, nested), ranges
//! (by id, any thread), `aclprofMarkEx` and step timestamps (taken when the stream reaches
//! them), `aclprofStr2Id`, and the tensor ranges of `aclprofRangePushEx`.
//!
//! As the vendor's msproftx manager, the calls that record need a started configuration with
//! `ACL_PROF_MSPROFTX` (until `aclprofFinalize`): `aclprofCreateStamp` gives NULL before, and
//! the others answer 100043 (`ACL_ERROR_PROF_NOT_RUN`; the vendor's answer is its internal
//! -1). Stamps and messages need no session.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use serde_json::{Value, json};

use super::records::{self, Record};
use super::{ANY, TX, clock, recording};
use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::prof_codes::ACL_ERROR_PROF_NOT_RUN;
use crate::error::{AclError, AclResult};
use crate::handle_kind;
use crate::runtime::stream::Stream;
use crate::runtime::task::TaskInfo;
use crate::sync;

/// A stamp's message is shorter than this (the vendor's `MAX_MSG_LEN`).
pub const MAX_MESSAGE_LEN: usize = 128;

pub struct Stamp {
    message: Mutex<String>,
}

handle_kind!(pub static STAMPS: ProfStamp => Stamp, AclError);

pub struct StepInfo {
    /// Whether its start and its end were taken.
    taken: Mutex<(bool, bool)>,
    index: u64,
}

handle_kind!(pub static STEPS: ProfStepInfo => StepInfo, AclError);

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

fn need_tx(api: &str) -> AclResult<()> {
    if recording(TX) {
        Ok(())
    } else {
        Err(AclError::new(
            ACL_ERROR_PROF_NOT_RUN,
            format!("{api} records only after aclprofStart of a configuration with ACL_PROF_MSPROFTX"),
        ))
    }
}

fn stamp(h: u64, what: &str) -> AclResult<std::sync::Arc<Stamp>> {
    STAMPS.get(h).map_err(|e| invalid(format!("{what}: {e}")))
}

fn host(event: &'static str, message: String, start_ns: u64, id: Option<u64>, extra: Value) -> Record {
    Record::Host {
        event,
        message,
        start_ns,
        end_ns: clock::now_ns(),
        thread: crate::sys::thread_id(),
        id,
        extra,
    }
}

/// A host record of one instant (a mark, a step, a string's id): its end is its start.
fn instant(event: &'static str, message: String, id: Option<u64>, extra: Value) -> Record {
    let now = clock::now_ns();
    Record::Host { event, message, start_ns: now, end_ns: now, thread: crate::sys::thread_id(), id, extra }
}

pub fn create_stamp() -> AclResult<u64> {
    need_tx("aclprofCreateStamp")?;
    Ok(STAMPS.insert(Stamp { message: Mutex::new(String::new()) }))
}

pub fn destroy_stamp(h: u64) -> AclResult<()> {
    STAMPS.remove(h).map(drop).map_err(|e| invalid(format!("stamp: {e}")))
}

/// `aclprofSetStampTraceMessage`: `msg` is the message's bytes (shorter than 128).
pub fn set_message(h: u64, msg: &[u8]) -> AclResult<()> {
    let s = stamp(h, "stamp")?;
    if msg.len() >= MAX_MESSAGE_LEN {
        return Err(invalid(format!("msgLen {} must be less than {MAX_MESSAGE_LEN}", msg.len())));
    }
    *sync::lock(&s.message) = String::from_utf8_lossy(msg).into_owned();
    Ok(())
}

fn message(s: &Stamp) -> String {
    sync::lock(&s.message).clone()
}

pub fn mark(h: u64) -> AclResult<()> {
    need_tx("aclprofMark")?;
    let s = stamp(h, "stamp")?;
    records::push(instant("mark", message(&s), None, json!({})));
    Ok(())
}

thread_local! {
    /// This thread's pushed stamps (message, start) and `aclprofRangePushEx` ranges.
    static PUSHED: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
    static PUSHED_EX: RefCell<Vec<(Value, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Deepest push/pop nesting kept per thread (a push beyond it is refused).
pub const MAX_DEPTH: usize = 1024;

pub fn push(h: u64) -> AclResult<()> {
    need_tx("aclprofPush")?;
    let s = stamp(h, "stamp")?;
    let entry = (message(&s), clock::now_ns());
    PUSHED.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= MAX_DEPTH {
            return Err(invalid(format!("more than {MAX_DEPTH} pushes without a pop on this thread")));
        }
        p.push(entry);
        Ok(())
    })
}

pub fn pop() -> AclResult<()> {
    need_tx("aclprofPop")?;
    let Some((msg, start)) = PUSHED.with(|p| p.borrow_mut().pop()) else {
        return Err(invalid("aclprofPop without an aclprofPush on this thread"));
    };
    records::push(host("push_pop", msg, start, None, json!({})));
    Ok(())
}

static RANGES: Mutex<Option<HashMap<u32, (String, u64)>>> = Mutex::new(None);
static NEXT_RANGE: AtomicU32 = AtomicU32::new(1);
/// Most ranges open at once.
pub const MAX_RANGES: usize = 1 << 16;

pub fn range_start(h: u64) -> AclResult<u32> {
    need_tx("aclprofRangeStart")?;
    let s = stamp(h, "stamp")?;
    let mut ranges = sync::lock(&RANGES);
    let ranges = ranges.get_or_insert_with(HashMap::new);
    if ranges.len() >= MAX_RANGES {
        return Err(invalid(format!("more than {MAX_RANGES} ranges are open")));
    }
    let id = loop {
        let id = NEXT_RANGE.fetch_add(1, Ordering::Relaxed);
        if id != 0 && !ranges.contains_key(&id) {
            break id;
        }
    };
    ranges.insert(id, (message(&s), clock::now_ns()));
    Ok(id)
}

pub fn range_stop(id: u32) -> AclResult<()> {
    need_tx("aclprofRangeStop")?;
    let Some((msg, start)) = sync::lock(&RANGES).as_mut().and_then(|r| r.remove(&id)) else {
        return Err(invalid(format!(
            "rangeId {id} was not started (aclprofRangeStart) or is already stopped"
        )));
    };
    records::push(host("range", msg, start, Some(u64::from(id)), json!({})));
    Ok(())
}

static MARKS: AtomicU64 = AtomicU64::new(1);

/// `aclprofMarkEx`: the mark is taken when `stream` reaches it (the vendor's is a trace task
/// of the stream). `msg` is 1 to 127 bytes.
pub fn mark_ex(msg: &str, stream: &Stream) -> AclResult<()> {
    need_tx("aclprofMarkEx")?;
    if msg.is_empty() || msg.len() >= MAX_MESSAGE_LEN {
        return Err(invalid(format!("the message must be 1 to {} bytes", MAX_MESSAGE_LEN - 1)));
    }
    let id = MARKS.fetch_add(1, Ordering::Relaxed);
    let msg = msg.to_owned();
    let queued = clock::now_ns();
    stream.submit_op(TaskInfo::plain("profiling mark"), move |_| {
        records::push(instant("mark_ex", msg.clone(), Some(id), json!({ "queued_ns": queued })));
        Ok(())
    })
}

static NAMED: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// `aclprofStr2Id`: a 64-bit FNV-1a hash of the text (never 0), the same in every process;
/// while msproftx records, the text and its id are written once (`str2id`) so the ids in
/// tensor ranges can be read back.
pub fn str2id(text: &str) -> u64 {
    let id =
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let id = id.max(1);
    if recording(TX) && sync::lock(&NAMED).get_or_insert_with(HashSet::new).insert(id) {
        records::push(instant("str2id", text.to_owned(), Some(id), json!({})));
    }
    id
}

/// `aclprofRangePushEx`: a range of this thread carrying `what` (the tensor information).
pub fn range_push_ex(what: Value) -> AclResult<()> {
    need_tx("aclprofRangePushEx")?;
    let entry = (what, clock::now_ns());
    PUSHED_EX.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= MAX_DEPTH {
            return Err(invalid(format!(
                "more than {MAX_DEPTH} aclprofRangePushEx without a pop on this thread"
            )));
        }
        p.push(entry);
        Ok(())
    })
}

pub fn range_pop() -> AclResult<()> {
    need_tx("aclprofRangePop")?;
    let Some((what, start)) = PUSHED_EX.with(|p| p.borrow_mut().pop()) else {
        return Err(invalid("aclprofRangePop without an aclprofRangePushEx on this thread"));
    };
    records::push(host("range_ex", String::new(), start, None, what));
    Ok(())
}

static STEP_INDEX: AtomicU64 = AtomicU64::new(1);

pub fn create_step() -> u64 {
    STEPS.insert(StepInfo {
        taken: Mutex::new((false, false)),
        index: STEP_INDEX.fetch_add(1, Ordering::Relaxed),
    })
}

pub fn destroy_step(h: u64) -> AclResult<()> {
    STEPS.remove(h).map(drop).map_err(|e| invalid(format!("stepInfo: {e}")))
}

/// `aclprofGetStepTimestamp`: each of a step's start (tag 0) and end (1) once; the time is
/// taken when `stream` reaches it, and recorded while a configuration is started.
pub fn step_timestamp(h: u64, tag: u32, stream: &Stream) -> AclResult<()> {
    let step = STEPS.get(h).map_err(|e| invalid(format!("stepInfo: {e}")))?;
    if tag > 1 {
        return Err(invalid(format!("tag {tag} is neither ACL_STEP_START (0) nor ACL_STEP_END (1)")));
    }
    {
        let mut taken = sync::lock(&step.taken);
        let slot = if tag == 0 { &mut taken.0 } else { &mut taken.1 };
        if *slot {
            return Err(invalid(format!(
                "this stepInfo's {} was already taken",
                if tag == 0 { "start" } else { "end" }
            )));
        }
        *slot = true;
    }
    let (index, stream_id, device) = (step.index, stream.id, stream.device);
    stream.submit_op(TaskInfo::plain("profiling step"), move |_| {
        if recording(ANY) {
            let now = clock::now_ns();
            let tag = if tag == 0 { "start" } else { "end" };
            records::push(host(
                "step",
                String::new(),
                now,
                Some(index),
                json!({ "tag": tag, "stream": stream_id, "device": device }),
            ));
        }
        Ok(())
    })
}
