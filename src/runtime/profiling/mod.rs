//! Profiling on the host (`acl/acl_prof.h`, the vendor's libmsprofiler.so): what the runtime
//! can observe without an NPU, written where the vendor's tool writes its data.
//!
//! - [`session`]: `aclprofInit` / `aclprofStart` / `aclprofStop` / `aclprofFinalize`, their
//!   order and codes, and the files each started configuration writes;
//! - [`config`]: `aclprofConfig` and `aclprofSetConfig`'s settings;
//! - [`tx`]: msproftx stamps, marks, push/pop and ranges, `aclprofStr2Id`, step timestamps;
//! - [`subscribe`]: model subscriptions, whose records go to the user's pipe, and their parsing;
//! - [`records`]: the records kept until a stop writes them, as JSON lines;
//! - [`clock`]: the timestamps of every record.
//!
//! Recording costs one relaxed atomic load per stream task while profiling is off
//! ([`task_clock`]). docs/profiling.md describes the output.

pub mod clock;
pub mod config;
pub mod records;
pub mod session;
pub mod signature;
pub mod subscribe;
pub mod tx;

use std::sync::atomic::{AtomicU32, Ordering};

use crate::runtime::job::Job;

/// Stream tasks are timed (a started configuration asks for task time).
pub(crate) const TASKS: u32 = 1;
/// msproftx calls record (a configuration with `ACL_PROF_MSPROFTX` started, until finalize).
pub(crate) const TX: u32 = 2;
/// Some configuration is started: step timestamps record.
pub(crate) const ANY: u32 = 4;

/// What is being recorded now ([`TASKS`], [`TX`], [`ANY`]).
static RECORDING: AtomicU32 = AtomicU32::new(0);

pub(crate) fn set_recording(bits: u32) {
    RECORDING.store(bits, Ordering::Release);
}

pub(crate) fn recording(bit: u32) -> bool {
    RECORDING.load(Ordering::Relaxed) & bit != 0
}

/// The start time of a stream task about to run, when tasks are being timed.
#[inline]
pub(crate) fn task_clock() -> Option<u64> {
    if RECORDING.load(Ordering::Relaxed) & TASKS == 0 { None } else { Some(clock::now_ns()) }
}

/// A stream task timed by [`task_clock`] has run.
pub(crate) fn task_ran(device: i32, stream: u32, index: u64, job: &Job, start: u64) {
    let kind = match job {
        Job::Once(_) | Job::Shared(_) => "task",
        Job::Record(_) => "event_record",
        Job::Wait(_) => "event_wait",
    };
    records::push(records::Record::Task {
        device: device.max(0) as u32,
        stream,
        index,
        kind,
        start_ns: start,
        end_ns: clock::now_ns(),
        thread: crate::sys::thread_id(),
    });
}
