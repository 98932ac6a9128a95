//! `acl/acl_rt.h` (the vendor's `acl_mdl.h` part): the dump configuration of models and
//! operators (`runtime/dump.rs`). Which dumps are configured is kept and answered back; no
//! NPU operator runs here to produce dump data.

use std::ffi::c_char;
use std::path::Path;

use crate::error::acl_codes::aclError;
use crate::ffi::{acl_call, ptr};
use crate::runtime::dump;

/// Starts configuring dumps: after `aclInit` (100001 before), not when `aclInit`'s file holds a
/// data or overflow dump (100044), once (100002).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlInitDump() -> aclError {
    acl_call("aclmdlInitDump", dump::init_dump)
}

/// Sets the dump configuration from the JSON file `dumpCfgPath` (its `dump` section, checked:
/// 100009 for a bad one); a later call replaces it. Needs `aclmdlInitDump` (100045).
///
/// # Safety
/// `dumpCfgPath` is NULL or a NUL-terminated string.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlSetDump(dumpCfgPath: *const c_char) -> aclError {
    acl_call("aclmdlSetDump", || {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { ptr::required_str(dumpCfgPath, "dumpCfgPath") }?;
        dump::set_dump(Path::new(path))
    })
}

/// Ends the configuration of `aclmdlInitDump` / `aclmdlSetDump` (100045 without one).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlFinalizeDump() -> aclError {
    acl_call("aclmdlFinalizeDump", dump::finalize_dump)
}
