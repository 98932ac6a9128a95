//! `acl/acl_rt.h`: notifies.

use std::sync::Arc;

use crate::config::settings;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::aclrtNotify;
use crate::ffi::handles::{raw, release, resolve, to_c};
use crate::ffi::ptr::{Out, slice};
use crate::runtime::context;
use crate::runtime::notify::{self, Notify};

/// Creates a notify on the current device. `flag`: `ACL_NOTIFY_DEFAULT` or
/// `ACL_NOTIFY_DEVICE_USE_ONLY` (else 107000). A device holds at most the product's limit
/// (8192 on Atlas A2/A3; beyond it 207009).
///
/// # Safety
/// `notify` is NULL or valid for a write of an `aclrtNotify`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateNotify(notify: *mut aclrtNotify, flag: u64) -> aclError {
    acl_call("aclrtCreateNotify", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(notify, "notify") }?;
        let device = context::current_device()?;
        out.write(to_c(notify::create(device, flag, settings().product)?));
        Ok(())
    })
}

/// Destroys this process's handle of a notify (created or imported). Tasks already queued
/// with it still run; other processes' handles stay valid.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyNotify(notify: aclrtNotify) -> aclError {
    acl_call("aclrtDestroyNotify", || {
        let n = release::<Notify>(notify, "notify")?;
        notify::destroy(n);
        Ok(())
    })
}

/// Queues a record of `notify` on `stream` (NULL: the default stream): it releases exactly one
/// wait, now or later.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordNotify(notify: aclrtNotify, stream: aclrtStream) -> aclError {
    acl_call("aclrtRecordNotify", || {
        notify::record(&resolve::<Notify>(notify, "notify")?, &*context::stream_for_work(raw(stream))?)
    })
}

/// Queues on `stream` a wait for one record of `notify`, which it then consumes. `timeout` is
/// in seconds, 0 without limit; a wait that times out fails the stream's next synchronisation
/// with 107020. Only the creating process may wait (an imported notify: 107000). A wait without
/// limit on an exported notify fails with 507022 while an importer has died and none is left.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtWaitAndResetNotify(
    notify: aclrtNotify,
    stream: aclrtStream,
    timeout: u32,
) -> aclError {
    acl_call("aclrtWaitAndResetNotify", || {
        notify::wait(&resolve::<Notify>(notify, "notify")?, &*context::stream_for_work(raw(stream))?, timeout)
    })
}

/// The notify's id (an imported notify reports its creator's id).
///
/// # Safety
/// `notifyId` is NULL or valid for a write of a `uint32_t`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetNotifyId(notify: aclrtNotify, notifyId: *mut u32) -> aclError {
    acl_call("aclrtGetNotifyId", || {
        let id = resolve::<Notify>(notify, "notify")?.id;
        // SAFETY: forwarded from this function's contract.
        unsafe { Out::new(notifyId, "notifyId") }?.write(id);
        Ok(())
    })
}

/// Forgets every pending record of `num` notifies at once (from the host, not on a stream).
/// Every handle is checked before any is reset.
///
/// # Safety
/// `notifies` is NULL or points to `num` readable `aclrtNotify` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtNotifyBatchReset(notifies: *mut aclrtNotify, num: usize) -> aclError {
    acl_call("aclrtNotifyBatchReset", || {
        if num == 0 {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "notifies must be a non-empty array"));
        }
        // SAFETY: `num` readable values by this function's contract.
        let handles = unsafe { slice(notifies, num, "notifies") }?;
        let resolved: Vec<Arc<Notify>> =
            handles.iter().map(|&h| resolve::<Notify>(h, "notify")).collect::<AclResult<_>>()?;
        for n in resolved {
            n.reset();
        }
        Ok(())
    })
}
