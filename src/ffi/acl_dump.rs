//! `acl/acl_dump.h` (the vendor's libascend_dump.so): dump callbacks, operator-args dumps,
//! dump paths and the user's exception data (`runtime/dump.rs`). The header's structures and
//! macros are written by hand (tests/generated_headers.rs: `acldumpChunk` ends in a flexible
//! array); their Rust layouts are here.

#![allow(non_snake_case, non_camel_case_types)]

use std::collections::HashMap;
use std::ffi::{CString, c_char};
use std::sync::Mutex;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::{AclError, AclResult};
use crate::ffi::{acl_call, boundary, ptr};
use crate::runtime::{context, dump};
use crate::sync;

/// An `acldumpType` value as received.
pub type DumpTypeArg = u32;

/// One piece of dump data given to the callback (opaque here: no dump data is produced).
/// cbindgen:ignore
pub struct acldumpChunk {
    _opaque: u8,
}

/// cbindgen:ignore
#[repr(C)]
pub struct acldumpTensorInfo {
    pub r#type: u32,
    pub tensorSize: usize,
    pub format: i32,
    pub dataType: i32,
    pub tensorAddr: *mut i64,
    pub addrType: u32,
    pub placement: u32,
    pub argsOffset: u32,
    pub shapeNum: u32,
    pub originShapeNum: u32,
    pub shape: [u64; 25],
    pub originShape: [u64; 25],
}

/// `ACL_DUMP_ADDR_RAW` and `ACL_DUMP_PLACEMENT_DEVICE`, the only kinds saved.
const ADDR_RAW: u32 = 2;
const PLACEMENT_DEVICE: u32 = 0;
/// Most tensors one call saves, and most bytes in all.
const MAX_TENSORS: usize = 4096;
const MAX_BYTES: usize = 1 << 30;

/// Registers the callback that gets dump data instead of files (`flag` 0 only). It is kept
/// until `acldumpUnregCallback`; no operator here produces dump data, so it is not called.
#[unsafe(no_mangle)]
pub extern "C" fn acldumpRegCallback(
    messageCallback: Option<unsafe extern "C" fn(*const acldumpChunk, i32) -> i32>,
    flag: i32,
) -> aclError {
    acl_call("acldumpRegCallback", || {
        let f = messageCallback.ok_or_else(|| ptr::null_argument("messageCallback"))?;
        dump::register_callback(f as usize, flag)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn acldumpUnregCallback() {
    boundary("acldumpUnregCallback", (), || {
        if !dump::unregister_callback() {
            log::info!(target: crate::logging::TARGET, "acldumpUnregCallback: no callback was registered");
        }
    })
}

/// Starts the operator-args dump into `path` (made if missing): `dumpType` must be
/// `ACL_OP_DUMP_OP_AICORE_ARGS`. The files would describe aclnn operators, none of which run
/// here; `acldumpGetPath(DATA_DUMP)` answers `path` until the stop.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopStartDumpArgs(dumpType: u32, path: *const c_char) -> aclError {
    acl_call("aclopStartDumpArgs", || {
        // SAFETY: forwarded from this function's contract.
        let path = unsafe { ptr::required_str(path, "path") }?;
        dump::start_args(dumpType, path).map(drop)
    })
}

/// Stops the operator-args dump (100045 when not started).
#[unsafe(no_mangle)]
pub extern "C" fn aclopStopDumpArgs(dumpType: u32) -> aclError {
    acl_call("aclopStopDumpArgs", || dump::stop_args(dumpType))
}

/// The text handed out per dump type: valid until that type's path changes.
static PATHS: Mutex<Option<HashMap<u32, CString>>> = Mutex::new(None);

/// Where dumps of `dumpType` go: the operator-args path, or the configured dump path of a data
/// (`DATA_DUMP`) or overflow dump, the exception dump's root for `AIC_ERR_*`; NULL when that
/// dump is not configured.
#[unsafe(no_mangle)]
pub extern "C" fn acldumpGetPath(dumpType: DumpTypeArg) -> *const c_char {
    boundary("acldumpGetPath", std::ptr::null(), || {
        let Some(path) = dump::path_of(dumpType) else {
            crate::error::record_recent(&format!("acldumpGetPath: no dump of type {dumpType} is configured"));
            return std::ptr::null();
        };
        let Ok(text) = CString::new(path) else { return std::ptr::null() };
        let mut paths = sync::lock(&PATHS);
        let paths = paths.get_or_insert_with(HashMap::new);
        let kept = paths.entry(dumpType).or_insert_with(|| text.clone());
        if *kept != text {
            *kept = text;
        }
        kept.as_ptr()
    })
}

/// Saves the user's tensors (read from device memory) under the exception dump's root of the
/// current device, as `<fileName>.custom.<yyyymmddHHMMSSmmm>`: a JSON line describing them,
/// then their bytes. Needs the exception dump (`dump_scene`) enabled (100045).
///
/// # Safety
/// `fileName` and `userTag` are NULL or NUL-terminated strings; `tensors` is NULL or points to
/// `tensorCount` readable `acldumpTensorInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acldumpSaveExceptionInfo(
    fileName: *const c_char,
    userTag: *const c_char,
    tensors: *const acldumpTensorInfo,
    tensorCount: usize,
) -> aclError {
    acl_call("acldumpSaveExceptionInfo", || {
        // SAFETY: forwarded from this function's contract.
        let (name, tag) =
            unsafe { (ptr::required_str(fileName, "fileName")?, ptr::optional_str(userTag, "userTag")?) };
        if tensors.is_null() {
            return Err(ptr::null_argument("tensors"));
        }
        if tensorCount == 0 || tensorCount > MAX_TENSORS {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("tensorCount {tensorCount}: 1 to {MAX_TENSORS}"),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let infos = unsafe { ptr::slice(tensors, tensorCount, "tensors") }?;
        dump::exception_config()?;
        let device = context::current()?.device;
        dump::exception_path(device)?;
        let mut saved = Vec::with_capacity(infos.len());
        let mut total = 0usize;
        for (i, t) in infos.iter().enumerate() {
            saved.push(tensor(i, t, &mut total)?);
        }
        dump::save_exception_info(device, name, tag, &saved).map(drop)
    })
}

fn tensor(i: usize, t: &acldumpTensorInfo, total: &mut usize) -> AclResult<dump::SavedTensor> {
    let bad = |why: String| AclError::new(ACL_ERROR_INVALID_PARAM, format!("tensors[{i}]: {why}"));
    if t.shapeNum > dump::MAX_SHAPE_NUM || t.originShapeNum > dump::MAX_SHAPE_NUM {
        return Err(bad(format!(
            "shapeNum {} / originShapeNum {}: at most 25",
            t.shapeNum, t.originShapeNum
        )));
    }
    if t.tensorAddr.is_null() || t.tensorSize == 0 {
        return Err(bad("tensorAddr must not be NULL and tensorSize not 0".into()));
    }
    if t.addrType != ADDR_RAW || t.placement != PLACEMENT_DEVICE {
        return Err(bad("only ACL_DUMP_ADDR_RAW addresses of ACL_DUMP_PLACEMENT_DEVICE are saved".into()));
    }
    *total = total.saturating_add(t.tensorSize);
    if *total > MAX_BYTES {
        return Err(bad("the tensors hold more than 1 GiB".into()));
    }
    Ok(dump::SavedTensor {
        kind: t.r#type,
        format: t.format,
        data_type: t.dataType,
        args_offset: t.argsOffset,
        shape: t.shape[..t.shapeNum as usize].to_vec(),
        origin_shape: t.originShape[..t.originShapeNum as usize].to_vec(),
        data: dump::read_device(t.tensorAddr.addr(), t.tensorSize)?,
    })
}

/// The exception dump's root for the current device, `<dumpPath>/extra-info/data-dump/<id>/`,
/// into `path` (`maxLen` > 1 bytes, room for the NUL). Needs the exception dump enabled
/// (100045).
///
/// # Safety
/// `path` is NULL or writable for `maxLen` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acldumpGetExceptionInfoPath(path: *mut c_char, maxLen: usize) -> aclError {
    acl_call("acldumpGetExceptionInfoPath", || {
        if path.is_null() {
            return Err(ptr::null_argument("path"));
        }
        if maxLen <= 1 {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("maxLen {maxLen} must be more than 1"),
            ));
        }
        dump::exception_config()?;
        let device = context::current()?.device;
        let text = dump::exception_path(device)?;
        if text.len() + 1 > maxLen {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("maxLen {maxLen} cannot hold the {}-byte path", text.len() + 1),
            ));
        }
        // SAFETY: `path` is non-NULL and writable for `maxLen` bytes by the contract, and
        // `text.len() + 1 <= maxLen`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), path.cast::<u8>(), text.len());
            *path.add(text.len()) = 0;
        }
        Ok(())
    })
}
