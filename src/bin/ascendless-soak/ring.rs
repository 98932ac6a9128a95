//! A ring of IPC notifies across the soak's processes: each process creates a notify, exports
//! it with pid validation and whitelists the other processes; then, round after round, it
//! records the next process's notify (imported by key) and waits on its own, which the
//! previous process records. Every process depends on its neighbour, so a lost or duplicated
//! record, or a broken import, stalls the ring and shows as an error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascendless::config::settings;
use ascendless::error::rt_codes::ACL_ERROR_RT_TASK_TIMEOUT;
use ascendless::runtime::notify::{self, NOTIFIES, Notify};
use ascendless::runtime::{context, device, share};

use crate::worker::Counters;

/// `ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT`: importers must be whitelisted.
const EXPORT_WITH_PID_CHECK: u64 = 0;
/// Each wait is queued with this limit (seconds), then queued again while the run goes on, so
/// a stop is noticed within it.
const WAIT_SLICE_S: u32 = 1;
/// A wait that has not been satisfied in this long is an error (the ring is broken).
const STALL: Duration = Duration::from_secs(60);

/// This process's place in the ring.
pub struct Ring {
    device: i32,
    /// The handle and notify this process created.
    own: (u64, Arc<Notify>),
    key: String,
    /// The next process's notify, once imported.
    next: Option<(u64, Arc<Notify>)>,
}

fn acl<T>(what: &str, r: ascendless::error::AclResult<T>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

impl Ring {
    /// Creates and exports this process's notify on `device`.
    pub fn create(device: i32) -> Result<Ring, String> {
        acl("aclrtSetDevice", device::set(device, settings()))?;
        let handle = acl("aclrtCreateNotify", notify::create(device, 0, settings().product))?;
        let own = NOTIFIES.get(handle).map_err(|e| format!("the notify just created: {e:?}"))?;
        let key =
            acl("aclrtNotifyGetExportKey", share::export_notify(&own, EXPORT_WITH_PID_CHECK, settings()))?
                .to_string();
        Ok(Ring { device, own: (handle, own), key, next: None })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whitelists the processes that may import this process's notify.
    pub fn allow(&self, pids: &[i32]) -> Result<(), String> {
        acl("aclrtNotifySetImportPid", share::allow_notify_pids(&self.own.1, pids))
    }

    /// Imports the next process's notify.
    pub fn join(mut self, next_key: &str) -> Result<Ring, String> {
        let handle = acl("aclrtNotifyImportByKey", share::import_notify(next_key, 0, settings()))?;
        let next = NOTIFIES.get(handle).map_err(|e| format!("the notify just imported: {e:?}"))?;
        self.next = Some((handle, next));
        Ok(self)
    }

    /// Records the next notify and waits for this one, round after round, until the worker
    /// stops. Counts each completed round.
    pub fn run(&self, counters: &Counters) {
        if let Err(e) = self.rounds(counters) {
            counters.error(e);
        }
    }

    fn rounds(&self, counters: &Counters) -> Result<(), String> {
        acl("aclrtSetDevice", device::set(self.device, settings()))?;
        let stream = acl("default stream", context::stream_for_work(0))?;
        let next = &self.next.as_ref().ok_or("the ring was not joined")?.1;
        while !counters.stopping() {
            acl("aclrtRecordNotify", notify::record(next, &stream))?;
            let since = Instant::now();
            loop {
                acl("aclrtWaitAndResetNotify", notify::wait(&self.own.1, &stream, WAIT_SLICE_S))?;
                match stream.synchronize(Some(STALL)) {
                    Ok(()) => break,
                    Err(e) if e.code == ACL_ERROR_RT_TASK_TIMEOUT => {
                        if counters.stopping() {
                            return Ok(());
                        }
                        if since.elapsed() > STALL {
                            return Err(format!("the notify ring stalled: no record for {STALL:?}"));
                        }
                    }
                    Err(e) => return Err(format!("aclrtSynchronizeStream: {e}")),
                }
            }
            counters.notifies.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        for (handle, _) in [Some(&self.own), self.next.as_ref()].into_iter().flatten() {
            if let Ok(n) = NOTIFIES.remove(*handle) {
                notify::destroy(n);
            }
        }
    }
}
