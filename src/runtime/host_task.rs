//! `aclrtLaunchHostFunc`: a host function as one more task of a stream.
//!
//! The vendor runs host functions in a thread the runtime creates, and a host function holds
//! its stream's later tasks until it returns. Here that thread is the stream's own worker: the
//! function runs in order with the stream's other tasks, with no hand-off to another thread
//! (the vendor's one callback thread per context would add one, and would let a slow function
//! of one stream delay the others). A stream bound to a thread with `aclrtSubscribeHostFunc`
//! has its host functions run by that thread in `aclrtProcessHostFunc` instead, still
//! holding the stream until they return.
//!
//! A function that fails (a panic caught at the FFI edge) fails its task: the stream's next
//! synchronisation reports it, as any task failure.

use std::sync::Arc;

use super::report::{HOST_FUNCS, Handed, SharedCallback, key};
use super::stream::Stream;
use super::task::TaskInfo;
use crate::error::AclResult;

/// Queues `f` on `stream` (recorded when the stream is captured: each replay runs it again,
/// handed to the thread subscribed to the stream it was captured on, if any).
pub fn launch(stream: &Stream, f: SharedCallback) -> AclResult<()> {
    let k = key(stream);
    stream.submit_op(TaskInfo::plain("host function"), move |ctx| {
        let f = Arc::clone(&f);
        match HOST_FUNCS.hand_over(k, Box::new(move || f()), true, ctx) {
            Handed::Done(r) => r,
            Handed::NoSubscriber(f) => f(),
        }
    })
}
