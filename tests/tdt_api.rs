//! TDT channels (`acl/acl_tdt.h`) and queues with routes (`acl/acl_tdt_queue.h`) through the C
//! entry points: bytes arrive exactly, capacities and timeouts answer the vendor's codes, a stop
//! wakes a blocked thread, routes forward, and bad arguments are codes with messages. Each test
//! uses channel and queue names of its own, and the queue tests a device of their own.

use std::ffi::{CStr, CString};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl::aclGetRecentErrMsg;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_tdt::*;
use ascendless::ffi::acl_tdt_queue::*;

const ACL_FLOAT: i32 = 0;
const ACL_INT32: i32 = 3;
const TENSOR: i32 = 0;
const END_OF_SEQUENCE: i32 = 1;

fn recent() -> String {
    let p = aclGetRecentErrMsg();
    assert!(!p.is_null(), "a failed call leaves a message");
    // SAFETY: a NUL-terminated message owned by the runtime, read at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn channel(name: &str, capacity: usize) -> *mut acltdtChannelHandle {
    let name = CString::new(name).unwrap();
    // SAFETY: a NUL-terminated name.
    let h = unsafe { acltdtCreateChannelWithCapacity(0, name.as_ptr(), capacity) };
    assert!(!h.is_null());
    h
}

/// A dataset of one float tensor over `values` (dims 1 x n), as the vendor's samples make it.
fn dataset_of(values: &mut [f32]) -> *mut acltdtDataset {
    let dims = [1i64, values.len() as i64];
    // SAFETY: dims and data are valid for the item's life (the callers keep them).
    let item = unsafe {
        acltdtCreateDataItem(
            TENSOR,
            dims.as_ptr(),
            2,
            ACL_FLOAT,
            values.as_mut_ptr().cast(),
            size_of_val(values),
        )
    };
    assert!(!item.is_null());
    let d = acltdtCreateDataset();
    assert_eq!(acltdtAddDataItem(d, item), ACL_SUCCESS);
    d
}

fn destroy_with_items(d: *mut acltdtDataset) {
    for i in 0..acltdtGetDatasetSize(d) {
        assert_eq!(acltdtDestroyDataItem(acltdtGetDataItem(d, i)), ACL_SUCCESS);
    }
    assert_eq!(acltdtDestroyDataset(d), ACL_SUCCESS);
}

fn floats(item: *const acltdtDataItem) -> Vec<f32> {
    let (p, size) = (acltdtGetDataAddrFromItem(item), acltdtGetDataSizeFromItem(item));
    // SAFETY: a received item's own copy of `size` bytes of floats.
    unsafe { std::slice::from_raw_parts(p.cast::<f32>(), size / 4) }.to_vec()
}

#[test]
fn a_channel_carries_an_exact_copy_of_what_was_sent() {
    let tx = channel("tdt-api-exact", 4);
    let mut values = [1.5f32, -2.0, 3.25, 4.0];
    let sent = dataset_of(&mut values);
    assert_eq!(acltdtSendTensor(tx, sent, 1000), ACL_SUCCESS);
    // The send copied: changing the sender's memory now changes nothing received.
    values[0] = 99.0;
    std::hint::black_box(&values);
    let mut size = 0usize;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { acltdtQueryChannelSize(tx, &mut size) }, ACL_SUCCESS);
    assert_eq!(size, 1);

    // A second handle to the same (device, name) is the same queue.
    let rx = channel("tdt-api-exact", 4);
    let got = acltdtCreateDataset();
    assert_eq!(acltdtReceiveTensor(rx, got, 1000), ACL_SUCCESS);
    assert_eq!(acltdtGetDatasetSize(got), 1);
    let item = acltdtGetDataItem(got, 0);
    assert_eq!(acltdtGetTensorTypeFromItem(item), TENSOR);
    assert_eq!(acltdtGetDataTypeFromItem(item), ACL_FLOAT);
    assert_eq!(acltdtGetDimNumFromItem(item), 2);
    let mut dims = [0i64; 4];
    // SAFETY: room for 4 dims.
    assert_eq!(unsafe { acltdtGetDimsFromItem(item, dims.as_mut_ptr(), 4) }, ACL_SUCCESS);
    assert_eq!(dims[..2], [1, 4]);
    assert_eq!(floats(item), [1.5, -2.0, 3.25, 4.0]);
    let (mut num, mut id) = (9usize, 9usize);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { acltdtGetSliceInfoFromItem(item, &mut num, &mut id) }, ACL_SUCCESS);
    assert_eq!((num, id), (0, 0));
    // SAFETY: the name lives as long as the dataset.
    assert_eq!(unsafe { CStr::from_ptr(acltdtGetDatasetName(got)) }.to_bytes(), b"");
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { acltdtQueryChannelSize(tx, &mut size) }, ACL_SUCCESS);
    assert_eq!(size, 0);

    // A received item belongs to its dataset; the dataset takes no more items.
    assert_eq!(acltdtDestroyDataItem(item), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtAddDataItem(got, acltdtGetDataItem(sent, 0)), ACL_ERROR_FEATURE_UNSUPPORTED);
    // Receiving again into it replaces its items; into a dataset of the caller's items: 100000.
    assert_eq!(acltdtSendTensor(tx, sent, 0), ACL_SUCCESS);
    assert_eq!(acltdtReceiveTensor(rx, sent, 0), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtReceiveTensor(rx, got, 0), ACL_SUCCESS);
    assert_eq!(acltdtGetTensorTypeFromItem(item), -1, "the first receive's item went");
    assert_eq!(floats(acltdtGetDataItem(got, 0))[0], 99.0);

    // A control item carries no data.
    // SAFETY: no dims, no data.
    let eos = unsafe { acltdtCreateDataItem(END_OF_SEQUENCE, null(), 0, ACL_FLOAT, null_mut(), 0) };
    let d = acltdtCreateDataset();
    assert_eq!(acltdtAddDataItem(d, eos), ACL_SUCCESS);
    assert_eq!(acltdtSendTensor(tx, d, 0), ACL_SUCCESS);
    assert_eq!(acltdtReceiveTensor(rx, got, 0), ACL_SUCCESS);
    let e = acltdtGetDataItem(got, 0);
    assert_eq!((acltdtGetTensorTypeFromItem(e), acltdtGetDataTypeFromItem(e)), (END_OF_SEQUENCE, -1));
    assert_eq!(acltdtGetDataSizeFromItem(e), 0);

    destroy_with_items(d);
    assert_eq!(acltdtDestroyDataset(got), ACL_SUCCESS);
    destroy_with_items(sent);
    assert_eq!(acltdtDestroyChannel(rx), ACL_SUCCESS);
    assert_eq!(acltdtDestroyChannel(tx), ACL_SUCCESS);
    assert_eq!(acltdtDestroyChannel(tx), ACL_ERROR_RT_INVALID_HANDLE, "destroyed twice");
}

#[test]
fn a_full_channel_answers_queue_full_after_its_timeout() {
    let ch = channel("tdt-api-capacity", 2);
    let mut v = [1.0f32];
    let d = dataset_of(&mut v);
    assert_eq!(acltdtSendTensor(ch, d, 0), ACL_SUCCESS);
    assert_eq!(acltdtSendTensor(ch, d, 0), ACL_SUCCESS);
    assert_eq!(acltdtSendTensor(ch, d, 0), ACL_ERROR_RT_QUEUE_FULL);
    assert!(recent().contains("full"));
    let start = Instant::now();
    assert_eq!(acltdtSendTensor(ch, d, 60), ACL_ERROR_RT_QUEUE_FULL);
    assert!(start.elapsed() >= Duration::from_millis(60), "waited its timeout");
    assert_eq!(acltdtCleanChannel(ch), ACL_SUCCESS);
    let mut size = 9usize;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { acltdtQueryChannelSize(ch, &mut size) }, ACL_SUCCESS);
    assert_eq!(size, 0);
    assert_eq!(acltdtSendTensor(ch, d, 0), ACL_SUCCESS);
    destroy_with_items(d);
    assert_eq!(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

#[test]
fn an_empty_channel_answers_queue_empty_after_its_timeout() {
    let ch = channel("tdt-api-empty", 2);
    let d = acltdtCreateDataset();
    assert_eq!(acltdtReceiveTensor(ch, d, 0), ACL_ERROR_RT_QUEUE_EMPTY);
    let start = Instant::now();
    assert_eq!(acltdtReceiveTensor(ch, d, 50), ACL_ERROR_RT_QUEUE_EMPTY);
    assert!(start.elapsed() >= Duration::from_millis(50));
    assert_eq!(acltdtGetDatasetSize(d), 0);
    assert_eq!(acltdtDestroyDataset(d), ACL_SUCCESS);
    assert_eq!(acltdtDestroyChannel(ch), ACL_SUCCESS);
}

#[test]
fn a_stop_wakes_a_blocked_receiver_and_a_blocked_sender() {
    let ch = channel("tdt-api-stop", 2) as usize;
    let receiver = std::thread::spawn(move || {
        let d = acltdtCreateDataset();
        let r = acltdtReceiveTensor(ch as *const _, d, -1);
        acltdtDestroyDataset(d);
        r
    });
    let full = channel("tdt-api-stop-full", 2) as usize;
    let mut v = [1.0f32];
    let d = dataset_of(&mut v) as usize;
    assert_eq!(acltdtSendTensor(full as *const _, d as *const _, 0), ACL_SUCCESS);
    assert_eq!(acltdtSendTensor(full as *const _, d as *const _, 0), ACL_SUCCESS);
    let sender = std::thread::spawn(move || acltdtSendTensor(full as *const _, d as *const _, -1));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!receiver.is_finished() && !sender.is_finished(), "both wait");
    let start = Instant::now();
    assert_eq!(acltdtStopChannel(ch as *mut _), ACL_SUCCESS);
    assert_eq!(acltdtStopChannel(full as *mut _), ACL_SUCCESS);
    assert_eq!(receiver.join().unwrap(), ACL_ERROR_FAILURE);
    assert_eq!(sender.join().unwrap(), ACL_ERROR_FAILURE);
    assert!(start.elapsed() < Duration::from_secs(5));
    // Later calls fail at once too; clean and destroy still work.
    assert_eq!(acltdtSendTensor(ch as *const _, d as *const _, -1), ACL_ERROR_FAILURE);
    assert!(recent().contains("stopped"));
    assert_eq!(acltdtCleanChannel(full as *mut _), ACL_SUCCESS);
    destroy_with_items(d as *mut _);
    assert_eq!(acltdtDestroyChannel(ch as *mut _), ACL_SUCCESS);
    assert_eq!(acltdtDestroyChannel(full as *mut _), ACL_SUCCESS);
    // The name is free again: a new channel of it is not stopped.
    let again = channel("tdt-api-stop", 2);
    let e = acltdtCreateDataset();
    assert_eq!(acltdtReceiveTensor(again, e, 0), ACL_ERROR_RT_QUEUE_EMPTY);
    assert_eq!(acltdtDestroyDataset(e), ACL_SUCCESS);
    assert_eq!(acltdtDestroyChannel(again), ACL_SUCCESS);
}

#[test]
fn bad_channel_arguments_are_codes_with_messages() {
    let name = CString::new("tdt-api-bad").unwrap();
    // SAFETY: NULL or NUL-terminated names.
    unsafe {
        assert!(acltdtCreateChannel(0, null()).is_null());
        assert!(recent().contains("name"));
        assert!(acltdtCreateChannelWithCapacity(0, name.as_ptr(), 1).is_null());
        assert!(recent().contains("capacity"));
        assert!(acltdtCreateChannelWithCapacity(0, name.as_ptr(), 8193).is_null());
        assert!(acltdtCreateChannelWithCapacity(1000, name.as_ptr(), 2).is_null());
        let long = CString::new("x".repeat(128)).unwrap();
        assert!(acltdtCreateChannel(0, long.as_ptr()).is_null());
    }
    let ch = channel("tdt-api-bad", 2);
    let d = acltdtCreateDataset();
    assert_eq!(acltdtSendTensor(null(), d, 0), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtSendTensor(ch, null(), 0), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtSendTensor(ch, d, -5), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("timeout"));
    assert_eq!(acltdtReceiveTensor(ch, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
    // SAFETY: NULL out-pointer, refused.
    assert_eq!(unsafe { acltdtQueryChannelSize(ch, null_mut()) }, ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtGetTensorTypeFromItem(null()), -1);
    assert_eq!(acltdtGetDataTypeFromItem(null()), -1);
    assert!(acltdtGetDataAddrFromItem(null()).is_null());
    assert_eq!(acltdtGetDatasetSize(null()), 0);
    assert!(acltdtGetDatasetName(null()).is_null());
    assert!(acltdtGetDataItem(d, 0).is_null());
    assert!(recent().contains("index"));
    let dims = [2i64, 3];
    let mut data = [0i32; 6];
    // SAFETY: valid dims and data, or NULL dims (refused).
    unsafe {
        assert!(acltdtCreateDataItem(TENSOR, null(), 2, ACL_INT32, data.as_mut_ptr().cast(), 24).is_null());
        assert!(
            acltdtCreateDataItem(TENSOR, dims.as_ptr(), 0, ACL_INT32, data.as_mut_ptr().cast(), 24).is_null()
        );
        assert!(acltdtCreateDataItem(END_OF_SEQUENCE, dims.as_ptr(), 2, ACL_INT32, null_mut(), 0).is_null());
        let item = acltdtCreateDataItem(TENSOR, dims.as_ptr(), 2, ACL_INT32, data.as_mut_ptr().cast(), 24);
        let mut one = [0i64; 1];
        assert_eq!(acltdtGetDimsFromItem(item, one.as_mut_ptr(), 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtGetDimsFromItem(item, null_mut(), 2), ACL_ERROR_INVALID_PARAM);
        // An item of a type a send does not carry.
        let slice = acltdtCreateDataItem(3, null(), 0, ACL_INT32, null_mut(), 0);
        assert_eq!(acltdtAddDataItem(d, slice), ACL_SUCCESS);
        assert_eq!(acltdtSendTensor(ch, d, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtDestroyDataItem(item), ACL_SUCCESS);
        assert_eq!(acltdtDestroyDataItem(item), ACL_ERROR_RT_INVALID_HANDLE);
    }
    destroy_with_items(d);
    assert_eq!(acltdtDestroyChannel(ch), ACL_SUCCESS);
    assert_eq!(acltdtStopChannel(ch), ACL_ERROR_RT_INVALID_HANDLE);
    assert_eq!(acltdtDestroyChannel(null_mut()), ACL_ERROR_INVALID_PARAM);
}

fn queue(name: &str, depth: u32) -> u32 {
    let attr = acltdtCreateQueueAttr();
    let name = CString::new(name).unwrap();
    let p = name.as_ptr();
    let mut qid = u32::MAX;
    // SAFETY: the attribute values are valid for their lengths.
    unsafe {
        assert_eq!(acltdtSetQueueAttr(attr, 0, size_of::<*const i8>(), (&raw const p).cast()), ACL_SUCCESS);
        assert_eq!(acltdtSetQueueAttr(attr, 1, 4, (&raw const depth).cast()), ACL_SUCCESS);
        assert_eq!(acltdtCreateQueue(attr, &mut qid), ACL_SUCCESS);
    }
    assert_eq!(acltdtDestroyQueueAttr(attr), ACL_SUCCESS);
    qid
}

fn enqueue_bytes(qid: u32, bytes: &[u8], user: &[u8], timeout: i32) -> aclError {
    // SAFETY: both slices are valid for their lengths.
    unsafe {
        acltdtEnqueueData(
            qid,
            bytes.as_ptr().cast(),
            bytes.len(),
            user.as_ptr().cast(),
            user.len(),
            timeout,
            0,
        )
    }
}

fn dequeue_bytes(qid: u32, room: usize, timeout: i32) -> Result<(Vec<u8>, [u8; 8]), (aclError, usize)> {
    let mut out = vec![0u8; room];
    let mut user = [0u8; 8];
    let mut got = 0usize;
    // SAFETY: valid buffers of the sizes given.
    let r = unsafe {
        acltdtDequeueData(qid, out.as_mut_ptr().cast(), room, &mut got, user.as_mut_ptr().cast(), 8, timeout)
    };
    if r != ACL_SUCCESS {
        return Err((r, got));
    }
    out.truncate(got);
    Ok((out, user))
}

#[test]
fn queues_move_exact_bytes_and_buffers() {
    assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
    let q = queue("tdt-api-bytes", 4);
    let payload: Vec<u8> = (0..200u8).collect();
    assert_eq!(enqueue_bytes(q, &payload, b"userdata", 0), ACL_SUCCESS);
    // Too small a buffer: the message stays, and the size it needs is said.
    assert_eq!(dequeue_bytes(q, 10, 0).unwrap_err(), (ACL_ERROR_INVALID_PARAM, 200));
    let (got, user) = dequeue_bytes(q, 256, 0).unwrap();
    assert_eq!((got, &user), (payload.clone(), b"userdata"));

    // A buffer goes in and comes out as itself.
    let mut buf = null_mut();
    // SAFETY: valid out-pointers and the buffer's own data area.
    unsafe {
        assert_eq!(acltdtAllocBuf(64, 0, &mut buf), ACL_SUCCESS);
        let (mut data, mut size) = (null_mut(), 0usize);
        assert_eq!(acltdtGetBufData(buf, &mut data, &mut size), ACL_SUCCESS);
        assert_eq!(size, 64);
        data.cast::<u8>().write_bytes(0xab, 64);
        assert_eq!(acltdtSetBufDataLen(buf, 16), ACL_SUCCESS);
        assert_eq!(acltdtSetBufUserData(buf, b"tag".as_ptr().cast(), 3, 0), ACL_SUCCESS);
        assert_eq!(acltdtEnqueue(q, buf, 0), ACL_SUCCESS);
        let mut out = null_mut();
        assert_eq!(acltdtDequeue(q, &mut out, 0), ACL_SUCCESS);
        assert_eq!(out, buf);
        // Enqueued again and taken out as bytes: its valid 16, and it is freed.
        assert_eq!(acltdtEnqueue(q, buf, 0), ACL_SUCCESS);
        let (bytes, user) = dequeue_bytes(q, 64, 0).unwrap();
        assert_eq!(bytes, vec![0xab; 16]);
        assert_eq!(&user[..3], b"tag");
        assert_eq!(acltdtFreeBuf(buf), ACL_ERROR_RT_INVALID_HANDLE, "freed by the dequeue");

        // Bytes taken out as a buffer.
        assert_eq!(enqueue_bytes(q, b"hello", b"u", 0), ACL_SUCCESS);
        assert_eq!(acltdtDequeue(q, &mut out, 0), ACL_SUCCESS);
        let mut len = 0usize;
        assert_eq!(acltdtGetBufDataLen(out, &mut len), ACL_SUCCESS);
        assert_eq!(acltdtGetBufData(out, &mut data, &mut size), ACL_SUCCESS);
        assert_eq!(std::slice::from_raw_parts(data.cast::<u8>(), len), b"hello");
        let mut u = [0u8; 1];
        assert_eq!(acltdtGetBufUserData(out, u.as_mut_ptr().cast(), 1, 0), ACL_SUCCESS);
        assert_eq!(&u, b"u");
        assert_eq!(acltdtFreeBuf(out), ACL_SUCCESS);
    }
    assert_eq!(acltdtDestroyQueue(q), ACL_SUCCESS);
}

#[test]
fn a_queue_holds_its_depth_and_waits_its_timeout() {
    assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
    let attr = acltdtCreateQueueAttr();
    let (mut depth, mut name, mut size) = (0u32, null::<i8>(), 0usize);
    // SAFETY: valid out-pointers of the sizes given.
    unsafe {
        assert_eq!(acltdtGetQueueAttr(attr, 1, 4, &mut size, (&raw mut depth).cast()), ACL_SUCCESS);
        assert_eq!((depth, size), (8, 4), "the default depth");
        assert_eq!(acltdtGetQueueAttr(attr, 0, 8, &mut size, (&raw mut name).cast()), ACL_SUCCESS);
        assert_eq!(CStr::from_ptr(name).to_bytes(), b"");
    }
    assert_eq!(acltdtDestroyQueueAttr(attr), ACL_SUCCESS);
    let q = queue("tdt-api-depth", 2);
    assert_eq!(enqueue_bytes(q, b"1", b"", 0), ACL_SUCCESS);
    assert_eq!(enqueue_bytes(q, b"2", b"", 0), ACL_SUCCESS);
    assert_eq!(enqueue_bytes(q, b"3", b"", 0), ACL_ERROR_RT_QUEUE_FULL);
    let start = Instant::now();
    assert_eq!(enqueue_bytes(q, b"3", b"", 40), ACL_ERROR_RT_QUEUE_FULL);
    assert!(start.elapsed() >= Duration::from_millis(40));
    // A blocked enqueue goes in when a dequeue makes room.
    let waiter = std::thread::spawn(move || enqueue_bytes(q, b"3", b"", -1));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(dequeue_bytes(q, 8, 0).unwrap().0, b"1");
    assert_eq!(waiter.join().unwrap(), ACL_SUCCESS);
    assert_eq!(dequeue_bytes(q, 8, 0).unwrap().0, b"2");
    assert_eq!(dequeue_bytes(q, 8, -1).unwrap().0, b"3");
    assert_eq!(dequeue_bytes(q, 8, 0).unwrap_err().0, ACL_ERROR_RT_QUEUE_EMPTY);
    let start = Instant::now();
    assert_eq!(dequeue_bytes(q, 8, 40).unwrap_err().0, ACL_ERROR_RT_QUEUE_EMPTY);
    assert!(start.elapsed() >= Duration::from_millis(40));
    assert_eq!(acltdtDestroyQueue(q), ACL_SUCCESS);
}

fn route_list(routes: &[(u32, u32)]) -> *mut acltdtQueueRouteList {
    let list = acltdtCreateQueueRouteList();
    for &(s, d) in routes {
        let r = acltdtCreateQueueRoute(s, d);
        assert_eq!(acltdtAddQueueRoute(list, r), ACL_SUCCESS);
        assert_eq!(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    }
    list
}

fn route_at(list: *const acltdtQueueRouteList, i: usize) -> (u32, u32, i32) {
    let r = acltdtCreateQueueRoute(0, 0);
    assert_eq!(acltdtGetQueueRoute(list, i, r), ACL_SUCCESS);
    let (mut s, mut d, mut st, mut n) = (0u32, 0u32, 0i32, 0usize);
    // SAFETY: 4-byte out-values.
    unsafe {
        assert_eq!(acltdtGetQueueRouteParam(r, 0, 4, &mut n, (&raw mut s).cast()), ACL_SUCCESS);
        assert_eq!(acltdtGetQueueRouteParam(r, 1, 4, &mut n, (&raw mut d).cast()), ACL_SUCCESS);
        assert_eq!(acltdtGetQueueRouteParam(r, 2, 4, &mut n, (&raw mut st).cast()), ACL_SUCCESS);
    }
    assert_eq!(n, 4);
    assert_eq!(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    (s, d, st)
}

fn query(mode: i32, src: u32, dst: u32) -> *mut acltdtQueueRouteList {
    let info = acltdtCreateQueueRouteQueryInfo();
    // SAFETY: 4-byte values.
    unsafe {
        assert_eq!(acltdtSetQueueRouteQueryInfo(info, 0, 4, (&raw const mode).cast()), ACL_SUCCESS);
        assert_eq!(acltdtSetQueueRouteQueryInfo(info, 1, 4, (&raw const src).cast()), ACL_SUCCESS);
        assert_eq!(acltdtSetQueueRouteQueryInfo(info, 2, 4, (&raw const dst).cast()), ACL_SUCCESS);
    }
    let list = acltdtCreateQueueRouteList();
    assert_eq!(acltdtQueryQueueRoutes(info, list), ACL_SUCCESS);
    assert_eq!(acltdtDestroyQueueRouteQueryInfo(info), ACL_SUCCESS);
    list
}

#[test]
fn routes_forward_to_every_destination_and_are_found_by_queries() {
    assert_eq!(aclrtSetDevice(7), ACL_SUCCESS);
    let (src, a, b) = (queue("tdt-api-src", 4), queue("tdt-api-a", 4), queue("tdt-api-b", 4));
    assert_eq!(enqueue_bytes(src, b"early", b"", 0), ACL_SUCCESS);
    let list = route_list(&[(src, a), (src, b)]);
    assert_eq!(acltdtBindQueueRoutes(list), ACL_SUCCESS);
    assert_eq!(route_at(list, 0), (src, a, 1));
    assert_eq!(route_at(list, 1), (src, b, 1));
    assert_eq!(enqueue_bytes(src, b"late", b"ud", 0), ACL_SUCCESS);
    for q in [a, b] {
        assert_eq!(dequeue_bytes(q, 16, 0).unwrap().0, b"early", "what waited moved on at bind");
        let (late, user) = dequeue_bytes(q, 16, 0).unwrap();
        assert_eq!((late.as_slice(), &user[..2]), (&b"late"[..], &b"ud"[..]));
    }
    assert_eq!(dequeue_bytes(src, 16, 0).unwrap_err().0, ACL_ERROR_RT_QUEUE_EMPTY);

    // A buffer goes to both: the second destination gets another reference to its block.
    let mut buf = null_mut();
    let (mut pa, mut pb, mut n) = (null_mut(), null_mut(), 0usize);
    let (mut x, mut y) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(acltdtAllocBuf(8, 1, &mut buf), ACL_SUCCESS);
        assert_eq!(acltdtEnqueue(src, buf, 0), ACL_SUCCESS);
        assert_eq!(acltdtDequeue(a, &mut x, 0), ACL_SUCCESS);
        assert_eq!(acltdtDequeue(b, &mut y, 0), ACL_SUCCESS);
        assert_eq!(acltdtGetBufData(x, &mut pa, &mut n), ACL_SUCCESS);
        assert_eq!(acltdtGetBufData(y, &mut pb, &mut n), ACL_SUCCESS);
        assert_eq!(pa, pb, "one block shared");
        assert_eq!(acltdtFreeBuf(x), ACL_SUCCESS);
        assert_eq!(acltdtFreeBuf(y), ACL_SUCCESS);
    }

    let found = query(0, src, 0);
    assert_eq!(acltdtGetQueueRouteNum(found), 2);
    assert_eq!(acltdtDestroyQueueRouteList(found), ACL_SUCCESS);
    let found = query(2, src, b);
    assert_eq!(acltdtGetQueueRouteNum(found), 1);
    assert_eq!(route_at(found, 0), (src, b, 1));
    assert_eq!(acltdtGetQueueRoute(found, 1, acltdtCreateQueueRoute(0, 0)), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtDestroyQueueRouteList(found), ACL_SUCCESS);
    let found = query(1, 0, a);
    assert_eq!(acltdtGetQueueRouteNum(found), 1);
    assert_eq!(acltdtDestroyQueueRouteList(found), ACL_SUCCESS);

    // A circle is refused (status 0), a queue on a route cannot be destroyed.
    let back = route_list(&[(a, src)]);
    assert_eq!(acltdtBindQueueRoutes(back), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("circle"));
    assert_eq!(route_at(back, 0).2, 0);
    assert_eq!(acltdtDestroyQueue(src), ACL_ERROR_FAILURE);
    assert_eq!(acltdtUnbindQueueRoutes(back), ACL_ERROR_INVALID_PARAM, "never bound");

    assert_eq!(acltdtUnbindQueueRoutes(list), ACL_SUCCESS);
    assert_eq!(route_at(list, 0).2, 0);
    assert_eq!(enqueue_bytes(src, b"stays", b"", 0), ACL_SUCCESS);
    assert_eq!(dequeue_bytes(a, 16, 0).unwrap_err().0, ACL_ERROR_RT_QUEUE_EMPTY, "unbound");
    let found = query(0, src, 0);
    assert_eq!(acltdtGetQueueRouteNum(found), 0);
    for l in [found, list, back] {
        assert_eq!(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
    }
    for q in [src, a, b] {
        assert_eq!(acltdtDestroyQueue(q), ACL_SUCCESS);
    }
}

#[test]
fn bad_queue_arguments_are_codes_with_messages() {
    // No current device on this thread: 107002, as the vendor's.
    let mut qid = 0u32;
    let none = std::thread::spawn(|| {
        let mut qid = 0u32;
        // SAFETY: valid out-pointer.
        unsafe { acltdtCreateQueue(null(), &mut qid) }
    });
    assert_eq!(none.join().unwrap(), ACL_ERROR_RT_CONTEXT_NULL);
    assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
    let q = queue("tdt-api-badq", 2);
    let attr = acltdtCreateQueueAttr();
    let name = CString::new("tdt-api-badq").unwrap();
    let p = name.as_ptr();
    let (one, big) = (1u32, [0u8; 16]);
    let mut out = [0u8; 16];
    let mut n = 0usize;
    // SAFETY: valid values and out-pointers for the sizes given, or NULL (refused).
    unsafe {
        assert_eq!(acltdtCreateQueue(attr, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtSetQueueAttr(attr, 0, 9, big.as_ptr().cast()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtSetQueueAttr(attr, 7, 4, big.as_ptr().cast()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtSetQueueAttr(attr, 1, 4, null()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtGetQueueAttr(attr, 1, 2, &mut n, out.as_mut_ptr().cast()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtSetQueueAttr(attr, 1, 4, (&raw const one).cast()), ACL_SUCCESS);
        assert_eq!(acltdtCreateQueue(attr, &mut qid), ACL_ERROR_INVALID_PARAM, "depth 1");
        assert!(recent().contains("depth"));
        assert_eq!(acltdtSetQueueAttr(attr, 0, 8, (&raw const p).cast()), ACL_SUCCESS);
        let two = 2u32;
        assert_eq!(acltdtSetQueueAttr(attr, 1, 4, (&raw const two).cast()), ACL_SUCCESS);
        assert_eq!(acltdtCreateQueue(attr, &mut qid), ACL_ERROR_INVALID_PARAM, "the name is in use");
        assert!(recent().contains("exists"));
    }
    assert_eq!(acltdtDestroyQueueAttr(attr), ACL_SUCCESS);
    assert_eq!(acltdtDestroyQueueAttr(attr), ACL_ERROR_RT_INVALID_HANDLE);

    let unknown = 60_000;
    assert_eq!(enqueue_bytes(unknown, b"x", b"", 0), ACL_ERROR_RT_PARAM_INVALID);
    assert!(recent().contains("no queue"));
    assert_eq!(acltdtDestroyQueue(unknown), ACL_ERROR_RT_PARAM_INVALID);
    // SAFETY: NULL or short buffers, refused before use.
    unsafe {
        assert_eq!(acltdtEnqueueData(q, null(), 1, null(), 0, 0, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtEnqueueData(q, big.as_ptr().cast(), 0, null(), 0, 0, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            acltdtEnqueueData(q, big.as_ptr().cast(), 1, big.as_ptr().cast(), 97, 0, 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(acltdtEnqueueData(q, big.as_ptr().cast(), 1, null(), 4, 0, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            acltdtDequeueData(q, out.as_mut_ptr().cast(), 16, null_mut(), null_mut(), 0, 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(acltdtDequeue(q, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtEnqueue(q, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(enqueue_bytes(q, b"x", b"", -7), ACL_ERROR_INVALID_PARAM);
        let mut buf = null_mut();
        assert_eq!(acltdtAllocBuf(8, 2, &mut buf), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("acltdtAllocBuf"), "{}", recent());
        // The type is checked before the out-pointer.
        assert_eq!(acltdtAllocBuf(8, 2, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("type 2"), "{}", recent());
        // The buffer functions share aclrt*Buf*'s bodies; their messages name the tdt call.
        assert_eq!(acltdtAllocBuf(8, 0, &mut buf), ACL_SUCCESS);
        assert_eq!(acltdtSetBufDataLen(buf, 9), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("acltdtSetBufDataLen"), "{}", recent());
        assert_eq!(acltdtGetBufDataLen(buf, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("acltdtGetBufDataLen"), "{}", recent());
        assert_eq!(acltdtFreeBuf(buf), ACL_SUCCESS);
        assert_eq!(acltdtFreeBuf(buf), ACL_ERROR_RT_INVALID_HANDLE);
        assert!(recent().contains("acltdtFreeBuf"), "{}", recent());

        // Grants: to this process checked and done, to another not supported.
        let me = std::process::id() as i32;
        assert_eq!(acltdtGrantQueue(q, me, 6, 0), ACL_SUCCESS);
        assert_eq!(acltdtGrantQueue(q, me, 8, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtGrantQueue(q, me + 1, 2, 0), ACL_ERROR_FEATURE_UNSUPPORTED);
        assert!(recent().contains("process"));
        assert_eq!(acltdtGrantQueue(unknown, me, 2, 0), ACL_ERROR_RT_PARAM_INVALID);
        let mut perm = 0u32;
        assert_eq!(acltdtAttachQueue(q, 0, &mut perm), ACL_SUCCESS);
        assert_eq!(perm, 7);
        assert_eq!(acltdtAttachQueue(q, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    // A query needs its mode, and the ids its mode looks at.
    let info = acltdtCreateQueueRouteQueryInfo();
    let list = acltdtCreateQueueRouteList();
    assert_eq!(acltdtQueryQueueRoutes(info, list), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("mode"));
    let mode = 2i32;
    // SAFETY: a 4-byte value, or too long a one (refused).
    unsafe {
        assert_eq!(acltdtSetQueueRouteQueryInfo(info, 0, 8, big.as_ptr().cast()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acltdtSetQueueRouteQueryInfo(info, 0, 4, (&raw const mode).cast()), ACL_SUCCESS);
    }
    assert_eq!(acltdtQueryQueueRoutes(info, list), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtQueryQueueRoutes(null(), list), ACL_ERROR_INVALID_PARAM);
    // Routes to a missing queue or to itself.
    let bad = route_list(&[(q, unknown), (q, q)]);
    assert_eq!(acltdtBindQueueRoutes(bad), ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!((route_at(bad, 0).2, route_at(bad, 1).2), (0, 0));
    assert_eq!(acltdtBindQueueRoutes(null_mut()), ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtGetQueueRouteNum(null()), 0);
    assert_eq!(acltdtGetQueueRouteNum(bad), 2);
    let r = acltdtCreateQueueRoute(1, 2);
    // SAFETY: a 2-byte room, too small (refused).
    let short = unsafe { acltdtGetQueueRouteParam(r, 0, 2, &mut n, out.as_mut_ptr().cast()) };
    assert_eq!(short, ACL_ERROR_INVALID_PARAM);
    assert_eq!(acltdtDestroyQueueRoute(r), ACL_SUCCESS);
    for l in [bad, list] {
        assert_eq!(acltdtDestroyQueueRouteList(l), ACL_SUCCESS);
    }
    assert_eq!(acltdtDestroyQueueRouteQueryInfo(info), ACL_SUCCESS);
    assert_eq!(acltdtDestroyQueue(q), ACL_SUCCESS);
}
