/* The device query types and numbers the headers give must be the vendor's (acl/acl_rt.h).
 * Compiled as C and as C++, not run: a wrong number or layout is a compile error, and the
 * vendor's spellings (deprecated ones included) must pass where its code passes them. */
#include "acl/acl_rt.h"

#include <stddef.h>

#ifdef __cplusplus
#define SAME(name, value) static_assert((name) == (value), #name " must be " #value)
#define LAYOUT(cond, what) static_assert(cond, what)
#else
#define SAME(name, value) _Static_assert((name) == (value), #name " must be " #value)
#define LAYOUT(cond, what) _Static_assert(cond, what)
#endif

SAME(ACL_MAJOR_VERSION, 1); SAME(ACL_MINOR_VERSION, 17); SAME(ACL_PATCH_VERSION, 0);
SAME(ACL_PKG_VERSION_MAX_SIZE, 128); SAME(ACL_PKG_VERSION_PARTS_MAX_SIZE, 64);
SAME(ACL_PKG_NAME_CANN, 0); SAME(ACL_PKG_NAME_OPP_KERNEL, 6); SAME(ACL_PKG_NAME_DRIVER, 7);
SAME(ACL_DEVICE, 0); SAME(ACL_HOST, 1);
SAME(ACL_TS_ID_AICORE, 0); SAME(ACL_TS_ID_AIVECTOR, 1); SAME(ACL_TS_ID_RESERVED, 2);
SAME(ACL_RT_DEVICE_STATUS_NORMAL, 0); SAME(ACL_RT_DEVICE_STATUS_ABNORMAL, 1); SAME(ACL_RT_DEVICE_STATUS_END, 0xFFFF);
SAME(ACL_DEV_ATTR_AICPU_CORE_NUM, 1); SAME(ACL_DEV_ATTR_AICORE_CORE_NUM, 101); SAME(ACL_DEV_ATTR_CUBE_CORE_NUM, 102);
SAME(ACL_DEV_ATTR_VECTOR_CORE_NUM, 201); SAME(ACL_DEV_ATTR_WARP_SIZE, 202);
SAME(ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE, 204); SAME(ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE, 204);
SAME(ACL_DEV_ATTR_MAX_BLOCK_DIM_Z, 212); SAME(ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, 301);
SAME(ACL_DEV_ATTR_L2_CACHE_SIZE, 302); SAME(ACL_DEV_ATTR_SMP_ID, 401);
SAME(ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID, 403); SAME(ACL_DEV_ATTR_SUPER_POD_DEVICE_ID, 403);
SAME(ACL_DEV_ATTR_DEVICE_FORM_FACTOR, 409); SAME(ACL_DEV_ATTR_IS_VIRTUAL, 501); SAME(ACL_DEV_ATTR_NPU_ARCH, 601);
SAME(ACL_DEVICE_FORM_FACTOR_POD, 0); SAME(ACL_DEVICE_FORM_FACTOR_PCIE_CARD, 3);
SAME(ACL_HOST_DEVICE_CONNECT_TYPE_PCIE, 0); SAME(ACL_HOST_DEVICE_CONNECT_TYPE_UB, 2);
SAME(ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, 1); SAME(ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, 21);
SAME(ACL_DEV_FEATURE_SUPPORT, 1); SAME(ACL_DEV_FEATURE_NOT_SUPPORT, 0);
SAME(ACL_RT_DEVS_TOPOLOGY_HCCS, 0x01); SAME(ACL_RT_DEVS_TOPOLOGY_PIB, 0x04); SAME(ACL_RT_DEVS_TOPOLOGY_HCCS_SW, 0x40);
SAME(ACL_RT_ATOMIC_CAPABILITY_REDUCATION, 4); SAME(ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4, 256);
SAME(ACL_RT_ATOMIC_OPERATION_FLOAT_MAX, 12); SAME(ACL_RT_ATOMIC_OPERATION_DMA_ADD, 30);
SAME(ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH, 44);
SAME(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 0); SAME(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE, 4);
SAME(ACL_RT_DEV_RES_CUBE_CORE, 0); SAME(ACL_RT_DEV_RES_VECTOR_CORE, 1);
SAME(ACL_OPT_DETERMINISTIC, 0); SAME(ACL_OPT_ENABLE_KERNEL_EARLY_START, 3);
SAME(ACL_RT_OVERFLOW_MODE_SATURATION, 0); SAME(ACL_RT_OVERFLOW_MODE_INFNAN, 1); SAME(ACL_RT_OVERFLOW_MODE_UNDEF, 2);
SAME(ACL_REG_TYPE_ACL_MODEL, 0); SAME(ACL_REG_TYPE_ACL_RETR, 7); SAME(ACL_REG_TYPE_OTHER, 0xFFFF);
SAME(ACL_RT_DEVICE_STATE_SET_PRE, 0); SAME(ACL_RT_DEVICE_STATE_RESET_POST, 3);
SAME(ACL_RT_STREAM_STATE_CREATE_POST, 1); SAME(ACL_RT_STREAM_STATE_DESTROY_PRE, 2);
SAME(ACL_RT_DEVICE_TASK_ABORT_PRE, 0); SAME(ACL_RT_DEVICE_TASK_ABORT_POST, 1);
SAME(ACL_GROUP_AICORE_INT, 0); SAME(ACL_GROUP_GROUPID_INT, 5);
SAME(ACL_RT_SNAPSHOT_LOCK_PRE, 0); SAME(ACL_RT_SNAPSHOT_UNLOCK_POST, 5);

LAYOUT(sizeof(aclCANNPackageVersion) == 128 * 2 + 64 * 4, "aclCANNPackageVersion layout");
LAYOUT(offsetof(aclCANNPackageVersion, patchVersion) == 128 + 64 * 3, "aclCANNPackageVersion layout");
LAYOUT(sizeof(aclrtUuid) == 16, "aclrtUuid layout");
LAYOUT(offsetof(aclrtUtilizationInfo, utilizationExtend) == 16 && sizeof(aclrtUtilizationInfo) == 24,
       "aclrtUtilizationInfo layout");
LAYOUT(sizeof(aclrtSnapShotBackupArgs) == 64 && sizeof(aclrtSnapShotRestoreArgs) == 64, "snapshot args layout");
LAYOUT(sizeof(aclrtDevAttr) == sizeof(int), "enums are int-sized");

/* Calls as the vendor's samples write them, with the deprecated spellings. */
static aclError on_init(const char *config, size_t len, void *user) { (void)config; (void)len; (void)user; return ACL_SUCCESS; }
static void on_device(int32_t device, aclrtDeviceState state, void *args) { (void)device; (void)state; (void)args; }
static void on_stream(aclrtStream stm, aclrtStreamState state, void *args) { (void)stm; (void)state; (void)args; }
static int32_t on_abort(int32_t device, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void *args) {
    (void)device; (void)stage; (void)timeout; (void)args; return 0;
}

int device_query_calls(void);
int device_query_calls(void) {
    int64_t value = 0;
    int32_t capability = 0;
    uint32_t caps[1];
    aclrtAtomicOperation ops[1] = {ACL_RT_ATOMIC_OPERATION_CAS};
    aclrtRunMode mode;
    aclrtFloatOverflowMode sat;
    aclrtDeviceStatus status;
    aclrtUtilizationInfo util;
    aclrtGroupInfo *groups = aclrtCreateGroupInfo();
    char bus[13];
    int ok = aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID, &value) == ACL_SUCCESS;
    ok &= aclrtGetDeviceInfo(0, ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE, &value) == ACL_SUCCESS;
    ok &= aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &capability) == ACL_SUCCESS;
    ok &= aclrtDeviceGetHostAtomicCapabilities(caps, ops, 1, 0) == ACL_SUCCESS;
    ok &= aclrtGetRunMode(&mode) == ACL_SUCCESS && aclrtGetDeviceSatMode(&sat) == ACL_SUCCESS;
    ok &= aclrtQueryDeviceStatus(0, &status) == ACL_SUCCESS && aclrtGetDeviceUtilizationRate(0, &util) == ACL_SUCCESS;
    ok &= aclrtDeviceGetPCIBusId(0, bus, (int32_t)sizeof bus) == ACL_SUCCESS;
    ok &= aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 65536) == ACL_SUCCESS;
    ok &= aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1) == ACL_SUCCESS;
    ok &= aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 8) == ACL_SUCCESS;
    ok &= aclrtSetTsDevice(ACL_TS_ID_AICORE) == ACL_SUCCESS && aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN) == ACL_SUCCESS;
    ok &= aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, NULL) == ACL_SUCCESS;
    ok &= aclrtRegDeviceStateCallback("d", on_device, NULL) == ACL_SUCCESS;
    ok &= aclrtRegStreamStateCallback("s", on_stream, NULL) == ACL_SUCCESS;
    ok &= aclrtSetDeviceTaskAbortCallback("a", on_abort, NULL) == ACL_SUCCESS;
    ok &= aclrtGetAllGroupInfo(groups) == ACL_SUCCESS && aclrtDestroyGroupInfo(groups) == ACL_SUCCESS;
    ok &= aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, NULL, NULL) != ACL_SUCCESS;
    return ok;
}
