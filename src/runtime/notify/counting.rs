//! Counting notifies (`aclrtCntNotify*`): a notify cell whose count is a 32-bit value that
//! records set, add to, OR or AND, and that waits compare with a value (less, equal, greater,
//! greater or equal, or all bits of a mask set), optionally clearing it when they pass.
//!
//! The same cells as one-shot notifies (one word, futex-woken), so a record from any stream
//! reaches the waits on any other with no broker.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::cell::{self, Cell, WaitEnd};
use crate::error::rt_codes::*;
use crate::error::{AclError, AclResult};
use crate::runtime::stream::{CANCEL_POLL, Stream};
use crate::runtime::task::TaskInfo;

crate::handle_kind!(pub static CNT_NOTIFIES: CntNotify => CntNotify, AclError);

pub struct CntNotify {
    cell: Cell,
    pub device: i32,
    /// `aclrtCntNotifyGetId`.
    pub id: u32,
}

/// How a record changes the count (`aclrtCntNotifyRecordMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordMode {
    Set,
    Add,
    Or,
    And,
}

impl RecordMode {
    /// The vendor's value (0 set, 1 add, 2 OR, 4 AND).
    pub fn from_raw(v: i32) -> Option<RecordMode> {
        match v {
            0 => Some(RecordMode::Set),
            1 => Some(RecordMode::Add),
            2 => Some(RecordMode::Or),
            4 => Some(RecordMode::And),
            _ => None,
        }
    }

    fn apply(self, count: u32, value: u32) -> u32 {
        match self {
            RecordMode::Set => value,
            // The count stays a count: it stops at the largest value rather than wrap to 0.
            RecordMode::Add => count.saturating_add(value),
            RecordMode::Or => count | value,
            RecordMode::And => count & value,
        }
    }
}

/// What a wait waits for (`aclrtCntNotifyWaitMode`), against its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    Less,
    Equal,
    Bigger,
    BiggerOrEqual,
    /// Every bit of the value set in the count.
    EqualWithBitmask,
}

impl WaitMode {
    /// The vendor's value (0..=4).
    pub fn from_raw(v: i32) -> Option<WaitMode> {
        match v {
            0 => Some(WaitMode::Less),
            1 => Some(WaitMode::Equal),
            2 => Some(WaitMode::Bigger),
            3 => Some(WaitMode::BiggerOrEqual),
            4 => Some(WaitMode::EqualWithBitmask),
            _ => None,
        }
    }

    pub fn passes(self, count: u32, value: u32) -> bool {
        match self {
            WaitMode::Less => count < value,
            WaitMode::Equal => count == value,
            WaitMode::Bigger => count > value,
            WaitMode::BiggerOrEqual => count >= value,
            WaitMode::EqualWithBitmask => count & value == value,
        }
    }
}

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// `aclrtCntNotifyCreate` on `device`; `flag` is reserved and must be 0 (else 107000).
pub fn create(device: i32, flag: u64) -> AclResult<u64> {
    if flag != 0 {
        return Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("flag {flag:#x}: reserved, pass 0")));
    }
    crate::runtime::device::on_release("counting notify(ies)", release_device);
    let cell = cell::allocate().map_err(|e| {
        AclError::new(
            ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("cannot allocate counting notify memory: {e}"),
        )
    })?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    Ok(CNT_NOTIFIES.insert(CntNotify { cell, device, id }))
}

/// `aclrtCntNotifyDestroy`: queued tasks that hold it still run; the cell is reused after.
pub fn destroy(n: Arc<CntNotify>) {
    if let Ok(n) = Arc::try_unwrap(n) {
        cell::release(n.cell);
    }
}

/// Destroys the counting notifies of `device` (its last use was reset); their handles become
/// stale, as on the device.
pub fn release_device(device: i32) -> usize {
    let gone = CNT_NOTIFIES.remove_where(|n| n.device == device);
    let count = gone.len();
    gone.into_iter().for_each(destroy);
    count
}

impl CntNotify {
    /// The count now.
    pub fn count(&self) -> u32 {
        self.cell.pending()
    }

    /// Applies a record now (what a queued record does when it runs).
    pub fn record_now(&self, mode: RecordMode, value: u32) {
        self.cell.update(|c| mode.apply(c, value));
    }
}

/// Queues a record on `stream`.
pub fn record(n: &Arc<CntNotify>, stream: &Stream, mode: RecordMode, value: u32) -> AclResult<()> {
    let n = Arc::clone(n);
    stream.submit_op(TaskInfo::plain("counting notify record"), move |_| {
        n.record_now(mode, value);
        Ok(())
    })
}

/// Queues a reset (count to 0) on `stream`.
pub fn reset(n: &Arc<CntNotify>, stream: &Stream) -> AclResult<()> {
    record(n, stream, RecordMode::Set, 0)
}

/// Queues on `stream` a wait until the count passes `mode` against `value`, clearing it then
/// with `clear`. `timeout_s` 0 waits without limit; a time-out fails the task (107020,
/// reported by the stream's synchronisation and to the exception callbacks).
pub fn wait(
    n: &Arc<CntNotify>,
    stream: &Stream,
    mode: WaitMode,
    value: u32,
    timeout_s: u32,
    clear: bool,
) -> AclResult<()> {
    let n = Arc::clone(n);
    let timeout = (timeout_s > 0).then(|| Duration::from_secs(u64::from(timeout_s)));
    stream.submit_op(TaskInfo::plain("counting notify wait"), move |ctx| {
        match n.cell.wait_until(|c| mode.passes(c, value), clear, timeout, CANCEL_POLL, || ctx.cancelled()) {
            Ok(_) => Ok(()),
            Err(WaitEnd::TimedOut) => Err(AclError::new(
                ACL_ERROR_RT_TASK_TIMEOUT,
                format!(
                    "wait on counting notify {} ({mode:?} {value}) timed out after {timeout_s} s; the count is {}",
                    n.id,
                    n.count()
                ),
            )),
            Err(WaitEnd::Stopped) => Err(AclError::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("wait on counting notify {} cancelled: stream stopped, aborted or destroyed", n.id),
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_change_the_count_as_their_mode_says() {
        let n = CNT_NOTIFIES.get(create(0, 0).unwrap()).unwrap();
        n.record_now(RecordMode::Add, 3);
        n.record_now(RecordMode::Add, 4);
        assert_eq!(n.count(), 7);
        n.record_now(RecordMode::Or, 0x10);
        assert_eq!(n.count(), 0x17);
        n.record_now(RecordMode::And, 0x13);
        assert_eq!(n.count(), 0x13);
        n.record_now(RecordMode::Set, 5);
        assert_eq!(n.count(), 5);
        n.record_now(RecordMode::Add, u32::MAX);
        assert_eq!(n.count(), u32::MAX);
        assert_eq!(create(0, 1).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }

    #[test]
    fn wait_modes_compare_as_named() {
        assert!(WaitMode::Less.passes(1, 2) && !WaitMode::Less.passes(2, 2));
        assert!(WaitMode::Equal.passes(2, 2) && !WaitMode::Equal.passes(3, 2));
        assert!(WaitMode::Bigger.passes(3, 2) && !WaitMode::Bigger.passes(2, 2));
        assert!(WaitMode::BiggerOrEqual.passes(2, 2) && !WaitMode::BiggerOrEqual.passes(1, 2));
        assert!(
            WaitMode::EqualWithBitmask.passes(0b111, 0b101)
                && !WaitMode::EqualWithBitmask.passes(0b011, 0b101)
        );
        assert_eq!(RecordMode::from_raw(3), None);
        assert_eq!(WaitMode::from_raw(5), None);
    }

    #[test]
    fn a_wait_holds_its_stream_until_the_count_passes_and_may_clear_it() {
        let waiter = Stream::new(0, 1).unwrap();
        let recorder = Stream::new(0, 1).unwrap();
        let n = CNT_NOTIFIES.get(create(0, 0).unwrap()).unwrap();
        wait(&n, &waiter, WaitMode::BiggerOrEqual, 3, 10, true).unwrap();
        record(&n, &recorder, RecordMode::Add, 1).unwrap();
        recorder.synchronize(Some(Duration::from_secs(10))).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(waiter.pending(), 1, "a count of 1 does not pass >= 3");
        record(&n, &recorder, RecordMode::Add, 2).unwrap();
        waiter.synchronize(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(n.count(), 0, "cleared when it passed");
        wait(&n, &waiter, WaitMode::Equal, 9, 1, false).unwrap();
        let e = waiter.synchronize(Some(Duration::from_secs(10))).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_TASK_TIMEOUT, "{e}");
    }

    #[test]
    fn a_device_reset_releases_its_counting_notifies() {
        let h = create(58, 0).unwrap();
        assert_eq!(release_device(58), 1);
        assert!(CNT_NOTIFIES.get(h).is_err());
    }
}
