//! A 64-bit word of memory that may be shared between processes (device memory, IPC-imported
//! memory), read, written and slept on by stream tasks (`aclrtValueWait` / `aclrtValueWrite`).
//!
//! Sleeping uses the shared futex on the word's low 32 bits: a store through [`SharedWord::store`]
//! wakes the sleepers of every process mapping the page; a store by other means (a copy) is
//! seen at the sleeper's next time slice. A word with a counter ([`SharedWord::counted`], in
//! the page of [`crate::sys::sleepers`] that every process using the word shares) is woken only
//! when the counter says someone sleeps: the wake is a system call, the count an atomic read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use super::futex;
use super::sleepers::SleeperPage;
use super::span::RawSpan;

/// Where the low half of a 64-bit word lies.
const LOW_HALF: usize = if cfg!(target_endian = "little") { 0 } else { 4 };

/// An 8-byte aligned, writable word; the span keeps its mapping alive.
pub struct SharedWord {
    span: RawSpan,
    /// Where sleepers on the word are counted: the page and the word's place (file identity,
    /// offset); `None`: stores always wake.
    sleepers: Option<(Arc<SleeperPage>, u64, u64)>,
}

impl SharedWord {
    /// The word a span of exactly 8 writable, 8-aligned bytes holds; `None` otherwise.
    pub fn new(span: RawSpan) -> Option<SharedWord> {
        (span.len() == 8 && span.addr() % 8 == 0 && span.is_writable())
            .then_some(SharedWord { span, sleepers: None })
    }

    /// As [`SharedWord::new`], counting sleepers in `page` under the word's place: the
    /// identity of the file holding it and its offset there. Every process using the word
    /// must count in the same page under the same place.
    pub fn counted(span: RawSpan, page: Arc<SleeperPage>, file_id: u64, offset: u64) -> Option<SharedWord> {
        let mut word = SharedWord::new(span)?;
        word.sleepers = Some((page, file_id, offset));
        Some(word)
    }

    fn counter(&self) -> Option<&AtomicU32> {
        self.sleepers.as_ref().map(|(page, id, offset)| page.counter(*id, *offset))
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
        // A sleeper counts itself before it looks at the word a last time, and this reads the
        // count after the store (both sequentially consistent): either it sees the new value
        // and does not sleep, or this sees it counted and wakes it.
        if self.counter().is_none_or(|c| c.load(Ordering::SeqCst) > 0) {
            futex::wake(self.low(), u32::MAX);
        }
    }

    /// Sleeps at most `slice` while the word still holds `seen` (woken by [`SharedWord::store`]).
    pub fn sleep(&self, seen: u64, slice: Duration) {
        let counter = self.counter();
        if let Some(c) = counter {
            c.fetch_add(1, Ordering::SeqCst);
        }
        if self.load() == seen {
            futex::wait(self.low(), seen as u32, Some(slice));
        }
        if let Some(c) = counter {
            c.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
