//! Batch copies, 2D copies, 32-bit fills, the allocation variants, the frees that wait for the
//! device and managed memory, through the C entry points. Each test runs on a device of its
//! own, so the device-wide waits of one cannot be held up by another.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::location::aclrtMemLocation;
use ascendless::ffi::acl_rt::managed::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::memory_alloc::*;
use ascendless::ffi::acl_rt::memory_batch::*;
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;

const H2D: i32 = 1;
const D2H: i32 = 2;
const D2D: i32 = 3;
const DEFAULT: i32 = 4;
const NORMAL_ONLY: u32 = 2;
const MIB2: usize = 2 << 20;

const HOST: u32 = 0;
const DEVICE: u32 = 1;
const MANAGED: u32 = 3;
const HOST_NUMA: u32 = 4;

fn malloc(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, NORMAL_ONLY) }, ACL_SUCCESS);
    p
}

fn malloc_host(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, ACL_SUCCESS);
    p
}

fn on_device<R: Send + 'static>(device: i32, f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(move || {
        assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
        let r = f();
        assert_eq!(aclrtResetDevice(device), ACL_SUCCESS);
        r
    })
    .join()
    .unwrap()
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn put(dev: *mut c_void, data: &[u8]) {
    // SAFETY: `dev` is device memory of at least `data.len()` bytes.
    assert_eq!(unsafe { aclrtMemcpy(dev, data.len(), data.as_ptr().cast(), data.len(), H2D) }, ACL_SUCCESS);
}

fn get(dev: *const c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `dev` is device memory of at least `len` bytes.
    assert_eq!(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, dev, len, D2H) }, ACL_SUCCESS);
    out
}

fn loc(r#type: u32, id: u32) -> aclrtMemLocation {
    aclrtMemLocation { id, r#type }
}

fn attr(dst: aclrtMemLocation, src: aclrtMemLocation) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr { dstLoc: dst, srcLoc: src, rsv: [0; 16] }
}

/// The arrays of one batch call.
struct Batch {
    dsts: Vec<*mut c_void>,
    maxs: Vec<usize>,
    srcs: Vec<*mut c_void>,
    sizes: Vec<usize>,
    attrs: Vec<aclrtMemcpyBatchAttr>,
    idxs: Vec<usize>,
}

impl Batch {
    fn new() -> Self {
        Batch { dsts: vec![], maxs: vec![], srcs: vec![], sizes: vec![], attrs: vec![], idxs: vec![] }
    }

    /// Adds copies under a new attribute.
    fn group(
        &mut self,
        a: aclrtMemcpyBatchAttr,
        copies: &[(*mut c_void, *const c_void, usize)],
    ) -> &mut Self {
        self.idxs.push(self.dsts.len());
        self.attrs.push(a);
        for &(d, s, n) in copies {
            self.dsts.push(d);
            self.maxs.push(n);
            self.srcs.push(s.cast_mut());
            self.sizes.push(n);
        }
        self
    }

    /// `aclrtMemcpyBatch`: the code and the failure index.
    fn run(&mut self) -> (aclError, usize) {
        let mut fail = 7usize;
        // SAFETY: the arrays hold the lengths passed; the ranges are live buffers of the test.
        let code = unsafe {
            aclrtMemcpyBatch(
                self.dsts.as_mut_ptr(),
                self.maxs.as_mut_ptr(),
                self.srcs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                self.dsts.len(),
                self.attrs.as_mut_ptr(),
                self.idxs.as_mut_ptr(),
                self.attrs.len(),
                &mut fail,
            )
        };
        (code, fail)
    }

    /// `aclrtMemcpyBatchAsync` on `stream`.
    fn run_async(&mut self, stream: *mut c_void) -> (aclError, usize) {
        let mut fail = 7usize;
        // SAFETY: as `run`; the buffers outlive the stream's synchronisation.
        let code = unsafe {
            aclrtMemcpyBatchAsync(
                self.dsts.as_mut_ptr(),
                self.maxs.as_mut_ptr(),
                self.srcs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                self.dsts.len(),
                self.attrs.as_mut_ptr(),
                self.idxs.as_mut_ptr(),
                self.attrs.len(),
                &mut fail,
                stream,
            )
        };
        (code, fail)
    }
}

#[test]
fn a_batch_of_host_to_device_and_device_to_host_copies_moves_every_byte() {
    on_device(1, || {
        let n = 64 * 1024;
        let dev_a = malloc(n);
        let dev_b = malloc(n);
        let dev_c = malloc(n);
        let pinned = malloc_host(n);
        let plain = pattern(n, 1);
        // SAFETY: `pinned` is n bytes of host memory.
        unsafe { std::slice::from_raw_parts_mut(pinned.cast::<u8>(), n) }.copy_from_slice(&pattern(n, 2));
        put(dev_c, &pattern(n, 3));
        let mut out = vec![0u8; n];
        let d1 = loc(DEVICE, 1);
        let mut b = Batch::new();
        // Plain and pinned host memory into device memory, in 16 blocks each...
        let blocks = |dst: *mut c_void, src: *const c_void| -> Vec<(*mut c_void, *const c_void, usize)> {
            (0..16)
                .map(|i| (dst.wrapping_byte_add(i * 4096), src.wrapping_byte_add(i * 4096), 4096))
                .collect()
        };
        b.group(attr(d1, loc(HOST, 0)), &blocks(dev_a, plain.as_ptr().cast()));
        b.group(attr(d1, loc(HOST_NUMA, 0)), &blocks(dev_b, pinned));
        // ...and device memory back to plain host memory, one large copy.
        b.group(attr(loc(HOST, 0), d1), &[(out.as_mut_ptr().cast(), dev_c, n)]);
        assert_eq!(b.run(), (ACL_SUCCESS, usize::MAX));
        assert_eq!(get(dev_a, 64 * 1024), plain[..64 * 1024]);
        assert_eq!(get(dev_b, 64 * 1024), pattern(n, 2)[..64 * 1024]);
        assert_eq!(out, pattern(n, 3));
        // V2: the same without the failure index.
        put(dev_a, &vec![0; n]);
        // SAFETY: the arrays hold the lengths passed; the ranges are live buffers.
        let code = unsafe {
            aclrtMemcpyBatchV2(
                b.dsts.as_mut_ptr(),
                b.maxs.as_mut_ptr(),
                b.srcs.as_mut_ptr(),
                b.sizes.as_mut_ptr(),
                b.dsts.len(),
                b.attrs.as_mut_ptr(),
                b.idxs.as_mut_ptr(),
                b.attrs.len(),
            )
        };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(get(dev_a, 64 * 1024), plain[..64 * 1024]);
        for p in [dev_a, dev_b, dev_c] {
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
        }
        assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
    });
}

#[test]
fn a_bad_copy_is_named_by_its_index_and_nothing_is_copied() {
    on_device(2, || {
        let n = 8192;
        let dev = malloc(n);
        let dev2 = malloc(n);
        let src = pattern(n, 9);
        let d2 = loc(DEVICE, 2);
        let h = loc(HOST, 0);
        let zero = vec![0u8; n];
        put(dev, &zero);
        let s = src.as_ptr().cast::<c_void>();

        // A device-to-device copy is not a batch copy: its index, 107000, nothing moved.
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 4096), (dev.wrapping_byte_add(4096), s, 4096)]);
        b.group(attr(d2, d2), &[(dev2, dev, 4096)]);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, 2));
        assert_eq!(get(dev, n), zero, "a refused batch copies nothing");

        // An attribute naming the wrong device: the index of the first copy it covers.
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16)]);
        b.group(attr(loc(DEVICE, 5), h), &[(dev2, s, 16)]);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, 1));
        // Host memory said to be device memory.
        let mut b = Batch::new();
        b.group(attr(d2, d2), &[(dev, s, 16)]);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, 0));
        // A copy running past its device allocation.
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16), (dev.wrapping_byte_add(n - 8), s, 16)]);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, 1));

        // Errors not about one copy: SIZE_MAX.
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16), (dev2, s, 16)]);
        b.maxs[1] = 8;
        assert_eq!(b.run(), (ACL_ERROR_INVALID_PARAM, usize::MAX), "destMax below the size");
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16)]);
        b.attrs[0].rsv[3] = 1;
        assert_eq!(b.run(), (ACL_ERROR_INVALID_PARAM, usize::MAX), "reserved bytes");
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16), (dev2, s, 16)]);
        b.idxs[0] = 1;
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, usize::MAX), "attrsIndexes[0] is not 0");
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16)]);
        b.group(attr(d2, h), &[(dev2, s, 16)]);
        b.idxs[1] = 2;
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, usize::MAX), "an index past the copies");
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16)]);
        b.group(attr(d2, h), &[]);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, usize::MAX), "more attributes than copies");

        // Every size 0: success without looking further.
        let mut b = Batch::new();
        b.group(attr(d2, d2), &[(null_mut(), null(), 0), (dev, dev2, 0)]);
        assert_eq!(b.run(), (ACL_SUCCESS, usize::MAX));

        // More than 4096 copies at once: 107000 (the asynchronous form has no limit).
        let mut b = Batch::new();
        let many: Vec<_> = (0..4097).map(|i| (dev.wrapping_byte_add(i % 4096), s, 1)).collect();
        b.group(attr(d2, h), &many);
        assert_eq!(b.run(), (ACL_ERROR_RT_PARAM_INVALID, usize::MAX));

        // NULL arrays and a NULL failIndex.
        let mut b = Batch::new();
        b.group(attr(d2, h), &[(dev, s, 16)]);
        let mut fail = 0usize;
        // SAFETY: NULL arrays are refused before any read.
        unsafe {
            let code = aclrtMemcpyBatch(
                b.dsts.as_mut_ptr(),
                b.maxs.as_mut_ptr(),
                b.srcs.as_mut_ptr(),
                b.sizes.as_mut_ptr(),
                1,
                b.attrs.as_mut_ptr(),
                b.idxs.as_mut_ptr(),
                1,
                null_mut(),
            );
            assert_eq!(code, ACL_ERROR_INVALID_PARAM);
            let code = aclrtMemcpyBatch(
                b.dsts.as_mut_ptr(),
                null_mut(),
                b.srcs.as_mut_ptr(),
                b.sizes.as_mut_ptr(),
                1,
                b.attrs.as_mut_ptr(),
                b.idxs.as_mut_ptr(),
                1,
                &mut fail,
            );
            assert_eq!((code, fail), (ACL_ERROR_INVALID_PARAM, usize::MAX));
            let code = aclrtMemcpyBatch(
                b.dsts.as_mut_ptr(),
                b.maxs.as_mut_ptr(),
                b.srcs.as_mut_ptr(),
                b.sizes.as_mut_ptr(),
                0,
                b.attrs.as_mut_ptr(),
                b.idxs.as_mut_ptr(),
                1,
                &mut fail,
            );
            assert_eq!(code, ACL_ERROR_INVALID_PARAM, "numBatches 0");
        }
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtFree(dev2), ACL_SUCCESS);
    });
}

#[test]
fn an_async_batch_runs_on_its_stream() {
    on_device(3, || {
        let n = 1 << 20;
        let mut stream = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, ACL_SUCCESS);
        let dev = malloc(n);
        let pin_in = malloc_host(n);
        let pin_out = malloc_host(n);
        // SAFETY: pinned buffers of n bytes each.
        let (input, output) = unsafe {
            (
                std::slice::from_raw_parts_mut(pin_in.cast::<u8>(), n),
                std::slice::from_raw_parts_mut(pin_out.cast::<u8>(), n),
            )
        };
        input.copy_from_slice(&pattern(n, 5));
        let d3 = loc(DEVICE, 3);
        let h = loc(HOST, 0);
        let blocks = 256;
        let len = n / blocks;
        let mut up = Batch::new();
        let ups: Vec<_> = (0..blocks)
            .map(|i| (dev.wrapping_byte_add(i * len), pin_in.wrapping_byte_add(i * len).cast_const(), len))
            .collect();
        up.group(attr(d3, h), &ups);
        let mut down = Batch::new();
        let downs: Vec<_> = (0..blocks)
            .map(|i| (pin_out.wrapping_byte_add(i * len), dev.wrapping_byte_add(i * len).cast_const(), len))
            .collect();
        down.group(attr(h, d3), &downs);
        assert_eq!(up.run_async(stream), (ACL_SUCCESS, usize::MAX));
        assert_eq!(down.run_async(stream), (ACL_SUCCESS, usize::MAX));
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
        assert_eq!(output, &pattern(n, 5)[..]);

        // Plain host memory: copied before the call returns.
        let mut plain = vec![0u8; 4096];
        let mut b = Batch::new();
        b.group(attr(h, d3), &[(plain.as_mut_ptr().cast(), dev, 4096)]);
        assert_eq!(b.run_async(stream), (ACL_SUCCESS, usize::MAX));
        assert_eq!(plain, pattern(n, 5)[..4096]);

        // The asynchronous form refuses a copy of 0 bytes among others, naming it.
        let mut b = Batch::new();
        b.group(attr(d3, h), &[(dev, pin_in, 16), (dev, pin_in, 0)]);
        assert_eq!(b.run_async(stream), (ACL_ERROR_RT_PARAM_INVALID, 1));
        // No limit of 4096 copies.
        let mut b = Batch::new();
        let many: Vec<_> = (0..5000)
            .map(|i| (dev.wrapping_byte_add(i * 8), pin_in.wrapping_byte_add(i * 8).cast_const(), 8))
            .collect();
        b.group(attr(d3, h), &many);
        assert_eq!(b.run_async(stream), (ACL_SUCCESS, usize::MAX));
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);

        assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtFreeHost(pin_in), ACL_SUCCESS);
        assert_eq!(aclrtFreeHost(pin_out), ACL_SUCCESS);
    });
}

#[test]
fn two_dimensional_copies_follow_the_pitches() {
    on_device(4, || {
        let (width, height, spitch, dpitch) = (100usize, 30usize, 128usize, 160usize);
        let src = pattern(spitch * height, 7);
        let dev = malloc(dpitch * height);
        put(dev, &vec![0xEE; dpitch * height]);
        // SAFETY: both ends hold their extents.
        let code = unsafe { aclrtMemcpy2d(dev, dpitch, src.as_ptr().cast(), spitch, width, height, H2D) };
        assert_eq!(code, ACL_SUCCESS);
        let on_dev = get(dev, dpitch * height);
        for row in 0..height {
            assert_eq!(
                on_dev[row * dpitch..row * dpitch + width],
                src[row * spitch..row * spitch + width],
                "row {row}"
            );
            assert!(
                on_dev[row * dpitch + width..(row + 1) * dpitch].iter().all(|&b| b == 0xEE),
                "gap of row {row}"
            );
        }
        // Back to the host, packed (pitch = width), with the kind left to the runtime.
        let mut back = vec![0u8; width * height];
        // SAFETY: both ends hold their extents.
        let code =
            unsafe { aclrtMemcpy2d(back.as_mut_ptr().cast(), width, dev, dpitch, width, height, DEFAULT) };
        assert_eq!(code, ACL_SUCCESS);
        for row in 0..height {
            assert_eq!(back[row * width..(row + 1) * width], src[row * spitch..row * spitch + width]);
        }

        // Device to device: not synchronously, but on a stream.
        let dev2 = malloc(width * height);
        // SAFETY: device ends of the right extents.
        unsafe {
            assert_eq!(
                aclrtMemcpy2d(dev2, width, dev, dpitch, width, height, D2D),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(
                aclrtMemcpy2dAsync(dev2, width, dev, dpitch, width, height, D2D, null_mut()),
                ACL_SUCCESS
            );
        }
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert_eq!(get(dev2, width * height), back);
        // Asynchronous host to device from pinned memory, then synchronise.
        let pinned = malloc_host(width * height);
        // SAFETY: pinned buffer of that size.
        unsafe { std::slice::from_raw_parts_mut(pinned.cast::<u8>(), width * height) }.fill(0x42);
        // SAFETY: both ends hold their extents until the synchronisation.
        let code = unsafe { aclrtMemcpy2dAsync(dev2, width, pinned, width, width, height, H2D, null_mut()) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert_eq!(get(dev2, width * height), vec![0x42; width * height]);

        // The rules.
        // SAFETY: every call is refused before touching memory, or copies nothing.
        unsafe {
            let s = src.as_ptr().cast();
            assert_eq!(
                aclrtMemcpy2d(dev, 50, s, spitch, width, height, H2D),
                ACL_ERROR_INVALID_PARAM,
                "width > dpitch"
            );
            assert_eq!(
                aclrtMemcpy2d(dev, dpitch, s, 99, width, height, H2D),
                ACL_ERROR_INVALID_PARAM,
                "width > spitch"
            );
            assert_eq!(
                aclrtMemcpy2d(dev, dpitch, s, spitch, width, height, 0),
                ACL_ERROR_INVALID_PARAM,
                "host to host"
            );
            assert_eq!(
                aclrtMemcpy2d(null_mut(), dpitch, s, spitch, width, height, H2D),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy2d(null_mut(), 0, null(), 0, 0, height, H2D),
                ACL_ERROR_RT_PARAM_INVALID,
                "width 0 (as the vendor's runtime)"
            );
            assert_eq!(
                aclrtMemcpy2d(dev, 1 << 23, s, 1 << 23, 5_000_001, 1, H2D),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtMemcpy2d(dev, 1, s, 1, 1, 5 * 1024 * 1024 + 1, H2D), ACL_ERROR_RT_PARAM_INVALID);
            let wide = vec![0u8; 1 << 16];
            let code = aclrtMemcpy2d(dev, 4096, wide.as_ptr().cast(), 100, 100, 3, H2D);
            assert_eq!(code, ACL_ERROR_RT_PARAM_INVALID, "past the allocation");
            assert_eq!(
                aclrtMemcpy2d(dev, dpitch, s, spitch, width, height, D2H),
                ACL_ERROR_RT_PARAM_INVALID,
                "ends swapped"
            );
        }
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtFree(dev2), ACL_SUCCESS);
        assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
    });
}

#[test]
fn memset_d32_writes_whole_words_where_the_rules_allow() {
    on_device(5, || {
        let dev = malloc(4096);
        put(dev, &[0u8; 4096]);
        assert_eq!(aclrtMemsetD32(dev.wrapping_byte_add(8), 4096, 0xDEADBEEF, 100), ACL_SUCCESS);
        let bytes = get(dev, 4096);
        let words: Vec<u32> = bytes.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(words[..2], [0, 0]);
        assert!(words[2..102].iter().all(|&w| w == 0xDEADBEEF));
        assert!(words[102..].iter().all(|&w| w == 0));
        // On a stream, then synchronised.
        assert_eq!(aclrtMemsetD32Async(dev, 4096, 7, 1024, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert!(get(dev, 4096).chunks(4).all(|c| u32::from_ne_bytes(c.try_into().unwrap()) == 7));
        // Pinned host memory: at once, even by the asynchronous form.
        let pinned = malloc_host(64);
        assert_eq!(aclrtMemsetD32Async(pinned, 64, 0x01020304, 16, null_mut()), ACL_SUCCESS);
        // SAFETY: 16 words of pinned host memory.
        let host = unsafe { std::slice::from_raw_parts(pinned.cast::<u32>(), 16) };
        assert!(host.iter().all(|&w| w == 0x01020304));

        // The rules.
        let mut plain = [0u32; 4];
        assert_eq!(aclrtMemsetD32(null_mut(), 0, 1, 0), ACL_SUCCESS, "N 0");
        assert_eq!(aclrtMemsetD32(null_mut(), 16, 1, 4), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtMemsetD32(dev.wrapping_byte_add(2), 16, 1, 2), ACL_ERROR_INVALID_PARAM, "misaligned");
        assert_eq!(aclrtMemsetD32(dev, 15, 1, 4), ACL_ERROR_INVALID_PARAM, "memSize < N * 4");
        assert_eq!(
            aclrtMemsetD32(plain.as_mut_ptr().cast(), 16, 1, 4),
            ACL_ERROR_INVALID_PARAM,
            "plain host memory"
        );
        assert_eq!(plain, [0; 4]);
        assert_eq!(
            aclrtMemsetD32(dev.wrapping_byte_add(4092), 8, 1, 2),
            ACL_ERROR_RT_PARAM_INVALID,
            "past the end"
        );
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
    });
}

fn cfg_attr(kind: u32, value: u32) -> aclrtMallocAttribute {
    aclrtMallocAttribute { attr: kind, value: aclrtMallocAttrValue { deviceId: value } }
}

#[test]
// The attribute arrays are changed between calls that read them through `cfg`.
#[allow(unused_assignments)]
fn every_allocation_variant_gives_memory_freed_its_own_way() {
    on_device(6, || {
        // SAFETY: valid out-pointers and configurations throughout.
        unsafe {
            let mut p = null_mut();
            assert_eq!(aclrtMallocAlign32(&mut p, 100, NORMAL_ONLY), ACL_SUCCESS);
            assert_eq!(p.addr() % 64, 0);
            put(p, &[1; 100]);
            assert_eq!(
                aclrtFreeHost(p),
                ACL_ERROR_RT_PARAM_INVALID,
                "device memory is not freed as host memory"
            );
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
            // A policy outside the enum: huge pages from 2 MiB on.
            assert_eq!(aclrtMallocAlign32(&mut p, 4 << 20, 99), ACL_SUCCESS);
            assert_eq!(p.addr() % MIB2, 0);
            assert_eq!(aclrtFreeWithDevSync(p), ACL_SUCCESS);
            assert_eq!(aclrtMallocAlign32(&mut p, 0, NORMAL_ONLY), ACL_ERROR_INVALID_PARAM);

            assert_eq!(aclrtMallocCached(&mut p, 4096, 1), ACL_SUCCESS);
            assert_eq!(p.addr() % MIB2, 0, "HUGE_ONLY");
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
            assert_eq!(aclrtMallocCached(null_mut(), 4096, 1), ACL_ERROR_INVALID_PARAM);

            // With a configuration.
            let mut attrs = [cfg_attr(1, 33), cfg_attr(2, 6), cfg_attr(0, 0)];
            let mut cfg = aclrtMallocConfig { attrs: attrs.as_mut_ptr(), numAttrs: 3 };
            assert_eq!(
                aclrtMallocWithCfg(&mut p, 4096, NORMAL_ONLY | 0x1000 | 0x100000, &mut cfg),
                ACL_SUCCESS
            );
            assert_eq!(p.addr() % 64, 0);
            put(p, &[2; 4096]);
            assert_eq!(get(p, 4096), vec![2; 4096]);
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
            assert_eq!(aclrtMallocWithCfg(&mut p, 4096, NORMAL_ONLY, null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtFree(p), ACL_SUCCESS);
            attrs[1] = cfg_attr(2, 5);
            assert_eq!(
                aclrtMallocWithCfg(&mut p, 4096, 0, &mut cfg),
                ACL_ERROR_RT_PARAM_INVALID,
                "another device"
            );
            attrs[1] = cfg_attr(3, 1);
            assert_eq!(aclrtMallocWithCfg(&mut p, 4096, 0, &mut cfg), ACL_ERROR_RT_PARAM_INVALID, "VA flag");
            let mut no_attrs = aclrtMallocConfig { attrs: null_mut(), numAttrs: 2 };
            assert_eq!(aclrtMallocWithCfg(&mut p, 4096, 0, &mut no_attrs), ACL_ERROR_INVALID_PARAM);
            no_attrs.numAttrs = 0;
            assert_eq!(aclrtMallocWithCfg(&mut p, 4096, 0, &mut no_attrs), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtMallocWithCfg(&mut p, 0, 0, &mut no_attrs),
                ACL_ERROR_INVALID_PARAM,
                "size 0 first"
            );
            no_attrs.numAttrs = 2;
            assert_eq!(aclrtMallocHostWithCfg(&mut p, 64, &mut no_attrs), ACL_ERROR_RT_PARAM_INVALID);

            // Host memory with a configuration: host memory, freed as such.
            let mut host_attrs = [cfg_attr(1, 33), cfg_attr(3, 1)];
            let mut host_cfg = aclrtMallocConfig { attrs: host_attrs.as_mut_ptr(), numAttrs: 2 };
            assert_eq!(aclrtMallocHostWithCfg(&mut p, 1000, &mut host_cfg), ACL_SUCCESS);
            assert_eq!(p.addr() % 64, 0);
            std::slice::from_raw_parts_mut(p.cast::<u8>(), 1000).fill(3);
            assert_eq!(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID, "host memory is not freed as device memory");
            assert_eq!(aclrtFreeHostWithDevSync(p), ACL_SUCCESS);
            assert_eq!(aclrtFreeHostWithDevSync(p), ACL_ERROR_RT_PARAM_INVALID, "double free");
            host_attrs[1] = cfg_attr(3, 2);
            assert_eq!(aclrtMallocHostWithCfg(&mut p, 1000, &mut host_cfg), ACL_ERROR_RT_PARAM_INVALID);
            host_attrs[1] = cfg_attr(2, 6);
            assert_eq!(aclrtMallocHostWithCfg(&mut p, 1000, &mut host_cfg), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtMallocHostWithCfg(&mut p, 0, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtFreeWithDevSync(null_mut()), ACL_ERROR_INVALID_PARAM);
            // Like the vendor's device synchronisation, the wait needs a current context.
            assert_eq!(aclrtMallocAlign32(&mut p, 64, NORMAL_ONLY), ACL_SUCCESS);
            let addr = p.addr();
            let code = std::thread::spawn(move || {
                aclrtFreeWithDevSync(std::ptr::with_exposed_provenance_mut::<c_void>(addr))
            })
            .join()
            .unwrap();
            assert_eq!(code, ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(
                std::thread::spawn(|| aclrtFreeWithDevSync(null_mut())).join().unwrap(),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtFreeWithDevSync(p), ACL_SUCCESS);
        }
    });
}

#[test]
fn free_with_device_sync_waits_for_work_queued_on_that_memory() {
    on_device(7, || {
        let n = 1 << 20;
        let dev = malloc(n);
        put(dev, &pattern(n, 11));
        let out = malloc_host(n);
        let mut stream = null_mut();
        let mut notify = null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
            assert_eq!(aclrtCreateNotify(&mut notify, 0), ACL_SUCCESS);
        }
        // The stream waits for the notify, then copies the device memory out.
        assert_eq!(aclrtWaitAndResetNotify(notify, stream, 10), ACL_SUCCESS);
        // SAFETY: both ends live until the copy has run (the free waits for it).
        assert_eq!(unsafe { aclrtMemcpyAsync(out, n, dev, n, D2H, stream) }, ACL_SUCCESS);
        let started = Instant::now();
        let notify_addr = notify.addr();
        let recorder = std::thread::spawn(move || {
            assert_eq!(aclrtSetDevice(7), ACL_SUCCESS);
            std::thread::sleep(Duration::from_millis(200));
            let notify = std::ptr::with_exposed_provenance_mut::<c_void>(notify_addr);
            assert_eq!(aclrtRecordNotify(notify, null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(7), ACL_SUCCESS);
        });
        assert_eq!(aclrtFreeWithDevSync(dev), ACL_SUCCESS);
        assert!(started.elapsed() >= Duration::from_millis(150), "the free did not wait for the stream");
        // SAFETY: n bytes of pinned memory, written by the copy that ran before the free.
        let copied = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), n) };
        assert_eq!(copied, &pattern(n, 11)[..], "the queued copy ran before the memory was freed");
        recorder.join().unwrap();
        assert_eq!(aclrtSynchronizeStream(stream), ACL_SUCCESS);
        assert_eq!(aclrtFree(dev), ACL_ERROR_RT_PARAM_INVALID, "already freed");
        assert_eq!(aclrtDestroyStream(stream), ACL_SUCCESS);
        assert_eq!(aclrtDestroyNotify(notify), ACL_SUCCESS);
        assert_eq!(aclrtFreeHostWithDevSync(out), ACL_SUCCESS);
    });
}

#[test]
fn managed_memory_is_host_memory_and_device_memory_at_once() {
    on_device(0, || {
        let n = 3 << 20;
        let mut m = null_mut();
        // SAFETY: valid out-pointer.
        unsafe {
            assert_eq!(aclrtMemAllocManaged(&mut m, n as u64, 0), ACL_ERROR_INVALID_PARAM, "flag must be 1");
            assert_eq!(aclrtMemAllocManaged(&mut m, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemAllocManaged(&mut m, n as u64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_SUCCESS);
        }
        assert_eq!(m.addr() % MIB2, 0);
        // The pointer attributes say managed memory (ACL_MEM_LOCATION_TYPE_MANAGED, 3) of the
        // device current at allocation, in 2 MiB pages.
        let mut attrs = ascendless::ffi::acl_rt::pointer::aclrtPtrAttributes {
            location: ascendless::ffi::acl_rt::location::aclrtMemLocation { id: 9, r#type: 9 },
            pageSize: 0,
            rsv: [0; 4],
        };
        // SAFETY: valid out-pointer.
        let rc = unsafe { ascendless::ffi::acl_rt::pointer::aclrtPointerGetAttributes(m, &mut attrs) };
        assert_eq!(
            (rc, attrs.location.r#type, attrs.location.id, attrs.pageSize),
            (ACL_SUCCESS, 3, 0, MIB2 as u32)
        );
        // Host code writes it directly...
        // SAFETY: managed memory is host-accessible; n bytes.
        let host = unsafe { std::slice::from_raw_parts_mut(m.cast::<u8>(), n) };
        host.copy_from_slice(&pattern(n, 21));
        // ...and copies take it as device memory and as host memory.
        let dev = malloc(n);
        // SAFETY: live buffers of n bytes.
        unsafe {
            assert_eq!(aclrtMemcpy(dev, n, m, n, D2D), ACL_SUCCESS);
            assert_eq!(get(dev, n), pattern(n, 21));
            assert_eq!(aclrtMemcpy(dev, n, m, n, H2D), ACL_SUCCESS);
            put(dev, &pattern(n, 22));
            assert_eq!(aclrtMemcpy(m, n, dev, n, D2H), ACL_SUCCESS);
        }
        assert_eq!(host, &pattern(n, 22)[..]);
        // A batch names it managed.
        let mut b = Batch::new();
        b.group(attr(loc(DEVICE, 0), loc(MANAGED, 0)), &[(dev, m, 4096)]);
        assert_eq!(b.run(), (ACL_SUCCESS, usize::MAX));
        let mut b = Batch::new();
        b.group(attr(loc(DEVICE, 0), loc(HOST, 0)), &[(dev, m, 4096)]);
        assert_eq!(
            b.run(),
            (ACL_ERROR_RT_PARAM_INVALID, 0),
            "managed memory is not plain host memory to a batch"
        );
        // Not for aclrtMemsetD32 (the vendor takes only aclrtMalloc and aclrtMallocHost memory).
        assert_eq!(aclrtMemsetD32(m, 16, 1, 4), ACL_ERROR_INVALID_PARAM);

        // Advice and attributes.
        let dev0 = aclrtMemManagedLocation { r#type: 1, id: 0 };
        let host_loc = aclrtMemManagedLocation { r#type: 2, id: 0 };
        let get_attr = |attribute: i32, at: *mut c_void, size: usize| -> i32 {
            let mut v = 99i32;
            // SAFETY: an int-sized buffer.
            let code = unsafe { aclrtMemManagedGetAttr(attribute, at, size, (&mut v as *mut i32).cast(), 4) };
            assert_eq!(code, ACL_SUCCESS);
            v
        };
        assert_eq!(get_attr(1, m, MIB2), 0, "not read-mostly yet");
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 0, host_loc), ACL_SUCCESS);
        assert_eq!(get_attr(1, m, MIB2), 1);
        assert_eq!(get_attr(1, m, n), 0, "only the first chunk is read-mostly");
        assert_eq!(aclrtMemManagedAdvise(m, (4 << 20) as u64, 2, dev0), ACL_SUCCESS);
        assert_eq!((get_attr(2, m, n), get_attr(4, m, n), get_attr(5, m, n)), (0, 1, 0));
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 2, host_loc), ACL_SUCCESS);
        assert_eq!(get_attr(2, m, n), -2, "not the same over the range");
        assert_eq!(get_attr(2, m, MIB2), -1, "the host");
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 4, dev0), ACL_SUCCESS);
        let mut by = [0i32; 3];
        // SAFETY: three ints.
        let code = unsafe { aclrtMemManagedGetAttr(3, m, MIB2, by.as_mut_ptr().cast(), 12) };
        assert_eq!((code, by), (ACL_SUCCESS, [0, -2, -2]));
        // The rules.
        assert_eq!(aclrtMemManagedAdvise(m, 4096, 0, host_loc), ACL_ERROR_RT_PARAM_INVALID, "not 2 MiB");
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 6, host_loc), ACL_ERROR_RT_PARAM_INVALID);
        let bad_dev = aclrtMemManagedLocation { r#type: 1, id: 64 };
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 2, bad_dev), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            aclrtMemManagedAdvise(dev, MIB2 as u64, 0, host_loc),
            ACL_ERROR_RT_PARAM_INVALID,
            "not managed"
        );
        assert_eq!(aclrtMemManagedAdvise(null(), MIB2 as u64, 0, host_loc), ACL_ERROR_INVALID_PARAM);
        let mut v = 0i32;
        // SAFETY: an int.
        unsafe {
            assert_eq!(
                aclrtMemManagedGetAttr(9, m, MIB2, (&mut v as *mut i32).cast(), 4),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtMemManagedGetAttr(1, m, MIB2, (&mut v as *mut i32).cast(), 8),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }

        // A prefetch is a stream task; once it has run, the attributes say where.
        assert_eq!(get_attr(6, m, n), -2, "never prefetched");
        assert_eq!(aclrtMemManagedPrefetchAsync(m, 4 << 20, dev0, 0, null_mut()), ACL_SUCCESS);
        assert_eq!(aclrtMemManagedPrefetchAsync(m, 4 << 20, dev0, 1, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert_eq!((get_attr(6, m, n), get_attr(7, m, n), get_attr(8, m, n)), (0, 1, 0));
        let mut ptrs = [m.cast_const(), m.wrapping_byte_add(MIB2).cast_const()];
        let mut sizes = [MIB2, MIB2];
        let mut locs = [dev0, host_loc];
        let mut idxs = [0usize, 1];
        // SAFETY: arrays of the lengths passed.
        let code = unsafe {
            aclrtMemManagedPrefetchBatchAsync(
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                2,
                locs.as_mut_ptr(),
                idxs.as_mut_ptr(),
                2,
                0,
                null_mut(),
            )
        };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStream(null_mut()), ACL_SUCCESS);
        assert_eq!((get_attr(6, m, MIB2), get_attr(6, m.wrapping_byte_add(MIB2), MIB2)), (0, -1));
        // Several attributes at once.
        let mut attrs = [1i32, 7];
        let (mut a, mut c) = (0i32, 0i32);
        let mut data = [(&mut a as *mut i32).cast::<c_void>(), (&mut c as *mut i32).cast()];
        let mut data_sizes = [4usize, 4];
        // SAFETY: arrays of two; each data entry an int.
        let code = unsafe {
            aclrtMemManagedGetAttrs(
                attrs.as_mut_ptr(),
                2,
                m,
                MIB2,
                data.as_mut_ptr(),
                data_sizes.as_mut_ptr(),
            )
        };
        assert_eq!((code, a, c), (ACL_SUCCESS, 1, 1));

        assert_eq!(aclrtFreeHost(m), ACL_ERROR_RT_PARAM_INVALID, "managed memory is freed with aclrtFree");
        assert_eq!(aclrtFree(m), ACL_SUCCESS);
        assert_eq!(aclrtMemManagedAdvise(m, MIB2 as u64, 0, host_loc), ACL_ERROR_RT_PARAM_INVALID, "freed");
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
    });
}
