//! `acl/acl_base.h` (the vendor's `acl/acl_base_rt.h`): data buffers, element sizes,
//! half-precision conversions and the CANN attributes of the environment.

#![allow(non_camel_case_types, non_snake_case)]

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::ffi::acl_base::DataTypeArg;
use crate::ffi::ptr::Out;
use crate::ffi::{acl_call, boundary};
use crate::runtime::device_info;
use crate::runtime::reduce::{f16_to_f32, f32_to_f16};
use crate::sync;

/// A half-precision value as its 16 bits (C has no half type).
pub type aclFloat16 = u16;

/// A memory address and size, described together (opaque to C).
pub struct aclDataBuffer {
    data: *mut c_void,
    size: usize,
}

/// The data buffers alive, by address: a pointer not from `aclCreateDataBuffer` (or destroyed)
/// is refused instead of read.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

/// `value` as `float`. The vendor gives the all-ones exponent no special meaning here: +Inf
/// (0x7C00) is 65536.0, -Inf -65536.0, NaN 0x7E00 98304.0; so does this.
#[unsafe(no_mangle)]
pub extern "C" fn aclFloat16ToFloat(value: aclFloat16) -> f32 {
    if (value >> 10) & 0x1f == 0x1f {
        let sign = if value & 0x8000 != 0 { -1.0 } else { 1.0 };
        return sign * 65536.0 * (1.0 + f32::from(value & 0x3ff) / 1024.0);
    }
    f16_to_f32(value)
}

/// `value` as half precision, rounded to nearest (ties to even) and saturated, as the vendor's:
/// NaN, +Inf and anything beyond 65504 give 65504 (0x7BFF), -Inf and below give -65504.
#[unsafe(no_mangle)]
pub extern "C" fn aclFloatToFloat16(value: f32) -> aclFloat16 {
    if value.is_nan() {
        return 0x7bff;
    }
    let h = f32_to_f16(value);
    if (h >> 10) & 0x1f == 0x1f { (h & 0x8000) | 0x7bff } else { h }
}

/// A new description of `size` bytes at `data` (neither is checked: the vendor lets a buffer
/// describe NULL or 0 bytes); NULL only if memory runs out.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut aclDataBuffer {
    boundary("aclCreateDataBuffer", std::ptr::null_mut(), || {
        let b = Box::into_raw(Box::new(aclDataBuffer { data, size }));
        sync::lock(&LIVE).get_or_insert_with(HashSet::new).insert(b.addr());
        b
    })
}

/// Destroys a description (not the memory it describes); a pointer not from
/// `aclCreateDataBuffer`, or destroyed already: 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclDestroyDataBuffer(dataBuffer: *const aclDataBuffer) -> aclError {
    acl_call("aclDestroyDataBuffer", || {
        let removed = sync::lock(&LIVE).as_mut().is_some_and(|l| l.remove(&dataBuffer.addr()));
        if !removed {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "dataBuffer is not a live buffer from aclCreateDataBuffer",
            ));
        }
        // SAFETY: the address was in LIVE, so it came from Box::into_raw in aclCreateDataBuffer
        // and has not been freed (removal from LIVE is the one way to free it).
        drop(unsafe { Box::from_raw(dataBuffer.cast_mut()) });
        Ok(())
    })
}

/// Makes a description describe `size` bytes at `data`; a pointer not from
/// `aclCreateDataBuffer`: 100000.
// The pointer is written only once found among the live buffers, so a bad one is an error code.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[unsafe(no_mangle)]
pub extern "C" fn aclUpdateDataBuffer(
    dataBuffer: *mut aclDataBuffer,
    data: *mut c_void,
    size: usize,
) -> aclError {
    acl_call("aclUpdateDataBuffer", || {
        let live = sync::lock(&LIVE);
        if !live.as_ref().is_some_and(|l| l.contains(&dataBuffer.addr())) {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "dataBuffer is not a live buffer from aclCreateDataBuffer",
            ));
        }
        // SAFETY: a live buffer from aclCreateDataBuffer; LIVE stays locked, so no destroy
        // runs meanwhile.
        unsafe { *dataBuffer = aclDataBuffer { data, size } };
        Ok(())
    })
}

/// Reads a live description (`None` for anything else).
fn read(b: *const aclDataBuffer) -> Option<(*mut c_void, usize)> {
    let live = sync::lock(&LIVE);
    live.as_ref()?.contains(&b.addr()).then(|| {
        // SAFETY: a live buffer from aclCreateDataBuffer, kept alive by the lock.
        let d = unsafe { &*b };
        (d.data, d.size)
    })
}

/// The address a description holds; NULL for NULL or a pointer not from `aclCreateDataBuffer`.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetDataBufferAddr(dataBuffer: *const aclDataBuffer) -> *mut c_void {
    boundary("aclGetDataBufferAddr", std::ptr::null_mut(), || {
        read(dataBuffer).map_or(std::ptr::null_mut(), |d| d.0)
    })
}

/// The size a description holds, cut to 32 bits (deprecated by the vendor for
/// `aclGetDataBufferSizeV2`); 0 for a pointer not from `aclCreateDataBuffer`.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetDataBufferSize(dataBuffer: *const aclDataBuffer) -> u32 {
    boundary("aclGetDataBufferSize", 0, || read(dataBuffer).map_or(0, |d| d.1 as u32))
}

/// The size a description holds; 0 for a pointer not from `aclCreateDataBuffer`.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetDataBufferSizeV2(dataBuffer: *const aclDataBuffer) -> usize {
    boundary("aclGetDataBufferSizeV2", 0, || read(dataBuffer).map_or(0, |d| d.1))
}

/// Bytes of one element of `dataType`. Types smaller than a byte (int4, uint1, the 6- and 4-bit
/// floats) count 1, so a size computed from it is never short; strings, undefined and unknown
/// values are 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclDataTypeSize(dataType: DataTypeArg) -> usize {
    match dataType {
        2 | 4 | 12 | 34..=37 => 1, // int8, uint8, bool, hifloat8, the float8s
        29 | 30 | 38..=41 => 1,    // int4, uint1, the float6s and float4s
        1 | 6 | 7 | 27 => 2,       // float16, int16, uint16, bf16
        0 | 3 | 8 | 33 => 4,       // float, int32, uint32, complex32
        9 | 10 | 11 | 16 => 8,     // int64, uint64, double, complex64
        17 => 16,                  // complex128
        _ => 0,                    // string, undefined, unknown
    }
}

/// A feature of the toolkit and processor (`aclGetCannAttribute`).
#[repr(C)]
pub enum aclCannAttr {
    ACL_CANN_ATTR_UNDEFINED = -1,
    ACL_CANN_ATTR_INF_NAN = 0,
    ACL_CANN_ATTR_BF16 = 1,
    ACL_CANN_ATTR_JIT_COMPILE = 2,
}
/// An `aclCannAttr` value as received (any integer).
pub type CannAttrArg = i32;

/// The attributes this runtime has: infinities and NaNs (host floating point keeps them) and
/// bf16 (its reductions take it); not JIT compilation, as no operator is compiled here.
static CANN_ATTRS: [CannAttrArg; 2] = [0, 1];

/// The CANN attributes this environment has (a list the runtime owns, valid until the process
/// ends): `ACL_CANN_ATTR_INF_NAN` and `ACL_CANN_ATTR_BF16`.
///
/// # Safety
/// `cannAttrList` and `num` are NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetCannAttributeList(
    cannAttrList: *mut *const CannAttrArg,
    num: *mut usize,
) -> aclError {
    acl_call("aclGetCannAttributeList", || {
        // SAFETY: forwarded from this function's contract.
        let (list, n) = unsafe { (Out::new(cannAttrList, "cannAttrList")?, Out::new(num, "num")?) };
        list.write(CANN_ATTRS.as_ptr());
        n.write(CANN_ATTRS.len());
        Ok(())
    })
}

/// Whether this environment has CANN attribute `cannAttr`: 1 or 0 (see
/// `aclGetCannAttributeList`); a value that is no `aclCannAttr`: 100000.
///
/// # Safety
/// `value` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetCannAttribute(cannAttr: CannAttrArg, value: *mut i32) -> aclError {
    acl_call("aclGetCannAttribute", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        if !(0..=2).contains(&cannAttr) {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                format!("cannAttr {cannAttr} is not an aclCannAttr (0..=2)"),
            ));
        }
        out.write(i32::from(CANN_ATTRS.contains(&cannAttr)));
        Ok(())
    })
}

/// A device figure `aclGetDeviceCapability` answers.
#[repr(C)]
pub enum aclDeviceInfo {
    ACL_DEVICE_INFO_UNDEFINED = -1,
    ACL_DEVICE_INFO_AI_CORE_NUM = 0,
    ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,
    ACL_DEVICE_INFO_L2_SIZE = 2,
}
/// An `aclDeviceInfo` value as received (any integer).
pub type DeviceInfoArg = i32;

/// Figure `deviceInfo` of device `deviceId`, from the emulated product's figures (the same as
/// `aclrtGetDeviceInfo`'s AI Core count, Vector Core count and L2 cache size, docs/device.md);
/// a value that is no `aclDeviceInfo`: 100000; a device that does not exist: 107001.
///
/// # Safety
/// `value` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDeviceCapability(
    deviceId: u32,
    deviceInfo: DeviceInfoArg,
    value: *mut i64,
) -> aclError {
    acl_call("aclGetDeviceCapability", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(value, "value") }?;
        let attr = match deviceInfo {
            0 => device_info::attr::AICORE_CORE_NUM,
            1 => device_info::attr::VECTOR_CORE_NUM,
            2 => device_info::attr::L2_CACHE_SIZE,
            other => {
                return Err(AclError::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!("deviceInfo {other} is not an aclDeviceInfo (0..=2)"),
                ));
            }
        };
        let id = i32::try_from(deviceId).unwrap_or(i32::MAX);
        out.write(device_info::info(id, attr, crate::config::settings())?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendors_special_values() {
        assert_eq!(aclFloat16ToFloat(0x7c00), 65536.0);
        assert_eq!(aclFloat16ToFloat(0xfc00), -65536.0);
        assert_eq!(aclFloat16ToFloat(0x7e00), 98304.0);
        assert_eq!(aclFloat16ToFloat(0x3c00), 1.0);
        assert_eq!(aclFloatToFloat16(f32::NAN), 0x7bff);
        assert_eq!(aclFloatToFloat16(f32::INFINITY), 0x7bff);
        assert_eq!(aclFloatToFloat16(f32::NEG_INFINITY), 0xfbff);
        assert_eq!(aclFloatToFloat16(1e6), 0x7bff);
        assert_eq!(aclFloatToFloat16(-2.0), 0xc000);
    }

    #[test]
    fn data_buffers_describe_and_refuse_strangers() {
        let mut x = 0u8;
        let b = aclCreateDataBuffer((&raw mut x).cast(), 1);
        assert_eq!(aclGetDataBufferAddr(b), (&raw mut x).cast());
        assert_eq!(aclGetDataBufferSizeV2(b), 1);
        assert_eq!(aclUpdateDataBuffer(b, std::ptr::null_mut(), 1 << 33), 0);
        assert_eq!(aclGetDataBufferSize(b), 0, "cut to 32 bits");
        assert_eq!(aclGetDataBufferSizeV2(b), 1 << 33);
        assert_eq!(aclDestroyDataBuffer(b), 0);
        assert_eq!(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
        assert!(aclGetDataBufferAddr(b).is_null());
        assert_eq!(aclDataTypeSize(9), 8);
        assert_eq!(aclDataTypeSize(13), 0);
    }

    #[test]
    fn cann_attributes() {
        let (mut list, mut n) = (std::ptr::null(), 0usize);
        // SAFETY: valid out-pointers; the list is the runtime's static array of `n` values.
        unsafe {
            assert_eq!(aclGetCannAttributeList(&mut list, &mut n), 0);
            assert_eq!(std::slice::from_raw_parts(list, n), &[0, 1]);
            let mut v = 7;
            assert_eq!(aclGetCannAttribute(2, &mut v), 0);
            assert_eq!(v, 0, "no JIT compilation");
            assert_eq!(aclGetCannAttribute(1, &mut v), 0);
            assert_eq!(v, 1);
            assert_eq!(aclGetCannAttribute(-1, &mut v), ACL_ERROR_INVALID_PARAM);
        }
    }
}
