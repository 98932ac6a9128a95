//! aclrtMemcpy, aclrtMemcpyAsync + synchronise and the cost of one stream task.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::{Arc, Condvar, Mutex};

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::event::{aclrtCreateEvent, aclrtDestroyEvent, aclrtRecordEvent};
use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtMalloc, aclrtMemcpy, aclrtMemcpyAsync};
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};

use crate::measure::{Figures, timed};
use crate::report::{Row, human};

const H2D: i32 = 1;
const D2H: i32 = 2;

fn check(rc: i32, what: &str) {
    assert_eq!(rc, ACL_SUCCESS, "{what} failed with {rc}");
}

/// A pointer that the measuring thread may use (the buffers outlive the measurement).
#[derive(Clone, Copy)]
struct P(*mut c_void);
// SAFETY: only handed to the one measuring thread while the owner waits for it.
unsafe impl Send for P {}
// SAFETY: as above.
unsafe impl Sync for P {}

impl P {
    /// (A method, so that closures capture the whole `P`, not its raw field.)
    fn p(self) -> *mut c_void {
        self.0
    }
}

/// The least a stream task can cost: hand a job to another thread and wait for it.
fn handoff(duration: f64) -> Figures {
    type Slot = (Mutex<(u64, u64)>, Condvar);
    let shared: Arc<Slot> = Arc::new((Mutex::new((0, 0)), Condvar::new()));
    let worker = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (lock, cv) = &*shared;
            let mut g = lock.lock().unwrap();
            loop {
                while g.1 == g.0 {
                    g = cv.wait(g).unwrap();
                }
                if g.0 == u64::MAX {
                    return;
                }
                g.1 = g.0;
                cv.notify_all();
            }
        })
    };
    let f = timed("cross-thread hand-off", 1, duration, |_| {
        let shared = &shared;
        move || {
            let (lock, cv) = &**shared;
            let mut g = lock.lock().unwrap();
            g.0 += 1;
            cv.notify_all();
            while g.1 != g.0 {
                g = cv.wait(g).unwrap();
            }
            0
        }
    });
    shared.0.lock().unwrap().0 = u64::MAX;
    shared.1.notify_all();
    worker.join().unwrap();
    f
}

pub fn rows(size: usize, duration: f64, baseline: bool) -> Vec<Row> {
    let d = duration / if baseline { 6.0 } else { 4.0 };
    check(aclrtSetDevice(0), "aclrtSetDevice");
    let mut stream = null_mut();
    let mut event = null_mut();
    let mut dev: *mut c_void = null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        check(aclrtCreateStream(&mut stream), "aclrtCreateStream");
        check(aclrtCreateEvent(&mut event), "aclrtCreateEvent");
        check(aclrtMalloc(&mut dev, size, 2), "aclrtMalloc");
    }
    let src = vec![7u8; size];
    let mut dst = vec![0u8; size];
    let (dev, stream_p, event_p) = (P(dev), P(stream), P(event));
    let (srcp, dstp) = (P(src.as_ptr() as *mut c_void), P(dst.as_mut_ptr().cast()));
    let base = if baseline { vec![crate::modes::baseline::memcpy(size, 1, d)] } else { vec![] };
    let sz = human(size);
    // All three copies: live buffers of `size` bytes, synchronised before they go.
    let h2d = timed(&format!("aclrtMemcpy H2D {sz}"), 1, d, |_| {
        check(aclrtSetDevice(0), "aclrtSetDevice");
        move || {
            // SAFETY: `src` and the device buffer hold `size` bytes and outlive the call.
            check(unsafe { aclrtMemcpy(dev.p(), size, srcp.p(), size, H2D) }, "aclrtMemcpy");
            size as u64
        }
    });
    let d2h = timed(&format!("aclrtMemcpy D2H {sz}"), 1, d, |_| {
        check(aclrtSetDevice(0), "aclrtSetDevice");
        move || {
            // SAFETY: `dst` and the device buffer hold `size` bytes and outlive the call.
            check(unsafe { aclrtMemcpy(dstp.p(), size, dev.p(), size, D2H) }, "aclrtMemcpy");
            size as u64
        }
    });
    let asy = timed(&format!("aclrtMemcpyAsync+sync H2D {sz}"), 1, d, |_| {
        check(aclrtSetDevice(0), "aclrtSetDevice");
        move || {
            check(
                // SAFETY: `src` and the device buffer hold `size` bytes; the stream is synchronised
                // before this closure returns.
                unsafe { aclrtMemcpyAsync(dev.p(), size, srcp.p(), size, H2D, stream_p.p()) },
                "aclrtMemcpyAsync",
            );
            check(aclrtSynchronizeStream(stream_p.p()), "aclrtSynchronizeStream");
            size as u64
        }
    });
    let task = timed("stream task (record event + sync)", 1, d, |_| {
        check(aclrtSetDevice(0), "aclrtSetDevice");
        move || {
            check(aclrtRecordEvent(event_p.p(), stream_p.p()), "aclrtRecordEvent");
            check(aclrtSynchronizeStream(stream_p.p()), "aclrtSynchronizeStream");
            0
        }
    });
    let hand = if baseline { vec![handoff(d)] } else { vec![] };
    check(aclrtFree(dev.p()), "aclrtFree");
    check(aclrtDestroyEvent(event), "aclrtDestroyEvent");
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
    check(aclrtResetDevice(0), "aclrtResetDevice");
    drop((src, dst));
    vec![
        Row { subject: h2d, baselines: base.clone() },
        Row { subject: d2h, baselines: base.clone() },
        Row { subject: asy, baselines: base },
        Row { subject: task, baselines: hand },
    ]
}
