//! Running a graph: one stream task that runs the recorded work in recording order.
//!
//! A replay is queued as a single task (no hand-off per recorded task): its staged parts (an
//! event record's sequence number, an event wait's target) are done when it is queued, then
//! the stream's worker runs each recorded op in turn with the stream's [`TaskCtx`]. The first
//! failing op ends the replay with its error, reported by the stream's next synchronisation
//! as any task failure; `aclmdlRIAbort` ends it quietly at the next op (and cancels an op that
//! waits).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::cond::CondHandle;
use super::graph::{Graph, State, Steps};
use crate::error::AclResult;
use crate::runtime::profiling;
use crate::runtime::stream::Stream;
use crate::runtime::task::{Op, Task, TaskCtx};
use crate::sync;

pub const COND_IF: u32 = 0;
pub const COND_WHILE: u32 = 1;
pub const COND_SWITCH: u32 = 2;

/// Counts a replay as running until it is dropped (run or discarded).
struct Running(Arc<Graph>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `aclmdlRIExecuteAsync`: queues one run of `graph` on `stream`.
pub fn launch(graph: &Arc<Graph>, stream: &Stream) -> AclResult<()> {
    stream.refuse_if_captured("running a model on the stream")?;
    graph.check_runnable()?;
    let steps = graph.steps();
    let staged = stage(&steps)?;
    let epoch = graph.aborts.load(Ordering::Acquire);
    graph.running.fetch_add(1, Ordering::AcqRel);
    let running = Running(Arc::clone(graph));
    stream.submit_unrecorded(Box::new(move |ctx: &TaskCtx| {
        let g = &running.0;
        let ctx = ctx.with_model_abort(&g.aborts, epoch);
        run(g, &steps, staged, &ctx)
    }))
}

/// The staged parts of a run, done now, in order (empty when the graph has none).
fn stage(steps: &Steps) -> AclResult<Vec<Option<Task>>> {
    if !steps.staged {
        return Ok(Vec::new());
    }
    steps
        .ops
        .iter()
        .map(|op| match op {
            Op::Staged(s) => s().map(Some),
            Op::Run(_) => Ok(None),
        })
        .collect()
}

fn run(graph: &Graph, steps: &Steps, staged: Vec<Option<Task>>, ctx: &TaskCtx) -> AclResult<()> {
    for c in sync::lock(&graph.conds).iter() {
        c.reset();
    }
    if !steps.places.is_empty() {
        return run_with_jumps(graph, steps, staged, ctx);
    }
    let mut staged = staged.into_iter();
    for (i, op) in steps.ops.iter().enumerate() {
        let once = staged.next().flatten();
        if ctx.cancelled() {
            // Aborted (the model or the stream): the rest is not run; what was staged is
            // dropped, so its event records count as discarded.
            return Ok(());
        }
        match timed(graph, steps, i, || run_op(op, once, ctx)) {
            Ok(()) => {}
            // A task cut short by an abort (of the model or the stream) is no failure.
            Err(_) if ctx.cancelled() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Runs an op of a replay: its staged task if it was staged at launch, else the op itself (a
/// branch graph run inside a conditional task stages as it goes).
fn run_op(op: &Op, once: Option<Task>, ctx: &TaskCtx) -> AclResult<()> {
    match op {
        Op::Run(f) => f(ctx),
        Op::Staged(s) => match once {
            Some(t) => t(ctx),
            None => s().and_then(|t| t(ctx)),
        },
    }
}

/// A run of a graph with label switches (runtime/label.rs): each model stream has its own
/// place in its tasks, and the next op run is the earliest recorded among the streams'
/// next ones (so with no jump, the recording order). A switch moves the place of the label's
/// stream to the label (back or forth; a label of another stream also ends the switching
/// stream's run, as the vendor's "the current stream stops"). A run that loops for ever
/// ends with `aclmdlRIAbort` or the stream's abort.
fn run_with_jumps(graph: &Graph, steps: &Steps, staged: Vec<Option<Task>>, ctx: &TaskCtx) -> AclResult<()> {
    let mut staged = staged;
    staged.resize_with(steps.ops.len(), || None);
    // Per model stream: the indices of its ops, in order, and the place of the next one.
    let mut lanes: Vec<(u32, Vec<usize>, usize)> = Vec::new();
    for (i, &(stream, _)) in steps.places.iter().enumerate() {
        match lanes.iter_mut().find(|l| l.0 == stream) {
            Some(l) => l.1.push(i),
            None => lanes.push((stream, vec![i], 0)),
        }
    }
    let _ = crate::runtime::label::take_jump();
    loop {
        if ctx.cancelled() {
            return Ok(());
        }
        let next = lanes.iter().enumerate().filter_map(|(n, l)| l.1.get(l.2).map(|&i| (i, n))).min();
        let Some((i, lane)) = next else { return Ok(()) };
        lanes[lane].2 += 1;
        match timed(graph, steps, i, || run_op(&steps.ops[i], staged[i].take(), ctx)) {
            Ok(()) => {}
            Err(_) if ctx.cancelled() => return Ok(()),
            Err(e) => return Err(e),
        }
        let Some(target) = crate::runtime::label::take_jump() else { continue };
        let Some(j) = steps.places.iter().position(|&(_, h)| h == target) else {
            return Err(crate::error::AclError::new(
                crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID,
                "the label a switch task jumps to is no longer among the model's tasks",
            ));
        };
        let to = lanes.iter().position(|l| l.0 == steps.places[j].0).expect("every op has a lane");
        if to != lane {
            lanes[lane].2 = lanes[lane].1.len();
        }
        lanes[to].2 = lanes[to].1.iter().position(|&k| k == j).expect("the op is in its lane");
    }
}

/// Runs op `i` of `steps`; a model subscribed to (`aclprofModelSubscribe`) gets a record of it.
fn timed(graph: &Graph, steps: &Steps, i: usize, op: impl FnOnce() -> AclResult<()>) -> AclResult<()> {
    let Some(start) = profiling::subscribe::op_clock(graph.id) else { return op() };
    let result = op();
    let (name, seq) = steps.names.get(i).copied().unwrap_or(("task", i as u32));
    profiling::subscribe::op_ran(graph.id, graph.device, name, seq, start);
    result
}

/// Runs a branch graph inside the running replay (a conditional task's branch).
fn run_inline(graph: &Graph, ctx: &TaskCtx) -> AclResult<()> {
    if graph.state() != State::Ready {
        // A branch never captured has no work.
        return Ok(());
    }
    let steps = graph.steps();
    run(graph, &steps, Vec::new(), ctx)
}

/// The op of a conditional task (`aclmdlRIAddCondTask`): reads the condition when reached.
/// IF runs the first branch on a non-zero condition, else the second if there is one; WHILE
/// runs its branch as long as the condition is non-zero (the branch must change it); SWITCH
/// runs the branch the condition indexes, none when it is out of range.
pub fn cond_op(cond: Arc<CondHandle>, kind: u32, branches: Vec<Arc<Graph>>) -> Op {
    Op::Run(Arc::new(move |ctx: &TaskCtx| match kind {
        COND_IF => match (cond.value() != 0, branches.get(1)) {
            (true, _) => run_inline(&branches[0], ctx),
            (false, Some(b)) => run_inline(b, ctx),
            (false, None) => Ok(()),
        },
        COND_WHILE => {
            while cond.value() != 0 && !ctx.cancelled() {
                run_inline(&branches[0], ctx)?;
            }
            Ok(())
        }
        _ => match usize::try_from(cond.value()).ok().and_then(|i| branches.get(i)) {
            Some(b) => run_inline(b, ctx),
            None => Ok(()),
        },
    }))
}
