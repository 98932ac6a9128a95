/* Two HCCL ranks in two processes, written as programs for the vendor's HCCL are: rank 0 makes
 * the root info and hands it to rank 1 through a pipe, both join the communicator, then an
 * all-reduce (sum of float), a broadcast and a send/receive pair run on a stream over device
 * memory (aclrtMalloc, aclrtMemcpy in and out), and every byte is checked.
 *
 *   hccl_pair            forks rank 1, runs rank 0, exits 0 when both saw 0 failures. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hccl/hccl_types.h"

#define COUNT 4096

static int failures = 0;
static int my_rank = -1;

#define CHECK(cond, ...)                                 \
    do {                                                 \
        if (!(cond)) {                                   \
            fprintf(stderr, "rank %d: ", my_rank);       \
            fprintf(stderr, __VA_ARGS__);                \
            fprintf(stderr, " (line %d)\n", __LINE__);   \
            failures++;                                  \
        }                                                \
    } while (0)

#define ACL_OK(call) CHECK((call) == ACL_SUCCESS, "%s failed", #call)
#define HCCL_OK(call)                                                               \
    do {                                                                            \
        HcclResult r_ = (call);                                                     \
        CHECK(r_ == HCCL_SUCCESS, "%s: %d (%s)", #call, (int)r_, HcclGetErrorString(r_)); \
    } while (0)

static int full_read(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

static int full_write(int fd, const void *buf, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = write(fd, (const char *)buf + put, len - put);
        if (n <= 0) {
            return -1;
        }
        put += (size_t)n;
    }
    return 0;
}

static void all_reduce(HcclComm comm, aclrtStream stream, uint32_t rank)
{
    size_t bytes = COUNT * sizeof(float);
    float *host = (float *)malloc(bytes);
    void *send = NULL;
    void *recv = NULL;
    uint32_t i;
    for (i = 0; i < COUNT; i++) {
        host[i] = (float)(rank + 1) + (float)i * 0.5f;
    }
    ACL_OK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMemcpy(send, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    HCCL_OK(HcclAllReduce(send, recv, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    ACL_OK(aclrtSynchronizeStream(stream));
    memset(host, 0, bytes);
    ACL_OK(aclrtMemcpy(host, bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < COUNT; i++) {
        float want = 3.0f + (float)i; /* (1 + i/2) + (2 + i/2), exact in float */
        if (host[i] != want) {
            CHECK(0, "all-reduce: element %u is %f, not %f", i, (double)host[i], (double)want);
            break;
        }
    }
    ACL_OK(aclrtFree(send));
    ACL_OK(aclrtFree(recv));
    free(host);
}

static void broadcast(HcclComm comm, aclrtStream stream, uint32_t rank)
{
    size_t bytes = COUNT * sizeof(int32_t);
    int32_t *host = (int32_t *)malloc(bytes);
    void *buf = NULL;
    uint32_t i;
    for (i = 0; i < COUNT; i++) {
        host[i] = rank == 1 ? (int32_t)(1000 + 3 * i) : -1;
    }
    ACL_OK(aclrtMalloc(&buf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMemcpy(buf, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    HCCL_OK(HcclBroadcast(buf, COUNT, HCCL_DATA_TYPE_INT32, 1, comm, stream));
    ACL_OK(aclrtSynchronizeStream(stream));
    memset(host, 0, bytes);
    ACL_OK(aclrtMemcpy(host, bytes, buf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < COUNT; i++) {
        if (host[i] != (int32_t)(1000 + 3 * i)) {
            CHECK(0, "broadcast: element %u is %d", i, host[i]);
            break;
        }
    }
    ACL_OK(aclrtFree(buf));
    free(host);
}

static void send_recv(HcclComm comm, aclrtStream stream, uint32_t rank)
{
    size_t bytes = COUNT;
    uint8_t *host = (uint8_t *)malloc(bytes);
    void *buf = NULL;
    uint32_t i;
    for (i = 0; i < COUNT; i++) {
        host[i] = rank == 0 ? (uint8_t)(i * 7 + 1) : 0;
    }
    ACL_OK(aclrtMalloc(&buf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMemcpy(buf, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    if (rank == 0) {
        HCCL_OK(HcclSend(buf, COUNT, HCCL_DATA_TYPE_UINT8, 1, comm, stream));
    } else {
        HCCL_OK(HcclRecv(buf, COUNT, HCCL_DATA_TYPE_UINT8, 0, comm, stream));
    }
    ACL_OK(aclrtSynchronizeStream(stream));
    if (rank == 1) {
        ACL_OK(aclrtMemcpy(host, bytes, buf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        for (i = 0; i < COUNT; i++) {
            if (host[i] != (uint8_t)(i * 7 + 1)) {
                CHECK(0, "recv: byte %u is %u", i, host[i]);
                break;
            }
        }
    }
    ACL_OK(aclrtFree(buf));
    free(host);
}

static int run_rank(uint32_t rank, int fd)
{
    HcclRootInfo root;
    HcclComm comm = NULL;
    aclrtStream stream = NULL;
    uint32_t got = 99;
    char name[COMM_NAME_MAX_LENGTH];

    my_rank = (int)rank;
    /* Line by line, so that a rank that hangs shows how far it got. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    ACL_OK(aclInit(NULL));
    ACL_OK(aclrtSetDevice((int32_t)rank));
    ACL_OK(aclrtCreateStream(&stream));
    if (rank == 0) {
        HCCL_OK(HcclGetRootInfo(&root));
        CHECK(full_write(fd, &root, sizeof(root)) == 0, "cannot hand the root info over");
    } else {
        CHECK(full_read(fd, &root, sizeof(root)) == 0, "no root info from rank 0");
    }
    close(fd);
    HCCL_OK(HcclCommInitRootInfo(2, &root, rank, &comm));
    if (failures == 0) {
        HCCL_OK(HcclGetRankSize(comm, &got));
        CHECK(got == 2, "rank size %u", got);
        HCCL_OK(HcclGetRankId(comm, &got));
        CHECK(got == rank, "rank id %u", got);
        HCCL_OK(HcclGetCommName(comm, name));
        CHECK(strlen(name) > 0, "empty communicator name");
        printf("rank %u: joined\n", rank);
        all_reduce(comm, stream, rank);
        printf("rank %u: all-reduce done\n", rank);
        broadcast(comm, stream, rank);
        printf("rank %u: broadcast done\n", rank);
        send_recv(comm, stream, rank);
        printf("rank %u: send/recv done\n", rank);
        HCCL_OK(HcclBarrier(comm, stream));
        ACL_OK(aclrtSynchronizeStream(stream));
        printf("rank %u: barrier done\n", rank);
        HCCL_OK(HcclCommDestroy(comm));
        CHECK(HcclCommDestroy(comm) == HCCL_E_PARA, "a destroyed communicator is stale");
    }
    ACL_OK(aclrtDestroyStream(stream));
    ACL_OK(aclrtResetDevice((int32_t)rank));
    ACL_OK(aclFinalize());
    printf("rank %u: %d failures\n", rank, failures);
    fflush(stdout);
    return failures == 0 ? 0 : 1;
}

int main(void)
{
    int fds[2];
    pid_t child;
    int status = 0;
    int mine;

    if (pipe(fds) != 0) {
        perror("pipe");
        return 1;
    }
    child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        close(fds[1]);
        _exit(run_rank(1, fds[0]));
    }
    close(fds[0]);
    mine = run_rank(0, fds[1]);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "rank 1 failed (status %d)\n", status);
        return 1;
    }
    if (mine != 0) {
        return 1;
    }
    printf("[SUCCESS] two HCCL ranks: all-reduce, broadcast, send/recv, barrier\n");
    return 0;
}
