//! Notifies: one-shot signals between streams, possibly of different processes. One record
//! releases exactly one wait; a record that comes first is not lost (it is counted); the wait
//! takes the record it consumed ("resets").

pub mod cell;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cell::{Cell, WaitEnd};

use super::stream::{CANCEL_POLL, Stream};
use crate::config::settings;
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::handle::{HandleKind, HandleTable};
use crate::ipc::{ImportLink, Key};

pub static NOTIFIES: HandleTable<Notify> = HandleTable::new(HandleKind::Notify);

/// `aclrtCreateNotify` flags: `ACL_NOTIFY_DEFAULT` (0) or `ACL_NOTIFY_DEVICE_USE_ONLY` (1).
const KNOWN_CREATE_FLAGS: u64 = 1;

pub struct Notify {
    pub cell: Cell,
    pub device: i32,
    /// What `aclrtGetNotifyId` reports; an imported notify reports its exporter's id.
    pub id: u32,
    /// Imported from another process: it may be recorded, not waited on.
    pub imported: bool,
    /// Ever exported: its cell is never reused, whatever happens to this notify.
    pub exported: AtomicBool,
    /// An importer died without releasing its import: waits fail instead of waiting forever.
    pub peer_lost: AtomicBool,
    /// The key it is exported under, while the export stands.
    pub export: Mutex<Option<Key>>,
    /// For an imported notify: the connection to the exporter that stands for the import
    /// (dropping it tells the exporter this process let go).
    pub link: Option<ImportLink>,
}

static NEXT_ID: AtomicU32 = AtomicU32::new(0);
static PER_DEVICE: Mutex<BTreeMap<i32, u32>> = Mutex::new(BTreeMap::new());

/// `aclrtCreateNotify` on `device`: counts against the product's per-device limit.
pub fn create(device: i32, flag: u64) -> AclResult<u64> {
    if flag & !KNOWN_CREATE_FLAGS != 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("notify flag {flag:#x}: use ACL_NOTIFY_DEFAULT (0) or ACL_NOTIFY_DEVICE_USE_ONLY (1)"),
        ));
    }
    let limit = settings().product.notify_limit();
    {
        let mut counts = PER_DEVICE.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts.entry(device).or_default();
        if *n >= limit {
            return Err(AclError::new(
                ACL_ERROR_RT_NO_NOTIFY_RESOURCE,
                format!(
                    "device {device} already has {limit} notifies, the product's limit; destroy some first"
                ),
            ));
        }
        *n += 1;
    }
    let cell = cell::allocate().map_err(|e| {
        uncount(device);
        AclError::new(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, format!("cannot allocate notify memory: {e}"))
    })?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    Ok(NOTIFIES.insert(Notify {
        cell,
        device,
        id,
        imported: false,
        exported: AtomicBool::new(false),
        peer_lost: AtomicBool::new(false),
        export: Mutex::new(None),
        link: None,
    }))
}

fn uncount(device: i32) {
    if let Some(n) = PER_DEVICE.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&device) {
        *n = n.saturating_sub(1);
    }
}

/// Registers a notify imported from another process, with its link to the exporter.
pub fn adopt_import(cell: Cell, device: i32, id: u32, link: ImportLink) -> u64 {
    NOTIFIES.insert(Notify {
        cell,
        device,
        id,
        imported: true,
        exported: AtomicBool::new(false),
        peer_lost: AtomicBool::new(false),
        export: Mutex::new(None),
        link: Some(link),
    })
}

/// `aclrtDestroyNotify`: this process's handle goes; queued tasks that hold the notify still
/// run. The shared cell lives on while another process has it mapped.
pub fn destroy(notify: Arc<Notify>) {
    super::share::withdraw_notify(&notify);
    if !notify.imported {
        uncount(notify.device);
    }
    if let Ok(n) = Arc::try_unwrap(notify) {
        if !n.imported && !n.exported.load(Ordering::Acquire) {
            cell::release(n.cell);
        }
    }
}

/// Destroys the notifies this process created on `device` (its last use was reset); their
/// handles become stale, as on the device.
pub fn release_device(device: i32) -> usize {
    let gone = NOTIFIES.remove_where(|n| n.device == device && !n.imported);
    let count = gone.len();
    gone.into_iter().for_each(destroy);
    count
}

/// Queues a record on `stream`. For an imported notify whose creator has exited the record
/// could reach no one: that is an error (507022), found when the record is queued (a check
/// made there costs the stream nothing).
pub fn record(notify: &Arc<Notify>, stream: &Stream) -> AclResult<()> {
    if notify.link.as_ref().is_some_and(|l| l.exporter_gone()) {
        return Err(AclError::new(
            ACL_ERROR_RT_IPC_ERROR,
            format!(
                "the process that created notify {} has exited; nothing can wait for this record",
                notify.id
            ),
        ));
    }
    let n = Arc::clone(notify);
    stream.submit(Box::new(move |_| {
        n.cell.record();
        Ok(())
    }))
}

/// Queues a wait-and-reset on `stream`: the stream's later tasks run after one record has been
/// taken. `timeout_s` 0 waits without limit; a time-out fails the task (107020, reported by the
/// stream's synchronisation).
pub fn wait(notify: &Arc<Notify>, stream: &Stream, timeout_s: u32) -> AclResult<()> {
    if notify.imported {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "this notify was imported from another process: only the process that created it may wait on it",
        ));
    }
    let n = Arc::clone(notify);
    let timeout = (timeout_s > 0).then(|| Duration::from_secs(u64::from(timeout_s)));
    stream.submit(Box::new(move |ctx| {
        let stop = || ctx.cancelled() || n.peer_lost.load(Ordering::Acquire);
        match n.cell.wait_take(timeout, CANCEL_POLL, stop) {
            Ok(()) => Ok(()),
            Err(WaitEnd::TimedOut) => Err(AclError::new(
                ACL_ERROR_RT_TASK_TIMEOUT,
                format!("wait on notify {} timed out after {timeout_s} s without a record", n.id),
            )),
            Err(WaitEnd::Stopped) if n.peer_lost.load(Ordering::Acquire) => Err(AclError::new(
                ACL_ERROR_RT_IPC_ERROR,
                format!("wait on notify {} abandoned: a process that imported it died", n.id),
            )),
            Err(WaitEnd::Stopped) => Err(AclError::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("wait on notify {} cancelled: stream destroyed", n.id),
            )),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_checks_flags_and_counts_per_device() {
        assert_eq!(create(0, 2).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let h = create(7, 1).unwrap();
        let before = *PER_DEVICE.lock().unwrap().get(&7).unwrap();
        destroy(NOTIFIES.remove(h).unwrap());
        assert_eq!(*PER_DEVICE.lock().unwrap().get(&7).unwrap(), before - 1);
    }

    #[test]
    fn a_record_before_the_wait_is_not_lost_and_each_record_releases_one_wait() {
        let s = Stream::new(0, 1).unwrap();
        let n = NOTIFIES.get(create(0, 0).unwrap()).unwrap();
        record(&n, &s).unwrap();
        wait(&n, &s, 5).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        record(&n, &s).unwrap();
        record(&n, &s).unwrap();
        wait(&n, &s, 5).unwrap();
        wait(&n, &s, 5).unwrap();
        s.synchronize(Some(Duration::from_secs(10))).unwrap();
        wait(&n, &s, 1).unwrap();
        let e = s.synchronize(Some(Duration::from_secs(10))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_TASK_TIMEOUT, "{e}");
    }

    #[test]
    fn a_lost_peer_ends_a_wait_without_limit() {
        let s = Stream::new(0, 1).unwrap();
        let n = NOTIFIES.get(create(0, 0).unwrap()).unwrap();
        wait(&n, &s, 0).unwrap();
        n.peer_lost.store(true, Ordering::Release);
        assert_eq!(s.synchronize(Some(Duration::from_secs(10))).unwrap_err().code, ACL_ERROR_RT_IPC_ERROR);
    }
}
