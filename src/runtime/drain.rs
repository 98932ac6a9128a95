//! Waiting for the work queued on a device's streams (`aclrtFreeWithDevSync`,
//! `aclrtFreeHostWithDevSync`).
//!
//! Each stream gets a marker task; since a stream runs its tasks in order, the marker has run
//! once everything queued before it has. Markers signal when they run *or* are dropped (a
//! stream destroyed with force discards its tasks), so the wait always ends. Unlike
//! `aclrtSynchronizeStream`, this neither reports nor clears a stream's task failures: they
//! stay for the caller's own synchronisation.

use std::sync::{Arc, Condvar, Mutex};

use super::context::{CONTEXTS, STREAMS};
use super::stream::Stream;
use crate::sync;

/// Counts markers still to run and wakes the waiter when the last has.
struct Pending {
    left: Mutex<usize>,
    done: Condvar,
}

/// Signals its [`Pending`] when dropped: after the marker task ran, or when it was discarded.
struct Marker(Arc<Pending>);

impl Drop for Marker {
    fn drop(&mut self) {
        let mut left = sync::lock(&self.0.left);
        *left -= 1;
        if *left == 0 {
            self.0.done.notify_all();
        }
    }
}

/// Waits until every task queued on `stream` before this call has run (the vendor does this
/// before copying plain host memory synchronously in an asynchronous call), leaving the
/// stream's task failures for its own synchronisation.
pub fn wait_for_stream(stream: &Stream) {
    wait_all(std::iter::once(stream));
}

/// Waits until every task queued before this call on the streams of `device` (the default
/// streams of its contexts and the streams created in them) has run. Streams created while
/// waiting are not waited for.
pub fn wait_for_streams(device: i32) {
    let contexts = CONTEXTS.live_where(|c| c.device == device && c.is_alive());
    let streams = STREAMS.live_where(|s| s.device == device);
    wait_all(contexts.iter().map(|c| &*c.default_stream).chain(streams.iter().map(|s| &**s)));
}

fn wait_all<'a>(queues: impl Iterator<Item = &'a Stream>) {
    let pending = Arc::new(Pending { left: Mutex::new(0), done: Condvar::new() });
    for stream in queues {
        *sync::lock(&pending.left) += 1;
        let marker = Marker(Arc::clone(&pending));
        // A closed stream refuses the task (and drops the marker, which counts it done).
        // Not recorded by a captured stream: what is queued on it is what this waits for.
        let _ = stream.submit_unrecorded(Box::new(move |_| {
            drop(marker);
            Ok(())
        }));
    }
    let mut left = sync::lock(&pending.left);
    while *left > 0 {
        left = sync::wait(&pending.done, left);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::error::AclError;

    #[test]
    fn the_wait_ends_after_earlier_tasks_and_leaves_their_errors() {
        let s = Stream::new(0, 1).unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        s.submit(Box::new(move |_| {
            std::thread::sleep(Duration::from_millis(50));
            r.store(true, Ordering::SeqCst);
            Err(AclError::new(1, "task failed"))
        }))
        .unwrap();
        wait_for_stream(&s);
        assert!(ran.load(Ordering::SeqCst));
        assert_eq!(
            s.synchronize(None).unwrap_err().message,
            "task failed",
            "the error is left for the caller"
        );
    }

    #[test]
    fn a_stream_that_drops_its_tasks_does_not_hold_the_wait() {
        let s = Arc::new(Stream::new(0, 1).unwrap());
        s.submit(Box::new(|ctx| {
            while !ctx.cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        let closer = Arc::clone(&s);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            closer.close(true);
        });
        let started = Instant::now();
        wait_for_stream(&s);
        assert!(started.elapsed() < Duration::from_secs(5));
        t.join().unwrap();
        // A closed stream refuses the marker: no wait at all.
        wait_for_stream(&s);
    }
}
