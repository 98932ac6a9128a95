/* Host memory registration and pointer attributes as a C user writes them, against the
 * generated headers: the vendor's layouts, a malloc'd buffer registered, copied into and out of
 * through its device pointer, the attributes of each kind of pointer. Run by
 * tests/host_memory_api.rs; prints "N failures". */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

_Static_assert(sizeof(aclrtMemLocation) == 8, "aclrtMemLocation layout");
_Static_assert(offsetof(aclrtMemLocation, type) == 4, "aclrtMemLocation.type");
_Static_assert(sizeof(aclrtPtrAttributes) == 28, "aclrtPtrAttributes layout");
_Static_assert(offsetof(aclrtPtrAttributes, pageSize) == 8, "aclrtPtrAttributes.pageSize");
_Static_assert(offsetof(aclrtPtrAttributes, rsv) == 12, "aclrtPtrAttributes.rsv");
_Static_assert(sizeof(aclrtMemUsageInfo) == 112, "aclrtMemUsageInfo layout");
_Static_assert(offsetof(aclrtMemUsageInfo, curMemSize) == 32, "aclrtMemUsageInfo.curMemSize");
_Static_assert(ACL_MEM_LOCATION_TYPE_UNREGISTERED == 2 && ACL_MEM_LOCATION_TYPE_HOST_NUMA == 4, "location");
_Static_assert(ACL_HOST_REGISTER_MAPPED == 0 && ACL_HOST_REGISTER_READONLY == 8, "register types");
_Static_assert(ACL_HOST_REG_MAPPED == 0x2 && ACL_HOST_REG_PINNED == 0x10000000, "V2 flags");
_Static_assert(ACL_RT_MEM_TYPE_DEV == 0x2 && ACL_RT_MEM_TYPE_DVPP == 0x8 && ACL_RT_MEM_TYPE_RSVD == 0x10, "types");
_Static_assert(ACL_RT_HAC_TYPE_CCU == 9 && ACL_RT_HOST_MEM_MAP_SUPPORTED == 1, "hac");
_Static_assert(ACL_MEM_P2P_HUGE1G == 17, "aclrtMemAttr");
_Static_assert(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED == 507910, "code");
_Static_assert(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED == 507911, "code");
_Static_assert(ACL_ERROR_RT_INVALID_MEMORY_TYPE == 107016, "code");

static int failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                \
            failures++;                                                                \
        }                                                                              \
    } while (0)

static aclrtMemLocationType where(const void *p, uint32_t *id) {
    aclrtPtrAttributes a;
    memset(&a, 0xFF, sizeof a);
    CHECK(aclrtPointerGetAttributes(p, &a) == ACL_SUCCESS);
    CHECK(a.rsv[0] == 0 && a.rsv[3] == 0);
    if (id) *id = a.location.id;
    return a.location.type;
}

int main(void) {
    enum { SIZE = 1 << 16 };
    CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(1) == ACL_SUCCESS);

    void *buf = NULL;
    CHECK(posix_memalign(&buf, 4096, SIZE) == 0);
    for (int i = 0; i < SIZE; i++) ((unsigned char *)buf)[i] = (unsigned char)(i % 251);
    CHECK(where(buf, NULL) == ACL_MEM_LOCATION_TYPE_UNREGISTERED);

    void *devPtr = NULL;
    CHECK(aclrtHostRegister(buf, SIZE, ACL_HOST_REGISTER_MAPPED, &devPtr) == ACL_SUCCESS);
    CHECK(devPtr == buf);
    CHECK(aclrtHostRegister(buf, 4096, ACL_HOST_REGISTER_MAPPED, &devPtr) == ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    void *inner = NULL;
    CHECK(aclrtHostGetDevicePointer((char *)buf + 64, &inner, 0) == ACL_SUCCESS);
    CHECK(inner == (char *)buf + 64);
    CHECK(where(buf, NULL) == ACL_MEM_LOCATION_TYPE_HOST);

    void *dev = NULL;
    uint32_t id = 99;
    CHECK(aclrtMalloc(&dev, SIZE, ACL_MEM_MALLOC_NORMAL_ONLY) == ACL_SUCCESS);
    CHECK(where(dev, &id) == ACL_MEM_LOCATION_TYPE_DEVICE && id == 1);
    CHECK(aclrtMemcpy(dev, SIZE, devPtr, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE) == ACL_SUCCESS);
    memset(buf, 0, SIZE);
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
    CHECK(aclrtMemcpyAsync(devPtr, SIZE, dev, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, s) == ACL_SUCCESS);
    CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
    int same = 1;
    for (int i = 0; i < SIZE; i++) same &= ((unsigned char *)buf)[i] == (unsigned char)(i % 251);
    CHECK(same);

    void *host = NULL;
    CHECK(aclrtMallocHost(&host, 4096) == ACL_SUCCESS);
    CHECK(where(host, NULL) == ACL_MEM_LOCATION_TYPE_HOST);
    int local = 0;
    CHECK(where(&local, NULL) == ACL_MEM_LOCATION_TYPE_UNREGISTERED);

    void *list[1] = {dev};
    uint32_t ok = 0;
    CHECK(aclrtCheckMemType(list, 1, ACL_RT_MEM_TYPE_DEV, &ok, 0) == ACL_SUCCESS && ok == 1);
    aclrtMemUsageInfo usage[4];
    size_t n = 0;
    CHECK(aclrtGetMemUsageInfo(1, usage, 4, &n) == ACL_SUCCESS && n == 1);
    CHECK(strcmp(usage[0].name, "APP") == 0 && usage[0].curMemSize == SIZE);
    aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    CHECK(aclrtHostMemMapCapabilities(1, ACL_RT_HAC_TYPE_SDMA, &cap) == ACL_SUCCESS);
    CHECK(cap == ACL_RT_HOST_MEM_MAP_SUPPORTED);

    CHECK(aclrtHostUnregister(buf) == ACL_SUCCESS);
    CHECK(aclrtHostUnregister(buf) == ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK(where(buf, NULL) == ACL_MEM_LOCATION_TYPE_UNREGISTERED);

    CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
    CHECK(aclrtFree(dev) == ACL_SUCCESS);
    CHECK(aclrtFreeHost(host) == ACL_SUCCESS);
    free(buf);
    CHECK(aclrtResetDevice(1) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    printf("%d failures\n", failures);
    return failures != 0;
}
