//! This thread's last runtime error code, behind `aclrtGetLastError` (read and clear) and
//! `aclrtPeekAtLastError` (read only).
//!
//! Every AscendCL entry point that fails on this thread leaves its code here, until a newer
//! failure replaces it or `aclrtGetLastError` clears it; a call that succeeds leaves it alone,
//! so a caller can check once after a run of calls, as with CUDA's last error.

use std::cell::Cell;

use super::acl_codes::{ACL_SUCCESS, aclError};

thread_local! {
    static LAST: Cell<aclError> = const { Cell::new(ACL_SUCCESS) };
}

// As in `recent`: `try_with`, so a call during thread teardown loses the code, never aborts.

/// Records `code` as this thread's last error.
pub fn record_last(code: aclError) {
    let _ = LAST.try_with(|l| l.set(code));
}

/// This thread's last error, left in place.
pub fn peek_last() -> aclError {
    LAST.try_with(Cell::get).unwrap_or(ACL_SUCCESS)
}

/// This thread's last error, cleared to `ACL_SUCCESS`.
pub fn take_last() -> aclError {
    LAST.try_with(|l| l.replace(ACL_SUCCESS)).unwrap_or(ACL_SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_keeps_take_clears_and_threads_are_apart() {
        record_last(107000);
        assert_eq!(peek_last(), 107000);
        assert_eq!(peek_last(), 107000);
        std::thread::spawn(|| assert_eq!(peek_last(), ACL_SUCCESS)).join().unwrap();
        assert_eq!(take_last(), 107000);
        assert_eq!(take_last(), ACL_SUCCESS);
    }
}
