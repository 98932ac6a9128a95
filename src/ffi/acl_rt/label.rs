//! `acl/acl_rt.h`: labels and label lists (`runtime/label.rs`).
//!
//! Labels are created, listed and destroyed for real; setting one on a stream and switching
//! between them answer 207000: the vendor accepts only streams bound to a model run instance
//! (`aclmdlRIBindStream`) there, and this runtime's in-order host queues cannot jump.

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::acl_codes::aclError;
use crate::ffi::acl_base::{aclrtLabel, aclrtLabelList, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::acl_rt::npu_only::npu_only;
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::runtime::label;

const MODEL_STREAMS: &str = "labels are set on, and switched between, streams bound to a model run instance \
     (aclmdlRIBindStream); this runtime's streams are in-order host queues that cannot jump";

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

/// Sets a label on a stream: 207000 (see the module's notes).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetLabel(label: aclrtLabel, stream: aclrtStream) -> aclError {
    let _ = (label, stream);
    npu_only("aclrtSetLabel", MODEL_STREAMS)
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

/// Jumps to the label of `labelList` an index in device memory selects: 207000 (see the
/// module's notes).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSwitchLabelByIndex(
    ptr: *mut c_void,
    maxValue: u32,
    labelList: aclrtLabelList,
    stream: aclrtStream,
) -> aclError {
    let _ = (ptr, maxValue, labelList, stream);
    npu_only("aclrtSwitchLabelByIndex", MODEL_STREAMS)
}
