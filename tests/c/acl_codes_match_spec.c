/* The AscendCL numbers the headers give must be the vendor's (shared/spec/acl-runtime.md).
 * Compiled, not run: a wrong number is a compile error. Macros must also work as case labels. */
#include "acl/acl.h"

#include <stddef.h>

#define SAME(name, value) _Static_assert((name) == (value), #name " must be " #value)

SAME(ACL_SUCCESS, 0);                          SAME(ACL_ERROR_RT_PARAM_INVALID, 107000);
SAME(ACL_ERROR_INVALID_PARAM, 100000);         SAME(ACL_ERROR_RT_INVALID_DEVICEID, 107001);
SAME(ACL_ERROR_UNINITIALIZE, 100001);          SAME(ACL_ERROR_RT_CONTEXT_NULL, 107002);
SAME(ACL_ERROR_REPEAT_INITIALIZE, 100002);     SAME(ACL_ERROR_RT_STREAM_CONTEXT, 107003);
SAME(ACL_ERROR_REPEAT_FINALIZE, 100037);       SAME(ACL_ERROR_RT_INVALID_HANDLE, 107017);
SAME(ACL_ERROR_BAD_ALLOC, 200000);             SAME(ACL_ERROR_RT_WAIT_TIMEOUT, 107019);
SAME(ACL_ERROR_API_NOT_SUPPORT, 200001);       SAME(ACL_ERROR_RT_TASK_TIMEOUT, 107020);
SAME(ACL_ERROR_INVALID_DEVICE, 200002);        SAME(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 207000);
SAME(ACL_ERROR_MEMORY_ADDRESS_UNALIGNED, 200003); SAME(ACL_ERROR_RT_MEMORY_ALLOCATION, 207001);
SAME(ACL_ERROR_INVALID_RESOURCE_HANDLE, 200005); SAME(ACL_ERROR_RT_NO_DEVICE, 207004);
SAME(ACL_ERROR_FEATURE_UNSUPPORTED, 200006);   SAME(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, 207005);
SAME(ACL_ERROR_INTERNAL_ERROR, 500000);        SAME(ACL_ERROR_RT_NO_PERMISSION, 207006);
SAME(ACL_ERROR_FAILURE, 500001);               SAME(ACL_ERROR_RT_NO_NOTIFY_RESOURCE, 207009);
SAME(ACL_ERROR_RT_FAILURE, 500003);            SAME(ACL_ERROR_RT_OVER_LIMIT, 207012);
SAME(ACL_ERROR_RT_INTERNAL_ERROR, 507000);     SAME(ACL_ERROR_RT_DEVICE_OOM, 207018);
SAME(ACL_ERROR_RT_STREAM_NOT_COMPLETE, 507004); SAME(ACL_ERROR_RT_TIMEOUT, 207020);
SAME(ACL_ERROR_RT_EVENT_NOT_COMPLETE, 507006); SAME(ACL_ERROR_RT_IPC_ERROR, 507022);
SAME(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, 507046); SAME(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, 507047);
SAME(ACL_ERROR_RT_LINK_ERROR, 507056);         SAME(ACL_ERROR_RT_SOCKET_CLOSE, 507901);
SAME(ACL_ERROR_NONE, 0);                       SAME(ACL_ERROR_INVALID_FILE, 100003);
SAME(ACL_ERROR_PARSE_FILE, 100006);

SAME(ACL_NOTIFY_DEFAULT, 0);                                   SAME(ACL_NOTIFY_DEVICE_USE_ONLY, 1);
SAME(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT, 0);                    SAME(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION, 2);
SAME(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT, 0);                    SAME(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS, 2);
SAME(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT, 0);                   SAME(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION, 1);
SAME(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT, 0);                   SAME(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS, 1);
SAME(ACL_IPC_HANDLE_SIZE, 65);

SAME(ACL_MEMCPY_HOST_TO_HOST, 0);    SAME(ACL_MEMCPY_HOST_TO_DEVICE, 1);     SAME(ACL_MEMCPY_DEVICE_TO_HOST, 2);
SAME(ACL_MEMCPY_DEVICE_TO_DEVICE, 3); SAME(ACL_MEMCPY_DEFAULT, 4);           SAME(ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, 5);
SAME(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, 6); SAME(ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, 7);
SAME(ACL_MEM_MALLOC_HUGE_FIRST, 0);  SAME(ACL_MEM_MALLOC_HUGE_ONLY, 1);      SAME(ACL_MEM_MALLOC_NORMAL_ONLY, 2);
SAME(ACL_MEM_MALLOC_HUGE_FIRST_P2P, 3); SAME(ACL_MEM_MALLOC_HUGE_ONLY_P2P, 4); SAME(ACL_MEM_MALLOC_NORMAL_ONLY_P2P, 5);
SAME(ACL_MEM_MALLOC_HUGE1G_ONLY, 6); SAME(ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, 7);
SAME(ACL_MEM_TYPE_LOW_BAND_WIDTH, 0x100); SAME(ACL_MEM_TYPE_HIGH_BAND_WIDTH, 0x1000);
SAME(ACL_MEM_ACCESS_USER_SPACE_READONLY, 0x100000);

/* Batches, allocation configurations and managed memory. */
SAME(ACL_MEM_LOCATION_TYPE_HOST, 0); SAME(ACL_MEM_LOCATION_TYPE_DEVICE, 1);
SAME(ACL_MEM_LOCATION_TYPE_UNREGISTERED, 2); SAME(ACL_MEM_LOCATION_TYPE_MANAGED, 3);
SAME(ACL_MEM_LOCATION_TYPE_HOST_NUMA, 4);
SAME(ACL_RT_MEM_ATTR_RSV, 0); SAME(ACL_RT_MEM_ATTR_MODULE_ID, 1); SAME(ACL_RT_MEM_ATTR_DEVICE_ID, 2);
SAME(ACL_RT_MEM_ATTR_VA_FLAG, 3);
SAME(ACL_MEM_ADVISE_SET_READ_MOSTLY, 0); SAME(ACL_MEM_ADVISE_UNSET_READ_MOSTLY, 1);
SAME(ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, 2); SAME(ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 3);
SAME(ACL_MEM_ADVISE_SET_ACCESSED_BY, 4); SAME(ACL_MEM_ADVISE_UNSET_ACCESSED_BY, 5);
SAME(ACL_MEM_LOCATIONTYPE_INVALID, 0); SAME(ACL_MEM_LOCATIONTYPE_DEVICE, 1); SAME(ACL_MEM_LOCATIONTYPE_HOST, 2);
SAME(ACL_MEM_LOCATIONTYPE_HOST_NUMA, 3); SAME(ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT, 4);
SAME(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, 1); SAME(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, 2);
SAME(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, 3); SAME(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, 4);
SAME(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, 5); SAME(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, 6);
SAME(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, 7);
SAME(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, 8);
SAME(ACL_RT_MEM_ATTACH_GLOBAL, 1);
_Static_assert(sizeof(aclrtMemLocation) == 8 && offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation layout");
_Static_assert(sizeof(aclrtMemcpyBatchAttr) == 32 && offsetof(aclrtMemcpyBatchAttr, srcLoc) == 8
                   && offsetof(aclrtMemcpyBatchAttr, rsv) == 16, "aclrtMemcpyBatchAttr layout");
_Static_assert(sizeof(aclrtMemManagedLocation) == 8 && offsetof(aclrtMemManagedLocation, id) == 4,
               "aclrtMemManagedLocation layout");
_Static_assert(sizeof(aclrtMallocAttrValue) == 8, "aclrtMallocAttrValue layout");
_Static_assert(sizeof(aclrtMallocAttribute) == 12 && offsetof(aclrtMallocAttribute, value) == 4,
               "aclrtMallocAttribute layout");
_Static_assert(sizeof(aclrtMallocConfig) == 16 && offsetof(aclrtMallocConfig, numAttrs) == 8,
               "aclrtMallocConfig layout");

_Static_assert(sizeof(aclError) == sizeof(int), "aclError is int");
_Static_assert(sizeof(aclrtMemcpyKind) == sizeof(int), "enums are int-sized");
_Static_assert(sizeof(aclrtServerPid) == 24, "aclrtServerPid layout");

/* Virtual memory management and shareable handles (acl_rt.h). */
#include <stddef.h>
SAME(ACL_RT_VMM_EXPORT_FLAG_DEFAULT, 0x0UL); SAME(ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, 0x1UL);
SAME(ACL_MEM_LOCATION_TYPE_HOST, 0); SAME(ACL_MEM_LOCATION_TYPE_DEVICE, 1);
SAME(ACL_MEM_LOCATION_TYPE_UNREGISTERED, 2); SAME(ACL_MEM_LOCATION_TYPE_MANAGED, 3);
SAME(ACL_MEM_LOCATION_TYPE_HOST_NUMA, 4); SAME(ACL_MEM_ALLOCATION_TYPE_PINNED, 0);
SAME(ACL_MEM_HANDLE_TYPE_NONE, 0); SAME(ACL_MEM_HANDLE_TYPE_POSIX, 2);
SAME(ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1); SAME(ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 2);
SAME(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, 0); SAME(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, 1);
SAME(ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, 0xFFFF);
SAME(ACL_RT_MEM_ACCESS_FLAGS_NONE, 0); SAME(ACL_RT_MEM_ACCESS_FLAGS_READ, 1); SAME(ACL_RT_MEM_ACCESS_FLAGS_READWRITE, 3);
SAME(ACL_HBM_MEM_HUGE1G, 10); SAME(ACL_HBM_MEM_P2P_HUGE1G, 11); SAME(ACL_MEM_NORMAL, 12); SAME(ACL_MEM_HUGE, 13);
SAME(ACL_MEM_HUGE1G, 14); SAME(ACL_MEM_P2P_NORMAL, 15); SAME(ACL_MEM_P2P_HUGE, 16); SAME(ACL_MEM_P2P_HUGE1G, 17);
_Static_assert(sizeof(aclrtDrvMemHandle) == sizeof(void *), "aclrtDrvMemHandle is a pointer");
_Static_assert(sizeof(aclrtMemLocation) == 8, "aclrtMemLocation layout");
_Static_assert(offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation layout");
_Static_assert(sizeof(aclrtPhysicalMemProp) == 32, "aclrtPhysicalMemProp layout");
_Static_assert(offsetof(aclrtPhysicalMemProp, memAttr) == 8, "aclrtPhysicalMemProp layout");
_Static_assert(offsetof(aclrtPhysicalMemProp, location) == 12, "aclrtPhysicalMemProp layout");
_Static_assert(offsetof(aclrtPhysicalMemProp, reserve) == 24, "aclrtPhysicalMemProp layout");
_Static_assert(sizeof(aclrtMemAccessDesc) == 24, "aclrtMemAccessDesc layout");
_Static_assert(offsetof(aclrtMemAccessDesc, location) == 4, "aclrtMemAccessDesc layout");
_Static_assert(offsetof(aclrtMemAccessDesc, rsv) == 12, "aclrtMemAccessDesc layout");
_Static_assert(sizeof(aclrtMemFabricHandle) == 128, "aclrtMemFabricHandle layout");

/* Events, IPC events and stream memory operations (acl/acl_rt.h). */
SAME(ACL_EVENT_SYNC, 0x1u); SAME(ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x2u); SAME(ACL_EVENT_TIME_LINE, 0x8u);
SAME(ACL_EVENT_DEVICE_USE_ONLY, 0x10u); SAME(ACL_EVENT_EXTERNAL, 0x20u); SAME(ACL_EVENT_IPC, 0x40u);
SAME(ACL_IPC_EVENT_HANDLE_SIZE, 64);
SAME(ACL_EVENT_RECORD_DEFAULT, 0); SAME(ACL_EVENT_RECORD_EXTERNAL, 1);
SAME(ACL_EVENT_WAIT_DEFAULT, 0); SAME(ACL_EVENT_WAIT_EXTERNAL, 1);
SAME(ACL_STREAM_WAIT_VALUE_GEQ, 0); SAME(ACL_STREAM_WAIT_VALUE_EQ, 1);
SAME(ACL_STREAM_WAIT_VALUE_AND, 2); SAME(ACL_STREAM_WAIT_VALUE_NOR, 3);
SAME(ACL_EVENT_STATUS_COMPLETE, 0); SAME(ACL_EVENT_STATUS_NOT_READY, 1); SAME(ACL_EVENT_STATUS_RESERVED, 2);
SAME(ACL_EVENT_RECORDED_STATUS_NOT_READY, 0); SAME(ACL_EVENT_RECORDED_STATUS_COMPLETE, 1);
SAME(ACL_EVENT_WAIT_STATUS_COMPLETE, 0); SAME(ACL_EVENT_WAIT_STATUS_NOT_READY, 1);
SAME(ACL_EVENT_WAIT_STATUS_RESERVED, 0xFFFF);
_Static_assert(sizeof(aclrtIpcEventHandle) == 64 && _Alignof(aclrtIpcEventHandle) == 1, "aclrtIpcEventHandle layout");
_Static_assert(sizeof(aclrtEventRecordedStatus) == 4 && sizeof(aclrtEventWaitStatus) == 4, "event enums are ints");

/* Model run instances (aclmdlRI*). */
SAME(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, 0); SAME(ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL, 1);
SAME(ACL_MODEL_RI_CAPTURE_MODE_RELAXED, 2);
SAME(ACL_MODEL_RI_CAPTURE_STATUS_NONE, 0); SAME(ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, 1);
SAME(ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, 2);
SAME(ACL_MODEL_RI_TASK_DEFAULT, 0); SAME(ACL_MODEL_RI_TASK_KERNEL, 1); SAME(ACL_MODEL_RI_TASK_EVENT_RECORD, 2);
SAME(ACL_MODEL_RI_TASK_EVENT_WAIT, 3); SAME(ACL_MODEL_RI_TASK_EVENT_RESET, 4);
SAME(ACL_MODEL_RI_TASK_VALUE_WRITE, 5); SAME(ACL_MODEL_RI_TASK_VALUE_WAIT, 6);
SAME(ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, 1);
SAME(ACL_MODEL_RI_COND_TYPE_IF, 0); SAME(ACL_MODEL_RI_COND_TYPE_WHILE, 1); SAME(ACL_MODEL_RI_COND_TYPE_SWITCH, 2);
SAME(ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY, 0); SAME(ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE, 1);
_Static_assert(sizeof(aclmdlRITaskParams) == 200 && offsetof(aclmdlRITaskParams, taskGrp) == 16
                   && offsetof(aclmdlRITaskParams, rsv1) == 40 && offsetof(aclmdlRITaskParams, rsv2) == 72
                   && offsetof(aclmdlRITaskParams, valueWaitTaskParams.flag) == 88,
               "aclmdlRITaskParams layout");
_Static_assert(sizeof(aclmdlRIKernelTaskParams) == 88 && offsetof(aclmdlRIKernelTaskParams, argsSize) == 32,
               "aclmdlRIKernelTaskParams layout");
_Static_assert(sizeof(aclmdlRICondTaskParams) == 24 && offsetof(aclmdlRICondTaskParams, modelRIArray) == 16,
               "aclmdlRICondTaskParams layout");

int is_repeat(aclError e);
int is_repeat(aclError e) {
    switch (e) {
    case ACL_ERROR_REPEAT_INITIALIZE:
    case ACL_ERROR_REPEAT_FINALIZE:
        return 1;
    default:
        return 0;
    }
}

/* Kernel binaries and launches, cache barriers, random-number tasks (sizes from the vendor's header). */
_Static_assert(sizeof(aclrtBinaryLoadOption) == 20 && offsetof(aclrtBinaryLoadOption, value) == 4,
               "aclrtBinaryLoadOption layout");
_Static_assert(sizeof(aclrtBinaryLoadOptions) == 16, "aclrtBinaryLoadOptions layout");
_Static_assert(sizeof(dim3) == 12, "dim3 layout");
_Static_assert(sizeof(aclrtLaunchKernelAttrValue) == 16, "aclrtLaunchKernelAttrValue layout");
_Static_assert(sizeof(aclrtLaunchKernelAttr) == 20, "aclrtLaunchKernelAttr layout");
_Static_assert(sizeof(aclrtLaunchKernelCfg) == 16, "aclrtLaunchKernelCfg layout");
_Static_assert(sizeof(aclrtPlaceHolderInfo) == 8, "aclrtPlaceHolderInfo layout");
_Static_assert(sizeof(aclrtBarrierTaskInfo) == 56 && offsetof(aclrtBarrierTaskInfo, cmoInfo) == 8,
               "aclrtBarrierTaskInfo layout");
_Static_assert(sizeof(aclrtRandomNumFuncParaInfo) == 36, "aclrtRandomNumFuncParaInfo layout");
_Static_assert(sizeof(aclrtRandomNumTaskInfo) == 104 && offsetof(aclrtRandomNumTaskInfo, randomParaAddr) == 40
                   && offsetof(aclrtRandomNumTaskInfo, rsv) == 96, "aclrtRandomNumTaskInfo layout");
SAME(ACL_RT_CMO_TYPE_PREFETCH, 0); SAME(ACL_RT_CMO_TYPE_FLUSH, 3); SAME(ACL_RT_CMO_MAX_BARRIER_NUM, 6);
SAME(ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, 10); SAME(ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, 13);
SAME(ACL_RT_BINARY_LOAD_OPT_MAGIC, 2); SAME(ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, 2);
SAME(ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING, 9); SAME(ACL_RT_BINARY_MAGIC_ELF_AICORE, 0x43554245U);
SAME(ACL_FLOAT16, 1); SAME(ACL_BF16, 27); SAME(ACL_FLOAT4_E1M2, 41); SAME(ACL_DT_UNDEFINED, -1);
SAME(ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0); SAME(ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH, 3);
_Static_assert(sizeof(aclFloat16) == 2, "aclFloat16 is 16 bits");
