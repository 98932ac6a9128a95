//! A model run instance (`aclmdlRI`): the tasks a capture or a build recorded, in the order
//! they were recorded, each tagged with the stream it came from.
//!
//! The task list is edited under one lock (recording, task-group updates, `aclmdlRIUpdate`)
//! and handed to replays as a snapshot ([`Steps`]), so a replay takes one lock to start and
//! none per task, and an edit never changes a replay under way.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::error::rt_codes::{
    ACL_ERROR_RT_MODEL_CAPTURED, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
};
use crate::error::{AclError, AclResult};
use crate::runtime::task::{Op, TaskInfo, TaskType};
use crate::sync;

/// The name of a label switch task (`aclrtSwitchLabelByIndex`, runtime/label.rs; what
/// `aclmdlRIDebugPrint` shows): a model holding one runs with jumps.
pub const SWITCH_TASK: &str = "switch label by index";

crate::handle_kind!(pub static MODELS: ModelRi => Graph, AclError);
crate::handle_kind!(pub static TASKS: ModelTask => RecordedTask, AclError);
crate::handle_kind!(pub static MODEL_STREAMS: ModelStream => ModelStream, AclError);
crate::handle_kind!(pub static GROUPS: TaskGroup => Group, AclError);

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// Where a graph is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Made by `aclmdlRIAddCondTask` for a branch, not captured yet.
    Empty,
    /// A capture in progress, begun by `thread` in `mode`.
    Capturing { thread: u32, mode: u32 },
    /// `aclmdlRIBuildBegin` was called, not `aclmdlRIBuildEnd`.
    Building,
    /// Captured or built: it may run.
    Ready,
}

/// A stream whose work went into the graph (the capture's origin first).
pub struct ModelStream {
    pub graph: Weak<Graph>,
    /// Its index among the graph's streams.
    pub index: u32,
    /// The id of the user's stream it recorded (`aclrtStreamGetId`).
    pub stream_id: u32,
    /// The user's stream handle.
    pub stream_handle: u64,
    /// This model stream's own handle (`aclmdlRIGetStreams`).
    pub handle: u64,
}

/// One recorded task (`aclmdlRITask`).
pub struct RecordedTask {
    /// Its place in the graph's recording order (`aclmdlRITaskGetSeqId`).
    pub seq: u32,
    /// Index of the model stream it came from.
    pub stream: u32,
    pub handle: AtomicU64,
    current: Mutex<(TaskInfo, Op)>,
    /// Parameters set by `aclmdlRITaskSetParams`, applied by `aclmdlRIUpdate`.
    pending: Mutex<Option<(TaskInfo, Op)>>,
    /// `aclmdlRITaskDisable`, applied by `aclmdlRIUpdate`.
    disable_pending: AtomicBool,
    disabled: AtomicBool,
}

impl RecordedTask {
    pub fn kind(&self) -> TaskType {
        sync::lock(&self.current).0.kind
    }

    /// The parameters as last set (pending ones first).
    pub fn info(&self) -> TaskInfo {
        if let Some((i, _)) = &*sync::lock(&self.pending) {
            return i.clone();
        }
        sync::lock(&self.current).0.clone()
    }

    pub fn is_disabled(&self) -> bool {
        self.disabled.load(Ordering::Acquire)
    }

    /// `aclmdlRITaskSetParams`: `info` and `op` replace the task's at the next `aclmdlRIUpdate`.
    pub fn set_pending(&self, info: TaskInfo, op: Op) -> AclResult<()> {
        let kind = self.kind();
        if info.kind != kind {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "params.type {:?} differs from the task's type {kind:?}: a task keeps its type",
                    info.kind
                ),
            ));
        }
        *sync::lock(&self.pending) = Some((info, op));
        Ok(())
    }

    /// `aclmdlRITaskDisable`: the task is skipped by replays after the next `aclmdlRIUpdate`.
    pub fn disable(&self) -> AclResult<()> {
        if self.kind() == TaskType::Default {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "a task of type ACL_MODEL_RI_TASK_DEFAULT (a copy, a fill, a host function) cannot be disabled",
            ));
        }
        self.disable_pending.store(true, Ordering::Release);
        Ok(())
    }

    /// Applies what `set_pending` and `disable` staged; true if something changed.
    fn apply(&self) -> bool {
        let mut changed = false;
        if let Some(p) = sync::lock(&self.pending).take() {
            *sync::lock(&self.current) = p;
            changed = true;
        }
        if self.disable_pending.swap(false, Ordering::AcqRel) {
            self.disabled.store(true, Ordering::Release);
            changed = true;
        }
        changed
    }

    /// Replaces the task's work at once (a task-group update).
    pub fn replace(&self, info: TaskInfo, op: Op) {
        *sync::lock(&self.current) = (info, op);
    }

    /// A label switch task (`aclrtSwitchLabelByIndex`): the model runs with jumps.
    fn is_switch(&self) -> bool {
        sync::lock(&self.current).0.name == SWITCH_TASK
    }

    fn step(&self) -> Option<Op> {
        (!self.is_disabled()).then(|| sync::lock(&self.current).1.clone())
    }
}

/// A task group (`aclrtTaskGrp`): tasks captured between `aclmdlRICaptureTaskGrpBegin` and
/// `aclmdlRICaptureTaskGrpEnd`, which a later update replaces together.
pub struct Group {
    pub graph: Weak<Graph>,
    pub tasks: Vec<Arc<RecordedTask>>,
}

/// What a replay runs: the enabled tasks' work in order, and whether any is staged.
pub struct Steps {
    pub ops: Vec<Op>,
    pub staged: bool,
    /// For a graph with a label switch (`aclrtSwitchLabelByIndex`, runtime/label.rs), each
    /// op's model stream and task handle, for the replay's jumps; empty otherwise.
    pub places: Vec<(u32, u64)>,
    /// Each op's task name and seq id, for the profiling records of a subscribed model.
    pub names: Vec<(&'static str, u32)>,
}

#[derive(Default)]
pub(crate) struct Inner {
    pub tasks: Vec<Arc<RecordedTask>>,
    pub streams: Vec<Arc<ModelStream>>,
    /// Open task groups: the model stream index and what it has recorded since the begin.
    pub open_groups: Vec<(u32, Vec<Arc<RecordedTask>>)>,
    /// Events whose records this capture holds (their capture mark is cleared at its end).
    pub marked_events: Vec<Arc<crate::runtime::event::Event>>,
    /// The mode registration of the capture in progress.
    pub mode_token: Option<u64>,
    /// Branch graphs of conditional tasks (their captures must end before this one's).
    pub children: Vec<Arc<Graph>>,
    /// Handles of its task groups (freed with it).
    pub groups: Vec<u64>,
    /// The snapshot is out of date.
    pub dirty: bool,
}

/// A destroy callback: the C function's address (its key) and the call.
pub type DestroyCallback = (usize, Box<dyn FnOnce() + Send>);

pub struct Graph {
    pub id: u32,
    /// Its handle in [`MODELS`].
    pub handle: AtomicU64,
    pub name: Mutex<String>,
    pub(crate) state: Mutex<State>,
    pub(crate) inner: Mutex<Inner>,
    steps: Mutex<Arc<Steps>>,
    /// Set when work the capture cannot hold was attempted: the capture's end reports 507903.
    pub invalid: Arc<AtomicBool>,
    /// `aclmdlRIAbort`s so far: a replay stops when this moves.
    pub aborts: AtomicU64,
    /// Replays queued or running.
    pub running: AtomicU32,
    /// The device and context it was made in.
    pub device: i32,
    pub context: u64,
    pub(crate) destroy_callbacks: Mutex<Vec<DestroyCallback>>,
    /// Condition words to set to their default at the start of each run.
    pub(crate) conds: Mutex<Vec<Arc<super::cond::CondHandle>>>,
    /// The stream of `aclmdlRIExecute`, made on first use.
    pub(crate) exec_stream: Mutex<Option<Arc<crate::runtime::stream::Stream>>>,
    /// The graph whose conditional task this is a branch of.
    pub(crate) branch_of: Mutex<Option<Weak<Graph>>>,
}

impl Graph {
    /// A new graph in `state`, with a handle.
    pub fn create(state: State, device: i32, context: u64) -> Arc<Graph> {
        let g = Arc::new(Graph {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            handle: AtomicU64::new(0),
            name: Mutex::new(String::new()),
            state: Mutex::new(state),
            inner: Mutex::new(Inner::default()),
            steps: Mutex::new(Arc::new(Steps {
                ops: Vec::new(),
                staged: false,
                places: Vec::new(),
                names: Vec::new(),
            })),
            invalid: Arc::new(AtomicBool::new(false)),
            aborts: AtomicU64::new(0),
            running: AtomicU32::new(0),
            device,
            context,
            destroy_callbacks: Mutex::new(Vec::new()),
            conds: Mutex::new(Vec::new()),
            exec_stream: Mutex::new(None),
            branch_of: Mutex::new(None),
        });
        g.handle.store(MODELS.insert_arc(Arc::clone(&g)), Ordering::Release);
        g
    }

    pub fn parent_is_none(&self) -> bool {
        sync::lock(&self.branch_of).is_none()
    }

    /// The graph at the top of the branches this one is in (itself if none).
    pub fn root(self: &Arc<Self>) -> Arc<Graph> {
        let mut g = Arc::clone(self);
        loop {
            let parent = sync::lock(&g.branch_of).as_ref().and_then(Weak::upgrade);
            match parent {
                Some(p) => g = p,
                None => return g,
            }
        }
    }

    /// A branch graph whose capture failed goes back to empty (its parent keeps it).
    pub fn reset_branch(&self) {
        let mut inner = sync::lock(&self.inner);
        let gone = std::mem::take(&mut inner.tasks);
        inner.dirty = true;
        drop(inner);
        for t in gone {
            let _ = TASKS.remove(t.handle.load(Ordering::Acquire));
        }
        self.invalid.store(false, Ordering::Release);
        self.set_state(State::Empty);
    }

    pub fn state(&self) -> State {
        *sync::lock(&self.state)
    }

    pub fn set_state(&self, s: State) {
        *sync::lock(&self.state) = s;
    }

    /// The model stream recording user stream `stream_id`, added if new.
    pub fn model_stream(self: &Arc<Self>, stream_id: u32, stream_handle: u64) -> Arc<ModelStream> {
        let mut inner = sync::lock(&self.inner);
        if let Some(s) = inner.streams.iter().find(|s| s.stream_id == stream_id) {
            return Arc::clone(s);
        }
        let handle = MODEL_STREAMS.reserve();
        let ms = Arc::new(ModelStream {
            graph: Arc::downgrade(self),
            index: inner.streams.len() as u32,
            stream_id,
            stream_handle,
            handle,
        });
        MODEL_STREAMS.fill(handle, Arc::clone(&ms));
        inner.streams.push(Arc::clone(&ms));
        ms
    }

    /// Appends a task recorded from model stream `stream`.
    pub fn push(self: &Arc<Self>, stream: u32, info: TaskInfo, op: Op) -> Arc<RecordedTask> {
        let mut inner = sync::lock(&self.inner);
        let task = Arc::new(RecordedTask {
            seq: inner.tasks.len() as u32,
            stream,
            handle: AtomicU64::new(0),
            current: Mutex::new((info, op)),
            pending: Mutex::new(None),
            disable_pending: AtomicBool::new(false),
            disabled: AtomicBool::new(false),
        });
        task.handle.store(TASKS.insert_arc(Arc::clone(&task)), Ordering::Release);
        for (s, group) in inner.open_groups.iter_mut() {
            if *s == stream {
                group.push(Arc::clone(&task));
            }
        }
        inner.tasks.push(Arc::clone(&task));
        inner.dirty = true;
        task
    }

    /// The tasks of model stream `index`, in order.
    pub fn tasks_of(&self, index: u32) -> Vec<Arc<RecordedTask>> {
        sync::lock(&self.inner).tasks.iter().filter(|t| t.stream == index).cloned().collect()
    }

    pub fn streams(&self) -> Vec<Arc<ModelStream>> {
        sync::lock(&self.inner).streams.clone()
    }

    pub fn tasks(&self) -> Vec<Arc<RecordedTask>> {
        sync::lock(&self.inner).tasks.clone()
    }

    /// Drops the tasks recorded from model stream `index` (`aclrtPersistentTaskClean`).
    pub fn clean_stream(&self, index: u32) {
        let mut inner = sync::lock(&self.inner);
        let gone: Vec<_> = inner.tasks.iter().filter(|t| t.stream == index).cloned().collect();
        inner.tasks.retain(|t| t.stream != index);
        inner.dirty = true;
        drop(inner);
        for t in gone {
            let _ = TASKS.remove(t.handle.load(Ordering::Acquire));
        }
    }

    /// Marks the snapshot out of date (a task's work was replaced).
    pub fn touch(&self) {
        sync::lock(&self.inner).dirty = true;
    }

    /// `aclmdlRIUpdate`: applies the parameters and disables staged on the tasks.
    pub fn update(&self) {
        let tasks = self.tasks();
        let changed = tasks.iter().fold(false, |c, t| t.apply() | c);
        if changed {
            self.touch();
        }
    }

    /// What a replay runs now (rebuilt if the tasks changed since the last one).
    pub fn steps(&self) -> Arc<Steps> {
        let mut inner = sync::lock(&self.inner);
        let mut steps = sync::lock(&self.steps);
        if inner.dirty {
            let enabled: Vec<(&Arc<RecordedTask>, Op)> =
                inner.tasks.iter().filter_map(|t| t.step().map(|op| (t, op))).collect();
            let staged = enabled.iter().any(|(_, o)| matches!(o, Op::Staged(_)));
            let jumps = enabled.iter().any(|(t, _)| t.is_switch());
            let places = match jumps {
                true => enabled.iter().map(|(t, _)| (t.stream, t.handle.load(Ordering::Acquire))).collect(),
                false => Vec::new(),
            };
            let names = enabled.iter().map(|(t, _)| (t.info().name, t.seq)).collect();
            let ops = enabled.into_iter().map(|(_, op)| op).collect();
            *steps = Arc::new(Steps { ops, staged, places, names });
            inner.dirty = false;
        }
        Arc::clone(&steps)
    }

    /// 107026 while captured, 507903 once invalidated, 107000 while built or empty: the graph
    /// cannot run.
    pub fn check_runnable(&self) -> AclResult<()> {
        match self.state() {
            State::Ready => Ok(()),
            State::Capturing { .. } if self.invalid.load(Ordering::Acquire) => Err(AclError::new(
                ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                "the model's capture was invalidated: it cannot run",
            )),
            State::Capturing { .. } => Err(AclError::new(
                ACL_ERROR_RT_MODEL_CAPTURED,
                "the model is still being captured: end the capture (aclmdlRICaptureEnd) before running it",
            )),
            State::Building => Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "the model is being built: call aclmdlRIBuildEnd before running it",
            )),
            State::Empty => Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "the model was never captured (aclmdlRICaptureToModelRIBegin) or built",
            )),
        }
    }

    /// Registers `call` to run when the graph's resources go (after `aclmdlRIDestroy` and
    /// its last replay); the same `key` again replaces it.
    pub fn on_destroy(&self, key: usize, call: Box<dyn FnOnce() + Send>) {
        let mut c = sync::lock(&self.destroy_callbacks);
        c.retain(|(k, _)| *k != key);
        c.push((key, call));
    }

    /// Unregisters the destroy callback of `key`; 107000 if there is none.
    pub fn forget_destroy(&self, key: usize) -> AclResult<()> {
        let mut c = sync::lock(&self.destroy_callbacks);
        let before = c.len();
        c.retain(|(k, _)| *k != key);
        if c.len() == before {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                "this function is not registered as a destroy callback of the model",
            ));
        }
        Ok(())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let inner = std::mem::take(&mut *sync::lock(&self.inner));
        for t in &inner.tasks {
            let _ = TASKS.remove(t.handle.load(Ordering::Acquire));
        }
        for s in &inner.streams {
            let _ = MODEL_STREAMS.remove(s.handle);
        }
        for e in &inner.marked_events {
            e.set_capture(None);
        }
        for g in &inner.groups {
            let _ = GROUPS.remove(*g);
        }
        // Branch models go with their parent (their handles are stale from now on).
        for c in &inner.children {
            let _ = MODELS.remove(c.handle.load(Ordering::Acquire));
        }
        if let Some(token) = inner.mode_token {
            super::mode::exit(token);
        }
        for c in std::mem::take(&mut *sync::lock(&self.conds)) {
            let _ = super::cond::CONDS.remove(c.handle.load(Ordering::Acquire));
            let _ = crate::runtime::memory::free(c.addr, crate::runtime::memory::AllocKind::Device);
        }
        if let Some(s) = sync::lock(&self.exec_stream).take() {
            s.close(true);
        }
        for (_, call) in std::mem::take(&mut *sync::lock(&self.destroy_callbacks)) {
            call();
        }
    }
}
