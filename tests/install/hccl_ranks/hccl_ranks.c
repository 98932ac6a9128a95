/* One rank of an HCCL communicator, as a process of its own, the way serving stacks use HCCL:
 * rank 0 gets the root info and hands it to the others out of band (a file here), every rank
 * joins with HcclCommInitRootInfo, then runs every collective and point-to-point call on a
 * stream, on device memory filled and read back with aclrtMemcpy, and checks every byte
 * against a result computed here (reductions in rank order, as HCCL's deterministic mode).
 *
 * usage: hccl_ranks NRANKS RANK ROOT_INFO_FILE [kill|stall|absent]
 * With "kill", the last rank exits (SIGKILL) once joined, and the others check that their
 * next all-reduce fails (at aclrtSynchronizeStream) within HCCL_EXEC_TIMEOUT, without hanging.
 * With "stall", the last rank joins and then never calls the all-reduce (it stays alive): the
 * others' fails with the time-out code once HCCL_EXEC_TIMEOUT has passed. With "absent", the
 * last rank is never started: the others' HcclCommInitRootInfo fails with HCCL_E_TIMEOUT once
 * HCCL_CONNECT_TIMEOUT has passed.
 */
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hccl/hccl_types.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint32_t nranks, rank;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        int rc_ = (int)(call);                                                           \
        if (rc_ != 0) {                                                                  \
            fprintf(stderr, "rank %u: %s = %d (%s)\n", rank, #call, rc_, aclGetRecentErrMsg()); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static void fail(const char *what, size_t at) {
    fprintf(stderr, "rank %u: %s differs at element %zu\n", rank, what, at);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Rank r's float input: values whose sum depends on the order of addition. */
static float fin(uint32_t r, size_t i) {
    return (float)((double)((i * 37 + r * 11) % 1000) / 7.0 - 70.0) * (float)(1 + r % 3);
}

static int32_t iin(uint32_t r, size_t i) {
    return (int32_t)((i * 2654435761u) ^ (r * 40503u)) % 100000;
}

static aclrtStream stream;

static void *dev(size_t bytes) {
    void *p = NULL;
    CHECK(aclrtMalloc(&p, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}

static void put(void *d, const void *h, size_t bytes) {
    if (bytes) CHECK(aclrtMemcpy(d, bytes, h, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void get(void *h, const void *d, size_t bytes) {
    if (bytes) CHECK(aclrtMemcpy(h, bytes, d, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
}

static HcclRootInfo root_info(const char *path) {
    HcclRootInfo info;
    if (rank == 0) {
        char tmp[4096];
        CHECK(HcclGetRootInfo(&info));
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&info, sizeof info, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
            perror(path);
            exit(1);
        }
        return info;
    }
    for (int tries = 0; tries < 3000; tries++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(&info, sizeof info, 1, f);
            fclose(f);
            if (got == 1) return info;
        }
        usleep(10000);
    }
    fprintf(stderr, "rank %u: no root info in %s\n", rank, path);
    exit(1);
}

static void all_reduce(HcclComm comm) {
    size_t count = 300007, bytes = count * sizeof(float);
    float *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    for (size_t i = 0; i < count; i++) {
        want[i] = fin(0, i);
        in[i] = fin(rank, i);
    }
    for (uint32_t r = 1; r < nranks; r++)
        for (size_t i = 0; i < count; i++) want[i] += fin(r, i);
    void *s = dev(bytes), *d = dev(bytes);
    put(s, in, bytes);
    CHECK(HcclAllReduce(s, d, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    /* In place, int32 max. */
    int32_t *iv = malloc(count * 4), *iw = malloc(count * 4);
    for (size_t i = 0; i < count; i++) {
        iv[i] = iin(rank, i);
        iw[i] = iin(0, i);
        for (uint32_t r = 1; r < nranks; r++) iw[i] = iin(r, i) > iw[i] ? iin(r, i) : iw[i];
    }
    void *x = dev(count * 4);
    put(x, iv, count * 4);
    CHECK(HcclAllReduce(x, x, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(out, d, bytes);
    if (memcmp(out, want, bytes) != 0)
        for (size_t i = 0; i < count; i++)
            if (memcmp(&out[i], &want[i], 4) != 0) fail("all-reduce sum (fp32)", i);
    get(iv, x, count * 4);
    for (size_t i = 0; i < count; i++)
        if (iv[i] != iw[i]) fail("all-reduce max in place (int32)", i);
    CHECK(aclrtFree(s));
    CHECK(aclrtFree(d));
    CHECK(aclrtFree(x));
    /* The caller's own host memory (malloc): peers cannot map it, so they read it through the
     * engine's connection instead. */
    for (size_t i = 0; i < count; i++) in[i] = fin(rank, i);
    memset(out, 0, bytes);
    CHECK(HcclAllReduce(in, out, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    if (memcmp(out, want, bytes) != 0)
        for (size_t i = 0; i < count; i++)
            if (memcmp(&out[i], &want[i], 4) != 0) fail("all-reduce sum on malloc'd memory", i);
    free(in), free(out), free(want), free(iv), free(iw);
}

/* Broadcast, all-gather, reduce-scatter, reduce, scatter, all-to-all(v), on int32. */
static void collectives(HcclComm comm) {
    size_t c = 4099, n = nranks, b = c * 4;
    int32_t *h = malloc(b * n), *w = malloc(b * n);
    void *s = dev(b * n), *d = dev(b * n);

    uint32_t root = nranks - 1;
    for (size_t i = 0; i < c; i++) h[i] = rank == root ? iin(root, i) : -1;
    put(s, h, b);
    CHECK(HcclBroadcast(s, c, HCCL_DATA_TYPE_INT32, root, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, s, b);
    for (size_t i = 0; i < c; i++)
        if (h[i] != iin(root, i)) fail("broadcast", i);

    for (size_t i = 0; i < c; i++) h[i] = iin(rank, i);
    put(s, h, b);
    CHECK(HcclAllGather(s, d, c, HCCL_DATA_TYPE_INT32, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, d, b * n);
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            if (h[r * c + i] != iin((uint32_t)r, i)) fail("all-gather", r * c + i);

    for (size_t i = 0; i < c * n; i++) h[i] = iin(rank, i) % 1000;
    put(s, h, b * n);
    CHECK(HcclReduceScatter(s, d, c, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, d, b);
    for (size_t i = 0; i < c; i++) {
        int32_t want = 0;
        for (uint32_t r = 0; r < nranks; r++) want += iin(r, rank * c + i) % 1000;
        if (h[i] != want) fail("reduce-scatter", i);
    }

    for (size_t i = 0; i < c; i++) h[i] = iin(rank, i) % 7 + 1;
    put(s, h, b);
    CHECK(HcclReduce(s, d, c, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MIN, 0, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    if (rank == 0) {
        get(h, d, b);
        for (size_t i = 0; i < c; i++) {
            int32_t want = iin(0, i) % 7 + 1;
            for (uint32_t r = 1; r < nranks; r++) want = iin(r, i) % 7 + 1 < want ? iin(r, i) % 7 + 1 : want;
            if (h[i] != want) fail("reduce to rank 0", i);
        }
    }

    root = 1 % nranks;
    for (size_t i = 0; i < c * n; i++) h[i] = iin(rank, i);
    put(s, h, b * n);
    CHECK(HcclScatter(s, d, c, HCCL_DATA_TYPE_INT32, root, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, d, b);
    for (size_t i = 0; i < c; i++)
        if (h[i] != iin(root, rank * c + i)) fail("scatter", i);

    /* All-to-all: block j of rank r's send goes to rank j, as block r. */
    for (size_t i = 0; i < c * n; i++) h[i] = iin(rank, i);
    put(s, h, b * n);
    CHECK(HcclAlltoAll(s, c, HCCL_DATA_TYPE_INT32, d, c, HCCL_DATA_TYPE_INT32, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, d, b * n);
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            if (h[r * c + i] != iin((uint32_t)r, rank * c + i)) fail("all-to-all", r * c + i);

    /* All-to-all-v: rank r sends r + j + 1 words to rank j. */
    uint64_t sc[64], sd[64], rc[64], rd[64], so = 0, ro = 0;
    for (size_t j = 0; j < n; j++) {
        sc[j] = rank + j + 1, sd[j] = so, so += sc[j];
        rc[j] = j + rank + 1, rd[j] = ro, ro += rc[j] + 3;
    }
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < sc[j]; i++) h[sd[j] + i] = (int32_t)(rank * 100000 + j * 1000 + i);
    put(s, h, so * 4);
    CHECK(HcclAlltoAllV(s, sc, sd, HCCL_DATA_TYPE_INT32, d, rc, rd, HCCL_DATA_TYPE_INT32, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(w, d, ro * 4);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < rc[j]; i++)
            if (w[rd[j] + i] != (int32_t)(j * 100000 + rank * 1000 + i)) fail("all-to-all-v", rd[j] + i);

    CHECK(HcclBarrier(comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtFree(s));
    CHECK(aclrtFree(d));
    free(h), free(w);
}

/* Send/recv in pairs (even ranks send first), then a ring as one batch. */
static void point_to_point(HcclComm comm) {
    size_t c = 1 << 18, b = c * 4;
    float *h = malloc(b);
    void *s = dev(b), *d = dev(b);
    for (size_t i = 0; i < c; i++) h[i] = fin(rank, i);
    put(s, h, b);
    uint32_t peer = rank ^ 1;
    if (peer < nranks) {
        if (rank % 2 == 0) {
            CHECK(HcclSend(s, c, HCCL_DATA_TYPE_FP32, peer, comm, stream));
            CHECK(HcclRecv(d, c, HCCL_DATA_TYPE_FP32, peer, comm, stream));
        } else {
            CHECK(HcclRecv(d, c, HCCL_DATA_TYPE_FP32, peer, comm, stream));
            CHECK(HcclSend(s, c, HCCL_DATA_TYPE_FP32, peer, comm, stream));
        }
        CHECK(aclrtSynchronizeStream(stream));
        get(h, d, b);
        for (size_t i = 0; i < c; i++)
            if (h[i] != fin(peer, i)) fail("send/recv", i);
    }
    uint32_t next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    HcclSendRecvItem items[2] = {
        {HCCL_SEND, s, c, HCCL_DATA_TYPE_FP32, next},
        {HCCL_RECV, d, c, HCCL_DATA_TYPE_FP32, prev},
    };
    CHECK(HcclBatchSendRecv(items, 2, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    get(h, d, b);
    for (size_t i = 0; i < c; i++)
        if (h[i] != fin(prev, i)) fail("batch send/recv ring", i);
    CHECK(aclrtFree(s));
    CHECK(aclrtFree(d));
    free(h);
}

/* The last rank is gone: the next all-reduce fails, promptly, and nothing hangs. */
static void peer_killed(HcclComm comm, int stalled) {
    size_t c = 1024;
    void *s = dev(c * 4);
    double t0 = now();
    CHECK(HcclAllReduce(s, s, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    aclError e = aclrtSynchronizeStream(stream);
    double took = now() - t0;
    if (e == ACL_SUCCESS) {
        fprintf(stderr, "rank %u: all-reduce with a killed rank succeeded\n", rank);
        exit(1);
    }
    if (stalled && e != ACL_ERROR_RT_TASK_TIMEOUT) {
        fprintf(stderr, "rank %u: all-reduce with a stalled rank failed with %d, not the time-out code\n", rank, e);
        exit(1);
    }
    printf("rank %u: all-reduce with a %s rank failed with %d after %.2f s\n", rank, stalled ? "stalled" : "killed", e, took);
    CHECK(aclrtFree(s));
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s NRANKS RANK ROOT_INFO_FILE [kill]\n", argv[0]);
        return 2;
    }
    nranks = (uint32_t)atoi(argv[1]);
    rank = (uint32_t)atoi(argv[2]);
    const char *mode = argc > 4 ? argv[4] : "";
    int kill_last = strcmp(mode, "kill") == 0, stall_last = strcmp(mode, "stall") == 0;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    HcclRootInfo info = root_info(argv[3]);
    HcclComm comm = NULL;
    if (strcmp(mode, "absent") == 0) {
        double t0 = now();
        HcclResult r = HcclCommInitRootInfo(nranks, &info, rank, &comm);
        if (r != HCCL_E_TIMEOUT) {
            fprintf(stderr, "rank %u: init with a rank absent returned %d, not HCCL_E_TIMEOUT\n", rank, (int)r);
            return 1;
        }
        printf("rank %u: init with a rank absent failed with HCCL_E_TIMEOUT after %.2f s\n", rank, now() - t0);
        return 0;
    }
    CHECK(HcclCommInitRootInfo(nranks, &info, rank, &comm));
    uint32_t got_rank = 99, got_size = 0;
    CHECK(HcclGetRankId(comm, &got_rank));
    CHECK(HcclGetRankSize(comm, &got_size));
    if (got_rank != rank || got_size != nranks) {
        fprintf(stderr, "rank %u: HcclGetRankId/Size say %u of %u\n", rank, got_rank, got_size);
        return 1;
    }
    if (kill_last || stall_last) {
        CHECK(HcclBarrier(comm, stream));
        CHECK(aclrtSynchronizeStream(stream));
        if (rank == nranks - 1) {
            if (kill_last) raise(SIGKILL);
            sleep(6); /* alive, answering its engine's probes, never calling the all-reduce */
            return 0;
        }
        peer_killed(comm, stall_last);
    } else {
        all_reduce(comm);
        collectives(comm);
        point_to_point(comm);
        printf("rank %u of %u: every collective and point-to-point call checked\n", rank, nranks);
    }
    CHECK(HcclCommDestroy(comm));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
