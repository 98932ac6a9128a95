//! Who hears of a failed stream task: the process-wide exception callbacks
//! (`aclrtExceptionInfoCallbackRegister` and the older `aclrtSetExceptionInfoCallback`).
//!
//! The core keeps hooks as Rust closures under a key (the C layer's function pointer), so it
//! never calls into C itself. A stream's worker calls [`report`] when one of its tasks fails,
//! with the ids the C accessors hand out. The list is copied before the hooks run, so a hook
//! may register or unregister (as the vendor allows, an unregistered hook may still see a
//! failure already being reported).

use std::sync::{Arc, Mutex};

use crate::error::acl_codes::aclError;
use crate::sync;

/// What a failed task's report carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskFailure {
    /// The task's place on its stream: the n-th task submitted to it, from 0.
    pub task_id: u32,
    /// The stream's id (`aclrtStreamGetId`).
    pub stream_id: u32,
    /// The operating system's id of the thread that queued the task.
    pub thread_id: u32,
    pub device_id: u32,
    pub error_code: aclError,
}

pub type Hook = Arc<dyn Fn(&TaskFailure) + Send + Sync>;

struct Hooks {
    /// Registered hooks, one per key, in registration order.
    registered: Vec<(usize, Hook)>,
    /// The one set by `aclrtSetExceptionInfoCallback`, apart from the registered ones.
    legacy: Option<Hook>,
}

static HOOKS: Mutex<Hooks> = Mutex::new(Hooks { registered: Vec::new(), legacy: None });

/// Registers `hook` under `key`; registering a key again replaces its hook (no duplicate).
pub fn register(key: usize, hook: Hook) {
    let mut h = sync::lock(&HOOKS);
    match h.registered.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = hook,
        None => h.registered.push((key, hook)),
    }
}

/// Removes the hook registered under `key`; nothing if there is none.
pub fn unregister(key: usize) {
    sync::lock(&HOOKS).registered.retain(|(k, _)| *k != key);
}

/// Sets (or, with `None`, clears) the single legacy hook; registered hooks are not touched.
pub fn set_legacy(hook: Option<Hook>) {
    sync::lock(&HOOKS).legacy = hook;
}

/// Tells every hook of `failure`.
pub fn report(failure: &TaskFailure) {
    let hooks: Vec<Hook> = {
        let h = sync::lock(&HOOKS);
        h.legacy.iter().cloned().chain(h.registered.iter().map(|(_, f)| Arc::clone(f))).collect()
    };
    for hook in hooks {
        hook(failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn hooks_are_keyed_and_the_legacy_one_stands_apart() {
        // Keys no other test uses; the legacy slot is left as found.
        static SEEN: AtomicU32 = AtomicU32::new(0);
        let hook: Hook = Arc::new(|f: &TaskFailure| {
            if f.stream_id == 0xdead_0001 {
                SEEN.fetch_add(1, Ordering::SeqCst);
            }
        });
        let failure = TaskFailure {
            task_id: 1,
            stream_id: 0xdead_0001,
            thread_id: 2,
            device_id: 3,
            error_code: 107020,
        };
        register(0xdead_0001, Arc::clone(&hook));
        register(0xdead_0001, Arc::clone(&hook));
        report(&failure);
        assert_eq!(SEEN.load(Ordering::SeqCst), 1, "a key registered twice is called once");
        unregister(0xdead_0001);
        unregister(0xdead_0001);
        report(&failure);
        assert_eq!(SEEN.load(Ordering::SeqCst), 1);
    }
}
