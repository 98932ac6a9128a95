//! Capture modes (`aclmdlRICaptureMode`): which threads may make the calls a capture cannot
//! hold (a synchronous copy or fill) while captures are in progress.
//!
//! The vendor's rule, kept as is: each thread has an *exchange mode*
//! (`aclmdlRICaptureThreadExchangeMode`, GLOBAL until changed). A thread in RELAXED may make
//! them always. A thread in GLOBAL may not while any capture of its context was begun in GLOBAL
//! mode, or while it began a THREAD_LOCAL capture itself. A thread in THREAD_LOCAL may not
//! while it began a GLOBAL or THREAD_LOCAL capture itself. A refused call gets 107030 and
//! fails the captures that forbade it (their end reports 507903), as the vendor's guide says
//! such a call does.
//!
//! A leaf: the captures in progress are listed with their context, the thread that began them,
//! their mode and the flag that invalidates them.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::rt_codes::{ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::sync;

pub const GLOBAL: u32 = 0;
pub const THREAD_LOCAL: u32 = 1;
pub const RELAXED: u32 = 2;

fn name(mode: u32) -> &'static str {
    match mode {
        GLOBAL => "GLOBAL",
        THREAD_LOCAL => "THREAD_LOCAL",
        _ => "RELAXED",
    }
}

/// 107000 unless `mode` is one of the three.
pub fn check(mode: u32) -> AclResult<()> {
    if mode > RELAXED {
        return Err(AclError::new(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "capture mode {mode}: use ACL_MODEL_RI_CAPTURE_MODE_GLOBAL (0), _THREAD_LOCAL (1) or _RELAXED (2)"
            ),
        ));
    }
    Ok(())
}

thread_local! {
    static EXCHANGE: Cell<u32> = const { Cell::new(GLOBAL) };
}

/// `aclmdlRICaptureThreadExchangeMode`: sets the calling thread's mode, returns the old one.
pub fn exchange(mode: u32) -> AclResult<u32> {
    check(mode)?;
    Ok(EXCHANGE.with(|m| m.replace(mode)))
}

struct Active {
    token: u64,
    context: u64,
    thread: u32,
    mode: u32,
    invalid: Arc<AtomicBool>,
}

static ACTIVE: Mutex<Vec<Active>> = Mutex::new(Vec::new());
/// Captures in progress: a call checks the list only when there are some.
static COUNT: AtomicUsize = AtomicUsize::new(0);
static NEXT: Mutex<u64> = Mutex::new(1);

/// Notes a capture begun by `thread` in `context`; returns the token that ends it.
pub fn enter(context: u64, thread: u32, mode: u32, invalid: Arc<AtomicBool>) -> u64 {
    let token = {
        let mut n = sync::lock(&NEXT);
        *n += 1;
        *n
    };
    sync::lock(&ACTIVE).push(Active { token, context, thread, mode, invalid });
    COUNT.fetch_add(1, Ordering::AcqRel);
    token
}

/// Forgets the capture of `token` (its end).
pub fn exit(token: u64) {
    let mut a = sync::lock(&ACTIVE);
    let before = a.len();
    a.retain(|c| c.token != token);
    COUNT.fetch_sub(before - a.len(), Ordering::AcqRel);
}

/// Whether any capture is in progress in the process (one atomic load: the synchronous calls
/// look up their context only when there is one).
pub fn any_active() -> bool {
    COUNT.load(Ordering::Acquire) > 0
}

/// Whether thread `thread` of `context` may make a call that cannot be captured (`api`, a
/// synchronous copy or fill) now; if not, 107030, and the captures that forbid it are
/// invalidated.
pub fn allow_unsafe_call(context: u64, thread: u32, api: &str) -> AclResult<()> {
    if COUNT.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let exchange = EXCHANGE.with(Cell::get);
    if exchange == RELAXED {
        return Ok(());
    }
    let a = sync::lock(&ACTIVE);
    let own = |c: &Active| c.thread == thread && c.mode != RELAXED;
    let context_global = |c: &Active| c.context == context && c.mode == GLOBAL;
    let blocking: Vec<&Active> = match exchange {
        GLOBAL => a.iter().filter(|c| context_global(c) || (own(c) && c.mode == THREAD_LOCAL)).collect(),
        _ => a.iter().filter(|c| own(c)).collect(),
    };
    let Some(first) = blocking.first() else {
        return Ok(());
    };
    let (mode, by_other) = (first.mode, first.thread != thread);
    for c in &blocking {
        c.invalid.store(true, Ordering::Release);
    }
    let who = if by_other {
        "another thread of this context is capturing a stream"
    } else {
        "this thread is capturing a stream"
    };
    Err(AclError::new(
        ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
        format!(
            "{api}: {who} in mode {} and this thread's capture mode is {}, so it may not make calls a \
             capture cannot hold; the capture is invalidated (its aclmdlRICaptureEnd reports 507903). \
             Switch this thread to ACL_MODEL_RI_CAPTURE_MODE_RELAXED with aclmdlRICaptureThreadExchangeMode \
             if the call does not disturb the capture",
            name(mode),
            name(exchange)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendors_mode_rules() {
        // Contexts no other test uses.
        let (ctx, other_ctx) = (0xC0DE_0001, 0xC0DE_0002);
        let me = crate::sys::thread_id();
        let flag = Arc::new(AtomicBool::new(false));
        let t = enter(ctx, me + 1, GLOBAL, Arc::clone(&flag));
        assert!(allow_unsafe_call(other_ctx, me, "x").is_ok(), "another context's capture");
        assert_eq!(allow_unsafe_call(ctx, me, "x").unwrap_err().code, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
        assert!(flag.load(Ordering::Acquire), "the global capture was invalidated");
        assert_eq!(exchange(THREAD_LOCAL).unwrap(), GLOBAL);
        assert!(allow_unsafe_call(ctx, me, "x").is_ok(), "thread-local threads ignore others' captures");
        exit(t);
        let own = Arc::new(AtomicBool::new(false));
        let t = enter(ctx, me, RELAXED, Arc::clone(&own));
        assert!(allow_unsafe_call(ctx, me, "x").is_ok(), "a relaxed capture forbids nothing");
        exit(t);
        let t = enter(ctx, me, THREAD_LOCAL, Arc::clone(&own));
        assert!(allow_unsafe_call(ctx, me, "x").is_err());
        assert_eq!(exchange(RELAXED).unwrap(), THREAD_LOCAL);
        assert!(allow_unsafe_call(ctx, me, "x").is_ok(), "a relaxed thread may");
        exit(t);
        assert_eq!(exchange(GLOBAL).unwrap(), RELAXED);
        assert_eq!(exchange(7).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }
}
