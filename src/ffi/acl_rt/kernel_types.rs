//! `acl/acl_rt.h`: the types of kernel binaries, launches and the device-side tasks
//! (cache maintenance, reduce, random numbers), with the vendor's layouts.
//!
//! Enums the vendor gives two names for one value (`ACL_RT_BINARY_LOAD_OPT_MAGIC`,
//! `ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE`) cannot be Rust enums; they are an `int32_t`
//! typedef with one constant per name, which C code uses the same way.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::c_void;

use crate::ffi::acl_base::DataTypeArg;
use crate::ffi::acl_rt::exception::aclrtExceptionInfo;

/// A kernel binary as given (`aclrtCreateBinary`).
pub type aclrtBinary = *mut c_void;
/// A loaded kernel binary.
pub type aclrtBinHandle = *mut c_void;
/// A kernel function of a loaded binary.
pub type aclrtFuncHandle = *mut c_void;
/// A kernel argument block (`aclrtKernelArgsInit`).
pub type aclrtArgsHandle = *mut c_void;
/// One argument of an argument block.
pub type aclrtParamHandle = *mut c_void;

/// Called when a kernel of a binary fails (`aclrtBinarySetExceptionCallback`).
pub type aclrtOpExceptionCallback =
    Option<unsafe extern "C" fn(exceptionInfo: *mut aclrtExceptionInfo, userData: *mut c_void)>;

/// Magic number of an AI Core kernel ELF.
pub const ACL_RT_BINARY_MAGIC_ELF_AICORE: u32 = 0x43554245u32;
/// Magic number of a vector core kernel ELF.
pub const ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE: u32 = 0x41415246u32;
/// Magic number of a cube core kernel ELF.
pub const ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE: u32 = 0x41494343u32;

/// What an `aclrtBinaryLoadOption` sets (the vendor's enum, one value named twice).
pub type aclrtBinaryLoadOptionType = i32;
pub const ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD: aclrtBinaryLoadOptionType = 1;
pub const ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC: aclrtBinaryLoadOptionType = 2;
pub const ACL_RT_BINARY_LOAD_OPT_MAGIC: aclrtBinaryLoadOptionType = 2;
pub const ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE: aclrtBinaryLoadOptionType = 3;

/// The value of an `aclrtBinaryLoadOption`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtBinaryLoadOptionValue {
    pub isLazyLoad: u32,
    pub magic: u32,
    pub cpuKernelMode: i32,
    pub rsv: [u32; 4],
}

/// One option of a binary load.
#[repr(C)]
pub struct aclrtBinaryLoadOption {
    pub r#type: aclrtBinaryLoadOptionType,
    pub value: aclrtBinaryLoadOptionValue,
}

/// The options of a binary load.
#[repr(C)]
pub struct aclrtBinaryLoadOptions {
    pub options: *mut aclrtBinaryLoadOption,
    pub numOpt: usize,
}

/// The engine a kernel runs on.
#[repr(C)]
pub enum aclrtEngineType {
    ACL_RT_ENGINE_TYPE_AIC = 0,
    ACL_RT_ENGINE_TYPE_AIV = 1,
}

/// A grid or block shape of a SIMT launch (the vendor's C++ constructor is not declared here).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// The attribute an `aclrtLaunchKernelAttr` sets (the vendor's enum, one value named twice).
pub type aclrtLaunchKernelAttrId = i32;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE: aclrtLaunchKernelAttrId = 1;
/// Deprecated name of `ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE`.
pub const ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE: aclrtLaunchKernelAttrId = 2;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: aclrtLaunchKernelAttrId = 2;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE: aclrtLaunchKernelAttrId = 3;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET: aclrtLaunchKernelAttrId = 4;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH: aclrtLaunchKernelAttrId = 5;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: aclrtLaunchKernelAttrId = 6;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT: aclrtLaunchKernelAttrId = 7;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: aclrtLaunchKernelAttrId = 8;
pub const ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING: aclrtLaunchKernelAttrId = 9;

/// A launch timeout in microseconds, as two 32-bit halves.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtTimeoutUs {
    pub timeoutLow: u32,
    pub timeoutHigh: u32,
}

/// The value of an `aclrtLaunchKernelAttr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtLaunchKernelAttrValue {
    pub schemMode: u8,
    /// Deprecated: `dynUBufSize`.
    pub localMemorySize: u32,
    pub dynUBufSize: u32,
    pub engineType: EngineTypeArg,
    pub blockDimOffset: u32,
    pub isBlockTaskPrefetch: u8,
    pub isDataDump: u8,
    pub timeout: u16,
    pub timeoutUs: aclrtTimeoutUs,
    pub enableProfiling: u8,
    pub rsv: [u32; 4],
}

/// An `aclrtEngineType` value as received (any integer).
pub type EngineTypeArg = i32;

/// One attribute of a kernel launch.
#[repr(C)]
pub struct aclrtLaunchKernelAttr {
    pub id: aclrtLaunchKernelAttrId,
    pub value: aclrtLaunchKernelAttrValue,
}

/// The attributes of a kernel launch.
#[repr(C)]
pub struct aclrtLaunchKernelCfg {
    pub attrs: *mut aclrtLaunchKernelAttr,
    pub numAttrs: usize,
}

/// Where a placeholder's pointer and its data sit in host arguments.
#[repr(C)]
pub struct aclrtPlaceHolderInfo {
    pub addrOffset: u32,
    pub dataOffset: u32,
}

/// An attribute of a kernel function.
#[repr(C)]
pub enum aclrtFuncAttribute {
    ACL_FUNC_ATTR_KERNEL_TYPE = 1,
    ACL_FUNC_ATTR_KERNEL_RATIO = 2,
    ACL_FUNC_ATTR_KERNEL_SCHED_MODE = 3,
}
/// An `aclrtFuncAttribute` value as received (any integer).
pub type FuncAttributeArg = i32;

/// A cache maintenance operation.
#[repr(C)]
pub enum aclrtCmoType {
    ACL_RT_CMO_TYPE_PREFETCH = 0,
    ACL_RT_CMO_TYPE_WRITEBACK = 1,
    ACL_RT_CMO_TYPE_INVALID = 2,
    ACL_RT_CMO_TYPE_FLUSH = 3,
}
/// An `aclrtCmoType` value as received (any integer).
pub type CmoTypeArg = i32;

/// One cache maintenance operation a barrier waits for.
#[repr(C)]
pub struct aclrtBarrierCmoInfo {
    pub cmoType: CmoTypeArg,
    pub barrierId: u32,
}

/// Most operations one `aclrtCmoWaitBarrier` waits for.
pub const ACL_RT_CMO_MAX_BARRIER_NUM: u32 = 6u32;

/// The operations an `aclrtCmoWaitBarrier` waits for.
#[repr(C)]
pub struct aclrtBarrierTaskInfo {
    pub barrierNum: usize,
    pub cmoInfo: [aclrtBarrierCmoInfo; ACL_RT_CMO_MAX_BARRIER_NUM as usize],
}

/// The reduction of an `aclrtReduceAsync`.
#[repr(C)]
pub enum aclrtReduceKind {
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13,
}
/// An `aclrtReduceKind` value as received (any integer).
pub type ReduceKindArg = i32;

/// A parameter of a random-number task: a value or the address of one.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtRandomParaInfo {
    pub isAddr: u8,
    pub valueOrAddr: [u8; 8],
    pub size: u8,
    pub rsv: [u8; 6],
}

/// Dropout bitmask parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtDropoutBitmaskInfo {
    pub dropoutRation: aclrtRandomParaInfo,
}

/// Uniform distribution parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtUniformDisInfo {
    pub min: aclrtRandomParaInfo,
    pub max: aclrtRandomParaInfo,
}

/// Normal distribution parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtNormalDisInfo {
    pub mean: aclrtRandomParaInfo,
    pub stddev: aclrtRandomParaInfo,
}

/// The function of a random-number task.
#[repr(C)]
pub enum aclrtRandomNumFuncType {
    ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS = 1,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS = 2,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS = 3,
}
/// An `aclrtRandomNumFuncType` value as received (any integer).
pub type RandomNumFuncTypeArg = i32;

/// The parameters of a random-number function (the vendor's anonymous union, named here).
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtRandomNumFuncParamInfo {
    pub dropoutBitmaskInfo: aclrtDropoutBitmaskInfo,
    pub uniformDisInfo: aclrtUniformDisInfo,
    pub normalDisInfo: aclrtNormalDisInfo,
}

/// A random-number function and its parameters.
#[repr(C)]
pub struct aclrtRandomNumFuncParaInfo {
    pub funcType: RandomNumFuncTypeArg,
    pub paramInfo: aclrtRandomNumFuncParamInfo,
}

/// A random-number task (`aclrtRandomNumAsync`).
#[repr(C)]
pub struct aclrtRandomNumTaskInfo {
    pub dataType: DataTypeArg,
    pub randomNumFuncParaInfo: aclrtRandomNumFuncParaInfo,
    pub randomParaAddr: *mut c_void,
    pub randomResultAddr: *mut c_void,
    pub randomCounterAddr: *mut c_void,
    pub randomSeed: aclrtRandomParaInfo,
    pub randomNum: aclrtRandomParaInfo,
    pub rsv: [u8; 8],
}

/// Which kind of task `aclrtTaskUpdateAsync` updates.
#[repr(C)]
pub enum aclrtUpdateTaskAttrId {
    ACL_RT_UPDATE_RANDOM_TASK = 1,
    ACL_RT_UPDATE_AIC_AIV_TASK = 2,
}
/// An `aclrtUpdateTaskAttrId` value as received (any integer).
pub type UpdateTaskAttrIdArg = i32;

/// New parameters of a random-number task.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtRandomTaskUpdateAttr {
    pub srcAddr: *mut c_void,
    pub size: usize,
    pub rsv: [u32; 4],
}

/// A new kernel (program, entry and block count) for an AI Core / vector core task.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclrtAicAivTaskUpdateAttr {
    pub binHandle: *mut c_void,
    pub funcEntryAddr: *mut c_void,
    pub blockDimAddr: *mut c_void,
    pub rsv: [u32; 4],
}

/// The update, by kind.
#[repr(C)]
#[derive(Clone, Copy)]
pub union aclrtUpdateTaskAttrVal {
    pub randomTaskAttr: aclrtRandomTaskUpdateAttr,
    pub aicAivTaskAttr: aclrtAicAivTaskUpdateAttr,
}

/// What `aclrtTaskUpdateAsync` changes in an earlier task.
#[repr(C)]
pub struct aclrtTaskUpdateInfo {
    pub id: UpdateTaskAttrIdArg,
    pub val: aclrtUpdateTaskAttrVal,
}

/// A link between devices (`aclrtMemMapSetLink`).
#[repr(C)]
pub enum aclrtMemLinkType {
    ACL_RT_MEM_ACCESS_LINK_SIO = 0,
    ACL_RT_MEM_ACCESS_LINK_HCCS = 1,
    ACL_RT_MEM_ACCESS_UB_ONE_PORT_PATH = 2,
    ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH = 3,
}
/// An `aclrtMemLinkType` value as received (any integer).
pub type MemLinkTypeArg = i32;

/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` value: the SIO link.
pub const ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO: u64 = 0 as u64;
/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` value: the HCCS link.
pub const ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS: u64 = 1 as u64;
/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` value: one UB port.
pub const ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH: u64 = 2 as u64;
/// `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` value: several UB ports.
pub const ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH: u64 = 3 as u64;

/// An attribute of exported IPC memory (`aclrtIpcMemSetAttr`).
#[repr(C)]
pub enum aclrtIpcMemAttrType {
    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK = 0,
}
/// An `aclrtIpcMemAttrType` value as received (any integer).
pub type IpcMemAttrTypeArg = i32;
