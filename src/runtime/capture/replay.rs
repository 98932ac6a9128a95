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
    let mut staged = staged.into_iter();
    for op in &steps.ops {
        let once = staged.next().flatten();
        if ctx.cancelled() {
            // Aborted (the model or the stream): the rest is not run; what was staged is
            // dropped, so its event records count as discarded.
            return Ok(());
        }
        let result = match op {
            Op::Run(f) => f(ctx),
            Op::Staged(s) => match once {
                Some(t) => t(ctx),
                // A branch graph run inside a conditional task stages as it goes.
                None => s().and_then(|t| t(ctx)),
            },
        };
        match result {
            Ok(()) => {}
            // A task cut short by an abort (of the model or the stream) is no failure.
            Err(_) if ctx.cancelled() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
