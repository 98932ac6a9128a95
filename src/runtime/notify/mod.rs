//! Notifies: one-shot signals between streams, possibly of different processes. One record
//! releases exactly one wait; a record that comes first is not lost (it is counted); the wait
//! takes the record it consumed ("resets").

pub(crate) mod cell;
pub mod counting;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cell::{Cell, WaitEnd};

use super::stream::{CANCEL_POLL, Stream};
use super::task::TaskInfo;
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::ipc::{ImportLink, Importers, Key};
use crate::profile::Product;
use crate::sync;

crate::handle_kind!(pub static NOTIFIES: Notify => Notify, AclError);

/// `aclrtCreateNotify` flags: `ACL_NOTIFY_DEFAULT` (0) or `ACL_NOTIFY_DEVICE_USE_ONLY` (1).
const KNOWN_CREATE_FLAGS: u64 = 1;

pub struct Notify {
    /// Where records land until the notify is exported: a cell of the process's shared pages
    /// (or, imported, the exporter's cell).
    home: Cell,
    /// Set once, by the export: the notify's own cell, and who imported it.
    exported: OnceLock<Exported>,
    pub device: i32,
    /// What `aclrtGetNotifyId` reports; an imported notify reports its exporter's id.
    pub id: u32,
    /// Imported from another process: it may be recorded, not waited on.
    pub imported: bool,
    /// The key it is exported under, while the export stands.
    pub export: Mutex<Option<Key>>,
    /// For an imported notify: the connection to the exporter that stands for the import
    /// (dropping it tells the exporter this process let go).
    pub link: Option<ImportLink>,
}

/// What exporting gave a notify.
struct Exported {
    cell: Cell,
    importers: Arc<Importers>,
}

impl Notify {
    fn new(home: Cell, device: i32, id: u32, link: Option<ImportLink>) -> Notify {
        Notify {
            home,
            exported: OnceLock::new(),
            device,
            id,
            imported: link.is_some(),
            export: Mutex::new(None),
            link,
        }
    }

    /// The cell that records go to and waits take from now.
    pub fn cell(&self) -> &Cell {
        self.exported.get().map_or(&self.home, |e| &e.cell)
    }

    /// Moves the notify to `cell` (a file of its own, the one the export hands out), with the
    /// records pending on its home cell; `importers` is the export's count. Once only:
    /// false if the notify was exported already.
    ///
    /// Records and waits in flight on other threads are not lost: a record that lands on the
    /// home cell after the move forwards itself ([`Notify::record`]), and waits asleep on the
    /// home cell are woken to move over ([`wait`]).
    pub fn move_to_own_cell(&self, cell: Cell, importers: Arc<Importers>) -> bool {
        if self.exported.set(Exported { cell, importers }).is_err() {
            return false;
        }
        self.forward_home();
        self.home.wake_all();
        true
    }

    /// Adds one record.
    pub fn record(&self) {
        if let Some(e) = self.exported.get() {
            e.cell.record();
            return;
        }
        self.home.record();
        // An export may have moved the notify between the look above and this record: then the
        // move's drain either took this record already or the export is visible here (the drain
        // and the increment are ordered on the one word), and the record follows the notify.
        if self.exported.get().is_some() {
            self.forward_home();
        }
    }

    /// Forgets every pending record.
    pub fn reset(&self) {
        self.home.reset();
        if let Some(e) = self.exported.get() {
            e.cell.reset();
        }
    }

    /// Records that reached the home cell of an exported notify go on to its own cell.
    fn forward_home(&self) {
        if let Some(e) = self.exported.get() {
            e.cell.add(self.home.drain());
        }
    }

    /// An exported notify that an importer died holding, with no importer left since.
    fn orphaned(&self) -> bool {
        self.exported.get().is_some_and(|e| e.importers.orphaned())
    }
}

static NEXT_ID: AtomicU32 = AtomicU32::new(0);
static PER_DEVICE: Mutex<BTreeMap<i32, u32>> = Mutex::new(BTreeMap::new());

/// `aclrtCreateNotify` on `device`: counts against the product's per-device limit.
pub fn create(device: i32, flag: u64, product: Product) -> AclResult<u64> {
    if flag & !KNOWN_CREATE_FLAGS != 0 {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("notify flag {flag:#x}: use ACL_NOTIFY_DEFAULT (0) or ACL_NOTIFY_DEVICE_USE_ONLY (1)"),
        ));
    }
    super::device::on_release("notify(ies)", release_device);
    let limit = product.notify_limit();
    {
        let mut counts = sync::lock(&PER_DEVICE);
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
    Ok(NOTIFIES.insert(Notify::new(cell, device, id, None)))
}

fn uncount(device: i32) {
    if let Some(n) = sync::lock(&PER_DEVICE).get_mut(&device) {
        *n = n.saturating_sub(1);
    }
}

/// Registers a notify imported from another process, with its link to the exporter.
pub fn adopt_import(cell: Cell, device: i32, id: u32, link: ImportLink) -> u64 {
    NOTIFIES.insert(Notify::new(cell, device, id, Some(link)))
}

/// `aclrtDestroyNotify`: this process's handle goes; queued tasks that hold the notify still
/// run. The shared cell lives on while another process has it mapped.
pub fn destroy(notify: Arc<Notify>) {
    // Withdraw its export (made by `share`): later imports of the key fail; live importers
    // keep their mapping of the cell.
    if let Some(key) = sync::lock(&notify.export).take() {
        let _ = crate::ipc::revoke(&key);
    }
    if !notify.imported {
        uncount(notify.device);
    }
    // The last holder: nothing can record on the home cell any more, so it can serve another
    // notify, exported or not (an export never handed the home cell out).
    if let Ok(n) = Arc::try_unwrap(notify) {
        if !n.imported {
            cell::release(n.home);
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
    stream.submit_op(TaskInfo::plain("notify record"), move |_| {
        n.record();
        Ok(())
    })
}

/// Queues a wait-and-reset on `stream`: the stream's later tasks run after one record has been
/// taken. `timeout_s` 0 waits without limit; a time-out fails the task (107020, reported by the
/// stream's synchronisation).
///
/// Only the time-out ends a wait that has one, as on the device: the death of an importer does
/// not, since another importer (or this process) may still record. A wait without limit ends
/// with 507022 once the notify is orphaned (an importer died and no importer is left), where it
/// would otherwise hang: our extension; a new import re-arms the notify.
pub fn wait(notify: &Arc<Notify>, stream: &Stream, timeout_s: u32) -> AclResult<()> {
    if notify.imported {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            "this notify was imported from another process: only the process that created it may wait on it",
        ));
    }
    let n = Arc::clone(notify);
    let timeout = (timeout_s > 0).then(|| Duration::from_secs(u64::from(timeout_s)));
    stream.submit_op(TaskInfo::plain("notify wait"), move |ctx| {
        let deadline = timeout.map(|t| Instant::now() + t);
        let orphaned = || timeout.is_none() && n.orphaned();
        loop {
            let cell = n.cell();
            // An export moved the notify off `cell` while this wait slept on it.
            let moved = || !std::ptr::eq(cell, n.cell());
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            return match cell.wait_take(left, CANCEL_POLL, || ctx.cancelled() || orphaned() || moved()) {
                Ok(()) => Ok(()),
                Err(WaitEnd::TimedOut) => Err(AclError::new(
                    ACL_ERROR_RT_TASK_TIMEOUT,
                    format!("wait on notify {} timed out after {timeout_s} s without a record", n.id),
                )),
                Err(WaitEnd::Stopped) if ctx.cancelled() => Err(AclError::new(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("wait on notify {} cancelled: stream destroyed", n.id),
                )),
                Err(WaitEnd::Stopped) if moved() => continue,
                Err(WaitEnd::Stopped) => Err(AclError::new(
                    ACL_ERROR_RT_IPC_ERROR,
                    format!(
                        "wait on notify {} abandoned: a process that imported it died and no importer is \
                         left to record it (a wait with a time-out would have gone on)",
                        n.id
                    ),
                )),
            };
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A2: Product = Product::AtlasA2;

    #[test]
    fn create_checks_flags_and_counts_per_device() {
        assert_eq!(create(0, 2, A2).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        let h = create(7, 1, A2).unwrap();
        let before = *PER_DEVICE.lock().unwrap().get(&7).unwrap();
        destroy(NOTIFIES.remove(h).unwrap());
        assert_eq!(*PER_DEVICE.lock().unwrap().get(&7).unwrap(), before - 1);
    }

    #[test]
    fn the_limit_is_the_products_passed_in() {
        // Two products in one process: the same count of notifies is one too many on an
        // inference part (1024) and well within an A2's (8192).
        let device = 41;
        let made: Vec<u64> = (0..1024).map(|_| create(device, 0, Product::AtlasInference).unwrap()).collect();
        let err = create(device, 0, Product::AtlasInference).unwrap_err();
        assert_eq!(err.code, ACL_ERROR_RT_NO_NOTIFY_RESOURCE);
        assert!(err.message.contains("1024"), "{}", err.message);
        let more = create(device, 0, A2).unwrap();
        for h in made.into_iter().chain([more]) {
            destroy(NOTIFIES.remove(h).unwrap());
        }
        assert_eq!(*PER_DEVICE.lock().unwrap().get(&device).unwrap(), 0);
    }

    #[test]
    fn a_record_before_the_wait_is_not_lost_and_each_record_releases_one_wait() {
        let s = Stream::new(0, 1).unwrap();
        let n = NOTIFIES.get(create(0, 0, A2).unwrap()).unwrap();
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
    fn an_orphaned_notify_ends_only_a_wait_without_limit_and_a_new_import_rearms_it() {
        let s = Stream::new(0, 1).unwrap();
        let n = NOTIFIES.get(create(0, 0, A2).unwrap()).unwrap();
        let importers = Arc::new(Importers::default());
        assert!(n.move_to_own_cell(cell::alone().unwrap(), Arc::clone(&importers)));
        importers.joined();
        importers.left(true);
        wait(&n, &s, 1).unwrap();
        let e = s.synchronize(Some(Duration::from_secs(10))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_TASK_TIMEOUT, "a time-out governs a wait that has one: {e}");
        wait(&n, &s, 0).unwrap();
        assert_eq!(s.synchronize(Some(Duration::from_secs(10))).unwrap_err().code, ACL_ERROR_RT_IPC_ERROR);
        importers.joined();
        wait(&n, &s, 0).unwrap();
        n.record();
        s.synchronize(Some(Duration::from_secs(10))).expect("re-armed by the new import");
    }

    #[test]
    fn an_export_moves_pending_records_and_sleeping_waits_to_the_own_cell() {
        let s = Stream::new(0, 1).unwrap();
        let h = create(0, 0, A2).unwrap();
        let n = NOTIFIES.get(h).unwrap();
        n.record();
        n.record();
        wait(&n, &s, 5).unwrap();
        wait(&n, &s, 5).unwrap();
        wait(&n, &s, 5).unwrap();
        // The third wait is asleep on the home cell when the export moves the notify.
        std::thread::sleep(Duration::from_millis(50));
        let own = cell::alone().unwrap();
        assert!(n.move_to_own_cell(own.clone(), Arc::default()));
        assert!(!n.move_to_own_cell(cell::alone().unwrap(), Arc::default()), "once only");
        own.record();
        s.synchronize(Some(Duration::from_secs(10)))
            .expect("the record on the own cell released the moved wait");
        n.record();
        assert_eq!(own.pending(), 1, "records follow the notify");
        drop(n);
        destroy(NOTIFIES.remove(h).unwrap());
    }
}
