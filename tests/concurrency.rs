//! Everything callable from any thread, concurrently: threads share devices, allocate, copy
//! through their own streams, synchronise on each other's events, and free, all at once; every
//! byte is checked and every resource returned.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::{Arc, Barrier};

use ascendless::error::acl_codes::ACL_SUCCESS;
use ascendless::ffi::acl_rt::context::{aclrtGetCurrentContext, aclrtSetCurrentContext};
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::event::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::stream::*;

const THREADS: usize = 6;
const ROUNDS: usize = 40;

#[test]
fn threads_share_devices_streams_and_memory() {
    let barrier = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let device = (t % 2) as i32;
                assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
                let mut stream = null_mut();
                let mut event = null_mut();
                // SAFETY: valid out-pointers.
                unsafe {
                    assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
                    assert_eq!(aclrtCreateEvent(&mut event), ACL_SUCCESS);
                }
                barrier.wait();
                for round in 0..ROUNDS {
                    let size = 4096 * (1 + (t + round) % 16);
                    let input: Vec<u8> = (0..size).map(|i| (i + t * 7 + round) as u8).collect();
                    let mut output = vec![0u8; size];
                    let mut dev: *mut c_void = null_mut();
                    // SAFETY: live buffers, synchronised before they are dropped.
                    unsafe {
                        assert_eq!(aclrtMalloc(&mut dev, size, (round % 3) as u32), ACL_SUCCESS);
                        assert_eq!(
                            aclrtMemcpyAsync(dev, size, input.as_ptr().cast(), size, 1, stream),
                            ACL_SUCCESS
                        );
                        assert_eq!(aclrtRecordEvent(event, stream), ACL_SUCCESS);
                        assert_eq!(aclrtStreamWaitEvent(null_mut(), event), ACL_SUCCESS);
                        assert_eq!(
                            aclrtMemcpyAsync(output.as_mut_ptr().cast(), size, dev, size, 2, null_mut()),
                            ACL_SUCCESS
                        );
                        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
                        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
                    }
                    assert_eq!(output, input, "thread {t} round {round}");
                }
                // Carry the context to a helper thread and use the stream from there.
                let mut ctx = null_mut();
                // SAFETY: valid out-pointer.
                assert_eq!(unsafe { aclrtGetCurrentContext(&mut ctx) }, ACL_SUCCESS);
                let (ctx_v, stream_v) = (ctx as usize, stream as usize);
                std::thread::spawn(move || {
                    assert_eq!(aclrtSetCurrentContext(ctx_v as *mut c_void), ACL_SUCCESS);
                    let mut host = null_mut();
                    // SAFETY: valid pointers; the host buffer is freed after synchronising.
                    unsafe {
                        assert_eq!(aclrtMallocHost(&mut host, 4096), ACL_SUCCESS);
                        assert_eq!(
                            aclrtMemsetAsync(host, 4096, 9, 4096, stream_v as *mut c_void),
                            ACL_SUCCESS
                        );
                        assert_eq!(aclrtSynchronizeStream(stream_v as *mut c_void), ACL_SUCCESS);
                        assert!(std::slice::from_raw_parts(host.cast::<u8>(), 4096).iter().all(|&b| b == 9));
                        assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
                    }
                })
                .join()
                .unwrap();
                assert_eq!(aclrtDestroyEvent(event), ACL_SUCCESS);
                assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
                assert_eq!(aclrtResetDevice(device), ACL_SUCCESS);
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(ascendless::runtime::memory::usage(0), 0);
    assert_eq!(ascendless::runtime::memory::usage(1), 0);
}
