//! The runtime's `ACL_ERROR_RT_*` numbers of `acl/error_codes/rt_error_codes.h`.
//!
//! This file is the single source of these numbers: the Rust core returns them and cbindgen
//! copies them into the checked-in header.

use super::acl_codes::aclError;

// Every number of the vendor's header, in its order. The runtime returns those it has a reason
// to; a caller's switch over the others must still compile.

/// Success.
pub const ACL_RT_SUCCESS: aclError = 0;

/// Param invalid.
pub const ACL_ERROR_RT_PARAM_INVALID: aclError = 107000;
/// Invalid device id.
pub const ACL_ERROR_RT_INVALID_DEVICEID: aclError = 107001;
/// Current context null.
pub const ACL_ERROR_RT_CONTEXT_NULL: aclError = 107002;
/// Stream not in current context.
pub const ACL_ERROR_RT_STREAM_CONTEXT: aclError = 107003;
/// Model not in current context.
pub const ACL_ERROR_RT_MODEL_CONTEXT: aclError = 107004;
/// Stream not in model.
pub const ACL_ERROR_RT_STREAM_MODEL: aclError = 107005;
/// Event timestamp invalid.
pub const ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: aclError = 107006;
/// Event timestamp reversal.
pub const ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: aclError = 107007;
/// Memory address unaligned.
pub const ACL_ERROR_RT_ADDR_UNALIGNED: aclError = 107008;
/// Open file failed.
pub const ACL_ERROR_RT_FILE_OPEN: aclError = 107009;
/// Write file failed.
pub const ACL_ERROR_RT_FILE_WRITE: aclError = 107010;
/// Error subscribe stream.
pub const ACL_ERROR_RT_STREAM_SUBSCRIBE: aclError = 107011;
/// Error subscribe thread.
pub const ACL_ERROR_RT_THREAD_SUBSCRIBE: aclError = 107012;
/// Group not set.
pub const ACL_ERROR_RT_GROUP_NOT_SET: aclError = 107013;
/// Group not create.
pub const ACL_ERROR_RT_GROUP_NOT_CREATE: aclError = 107014;
/// Callback not register to stream.
pub const ACL_ERROR_RT_STREAM_NO_CB_REG: aclError = 107015;
/// Invalid memory type.
pub const ACL_ERROR_RT_INVALID_MEMORY_TYPE: aclError = 107016;
/// Invalid handle.
pub const ACL_ERROR_RT_INVALID_HANDLE: aclError = 107017;
/// Invalid malloc type.
pub const ACL_ERROR_RT_INVALID_MALLOC_TYPE: aclError = 107018;
/// Wait timeout.
pub const ACL_ERROR_RT_WAIT_TIMEOUT: aclError = 107019;
/// Task timeout.
pub const ACL_ERROR_RT_TASK_TIMEOUT: aclError = 107020;
/// Not set sysparamopt.
pub const ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: aclError = 107021;
/// Device task aborting.
pub const ACL_ERROR_RT_DEVICE_TASK_ABORT: aclError = 107022;
/// Stream aborting.
pub const ACL_ERROR_RT_STREAM_ABORT: aclError = 107023;
/// Capture dependency failure.
pub const ACL_ERROR_RT_CAPTURE_DEPENDENCY: aclError = 107024;
/// Invalid capture model.
pub const ACL_ERROR_RT_STREAM_UNJOINED: aclError = 107025;
/// Model is captured.
pub const ACL_ERROR_RT_MODEL_CAPTURED: aclError = 107026;
/// Stream is captured.
pub const ACL_ERROR_RT_STREAM_CAPTURED: aclError = 107027;
/// Event is captured.
pub const ACL_ERROR_RT_EVENT_CAPTURED: aclError = 107028;
/// Stream is not in capture status.
pub const ACL_ERROR_RT_STREAM_NOT_CAPTURED: aclError = 107029;
/// Stream is captured, not support current oper.
pub const ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT: aclError = 107030;
/// A disallowed implicit dependency from defalut stream.
pub const ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT: aclError = 107031;
/// Interdependent stream cannot begin capture together.
pub const ACL_ERROR_STREAM_CAPTURE_CONFLICT: aclError = 107032;
/// Task group status error.
pub const ACL_ERROR_STREAM_TASK_GROUP_STATUS: aclError = 107033;
/// Task group interrupted.
pub const ACL_ERROR_STREAM_TASK_GROUP_INTR: aclError = 107034;
/// Device task aborting stop before post process.
pub const ACL_ERROR_RT_TASK_ABORT_STOP: aclError = 107035;
/// The capture was not initiated in this stream.
pub const ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED: aclError = 107036;
/// The model is still running.
pub const ACL_ERROR_RT_MODEL_RUNNING: aclError = 107037;
/// The thread of end capture and begin capture is not same.
pub const ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD: aclError = 107038;
/// Input array capacity insufficient.
pub const ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY: aclError = 107039;
/// The model update failed.
pub const ACL_ERROR_RT_MODEL_UPDATE_FAILED: aclError = 107040;
/// Symbol not found.
pub const ACL_ERROR_RT_SYMBOL_NOT_FOUND: aclError = 107042;
/// Invalid device symbol.
pub const ACL_ERROR_RT_INVALID_SYMBOL: aclError = 107043;
/// Invalid device function.
pub const ACL_ERROR_RT_INVALID_DEVICE_FUNCTION: aclError = 107044;
/// Sub acl graph is caputring.
pub const ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING: aclError = 107045;

/// Feature not support.
pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT: aclError = 207000;
/// Memory allocation error, only used by out of memory.
pub const ACL_ERROR_RT_MEMORY_ALLOCATION: aclError = 207001;
/// Memory free error.
pub const ACL_ERROR_RT_MEMORY_FREE: aclError = 207002;
/// Aicore over flow.
pub const ACL_ERROR_RT_AICORE_OVER_FLOW: aclError = 207003;
/// No device.
pub const ACL_ERROR_RT_NO_DEVICE: aclError = 207004;
/// Resource alloc fail.
pub const ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: aclError = 207005;
/// No permission.
pub const ACL_ERROR_RT_NO_PERMISSION: aclError = 207006;
/// No event resource.
pub const ACL_ERROR_RT_NO_EVENT_RESOURCE: aclError = 207007;
/// No stream resource.
pub const ACL_ERROR_RT_NO_STREAM_RESOURCE: aclError = 207008;
/// No notify resource.
pub const ACL_ERROR_RT_NO_NOTIFY_RESOURCE: aclError = 207009;
/// No model resource.
pub const ACL_ERROR_RT_NO_MODEL_RESOURCE: aclError = 207010;
/// No cdq resource.
pub const ACL_ERROR_RT_NO_CDQ_RESOURCE: aclError = 207011;
/// Over limit.
pub const ACL_ERROR_RT_OVER_LIMIT: aclError = 207012;
/// Queue is empty.
pub const ACL_ERROR_RT_QUEUE_EMPTY: aclError = 207013;
/// Queue is full.
pub const ACL_ERROR_RT_QUEUE_FULL: aclError = 207014;
/// Repeated init.
pub const ACL_ERROR_RT_REPEATED_INIT: aclError = 207015;
/// Aivec over flow.
pub const ACL_ERROR_RT_AIVEC_OVER_FLOW: aclError = 207016;
/// Common over flow.
pub const ACL_ERROR_RT_OVER_FLOW: aclError = 207017;
/// Device oom.
pub const ACL_ERROR_RT_DEVICE_OOM: aclError = 207018;
/// Not support to update this op.
pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP: aclError = 207019;
/// Driver timeout.
pub const ACL_ERROR_RT_TIMEOUT: aclError = 207020;
/// Invalid link type.
pub const ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED: aclError = 207021;

/// Runtime internal error.
pub const ACL_ERROR_RT_INTERNAL_ERROR: aclError = 507000;
/// Ts internel error.
pub const ACL_ERROR_RT_TS_ERROR: aclError = 507001;
/// Task full in stream.
pub const ACL_ERROR_RT_STREAM_TASK_FULL: aclError = 507002;
/// Task empty in stream.
pub const ACL_ERROR_RT_STREAM_TASK_EMPTY: aclError = 507003;
/// Stream not complete.
pub const ACL_ERROR_RT_STREAM_NOT_COMPLETE: aclError = 507004;
/// End of sequence.
pub const ACL_ERROR_RT_END_OF_SEQUENCE: aclError = 507005;
/// Event not complete.
pub const ACL_ERROR_RT_EVENT_NOT_COMPLETE: aclError = 507006;
/// Context release error.
pub const ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: aclError = 507007;
/// Soc version error.
pub const ACL_ERROR_RT_SOC_VERSION: aclError = 507008;
/// Task type not support.
pub const ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT: aclError = 507009;
/// Ts lost heartbeat.
pub const ACL_ERROR_RT_LOST_HEARTBEAT: aclError = 507010;
/// Model execute failed.
pub const ACL_ERROR_RT_MODEL_EXECUTE: aclError = 507011;
/// Report timeout.
pub const ACL_ERROR_RT_REPORT_TIMEOUT: aclError = 507012;
/// Sys dma error.
pub const ACL_ERROR_RT_SYS_DMA: aclError = 507013;
/// Aicore timeout.
pub const ACL_ERROR_RT_AICORE_TIMEOUT: aclError = 507014;
/// Aicore exception.
pub const ACL_ERROR_RT_AICORE_EXCEPTION: aclError = 507015;
/// Aicore trap exception.
pub const ACL_ERROR_RT_AICORE_TRAP_EXCEPTION: aclError = 507016;
/// Aicpu timeout.
pub const ACL_ERROR_RT_AICPU_TIMEOUT: aclError = 507017;
/// Aicpu exception.
pub const ACL_ERROR_RT_AICPU_EXCEPTION: aclError = 507018;
/// Aicpu datadump response error.
pub const ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR: aclError = 507019;
/// Aicpu model operate response error.
pub const ACL_ERROR_RT_AICPU_MODEL_RSP_ERR: aclError = 507020;
/// Profiling error.
pub const ACL_ERROR_RT_PROFILING_ERROR: aclError = 507021;
/// Ipc error.
pub const ACL_ERROR_RT_IPC_ERROR: aclError = 507022;
/// Model abort normal.
pub const ACL_ERROR_RT_MODEL_ABORT_NORMAL: aclError = 507023;
/// Kernel unregistering.
pub const ACL_ERROR_RT_KERNEL_UNREGISTERING: aclError = 507024;
/// Ringbuffer not init.
pub const ACL_ERROR_RT_RINGBUFFER_NOT_INIT: aclError = 507025;
/// Ringbuffer no data.
pub const ACL_ERROR_RT_RINGBUFFER_NO_DATA: aclError = 507026;
/// Kernel lookup error.
pub const ACL_ERROR_RT_KERNEL_LOOKUP: aclError = 507027;
/// Kernel register duplicate.
pub const ACL_ERROR_RT_KERNEL_DUPLICATE: aclError = 507028;
/// Debug register failed.
pub const ACL_ERROR_RT_DEBUG_REGISTER_FAIL: aclError = 507029;
/// Debug unregister failed.
pub const ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL: aclError = 507030;
/// Label not in current context.
pub const ACL_ERROR_RT_LABEL_CONTEXT: aclError = 507031;
/// Program register num use out.
pub const ACL_ERROR_RT_PROGRAM_USE_OUT: aclError = 507032;
/// Device setup error.
pub const ACL_ERROR_RT_DEV_SETUP_ERROR: aclError = 507033;
/// Vector core timeout.
pub const ACL_ERROR_RT_VECTOR_CORE_TIMEOUT: aclError = 507034;
/// Vector core exception.
pub const ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: aclError = 507035;
/// Vector core trap exception.
pub const ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION: aclError = 507036;
/// Cdq alloc batch abnormal.
pub const ACL_ERROR_RT_CDQ_BATCH_ABNORMAL: aclError = 507037;
/// Can not change die mode.
pub const ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR: aclError = 507038;
/// Single die mode can not set die.
pub const ACL_ERROR_RT_DIE_SET_ERROR: aclError = 507039;
/// Invalid die id.
pub const ACL_ERROR_RT_INVALID_DIEID: aclError = 507040;
/// Die mode not set.
pub const ACL_ERROR_RT_DIE_MODE_NOT_SET: aclError = 507041;
/// Aic trap read overflow.
pub const ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW: aclError = 507042;
/// Aic trap write overflow.
pub const ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW: aclError = 507043;
/// Aiv trap read overflow.
pub const ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW: aclError = 507044;
/// Aiv trap write overflow.
pub const ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW: aclError = 507045;
/// Stream sync time out.
pub const ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: aclError = 507046;
/// Event sync time out.
pub const ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: aclError = 507047;
/// Ffts+ timeout.
pub const ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: aclError = 507048;
/// Ffts+ exception.
pub const ACL_ERROR_RT_FFTS_PLUS_EXCEPTION: aclError = 507049;
/// Ffts+ trap exception.
pub const ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION: aclError = 507050;
/// Hdc send msg fail.
pub const ACL_ERROR_RT_SEND_MSG: aclError = 507051;
/// Copy data fail.
pub const ACL_ERROR_RT_COPY_DATA: aclError = 507052;
/// Device MEM ERROR.
pub const ACL_ERROR_RT_DEVICE_MEM_ERROR: aclError = 507053;
/// Hbm Multi-bit ECC error.
pub const ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: aclError = 507054;
/// Suspect device MEM ERROR.
pub const ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR: aclError = 507055;
/// Link ERROR.
pub const ACL_ERROR_RT_LINK_ERROR: aclError = 507056;
/// Suspect remote ERROR.
pub const ACL_ERROR_RT_SUSPECT_REMOTE_ERROR: aclError = 507057;
/// Drv internal error.
pub const ACL_ERROR_RT_DRV_INTERNAL_ERROR: aclError = 507899;
/// Aicpu internal error.
pub const ACL_ERROR_RT_AICPU_INTERNAL_ERROR: aclError = 507900;
/// Hdc disconnect.
pub const ACL_ERROR_RT_SOCKET_CLOSE: aclError = 507901;
/// Aicpu info load response error.
pub const ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR: aclError = 507902;
/// Capture status is invalidated.
pub const ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: aclError = 507903;
/// Hccl operation retry failed.
pub const ACL_ERROR_RT_COMM_OP_RETRY_FAIL: aclError = 507904;
/// Snapshot lock timeout.
pub const ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT: aclError = 507905;
/// Snapshot lock failed.
pub const ACL_ERROR_SNAPSHOT_LOCK_FAILED: aclError = 507906;
/// Snapshot unlock failed.
pub const ACL_ERROR_SNAPSHOT_UNLOCK_FAILED: aclError = 507907;
/// Snapshot backup failed.
pub const ACL_ERROR_SNAPSHOT_BACKUP_FAILED: aclError = 507908;
/// Snapshot restore failed.
pub const ACL_ERROR_SNAPSHOT_RESTORE_FAILED: aclError = 507909;
/// Host memory range already registered.
pub const ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: aclError = 507910;
/// Host memory has not been registered.
pub const ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: aclError = 507911;
/// Snapshot callback function execution failed.
pub const ACL_ERROR_SNAPSHOT_CALLBACK_FAILED: aclError = 507912;
/// Register snapshot callback function failed.
pub const ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED: aclError = 507913;
/// L3 port error.
pub const ACL_ERROR_RT_L3_PORT_ERROR: aclError = 507914;
/// Ccu timeout.
pub const ACL_ERROR_RT_CCU_TIMEOUT: aclError = 507915;
/// Ccu exception.
pub const ACL_ERROR_RT_CCU_EXCEPTION: aclError = 507916;

/// Not in the vendor's `rt_error_codes.h` (its `acl_base_rt.h` declares it as a constant).
pub const ACL_ERROR_RT_FAILURE: aclError = 500003;
