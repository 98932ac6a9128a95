//! Shared buffers, labels, user allocators, kernel argument blocks, cache maintenance and
//! descriptor copies through the C entry points, and the NPU-only functions answering 207000
//! with a message naming the call. Each test that sets a device has one of its own: resetting a
//! device releases its memory, which a test running beside it on the same device would lose.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_base::aclrtStream;
use ascendless::ffi::acl_rt::cache::*;
use ascendless::ffi::acl_rt::capture::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::kernel_args::*;
use ascendless::ffi::acl_rt::label::*;
use ascendless::ffi::acl_rt::mbuf::*;
use ascendless::ffi::acl_rt::memcpy_desc::*;
use ascendless::ffi::acl_rt::memory::aclrtFree;
use ascendless::ffi::acl_rt::npu_only::*;
use ascendless::ffi::acl_rt::reduce::aclrtReduceAsync;
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::acl_rt::value::aclrtValueWrite;
use ascendless::ffi::acl_rt_allocator::*;
use ascendless::runtime::reduce::{f16_to_f32, f32_to_f16};

#[path = "common/device_mem.rs"]
mod device_mem;
use device_mem::{d2h, device_alloc, h2d, recent};

#[test]
fn buffers_share_data_count_chains_and_bound_their_user_data() {
    let mut a = null_mut();
    // SAFETY: valid out-pointers and buffers throughout.
    unsafe {
        assert_eq!(aclrtAllocBuf(&mut a, 100), ACL_SUCCESS);
        let (mut data, mut size) = (null_mut(), 0usize);
        assert_eq!(aclrtGetBufData(a, &mut data, &mut size), ACL_SUCCESS);
        assert_eq!(size, 100);
        let mut len = 7usize;
        assert_eq!(aclrtGetBufDataLen(a, &mut len), ACL_SUCCESS);
        assert_eq!(len, 0, "no valid data yet");
        data.cast::<u8>().write_bytes(0x5a, 100);
        assert_eq!(aclrtSetBufDataLen(a, 10), ACL_SUCCESS);
        assert_eq!(aclrtSetBufDataLen(a, 101), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtSetBufDataLen"));

        let tag = *b"context!";
        assert_eq!(aclrtSetBufUserData(a, tag.as_ptr().cast(), 8, 88), ACL_SUCCESS);
        assert_eq!(
            aclrtSetBufUserData(a, tag.as_ptr().cast(), 8, 89),
            ACL_ERROR_RT_PARAM_INVALID,
            "96 bytes"
        );
        let mut back = [0u8; 8];
        assert_eq!(aclrtGetBufUserData(a, back.as_mut_ptr().cast(), 8, 88), ACL_SUCCESS);
        assert_eq!(back, tag);

        // A second reference: same data, its own copy of length and user data.
        let mut b = null_mut();
        assert_eq!(aclrtCopyBufRef(a, &mut b), ACL_SUCCESS);
        let (mut data_b, mut size_b) = (null_mut(), 0usize);
        assert_eq!(aclrtGetBufData(b, &mut data_b, &mut size_b), ACL_SUCCESS);
        assert_eq!((data_b, size_b), (data, 100));
        assert_eq!(aclrtGetBufDataLen(b, &mut len), ACL_SUCCESS);
        assert_eq!(len, 10);
        assert_eq!(aclrtFreeBuf(a), ACL_SUCCESS);
        assert_eq!(*data_b.cast::<u8>().add(99), 0x5a, "the data lives while a reference does");

        // Chains: the head counts; members are freed with it.
        let mut c = null_mut();
        assert_eq!(aclrtAllocBuf(&mut c, 1), ACL_SUCCESS);
        assert_eq!(aclrtAppendBufChain(b, c), ACL_SUCCESS);
        assert_eq!(aclrtAppendBufChain(b, c), ACL_ERROR_RT_PARAM_INVALID, "already in a chain");
        let mut n = 0u32;
        assert_eq!(aclrtGetBufChainNum(b, &mut n), ACL_SUCCESS);
        assert_eq!(n, 2);
        let mut got = null_mut();
        assert_eq!(aclrtGetBufFromChain(b, 0, &mut got), ACL_SUCCESS);
        assert_eq!(got, b);
        assert_eq!(aclrtGetBufFromChain(b, 1, &mut got), ACL_SUCCESS);
        assert_eq!(got, c);
        assert_eq!(aclrtGetBufFromChain(b, 2, &mut got), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtFreeBuf(c), ACL_ERROR_RT_PARAM_INVALID, "a member goes with its head");
        assert_eq!(aclrtFreeBuf(b), ACL_SUCCESS);
        assert_ne!(aclrtGetBufDataLen(c, &mut len), ACL_SUCCESS, "freed with the head");

        // Bad input.
        assert_eq!(aclrtAllocBuf(null_mut(), 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtAllocBuf(&mut a, 0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtFreeBuf(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtFreeBuf(b), ACL_ERROR_RT_INVALID_HANDLE, "twice");
    }
}

#[test]
fn a_chain_holds_at_most_128_buffers() {
    let mut head = null_mut();
    // SAFETY: valid out-pointers and buffers throughout.
    unsafe {
        assert_eq!(aclrtAllocBuf(&mut head, 1), ACL_SUCCESS);
        for _ in 0..127 {
            let mut m = null_mut();
            assert_eq!(aclrtAllocBuf(&mut m, 1), ACL_SUCCESS);
            assert_eq!(aclrtAppendBufChain(head, m), ACL_SUCCESS);
        }
        let mut m = null_mut();
        assert_eq!(aclrtAllocBuf(&mut m, 1), ACL_SUCCESS);
        assert_eq!(aclrtAppendBufChain(head, m), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtFreeBuf(m), ACL_SUCCESS);
        assert_eq!(aclrtFreeBuf(head), ACL_SUCCESS);
    }
}

unsafe extern "C" fn alloc_block(_: *mut c_void, _: usize) -> *mut c_void {
    null_mut()
}
unsafe extern "C" fn free_block(_: *mut c_void, _: *mut c_void) {}
unsafe extern "C" fn block_addr(b: *mut c_void) -> *mut c_void {
    b
}

#[test]
fn an_allocator_registered_on_a_stream_is_handed_back_until_unregistered() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        let mut s = null_mut();
        // SAFETY: valid out-pointers throughout.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            let desc = aclrtAllocatorCreateDesc();
            assert!(!desc.is_null());
            assert_eq!(aclrtAllocatorRegister(s, desc), ACL_ERROR_INVALID_PARAM, "empty description");
            assert!(recent().contains("aclrtAllocatorSetObjToDesc"), "names what is missing");
            let obj = 0x1234usize as *mut c_void;
            assert_eq!(aclrtAllocatorSetObjToDesc(desc, obj), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc_block)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorSetFreeFuncToDesc(desc, Some(free_block)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(block_addr)), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, None), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtAllocatorRegister(null_mut(), desc), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtAllocatorRegister(s, desc), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorDestroyDesc(desc), ACL_SUCCESS, "the registration keeps a copy");

            let (mut d, mut o) = (null_mut(), null_mut());
            let (mut a, mut f, mut adv, mut g) = (None, None, None, None);
            assert_eq!(
                aclrtAllocatorGetByStream(s, &mut d, &mut o, &mut a, &mut f, &mut adv, &mut g),
                ACL_SUCCESS
            );
            assert_eq!((d, o), (desc, obj));
            assert_eq!(a.map(|p| p as usize), Some(alloc_block as *const () as usize));
            assert_eq!(f.map(|p| p as usize), Some(free_block as *const () as usize));
            assert_eq!(g.map(|p| p as usize), Some(block_addr as *const () as usize));
            assert!(adv.is_none());

            assert_eq!(aclrtAllocatorUnregister(s), ACL_SUCCESS);
            assert_eq!(aclrtAllocatorUnregister(s), ACL_SUCCESS, "twice is fine");
            assert_eq!(
                aclrtAllocatorGetByStream(s, &mut d, &mut o, &mut a, &mut f, &mut adv, &mut g),
                ACL_SUCCESS
            );
            assert!(d.is_null() && o.is_null() && a.is_none() && g.is_none());
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn kernel_argument_blocks_lay_out_arguments_and_placeholders() {
    // SAFETY: valid out-pointers and buffers throughout.
    unsafe {
        let mut size = 0usize;
        assert_eq!(aclrtKernelArgsGetMemSize(null_mut(), 13, &mut size), ACL_SUCCESS);
        assert_eq!(size, 16);
        assert_eq!(aclrtKernelArgsGetHandleMemSize(null_mut(), &mut size), ACL_SUCCESS);
        assert_eq!(size, HANDLE_MEM_SIZE);

        // Over the caller's memory: the area appears there as it is built.
        let mut handle_mem = [0u8; HANDLE_MEM_SIZE];
        let mut area = [0u64; 4];
        let args = handle_mem.as_mut_ptr().cast::<c_void>();
        assert_eq!(aclrtKernelArgsInitByUserMem(null_mut(), args, area.as_mut_ptr().cast(), 32), ACL_SUCCESS);
        let (mut p1, mut p2, mut ph) = (null_mut(), null_mut(), null_mut());
        let mut a = 7u32;
        assert_eq!(aclrtKernelArgsAppend(args, (&raw mut a).cast(), 4, &mut p1), ACL_SUCCESS);
        let mut b = 0x1122_3344_5566_7788u64;
        assert_eq!(aclrtKernelArgsAppend(args, (&raw mut b).cast(), 8, &mut p2), ACL_SUCCESS);
        assert_eq!(aclrtKernelArgsAppendPlaceHolder(args, &mut ph), ACL_SUCCESS);
        assert_eq!(area[0] as u32, 7, "slot 0, padded to 8");
        assert_eq!(area[1], b);
        let mut buf = null_mut();
        assert_eq!(aclrtKernelArgsGetPlaceHolderBuffer(args, ph, 24, &mut buf), ACL_SUCCESS);
        assert_eq!(area[2], buf as u64, "the placeholder's slot holds its buffer's address");
        buf.cast::<u8>().write_bytes(1, 24);
        let mut again = null_mut();
        assert_eq!(aclrtKernelArgsGetPlaceHolderBuffer(args, ph, 8, &mut again), ACL_SUCCESS);
        assert_eq!(again, buf);
        assert_eq!(aclrtKernelArgsGetPlaceHolderBuffer(args, p1, 8, &mut again), ACL_ERROR_RT_PARAM_INVALID);
        a = 9;
        assert_eq!(aclrtKernelArgsParaUpdate(args, p1, (&raw mut a).cast(), 4), ACL_SUCCESS);
        assert_eq!(area[0] as u32, 9);
        assert_eq!(aclrtKernelArgsParaUpdate(args, p1, (&raw mut b).cast(), 8), ACL_ERROR_RT_PARAM_INVALID);
        // 32 bytes of area: a fourth 8-byte slot fits, a fifth does not.
        assert_eq!(aclrtKernelArgsAppend(args, (&raw mut b).cast(), 8, &mut p2), ACL_SUCCESS);
        assert_eq!(aclrtKernelArgsAppend(args, (&raw mut b).cast(), 8, &mut p2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(aclrtKernelArgsFinalize(args), ACL_SUCCESS);

        // In the runtime's memory; nothing can be appended once finalized.
        let mut owned = null_mut();
        assert_eq!(aclrtKernelArgsInit(null_mut(), &mut owned), ACL_SUCCESS);
        assert_eq!(aclrtKernelArgsAppend(owned, (&raw mut b).cast(), 8, &mut p1), ACL_SUCCESS);
        assert_eq!(aclrtKernelArgsFinalize(owned), ACL_SUCCESS);
        assert_eq!(aclrtKernelArgsAppend(owned, (&raw mut b).cast(), 8, &mut p1), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("finalized"));
        assert_eq!(aclrtKernelArgsFinalize(null_mut()), ACL_ERROR_INVALID_PARAM);
        let mut stranger = [0u8; 8];
        assert_eq!(aclrtKernelArgsFinalize(stranger.as_mut_ptr().cast()), ACL_ERROR_RT_PARAM_INVALID);
    }
}

#[test]
fn cache_operations_check_their_ranges_and_order_the_stream() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let dev = device_alloc(4096);
        let desc = device_alloc(64);
        let mut s = null_mut();
        // SAFETY: valid out-pointers; device pointers from aclrtMalloc.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            assert_eq!(aclrtMemFlush(dev, 4096), ACL_SUCCESS);
            assert_eq!(aclrtMemInvalidate(dev, 4096), ACL_SUCCESS);
            assert_eq!(aclrtMemFlush(dev, 4 << 20), ACL_ERROR_RT_PARAM_INVALID, "beyond the allocation");
            let mut host = [0u8; 16];
            assert_eq!(
                aclrtMemFlush(host.as_mut_ptr().cast(), 16),
                ACL_ERROR_RT_PARAM_INVALID,
                "host memory"
            );
            assert_eq!(aclrtCmoAsync(dev, 64, 0, s), ACL_SUCCESS);
            assert_eq!(aclrtCmoAsync(dev, 64, 3, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "prefetch only");
            assert_eq!(aclrtCmoAsync(dev, 64, 9, s), ACL_ERROR_RT_PARAM_INVALID);
            let mut size = 0usize;
            assert_eq!(aclrtCmoGetDescSize(&mut size), ACL_SUCCESS);
            assert_eq!(size, CMO_DESC_SIZE);
            assert_eq!(aclrtCmoSetDesc(desc, dev, 128), ACL_SUCCESS);
            let words = d2h(desc, 16);
            assert_eq!(u64::from_ne_bytes(words[..8].try_into().unwrap()), dev as u64);
            assert_eq!(aclrtCmoAsyncWithDesc(desc, 0, s, null()), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(aclrtDeviceL2CacheFlush(null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtCmoAsyncWithBarrier(dev, 64, 2, 1, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            assert!(recent().contains("aclrtCmoAsyncWithBarrier"));
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtFree(desc), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(2), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn descriptor_copies_read_their_addresses_when_they_run() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
        let (src, dst, desc, bases) =
            (device_alloc(256), device_alloc(256), device_alloc(64), device_alloc(64));
        h2d(src, &[3u8; 256]);
        let mut s = null_mut();
        // SAFETY: valid out-pointers; device pointers from aclrtMalloc.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            let mut size = 0usize;
            assert_eq!(aclrtGetMemcpyDescSize(6, &mut size), ACL_SUCCESS);
            assert_eq!(size, MEMCPY_DESC_SIZE);
            assert_eq!(aclrtGetMemcpyDescSize(1, &mut size), ACL_ERROR_RT_PARAM_INVALID, "inner D2D only");
            assert_eq!(aclrtSetMemcpyDesc(desc, 6, src, dst, 100, null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtMemcpyAsyncWithDesc(desc, 6, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            let out = d2h(dst, 256);
            assert!(
                out[..100].iter().all(|&b| b == 3) && out[100..].iter().all(|&b| b == 0),
                "100 bytes copied"
            );

            // Base addresses in device memory, read when the copy runs, then offset.
            let mut words = [0u8; 16];
            words[..8].copy_from_slice(&(dst as u64).to_ne_bytes());
            words[8..].copy_from_slice(&(src as u64).to_ne_bytes());
            h2d(bases, &words);
            h2d(src.cast::<u8>().add(10).cast(), &[7u8; 4]);
            let dst_base = bases.cast::<*mut c_void>();
            let src_base = bases.cast::<u8>().add(8).cast::<*const c_void>();
            assert_eq!(aclrtMemcpyAsyncWithOffset(dst_base, 100, 200, src_base, 4, 10, 6, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(&d2h(dst, 256)[200..204], &[7u8; 4]);

            assert_eq!(aclrtMemcpyAsyncWithDesc(null_mut(), 6, s), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        for p in [src, dst, desc, bases] {
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
        }
        assert_eq!(aclrtResetDevice(3), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn labels_are_objects_and_need_model_streams() {
    // SAFETY: valid out-pointers throughout.
    unsafe {
        let (mut a, mut b, mut list) = (null_mut(), null_mut(), null_mut());
        assert_eq!(aclrtCreateLabel(&mut a), ACL_SUCCESS);
        assert_eq!(aclrtCreateLabel(&mut b), ACL_SUCCESS);
        let mut labels = [a, b];
        assert_eq!(aclrtCreateLabelList(labels.as_mut_ptr(), 2, &mut list), ACL_SUCCESS);
        assert_eq!(aclrtCreateLabelList(labels.as_mut_ptr(), 0, &mut list), ACL_ERROR_RT_PARAM_INVALID);
        // No device is set here, so there is no default stream to set a label on or switch on
        // (a_label_switch_in_a_model_jumps_to_the_label_the_device_index_selects sets them).
        assert_eq!(aclrtSetLabel(a, null_mut()), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtSwitchLabelByIndex(null_mut(), 2, list, null_mut()), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclrtDestroyLabelList(list), ACL_SUCCESS);
        assert_eq!(aclrtDestroyLabel(a), ACL_SUCCESS);
        assert_eq!(aclrtDestroyLabel(b), ACL_SUCCESS);
        assert_eq!(aclrtDestroyLabel(b), ACL_ERROR_RT_INVALID_HANDLE);
        let mut stale = [a];
        assert_eq!(aclrtCreateLabelList(stale.as_mut_ptr(), 1, &mut list), ACL_ERROR_RT_INVALID_HANDLE);
    }
}

/// A model of the `bound` streams, whose tasks `record` records, run once on a stream of its
/// own and destroyed: the run's synchronisation result.
fn run_built_model(bound: &[aclrtStream], record: impl FnOnce()) -> aclError {
    let (mut model, mut run) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclmdlRIBuildBegin(&mut model, 0), ACL_SUCCESS);
        assert_eq!(aclrtCreateStream(&mut run), ACL_SUCCESS);
    }
    for &s in bound {
        assert_eq!(aclmdlRIBindStream(model, s, 0), ACL_SUCCESS);
    }
    record();
    for &s in bound {
        assert_eq!(aclmdlRIEndTask(model, s), ACL_SUCCESS);
    }
    assert_eq!(aclmdlRIBuildEnd(model, null_mut()), ACL_SUCCESS);
    assert_eq!(aclmdlRIExecuteAsync(model, run), ACL_SUCCESS);
    let rc = aclrtSynchronizeStream(run);
    for &s in bound {
        assert_eq!(aclmdlRIUnbindStream(model, s), ACL_SUCCESS);
    }
    assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(run), ACL_SUCCESS);
    rc
}

fn word(p: *mut c_void) -> u64 {
    u64::from_ne_bytes(d2h(p, 8).try_into().unwrap())
}

#[test]
fn a_label_switch_in_a_model_jumps_to_the_label_the_device_index_selects() {
    // SAFETY: valid out-pointers, device memory of the sizes used, live handles throughout.
    unsafe {
        assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
        let (mut a, mut b, mut list, mut s, mut t) =
            (null_mut(), null_mut(), null_mut(), null_mut(), null_mut());
        assert_eq!(aclrtCreateLabel(&mut a), ACL_SUCCESS);
        assert_eq!(aclrtCreateLabel(&mut b), ACL_SUCCESS);
        let mut labels = [a, b];
        assert_eq!(aclrtCreateLabelList(labels.as_mut_ptr(), 2, &mut list), ACL_SUCCESS);
        assert_eq!(aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
        assert_eq!(aclrtCreateStream(&mut t), ACL_SUCCESS);
        let index = device_alloc(4);
        let (w0, w1, after) = (device_alloc(8), device_alloc(8), device_alloc(8));

        // switch; label a; write w0; label b; write w1: index 0 runs both writes, index 1
        // only the second, and an index past the list goes to its last label.
        for (i, want) in [(0u32, (1, 2)), (1, (0, 2)), (7, (0, 2))] {
            h2d(index, &i.to_ne_bytes());
            for w in [w0, w1] {
                h2d(w, &0u64.to_ne_bytes());
            }
            let rc = run_built_model(&[s], || {
                assert_eq!(aclrtSwitchLabelByIndex(index, 2, list, s), ACL_SUCCESS);
                assert_eq!(aclrtSetLabel(a, s), ACL_SUCCESS);
                assert_eq!(aclrtValueWrite(w0, 1, 0, s), ACL_SUCCESS);
                assert_eq!(aclrtSetLabel(b, s), ACL_SUCCESS);
                assert_eq!(
                    aclrtSetLabel(b, s),
                    ACL_ERROR_RT_PARAM_INVALID,
                    "a label marks one place of a model"
                );
                assert_eq!(aclrtValueWrite(w1, 2, 0, s), ACL_SUCCESS);
            });
            assert_eq!(rc, ACL_SUCCESS, "index {i}");
            assert_eq!((word(w0), word(w1)), want, "index {i}");
        }

        // A label on another stream of the model: that stream goes on from the label, and the
        // switching stream stops (its write after the switch is not done).
        h2d(index, &0u32.to_ne_bytes());
        for w in [w0, w1, after] {
            h2d(w, &0u64.to_ne_bytes());
        }
        let mut one = [b];
        let mut other = null_mut();
        assert_eq!(aclrtCreateLabelList(one.as_mut_ptr(), 1, &mut other), ACL_SUCCESS);
        let rc = run_built_model(&[s, t], || {
            assert_eq!(aclrtSwitchLabelByIndex(index, 1, other, s), ACL_SUCCESS);
            assert_eq!(aclrtValueWrite(after, 9, 0, s), ACL_SUCCESS);
            assert_eq!(aclrtSetLabel(b, t), ACL_SUCCESS);
            assert_eq!(aclrtValueWrite(w1, 3, 0, t), ACL_SUCCESS);
        });
        assert_eq!(rc, ACL_SUCCESS);
        assert_eq!((word(after), word(w1)), (0, 3));
        assert_eq!(aclrtDestroyLabelList(other), ACL_SUCCESS);

        // Checked when recorded: maxValue within the list, the index in device memory.
        let rc = run_built_model(&[s], || {
            assert_eq!(aclrtSwitchLabelByIndex(index, 0, list, s), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtSwitchLabelByIndex(index, 3, list, s), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtSwitchLabelByIndex(null_mut(), 2, list, s), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("ptr must not be NULL"));
            let mut host = 0u32;
            assert_eq!(
                aclrtSwitchLabelByIndex((&raw mut host).cast(), 2, list, s),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("device memory"));
        });
        assert_eq!(rc, ACL_SUCCESS);
        // A switch to a label never set in the model fails the run, saying which.
        let rc = run_built_model(&[s], || {
            assert_eq!(aclrtSwitchLabelByIndex(index, 2, list, s), ACL_SUCCESS);
            assert_eq!(aclrtSetLabel(b, s), ACL_SUCCESS);
        });
        assert_eq!(rc, ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("label 0 of the list is not set"), "{}", recent());
        // An ordinary stream cannot jump.
        assert_eq!(aclrtSwitchLabelByIndex(index, 2, list, t), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert!(recent().contains("aclrtSwitchLabelByIndex"));

        for p in [index, w0, w1, after] {
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
        }
        assert_eq!(aclrtDestroyLabelList(list), ACL_SUCCESS);
        assert_eq!(aclrtDestroyLabel(a), ACL_SUCCESS);
        assert_eq!(aclrtDestroyLabel(b), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(t), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(6), ACL_SUCCESS);
    }
}

#[test]
fn npu_only_functions_answer_207000_naming_the_call() {
    assert!(aclrtCreateBinary(null(), 0).is_null());
    assert!(recent().contains("aclrtCreateBinary"));
    let calls: [(&str, &dyn Fn() -> i32); 6] = [
        ("aclrtLaunchKernel", &|| aclrtLaunchKernel(null_mut(), 1, null(), 0, null_mut())),
        ("aclrtGetSymbolAddress", &|| aclrtGetSymbolAddress(null(), null_mut())),
        ("aclrtGetArgsFromExceptionInfo", &|| aclrtGetArgsFromExceptionInfo(null(), null_mut(), null_mut())),
        ("aclrtProfTrace", &|| aclrtProfTrace(null_mut(), 0, null_mut())),
        ("aclrtTaskUpdateAsync", &|| aclrtTaskUpdateAsync(null_mut(), 0, null_mut(), null_mut())),
        ("aclrtMemP2PMap", &|| aclrtMemP2PMap(null_mut(), 0, 0, 0)),
    ];
    for (name, call) in calls {
        assert_eq!(call(), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "{name}");
        let msg = recent();
        assert!(msg.contains(name) && msg.contains("NPU"), "{msg}");
    }
}

#[test]
fn reductions_combine_device_memory_on_the_stream() {
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
        let (dst, src) = (device_alloc(64), device_alloc(64));
        let mut s = null_mut();
        // SAFETY: valid out-pointers; device pointers from aclrtMalloc.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            h2d(dst, &[1i32, -5, 7, 0].map(i32::to_ne_bytes).concat());
            h2d(src, &[2i32, -9, 3, i32::MAX].map(i32::to_ne_bytes).concat());
            assert_eq!(aclrtReduceAsync(dst, src, 16, 10, 3, s, null_mut()), ACL_SUCCESS, "SUM of int32");
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(d2h(dst, 16), [3i32, -14, 10, i32::MAX].map(i32::to_ne_bytes).concat());
            assert_eq!(aclrtReduceAsync(dst, src, 16, 12, 3, s, null_mut()), ACL_SUCCESS, "MIN of int32");
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(d2h(dst, 16), [2i32, -14, 3, i32::MAX].map(i32::to_ne_bytes).concat());

            h2d(dst, &[1.5f32, 8.0].map(f32_to_f16).map(u16::to_ne_bytes).concat());
            h2d(src, &[2.25f32, 1.0].map(f32_to_f16).map(u16::to_ne_bytes).concat());
            assert_eq!(aclrtReduceAsync(dst, src, 4, 11, 1, s, null_mut()), ACL_SUCCESS, "MAX of fp16");
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            let out = d2h(dst, 4);
            assert_eq!(f16_to_f32(u16::from_ne_bytes([out[0], out[1]])), 2.25);
            assert_eq!(f16_to_f32(u16::from_ne_bytes([out[2], out[3]])), 8.0);

            assert_eq!(
                aclrtReduceAsync(dst, src, 3, 10, 3, s, null_mut()),
                ACL_ERROR_RT_PARAM_INVALID,
                "not whole"
            );
            assert_eq!(aclrtReduceAsync(dst, src, 8, 13, 3, s, null_mut()), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
            assert_eq!(
                aclrtReduceAsync(dst, src, 8, 10, 9, s, null_mut()),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "int64"
            );
            let mut host = [0u8; 8];
            assert_eq!(
                aclrtReduceAsync(host.as_mut_ptr().cast(), src, 8, 10, 3, s, null_mut()),
                ACL_ERROR_RT_PARAM_INVALID,
                "host memory"
            );
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
        }
        assert_eq!(aclrtFree(dst), ACL_SUCCESS);
        assert_eq!(aclrtFree(src), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(4), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}

#[test]
fn task_scheduler_memory_and_ipc_link_attributes() {
    use ascendless::ffi::acl_rt::ipc::{
        aclrtIpcMemClose, aclrtIpcMemGetExportKey, aclrtIpcMemImportPidInterServer, aclrtIpcMemSetAttr,
    };
    use ascendless::ffi::acl_rt::memory_alloc::aclrtMallocForTaskScheduler;
    std::thread::spawn(|| {
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        // SAFETY: valid out-pointers and C strings throughout.
        unsafe {
            let mut p = null_mut();
            assert_eq!(aclrtMallocForTaskScheduler(&mut p, 4096, 0, null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtMemFlush(p, 4096), ACL_SUCCESS, "device memory of the current device");
            assert_eq!(aclrtMallocForTaskScheduler(&mut p, 0, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
            let mut key = [0 as std::ffi::c_char; 65];
            assert_eq!(aclrtIpcMemGetExportKey(p, 4096, key.as_mut_ptr(), 65, 0), ACL_SUCCESS);
            assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 1), ACL_SUCCESS, "HCCS");
            assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 4), ACL_ERROR_RT_PARAM_INVALID, "no such link");
            assert_eq!(
                aclrtIpcMemSetAttr(key.as_ptr(), 1, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "no such attribute"
            );
            assert_eq!(aclrtIpcMemSetAttr(c"nokey".as_ptr(), 0, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtIpcMemSetAttr(null(), 0, 0), ACL_ERROR_INVALID_PARAM);
            let mut pid = std::process::id() as i32;
            let mut server = ascendless::ffi::acl_rt::aclrtServerPid { sdid: 0, pid: &mut pid, num: 1 };
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), &mut server, 1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "the default product is no super-node"
            );
            assert_eq!(
                aclrtIpcMemImportPidInterServer(key.as_ptr(), &mut server, 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtIpcMemClose(key.as_ptr()), ACL_SUCCESS);
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
        }
        assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
    })
    .join()
    .unwrap();
}
