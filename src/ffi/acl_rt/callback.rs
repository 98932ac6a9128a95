//! `acl/acl_rt.h`: host work on a stream: `aclrtLaunchHostFunc`, the report callbacks
//! (`aclrtLaunchCallback` with `aclrtSubscribeReport` / `aclrtProcessReport` /
//! `aclrtUnSubscribeReport`) and the host-function threads (`aclrtSubscribeHostFunc` /
//! `aclrtProcessHostFunc` / `aclrtUnSubscribeHostFunc`). The model is in
//! `runtime/report.rs` and `runtime/host_task.rs`.
//!
//! A thread is named by its `pthread_t` cast to `uint64_t`, as the vendor's runtime does
//! (`std::thread::id` printed by libstdc++ is the same number).
//!
//! User callbacks are called here, inside `catch_unwind`: a Rust panic unwinding out of one
//! (through `extern "C-unwind"`) fails its task with 507000 instead of taking the process
//! down. A C++ exception may be caught the same way or abort the process (Rust leaves it
//! unspecified): C++ callbacks must not throw, as with the vendor's runtime.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::{ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::handles::raw;
use crate::runtime::context;
use crate::runtime::host_task;
use crate::runtime::report::{HOST_FUNCS, REPORTS, SharedCallback};

/// Whether an `aclrtLaunchCallback` callback holds its stream's later tasks until it has run.
#[repr(C)]
pub enum aclrtCallbackBlockType {
    /// Later tasks of the stream go on at once.
    ACL_CALLBACK_NO_BLOCK = 0,
    /// Later tasks of the stream wait until the subscribed thread has run the callback.
    ACL_CALLBACK_BLOCK = 1,
}

/// An `aclrtCallbackBlockType` value as received (any integer).
pub type CallbackBlockTypeArg = i32;

/// A callback of `aclrtLaunchCallback`, run in the thread subscribed to the stream.
#[allow(non_snake_case)]
pub type aclrtCallback = Option<unsafe extern "C-unwind" fn(userData: *mut c_void)>;

/// A host function of `aclrtLaunchHostFunc`.
pub type aclrtHostFunc = Option<unsafe extern "C-unwind" fn(args: *mut c_void)>;

/// The calling thread's identity, as the vendor's runtime takes it.
fn current_thread() -> u64 {
    // SAFETY: pthread_self has no preconditions and cannot fail.
    unsafe { libc::pthread_self() as u64 }
}

/// `f(arg)` as a core callback: an unwinding callback becomes an error.
fn bind(api: &'static str, f: unsafe extern "C-unwind" fn(*mut c_void), arg: *mut c_void) -> SharedCallback {
    // The pointer crosses threads as an address: the caller promised it stays valid until the
    // callback has run, as the vendor requires.
    let arg = arg.expose_provenance();
    Arc::new(move || {
        let arg = std::ptr::with_exposed_provenance_mut::<c_void>(arg);
        // SAFETY: `f` is the caller's function for this argument, called when its task runs
        // (once per run of a captured graph), as documented.
        catch_unwind(AssertUnwindSafe(|| unsafe { f(arg) })).map_err(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a foreign exception".to_owned());
            AclError::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("the callback of {api} did not return normally ({what}); its task failed"),
            )
        })
    })
}

/// A `timeout` of the process calls: -1 waits without limit, > 0 is milliseconds.
fn wait_limit(timeout: i32, code: aclError) -> AclResult<Option<Duration>> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(Duration::from_millis(t as u64))),
        t => Err(AclError::new(
            code,
            format!("timeout {t}: pass -1 to wait without limit or a number of milliseconds > 0"),
        )),
    }
}

/// Queues on `stream` (NULL: the default stream) a host function: when the stream reaches it,
/// `fn(args)` runs in a thread of the runtime (the stream's own worker), and the stream's later
/// tasks wait until it returns. On a stream bound with `aclrtSubscribeHostFunc`, the bound
/// thread runs it in `aclrtProcessHostFunc` instead. The function must not call the runtime
/// (synchronise, launch, free): it would wait for itself. A panic out of it fails its task
/// (507000, reported by the next synchronisation). `fn` NULL: 107000.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchHostFunc(
    stream: aclrtStream,
    r#fn: aclrtHostFunc,
    args: *mut c_void,
) -> aclError {
    acl_call("aclrtLaunchHostFunc", || {
        let f = r#fn.ok_or_else(|| AclError::new(ACL_ERROR_RT_PARAM_INVALID, "fn must not be NULL"))?;
        let s = context::stream_for_work(raw(stream))?;
        host_task::launch(&s, bind("aclrtLaunchHostFunc", f, args))
    })
}

/// Binds the thread `threadId` (its `pthread_t`) to `stream` (NULL: the default stream): the
/// stream's `aclrtLaunchCallback` callbacks run in that thread's `aclrtProcessReport`. A
/// stream has one such thread (107011 for a second); a thread serves streams of one device
/// (107012 otherwise); at most 1024 threads.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError {
    acl_call("aclrtSubscribeReport", || REPORTS.subscribe(threadId, &context::stream(raw(stream))?))
}

/// Queues on `stream` (NULL: the default stream) the callback `fn(userData)`, run once by the
/// thread subscribed to the stream (`aclrtSubscribeReport`) when the stream reaches it.
/// `ACL_CALLBACK_BLOCK` holds the stream's later tasks until the callback has run;
/// `ACL_CALLBACK_NO_BLOCK` does not. A stream without a subscribed thread: 107015. A callback
/// whose thread is unsubscribed before it runs is not run (a blocking one fails its task,
/// 107015); a panic out of one fails its task (507000).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchCallback(
    r#fn: aclrtCallback,
    userData: *mut c_void,
    blockType: CallbackBlockTypeArg,
    stream: aclrtStream,
) -> aclError {
    acl_call("aclrtLaunchCallback", || {
        let block = match blockType {
            0 => false,
            1 => true,
            other => {
                return Err(AclError::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!("blockType {other}: use ACL_CALLBACK_NO_BLOCK (0) or ACL_CALLBACK_BLOCK (1)"),
                ));
            }
        };
        let f = r#fn.ok_or_else(|| AclError::new(ACL_ERROR_RT_PARAM_INVALID, "fn must not be NULL"))?;
        let s = context::stream_for_work(raw(stream))?;
        REPORTS.launch(&s, bind("aclrtLaunchCallback", f, userData), block)
    })
}

/// In a thread bound with `aclrtSubscribeReport`: waits up to `timeout` ms (-1: without
/// limit; 0 and other negatives are 100000) for callbacks of its streams and runs every one
/// queued. Nothing to run in time: `ACL_ERROR_RT_REPORT_TIMEOUT` (507012). A thread bound to
/// no stream: `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012), also when its last stream is
/// unsubscribed while it waits. A callback that panicked: 507000, after the others ran.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtProcessReport(timeout: i32) -> aclError {
    acl_call("aclrtProcessReport", || {
        REPORTS.process(current_thread(), wait_limit(timeout, ACL_ERROR_INVALID_PARAM)?)
    })
}

/// Unbinds the thread `threadId` from `stream` (NULL: the default stream). A stream without a
/// subscribed thread: 107011; bound to another thread: 107012. Callbacks of the stream not yet
/// run are dropped (a blocking one fails its task with 107015, so the stream goes on).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnSubscribeReport(threadId: u64, stream: aclrtStream) -> aclError {
    acl_call("aclrtUnSubscribeReport", || REPORTS.unsubscribe(threadId, &*context::stream(raw(stream))?))
}

fn exe_stream(stream: aclrtStream) -> AclResult<context::StreamRef> {
    if stream.is_null() {
        return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "exeStream must not be NULL"));
    }
    context::stream(raw(stream))
}

/// Binds the thread `hostFuncThreadId` (its `pthread_t`) to `exeStream` (not NULL: 100000):
/// the stream's `aclrtLaunchHostFunc` functions then run in that thread's
/// `aclrtProcessHostFunc`, still holding the stream until they return. Same rules as
/// `aclrtSubscribeReport` (one thread per stream, one device per thread).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError {
    acl_call("aclrtSubscribeHostFunc", || HOST_FUNCS.subscribe(hostFuncThreadId, &exe_stream(exeStream)?))
}

/// In a thread bound with `aclrtSubscribeHostFunc`: waits up to `timeout` ms (-1: without
/// limit; 0 and other negatives are 107000) for host functions of its streams and runs every
/// one queued. Codes as `aclrtProcessReport`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtProcessHostFunc(timeout: i32) -> aclError {
    acl_call("aclrtProcessHostFunc", || {
        HOST_FUNCS.process(current_thread(), wait_limit(timeout, ACL_ERROR_RT_PARAM_INVALID)?)
    })
}

/// Unbinds the thread `hostFuncThreadId` from `exeStream`: its host functions run on the
/// stream's worker again; ones handed to the thread and not yet run fail their task (107015).
/// Codes as `aclrtUnSubscribeReport`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnSubscribeHostFunc(hostFuncThreadId: u64, exeStream: aclrtStream) -> aclError {
    acl_call("aclrtUnSubscribeHostFunc", || {
        HOST_FUNCS.unsubscribe(hostFuncThreadId, &*exe_stream(exeStream)?)
    })
}
