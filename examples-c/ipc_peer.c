/* Process B of the vendor's IPC notify flow: tells process A its pid, imports A's notify and
 * device memory by key, writes into the shared memory with an async copy on its own stream,
 * and records A's notify behind the copy so A sees the data when its wait returns.
 * Usage: ipc_peer DIR   (run ipc_owner DIR at the same time) */
#define ROLE "peer"
#include <stdint.h>

#include "ipc_common.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with the other process's */

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(3));
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid));
    char text[32];
    snprintf(text, sizeof text, "%d\n", pid);
    put_file(dir, "peer.pid", text);

    char keys[2 * ACL_IPC_HANDLE_SIZE + 2];
    get_file(dir, "keys", keys, sizeof keys);
    char *mem_key = strchr(keys, '\n');
    if (mem_key == NULL) {
        fprintf(stderr, "[peer] malformed keys file\n");
        return 1;
    }
    *mem_key++ = '\0';
    char *end = strchr(mem_key, '\n');
    if (end != NULL) {
        *end = '\0';
    }

    aclrtNotify notify = NULL;
    CHECK(aclrtNotifyImportByKey(&notify, keys, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS));
    void *shared = NULL;
    CHECK(aclrtIpcMemImportByKey(&shared, mem_key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS));
    printf("[peer] imported the notify and the device memory at %p\n", shared);

    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    uint8_t *host = NULL;
    CHECK(aclrtMallocHost((void **)&host, BUFFER_SIZE));
    for (uint32_t i = 0; i < BUFFER_SIZE; i++) {
        host[i] = (uint8_t)(i * 13 + 5);
    }
    CHECK(aclrtMemcpyAsync(shared, BUFFER_SIZE, host, BUFFER_SIZE, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtRecordNotify(notify, stream));
    CHECK(aclrtSynchronizeStream(stream));
    printf("[peer] wrote %u bytes into the owner's device memory and recorded its notify\n", BUFFER_SIZE);

    /* Keep the imports until the owner has read the data, then release them. */
    get_file(dir, "done", text, sizeof text);
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtIpcMemClose(mem_key));
    CHECK(aclrtDestroyNotify(notify));
    put_file(dir, "closed", "1\n");
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(3));
    CHECK(aclFinalize());
    return 0;
}
