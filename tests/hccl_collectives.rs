//! HCCL's operations through the C entry points, on real communicators: the ranks of one
//! `HcclCommInitAll` in this process, one thread each (its own device and stream), and two
//! ranks of `HcclCommInitRootInfo` made from one root info. Every result is checked against a
//! reference computed here, element by element. (The two-process programs are
//! tests/install/hccl_style and python/tests/test_hccl_ctypes.py.)

use std::ffi::{CStr, c_char, c_void};
use std::ptr::null_mut;
use std::sync::Barrier;

#[path = "common/device_mem.rs"]
mod device_mem;
#[path = "common/hccl_config.rs"]
mod hccl_config;

use ascendless::error::hccl_codes::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::memory::aclrtFree;
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};
use ascendless::ffi::hccl::hccl::*;
use ascendless::ffi::hccl::hccl_comm::*;
use ascendless::ffi::hccl::hccl_types::*;
use device_mem::{d2h, device_alloc, h2d};

const INT32: i32 = 2;
const FP32: i32 = 4;
const SUM: i32 = 0;
const MAX: i32 = 2;
const N: usize = 1000;

/// A handle value as a number, so that handles cross threads.
struct Shared(usize);

fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numbers, read as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(v)) }.to_vec()
}

fn from_bytes<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let mut out = vec![T::default(); b.len() / size_of::<T>()];
    // SAFETY: `out` holds exactly b.len() bytes of plain numbers.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.as_mut_ptr().cast::<u8>(), b.len()) };
    out
}

/// `got` is `want`; else the first element that differs (not the whole vectors).
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: impl std::fmt::Display) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {:?}, not {:?}", got[i], want[i]);
    }
}

fn on_device<T: Copy>(v: &[T]) -> *mut c_void {
    let p = device_alloc(size_of_val(v).max(1));
    h2d(p, &bytes_of(v));
    p
}

fn sync(stream: *mut c_void) {
    assert_eq!(aclrtSynchronizeStream(stream), 0);
}

/// Rank `rank` of `size`: every operation, checked.
fn run_rank(comm: HcclComm, rank: u32, size: u32, device: i32) {
    assert_eq!(aclrtSetDevice(device), 0);
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, 0);
    let (mut r, mut s) = (0u32, 0u32);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(HcclGetRankId(comm, &mut r), HCCL_SUCCESS);
        assert_eq!(HcclGetRankSize(comm, &mut s), HCCL_SUCCESS);
    }
    assert_eq!((r, s), (rank, size));

    // All-reduce: sum of f32 (exact), max of i32.
    let mine: Vec<f32> = (0..N).map(|i| (rank + 1) as f32 + i as f32 * 0.5).collect();
    let send = on_device(&mine);
    let recv = device_alloc(N * 4);
    assert_eq!(HcclAllReduce(send, recv, N as u64, FP32, SUM, comm, stream), HCCL_SUCCESS);
    sync(stream);
    let total: f32 = (1..=size).map(|k| k as f32).sum();
    let want: Vec<f32> = (0..N).map(|i| total + i as f32 * 0.5 * size as f32).collect();
    same(&from_bytes::<f32>(&d2h(recv, N * 4)), &want, format!("all-reduce sum, rank {rank}"));
    let ints: Vec<i32> =
        (0..N as i32).map(|i| if i % size as i32 == rank as i32 { 1000 + i } else { -i }).collect();
    let ibuf = on_device(&ints);
    // On the default stream (NULL), after the stream's work.
    sync(stream);
    assert_eq!(HcclAllReduce(ibuf, ibuf, N as u64, INT32, MAX, comm, null_mut()), HCCL_SUCCESS);
    sync(null_mut());
    let want: Vec<i32> = (0..N as i32).map(|i| 1000 + i).collect();
    same(&from_bytes::<i32>(&d2h(ibuf, N * 4)), &want, format!("all-reduce max in place, rank {rank}"));

    // Broadcast from the last rank.
    let root = size - 1;
    let b: Vec<i32> = (0..N as i32).map(|i| if rank == root { i * 3 } else { 0 }).collect();
    let bbuf = on_device(&b);
    assert_eq!(HcclBroadcast(bbuf, N as u64, INT32, root, comm, stream), HCCL_SUCCESS);
    sync(stream);
    same(
        &from_bytes::<i32>(&d2h(bbuf, N * 4)),
        &(0..N as i32).map(|i| i * 3).collect::<Vec<_>>(),
        format!("broadcast, rank {rank}"),
    );

    // All-gather and reduce-scatter.
    let gathered = device_alloc(N * 4 * size as usize);
    assert_eq!(HcclAllGather(send, gathered, N as u64, FP32, comm, stream), HCCL_SUCCESS);
    sync(stream);
    let want: Vec<f32> =
        (0..size).flat_map(|k| (0..N).map(move |i| (k + 1) as f32 + i as f32 * 0.5)).collect();
    same(
        &from_bytes::<f32>(&d2h(gathered, N * 4 * size as usize)),
        &want,
        format!("all-gather, rank {rank}"),
    );
    let part = device_alloc(N * 4);
    assert_eq!(HcclReduceScatter(gathered, part, N as u64, FP32, SUM, comm, stream), HCCL_SUCCESS);
    sync(stream);
    let want: Vec<f32> = (0..N).map(|i| size as f32 * ((rank + 1) as f32 + i as f32 * 0.5)).collect();
    same(&from_bytes::<f32>(&d2h(part, N * 4)), &want, format!("reduce-scatter, rank {rank}"));

    // Send/receive around the ring, as one batch each.
    let to = (rank + 1) % size;
    let from = (rank + size - 1) % size;
    let out: Vec<i32> = (0..N as i32).map(|i| i + 10_000 * rank as i32).collect();
    let sbuf = on_device(&out);
    let rbuf = device_alloc(N * 4);
    let mut items = [
        HcclSendRecvItem {
            sendRecvType: HCCL_SEND,
            buf: sbuf,
            count: N as u64,
            dataType: INT32,
            remoteRank: to,
        },
        HcclSendRecvItem {
            sendRecvType: HCCL_RECV,
            buf: rbuf,
            count: N as u64,
            dataType: INT32,
            remoteRank: from,
        },
    ];
    // SAFETY: two live items.
    assert_eq!(unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 2, comm, stream) }, HCCL_SUCCESS);
    sync(stream);
    let want: Vec<i32> = (0..N as i32).map(|i| i + 10_000 * from as i32).collect();
    same(&from_bytes::<i32>(&d2h(rbuf, N * 4)), &want, format!("batch send/recv, rank {rank}"));

    // The same ring as single sends and receives inside a group: its end queues them as one
    // batch, so every rank may send first.
    let gbuf = device_alloc(N * 4);
    assert_eq!(HcclGroupStart(), HCCL_SUCCESS);
    assert_eq!(HcclSend(sbuf, N as u64, INT32, to, comm, stream), HCCL_SUCCESS);
    assert_eq!(HcclRecv(gbuf, N as u64, INT32, from, comm, stream), HCCL_SUCCESS);
    assert_eq!(HcclGroupEnd(), HCCL_SUCCESS);
    sync(stream);
    same(&from_bytes::<i32>(&d2h(gbuf, N * 4)), &want, format!("grouped send/recv, rank {rank}"));

    // All-to-all: element j*N+i to rank j.
    let a: Vec<i32> = (0..size as i32 * N as i32).map(|x| x + 100_000 * rank as i32).collect();
    let abuf = on_device(&a);
    let arecv = device_alloc(N * 4 * size as usize);
    assert_eq!(HcclAlltoAll(abuf, N as u64, INT32, arecv, N as u64, INT32, comm, stream), HCCL_SUCCESS);
    sync(stream);
    let want: Vec<i32> = (0..size as i32)
        .flat_map(|k| (0..N as i32).map(move |i| rank as i32 * N as i32 + i + 100_000 * k))
        .collect();
    same(&from_bytes::<i32>(&d2h(arecv, N * 4 * size as usize)), &want, format!("all-to-all, rank {rank}"));

    assert_eq!(HcclBarrier(comm, stream), HCCL_SUCCESS);
    sync(stream);
    let mut e = -1;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { HcclGetCommAsyncError(comm, &mut e) }, HCCL_SUCCESS);
    assert_eq!(e, HCCL_SUCCESS);
    for p in [send, recv, ibuf, bbuf, gathered, part, sbuf, rbuf, gbuf, abuf, arecv] {
        assert_eq!(aclrtFree(p), 0);
    }
    assert_eq!(aclrtDestroyStream(stream), 0);
    assert_eq!(aclrtResetDevice(device), 0);
}

/// The (communicator, phase) pairs the state callback was called with.
static PHASES: std::sync::Mutex<Vec<(usize, i32)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn record_phase(
    comm: HcclComm,
    phase: HcclCommStatePhase,
    args: *mut c_void,
) -> HcclResult {
    assert_eq!(args.addr(), 0x5a, "the args given at registration");
    PHASES.lock().unwrap().push((comm.addr(), phase));
    HCCL_SUCCESS
}

#[test]
fn the_ranks_of_init_all_run_every_operation_in_threads() {
    // SAFETY: a function of this test; its args are never dereferenced.
    let code = unsafe {
        HcclCommRegCommStateCallback(
            c"collectives".as_ptr(),
            Some(record_phase),
            std::ptr::without_provenance_mut(0x5a),
        )
    };
    assert_eq!(code, HCCL_SUCCESS);
    let size = 3u32;
    let mut devices: Vec<i32> = (0..size as i32).collect();
    let mut comms = vec![null_mut(); size as usize];
    // SAFETY: `size` devices and handles.
    assert_eq!(unsafe { HcclCommInitAll(size, devices.as_mut_ptr(), comms.as_mut_ptr()) }, HCCL_SUCCESS);
    let shared: Vec<Shared> = comms.iter().map(|c| Shared(c.addr())).collect();
    let start = Barrier::new(size as usize);
    std::thread::scope(|s| {
        for (rank, h) in shared.iter().enumerate() {
            let start = &start;
            s.spawn(move || {
                start.wait();
                let comm = std::ptr::without_provenance_mut(h.0);
                run_rank(comm, rank as u32, size, rank as i32);
            });
        }
    });
    for c in comms {
        let mut name = [0 as c_char; COMM_NAME_MAX_LENGTH];
        // SAFETY: COMM_NAME_MAX_LENGTH bytes.
        assert_eq!(unsafe { HcclGetCommName(c, name.as_mut_ptr()) }, HCCL_SUCCESS);
        // SAFETY: NUL-terminated by the call.
        assert!(!unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes().is_empty());
        assert_eq!(HcclCommDestroy(c), HCCL_SUCCESS);
        let phases: Vec<i32> =
            PHASES.lock().unwrap().iter().filter(|(h, _)| *h == c.addr()).map(|(_, p)| *p).collect();
        assert_eq!(phases, [HCCL_COMM_STATE_PHASE_DESTROY_PRE, HCCL_COMM_STATE_PHASE_DESTROY_POST]);
        assert_eq!(HcclCommDestroy(c), HCCL_E_PARA, "a destroyed communicator is stale");
        let mut n = 0;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { HcclGetRankSize(c, &mut n) }, HCCL_E_PARA);
    }
}

/// A config as `HcclCommConfigInit` leaves it, with `hcclCommName` set.
fn named_config(name: &CStr) -> HcclCommConfig {
    let mut c = hccl_config::config_init();
    for (d, &b) in c.hcclCommName.iter_mut().zip(name.to_bytes()) {
        *d = b as c_char;
    }
    c
}

#[test]
fn two_ranks_join_one_root_info_with_a_named_config() {
    let mut root = HcclRootInfo { internal: [0; HCCL_ROOT_INFO_BYTES] };
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { HcclGetRootInfo(&mut root) }, HCCL_SUCCESS);
    let root = &root;
    let handles: Vec<usize> = std::thread::scope(|s| {
        let joins: Vec<_> = (0..2u32)
            .map(|rank| {
                s.spawn(move || {
                    let mut comm = null_mut();
                    let config = named_config(c"pair-of-two");
                    // SAFETY: valid pointers.
                    let code = unsafe { HcclCommInitRootInfoConfig(2, root, rank, &config, &mut comm) };
                    assert_eq!(code, HCCL_SUCCESS, "rank {rank}");
                    comm.addr()
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    std::thread::scope(|s| {
        for (rank, &h) in handles.iter().enumerate() {
            s.spawn(move || run_rank(std::ptr::without_provenance_mut(h), rank as u32, 2, 4 + rank as i32));
        }
    });
    for h in handles {
        let comm: HcclComm = std::ptr::without_provenance_mut(h);
        let mut name = [0 as c_char; COMM_NAME_MAX_LENGTH];
        // SAFETY: COMM_NAME_MAX_LENGTH bytes.
        assert_eq!(unsafe { HcclGetCommName(comm, name.as_mut_ptr()) }, HCCL_SUCCESS);
        // SAFETY: NUL-terminated by the call.
        assert_eq!(unsafe { CStr::from_ptr(name.as_ptr()) }, c"pair-of-two", "the config's name");
        let mut found = null_mut();
        let mut status = -1;
        // SAFETY: the name written above; valid out-pointers.
        unsafe {
            assert_eq!(HcclCommGetStatus(name.as_ptr(), &mut status), HCCL_SUCCESS);
            assert_eq!(HcclCommGetHandleWithName(name.as_ptr(), &mut found), HCCL_SUCCESS);
        }
        assert_eq!(status, HCCL_COMM_STATUS_READY);
        assert!(!found.is_null());
        let mut mode = 0i32;
        // SAFETY: 4 writable bytes.
        let code = unsafe {
            HcclConfigGetInfo(comm, HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, 4, (&raw mut mode).cast::<c_void>())
        };
        assert_eq!((code, mode), (HCCL_SUCCESS, HCCL_OP_EXPANSION_MODE_HOST));
        assert_eq!(HcclCommDestroy(comm), HCCL_SUCCESS);
    }
}
