//! Who holds an export now: the broker's count of live imports of one export, shared with the
//! exported object so that it can ask, without a round trip to the broker thread, whether any
//! process that could still signal it is alive.
//!
//! Nothing about a death is sticky. An importer that dies lowers the count like one that lets go,
//! and only marks the export *orphaned* while no importer is left: the next import (a restarted
//! worker) clears the mark. This is what lets an IPC notify's owner end a wait without limit
//! when nobody is left to record it, while a wait with a time-out, or a wait while another
//! importer lives, is left alone.

use std::sync::atomic::{AtomicU64, Ordering};

/// The low half counts live imports; this bit says an importer died since the last import.
const DIED: u64 = 1 << 63;
const LIVE: u64 = u32::MAX as u64;

/// The importers of one export. One word, so that the count and the mark always change together
/// and a reader never sees one without the other.
#[derive(Debug, Default)]
pub struct Importers {
    state: AtomicU64,
}

impl Importers {
    /// Imports of this export that are live now (released or dead ones not counted).
    pub fn live(&self) -> usize {
        (self.state.load(Ordering::Acquire) & LIVE) as usize
    }

    /// An importer died without releasing its import, and no import has been made since while
    /// none is left: nothing but this process itself can reach the export any more.
    pub fn orphaned(&self) -> bool {
        self.state.load(Ordering::Acquire) == DIED
    }

    /// A new import was granted: counted, and any earlier death forgotten. (The broker's to
    /// call; crate-visible so that the runtime's tests can play the broker.)
    pub(crate) fn joined(&self) {
        self.update(|s| ((s & LIVE) + 1).min(LIVE));
    }

    /// An import ended: released normally, or (`died`) by the death of its process.
    pub(crate) fn left(&self, died: bool) {
        self.update(|s| (s & LIVE).saturating_sub(1) | if died { DIED } else { s & DIED });
    }

    fn update(&self, f: impl Fn(u64) -> u64) {
        let _ = self.state.fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| Some(f(s)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_death_orphans_only_while_no_importer_is_left_and_a_new_import_rearms() {
        let i = Importers::default();
        assert!(!i.orphaned(), "never imported: nothing died");
        i.joined();
        i.joined();
        i.left(true);
        assert_eq!(i.live(), 1);
        assert!(!i.orphaned(), "another importer lives");
        i.left(false);
        assert!(i.orphaned(), "the death is remembered while nobody is left");
        i.joined();
        assert!(!i.orphaned(), "a restarted importer re-arms the export");
        i.left(false);
        assert!(!i.orphaned(), "a release after the re-arm is not a death");
        i.joined();
        i.left(true);
        assert!(i.orphaned());
        i.left(true);
        assert_eq!(i.live(), 0, "never below zero");
    }
}
