//! The shared state of a notify: a counter in shared memory, woken through a futex.
//!
//! Record adds one and wakes one sleeper; wait-and-reset takes one (blocking while the counter
//! is zero). Because the count lives in a memfd page, a process that imports the notify maps
//! the same page and its records reach the owner's waits directly, with no broker involved.
//!
//! Cells are 64 bytes (a cache line each, so two busy notifies never share a line) in pages of
//! 64; a page is one memfd, so 8192 notifies cost 128 descriptors, not 8192. Those shared pages
//! never leave the process: a notify that is exported moves to a cell [`alone`] in a file of its
//! own, and that file is all an importer gets, so what it maps reaches the notify it was
//! granted and nothing else (docs/security.md).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::sync;
use crate::sys::futex::{self, WaitResult};
use crate::sys::mapping::Mapping;
use crate::sys::memfd::MemFd;

pub const CELL_SIZE: usize = 64;
pub const CELLS_PER_PAGE: usize = 64;
const PAGE_BYTES: usize = CELL_SIZE * CELLS_PER_PAGE;
const COUNT: usize = 0;
const SLEEPERS: usize = 4;

/// One notify's cell: a page mapping and the cell's offset in it.
#[derive(Clone)]
pub struct Cell {
    page: Arc<Page>,
    offset: usize,
}

pub struct Page {
    pub fd: Arc<MemFd>,
    map: Mapping,
}

/// Why a wait ended without taking a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    TimedOut,
    /// `stop` said so (stream destroyed, peer gone).
    Stopped,
}

impl Cell {
    /// The 32-bit word at byte `at` of the cell (0, 4, ..., 60). Notifies use the first two;
    /// an IPC event reads the same cell with a layout of its own (`runtime::ipc_event`).
    pub fn word(&self, at: usize) -> &AtomicU32 {
        self.page.map.atomic_u32(self.offset + at).expect("cells lie inside their page")
    }

    /// Maps `len` bytes of an imported page file and addresses the cell at `offset`.
    pub fn import(fd: MemFd, offset: usize) -> std::io::Result<Cell> {
        if offset % CELL_SIZE != 0 || offset + CELL_SIZE > PAGE_BYTES {
            return Err(std::io::Error::other(format!(
                "notify cell offset {offset} is not a cell of a page"
            )));
        }
        let fd = Arc::new(fd);
        let map = Mapping::shared_rw(&fd, PAGE_BYTES, crate::sys::page_size())?;
        Ok(Cell { page: Arc::new(Page { fd, map }), offset })
    }

    pub fn page_fd(&self) -> &Arc<MemFd> {
        &self.page.fd
    }

    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Adds one record and wakes one sleeper, if any.
    pub fn record(&self) {
        self.word(COUNT).fetch_add(1, Ordering::SeqCst);
        if self.word(SLEEPERS).load(Ordering::SeqCst) > 0 {
            futex::wake(self.word(COUNT), 1);
        }
    }

    /// Adds `n` records at once (records moved here from another cell) and wakes the sleepers.
    pub fn add(&self, n: u32) {
        if n > 0 {
            self.word(COUNT).fetch_add(n, Ordering::SeqCst);
            futex::wake(self.word(COUNT), u32::MAX);
        }
    }

    /// Takes every pending record, for [`Cell::add`] to put elsewhere.
    pub fn drain(&self) -> u32 {
        self.word(COUNT).swap(0, Ordering::SeqCst)
    }

    /// Wakes every sleeper without adding a record: each looks at its `stop` condition again.
    pub fn wake_all(&self) {
        futex::wake(self.word(COUNT), u32::MAX);
    }

    /// Takes one record if there is one.
    pub fn try_take(&self) -> bool {
        self.word(COUNT).fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1)).is_ok()
    }

    /// Forgets every pending record.
    pub fn reset(&self) {
        self.word(COUNT).store(0, Ordering::SeqCst);
    }

    pub fn pending(&self) -> u32 {
        self.word(COUNT).load(Ordering::SeqCst)
    }

    /// Blocks until a record can be taken (and takes it), `timeout` passes (`None`: no limit),
    /// or `stop()` turns true (checked at least every `poll`).
    pub fn wait_take(
        &self,
        timeout: Option<Duration>,
        poll: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        // A short spin (`sync::SPIN`), then the kernel: a record already on its way is taken
        // without two system calls, and a wait nobody ends soon costs no CPU.
        if sync::spin_until(futex::spin_for(sync::SPIN), || self.pending() > 0 && self.try_take()) {
            return Ok(());
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let sleepers = self.word(SLEEPERS);
        sleepers.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if self.try_take() {
                break Ok(());
            }
            if stop() {
                break Err(WaitEnd::Stopped);
            }
            let mut slice = poll;
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    break Err(WaitEnd::TimedOut);
                }
                slice = slice.min(d - now);
            }
            if futex::wait(self.word(COUNT), 0, Some(slice)) == WaitResult::TimedOut && stop() {
                break Err(WaitEnd::Stopped);
            }
        };
        sleepers.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

impl Cell {
    /// Replaces the count with `f(count)` (a counting notify's record, see [`super::counting`])
    /// and wakes every sleeper, each of which looks at the new count.
    pub fn update(&self, f: impl Fn(u32) -> u32) {
        let count = self.word(COUNT);
        let _ = count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| Some(f(c)));
        if self.word(SLEEPERS).load(Ordering::SeqCst) > 0 {
            futex::wake(count, u32::MAX);
        }
    }

    /// Blocks until the count satisfies `ready` (then, with `clear`, sets it to 0 in the same
    /// step), `timeout` passes (`None`: no limit), or `stop()` turns true (checked at least
    /// every `poll`). Returns the count seen.
    pub fn wait_until(
        &self,
        ready: impl Fn(u32) -> bool,
        clear: bool,
        timeout: Option<Duration>,
        poll: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<u32, WaitEnd> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let count = self.word(COUNT);
        let sleepers = self.word(SLEEPERS);
        sleepers.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            let seen = count.load(Ordering::SeqCst);
            if ready(seen) {
                if !clear || count.compare_exchange(seen, 0, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    break Ok(seen);
                }
                continue;
            }
            if stop() {
                break Err(WaitEnd::Stopped);
            }
            let mut slice = poll;
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    break Err(WaitEnd::TimedOut);
                }
                slice = slice.min(d - now);
            }
            futex::wait(count, seen, Some(slice));
        };
        sleepers.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

/// The process's pages of notify cells.
struct Slab {
    pages: Vec<Arc<Page>>,
    /// Free cells: (page index, offset).
    free: Vec<(usize, usize)>,
}

static SLAB: Mutex<Slab> = Mutex::new(Slab { pages: Vec::new(), free: Vec::new() });

/// A fresh cell (zero count) for a new notify.
pub fn allocate() -> std::io::Result<Cell> {
    let mut slab = sync::lock(&SLAB);
    if slab.free.is_empty() {
        let fd = Arc::new(MemFd::create("ascendless-notify", PAGE_BYTES)?);
        let map = Mapping::shared_rw(&fd, PAGE_BYTES, crate::sys::page_size())?;
        let index = slab.pages.len();
        slab.pages.push(Arc::new(Page { fd, map }));
        slab.free.extend((0..CELLS_PER_PAGE).rev().map(|i| (index, i * CELL_SIZE)));
    }
    let (index, offset) = slab.free.pop().expect("a page was just added");
    let cell = Cell { page: Arc::clone(&slab.pages[index]), offset };
    cell.reset();
    Ok(cell)
}

/// A fresh cell (zero count) in a memory file of its own, for a notify being exported: the
/// file holds this one cell, so handing it to another process hands over nothing else.
pub fn alone() -> std::io::Result<Cell> {
    let fd = Arc::new(MemFd::create("ascendless-notify-export", PAGE_BYTES)?);
    let map = Mapping::shared_rw(&fd, PAGE_BYTES, crate::sys::page_size())?;
    Ok(Cell { page: Arc::new(Page { fd, map }), offset: 0 })
}

/// Returns a cell of the shared pages for reuse (one of [`alone`] is simply dropped).
pub fn release(cell: Cell) {
    let mut slab = sync::lock(&SLAB);
    if let Some(index) = slab.pages.iter().position(|p| Arc::ptr_eq(p, &cell.page)) {
        slab.free.push((index, cell.offset));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_counted_and_taken_one_by_one() {
        let c = allocate().unwrap();
        assert!(!c.try_take());
        c.record();
        c.record();
        assert_eq!(c.pending(), 2);
        assert!(c.try_take());
        assert!(c.try_take());
        assert!(!c.try_take());
        c.record();
        c.reset();
        assert!(!c.try_take());
        release(c);
    }

    #[test]
    fn a_wait_is_released_by_a_record_from_another_mapping() {
        let c = allocate().unwrap();
        let dup = c.page_fd().as_fd().try_clone_to_owned().unwrap();
        let other = Cell::import(MemFd::from(dup), c.offset()).unwrap();
        let waiter = std::thread::spawn(move || {
            other.wait_take(Some(Duration::from_secs(5)), Duration::from_millis(20), || false)
        });
        std::thread::sleep(Duration::from_millis(30));
        c.record();
        assert_eq!(waiter.join().unwrap(), Ok(()));
        assert_eq!(c.pending(), 0);
    }

    #[test]
    fn a_wait_times_out_or_stops() {
        let c = allocate().unwrap();
        let t = Instant::now();
        assert_eq!(
            c.wait_take(Some(Duration::from_millis(30)), Duration::from_millis(10), || false),
            Err(WaitEnd::TimedOut)
        );
        assert!(t.elapsed() >= Duration::from_millis(25));
        assert_eq!(c.wait_take(None, Duration::from_millis(5), || true), Err(WaitEnd::Stopped));
    }
}
