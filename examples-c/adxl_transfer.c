/* The ADXL engine from C, through the native API (ascendless.h): a server engine registers a
 * buffer; a client engine connects, READs the server's buffer, WRITEs it back changed, READs
 * it again, and verifies every byte each time. Prints throughput.
 * Usage: adxl_transfer server IP:PORT        (prints "ready ADDR", serves until stdin closes)
 *        adxl_transfer client IP:PORT ADDR   (ADDR as the server printed it) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ascendless.h"

#define SIZE (16u << 20)
#define CHUNK (1u << 20)

static int check(AdxlStatus st, const char *what) {
    if (st != ADXL_SUCCESS) {
        const char *msg = ascendless_last_error();
        fprintf(stderr, "%s failed: %u (%s)\n", what, st, msg ? msg : "");
        exit(1);
    }
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int verify(const uint8_t *buf, uint8_t salt) {
    for (size_t i = 0; i < SIZE; i++) {
        if (buf[i] != (uint8_t)(i * 7 + salt)) {
            return 0;
        }
    }
    return 1;
}

static void transfer(AscendlessEngine engine, const char *server, int32_t op, uint8_t *local, uintptr_t remote) {
    AscendlessTransferDesc descs[SIZE / CHUNK];
    for (size_t i = 0; i < SIZE / CHUNK; i++) {
        descs[i].local_addr = (uintptr_t)(local + i * CHUNK);
        descs[i].remote_addr = remote + i * CHUNK;
        descs[i].len = CHUNK;
    }
    double start = now();
    check(ascendless_engine_transfer_sync(engine, server, op, descs, SIZE / CHUNK, 10000), op == 0 ? "READ" : "WRITE");
    double secs = now() - start;
    printf("[client] %s %u x %u KiB: %.2f GB/s\n", op == 0 ? "READ " : "WRITE", SIZE / CHUNK, CHUNK >> 10,
           (double)SIZE / secs / 1e9);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3 || (strcmp(argv[1], "client") == 0 && argc < 4)) {
        fprintf(stderr, "usage: %s server IP:PORT | client IP:PORT ADDR\n", argv[0]);
        return 2;
    }
    int server = strcmp(argv[1], "server") == 0;
    const char *server_name = argv[2];
    uint8_t *buf = malloc(SIZE);
    if (buf == NULL) {
        return 1;
    }
    AscendlessEngine engine = NULL;
    check(ascendless_engine_create(&engine), "create");
    void *handle = NULL;

    if (server) {
        for (size_t i = 0; i < SIZE; i++) {
            buf[i] = (uint8_t)(i * 7 + 1);
        }
        check(ascendless_engine_initialize(engine, server_name, NULL, NULL, 0), "initialize");
        check(ascendless_engine_register_mem(engine, (uintptr_t)buf, SIZE, 1, &handle), "register");
        printf("ready %" PRIuPTR "\n", (uintptr_t)buf);
        /* Serve until the parent closes our standard input. */
        while (getchar() != EOF) {
        }
        int ok = verify(buf, 2);
        printf("[server] the client's WRITE left %s\n", ok ? "every byte right" : "WRONG bytes");
        check(ascendless_engine_destroy(engine), "destroy");
        free(buf);
        return ok ? 0 : 1;
    }

    uintptr_t remote = (uintptr_t)strtoull(argv[3], NULL, 10);
    const char *options_k[] = {"adxl.BufferPool"};
    const char *options_v[] = {"4:8"};
    check(ascendless_engine_initialize(engine, "127.0.0.1", options_k, options_v, 1), "initialize");
    check(ascendless_engine_register_mem(engine, (uintptr_t)buf, SIZE, 1, &handle), "register");
    check(ascendless_engine_connect(engine, server_name, 2000), "connect");
    memset(buf, 0, SIZE);
    transfer(engine, server_name, 0, buf, remote);
    int ok = verify(buf, 1);
    printf("[client] READ of the server's buffer: %s\n", ok ? "every byte right" : "WRONG bytes");
    for (size_t i = 0; i < SIZE; i++) {
        buf[i] = (uint8_t)(i * 7 + 2);
    }
    transfer(engine, server_name, 1, buf, remote);
    memset(buf, 0, SIZE);
    transfer(engine, server_name, 0, buf, remote);
    ok = ok && verify(buf, 2);
    printf("[client] READ after WRITE: %s\n", ok ? "every byte right" : "WRONG bytes");
    check(ascendless_engine_disconnect(engine, server_name, 2000), "disconnect");
    check(ascendless_engine_deregister_mem(engine, handle), "deregister");
    check(ascendless_engine_destroy(engine), "destroy");
    free(buf);
    return ok ? 0 : 1;
}
