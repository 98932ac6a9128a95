//! Sleeper counts for futex words in memory whose layout is the user's (`aclrtValueWait` on a
//! word of device or IPC memory), so a store wakes only when someone sleeps.
//!
//! A word the runtime lays out (a notify cell, an IPC event) keeps its sleeper count beside it.
//! A user's word has no room for one, and its sleepers may be in any process that maps the
//! same file. So the count lives in a table every process of this user maps: a 4 KiB file in
//! `/dev/shm` of 1024 counters, the word's counter chosen by hashing the file's identity
//! (device and inode) with the word's offset in it, which every process mapping the word sees
//! alike. Two words sharing a counter only cost a needless wake-up.
//!
//! The table is per user (mode 0600): another user's process cannot tamper with it, and a
//! waiter of another user is simply not counted, so a store does not wake it and it sees the
//! value at its next time slice (the waits poll every few milliseconds). Without the table (no
//! `/dev/shm`), every store wakes, as before.

use std::fs::OpenOptions;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU32;

use super::mapping::Mapping;
use super::memfd::MemFd;

const SLOTS: usize = 1024;
const TABLE_BYTES: usize = SLOTS * 4;

static TABLE: OnceLock<Option<Mapping>> = OnceLock::new();

fn table() -> Option<&'static Mapping> {
    TABLE.get_or_init(|| open_table().ok()).as_ref()
}

fn open_table() -> std::io::Result<Mapping> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(format!("/dev/shm/ascendless-wait-slots-{uid}"))?;
    let meta = file.metadata()?;
    // Another user's file under our name (planted before us): not ours to trust.
    if meta.uid() != uid || !meta.is_file() {
        return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
    }
    if meta.len() < TABLE_BYTES as u64 {
        // Growing only (two processes may race here; both ask for the same size).
        file.set_len(TABLE_BYTES as u64)?;
    }
    Mapping::shared_rw(&MemFd::from(OwnedFd::from(file)), TABLE_BYTES, 0)
}

/// The sleeper counter of the word at byte `offset` of `file`; `None` when the table is not
/// available (then every store must wake).
pub fn slot(file: &MemFd, offset: u64) -> Option<&'static AtomicU32> {
    let meta = std::fs::File::from(file.as_fd().try_clone_to_owned().ok()?).metadata().ok()?;
    let mut h = meta.dev() ^ meta.ino().rotate_left(21) ^ (offset / 8).rotate_left(42);
    // A 64-bit finaliser (splitmix64's), so nearby words spread over the table.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    table()?.atomic_u32((h as usize % SLOTS) * 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_word_finds_the_same_counter_through_any_descriptor() {
        let f = MemFd::create("wait-slots-test", 4096).unwrap();
        let dup = MemFd::from(f.as_fd().try_clone_to_owned().unwrap());
        let (Some(a), Some(b)) = (slot(&f, 64), slot(&dup, 64)) else {
            return; // no /dev/shm here: nothing to share
        };
        assert!(std::ptr::eq(a, b));
        let spread: std::collections::BTreeSet<usize> =
            (0..64u64).filter_map(|i| slot(&f, i * 8)).map(|s| s as *const AtomicU32 as usize).collect();
        assert!(spread.len() > 32, "neighbouring words share few counters: {}", spread.len());
    }
}
