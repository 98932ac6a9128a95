//! Labels (`aclrtLabel`) and label lists: points of model-bound streams a
//! `aclrtSwitchLabelByIndex` jumps between.
//!
//! The vendor lets labels be set only on streams bound to a model run instance; this runtime
//! binds none (`aclrtSetLabel` answers 207000), so labels and lists are objects with their
//! checks and limits and nothing more.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;

/// Most labels a process holds at once (the vendor's limit).
pub const LABEL_MAX: usize = 65535;

/// A label.
pub struct Label;

/// A list of labels, by handle, in the caller's order.
pub struct LabelList {
    pub labels: Vec<u64>,
}

handle_kind!(pub static LABELS: Label => Label, crate::error::AclError);
handle_kind!(pub static LABEL_LISTS: LabelList => LabelList, crate::error::AclError);

/// Labels alive, counted against [`LABEL_MAX`].
static LIVE: AtomicUsize = AtomicUsize::new(0);

pub fn create() -> AclResult<u64> {
    if LIVE.fetch_add(1, Ordering::AcqRel) >= LABEL_MAX {
        LIVE.fetch_sub(1, Ordering::AcqRel);
        return Err(AclError::new(
            crate::error::rt_codes::ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("the process already holds {LABEL_MAX} labels, the most it may: destroy some"),
        ));
    }
    Ok(LABELS.insert(Label))
}

pub fn destroy(raw: u64) -> AclResult<()> {
    Label::release(raw, "label")?;
    LIVE.fetch_sub(1, Ordering::AcqRel);
    Ok(())
}

/// A list of the live labels `labels` (at least one).
pub fn create_list(labels: &[u64]) -> AclResult<u64> {
    if labels.is_empty() {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, "num must be at least 1"));
    }
    for (i, &l) in labels.iter().enumerate() {
        Label::resolve(l, &format!("labels[{i}]"))?;
    }
    Ok(LABEL_LISTS.insert(LabelList { labels: labels.to_vec() }))
}

pub fn destroy_list(raw: u64) -> AclResult<()> {
    LabelList::release(raw, "labelList").map(drop)
}
