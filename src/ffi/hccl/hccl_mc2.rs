//! `hccl/hccl_mc2.h`: the arguments and resource contexts of MC2, the vendor's fusion of
//! computation and communication in one device kernel. A host runs no device kernels, so every
//! call answers `HCCL_E_NOT_SUPPORT` with a message naming it, whatever its arguments (none is
//! read).

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};

use crate::error::hccl_codes::{HCCL_E_NOT_SUPPORT, HcclError, HcclResult};
use crate::ffi::hccl::hccl_types::HcclComm;
use crate::ffi::hccl_call;

fn mc2(api: &str) -> HcclResult {
    hccl_call(api, || {
        Err(HcclError::new(
            HCCL_E_NOT_SUPPORT,
            format!(
                "{api} is not supported by ascendless: MC2 runs inside device kernels, which a host has none of"
            ),
        ))
    })
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcAllocOpArgs(opArgs: *mut *mut c_void) -> HcclResult {
    let _ = opArgs;
    mc2("HcclKfcAllocOpArgs")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcFreeOpArgs(opArgs: *mut c_void) -> HcclResult {
    let _ = opArgs;
    mc2("HcclKfcFreeOpArgs")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetSrcDataType(opArgs: *mut c_void, srcDataType: u8) -> HcclResult {
    let _ = (opArgs, srcDataType);
    mc2("HcclKfcOpArgsSetSrcDataType")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetDstDataType(opArgs: *mut c_void, dstDataType: u8) -> HcclResult {
    let _ = (opArgs, dstDataType);
    mc2("HcclKfcOpArgsSetDstDataType")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetReduceType(opArgs: *mut c_void, reduceType: u32) -> HcclResult {
    let _ = (opArgs, reduceType);
    mc2("HcclKfcOpArgsSetReduceType")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetCount(opArgs: *mut c_void, count: u64) -> HcclResult {
    let _ = (opArgs, count);
    mc2("HcclKfcOpArgsSetCount")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetAlgConfig(opArgs: *mut c_void, algConfig: *mut c_char) -> HcclResult {
    let _ = (opArgs, algConfig);
    mc2("HcclKfcOpArgsSetAlgConfig")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclKfcOpArgsSetCommEngine(opArgs: *mut c_void, commEngine: u8) -> HcclResult {
    let _ = (opArgs, commEngine);
    mc2("HcclKfcOpArgsSetCommEngine")
}

/// Not supported (MC2, see the module documentation).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclCreateOpResCtx(
    comm: HcclComm,
    opType: u8,
    opArgs: *mut c_void,
    opResCtx: *mut *mut c_void,
) -> HcclResult {
    let _ = (comm, opType, opArgs, opResCtx);
    mc2("HcclCreateOpResCtx")
}
