//! The native C API's edges: every pointer and handle argument checked, with ADXL statuses
//! and a message, never a crash. (Transfers between processes are in `adxl_tcp.rs`.)

use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};

use ascendless::error::engine_status::*;
use ascendless::ffi::engine::*;

fn last_error() -> String {
    let p = ascendless_last_error();
    assert!(!p.is_null(), "no message was left");
    // SAFETY: the library returns a NUL-terminated string valid until this thread's next read.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn engine() -> AscendlessEngine {
    let mut e = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { ascendless_engine_create(&mut e) }, ADXL_SUCCESS);
    e
}

#[test]
fn handles_are_checked() {
    // SAFETY: NULL is refused before any write.
    assert_eq!(unsafe { ascendless_engine_create(null_mut()) }, ADXL_PARAM_INVALID);
    assert!(last_error().contains("engine"));
    let e = engine();
    assert!(e as usize > 0x0000_7fff_ffff_ffff, "a handle, not an address");
    assert_eq!(ascendless_engine_destroy(e), ADXL_SUCCESS);
    assert_eq!(ascendless_engine_destroy(e), ADXL_PARAM_INVALID);
    assert_eq!(ascendless_engine_finalize(e), ADXL_PARAM_INVALID);
    assert_eq!(ascendless_engine_finalize(null_mut()), ADXL_PARAM_INVALID);
    let garbage = 0x1234usize as *mut c_void;
    assert_eq!(ascendless_engine_destroy(garbage), ADXL_PARAM_INVALID);
    assert!(last_error().contains("engine"));
}

#[test]
fn pointers_and_values_are_checked() {
    let e = engine();
    // Before Initialize: FAILED.
    assert_eq!(ascendless_engine_deregister_mem(e, 0x1234usize as *mut c_void), ADXL_FAILED);
    // SAFETY: every pointer is NULL, a valid string, or a valid array of strings.
    unsafe {
        assert_eq!(ascendless_engine_initialize(e, null(), null(), null(), 0), ADXL_PARAM_INVALID);
        assert_eq!(
            ascendless_engine_initialize(e, c"127.0.0.1".as_ptr(), null(), null(), 1),
            ADXL_PARAM_INVALID
        );
        let keys = [c"AutoConnect".as_ptr()];
        let bad_values = [null()];
        assert_eq!(
            ascendless_engine_initialize(e, c"127.0.0.1".as_ptr(), keys.as_ptr(), bad_values.as_ptr(), 1),
            ADXL_PARAM_INVALID
        );
        let values = [c"1".as_ptr()];
        assert_eq!(
            ascendless_engine_initialize(e, c"127.0.0.1".as_ptr(), keys.as_ptr(), values.as_ptr(), 1),
            ADXL_SUCCESS
        );
        let mut buf = vec![0u8; 64];
        let addr = buf.as_mut_ptr() as usize;
        let mut h = null_mut();
        assert_eq!(ascendless_engine_register_mem(e, addr, 64, 1, null_mut()), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_register_mem(e, addr, 64, 2, &mut h), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_register_mem(e, addr, 64, 1, &mut h), ADXL_SUCCESS);
        assert!(!h.is_null());
        assert_eq!(ascendless_engine_deregister_mem(e, null_mut()), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_deregister_mem(e, h), ADXL_SUCCESS);
        assert_eq!(ascendless_engine_deregister_mem(e, h), ADXL_SUCCESS, "unknown handles succeed");
        assert_eq!(ascendless_engine_connect(e, null(), 100), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_disconnect(e, null(), 100), ADXL_PARAM_INVALID);
        let name = c"127.0.0.1:9";
        assert_eq!(ascendless_engine_transfer_sync(e, name.as_ptr(), 0, null(), 1, 100), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_transfer_sync(e, null(), 0, null(), 0, 100), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_transfer_sync(e, name.as_ptr(), 2, null(), 0, 100), ADXL_PARAM_INVALID);
        let misaligned = (buf.as_ptr() as usize | 1) as *const AscendlessTransferDesc;
        assert_eq!(
            ascendless_engine_transfer_sync(e, name.as_ptr(), 0, misaligned, 1, 100),
            ADXL_PARAM_INVALID
        );
        // AutoConnect to an engine nobody serves: FAILED, not NOT_CONNECTED.
        let d = [AscendlessTransferDesc { local_addr: addr, remote_addr: 0x1000, len: 8 }];
        assert_eq!(ascendless_engine_transfer_sync(e, name.as_ptr(), 0, d.as_ptr(), 1, 500), ADXL_FAILED);
        drop(buf);
    }
    assert_eq!(ascendless_engine_destroy(e), ADXL_SUCCESS);
}

#[test]
fn the_descriptor_has_the_vendors_layout() {
    assert_eq!(std::mem::size_of::<AscendlessTransferDesc>(), 24);
    assert_eq!(std::mem::align_of::<AscendlessTransferDesc>(), 8);
    assert_eq!(std::mem::offset_of!(AscendlessTransferDesc, remote_addr), 8);
    assert_eq!(std::mem::offset_of!(AscendlessTransferDesc, len), 16);
}

#[test]
fn counters_are_checked_and_zero_outside_initialize() {
    let e = engine();
    let mut c = AscendlessEngineCounters { direct_calls: 9, ..Default::default() };
    // SAFETY: a valid out-pointer, or NULL (refused before any write).
    unsafe {
        assert_eq!(ascendless_engine_get_counters(e, null_mut()), ADXL_PARAM_INVALID);
        assert!(last_error().contains("out"));
        assert_eq!(ascendless_engine_get_counters(0x1234usize as *mut c_void, &mut c), ADXL_PARAM_INVALID);
        assert_eq!(ascendless_engine_get_counters(e, &mut c), ADXL_SUCCESS);
    }
    assert_eq!(c.direct_calls, 0);
    assert_eq!(std::mem::size_of::<AscendlessEngineCounters>(), 64);
    assert_eq!(ascendless_engine_destroy(e), ADXL_SUCCESS);
}

#[path = "common/ports.rs"]
mod ports;

#[test]
fn tagged_memory_is_found_by_the_peer_that_connected() {
    let (server, client) = (engine(), engine());
    let name = std::ffi::CString::new(format!("127.0.0.1:{}", ports::free_port())).unwrap();
    let mut buf = vec![7u8; 4096];
    let addr = buf.as_mut_ptr() as usize;
    let (mut h, mut got_addr, mut got_len, mut got_type) = (null_mut(), 0usize, 0usize, -1i32);
    // SAFETY: every pointer is NULL, a valid string or a valid out-parameter; `buf` outlives
    // its registration (deregistered below).
    unsafe {
        assert_eq!(ascendless_engine_initialize(server, name.as_ptr(), null(), null(), 0), ADXL_SUCCESS);
        assert_eq!(
            ascendless_engine_initialize(client, c"127.0.0.1".as_ptr(), null(), null(), 0),
            ADXL_SUCCESS
        );
        assert_eq!(
            ascendless_engine_register_mem_tagged(server, addr, 4096, 1, 0, &mut h),
            ADXL_PARAM_INVALID
        );
        assert!(last_error().contains("tag 0"));
        assert_eq!(
            ascendless_engine_register_mem_tagged(server, addr, 4096, 1, 5, null_mut()),
            ADXL_PARAM_INVALID
        );
        assert_eq!(
            ascendless_engine_register_mem_tagged(server, addr, 4096, 3, 5, &mut h),
            ADXL_PARAM_INVALID
        );
        assert_eq!(ascendless_engine_register_mem_tagged(server, addr, 4096, 1, 5, &mut h), ADXL_SUCCESS);
        let peer = |tag, timeout, a: *mut usize, l: *mut usize, t: *mut i32| {
            ascendless_engine_peer_region(client, name.as_ptr(), tag, timeout, a, l, t)
        };
        assert_eq!(peer(5, 1000, &mut got_addr, &mut got_len, &mut got_type), ADXL_NOT_CONNECTED);
        assert_eq!(ascendless_engine_connect(client, name.as_ptr(), 5000), ADXL_SUCCESS);
        assert_eq!(peer(5, 1000, null_mut(), &mut got_len, &mut got_type), ADXL_PARAM_INVALID);
        assert_eq!(peer(5, 0, &mut got_addr, &mut got_len, &mut got_type), ADXL_PARAM_INVALID);
        assert_eq!(peer(6, 1000, &mut got_addr, &mut got_len, &mut got_type), ADXL_PARAM_INVALID);
        assert!(last_error().contains("no memory with tag 6"), "{}", last_error());
        assert_eq!((got_addr, got_len, got_type), (0, 0, -1), "nothing written on failure");
        assert_eq!(peer(5, 1000, &mut got_addr, &mut got_len, &mut got_type), ADXL_SUCCESS);
        assert_eq!((got_addr, got_len, got_type), (addr, 4096, 1));
        assert_eq!(
            ascendless_engine_peer_region(
                client,
                null(),
                5,
                1000,
                &mut got_addr,
                &mut got_len,
                &mut got_type
            ),
            ADXL_PARAM_INVALID
        );
        assert_eq!(ascendless_engine_deregister_mem(server, h), ADXL_SUCCESS);
    }
    assert_eq!(ascendless_engine_destroy(client), ADXL_SUCCESS);
    assert_eq!(ascendless_engine_destroy(server), ADXL_SUCCESS);
    drop(buf);
}
