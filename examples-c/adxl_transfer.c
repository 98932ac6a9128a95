/* The vendor's ADXL sample flow through the native C API (ascendless.h), in two processes: a
 * server engine registers device memory and publishes its address; a client engine registers
 * host memory, connects, READs the server's memory, WRITEs it back changed, and both sides
 * verify the bytes. The engines talk TCP on 127.0.0.1. Exits non-zero on any failure. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include "acl/acl.h"
#include "ascendless.h"

#define SIZE (1u << 20)

/* Microseconds on the monotonic clock since `since` (pass 0 to read the clock). */
static double elapsed_us(double since) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3 - since;
}

#define CHECK(call)                                                                      \
    do {                                                                                 \
        long rc_ = (long)(call);                                                         \
        if (rc_ != 0) {                                                                  \
            const char *msg_ = ascendless_last_error();                                  \
            fprintf(stderr, "%s failed: %ld (%s)\n", #call, rc_, msg_ ? msg_ : "");      \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

/* A port nobody uses right now: bind port 0 and read what the system chose. */
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

static int server(const char *name, int to_client, int from_client) {
    AscendlessEngine engine = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(ascendless_engine_create(&engine));
    CHECK(ascendless_engine_initialize(engine, name, NULL, NULL, 0));
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, SIZE, ACL_MEM_MALLOC_HUGE_FIRST));
    static unsigned char host[SIZE];
    for (size_t i = 0; i < SIZE; i++) host[i] = (unsigned char)(i * 7);
    CHECK(aclrtMemcpy(dev, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE));
    void *handle = NULL;
    CHECK(ascendless_engine_register_mem(engine, (uintptr_t)dev, SIZE, 0 /* MEM_DEVICE */, &handle));
    uintptr_t addr = (uintptr_t)dev;
    if (write(to_client, &addr, sizeof addr) != sizeof addr) return 1;
    char done;
    if (read(from_client, &done, 1) != 1) return 1; /* the client has written */
    CHECK(aclrtMemcpy(host, SIZE, dev, SIZE, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < SIZE; i++) {
        if (host[i] != (unsigned char)(i * 7 + 1)) {
            fprintf(stderr, "server: byte %zu is %u after the WRITE\n", i, host[i]);
            return 1;
        }
    }
    CHECK(ascendless_engine_deregister_mem(engine, handle));
    CHECK(ascendless_engine_destroy(engine));
    printf("server: the client's WRITE landed in device memory\n");
    return 0;
}

static int client(const char *name, int from_server, int to_server) {
    uintptr_t remote = 0;
    if (read(from_server, &remote, sizeof remote) != sizeof remote) return 1;
    AscendlessEngine engine = NULL;
    CHECK(ascendless_engine_create(&engine));
    const char *keys[] = {"adxl.BufferPool"};
    const char *values[] = {"4:8"};
    CHECK(ascendless_engine_initialize(engine, "127.0.0.1", keys, values, 1));
    static unsigned char local[SIZE];
    void *handle = NULL;
    CHECK(ascendless_engine_register_mem(engine, (uintptr_t)local, SIZE, 1 /* MEM_HOST */, &handle));
    CHECK(ascendless_engine_connect(engine, name, 1000));
    /* 256 descriptors of 4 KiB, sent as one request. */
    enum { N = 256 };
    AscendlessTransferDesc descs[N];
    for (size_t i = 0; i < N; i++) {
        descs[i].local_addr = (uintptr_t)local + i * (SIZE / N);
        descs[i].remote_addr = remote + i * (SIZE / N);
        descs[i].len = SIZE / N;
    }
    double read_us = elapsed_us(0);
    CHECK(ascendless_engine_transfer_sync(engine, name, 0 /* READ */, descs, N, 1000));
    read_us = elapsed_us(read_us);
    for (size_t i = 0; i < SIZE; i++) {
        if (local[i] != (unsigned char)(i * 7)) {
            fprintf(stderr, "client: byte %zu is %u after the READ\n", i, local[i]);
            return 1;
        }
        local[i] += 1;
    }
    double write_us = elapsed_us(0);
    CHECK(ascendless_engine_transfer_sync(engine, name, 1 /* WRITE */, descs, N, 1000));
    write_us = elapsed_us(write_us);
    CHECK(ascendless_engine_disconnect(engine, name, 1000));
    CHECK(ascendless_engine_destroy(engine));
    printf("client: READ %u bytes of the server's device memory (%d descriptors) in %.0f us (%.2f GB/s)\n", SIZE, N,
           read_us, SIZE / read_us / 1e3);
    printf("client: wrote them back changed in %.0f us (%.2f GB/s)\n", write_us, SIZE / write_us / 1e3);
    return write(to_server, "d", 1) == 1 ? 0 : 1;
}

int main(void) {
    int port = free_port();
    int down[2], up[2];
    if (port < 0 || pipe(down) != 0 || pipe(up) != 0) return 1;
    char name[32];
    snprintf(name, sizeof name, "127.0.0.1:%d", port);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        int src = server(name, down[1], up[0]);
        fflush(stdout);
        _exit(src);
    }
    int rc = client(name, down[0], up[1]);
    int status = 0;
    if (rc != 0) kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
