//! The text of this thread's most recent error.
//!
//! Reading consumes the message (a second read without a new error gives nothing), so a caller
//! that reads after each failure never sees a stale message attributed to a later call.

use std::cell::RefCell;
use std::ffi::CString;

thread_local! {
    static PENDING: RefCell<Option<CString>> = const { RefCell::new(None) };
}

// Every access uses `try_with`: C code may call in while the thread is being torn down (from a
// pthread key destructor, say), after this store is gone; the message is then dropped rather
// than the process aborted.

/// Records `message` as this thread's most recent error, replacing any unread one.
pub fn record_recent(message: &str) {
    // Interior NULs cannot cross into C; replace them rather than lose the message.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let _ = PENDING.try_with(|p| *p.borrow_mut() = Some(text));
}

/// Drops this thread's unread message, if any.
pub fn clear_recent() {
    let _ = PENDING.try_with(|p| *p.borrow_mut() = None);
}

/// The unread message, without consuming it.
pub fn recent_message() -> Option<String> {
    PENDING.try_with(|p| p.borrow().as_ref().map(|c| c.to_string_lossy().into_owned())).ok().flatten()
}

/// Takes the unread message, leaving none.
pub fn take_recent() -> Option<CString> {
    PENDING.try_with(|p| p.borrow_mut().take()).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read() -> Option<String> {
        take_recent().map(|c| c.into_string().unwrap())
    }

    #[test]
    fn reading_consumes_the_message() {
        record_recent("first");
        record_recent("second");
        assert_eq!(recent_message().as_deref(), Some("second"));
        assert_eq!(read().as_deref(), Some("second"));
        assert_eq!(read(), None);
    }

    #[test]
    fn messages_are_per_thread() {
        record_recent("main thread");
        std::thread::spawn(|| assert_eq!(read(), None)).join().unwrap();
        assert_eq!(read().as_deref(), Some("main thread"));
    }

    #[test]
    fn interior_nul_is_kept_visible() {
        record_recent("a\0b");
        assert_eq!(read().as_deref(), Some("a b"));
    }

    #[test]
    fn clear_drops_unread_message() {
        record_recent("x");
        clear_recent();
        assert_eq!(read(), None);
    }
}
