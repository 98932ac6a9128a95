/* A KV-cache hand-off as LLM serving layers do it, through the native C API (ascendless.h), in
 * two processes: a "decode" engine registers device memory for a batch of blocks and waits for
 * a notify; a "prefill" engine writes every block into it with TransferAsync (all requests in
 * flight at once), polls GetTransferStatus until each is COMPLETED, then sends the notify
 * "kv_ready". A notify sent after a transfer lands after its data, so once decode sees it,
 * decode verifies every block. The engines talk on 127.0.0.1. Exits non-zero on any failure.
 *
 * Usage: adxl_prefill_decode [BLOCKS]   (1 to 64 blocks of 64 KiB, default 64; the tests use
 * fewer under valgrind, where every byte the two processes fill and check costs far more) */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "ascendless.h"

#define MAX_BLOCKS 64
#define BLOCK (64u << 10)

/* The batch: `blocks` blocks of BLOCK bytes, set from the command line. */
static size_t blocks = MAX_BLOCKS;
#define SIZE (blocks * BLOCK)

#define CHECK(call)                                                                      \
    do {                                                                                 \
        long rc_ = (long)(call);                                                         \
        if (rc_ != 0) {                                                                  \
            const char *msg_ = ascendless_last_error();                                  \
            fprintf(stderr, "%s failed: %ld (%s)\n", #call, rc_, msg_ ? msg_ : "");      \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

static int free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

static unsigned char expected(size_t i) { return (unsigned char)(i * 13 + i / BLOCK); }

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int decode(const char *name, int to_prefill) {
    AscendlessEngine engine = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(ascendless_engine_create(&engine));
    CHECK(ascendless_engine_initialize(engine, name, NULL, NULL, 0));
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(dev, SIZE, 0, SIZE));
    void *handle = NULL;
    CHECK(ascendless_engine_register_mem(engine, (uintptr_t)dev, SIZE, 0 /* MEM_DEVICE */, &handle));
    uintptr_t addr = (uintptr_t)dev;
    if (write(to_prefill, &addr, sizeof addr) != sizeof addr) return 1;
    int ready = 0;
    /* Bounded by time, not by tries: under valgrind the prefill side can take many seconds. */
    const double give_up = now_s() + 60.0;
    while (!ready && now_s() < give_up) {
        AscendlessNotify *notifies = NULL;
        size_t count = 0;
        CHECK(ascendless_engine_get_notifies(engine, &notifies, &count));
        for (size_t i = 0; i < count; i++) {
            if (strcmp(notifies[i].name, "kv_ready") == 0) ready = 1;
        }
        ascendless_notifies_free(notifies, count);
        if (!ready) sleep_ms(1);
    }
    if (!ready) {
        fprintf(stderr, "decode: no kv_ready notify within 60 s\n");
        return 1;
    }
    static unsigned char host[MAX_BLOCKS * BLOCK];
    CHECK(aclrtMemcpy(host, SIZE, dev, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < SIZE; i++) {
        if (host[i] != expected(i)) {
            fprintf(stderr, "decode: byte %zu of block %zu is %u\n", i, i / BLOCK, host[i]);
            return 1;
        }
    }
    CHECK(ascendless_engine_destroy(engine));
    printf("decode: kv_ready arrived after all %zu blocks had landed\n", blocks);
    return 0;
}

static int prefill(const char *name, int from_decode) {
    uintptr_t remote = 0;
    if (read(from_decode, &remote, sizeof remote) != sizeof remote) return 1;
    AscendlessEngine engine = NULL;
    CHECK(ascendless_engine_create(&engine));
    CHECK(ascendless_engine_initialize(engine, "127.0.0.1", NULL, NULL, 0));
    static unsigned char kv[MAX_BLOCKS * BLOCK];
    for (size_t i = 0; i < SIZE; i++) kv[i] = expected(i);
    void *handle = NULL;
    CHECK(ascendless_engine_register_mem(engine, (uintptr_t)kv, SIZE, 1 /* MEM_HOST */, &handle));
    CHECK(ascendless_engine_connect(engine, name, 1000));
    void *reqs[MAX_BLOCKS];
    for (size_t b = 0; b < blocks; b++) {
        AscendlessTransferDesc d = {(uintptr_t)kv + b * BLOCK, remote + b * BLOCK, BLOCK};
        CHECK(ascendless_engine_transfer_async(engine, name, 1 /* WRITE */, &d, 1, &reqs[b]));
    }
    for (size_t b = 0; b < blocks; b++) {
        int32_t status = 0; /* WAITING */
        while (status == 0) {
            CHECK(ascendless_engine_get_transfer_status(engine, reqs[b], &status));
        }
        if (status != 1 /* COMPLETED */) {
            fprintf(stderr, "prefill: block %zu ended with status %d\n", b, status);
            return 1;
        }
    }
    CHECK(ascendless_engine_send_notify(engine, name, "kv_ready", "batch 0", 1000));
    CHECK(ascendless_engine_destroy(engine));
    printf("prefill: wrote %zu blocks with TransferAsync, then notified\n", blocks);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        char *end = NULL;
        long n = strtol(argv[1], &end, 10);
        if (argc > 2 || *end != '\0' || n < 1 || n > MAX_BLOCKS) {
            fprintf(stderr, "usage: %s [BLOCKS]   (1 to %d)\n", argv[0], MAX_BLOCKS);
            return 2;
        }
        blocks = (size_t)n;
    }
    int port = free_port();
    int down[2];
    if (port < 0 || pipe(down) != 0) return 1;
    char name[32];
    snprintf(name, sizeof name, "127.0.0.1:%d", port);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        int rc = decode(name, down[1]);
        fflush(stdout);
        _exit(rc);
    }
    int rc = prefill(name, down[0]);
    int status = 0;
    if (rc != 0) kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
