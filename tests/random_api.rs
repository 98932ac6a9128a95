//! `aclrtRandomNumAsync` through the C API: random-number tasks on a stream, as the vendor's
//! `built_in_task/1_random_num_task` sample calls them (values in the task info, a 16-byte
//! counter in device memory), with parameters by address and the documented bad inputs.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_base::aclrtStream;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::kernel_types::*;
use ascendless::ffi::acl_rt::memory::aclrtFree;
use ascendless::ffi::acl_rt::random::aclrtRandomNumAsync;
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream};
use ascendless::runtime::reduce::{bf16_to_f32, f16_to_f32};

const FLOAT: i32 = 0;
const FLOAT16: i32 = 1;
const INT32: i32 = 3;
const UINT64: i32 = 10;
const BF16: i32 = 27;
const DROPOUT: i32 = 0;
const UNIFORM: i32 = 1;
const NORMAL: i32 = 2;
const TRUNCATED: i32 = 3;

#[path = "common/device_mem.rs"]
mod device_mem;
use device_mem::{d2h, device_alloc, h2d, recent};

fn value(bytes: &[u8]) -> aclrtRandomParaInfo {
    let mut v = [0u8; 8];
    v[..bytes.len()].copy_from_slice(bytes);
    aclrtRandomParaInfo { isAddr: 0, valueOrAddr: v, size: bytes.len() as u8, rsv: [0; 6] }
}

fn at(addr: *mut c_void) -> aclrtRandomParaInfo {
    aclrtRandomParaInfo { isAddr: 1, valueOrAddr: (addr as u64).to_ne_bytes(), size: 8, rsv: [0; 6] }
}

/// A task info as the vendor's sample fills it; the last argument is (counter, result).
fn task(
    data_type: i32,
    func: i32,
    a: aclrtRandomParaInfo,
    b: aclrtRandomParaInfo,
    seed: u64,
    num: u64,
    (counter, out): (*mut c_void, *mut c_void),
) -> aclrtRandomNumTaskInfo {
    let param_info = if func == UNIFORM {
        aclrtRandomNumFuncParamInfo { uniformDisInfo: aclrtUniformDisInfo { min: a, max: b } }
    } else {
        aclrtRandomNumFuncParamInfo { normalDisInfo: aclrtNormalDisInfo { mean: a, stddev: b } }
    };
    aclrtRandomNumTaskInfo {
        dataType: data_type,
        randomNumFuncParaInfo: aclrtRandomNumFuncParaInfo { funcType: func, paramInfo: param_info },
        randomParaAddr: null_mut(),
        randomResultAddr: out,
        randomCounterAddr: counter,
        randomSeed: value(&seed.to_ne_bytes()),
        randomNum: value(&num.to_ne_bytes()),
        rsv: [0; 8],
    }
}

fn run(info: &aclrtRandomNumTaskInfo, s: aclrtStream) {
    // SAFETY: a live task info.
    assert_eq!(unsafe { aclrtRandomNumAsync(info, s, null_mut()) }, ACL_SUCCESS, "{}", recent());
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS, "{}", recent());
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect()
}

fn stream(device: i32) -> aclrtStream {
    assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, ACL_SUCCESS);
    s
}

#[test]
fn the_counter_makes_tasks_repeatable_and_consecutive_tasks_fresh() {
    let s = stream(0);
    let (out, counter) = (device_alloc(4096), device_alloc(16));
    h2d(counter, &[0; 16]);
    let n = 1000u64;
    let uni = |seed| {
        task(FLOAT, UNIFORM, value(&2f32.to_ne_bytes()), value(&5f32.to_ne_bytes()), seed, n, (counter, out))
    };
    run(&uni(42), s);
    let first = d2h(out, 4000);
    assert!(f32s(&first).iter().all(|v| (2.0..5.0).contains(v)));
    // 1000 values of 32 bits are 250 Philox blocks: the counter says so.
    assert_eq!(u128::from_le_bytes(d2h(counter, 16).try_into().unwrap()), 250);
    run(&uni(42), s);
    assert_ne!(d2h(out, 4000), first, "a second task on the same counter gives new numbers");
    h2d(counter, &[0; 16]);
    run(&uni(42), s);
    assert_eq!(d2h(out, 4000), first, "the same seed and counter give the same numbers");
    h2d(counter, &[0; 16]);
    run(&uni(43), s);
    assert_ne!(d2h(out, 4000), first, "another seed, other numbers");
    let mean = f32s(&first).iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
    assert!((mean - 3.5).abs() < 0.15, "mean {mean}");
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    for p in [out, counter] {
        assert_eq!(aclrtFree(p), ACL_SUCCESS);
    }
}

#[test]
fn every_distribution_and_type_of_the_sample() {
    let s = stream(1);
    let (out, counter) = (device_alloc(8 * 4096), device_alloc(16));
    h2d(counter, &[0; 16]);
    let n = 4096u64;

    run(
        &task(FLOAT, NORMAL, value(&3f32.to_ne_bytes()), value(&2f32.to_ne_bytes()), 0, n, (counter, out)),
        s,
    );
    let v: Vec<f64> = f32s(&d2h(out, 4 * 4096)).into_iter().map(f64::from).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    assert!(
        (mean - 3.0).abs() < 0.15 && (var.sqrt() - 2.0).abs() < 0.15,
        "mean {mean} stddev {}",
        var.sqrt()
    );

    // Truncated normal in bf16 (mean 1, stddev 2): within two stddev.
    run(
        &task(
            BF16,
            TRUNCATED,
            value(&0x3F80u16.to_ne_bytes()),
            value(&0x4000u16.to_ne_bytes()),
            0,
            n,
            (counter, out),
        ),
        s,
    );
    let b = d2h(out, 2 * 4096);
    let v: Vec<f32> = b.chunks_exact(2).map(|c| bf16_to_f32(u16::from_ne_bytes([c[0], c[1]]))).collect();
    assert!(
        v.iter().all(|x| (-3.0..=5.0).contains(x)),
        "{:?}",
        v.iter().find(|x| !(-3.0..=5.0).contains(*x))
    );
    assert!(v.iter().any(|x| *x < -1.0) && v.iter().any(|x| *x > 3.0));

    // Uniform fp16 in [1, 2).
    run(
        &task(
            FLOAT16,
            UNIFORM,
            value(&0x3C00u16.to_ne_bytes()),
            value(&0x4000u16.to_ne_bytes()),
            0,
            n,
            (counter, out),
        ),
        s,
    );
    let v: Vec<f32> =
        d2h(out, 2 * 4096).chunks_exact(2).map(|c| f16_to_f32(u16::from_ne_bytes([c[0], c[1]]))).collect();
    assert!(v.iter().all(|x| (1.0..2.0).contains(x)));

    // Uniform int32 in [1, 100): every value, none outside.
    run(
        &task(INT32, UNIFORM, value(&1i32.to_ne_bytes()), value(&100i32.to_ne_bytes()), 0, n, (counter, out)),
        s,
    );
    let v: Vec<i32> =
        d2h(out, 4 * 4096).chunks_exact(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert!(v.iter().all(|x| (1..100).contains(x)));
    assert!((1..100).all(|k| v.contains(&k)), "every value of [1, 100) appears in 4096 draws");

    // Uniform uint64 over a range wider than 32 bits.
    let (lo, hi) = (1u64 << 40, (1u64 << 40) + (1u64 << 36));
    run(
        &task(UINT64, UNIFORM, value(&lo.to_ne_bytes()), value(&hi.to_ne_bytes()), 0, 512, (counter, out)),
        s,
    );
    let v: Vec<u64> =
        d2h(out, 8 * 512).chunks_exact(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap())).collect();
    assert!(v.iter().all(|x| (lo..hi).contains(x)) && v.iter().any(|x| x - lo > 1 << 32));

    // Dropout bitmask: ratio 0.4 drops about 40% of 4096 bits, in 512 bytes; the byte after
    // them is left alone.
    h2d(out, &[0xAB; 513]);
    let mut t = task(FLOAT, DROPOUT, value(&0.4f32.to_ne_bytes()), value(&[]), 0, n, (counter, out));
    t.randomNumFuncParaInfo.paramInfo = aclrtRandomNumFuncParamInfo {
        dropoutBitmaskInfo: aclrtDropoutBitmaskInfo { dropoutRation: value(&0.4f32.to_ne_bytes()) },
    };
    run(&t, s);
    let mask = d2h(out, 513);
    let kept: u32 = mask[..512].iter().map(|b| b.count_ones()).sum();
    assert!((2300..2620).contains(&kept), "kept {kept} of 4096 (expected ~2458)");
    assert_eq!(mask[512], 0xAB);

    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    for p in [out, counter] {
        assert_eq!(aclrtFree(p), ACL_SUCCESS);
    }
}

#[test]
fn parameters_by_address_are_read_when_the_task_runs() {
    let s = stream(2);
    let (out, counter, params) = (device_alloc(64), device_alloc(16), device_alloc(16));
    h2d(counter, &[0; 16]);
    // min and max live in device memory; the count too.
    h2d(
        params,
        &[10i32.to_ne_bytes(), 12i32.to_ne_bytes(), 8u64.to_ne_bytes()[..4].try_into().unwrap(), [0; 4]]
            .concat(),
    );
    let mut info = task(INT32, UNIFORM, at(params), at(params.wrapping_byte_add(4)), 7, 0, (counter, out));
    info.randomNum = at(params.wrapping_byte_add(8));
    h2d(out, &[0xFF; 64]);
    run(&info, s);
    let v: Vec<i32> =
        d2h(out, 32).chunks_exact(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert!(v.iter().all(|x| (10..12).contains(x)), "{v:?}");
    assert_eq!(d2h(out.wrapping_byte_add(32), 32), [0xFF; 32], "8 values, not more");
    // A range read at run time that is empty fails the stream's task, not the call.
    h2d(params, &[5i32.to_ne_bytes(), 5i32.to_ne_bytes()].concat());
    // SAFETY: a live task info.
    assert_eq!(unsafe { aclrtRandomNumAsync(&info, s, null_mut()) }, ACL_SUCCESS);
    assert_ne!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert!(recent().contains("min"), "{}", recent());
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    for p in [out, counter, params] {
        assert_eq!(aclrtFree(p), ACL_SUCCESS);
    }
}

#[test]
fn bad_tasks_get_the_documented_codes_and_say_why() {
    let s = stream(3);
    let (out, counter) = (device_alloc(64), device_alloc(16));
    let ok = || {
        task(FLOAT, UNIFORM, value(&0f32.to_ne_bytes()), value(&1f32.to_ne_bytes()), 0, 16, (counter, out))
    };
    let host = [0u8; 64];
    let cases: Vec<(aclrtRandomNumTaskInfo, i32, &str)> = vec![
        (
            {
                let mut t = ok();
                t.dataType = 12;
                t
            },
            ACL_ERROR_RT_PARAM_INVALID,
            "data type 12",
        ),
        (
            {
                let mut t = ok();
                t.randomNumFuncParaInfo.funcType = 9;
                t
            },
            ACL_ERROR_RT_PARAM_INVALID,
            "funcType 9",
        ),
        (
            task(
                FLOAT,
                UNIFORM,
                value(&1f32.to_ne_bytes()),
                value(&1f32.to_ne_bytes()),
                0,
                16,
                (counter, out),
            ),
            ACL_ERROR_RT_PARAM_INVALID,
            "min",
        ),
        (
            task(
                INT32,
                NORMAL,
                value(&1i32.to_ne_bytes()),
                value(&1i32.to_ne_bytes()),
                0,
                16,
                (counter, out),
            ),
            ACL_ERROR_RT_PARAM_INVALID,
            "normal",
        ),
        (
            task(
                FLOAT,
                NORMAL,
                value(&1f32.to_ne_bytes()),
                value(&(-1f32).to_ne_bytes()),
                0,
                16,
                (counter, out),
            ),
            ACL_ERROR_RT_PARAM_INVALID,
            "stddev",
        ),
        (
            task(FLOAT, UNIFORM, value(&[0; 2]), value(&1f32.to_ne_bytes()), 0, 16, (counter, out)),
            ACL_ERROR_RT_PARAM_INVALID,
            "min.size is 2",
        ),
        (
            {
                let mut t = ok();
                t.randomSeed.isAddr = 2;
                t
            },
            ACL_ERROR_RT_PARAM_INVALID,
            "randomSeed.isAddr is 2",
        ),
        (
            {
                let mut t = ok();
                t.randomCounterAddr = null_mut();
                t
            },
            ACL_ERROR_INVALID_PARAM,
            "randomCounterAddr",
        ),
        (
            {
                let mut t = ok();
                t.randomResultAddr = host.as_ptr() as *mut c_void;
                t
            },
            ACL_ERROR_RT_PARAM_INVALID,
            "randomResultAddr",
        ),
        (
            task(
                FLOAT,
                UNIFORM,
                value(&0f32.to_ne_bytes()),
                value(&1f32.to_ne_bytes()),
                0,
                1 << 20,
                (counter, out),
            ),
            ACL_ERROR_RT_PARAM_INVALID,
            "randomResultAddr",
        ),
    ];
    for (info, code, why) in cases {
        // SAFETY: a live task info.
        assert_eq!(unsafe { aclrtRandomNumAsync(&info, s, null_mut()) }, code, "{why}");
        assert!(recent().contains(why), "{why}: {}", recent());
    }
    // SAFETY: NULL task info; a non-NULL reserve.
    unsafe {
        assert_eq!(aclrtRandomNumAsync(null(), s, null_mut()), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("taskInfo"));
        assert_eq!(aclrtRandomNumAsync(&ok(), s, out), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("reserve"));
    }
    // Nothing failed on the stream: the calls were refused before queuing.
    assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
    assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
    for p in [out, counter] {
        assert_eq!(aclrtFree(p), ACL_SUCCESS);
    }
}
