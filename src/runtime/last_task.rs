//! `aclrtGetThreadLastTaskId`: the id of the last task this thread queued on a stream (its
//! place on that stream, from 0, the id exception reports carry).

use std::cell::Cell;

thread_local! {
    static LAST: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Notes that this thread queued task `id`.
pub fn note(id: u32) {
    let _ = LAST.try_with(|c| c.set(Some(id)));
}

/// The id of the last task this thread queued, if it queued one.
pub fn last() -> Option<u32> {
    LAST.try_with(Cell::get).ok().flatten()
}
