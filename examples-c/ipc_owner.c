/* Process A of the vendor's IPC notify flow: allocates device memory and a notify, exports
 * both, whitelists process B's pid (unless run with --no-pid-validation), then waits on its
 * stream for B's record and reads what B wrote into the shared device memory.
 * Usage: ipc_owner DIR [--no-pid-validation]   (run ipc_peer DIR at the same time) */
#define ROLE "owner"
#include <stdint.h>

#include "ipc_common.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [--no-pid-validation]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with the other process's */
    int validate = !(argc > 2 && strcmp(argv[2], "--no-pid-validation") == 0);

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(2));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    aclrtNotify notify = NULL;
    CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, BUFFER_SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(dev, BUFFER_SIZE, 0, BUFFER_SIZE));

    char notify_key[ACL_IPC_HANDLE_SIZE] = {0}, mem_key[ACL_IPC_HANDLE_SIZE] = {0};
    uint64_t notify_flags = validate ? ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT : ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION;
    uint64_t mem_flags = validate ? ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT : ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION;
    CHECK(aclrtNotifyGetExportKey(notify, notify_key, sizeof notify_key, notify_flags));
    CHECK(aclrtIpcMemGetExportKey(dev, BUFFER_SIZE, mem_key, sizeof mem_key, mem_flags));
    if (validate) {
        char text[32];
        get_file(dir, "peer.pid", text, sizeof text);
        int32_t pid = (int32_t)atoi(text);
        CHECK(aclrtNotifySetImportPid(notify, &pid, 1));
        CHECK(aclrtIpcMemSetImportPid(mem_key, &pid, 1));
        printf("[owner] whitelisted peer pid %d\n", pid);
    }
    char keys[2 * ACL_IPC_HANDLE_SIZE + 2];
    snprintf(keys, sizeof keys, "%s\n%s\n", notify_key, mem_key);
    put_file(dir, "keys", keys);
    printf("[owner] exported notify and %u bytes of device memory (pid validation %s)\n", BUFFER_SIZE,
           validate ? "on" : "off");

    /* Wait (at most 30 s) for the peer's record, then read what it wrote. */
    CHECK(aclrtWaitAndResetNotify(notify, stream, 30));
    uint8_t *host = NULL;
    CHECK(aclrtMallocHost((void **)&host, BUFFER_SIZE));
    CHECK(aclrtMemcpyAsync(host, BUFFER_SIZE, dev, BUFFER_SIZE, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK(aclrtSynchronizeStream(stream));
    int good = 1;
    for (uint32_t i = 0; i < BUFFER_SIZE; i++) {
        if (host[i] != (uint8_t)(i * 13 + 5)) {
            good = 0;
            break;
        }
    }
    printf("[owner] notified; the %u bytes the peer wrote are %s\n", BUFFER_SIZE, good ? "all correct" : "WRONG");
    put_file(dir, "done", "1\n");

    /* Importers close first (the vendor's rule), then the exporter closes and frees. */
    char closed[8];
    get_file(dir, "closed", closed, sizeof closed);
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtIpcMemClose(mem_key));
    CHECK(aclrtFree(dev));
    CHECK(aclrtDestroyNotify(notify));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(2));
    CHECK(aclFinalize());
    return good ? 0 : 1;
}
