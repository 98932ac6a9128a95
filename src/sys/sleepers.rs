//! Counts of the threads sleeping on shared words (see [`crate::sys::word`]), kept in a page
//! that every process using the words maps, so a store wakes sleepers only when there are some.
//!
//! A word of user memory has no room for a count of its own, and a futex wake on a shared
//! mapping is a system call that looks the page up: paid on every `aclrtValueWrite`, it was most
//! of a cross-process value ping-pong. So the counts live beside the memory instead: one page
//! of 1024 counters per exporting process. A file's page is that of the process that made it
//! ([`for_file`]); an export hands the page on with the file, and the importer records it
//! ([`MemFd::adopt_sleeper_page`]), so the importer counts its sleepers where the exporter's
//! stores look. A word's counter is chosen by
//! hashing the file's identity and the word's offset in it, the same in every process; two
//! words sharing a counter only cost a wake that was not needed.
//!
//! A page that could not be made or was not handed on is no failure: stores then always wake,
//! as they did before counts existed.

use std::io;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::mapping::Mapping;
use super::memfd::MemFd;

/// The page's size in bytes: 1024 counters.
pub const PAGE_BYTES: usize = 4096;
const COUNTERS: u64 = (PAGE_BYTES / 4) as u64;

/// A page of sleeper counts, mapped.
#[derive(Debug)]
pub struct SleeperPage {
    file: Arc<MemFd>,
    map: Mapping,
}

impl SleeperPage {
    /// A new page, all counts zero.
    pub fn create() -> io::Result<SleeperPage> {
        SleeperPage::open(Arc::new(MemFd::create("ascendless-sleepers", PAGE_BYTES)?))
    }

    /// The page another process handed on: exactly one page, sealed against shrinking (so
    /// the mapping can never fault).
    pub fn open(file: Arc<MemFd>) -> io::Result<SleeperPage> {
        if file.size()? != PAGE_BYTES as u64 || !file.cannot_shrink() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "not a sleeper page"));
        }
        let map = Mapping::shared_rw(&file, PAGE_BYTES, 0)?;
        Ok(SleeperPage { file, map })
    }

    /// The file, to hand on to a process that imports memory.
    pub fn file(&self) -> &MemFd {
        &self.file
    }

    /// The counter of the word at `offset` of the file whose identity is `file_id`.
    pub fn counter(&self, file_id: u64, offset: u64) -> &AtomicU32 {
        // Fibonacci hashing of the pair; a word's neighbours land on different counters.
        let h =
            (file_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (offset / 8)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let index = (h >> 32) % COUNTERS;
        self.map.atomic_u32(index as usize * 4).expect("an index below COUNTERS is inside the page")
    }
}

/// The page counting sleepers on `file`'s words: the one handed on with it, else this
/// process's own; `None` if there is none to use (then stores always wake).
pub fn for_file(file: &MemFd) -> Option<Arc<SleeperPage>> {
    match file.sleeper_page() {
        Some(page) => opened(page),
        None => own(),
    }
}

/// The mapping of a page handed on, shared by every word of every file that came with it (a
/// process hands the same page on with all its memory), and unmapped when none uses it.
fn opened(file: &Arc<MemFd>) -> Option<Arc<SleeperPage>> {
    static OPENED: Mutex<Vec<(u64, Weak<SleeperPage>)>> = Mutex::new(Vec::new());
    let id = file.id().ok()?;
    let mut opened = crate::sync::lock(&OPENED);
    opened.retain(|(_, page)| page.strong_count() > 0);
    if let Some(page) = opened.iter().find(|(i, _)| *i == id).and_then(|(_, page)| page.upgrade()) {
        return Some(page);
    }
    match SleeperPage::open(Arc::clone(file)) {
        Ok(page) => {
            let page = Arc::new(page);
            opened.push((id, Arc::downgrade(&page)));
            Some(page)
        }
        Err(e) => {
            log::debug!(target: crate::logging::TARGET, "a sleeper page handed on is unusable ({e}): value writes to its memory always wake");
            None
        }
    }
}

/// This process's page, for the files it makes (made on first use; `None` if it cannot be).
fn own() -> Option<Arc<SleeperPage>> {
    static OWN: OnceLock<Option<Arc<SleeperPage>>> = OnceLock::new();
    OWN.get_or_init(|| match SleeperPage::create() {
        Ok(page) => Some(Arc::new(page)),
        Err(e) => {
            log::debug!(target: crate::logging::TARGET, "no sleeper page: value writes always wake ({e})");
            None
        }
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn a_page_handed_on_shares_its_counters() {
        let page = SleeperPage::create().unwrap();
        let dup = page.file().as_fd().try_clone_to_owned().unwrap();
        let other = SleeperPage::open(Arc::new(MemFd::from(dup))).unwrap();
        page.counter(7, 64).fetch_add(1, Ordering::SeqCst);
        assert_eq!(other.counter(7, 64).load(Ordering::SeqCst), 1);
        // Words next to each other count apart.
        assert_eq!(other.counter(7, 72).load(Ordering::SeqCst), 0);
    }

    #[test]
    fn other_files_are_not_pages() {
        let wrong_size = Arc::new(MemFd::create("x", 2 * PAGE_BYTES).unwrap());
        assert!(SleeperPage::open(wrong_size).is_err());
    }
}
