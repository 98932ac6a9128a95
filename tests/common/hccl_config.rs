//! An `HcclCommConfig` as a C program's `HcclCommConfigInit` (static inline in
//! hccl/hccl_comm.h) leaves it, for the HCCL tests (`#[path]`-included).
#![allow(dead_code)]

use std::ffi::c_char;

use ascendless::ffi::hccl::hccl_types::*;

/// A config as `HcclCommConfigInit` (static inline in hccl/hccl_comm.h) leaves it.
pub fn config_init() -> HcclCommConfig {
    let mut c = HcclCommConfig {
        reserved: [0; HCCL_COMM_CONFIG_INFO_BYTES],
        hcclBufferSize: HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET,
        hcclDeterministic: HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET,
        hcclCommName: [0; COMM_NAME_MAX_LENGTH],
        hcclUdi: [0; UDI_MAX_LENGTH],
        hcclOpExpansionMode: 0,
        hcclRdmaTrafficClass: HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET,
        hcclRdmaServiceLevel: HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET,
        hcclWorldRankID: 0,
        hcclJobID: 0,
        aclGraphZeroCopyEnable: 0,
        hcclExecTimeOut: HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET,
        hcclAlgo: [0; HCCL_COMM_ALGO_MAX_LENGTH],
        hcclRetryEnable: [0; HCCL_COMM_RETRY_ENABLE_MAX_LENGTH],
        hcclRetryParams: [0; HCCL_COMM_RETRY_PARAMS_MAX_LENGTH],
        hcclBufferName: [0; BUFFER_NAME_MAX_LENGTH],
        hcclQos: HCCL_COMM_QOS_CONFIG_NOT_SET,
        hcclSymWinMaxMemSizePerRank: HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE,
    };
    let info = HcclCommConfigInfo {
        size: size_of::<HcclCommConfig>(),
        magicWord: HCCL_COMM_CONFIG_MAGIC_WORD,
        version: HCCL_COMM_CONFIG_VERSION,
        reserved: 0,
    };
    // SAFETY: `reserved` is 24 bytes, the size of the info head; any bytes are valid chars.
    unsafe { std::ptr::copy_nonoverlapping((&raw const info).cast::<c_char>(), c.reserved.as_mut_ptr(), 24) };
    c
}
