//! Condition handles (`aclmdlRICondHandle`): a 64-bit word of device memory that a conditional
//! task reads when a replay reaches it, to choose a branch (if, switch) or to loop (while).
//!
//! The word is ordinary device memory: copies, value writes, host functions (through a mapped
//! pointer) of the graph or of other streams may change it between and during replays. With
//! `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT` it is set to its default at the start of each run
//! of the model that made it.

use std::sync::atomic::AtomicU64;

use crate::sys::word::SharedWord;

/// `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`.
pub const ASSIGN_DEFAULT: u32 = 1;

pub struct CondHandle {
    /// The device address of the word (`aclmdlRICondHandleGetCondPtr`).
    pub addr: usize,
    pub word: SharedWord,
    /// The default, set at each run when `assign_default`.
    pub default: u64,
    pub assign_default: bool,
    /// The model that made it (its handle), which alone may use it.
    pub model: u64,
    /// Its own handle.
    pub handle: AtomicU64,
}

impl CondHandle {
    /// The condition now.
    pub fn value(&self) -> u64 {
        self.word.load()
    }

    /// At the start of a run of its model.
    pub fn reset(&self) {
        if self.assign_default {
            self.word.store(self.default);
        }
    }
}

crate::handle_kind!(pub static CONDS: CondHandle => CondHandle, crate::error::AclError);
