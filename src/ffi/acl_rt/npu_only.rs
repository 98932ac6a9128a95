//! `acl/acl_rt.h`: the functions that need Huawei's NPU hardware.
//!
//! Each is exported with the vendor's prototype, so programs built against the vendor's header
//! link and run; every call answers `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000) with a message
//! naming the call and why (`aclGetRecentErrMsg`), through the one helper [`npu_only`].
//! docs/compatibility.md lists each as `not supported` with the same reason.

#![allow(non_snake_case, unused_variables)]

use std::ffi::{c_char, c_void};

use crate::error::AclError;
use crate::error::acl_codes::aclError;
use crate::error::rt_codes::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
use crate::ffi::acl_base::{aclmdlRITask, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::acl_rt::exception::{aclrtErrorInfo, aclrtExceptionInfo, aclrtMemUceInfo};
use crate::ffi::acl_rt::kernel_types::*;
use crate::ffi::acl_rt::memory::MemcpyKindArg;
use crate::ffi::acl_rt::vmm::aclrtDrvMemHandle;

/// Fails the C call `api` with 207000 and a message saying why it needs an NPU.
pub(crate) fn npu_only(api: &str, why: &str) -> aclError {
    acl_call(api, || {
        Err(AclError::new(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, format!("not supported here: {why}")))
    })
}

/// Why the kernel binaries functions need an NPU.
pub(crate) const KERNELS: &str = "kernel binaries hold NPU machine code (AI Core, vector core or AI CPU kernels), which a CPU-only machine cannot load or run";
/// Why the device symbols functions need an NPU.
pub(crate) const SYMBOLS: &str = "device symbols live in loaded kernel binaries, which need an NPU";
/// Why the profiling functions need an NPU.
pub(crate) const PROFILING: &str =
    "profiling marks feed the vendor's msprof through the NPU's profiling hardware";
/// Why the hardware sync functions need an NPU.
pub(crate) const HARDWARE_SYNC: &str = "the hardware synchronisation address is a register of the NPU";
/// Why the HBM errors functions need an NPU.
pub(crate) const HBM_ERRORS: &str = "repairs and reports of uncorrectable ECC errors are about the NPU's HBM; device memory here is host memory, whose errors the kernel handles";
/// Why the links between NPUs functions need an NPU.
pub(crate) const TASK_UPDATE: &str =
    "it rewrites random-number and kernel tasks already queued, which only an NPU runs";
pub(crate) const LINKS: &str = "the call picks the physical link (SIO, HCCS, UB) between NPUs; the emulated devices share host memory and have no links";

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetArgsFromExceptionInfo(
    info: *const aclrtExceptionInfo,
    devArgsPtr: *mut *mut c_void,
    devArgsLen: *mut u32,
) -> aclError {
    npu_only("aclrtGetArgsFromExceptionInfo", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFuncHandleFromExceptionInfo(
    info: *const aclrtExceptionInfo,
    func: *mut aclrtFuncHandle,
) -> aclError {
    npu_only("aclrtGetFuncHandleFromExceptionInfo", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinarySetExceptionCallback(
    binHandle: aclrtBinHandle,
    callback: aclrtOpExceptionCallback,
    userData: *mut c_void,
) -> aclError {
    npu_only("aclrtBinarySetExceptionCallback", KERNELS)
}

/// Needs an NPU (kernel binaries): NULL, with the message of 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCreateBinary(data: *const c_void, dataLen: usize) -> aclrtBinary {
    npu_only("aclrtCreateBinary", KERNELS);
    std::ptr::null_mut()
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyBinary(binary: aclrtBinary) -> aclError {
    npu_only("aclrtDestroyBinary", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryLoad(binary: aclrtBinary, binHandle: *mut aclrtBinHandle) -> aclError {
    npu_only("aclrtBinaryLoad", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryUnLoad(binHandle: aclrtBinHandle) -> aclError {
    npu_only("aclrtBinaryUnLoad", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryGetFunction(
    binHandle: aclrtBinHandle,
    kernelName: *const c_char,
    funcHandle: *mut aclrtFuncHandle,
) -> aclError {
    npu_only("aclrtBinaryGetFunction", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchKernel(
    funcHandle: aclrtFuncHandle,
    numBlocks: u32,
    argsData: *const c_void,
    argsSize: usize,
    stream: aclrtStream,
) -> aclError {
    npu_only("aclrtLaunchKernel", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryLoadFromFile(
    binPath: *const c_char,
    options: *mut aclrtBinaryLoadOptions,
    binHandle: *mut aclrtBinHandle,
) -> aclError {
    npu_only("aclrtBinaryLoadFromFile", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryGetDevAddress(
    binHandle: aclrtBinHandle,
    binAddr: *mut *mut c_void,
    binSize: *mut usize,
) -> aclError {
    npu_only("aclrtBinaryGetDevAddress", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryGetFunctionByEntry(
    binHandle: aclrtBinHandle,
    funcEntry: u64,
    funcHandle: *mut aclrtFuncHandle,
) -> aclError {
    npu_only("aclrtBinaryGetFunctionByEntry", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryGetGlobal(
    binHandle: aclrtBinHandle,
    name: *const c_char,
    dptr: *mut *mut c_void,
    size: *mut usize,
) -> aclError {
    npu_only("aclrtBinaryGetGlobal", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFuncBySymbol(symbol: *const c_void, funcHandle: *mut aclrtFuncHandle) -> aclError {
    npu_only("aclrtGetFuncBySymbol", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFunctionAddr(
    funcHandle: aclrtFuncHandle,
    aicAddr: *mut *mut c_void,
    aivAddr: *mut *mut c_void,
) -> aclError {
    npu_only("aclrtGetFunctionAddr", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFunctionSize(
    funcHandle: aclrtFuncHandle,
    aicSize: *mut usize,
    aivSize: *mut usize,
) -> aclError {
    npu_only("aclrtGetFunctionSize", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchKernelWithConfig(
    funcHandle: aclrtFuncHandle,
    numBlocks: u32,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    argsHandle: aclrtArgsHandle,
    reserve: *mut c_void,
) -> aclError {
    npu_only("aclrtLaunchKernelWithConfig", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIKernelTaskGetAttribute(
    task: aclmdlRITask,
    attrId: aclrtLaunchKernelAttrId,
    attrValue: *mut aclrtLaunchKernelAttrValue,
) -> aclError {
    npu_only("aclmdlRIKernelTaskGetAttribute", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFunctionName(
    funcHandle: aclrtFuncHandle,
    maxLen: u32,
    name: *mut c_char,
) -> aclError {
    npu_only("aclrtGetFunctionName", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtBinaryLoadFromData(
    data: *const c_void,
    length: usize,
    options: *const aclrtBinaryLoadOptions,
    binHandle: *mut aclrtBinHandle,
) -> aclError {
    npu_only("aclrtBinaryLoadFromData", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRegisterCpuFunc(
    handle: aclrtBinHandle,
    funcName: *const c_char,
    kernelName: *const c_char,
    funcHandle: *mut aclrtFuncHandle,
) -> aclError {
    npu_only("aclrtRegisterCpuFunc", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchKernelV2(
    funcHandle: aclrtFuncHandle,
    numBlocks: u32,
    argsData: *const c_void,
    argsSize: usize,
    cfg: *mut aclrtLaunchKernelCfg,
    stream: aclrtStream,
) -> aclError {
    npu_only("aclrtLaunchKernelV2", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchKernelWithHostArgs(
    funcHandle: aclrtFuncHandle,
    numBlocks: u32,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    hostArgs: *mut c_void,
    argsSize: usize,
    placeHolderArray: *mut aclrtPlaceHolderInfo,
    placeHolderNum: usize,
) -> aclError {
    npu_only("aclrtLaunchKernelWithHostArgs", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchKernelWithArgsArray(
    func: *mut c_void,
    numBlocks: u32,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    args: *mut *mut c_void,
) -> aclError {
    npu_only("aclrtLaunchKernelWithArgsArray", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchSIMTKernelWithArgsArray(
    func: *mut c_void,
    gridDim: dim3,
    blockDim: dim3,
    dynUbufSize: usize,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    args: *mut *mut c_void,
) -> aclError {
    npu_only("aclrtLaunchSIMTKernelWithArgsArray", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchSIMTKernelWithHostArgs(
    func: *mut c_void,
    gridDim: dim3,
    blockDim: dim3,
    dynUbufSize: usize,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    hostArgs: *mut c_void,
    argsSize: usize,
    placeHolderArray: *mut aclrtPlaceHolderInfo,
    placeHolderNum: usize,
) -> aclError {
    npu_only("aclrtLaunchSIMTKernelWithHostArgs", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetFunctionAttribute(
    funcHandle: aclrtFuncHandle,
    attrType: FuncAttributeArg,
    attrValue: *mut i64,
) -> aclError {
    npu_only("aclrtGetFunctionAttribute", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFunctionGetBinary(
    funcHandle: aclrtFuncHandle,
    binHandle: *mut aclrtBinHandle,
) -> aclError {
    npu_only("aclrtFunctionGetBinary", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFunctionGetParamCount(func: *const c_void, paramCount: *mut usize) -> aclError {
    npu_only("aclrtFunctionGetParamCount", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFunctionGetParamInfo(
    func: *const c_void,
    paramIndex: usize,
    paramOffset: *mut usize,
    paramSize: *mut usize,
) -> aclError {
    npu_only("aclrtFunctionGetParamInfo", KERNELS)
}

/// Needs an NPU (kernel binaries): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFunctionGetAvailDynUbufPerBlock(
    func: *mut c_void,
    flags: u32,
    dynamicUbufSize: *mut usize,
) -> aclError {
    npu_only("aclrtFunctionGetAvailDynUbufPerBlock", KERNELS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSymbolAddress(symbol: *const c_void, devPtr: *mut *mut c_void) -> aclError {
    npu_only("aclrtGetSymbolAddress", SYMBOLS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSymbolSize(symbol: *const c_void, size: *mut usize) -> aclError {
    npu_only("aclrtGetSymbolSize", SYMBOLS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyFromSymbol(
    dst: *mut c_void,
    dstMax: usize,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKindArg,
) -> aclError {
    npu_only("aclrtMemcpyFromSymbol", SYMBOLS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyFromSymbolAsync(
    dst: *mut c_void,
    dstMax: usize,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    npu_only("aclrtMemcpyFromSymbolAsync", SYMBOLS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKindArg,
) -> aclError {
    npu_only("aclrtMemcpyToSymbol", SYMBOLS)
}

/// Needs an NPU (device symbols): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKindArg,
    stream: aclrtStream,
) -> aclError {
    npu_only("aclrtMemcpyToSymbolAsync", SYMBOLS)
}

/// Needs an NPU (profiling): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtProfTrace(userdata: *mut c_void, length: i32, stream: aclrtStream) -> aclError {
    npu_only("aclrtProfTrace", PROFILING)
}

/// Needs an NPU (hardware sync): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetHardwareSyncAddr(addr: *mut *mut c_void) -> aclError {
    npu_only("aclrtGetHardwareSyncAddr", HARDWARE_SYNC)
}

/// Needs an NPU (HBM errors): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetMemUceInfo(
    deviceId: i32,
    memUceInfoArray: *mut aclrtMemUceInfo,
    arraySize: usize,
    retSize: *mut usize,
) -> aclError {
    npu_only("aclrtGetMemUceInfo", HBM_ERRORS)
}

/// Needs an NPU (HBM errors): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemUceRepair(
    deviceId: i32,
    memUceInfoArray: *mut aclrtMemUceInfo,
    arraySize: usize,
) -> aclError {
    npu_only("aclrtMemUceRepair", HBM_ERRORS)
}

/// Needs an NPU (HBM errors): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRepairError(deviceId: i32, errorInfo: *const aclrtErrorInfo) -> aclError {
    npu_only("aclrtRepairError", HBM_ERRORS)
}

/// Needs an NPU (it updates random-number and kernel tasks, which only an NPU runs): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtTaskUpdateAsync(
    taskStream: aclrtStream,
    taskId: u32,
    info: *mut aclrtTaskUpdateInfo,
    execStream: aclrtStream,
) -> aclError {
    npu_only("aclrtTaskUpdateAsync", TASK_UPDATE)
}

/// Needs an NPU (links between NPUs): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemP2PMap(devPtr: *mut c_void, size: usize, dstDevId: i32, flags: u64) -> aclError {
    npu_only("aclrtMemP2PMap", LINKS)
}

/// Needs an NPU (links between NPUs): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapSelectedLink(
    virPtrDst: *mut c_void,
    size: usize,
    virPtrSrc: *mut c_void,
    linkIdx: u32,
) -> aclError {
    npu_only("aclrtMemMapSelectedLink", LINKS)
}

/// Needs an NPU (links between NPUs): 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapSetLink(handle: aclrtDrvMemHandle, adviceLink: MemLinkTypeArg) -> aclError {
    npu_only("aclrtMemMapSetLink", LINKS)
}
