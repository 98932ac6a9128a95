//! TDT (tensor data transfer): the vendor's host<->device channels (`acl/acl_tdt.h`) and
//! shared queues with routes between them (`acl/acl_tdt_queue.h`), as queues in this process.
//!
//! On the vendor's machine a channel and a queue live in the driver, between the host and the
//! device's CPUs. Here both ends are the host process, so each is a bounded queue in memory,
//! guarded by a mutex, whose blocked senders and receivers sleep on a condition variable until
//! there is room or data, their timeout runs out, or the channel is stopped.

pub mod channel;
pub mod dataset;
pub mod queue;
pub mod route;

use std::sync::{Condvar, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::acl_codes::ACL_ERROR_INVALID_PARAM;
use crate::error::{AclError, AclResult};
use crate::sync;

/// How long a send or receive may wait for room or data (the vendor's `timeout` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// 0: fail at once when full or empty.
    No,
    /// -1: wait until it can be done.
    Forever,
    /// > 0: wait at most this long.
    For(Duration),
}

impl Wait {
    /// The vendor's timeout in milliseconds: -1 forever, 0 not at all, > 0 that many ms. Other
    /// negative values are refused (100000) rather than taken as forever.
    pub fn from_ms(timeout: i32) -> AclResult<Wait> {
        match timeout {
            -1 => Ok(Wait::Forever),
            0 => Ok(Wait::No),
            t if t > 0 => Ok(Wait::For(Duration::from_millis(t as u64))),
            t => Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("timeout {t}: it is -1 (wait forever), 0 (do not wait) or a number of milliseconds"),
            )),
        }
    }
}

/// Runs `attempt` under `guard` until it gives a result, sleeping on `cv` between tries for at
/// most `wait`; when the time runs out first, `expired()` is the error. `cv` must be notified
/// whenever what `attempt` looks at changes.
pub(crate) fn block<T, R>(
    cv: &Condvar,
    mut guard: MutexGuard<'_, T>,
    wait: Wait,
    mut attempt: impl FnMut(&mut T) -> Option<AclResult<R>>,
    expired: impl Fn() -> AclError,
) -> AclResult<R> {
    let deadline = match wait {
        Wait::For(d) => Some(Instant::now() + d),
        _ => None,
    };
    loop {
        if let Some(r) = attempt(&mut guard) {
            return r;
        }
        match (wait, deadline) {
            (Wait::Forever, _) => guard = sync::wait(cv, guard),
            (Wait::For(_), Some(deadline)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(expired());
                }
                guard = sync::wait_timeout(cv, guard, left).0;
            }
            _ => return Err(expired()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn timeouts_follow_the_vendor() {
        assert_eq!(Wait::from_ms(-1).unwrap(), Wait::Forever);
        assert_eq!(Wait::from_ms(0).unwrap(), Wait::No);
        assert_eq!(Wait::from_ms(5).unwrap(), Wait::For(Duration::from_millis(5)));
        assert_eq!(Wait::from_ms(-2).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
    }

    #[test]
    fn a_timed_wait_ends_after_its_time() {
        let (m, cv) = (Mutex::new(()), Condvar::new());
        let start = Instant::now();
        let r: AclResult<()> = block(
            &cv,
            sync::lock(&m),
            Wait::For(Duration::from_millis(30)),
            |_| None,
            || AclError::new(1, "x"),
        );
        assert_eq!(r.unwrap_err().code, 1);
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}
