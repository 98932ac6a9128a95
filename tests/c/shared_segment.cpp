// Two processes share one segment the way Mooncake's Ascend shared-segment backend does: the
// owner allocates with adxl::AdxlEngine::MallocMem(MEM_HOST), exports it with
// ExportToShareableHandle and hands the 128 bytes over (here through a pipe); the peer asks for
// the granularity, reserves address space, imports the fabric handle with
// aclrtMemImportFromShareableHandleV2, maps it with aclrtMapMem, grants access with
// aclrtMemSetAccess, and both see each other's bytes. Then the peer unmaps, frees the
// physical handle and releases the reservation; the owner frees the memory, after which a new
// import of the same handle fails.
//
// Built by tests/c_abi.rs with the installed headers' include line and -Wall -Wextra -Werror.
// The process forks before either side touches the library, so each is a fresh process.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"

static int failures = 0;
#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,     \
                         __LINE__, #cond);                                   \
            ++failures;                                                      \
        }                                                                    \
    } while (0)

static const size_t kSize = 1 << 20;

static bool read_all(int fd, void *buf, size_t len) {
    char *p = static_cast<char *>(buf);
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n <= 0) return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

static bool write_all(int fd, const void *buf, size_t len) {
    const char *p = static_cast<const char *>(buf);
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0) return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

// The peer: import, map, check the owner's bytes, write its own, tell the owner, clean up.
static int peer(int from_owner, int to_owner) {
    CHECK(aclInit(nullptr) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
    aclrtPhysicalMemProp prop{};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_DDR_MEM;
    prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    prop.location.id = 0;
    size_t granularity = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity) ==
          ACL_SUCCESS);
    CHECK(granularity > 0 && kSize % granularity == 0);
    void *base = nullptr;
    CHECK(aclrtReserveMemAddress(&base, kSize, 0, nullptr, 1) == ACL_SUCCESS);

    aclrtMemFabricHandle handle{};
    CHECK(read_all(from_owner, handle.data, sizeof handle.data));
    aclrtDrvMemHandle imported = nullptr;
    CHECK(aclrtMemImportFromShareableHandleV2(&handle, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &imported) ==
          ACL_SUCCESS);
    CHECK(aclrtMapMem(base, kSize, 0, imported, 0) == ACL_SUCCESS);
    aclrtMemAccessDesc access{};
    access.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    access.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    CHECK(aclrtMemSetAccess(base, kSize, &access, 1) == ACL_SUCCESS);

    // The owner's bytes, through a runtime copy (host physical memory: the address decides
    // the kind) and through a plain load.
    unsigned char seen[16] = {};
    CHECK(aclrtMemcpy(seen, sizeof seen, static_cast<char *>(base) + 4096, sizeof seen,
                      ACL_MEMCPY_DEFAULT) == ACL_SUCCESS);
    for (unsigned char b : seen) CHECK(b == 0xA5);
    CHECK(static_cast<unsigned char *>(base)[kSize - 1] == 0xA5);
    // Bytes back to the owner.
    const char reply[] = "from the peer";
    CHECK(aclrtMemcpy(static_cast<char *>(base) + 8192, sizeof reply, reply, sizeof reply,
                      ACL_MEMCPY_DEFAULT) == ACL_SUCCESS);
    char done = 'd';
    CHECK(write_all(to_owner, &done, 1));

    CHECK(aclrtUnmapMem(base) == ACL_SUCCESS);
    CHECK(aclrtFreePhysical(imported) == ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(base) == ACL_SUCCESS);

    // After the owner frees the memory, the same handle no longer imports.
    CHECK(read_all(from_owner, &done, 1) && done == 'f');
    aclrtDrvMemHandle again = nullptr;
    CHECK(aclrtMemImportFromShareableHandleV2(&handle, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &again) ==
          ACL_ERROR_RT_PARAM_INVALID);
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    std::printf("peer: %d failures\n", failures);
    std::fflush(stdout);  // the child leaves with _exit, which flushes nothing
    return failures == 0 ? 0 : 1;
}

// The owner: allocate, fill, export, hand the handle over, check the peer's bytes, free.
static int owner(int to_peer, int from_peer) {
    CHECK(aclInit(nullptr) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
    void *addr = nullptr;
    CHECK(adxl::AdxlEngine::MallocMem(adxl::MEM_HOST, kSize, &addr) == adxl::SUCCESS);
    std::memset(addr, 0xA5, kSize);
    adxl::ShareableHandle exported{};
    CHECK(adxl::AdxlEngine::ExportToShareableHandle(addr, exported) == adxl::SUCCESS);
    CHECK(write_all(to_peer, exported.data, sizeof exported.data));
    char done = 0;
    CHECK(read_all(from_peer, &done, 1) && done == 'd');
    CHECK(std::strcmp(static_cast<char *>(addr) + 8192, "from the peer") == 0);
    CHECK(adxl::AdxlEngine::FreeMem(addr) == adxl::SUCCESS);
    done = 'f';
    CHECK(write_all(to_peer, &done, 1));
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

int main() {
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) return 2;
    pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        alarm(60);  // a bound, whatever happens
        _exit(peer(down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    alarm(60);
    owner(down[1], up[0]);
    close(down[1]);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::printf("owner: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
