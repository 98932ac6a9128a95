//! Labels (`aclrtLabel`) and label lists: places in the tasks of a model's streams that an
//! `aclrtSwitchLabelByIndex` task jumps to.
//!
//! The vendor sets labels only on streams bound to a model run instance (`aclmdlRIBindStream`),
//! and so does this runtime: a label is set on a stream that records into a model (bound, or
//! captured) as a task that does nothing and marks the place; a switch task reads its index
//! from device memory when a run of the model reaches it and jumps there ([`take_jump`], used
//! by the replay, `capture/replay.rs`). An ordinary stream is an in-order host queue that
//! cannot jump: setting a label or switching there answers 207000.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;
use crate::runtime::capture::graph::RecordedTask;
use crate::runtime::capture::sink::Sink;
use crate::runtime::memory::{self, Placement};
use crate::runtime::stream::Stream;
use crate::runtime::task::{Op, TaskCtx, TaskInfo};
use crate::sync;

/// Most labels a process holds at once (the vendor's limit).
pub const LABEL_MAX: usize = 65535;

// The name of a switch task lives with the graph that looks for it (no import cycle).
use crate::runtime::capture::graph::SWITCH_TASK;
/// The name of the task that marks a label's place.
pub const LABEL_TASK: &str = "label";

/// A label: where it was set, once per model (the model's id and the task marking the place).
#[derive(Default)]
pub struct Label {
    set: Mutex<Vec<(u32, Weak<RecordedTask>)>>,
}

/// A list of labels, by handle, in the caller's order.
pub struct LabelList {
    pub labels: Vec<u64>,
}

handle_kind!(pub static LABELS: Label => Label, crate::error::AclError);
handle_kind!(pub static LABEL_LISTS: LabelList => LabelList, crate::error::AclError);

/// Labels alive, counted against [`LABEL_MAX`].
static LIVE: AtomicUsize = AtomicUsize::new(0);

pub fn create() -> AclResult<u64> {
    if LIVE.fetch_add(1, Ordering::AcqRel) >= LABEL_MAX {
        LIVE.fetch_sub(1, Ordering::AcqRel);
        return Err(AclError::new(
            crate::error::rt_codes::ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("the process already holds {LABEL_MAX} labels, the most it may: destroy some"),
        ));
    }
    Ok(LABELS.insert(Label::default()))
}

pub fn destroy(raw: u64) -> AclResult<()> {
    Label::release(raw, "label")?;
    LIVE.fetch_sub(1, Ordering::AcqRel);
    Ok(())
}

/// A list of the live labels `labels` (at least one).
pub fn create_list(labels: &[u64]) -> AclResult<u64> {
    if labels.is_empty() {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "num must be at least 1"));
    }
    for (i, &l) in labels.iter().enumerate() {
        Label::resolve(l, &format!("labels[{i}]"))?;
    }
    Ok(LABEL_LISTS.insert(LabelList { labels: labels.to_vec() }))
}

pub fn destroy_list(raw: u64) -> AclResult<()> {
    LabelList::release(raw, "labelList").map(drop)
}

/// The sink through which `stream` records into a model, or 207000 for a stream that runs
/// its work (`api` names the call).
fn model_sink(stream: &Stream, api: &str) -> AclResult<Arc<dyn crate::runtime::task::Recorder>> {
    let r = stream.recorder().filter(|r| r.as_any().downcast_ref::<Sink>().is_some());
    r.ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "not supported here: {api} needs a stream bound to a model run instance (aclmdlRIBindStream) or \
                 captured into one; this runtime's other streams are in-order host queues that cannot jump"
            ),
        )
    })
}

fn sink_of(r: &Arc<dyn crate::runtime::task::Recorder>) -> &Sink {
    r.as_any().downcast_ref::<Sink>().expect("checked by model_sink")
}

/// `aclrtSetLabel`: marks the place of `label` at the end of the tasks `stream` has recorded
/// into its model (once per model).
pub fn set(label: u64, stream: &Stream) -> AclResult<()> {
    let l = Label::resolve(label, "label")?;
    let r = model_sink(stream, "aclrtSetLabel")?;
    let s = sink_of(&r);
    let mut set = sync::lock(&l.set);
    set.retain(|(_, t)| t.strong_count() > 0);
    if set.iter().any(|(g, _)| *g == s.graph.id) {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("the label is already set in model {}: a label marks one place of a model", s.graph.id),
        ));
    }
    let op = Op::Run(Arc::new(|_: &TaskCtx| Ok(())));
    let task = s.graph.push(s.stream.index, TaskInfo::plain(LABEL_TASK), op);
    set.push((s.graph.id, Arc::downgrade(&task)));
    Ok(())
}

thread_local! {
    /// The jump the switch task just run asks for: the handle of the task marking the label.
    /// Set and taken by the same replay, on its thread, around one op.
    static JUMP: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The place the op just run jumps to (the handle of a [`LABEL_TASK`] of the running model),
/// if it was a switch task; cleared by the call.
pub fn take_jump() -> Option<u64> {
    JUMP.with(Cell::take)
}

/// `aclrtSwitchLabelByIndex`: records on `stream` (which records into a model) a task that
/// reads a `uint32_t` index at device address `ptr` when a run reaches it and jumps to the
/// place of that label of `list` (of its first `max` labels: the last of them for a larger
/// index).
pub fn switch_by_index(ptr: usize, max: u32, list: u64, stream: &Stream) -> AclResult<()> {
    let list = LabelList::resolve(list, "labelList")?;
    if max == 0 || max as usize > list.labels.len() {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("maxValue {max}: pass the number of labels of the list (1 to {})", list.labels.len()),
        ));
    }
    let span = index_span(ptr)?;
    let r = model_sink(stream, "aclrtSwitchLabelByIndex")?;
    let s = sink_of(&r);
    let model = s.graph.id;
    let labels: Vec<u64> = list.labels[..max as usize].to_vec();
    let op = Op::Run(Arc::new(move |_: &TaskCtx| {
        let mut bytes = [0u8; 4];
        span.read_into(&mut bytes);
        let index = (u32::from_ne_bytes(bytes) as usize).min(labels.len() - 1);
        let target = place_of(labels[index], index, model)?;
        JUMP.with(|j| j.set(Some(target)));
        Ok(())
    }));
    r.record(TaskInfo::plain(SWITCH_TASK), op)
}

/// The 4 bytes of device memory at `ptr`, checked.
fn index_span(ptr: usize) -> AclResult<crate::sys::span::RawSpan> {
    if ptr == 0 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "ptr must not be NULL"));
    }
    let b = memory::backing(ptr).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("ptr {ptr:#x} is not device memory of this process"),
        )
    })?;
    if !matches!(b.placement, Placement::Device(_)) {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("ptr {ptr:#x} is not device memory (use aclrtMalloc)"),
        ));
    }
    memory::runtime_span(ptr, 4).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("the 4 bytes of the index at ptr {ptr:#x} run past the end of the allocation"),
        )
    })
}

/// The handle of the task marking `label` (entry `index` of a list) in model `model`.
fn place_of(label: u64, index: usize, model: u32) -> AclResult<u64> {
    let l = Label::resolve(label, &format!("label {index} of the list"))?;
    let set = sync::lock(&l.set);
    set.iter()
        .filter(|(g, _)| *g == model)
        .find_map(|(_, t)| t.upgrade())
        .map(|t| t.handle.load(Ordering::Acquire))
        .ok_or_else(|| {
            AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("label {index} of the list is not set on a stream of model {model} (aclrtSetLabel)"),
            )
        })
}
