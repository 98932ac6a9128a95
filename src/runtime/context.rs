//! Contexts: a device plus a default stream, current per thread.
//!
//! `aclrtSetDevice` makes the device's default context current on the calling thread;
//! `aclrtCreateContext` makes a new explicit context current; `aclrtSetCurrentContext` carries
//! a context to another thread. Streams belong to the context current when they were created.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::event::Event;
use super::lifecycle_callbacks::{stream_changed, stream_state};
use super::stream::Stream;
use crate::error::rt_codes::{ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_NO_STREAM_RESOURCE};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::sync;

crate::handle_kind!(pub static CONTEXTS: Context => Context, AclError);
crate::handle_kind!(pub static STREAMS: Stream => Stream, AclError);
crate::handle_kind!(pub static EVENTS: Event => Event, AclError);

pub struct Context {
    /// This context's handle value.
    pub handle: u64,
    pub device: i32,
    /// Created by `aclrtCreateContext` (true) or the device's default context (false).
    pub explicit: bool,
    pub default_stream: Arc<Stream>,
    /// The default stream's handle (`aclrtCtxGetCurrentDefaultStream`); it cannot be destroyed.
    pub default_handle: u64,
    /// The failure mode every stream of this context shares (`aclrtSetStreamFailureMode`).
    failure_mode: Arc<AtomicU64>,
    /// Handles of the streams created in this context, destroyed with it.
    streams: Mutex<Vec<u64>>,
    alive: AtomicBool,
}

/// Every context created and not destroyed, for what spans a device (`aclrtSynchronizeDevice`).
static LIVE: Mutex<Vec<Weak<Context>>> = Mutex::new(Vec::new());

thread_local! {
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

impl Context {
    /// Creates a context on `device` and registers its handle.
    pub fn create(device: i32, explicit: bool) -> AclResult<Arc<Context>> {
        // Streams record their context's handle, so the handle comes first.
        let handle = CONTEXTS.reserve();
        let failure_mode = Arc::new(AtomicU64::new(0));
        let default_stream = Arc::new(Stream::with_config(device, handle, 0, 0, Arc::clone(&failure_mode))?);
        let default_handle = STREAMS.insert_arc(Arc::clone(&default_stream));
        default_stream.handle.store(default_handle, Ordering::Release);
        let ctx = Arc::new(Context {
            handle,
            device,
            explicit,
            default_stream,
            default_handle,
            failure_mode,
            streams: Mutex::new(Vec::new()),
            alive: AtomicBool::new(true),
        });
        CONTEXTS.fill(handle, Arc::clone(&ctx));
        let mut live = sync::lock(&LIVE);
        live.retain(|c| c.strong_count() > 0);
        live.push(Arc::downgrade(&ctx));
        Ok(ctx)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Creates a stream in this context with `ACL_STREAM_*` `flags` (checked by the caller)
    /// and `priority`, and returns its handle; 207008 once the device has `limit` streams
    /// (the product's, default streams included).
    pub fn create_stream(&self, flags: u32, priority: u32, limit: u32) -> AclResult<u64> {
        // Counted and created under one lock, so racing creations cannot pass the limit.
        let _guard = sync::lock(&CREATING);
        let live = streams_on(self.device);
        if live >= limit {
            return Err(AclError::new(
                ACL_ERROR_RT_NO_STREAM_RESOURCE,
                format!(
                    "device {} already has {live} streams, the product's limit; destroy some first",
                    self.device
                ),
            ));
        }
        let stream =
            Stream::with_config(self.device, self.handle, flags, priority, Arc::clone(&self.failure_mode))?;
        let handle = STREAMS.insert(stream);
        if let Ok(s) = STREAMS.get(handle) {
            s.handle.store(handle, Ordering::Release);
        }
        sync::lock(&self.streams).push(handle);
        drop(_guard);
        stream_changed(handle, stream_state::CREATE_POST);
        Ok(handle)
    }

    /// Tells the stream state callbacks that this context's default stream exists. The
    /// creator calls it once it holds no lock, as callbacks may call the runtime.
    pub fn announce(&self) {
        stream_changed(self.default_handle, stream_state::CREATE_POST);
    }

    /// Forgets a destroyed stream's handle.
    pub fn forget_stream(&self, handle: u64) {
        sync::lock(&self.streams).retain(|&h| h != handle);
    }

    /// Destroys the context: its streams (running their pending tasks first unless `force`)
    /// and its handle. Threads that still have it current get 107002 from then on.
    pub fn destroy(&self, force: bool) {
        if !self.alive.swap(false, Ordering::AcqRel) {
            return;
        }
        let streams = std::mem::take(&mut *sync::lock(&self.streams));
        for h in streams {
            stream_changed(h, stream_state::DESTROY_PRE);
            if let Ok(s) = STREAMS.remove(h) {
                super::limits::forget_stream(s.id);
                s.close(force);
            }
        }
        stream_changed(self.default_handle, stream_state::DESTROY_PRE);
        let _ = STREAMS.remove(self.default_handle);
        super::limits::forget_stream(self.default_stream.id);
        self.default_stream.close(force);
        super::sys_params::forget_context(self.handle);
        let _ = CONTEXTS.remove(self.handle);
        sync::lock(&LIVE).retain(|c| c.strong_count() > 0 && !std::ptr::eq(c.as_ptr(), self));
    }

    /// This context's streams: the default one and those created in it.
    fn streams(self: &Arc<Self>) -> Vec<StreamRef> {
        let created = sync::lock(&self.streams).clone();
        let mut all = vec![StreamRef::Default(Arc::clone(self))];
        all.extend(created.into_iter().filter_map(|h| STREAMS.get(h).ok()).map(StreamRef::Created));
        all
    }
}

/// Held while a stream is counted and created.
static CREATING: Mutex<()> = Mutex::new(());

fn live_on(device: i32) -> Vec<Arc<Context>> {
    (sync::lock(&LIVE).iter())
        .filter_map(Weak::upgrade)
        .filter(|c| c.device == device && c.is_alive())
        .collect()
}

/// Streams on `device` now, every context's default stream included.
pub fn streams_on(device: i32) -> u32 {
    live_on(device).iter().map(|c| 1 + sync::lock(&c.streams).len() as u32).sum()
}

/// `aclrtDeviceTaskAbort`: aborts every stream of every context on `device` (queued tasks
/// discarded, running ones stopped, synchronising threads released with 107023), waiting at
/// most `timeout` in all for the running tasks to end (107019 after).
pub fn abort_device(device: i32, timeout: Duration) -> AclResult<()> {
    let deadline = Instant::now() + timeout;
    let streams: Vec<StreamRef> = live_on(device).iter().flat_map(Context::streams).collect();
    let mut first_error = None;
    for s in &streams {
        match s.abort(deadline.saturating_duration_since(Instant::now())) {
            // A stream destroyed meanwhile has nothing left to abort.
            Err(e) if e.code == crate::error::rt_codes::ACL_ERROR_RT_INVALID_HANDLE => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
            Ok(()) => {}
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// `aclrtSynchronizeDevice(WithTimeout)`: waits until every stream of every context on
/// `device` has run the tasks queued before this call; `timeout` bounds the whole wait
/// (507046 after). Reports the first failure found (a task's error, an abort's 107023), after
/// waiting for the other streams all the same.
pub fn synchronize_device(device: i32, timeout: Option<Duration>) -> AclResult<()> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let contexts = live_on(device);
    let streams: Vec<StreamRef> = contexts.iter().flat_map(Context::streams).collect();
    let mut first_error = None;
    for s in &streams {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        match s.synchronize(left) {
            Ok(()) => {}
            Err(e) if e.code == crate::error::rt_codes::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT => {
                return Err(AclError::new(
                    e.code,
                    format!(
                        "device {device} not idle after {} ms: a stream of it still has tasks to run",
                        timeout.unwrap_or_default().as_millis()
                    ),
                ));
            }
            // A stream destroyed meanwhile has nothing left to wait for.
            Err(e) if e.code == crate::error::rt_codes::ACL_ERROR_RT_INVALID_HANDLE => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The calling thread's current context, or 107002 (also while the thread is being torn down).
pub fn current() -> AclResult<Arc<Context>> {
    CURRENT.try_with(|c| c.borrow().clone()).ok().flatten().filter(|c| c.is_alive()).ok_or_else(|| {
        AclError::new(
            ACL_ERROR_RT_CONTEXT_NULL,
            "no current context on this thread: call aclrtSetDevice or aclrtSetCurrentContext first",
        )
    })
}

/// The calling thread's current device, or 107002.
pub fn current_device() -> AclResult<i32> {
    current().map(|c| c.device)
}

pub fn set_current(ctx: Option<Arc<Context>>) {
    let _ = CURRENT.try_with(|c| *c.borrow_mut() = ctx);
}

/// Clears the calling thread's current context if it is `handle`.
pub fn clear_current_if(handle: u64) {
    let _ = CURRENT.try_with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_some_and(|ctx| ctx.handle == handle) {
            *c = None;
        }
    });
}

/// A stream argument resolved: NULL is the current context's default stream.
pub enum StreamRef {
    Default(Arc<Context>),
    Created(Arc<Stream>),
}

impl std::ops::Deref for StreamRef {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        match self {
            StreamRef::Default(c) => &c.default_stream,
            StreamRef::Created(s) => s,
        }
    }
}

/// Resolves a stream handle (0: the current context's default stream).
pub fn stream(raw: u64) -> AclResult<StreamRef> {
    if raw == 0 {
        return current().map(StreamRef::Default);
    }
    Stream::resolve(raw, "stream").map(StreamRef::Created)
}

/// Resolves a stream that work is about to be queued on: it must belong to the current
/// context (else 107003), as on the device.
pub fn stream_for_work(raw: u64) -> AclResult<StreamRef> {
    let ctx = current()?;
    let s = stream(raw)?;
    if s.context != ctx.handle {
        return Err(AclError::new(
            crate::error::rt_codes::ACL_ERROR_RT_STREAM_CONTEXT,
            "the stream belongs to another context than the current one",
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_count_against_the_limit_default_streams_included() {
        // A device number no other test uses.
        let device = 57;
        let ctx = Context::create(device, true).unwrap();
        assert_eq!(streams_on(device), 1, "the default stream counts");
        let h = ctx.create_stream(0, 2, 2).unwrap();
        assert_eq!(STREAMS.get(h).unwrap().attrs.priority.load(Ordering::Acquire), 2);
        assert_eq!(ctx.create_stream(0, 0, 2).unwrap_err().code, ACL_ERROR_RT_NO_STREAM_RESOURCE);
        assert_eq!(streams_on(device), 2);
        ctx.destroy(true);
        assert_eq!(streams_on(device), 0);
        assert!(STREAMS.get(ctx.default_handle).is_err(), "the default stream's handle goes with it");
    }
}
