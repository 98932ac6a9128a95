//! Stream memory operations: `aclrtValueWrite` stores a 64-bit word when the stream reaches it,
//! `aclrtValueWait` holds the stream's later tasks until a word satisfies a comparison. The
//! word may be IPC-imported memory, so two processes synchronise through it; sleeping is the
//! shared futex of [`crate::sys::word`], as notify cells do.
//!
//! Rules (the vendor's, and our choices where it is silent):
//! - The word is 8 bytes of device memory (`aclrtMalloc`, or imported by `aclrtIpcMemImportByKey`
//!   or mapped physical memory), 8-byte aligned: other memory, a misaligned or partial word is
//!   107000. NULL is 100000 (checked by the FFI).
//! - `aclrtValueWrite` flag is reserved: 0 only (107000). `aclrtValueWait` flag is one of the
//!   four `ACL_STREAM_WAIT_VALUE_*` comparisons (107000 otherwise).
//! - A wait ends when its stream is aborted or destroyed (the task fails, as event waits do) and,
//!   when `aclrtSetOpWaitTimeout` set a bound, after it (107019). A word changed by a copy rather
//!   than `aclrtValueWrite` is seen within [`SLICE`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::event::op_wait_timeout;
use super::memory::{self, Placement};
use super::stream::{Stream, TaskCtx};
use super::task::{Op, Params, TaskInfo, TaskType};
use crate::error::rt_codes::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_WAIT_TIMEOUT,
};
use crate::error::{AclError, AclResult};
use crate::sys::sleepers;
use crate::sys::word::SharedWord;

pub const WAIT_GEQ: u32 = 0;
pub const WAIT_EQ: u32 = 1;
pub const WAIT_AND: u32 = 2;
pub const WAIT_NOR: u32 = 3;

/// Longest sleep between two looks at the word.
pub const SLICE: Duration = Duration::from_millis(5);

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

/// Whether `current` satisfies comparison `flag` against `value` (the vendor's definitions).
pub fn satisfied(flag: u32, current: u64, value: u64) -> bool {
    match flag {
        WAIT_GEQ => (current.wrapping_sub(value) as i64) >= 0,
        WAIT_EQ => current == value,
        WAIT_AND => current & value != 0,
        _ => !(current | value) != 0,
    }
}

/// The word at `addr`, checked.
pub fn word_at(addr: usize) -> AclResult<SharedWord> {
    if addr % 8 != 0 {
        return Err(invalid(format!("devAddr {addr:#x} is not 8-byte aligned")));
    }
    let b = memory::backing(addr)
        .ok_or_else(|| invalid(format!("devAddr {addr:#x} is not device memory of this process")))?;
    if !matches!(b.placement, Placement::Device(_)) {
        return Err(invalid(format!("devAddr {addr:#x} is not device memory (use aclrtMalloc)")));
    }
    let span = memory::runtime_span(addr, 8).ok_or_else(|| {
        invalid(format!("the 8 bytes at devAddr {addr:#x} run past the end of the allocation"))
    })?;
    // Sleepers are counted where every process using the word counts them (see sys::sleepers).
    let offset = b.file_offset + (addr - b.start) as u64;
    let counted = match (sleepers::for_file(&b.fd), b.fd.id()) {
        (Some(page), Ok(id)) => SharedWord::counted(span, page, id, offset),
        _ => SharedWord::new(span),
    };
    counted.ok_or_else(|| invalid(format!("devAddr {addr:#x} is not a writable word")))
}

/// `aclrtValueWrite`: queues the store of `value` at `addr` on `stream` (recorded when the
/// stream is captured).
pub fn write(addr: usize, value: u64, flag: u32, stream: &Stream) -> AclResult<()> {
    if flag != 0 {
        return Err(invalid(format!("flag {flag:#x} is reserved: pass 0")));
    }
    let (info, op) = write_op(addr, value)?;
    stream.submit_any(info, op)
}

/// The store of `value` at `addr` as a recordable task (also what `aclmdlRITaskSetParams`
/// rebuilds a recorded one with).
pub fn write_op(addr: usize, value: u64) -> AclResult<(TaskInfo, Op)> {
    let word = word_at(addr)?;
    let info = TaskInfo {
        kind: TaskType::ValueWrite,
        name: "value write",
        params: Params::ValueWrite { addr, value },
    };
    Ok((
        info,
        Op::Run(Arc::new(move |_: &TaskCtx| {
            word.store(value);
            Ok(())
        })),
    ))
}

/// `aclrtValueWait`: queues on `stream` a wait until the word at `addr` satisfies `flag`.
pub fn wait(addr: usize, value: u64, flag: u32, stream: &Stream) -> AclResult<()> {
    let (info, op) = wait_op(addr, value, flag)?;
    stream.submit_any(info, op)
}

/// The wait of [`wait`] as a recordable task.
pub fn wait_op(addr: usize, value: u64, flag: u32) -> AclResult<(TaskInfo, Op)> {
    if flag > WAIT_NOR {
        return Err(invalid(format!(
            "flag {flag:#x}: use ACL_STREAM_WAIT_VALUE_GEQ (0), _EQ (1), _AND (2) or _NOR (3)"
        )));
    }
    let word = word_at(addr)?;
    let bound = op_wait_timeout();
    let info = TaskInfo {
        kind: TaskType::ValueWait,
        name: "value wait",
        params: Params::ValueWait { addr, value, flag },
    };
    Ok((info, Op::Run(Arc::new(move |ctx: &TaskCtx| wait_in_task(&word, value, flag, bound, ctx)))))
}

fn wait_in_task(
    word: &SharedWord,
    value: u64,
    flag: u32,
    bound: Option<Duration>,
    ctx: &TaskCtx,
) -> AclResult<()> {
    // A short spin (`sync::SPIN`), then the kernel (see `Cell::wait_take`).
    if crate::sync::spin_until(crate::sys::futex::spin_for(crate::sync::SPIN), || {
        satisfied(flag, word.load(), value)
    }) {
        return Ok(());
    }
    let deadline = bound.map(|b| Instant::now() + b);
    loop {
        let seen = word.load();
        if satisfied(flag, seen, value) {
            return Ok(());
        }
        if ctx.cancelled() {
            return Err(AclError::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                "value wait cancelled: stream destroyed or aborted",
            ));
        }
        let mut slice = SLICE;
        if let Some(d) = deadline {
            let now = Instant::now();
            if now >= d {
                return Err(AclError::new(
                    ACL_ERROR_RT_WAIT_TIMEOUT,
                    format!(
                        "value wait not satisfied within the aclrtSetOpWaitTimeout bound ({} s)",
                        bound.unwrap_or_default().as_secs()
                    ),
                ));
            }
            slice = slice.min(d - now);
        }
        word.sleep(seen, slice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_comparisons_are_the_vendors() {
        assert!(satisfied(WAIT_GEQ, 5, 5) && satisfied(WAIT_GEQ, 6, 5) && !satisfied(WAIT_GEQ, 4, 5));
        assert!(satisfied(WAIT_GEQ, 1, u64::MAX), "wrap-around: 1 comes after u64::MAX");
        assert!(satisfied(WAIT_EQ, 7, 7) && !satisfied(WAIT_EQ, 7, 8));
        assert!(satisfied(WAIT_AND, 0b110, 0b010) && !satisfied(WAIT_AND, 0b100, 0b010));
        assert!(satisfied(WAIT_NOR, 0, 0) && !satisfied(WAIT_NOR, u64::MAX, 0));
        assert!(satisfied(WAIT_NOR, 0b01, 0b10) && !satisfied(WAIT_NOR, !0b1, 0b1));
    }

    #[test]
    fn a_write_on_one_stream_releases_a_wait_on_another_and_an_abort_ends_a_wait() {
        let limits = memory::Limits { capacity: u64::MAX, strict: false };
        let addr = memory::alloc_device(0, 4096, 0, &limits).unwrap();
        let a = Stream::new(0, 1).unwrap();
        let b = Stream::new(0, 1).unwrap();
        wait(addr, 3, WAIT_EQ, &a).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(a.pending(), 1, "the wait holds the stream");
        write(addr, 3, 0, &b).unwrap();
        a.synchronize(Some(Duration::from_secs(5))).unwrap();
        wait(addr, 4, WAIT_GEQ, &a).unwrap();
        a.abort(Duration::from_secs(5)).unwrap();
        assert_eq!(write(addr, 1, 1, &b).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(wait(addr, 1, 4, &b).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(wait(addr + 4, 1, 0, &b).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
        memory::free(addr, memory::AllocKind::Device).unwrap();
        assert_eq!(wait(addr, 1, 0, &b).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "freed memory");
    }
}
