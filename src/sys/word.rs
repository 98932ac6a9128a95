//! A 64-bit word of memory that may be shared between processes (device memory, IPC-imported
//! memory), read, written and slept on by stream tasks (`aclrtValueWait` / `aclrtValueWrite`).
//!
//! Sleeping uses the shared futex on the word's low 32 bits: a store through [`SharedWord::store`]
//! always wakes the sleepers of every process mapping the page; a store by other means (a copy)
//! is seen at the sleeper's next time slice.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use super::futex;
use super::span::RawSpan;

/// Where the low half of a 64-bit word lies.
const LOW_HALF: usize = if cfg!(target_endian = "little") { 0 } else { 4 };

/// An 8-byte aligned, writable word; the span keeps its mapping alive.
pub struct SharedWord {
    span: RawSpan,
}

impl SharedWord {
    /// The word a span of exactly 8 writable, 8-aligned bytes holds; `None` otherwise.
    pub fn new(span: RawSpan) -> Option<SharedWord> {
        (span.len() == 8 && span.addr() % 8 == 0 && span.is_writable()).then_some(SharedWord { span })
    }

    fn word(&self) -> &AtomicU64 {
        // SAFETY: the span is 8 bytes of memory valid for reads and writes while it exists
        // (RawSpan's contract; library mappings are held alive by it), 8-aligned (checked in
        // `new`), and any bit pattern is a u64. Others may change it concurrently, which atomics
        // allow; the reference lives no longer than `&self`.
        unsafe { AtomicU64::from_ptr(self.span.addr() as *mut u64) }
    }

    fn low(&self) -> &AtomicU32 {
        // SAFETY: as `word`: 4 bytes inside the same 8, 4-aligned.
        unsafe { AtomicU32::from_ptr((self.span.addr() + LOW_HALF) as *mut u32) }
    }

    pub fn load(&self) -> u64 {
        self.word().load(Ordering::SeqCst)
    }

    /// Stores `value` and wakes every sleeper on the word, in any process.
    pub fn store(&self, value: u64) {
        self.word().store(value, Ordering::SeqCst);
        futex::wake(self.low(), u32::MAX);
    }

    /// Sleeps at most `slice` while the word still holds `seen` (woken by [`SharedWord::store`]).
    pub fn sleep(&self, seen: u64, slice: Duration) {
        futex::wait(self.low(), seen as u32, Some(slice));
    }
}
