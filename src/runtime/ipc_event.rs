//! The shared half of an IPC event (`ACL_EVENT_IPC`): a notify cell read as two sequence
//! numbers, so every process that maps it records and waits on the same event.
//!
//! Layout of the 64-byte cell (a cell of its own file, [`cell::alone`], so an importer is
//! handed this event and nothing else):
//! - word 0: the highest record sequence that has run (the futex word waiters sleep on);
//! - word 4: how many threads sleep on word 0 (a record wakes only when someone sleeps);
//! - word 8: the sequence of the latest record queued, in any process.
//!
//! Sequences are 32-bit and compared with wrap-around, so an event may be recorded forever.
//! A record queued in any process takes the next sequence; a wait takes the latest queued
//! sequence as its target and ends when word 0 reaches it, exactly as a local event does.
//!
//! Lifelines are the IPC layer's: an importer polls its [`ImportLink`] and ends its waits
//! with an error once the exporter has died; an exporter ends waits without limit once an
//! importer died and no importer is left ([`Importers::orphaned`]), as IPC notifies do.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::notify::cell::{Cell, WaitEnd};
use super::stream::CANCEL_POLL;
use crate::ipc::{ImportLink, Importers, Key};
use crate::sys::futex;

const DONE: usize = 0;
const SLEEPERS: usize = 4;
const RECORDED: usize = 8;

/// Whether sequence `a` comes after `b` (wrap-around order).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The cross-process state of one IPC event, in the creator and in every process that opened it.
pub struct IpcEvent {
    pub cell: Cell,
    /// Creator: the export (key and its importers), once `aclrtIpcGetEventHandle` made it.
    pub export: Mutex<Option<(Key, Arc<Importers>)>>,
    /// Opener: the connection to the creator that stands for the import.
    pub link: Option<ImportLink>,
}

impl IpcEvent {
    pub fn new(cell: Cell, link: Option<ImportLink>) -> IpcEvent {
        IpcEvent { cell, export: Mutex::new(None), link }
    }

    pub fn imported(&self) -> bool {
        self.link.is_some()
    }

    /// Takes the sequence of a record being queued.
    pub fn next_record(&self) -> u32 {
        self.cell.word(RECORDED).fetch_add(1, Ordering::SeqCst).wrapping_add(1)
    }

    /// The sequence of the latest record queued (0: never recorded).
    pub fn recorded(&self) -> u32 {
        self.cell.word(RECORDED).load(Ordering::SeqCst)
    }

    /// Record `seq` has run: the event is complete up to it; sleepers in every process wake.
    pub fn complete(&self, seq: u32) {
        let done = self.cell.word(DONE);
        // Records usually complete in the order they took their sequences: one read-modify-write
        // then, with no read of the word before it. A read first would fetch the cache line
        // from the waiter's core and the write then take it over: two transfers on the path of
        // every wake-up instead of one.
        let mut seen = seq.wrapping_sub(1);
        while let Err(now) = done.compare_exchange(seen, seq, Ordering::SeqCst, Ordering::SeqCst) {
            if !after(seq, now) {
                break;
            }
            seen = now;
        }
        if self.cell.word(SLEEPERS).load(Ordering::SeqCst) > 0 {
            futex::wake(done, u32::MAX);
        }
    }

    /// Whether the record with sequence `target` (and every earlier one) has run.
    pub fn is_done(&self, target: u32) -> bool {
        !after(target, self.cell.word(DONE).load(Ordering::SeqCst))
    }

    /// Why nobody may ever complete a pending record, if so: the creator died (opener side),
    /// or, for a wait without limit, an opener died and none is left (creator side).
    pub fn peer_lost(&self, unlimited: bool) -> Option<&'static str> {
        if let Some(link) = &self.link {
            return link
                .exporter_gone()
                .then_some("the process that created this IPC event exited; its records will never come");
        }
        let export = crate::sync::lock(&self.export);
        let orphaned = export.as_ref().is_some_and(|(_, i)| i.orphaned());
        (unlimited && orphaned)
            .then_some("a process that opened this IPC event died and no process is left to record it")
    }

    /// Blocks until record `target` has run, `deadline` passes, or `stop()` turns true (checked
    /// at least every [`CANCEL_POLL`]).
    pub fn wait(
        &self,
        target: u32,
        deadline: Option<Instant>,
        stop: impl Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        // A short spin (`sync::SPIN`), then the kernel (see `Cell::wait_take`).
        if crate::sync::spin_until(futex::spin_for(crate::sync::SPIN), || self.is_done(target)) {
            return Ok(());
        }
        let done = self.cell.word(DONE);
        let sleepers = self.cell.word(SLEEPERS);
        sleepers.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            let seen = done.load(Ordering::SeqCst);
            if !after(target, seen) {
                break Ok(());
            }
            if stop() {
                break Err(WaitEnd::Stopped);
            }
            let mut slice = CANCEL_POLL;
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    break Err(WaitEnd::TimedOut);
                }
                slice = slice.min(d - now);
            }
            futex::wait(done, seen, Some(slice));
        };
        sleepers.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

/// First bytes of an `aclrtIpcEventHandle` made here.
const HANDLE_MAGIC: &[u8; 4] = b"AsEv";
/// Size of `aclrtIpcEventHandle`.
pub const HANDLE_SIZE: usize = 64;

/// The 64 bytes of the handle for `key`: the marker and the key text, NUL-terminated. Plain
/// data: valid after any copy, in any process.
pub fn handle_bytes(key: &Key) -> [u8; HANDLE_SIZE] {
    let mut b = [0u8; HANDLE_SIZE];
    b[..4].copy_from_slice(HANDLE_MAGIC);
    let text = key.to_string();
    let n = text.len().min(HANDLE_SIZE - 5);
    b[4..4 + n].copy_from_slice(&text.as_bytes()[..n]);
    b
}

/// The key text a handle carries; `None` for bytes this library did not write.
pub fn handle_key(b: &[u8; HANDLE_SIZE]) -> Option<String> {
    if &b[..4] != HANDLE_MAGIC {
        return None;
    }
    let text = &b[4..];
    let end = text.iter().position(|&c| c == 0)?;
    std::str::from_utf8(&text[..end]).ok().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::notify::cell;
    use crate::sys::memfd::MemFd;
    use std::time::Duration;

    #[test]
    fn sequences_wrap_and_a_record_in_another_mapping_releases_a_wait() {
        assert!(after(1, u32::MAX) && !after(u32::MAX, 1));
        let c = cell::alone().unwrap();
        let dup = c.page_fd().as_fd().try_clone_to_owned().unwrap();
        let mine = IpcEvent::new(c, None);
        let other = IpcEvent::new(Cell::import(MemFd::from(dup), 0).unwrap(), None);
        assert!(mine.is_done(mine.recorded()), "never recorded: complete");
        let seq = other.next_record();
        assert_eq!(mine.recorded(), seq);
        assert!(!mine.is_done(seq));
        let waiter = std::thread::spawn(move || {
            let r = mine.wait(seq, Some(Instant::now() + Duration::from_secs(5)), || false);
            (r, mine)
        });
        std::thread::sleep(Duration::from_millis(30));
        other.complete(seq);
        let (r, mine) = waiter.join().unwrap();
        assert_eq!(r, Ok(()));
        let next = mine.next_record();
        assert_eq!(
            mine.wait(next, Some(Instant::now() + Duration::from_millis(30)), || false),
            Err(WaitEnd::TimedOut)
        );
        assert_eq!(mine.wait(next, None, || true), Err(WaitEnd::Stopped));
    }

    #[test]
    fn handles_carry_the_key_and_foreign_bytes_are_refused() {
        let key = Key::new(0x4d2, 7, 0xfeed);
        let b = handle_bytes(&key);
        assert_eq!(handle_key(&b).unwrap(), key.to_string());
        let mut junk = b;
        junk[0] = b'x';
        assert!(handle_key(&junk).is_none());
    }
}
