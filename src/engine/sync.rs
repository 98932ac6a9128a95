//! The engine's poison-tolerant lock, in a leaf so every part may use it without importing
//! the engine's facade (it goes once the crate has one shared `lock`).

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, also when a thread panicked while holding it: every critical section of the
/// engine leaves its data consistent, so a panic elsewhere does not poison it.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
