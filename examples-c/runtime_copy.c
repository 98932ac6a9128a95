/* The runtime as vendor samples use it: initialise, pick a device, make streams, allocate device
 * and pinned host memory, copy asynchronously, order two streams with an event, synchronise,
 * verify the data, release everything. Exits non-zero if any step fails or the data is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        aclError err_ = (call);                                                      \
        if (err_ != ACL_SUCCESS) {                                                   \
            const char *msg_ = aclGetRecentErrMsg();                                 \
            fprintf(stderr, "%s failed: %d (%s)\n", #call, err_, msg_ ? msg_ : "");  \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(void) {
    const int32_t device = 2;
    const size_t size = 8u << 20;

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(device));
    printf("device %d of a %s\n", device, aclrtGetSocName());

    aclrtStream upload = NULL, download = NULL;
    CHECK(aclrtCreateStream(&upload));
    CHECK(aclrtCreateStream(&download));
    aclrtEvent uploaded = NULL;
    CHECK(aclrtCreateEvent(&uploaded));

    void *host_in = NULL, *host_out = NULL, *dev = NULL;
    CHECK(aclrtMallocHost(&host_in, size));
    CHECK(aclrtMallocHost(&host_out, size));
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    printf("device buffer at %p (2 MiB aligned: %s)\n", dev, ((uintptr_t)dev % (2u << 20)) == 0 ? "yes" : "no");

    for (size_t i = 0; i < size; i++) {
        ((uint8_t *)host_in)[i] = (uint8_t)(i * 7 + 1);
    }
    memset(host_out, 0, size);

    /* upload on one stream, download on another that waits for the upload's event */
    CHECK(aclrtMemcpyAsync(dev, size, host_in, size, ACL_MEMCPY_HOST_TO_DEVICE, upload));
    CHECK(aclrtRecordEvent(uploaded, upload));
    CHECK(aclrtStreamWaitEvent(download, uploaded));
    CHECK(aclrtMemcpyAsync(host_out, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, download));
    CHECK(aclrtSynchronizeStream(download));

    int same = memcmp(host_in, host_out, size) == 0;
    printf("round trip of %zu MiB through device memory: %s\n", size >> 20, same ? "data intact" : "DATA WRONG");

    size_t free_bytes = 0, total_bytes = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes));
    printf("device memory: %zu MiB free of %zu MiB\n", free_bytes >> 20, total_bytes >> 20);

    CHECK(aclrtFree(dev));
    CHECK(aclrtFreeHost(host_in));
    CHECK(aclrtFreeHost(host_out));
    CHECK(aclrtDestroyEvent(uploaded));
    CHECK(aclrtDestroyStream(upload));
    CHECK(aclrtDestroyStream(download));
    CHECK(aclrtResetDevice(device));
    CHECK(aclFinalize());
    printf("runtime_copy: %s\n", same ? "all as documented" : "FAILED");
    return same ? 0 : 1;
}
