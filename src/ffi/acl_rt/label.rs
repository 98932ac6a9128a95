//! `acl/acl_rt.h`: labels and label lists (`runtime/label.rs`).
//!
//! Labels are set on, and switched between, streams that record into a model run instance
//! (bound with `aclmdlRIBindStream`, as the vendor requires, or captured); a run of the model
//! jumps as the switch task's index says. On any other stream both answer 207000: this
//! runtime's streams are in-order host queues that cannot jump.

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::acl_codes::aclError;
use crate::ffi::acl_base::{aclrtLabel, aclrtLabelList, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::runtime::{context, label};

/// Creates a label (at most 65535 live in a process: 207005 beyond).
///
/// # Safety
/// `label` is NULL or valid for a write of an `aclrtLabel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateLabel(label: *mut aclrtLabel) -> aclError {
    acl_call("aclrtCreateLabel", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(label, "label") }?;
        out.write(to_c(label::create()?));
        Ok(())
    })
}

/// Sets a label at the end of the tasks a stream bound to a model has recorded (once per
/// model; 207000 on a stream that is not bound or captured).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetLabel(label: aclrtLabel, stream: aclrtStream) -> aclError {
    acl_call("aclrtSetLabel", || label::set(raw(label), &*context::stream(raw(stream))?))
}

/// Destroys a label.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyLabel(label: aclrtLabel) -> aclError {
    acl_call("aclrtDestroyLabel", || label::destroy(raw(label)))
}

/// Makes a list of `num` live labels (at least one).
///
/// # Safety
/// `labels` points to `num` labels; `labelList` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateLabelList(
    labels: *mut aclrtLabel,
    num: usize,
    labelList: *mut aclrtLabelList,
) -> aclError {
    acl_call("aclrtCreateLabelList", || {
        // SAFETY: forwarded from this function's contract.
        let (out, given) =
            unsafe { (Out::new(labelList, "labelList")?, ptr::slice(labels.cast_const(), num, "labels")?) };
        let raws: Vec<u64> = given.iter().map(|&l| raw(l)).collect();
        out.write(to_c(label::create_list(&raws)?));
        Ok(())
    })
}

/// Destroys a label list (its labels stay).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyLabelList(labelList: aclrtLabelList) -> aclError {
    acl_call("aclrtDestroyLabelList", || label::destroy_list(raw(labelList)))
}

/// Records on a stream bound to a model a task that jumps to the label of `labelList` the
/// `uint32_t` at device address `ptr` selects when a run reaches it (the last of the first
/// `maxValue` labels for a larger index); 207000 on a stream that is not bound or captured.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSwitchLabelByIndex(
    ptr: *mut c_void,
    maxValue: u32,
    labelList: aclrtLabelList,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtSwitchLabelByIndex", || {
        label::switch_by_index(ptr as usize, maxValue, raw(labelList), &*context::stream(raw(stream))?)
    })
}
