//! `aclmdlRIDebugPrint` (the graph to the log, at info level) and `aclmdlRIDebugJsonPrint`
//! (the graph as a JSON file): the model's id, name and state, and per stream the tasks in
//! recording order with their sequence id, type and name; the verbose JSON adds each task's
//! parameters and a branch graph's tasks under its conditional task's parent.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::graph::{Graph, State};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::runtime::task::{Params, TaskType};
use crate::sync;

/// `ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE`.
pub const VERBOSE: u32 = 1;

/// The vendor's name of a task type.
pub fn type_name(t: TaskType) -> &'static str {
    match t {
        TaskType::Default => "ACL_MODEL_RI_TASK_DEFAULT",
        TaskType::Kernel => "ACL_MODEL_RI_TASK_KERNEL",
        TaskType::EventRecord => "ACL_MODEL_RI_TASK_EVENT_RECORD",
        TaskType::EventWait => "ACL_MODEL_RI_TASK_EVENT_WAIT",
        TaskType::EventReset => "ACL_MODEL_RI_TASK_EVENT_RESET",
        TaskType::ValueWrite => "ACL_MODEL_RI_TASK_VALUE_WRITE",
        TaskType::ValueWait => "ACL_MODEL_RI_TASK_VALUE_WAIT",
    }
}

fn state_name(s: State) -> &'static str {
    match s {
        State::Empty => "empty",
        State::Capturing { .. } => "capturing",
        State::Building => "building",
        State::Ready => "ready",
    }
}

fn params(p: &Params) -> Value {
    match p {
        Params::None => Value::Null,
        Params::Event { event_flags, flag, .. } => json!({ "eventFlag": event_flags, "flag": flag }),
        Params::ValueWrite { addr, value } => json!({ "devAddr": format!("{addr:#x}"), "value": value }),
        Params::ValueWait { addr, value, flag } => {
            json!({ "devAddr": format!("{addr:#x}"), "value": value, "flag": flag })
        }
    }
}

/// The graph as JSON.
pub fn to_json(graph: &Graph, verbose: bool) -> Value {
    let tasks = graph.tasks();
    let streams: Vec<Value> = graph
        .streams()
        .iter()
        .map(|ms| {
            let list: Vec<Value> = tasks
                .iter()
                .filter(|t| t.stream == ms.index)
                .map(|t| {
                    let info = t.info();
                    let mut v = json!({
                        "seqId": t.seq,
                        "type": type_name(info.kind),
                        "name": info.name,
                        "disabled": t.is_disabled(),
                    });
                    if verbose {
                        v["params"] = params(&info.params);
                    }
                    v
                })
                .collect();
            json!({ "streamId": ms.stream_id, "taskNum": list.len(), "tasks": list })
        })
        .collect();
    let mut v = json!({
        "modelRIId": graph.id,
        "name": sync::lock(&graph.name).clone(),
        "status": state_name(graph.state()),
        "streamNum": streams.len(),
        "taskNum": tasks.len(),
        "streams": streams,
    });
    if verbose {
        let children = sync::lock(&graph.inner).children.clone();
        v["branches"] = Value::Array(children.iter().map(|c| to_json(c, true)).collect());
        v["runsQueued"] = json!(graph.running.load(Ordering::Acquire));
    }
    v
}

/// `aclmdlRIDebugPrint`: the graph, one log line per task.
pub fn to_log(graph: &Graph) {
    log::info!(
        target: TARGET,
        "modelRI {} \"{}\": {}, {} stream(s), {} task(s)",
        graph.id,
        sync::lock(&graph.name),
        state_name(graph.state()),
        graph.streams().len(),
        graph.tasks().len()
    );
    let streams = graph.streams();
    for t in graph.tasks() {
        let info = t.info();
        let stream = streams.get(t.stream as usize).map_or(0, |s| s.stream_id);
        log::info!(
            target: TARGET,
            "modelRI {} stream {stream} task {}: {} ({}){}",
            graph.id,
            t.seq,
            type_name(info.kind),
            info.name,
            if t.is_disabled() { ", disabled" } else { "" }
        );
    }
}

/// `aclmdlRIDebugJsonPrint`: writes the graph as JSON to `path`.
pub fn to_file(graph: &Graph, path: &str, flags: u32) -> AclResult<()> {
    if flags > VERBOSE {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flags {flags}: use ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY (0) or _VERBOSE (1)"),
        ));
    }
    let text = serde_json::to_string_pretty(&to_json(graph, flags == VERBOSE)).unwrap_or_default();
    std::fs::write(path, text + "\n").map_err(|e| {
        AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("cannot write the model's JSON to {path}: {e}"))
    })
}
