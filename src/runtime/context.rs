//! Contexts: a device plus a default stream, current per thread.
//!
//! `aclrtSetDevice` makes the device's default context current on the calling thread;
//! `aclrtCreateContext` makes a new explicit context current; `aclrtSetCurrentContext` carries
//! a context to another thread. Streams belong to the context current when they were created.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::event::Event;
use super::stream::Stream;
use crate::error::rt_codes::ACL_ERROR_RT_CONTEXT_NULL;
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
    pub default_stream: Stream,
    /// Handles of the streams created in this context, destroyed with it.
    streams: Mutex<Vec<u64>>,
    alive: AtomicBool,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

impl Context {
    /// Creates a context on `device` and registers its handle.
    pub fn create(device: i32, explicit: bool) -> AclResult<Arc<Context>> {
        // Streams record their context's handle, so the handle comes first.
        let handle = CONTEXTS.reserve();
        let default_stream = Stream::new(device, handle)?;
        let ctx = Arc::new(Context {
            handle,
            device,
            explicit,
            default_stream,
            streams: Mutex::new(Vec::new()),
            alive: AtomicBool::new(true),
        });
        CONTEXTS.fill(handle, Arc::clone(&ctx));
        Ok(ctx)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Creates a stream in this context and returns its handle.
    pub fn create_stream(&self) -> AclResult<u64> {
        let stream = Stream::new(self.device, self.handle)?;
        let handle = STREAMS.insert(stream);
        sync::lock(&self.streams).push(handle);
        Ok(handle)
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
            if let Ok(s) = STREAMS.remove(h) {
                s.close(force);
            }
        }
        self.default_stream.close(force);
        let _ = CONTEXTS.remove(self.handle);
    }
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
