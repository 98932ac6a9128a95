//! The C headers under `include/` are generated from the Rust code by cbindgen and checked in.
//! This test regenerates them and fails when a checked-in header differs from what the code
//! says. `make headers` (ASCENDLESS_BLESS=1) rewrites them instead.

use std::path::{Path, PathBuf};

struct Header {
    /// Installed path under `include/`.
    path: &'static str,
    /// Rust files whose public items make up the header, in order.
    sources: &'static [&'static str],
    guard: &'static str,
    sys_includes: &'static [&'static str],
    includes: &'static [&'static str],
    /// Text placed after the includes (macros cbindgen cannot express).
    after_includes: Option<&'static str>,
    /// Prefix of every function declaration.
    fn_prefix: Option<&'static str>,
    /// Types to emit although no function of the header uses them (yet).
    types: &'static [&'static str],
    /// Rust names spelled otherwise in C (the C names are the ABI; the Rust ones need not
    /// carry a face's vocabulary).
    renames: &'static [(&'static str, &'static str)],
}

/// `acl/acl_base.h`'s text before the generated items: the visibility macro (as the vendor's:
/// empty unless the includer defines `FUNC_VISIBILITY`), and `aclAppLog`,
/// which is variadic and so defined in C++ (src/cxx/app_log.cpp), not in Rust, where cbindgen
/// would find it.
const ACL_BASE_PROLOGUE: &str = "\
#ifndef ACL_FUNC_VISIBILITY
#if defined(FUNC_VISIBILITY) && defined(__GNUC__)
#define ACL_FUNC_VISIBILITY __attribute__((visibility(\"default\")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#endif

/* The level of an aclAppLog message. */
typedef enum {
  ACL_DEBUG = 0,
  ACL_INFO = 1,
  ACL_WARNING = 2,
  ACL_ERROR = 3,
} aclLogLevel;

#ifdef __cplusplus
extern \"C\" {
#endif
/* Logs a printf-style message through the library's logger (ASCEND_GLOBAL_LOG_LEVEL, RUST_LOG),
 * with its file, line and function; at most 1024 bytes, longer ones end in \"...[truncated]\".
 * Defined in C++ (src/cxx/app_log.cpp): Rust cannot define a variadic function. */
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
                                   const char *fmt, ...);
#define ACL_APP_LOG(level, fmt, ...) aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#ifdef __cplusplus
}  // extern \"C\"
#endif";

/// `aclmdlRITaskParams` and what it holds, written by hand: its union is anonymous, which
/// cbindgen cannot write (`src/ffi/acl_rt/capture.rs` has the Rust layout, `cbindgen:ignore`d).
/// The kernel member's `aclrtFuncHandle` is a `void *` and its config an incomplete
/// `struct aclrtLaunchKernelCfg`, as kernels are another header section's.
const MDLRI_TASK_PARAMS: &str = "
typedef enum aclmdlRITaskType {
    ACL_MODEL_RI_TASK_DEFAULT,
    ACL_MODEL_RI_TASK_KERNEL,
    ACL_MODEL_RI_TASK_EVENT_RECORD,
    ACL_MODEL_RI_TASK_EVENT_WAIT,
    ACL_MODEL_RI_TASK_EVENT_RESET,
    ACL_MODEL_RI_TASK_VALUE_WRITE,
    ACL_MODEL_RI_TASK_VALUE_WAIT,
} aclmdlRITaskType;

typedef struct aclmdlRIKernelTaskParams {
    void* funcHandle;
    struct aclrtLaunchKernelCfg* cfg;
    void* args;
    uint32_t isHostArgs;
    size_t argsSize;
    uint32_t numBlocks;
    uint32_t rsv[10];
} aclmdlRIKernelTaskParams;

typedef struct aclmdlRIEventRecordTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t recordFlag;
} aclmdlRIEventRecordTaskParams;

typedef struct aclmdlRIEventWaitTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t waitFlag;
} aclmdlRIEventWaitTaskParams;

typedef struct aclmdlRIEventResetTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t resetFlag;
} aclmdlRIEventResetTaskParams;

typedef struct aclmdlRIValueWriteTaskParams {
    void* devAddr;
    uint64_t value;
} aclmdlRIValueWriteTaskParams;

typedef struct aclmdlRIValueWaitTaskParams {
    void* devAddr;
    uint64_t value;
    uint32_t flag;
} aclmdlRIValueWaitTaskParams;

typedef struct aclmdlRITaskParams {
    aclmdlRITaskType type;
    uint32_t rsv0[3];
    aclrtTaskGrp taskGrp;
    void* opInfoPtr;
    size_t opInfoSize;
    uint8_t rsv1[32];
#if defined(__GNUC__)
    __extension__ /* an anonymous union, as the vendor's (C11; an extension in C99) */
#endif
    union {
        uint8_t rsv2[128];
        struct aclmdlRIKernelTaskParams kernelTaskParams;
        struct aclmdlRIEventRecordTaskParams eventRecordTaskParams;
        struct aclmdlRIEventWaitTaskParams eventWaitTaskParams;
        struct aclmdlRIEventResetTaskParams eventResetTaskParams;
        struct aclmdlRIValueWriteTaskParams valueWriteTaskParams;
        struct aclmdlRIValueWaitTaskParams valueWaitTaskParams;
    };
} aclmdlRITaskParams;
";

/// `acl/acl_prof.h`'s text before the generated items: its visibility macro, the data-type
/// and length macros (`ULL` constants), and the tensor structures, whose named union member and
/// `#ifndef` guard (for users who defined them first) cbindgen cannot write; their Rust
/// layouts are in src/ffi/acl_prof.rs.
const ACL_PROF_PROLOGUE: &str = "
#if (defined(_WIN32) || defined(_WIN64) || defined(_MSC_VER))
#define MSVP_PROF_API __declspec(dllexport)
#else
#define MSVP_PROF_API __attribute__((visibility(\"default\")))
#endif

#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_GE_API_L0 0x0200ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_GE_API_L1 0x01000000ULL
#define ACL_PROF_TASK_TIME_L2 0x2000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL
#define ACL_PROF_TASK_TIME_L3 0x8000ULL
#define ACL_PROF_API_STATS 0x400000000ULL
#define ACL_PROF_AICORE_SHAPE 0x800000000ULL

/* Deprecated by the vendor (use aclprofGetOpTypeLen and aclprofGetOpNameLen). */
#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

#ifndef ACL_PROF_TENSOR_DATA_SHAPE_LEN
#define ACL_PROF_TENSOR_DATA_SHAPE_LEN 8
#endif

#ifndef ACL_PROF_TENSOR_INFO_DEFINED
#define ACL_PROF_TENSOR_INFO_DEFINED

#define ACL_PROF_EVENT_ATTR_VERSION 1

typedef struct aclprofTensor {
    uint32_t type;
    uint32_t format;
    uint32_t dataType;
    uint32_t shapeDim;
    uint32_t shape[ACL_PROF_TENSOR_DATA_SHAPE_LEN];
} aclprofTensor;

typedef struct aclprofTensorInfo {
    uint64_t opNameId;
    uint64_t opTypeId;
    uint32_t resv;
    uint32_t tensorNum;
    uint32_t kernelType;
    uint32_t blockNums;
    void* stream;
    aclprofTensor* tensors;
} aclprofTensorInfo;

typedef struct aclprofEventAttributes {
    uint16_t version;
    uint16_t size;
    uint32_t messageType;
    union Message {
        aclprofTensorInfo* tensorInfo;
    } message;
} aclprofEventAttributes;

#endif /* ACL_PROF_TENSOR_INFO_DEFINED */";

/// `acl/acl_dump.h`'s text before the generated items: its two macros, and its structures and
/// enums, written by hand: `acldumpChunk` ends in a flexible array (`dataBuf[0]`), which
/// cbindgen cannot write (src/ffi/acl_dump.rs has the Rust layouts).
/// `profiling/aprof_pub.h`'s visibility macro. The vendor's header (pkg_inc/profiling) holds the
/// whole msprof reporting interface; this one the function programs call themselves.
const APROF_PUB_PROLOGUE: &str = "
#if (defined(_WIN32) || defined(_WIN64) || defined(_MSC_VER))
#define MSVP_PROF_API __declspec(dllexport)
#else
#define MSVP_PROF_API __attribute__((visibility(\"default\")))
#endif";

const ACL_DUMP_PROLOGUE: &str = "
#if (defined(_WIN32) || defined(_WIN64) || defined(_MSC_VER))
#define ACL_DUMP_API __declspec(dllexport)
#define ACL_DUMP_WEAK
#else
#define ACL_DUMP_API __attribute__((visibility(\"default\")))
#define ACL_DUMP_WEAK __attribute__((weak))
#endif

#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096
typedef struct acldumpChunk {
    char fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH];
    uint32_t bufLen;
    uint32_t isLastChunk;
    int64_t offset;
    int32_t flag;
#if defined(__GNUC__)
    __extension__ /* a zero-length array, as the vendor's */
#endif
    uint8_t dataBuf[0];
} acldumpChunk;

#define ACL_OP_DUMP_OP_AICORE_ARGS 0x00000001U

typedef enum acldumpType {
    AIC_ERR_BRIEF_DUMP = 1,
    AIC_ERR_NORM_DUMP = 2,
    AIC_ERR_DETAIL_DUMP = 3,
    DATA_DUMP = 4,
    OVERFLOW_DUMP = 5
} acldumpType;

#define ACL_DUMP_MAX_SHAPE_NUM 25

typedef enum acldumpTensorType {
    ACL_DUMP_TENSOR_INPUT = 0,
    ACL_DUMP_TENSOR_OUTPUT,
    ACL_DUMP_TENSOR_WORKSPACE
} acldumpTensorType;

typedef enum acldumpTensorAddressType {
    ACL_DUMP_ADDR_PTR = 0,
    ACL_DUMP_ADDR_PTR_PTR,
    ACL_DUMP_ADDR_RAW
} acldumpTensorAddressType;

typedef enum acldumpTensorPlacement {
    ACL_DUMP_PLACEMENT_DEVICE = 0,
    ACL_DUMP_PLACEMENT_HOST,
    ACL_DUMP_PLACEMENT_END
} acldumpTensorPlacement;

typedef struct acldumpTensorInfo {
    acldumpTensorType type;
    size_t tensorSize;
    int32_t format;
    int32_t dataType;
    int64_t* tensorAddr;
    acldumpTensorAddressType addrType;
    acldumpTensorPlacement placement;
    uint32_t argsOffset;
    uint32_t shapeNum;
    uint32_t originShapeNum;
    uint64_t shape[ACL_DUMP_MAX_SHAPE_NUM];
    uint64_t originShape[ACL_DUMP_MAX_SHAPE_NUM];
} acldumpTensorInfo;";

/// `hccl/hccl_comm.h`'s text before the generated items: the weak-symbol macro the vendor's
/// declarations end with, the op-expansion enums, and `HcclCommConfigInit`, which is `static
/// inline` in the header (cbindgen writes neither); the Rust layouts are in
/// src/ffi/hccl/hccl_types.rs.
const HCCL_COMM_PROLOGUE: &str = "
#ifndef HCOMM_WEAK_SYMBOL
#define HCOMM_WEAK_SYMBOL __attribute__((weak))
#endif

typedef enum {
    HCCL_OP_EXPANSION_MODE_INVALID = -1,
    HCCL_OP_EXPANSION_MODE_AI_CPU = 0,
    HCCL_OP_EXPANSION_MODE_AIV = 1,
    HCCL_OP_EXPANSION_MODE_HOST = 2,
    HCCL_OP_EXPANSION_MODE_HOST_TS = 3,
    HCCL_OP_EXPANSION_MODE_CCU_MS = 4,
    HCCL_OP_EXPANSION_MODE_CCU_SCHED = 5,
    HCCL_OP_EXPANSION_AIV_ONLY = 6
} HcclOpExpansionMode;

typedef enum {
    HCCL_CONFIG_TYPE_INVALID = -1,
    HCCL_CONFIG_TYPE_OP_EXPANSION_MODE = 0
} HcclConfigType;

typedef HcclOpExpansionMode HcclConfigTypeOpExpansionMode;

/* Fills every field of `config` with its default (no value set), the head of `reserved` with
 * the size of this header's struct, its magic word and its version, which the library reads to
 * know which fields a program compiled against an older header has. */
static inline void HcclCommConfigInit(HcclCommConfig *config)
{
    struct {
        size_t size;
        uint32_t magicWord;
        uint32_t version;
        uint64_t reserved;
    } info;
    if (config == NULL) {
        return;
    }
    info.size = sizeof(HcclCommConfig);
    info.magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
    info.version = HCCL_COMM_CONFIG_VERSION;
    info.reserved = 0;
    memset(config, 0, sizeof(HcclCommConfig));
    memcpy(config->reserved, &info, sizeof(info));
    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
}";

const HEADERS: &[Header] = &[
    Header {
        path: "acl/error_codes/rt_error_codes.h",
        sources: &["src/error/rt_codes.rs"],
        guard: "__INC_EXTERNEL_RT_ERROR_CODES_H__",
        sys_includes: &["stddef.h"],
        includes: &[],
        after_includes: None,
        fn_prefix: None,
        types: &[],
        renames: &[],
    },
    Header {
        path: "acl/acl_base.h",
        sources: &["src/error/acl_codes.rs", "src/ffi/acl_base.rs", "src/ffi/acl_base_data.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_BASE_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["error_codes/rt_error_codes.h"],
        after_includes: Some(ACL_BASE_PROLOGUE),
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[
            "aclError",
            "aclrtStream",
            "aclrtEvent",
            "aclrtContext",
            "aclmdlRITask",
            "aclrtTaskGrp",
            "aclrtLabel",
            "aclrtLabelList",
            "aclrtMbuf",
            "aclrtAllocatorDesc",
            "aclrtAllocator",
            "aclrtAllocatorBlock",
            "aclrtAllocatorAddr",
            "aclDataType",
            "aclCannAttr",
            "aclDeviceInfo",
        ],
        renames: &[],
    },
    Header {
        path: "acl/acl_rt_allocator.h",
        sources: &["src/ffi/acl_rt_allocator.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_",
        sys_includes: &["stddef.h"],
        includes: &["acl_base.h"],
        after_includes: None,
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[],
        renames: &[],
    },
    Header {
        path: "acl/acl_tdt.h",
        sources: &["src/ffi/acl_tdt.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_TDT_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["acl_base.h"],
        after_includes: None,
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &["acltdtTensorType"],
        renames: &[],
    },
    Header {
        path: "acl/acl_tdt_queue.h",
        sources: &["src/ffi/acl_tdt_queue.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_TDT_QUEUE_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["acl_base.h"],
        after_includes: None,
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[
            "acltdtQueueAttrType",
            "acltdtQueueRouteParamType",
            "acltdtQueueRouteQueryMode",
            "acltdtQueueRouteQueryInfoParamType",
            "acltdtAllocBufType",
        ],
        renames: &[],
    },
    Header {
        path: "acl/acl_rt.h",
        // cbindgen follows the `mod` items to the per-concept files.
        sources: &["src/ffi/acl_rt/mod.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_RT_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["acl_base.h", "acl_rt_allocator.h"],
        after_includes: Some(MDLRI_TASK_PARAMS),
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[
            "aclrtNotify",
            "aclrtServerPid",
            "aclrtMemcpyKind",
            "aclrtMemMallocPolicy",
            "aclrtMemAttr",
            "aclrtMemLocationType",
            "aclrtHostRegisterType",
            "aclrtHacType",
            "aclrtMemFabricHandle",
            "aclrtMemAllocationType",
            "aclrtMemHandleType",
            "aclrtMemSharedHandleType",
            "aclrtMemGranularityOptions",
            "aclrtMemAccessFlags",
            "aclrtMemManagedAdviseType",
            "aclrtMemManagedLocationType",
            "aclrtMemManagedRangeAttribute",
            "aclrtMallocAttrType",
            "aclrtCallbackBlockType",
            "aclrtStreamAttr",
            "aclrtStreamConfigAttr",
            "aclrtCondition",
            "aclrtCompareDataType",
            "aclrtCntNotifyRecordMode",
            "aclrtCntNotifyWaitMode",
            "aclrtLastErrLevel",
            "aclrtErrorType",
            "aclrtAicoreErrorType",
            "aclCANNPackageName",
            "aclrtTsId",
            "aclrtDevAttr",
            "aclrtDevFeatureType",
            "aclrtAtomicOperationCapability",
            "aclrtAtomicOperation",
            "aclrtDeviceLimit",
            "aclrtDevResLimitType",
            "aclSysParamOpt",
            "aclrtFloatOverflowMode",
            "aclRegisterCallbackType",
            "aclrtGroupAttr",
            "aclrtSnapShotStage",
            "aclrtSnapShotBackupArgs",
            "aclrtSnapShotRestoreArgs",
            "aclrtEngineType",
            "aclrtCmoType",
            "aclrtReduceKind",
            "aclrtFuncAttribute",
            "aclrtRandomNumFuncType",
            "aclrtMemLinkType",
            "aclrtUpdateTaskAttrId",
            "aclrtIpcMemAttrType",
            "aclmdlRI",
            "aclmdlRICondHandle",
            "aclmdlRICaptureMode",
            "aclmdlRICaptureStatus",
            "aclmdlRICondHandleFlag",
            "aclmdlRICondTaskType",
            "aclmdlRICondTaskParams",
        ],
        renames: &[],
    },
    Header {
        path: "acl/acl.h",
        sources: &["src/ffi/acl.rs"],
        guard: "INC_EXTERNAL_ACL_ACL_H_",
        sys_includes: &[],
        includes: &["acl_base.h", "acl_rt.h"],
        after_includes: None,
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[],
        renames: &[],
    },
    Header {
        path: "acl/acl_prof.h",
        sources: &["src/ffi/acl_prof.rs"],
        guard: "INC_EXTERNAL_ACL_PROF_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["acl_base.h"],
        after_includes: Some(ACL_PROF_PROLOGUE),
        fn_prefix: Some("MSVP_PROF_API"),
        types: &[
            "aclprofAicoreMetrics",
            "aclprofStepTag",
            "aclprofSubscribeOpFlag",
            "aclprofSubscribeOpAttri",
            "aclprofConfigType",
            "aclprofMessageType",
            "aclprofConfig",
            "aclprofStopConfig",
            "aclprofAicoreEvents",
            "aclprofSubscribeConfig",
            "aclprofStepInfo",
        ],
        renames: &[],
    },
    Header {
        path: "acl/acl_dump.h",
        sources: &["src/ffi/acl_dump.rs"],
        guard: "INC_EXTERNAL_ACL_DUMP_H_",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &["acl_base.h"],
        after_includes: Some(ACL_DUMP_PROLOGUE),
        fn_prefix: Some("ACL_FUNC_VISIBILITY"),
        types: &[],
        renames: &[],
    },
    Header {
        path: "profiling/aprof_pub.h",
        sources: &["src/ffi/aprof_pub.rs"],
        guard: "APROF_PUB_H",
        sys_includes: &["stddef.h", "stdint.h"],
        includes: &[],
        after_includes: Some(APROF_PUB_PROLOGUE),
        fn_prefix: Some("MSVP_PROF_API"),
        types: &[],
        renames: &[],
    },
    Header {
        path: "ascendless.h",
        // cbindgen follows the `mod` items to the per-concept files.
        sources: &["src/error/engine_status.rs", "src/ffi/engine/mod.rs"],
        guard: "ASCENDLESS_H",
        sys_includes: &["stdint.h", "stddef.h"],
        includes: &[],
        after_includes: None,
        fn_prefix: None,
        types: &["EngineStatus"],
        renames: &[("EngineStatus", "AdxlStatus")],
    },
    Header {
        path: "hccl/hccl_comm.h",
        sources: &["src/ffi/hccl/hccl_comm.rs"],
        guard: "HCCL_COMM_H_",
        sys_includes: &["stdbool.h", "stddef.h", "stdint.h", "string.h", "hccl/hccl_types.h", "acl/acl.h"],
        includes: &[],
        after_includes: Some(HCCL_COMM_PROLOGUE),
        fn_prefix: None,
        types: &["HcclCommStateCallback"],
        renames: &[],
    },
    Header {
        path: "hccl/hccl.h",
        sources: &["src/ffi/hccl/hccl.rs"],
        guard: "HCCL_H_",
        sys_includes: &["hccl/hccl_types.h", "hccl/hccl_comm.h", "acl/acl.h"],
        includes: &[],
        after_includes: None,
        fn_prefix: None,
        types: &[],
        renames: &[],
    },
    Header {
        path: "hccl/hccl_mc2.h",
        sources: &["src/ffi/hccl/hccl_mc2.rs"],
        guard: "HCCL_MC2_H",
        sys_includes: &["hccl/hccl_types.h"],
        includes: &[],
        after_includes: None,
        fn_prefix: None,
        types: &[],
        renames: &[],
    },
];

const ENUM_ARGS: &[(&str, &str)] = &[
    ("MemMallocPolicyArg", "aclrtMemMallocPolicy"),
    ("MemcpyKindArg", "aclrtMemcpyKind"),
    ("MemAttrArg", "aclrtMemAttr"),
    ("MemLocationTypeArg", "aclrtMemLocationType"),
    ("HostRegisterTypeArg", "aclrtHostRegisterType"),
    ("HacTypeArg", "aclrtHacType"),
    ("MemHandleTypeArg", "aclrtMemHandleType"),
    ("MemAllocationTypeArg", "aclrtMemAllocationType"),
    ("MemSharedHandleTypeArg", "aclrtMemSharedHandleType"),
    ("MemGranularityOptionsArg", "aclrtMemGranularityOptions"),
    ("MemAccessFlagsArg", "aclrtMemAccessFlags"),
    ("MemManagedAdviseTypeArg", "aclrtMemManagedAdviseType"),
    ("MemManagedLocationTypeArg", "aclrtMemManagedLocationType"),
    ("MemManagedRangeAttributeArg", "aclrtMemManagedRangeAttribute"),
    ("MallocAttrTypeArg", "aclrtMallocAttrType"),
    ("CallbackBlockTypeArg", "aclrtCallbackBlockType"),
    ("StreamAttrArg", "aclrtStreamAttr"),
    ("StreamConfigAttrArg", "aclrtStreamConfigAttr"),
    ("ConditionArg", "aclrtCondition"),
    ("CompareDataTypeArg", "aclrtCompareDataType"),
    ("CntNotifyRecordModeArg", "aclrtCntNotifyRecordMode"),
    ("CntNotifyWaitModeArg", "aclrtCntNotifyWaitMode"),
    ("LastErrLevelArg", "aclrtLastErrLevel"),
    ("ErrorTypeArg", "aclrtErrorType"),
    ("AicoreErrorTypeArg", "aclrtAicoreErrorType"),
    ("CANNPackageNameArg", "aclCANNPackageName"),
    ("TsIdArg", "aclrtTsId"),
    ("DevAttrArg", "aclrtDevAttr"),
    ("DevFeatureTypeArg", "aclrtDevFeatureType"),
    ("AtomicOperationArg", "aclrtAtomicOperation"),
    ("DeviceLimitArg", "aclrtDeviceLimit"),
    ("DevResLimitTypeArg", "aclrtDevResLimitType"),
    ("SysParamOptArg", "aclSysParamOpt"),
    ("FloatOverflowModeArg", "aclrtFloatOverflowMode"),
    ("RegisterCallbackTypeArg", "aclRegisterCallbackType"),
    ("GroupAttrArg", "aclrtGroupAttr"),
    ("SnapShotStageArg", "aclrtSnapShotStage"),
    ("EngineTypeArg", "aclrtEngineType"),
    ("CmoTypeArg", "aclrtCmoType"),
    ("ReduceKindArg", "aclrtReduceKind"),
    ("FuncAttributeArg", "aclrtFuncAttribute"),
    ("RandomNumFuncTypeArg", "aclrtRandomNumFuncType"),
    ("MemLinkTypeArg", "aclrtMemLinkType"),
    ("IpcMemAttrTypeArg", "aclrtIpcMemAttrType"),
    ("DataTypeArg", "aclDataType"),
    ("CannAttrArg", "aclCannAttr"),
    ("UpdateTaskAttrIdArg", "aclrtUpdateTaskAttrId"),
    ("DeviceInfoArg", "aclDeviceInfo"),
    ("CaptureModeArg", "aclmdlRICaptureMode"),
    ("CondHandleFlagArg", "aclmdlRICondHandleFlag"),
    ("CondTaskTypeArg", "aclmdlRICondTaskType"),
    ("TaskTypeArg", "aclmdlRITaskType"),
    ("TensorTypeArg", "acltdtTensorType"),
    ("QueueAttrTypeArg", "acltdtQueueAttrType"),
    ("QueueRouteParamTypeArg", "acltdtQueueRouteParamType"),
    ("QueueRouteQueryInfoParamTypeArg", "acltdtQueueRouteQueryInfoParamType"),
    ("AicoreMetricsArg", "aclprofAicoreMetrics"),
    ("ProfConfigTypeArg", "aclprofConfigType"),
    ("StepTagArg", "aclprofStepTag"),
    ("SubscribeOpAttriArg", "aclprofSubscribeOpAttri"),
    ("SubscribeOpFlagArg", "aclprofSubscribeOpFlag"),
    ("DumpTypeArg", "acldumpType"),
    // Addresses are `usize` in Rust, which the headers print as `size_t`; the ADXL
    // descriptors are `uintptr_t`, as the vendor's `TransferOpDesc`.
    ("UintptrArg", "uintptr_t"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate(h: &Header) -> String {
    let mut config = cbindgen::Config {
        language: cbindgen::Language::C,
        include_guard: Some(h.guard.to_owned()),
        sys_includes: h.sys_includes.iter().map(|s| s.to_string()).collect(),
        includes: h.includes.iter().map(|s| s.to_string()).collect(),
        no_includes: true,
        after_includes: h.after_includes.map(str::to_owned),
        header: Some(format!(
            "/* {}: generated by cbindgen from the ascendless sources ({}).\n * Do not edit: \
             change the Rust code and run `make headers`. */",
            h.path,
            h.sources.join(", ")
        )),
        cpp_compat: true,
        usize_is_size_t: true,
        style: cbindgen::Style::Both,
        documentation_style: cbindgen::DocumentationStyle::C,
        ..Default::default()
    };
    config.function.prefix = h.fn_prefix.map(str::to_owned);
    config.enumeration.prefix_with_name = false;
    config.export.include = h.types.iter().map(|s| s.to_string()).collect();
    // Enum parameters arrive as integers (see src/ffi/acl_rt/memory.rs); the header shows the
    // vendor's enum types instead.
    for (rust, c) in h.renames {
        config.export.rename.insert(rust.to_string(), c.to_string());
    }
    for (arg, vendor) in ENUM_ARGS {
        config.export.rename.insert(arg.to_string(), vendor.to_string());
        config.export.exclude.push(arg.to_string());
    }
    let mut builder = cbindgen::Builder::new().with_config(config);
    for src in h.sources {
        builder = builder.with_src(root().join(src));
    }
    let mut out = Vec::new();
    builder.generate().unwrap_or_else(|e| panic!("cbindgen failed for {}: {e}", h.path)).write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn checked_in_headers_match_the_code() {
    let bless = std::env::var_os("ASCENDLESS_BLESS").is_some();
    let mut drifted = Vec::new();
    for h in HEADERS {
        let path = root().join("include").join(h.path);
        let fresh = generate(h);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != fresh {
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &fresh).unwrap();
            } else {
                drifted.push(h.path);
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "generated headers out of date: {drifted:?}; run `make headers` and commit the result"
    );
}

/// The headers written by hand: the C++ ones (cbindgen does not write C++ classes),
/// `acl/acl_base_rt.h`, which only includes the generated `acl/acl_base.h`, `acl/acl_rt_api.h`
/// (C++ inline overloads), LLM-DataDist's constant headers under `ge/`, and the secure C
/// library's, whose functions are C++ code of ours (src/cxx/securec.cpp).
const HAND_WRITTEN: &[&str] = &[
    "acl/acl_base_rt.h",
    "acl/acl_rt_api.h",
    "adxl/adxl_engine.h",
    "adxl/adxl_types.h",
    "external/ge_common/api_error_codes.h",
    "external/ge_common/ge_api_error_codes.h",
    "ge/llm_engine_types.h",
    "ge/llm_error_codes.h",
    "graph/ascend_string.h",
    "graph/types.h",
    "hccl/hccl_types.h",
    "hixl/hixl.h",
    "hixl/hixl_types.h",
    "ascendless_llm_datadist.h",
    "llm_datadist/llm_datadist.h",
    "securec.h",
    "securectype.h",
];

#[test]
fn every_installed_header_is_generated_or_known_hand_written() {
    // A C header added by hand next to the generated ones would escape the drift check.
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let include = root().join("include");
    let mut found = Vec::new();
    walk(&include, &include, &mut found);
    found.sort();
    let mut expected: Vec<String> =
        HEADERS.iter().map(|h| h.path).chain(HAND_WRITTEN.iter().copied()).map(str::to_owned).collect();
    expected.sort();
    assert_eq!(found, expected, "include/ holds headers this test does not know");
}
