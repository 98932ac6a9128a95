//! `acl/acl_rt.h`: exporting and importing notifies and device memory between processes.

use std::ffi::{c_char, c_void};

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl::ACL_IPC_HANDLE_SIZE;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::{aclrtNotify, aclrtServerPid};
use crate::ffi::handles::{resolve, to_c};
use crate::ffi::ptr::{Out, null_argument, required_str, slice};
use crate::runtime::notify::Notify;
use crate::runtime::share;

/// Copies `key` and its NUL into the caller's buffer of `len` bytes (at least 65).
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes of writes.
unsafe fn write_key(buf: *mut c_char, len: usize, key: &str) -> AclResult<()> {
    if buf.is_null() {
        return Err(null_argument("key"));
    }
    if len < ACL_IPC_HANDLE_SIZE || key.len() >= len {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("the key buffer holds {len} bytes; it must hold at least {ACL_IPC_HANDLE_SIZE}"),
        ));
    }
    let mut bytes = key.as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: `buf` is non-NULL and valid for `len` >= bytes.len() writes by the caller's
    // contract; the source is a local vector that cannot overlap it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len()) };
    Ok(())
}

/// Reads `num` pids.
///
/// # Safety
/// `pid` is NULL or points to `num` readable `int32_t`.
pub(crate) unsafe fn read_pids<'a>(pid: *const i32, num: usize) -> AclResult<&'a [i32]> {
    if num == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "pid must be a non-empty array"));
    }
    // SAFETY: forwarded contract.
    Ok(unsafe { slice(pid, num, "pid") }?)
}

/// The pids of every server in `serverPids[0..num]` (the `...InterServer` calls), together.
///
/// # Safety
/// `servers` is NULL or points to `num` readable entries whose `pid` arrays hold their `num`
/// readable values each.
unsafe fn read_server_pids(servers: *const aclrtServerPid, num: usize) -> AclResult<Vec<i32>> {
    if num == 0 {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "serverPids must be a non-empty array"));
    }
    // SAFETY: `num` readable entries by this function's contract.
    let servers = unsafe { slice(servers, num, "serverPids") }?;
    let mut pids = Vec::new();
    for s in servers {
        // SAFETY: each entry's array is readable for its `num` values by the contract.
        pids.extend_from_slice(unsafe { read_pids(s.pid, s.num) }?);
    }
    Ok(pids)
}

/// Exports `notify` for other processes and writes its key (at most 64 characters and a NUL)
/// into `key` (`len` at least 65, else 107000). `flags`: `ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT`
/// (only pids given to `aclrtNotifySetImportPid` may import) or
/// `ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION` (any process of the same user). A notify
/// is exported once (507000 the second time).
///
/// # Safety
/// `key` is NULL or valid for `len` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNotifyGetExportKey(
    notify: aclrtNotify,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> aclError {
    acl_call("aclrtNotifyGetExportKey", || {
        let n = resolve::<Notify>(notify, "notify")?;
        if key.is_null() {
            return Err(null_argument("key"));
        }
        if len < ACL_IPC_HANDLE_SIZE {
            // SAFETY: forwarded contract; reports the short buffer before exporting anything.
            return unsafe { write_key(key, len, "") };
        }
        let k = share::export_notify(&n, flags, settings())?.to_string();
        // SAFETY: forwarded from this function's contract.
        unsafe { write_key(key, len, &k) }
    })
}

/// Allows the processes `pid[0..num]` to import `notify` (after `aclrtNotifyGetExportKey`).
///
/// # Safety
/// `pid` is NULL or points to `num` readable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNotifySetImportPid(notify: aclrtNotify, pid: *mut i32, num: usize) -> aclError {
    acl_call("aclrtNotifySetImportPid", || {
        let n = resolve::<Notify>(notify, "notify")?;
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_pids(pid, num) }?;
        share::allow_notify_pids(&n, pids)
    })
}

/// As `aclrtNotifySetImportPid` for processes of other servers of a super-node; on other
/// products 207000.
///
/// # Safety
/// `serverPids` is NULL or points to `num` readable entries whose `pid` arrays hold `num`
/// readable values each.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNotifySetImportPidInterServer(
    notify: aclrtNotify,
    serverPids: *mut aclrtServerPid,
    num: usize,
) -> aclError {
    acl_call("aclrtNotifySetImportPidInterServer", || {
        let n = resolve::<Notify>(notify, "notify")?;
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_server_pids(serverPids, num) }?;
        share::allow_notify_pids_inter_server(&n, &pids, settings())
    })
}

/// Imports the notify another process exported under `key`, for recording on this process's
/// streams (waiting on it is the creator's: 107000). `flags` up to 3; with
/// `ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS` access from the current device to the
/// notify's device is enabled too. Unknown, withdrawn or destroyed keys: 107000; exporter gone:
/// 507022; not whitelisted: 207006; unsupported product or virtual instance: 207000.
///
/// # Safety
/// `notify` is NULL or valid for a write of an `aclrtNotify`; `key` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNotifyImportByKey(
    notify: *mut aclrtNotify,
    key: *const c_char,
    flags: u64,
) -> aclError {
    acl_call("aclrtNotifyImportByKey", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(notify, "notify") }?;
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        out.write(to_c(share::import_notify(key, flags, settings())?));
        Ok(())
    })
}

/// Exports `size` bytes of device memory at `devPtr` (a page-aligned address inside one
/// `aclrtMalloc` allocation) and writes the key into `key` (`len` at least 65). `flags`:
/// `ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT` or `..._DISABLE_PID_VALIDATION`.
///
/// # Safety
/// `key` is NULL or valid for `len` bytes of writes.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    devPtr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> aclError {
    acl_call("aclrtIpcMemGetExportKey", || {
        if devPtr.is_null() {
            return Err(null_argument("devPtr"));
        }
        if key.is_null() {
            return Err(null_argument("key"));
        }
        if len < ACL_IPC_HANDLE_SIZE {
            // SAFETY: forwarded contract; reports the short buffer before exporting anything.
            return unsafe { write_key(key, len, "") };
        }
        let k = share::export_memory(devPtr.addr(), size, flags, settings())?.to_string();
        // SAFETY: forwarded from this function's contract.
        unsafe { write_key(key, len, &k) }
    })
}

/// Allows the processes `pid[0..num]` to import the memory exported under `key`.
///
/// # Safety
/// `key` is NULL or a C string; `pid` is NULL or points to `num` readable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) -> aclError {
    acl_call("aclrtIpcMemSetImportPid", || {
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_pids(pid, num) }?;
        share::allow_memory_pids(key, pids)
    })
}

/// Maps the device memory another process exported under `key` into this process (the same
/// pages: no copy) and returns its address in `*devPtr`. `flags`: 0 or
/// `ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS`. Errors as for `aclrtNotifyImportByKey`.
///
/// # Safety
/// `devPtr` is NULL or valid for a write of a `void *`; `key` is NULL or a C string.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    devPtr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> aclError {
    acl_call("aclrtIpcMemImportByKey", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        let addr = share::import_memory(key, flags, settings())?;
        out.write(std::ptr::with_exposed_provenance_mut::<c_void>(addr));
        Ok(())
    })
}

/// In an importer: unmaps the memory imported with `key`. In the exporter: withdraws the export
/// (later imports fail). Importers should close before the exporter does.
///
/// # Safety
/// `key` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> aclError {
    acl_call("aclrtIpcMemClose", || {
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        share::close_memory(key)
    })
}

/// As `aclrtIpcMemSetImportPid` for processes of other servers of a super-node; on other
/// products 207000.
///
/// # Safety
/// `key` is NULL or a C string; `serverPids` is NULL or points to `num` readable entries whose
/// `pid` arrays hold `num` readable values each.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportPidInterServer(
    key: *const c_char,
    serverPids: *mut aclrtServerPid,
    num: usize,
) -> aclError {
    acl_call("aclrtIpcMemImportPidInterServer", || {
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        // SAFETY: forwarded from this function's contract.
        let pids = unsafe { read_server_pids(serverPids, num) }?;
        share::allow_memory_pids_inter_server(key, &pids, settings())
    })
}

/// Sets an attribute of memory this process exported under `key`: only
/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` with an `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_*` value (else
/// 107000). Every link reaches the same host pages here, so the choice is checked and kept
/// without further effect.
///
/// # Safety
/// `key` is NULL or a C string.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetAttr(
    key: *const c_char,
    r#type: crate::ffi::acl_rt::kernel_types::IpcMemAttrTypeArg,
    attr: u64,
) -> aclError {
    acl_call("aclrtIpcMemSetAttr", || {
        // SAFETY: forwarded from this function's contract.
        let key = unsafe { required_str(key, "key") }?;
        share::set_memory_attr(key, r#type, attr)
    })
}
