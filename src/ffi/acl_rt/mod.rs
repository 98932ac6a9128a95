//! `acl/acl_rt.h`: the runtime's types and flag values; the functions live in the submodules,
//! one per concept, and are generated into the same header.

#![allow(non_camel_case_types)]
// The flag values are written `0x02 as u64` and `0x1u32` so the header gets typed values
// (`(uint64_t)2`, `1u`), as the vendor's `0x02UL` / `0x1U`: callers pass them to `uint64_t`
// parameters and use them in `std::max` and `printf("%lu")`.
#![allow(clippy::unnecessary_cast)]

pub mod cache;
pub mod callback;
pub mod callbacks_state;
pub mod capture;
pub mod cnt_notify;
pub mod context;
pub mod device;
pub mod device_query;
pub(crate) mod device_words;
pub mod event;
pub mod exception;
pub mod group;
pub mod host_memory;
pub mod ipc;
pub mod kernel_args;
pub mod kernel_types;
pub mod label;
pub mod limits;
pub mod location;
pub mod managed;
pub mod mbuf;
pub mod memcpy_desc;
pub mod memory;
pub mod memory_alloc;
pub mod memory_batch;
pub mod model_dump;
pub mod notify;
pub mod npu_only;
pub mod overflow;
pub mod pointer;
pub mod random;
pub mod reduce;
pub mod snapshot;
pub mod stream;
pub mod stream_attr;
pub mod stream_config;
pub mod value;
pub mod version;
pub mod vmm;

use std::ffi::c_void;

/// A notify: a one-shot signal between streams, possibly of different processes.
pub type aclrtNotify = *mut c_void;

/// Processes of one server of a super-node, for `aclrtNotifySetImportPidInterServer`.
#[repr(C)]
pub struct aclrtServerPid {
    pub sdid: u32,
    pub pid: *mut i32,
    pub num: usize,
}

/// Direction of an `aclrtMemcpy`.
#[repr(C)]
pub enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7,
}

/// A kind of memory: what `aclrtGetMemInfo` reports on (0..=9), and the kind of a physical
/// allocation (`aclrtPhysicalMemProp.memAttr`).
#[repr(C)]
pub enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
    ACL_DDR_MEM_P2P_HUGE = 6,
    ACL_DDR_MEM_P2P_NORMAL = 7,
    ACL_HBM_MEM_P2P_HUGE = 8,
    ACL_HBM_MEM_P2P_NORMAL = 9,
    ACL_HBM_MEM_HUGE1G = 10,
    ACL_HBM_MEM_P2P_HUGE1G = 11,
    ACL_MEM_NORMAL = 12,
    ACL_MEM_HUGE = 13,
    ACL_MEM_HUGE1G = 14,
    ACL_MEM_P2P_NORMAL = 15,
    ACL_MEM_P2P_HUGE = 16,
    ACL_MEM_P2P_HUGE1G = 17,
}

/// Page policy of an `aclrtMalloc`, possibly with the `ACL_MEM_TYPE_*` and read-only bits OR-ed in.
#[repr(C)]
pub enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    /// Bit that may be OR-ed into a policy: low-bandwidth memory.
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    /// Bit that may be OR-ed into a policy: high-bandwidth memory.
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    /// Bit that may be OR-ed into a policy: memory the user may only read.
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
}

/// `aclrtCreateNotify` flag: the notify is used by streams.
pub const ACL_NOTIFY_DEFAULT: u32 = 0x00000000u32;
/// `aclrtCreateNotify` flag: the notify is used on the device only.
pub const ACL_NOTIFY_DEVICE_USE_ONLY: u32 = 0x00000001u32;

/// `aclrtNotifyGetExportKey` flag: only whitelisted processes may import.
pub const ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT: u64 = 0x0 as u64;
/// `aclrtNotifyGetExportKey` flag: any process may import.
pub const ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x02 as u64;
/// `aclrtNotifyImportByKey` flag: peer access must be enabled separately.
pub const ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT: u64 = 0x0 as u64;
/// `aclrtNotifyImportByKey` flag: import also enables peer access to the notify's device.
pub const ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS: u64 = 0x02 as u64;

/// `aclrtIpcMemGetExportKey` flag: only whitelisted processes may import.
pub const ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT: u64 = 0x0 as u64;
/// `aclrtIpcMemGetExportKey` flag: any process may import.
pub const ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x1 as u64;
/// `aclrtIpcMemImportByKey` flag: peer access must be enabled separately.
pub const ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT: u64 = 0x0 as u64;
/// `aclrtIpcMemImportByKey` flag: import also enables peer access to the memory's device.
pub const ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS: u64 = 0x1 as u64;
