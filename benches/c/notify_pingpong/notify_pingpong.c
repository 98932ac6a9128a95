// notify_pingpong: an IPC notify ping-pong between two processes through the public AscendCL C
// API (acl/acl.h), against a raw futex ping-pong over shared memory that really sleeps in
// FUTEX_WAIT, measured in the same run (issue 37's harness). Written against the installed
// headers and libraries only, as a user of the vendor's API would.
//
// Each process has one stream and one notify, exported to the other. Each iteration of the
// notify phase is, in the parent (the one timing):
//     aclrtRecordNotify(peer, stream); aclrtWaitAndResetNotify(own, stream, 5);
//     aclrtSynchronizeStream(stream);
// and, mirrored, in the child:
//     aclrtWaitAndResetNotify(own, stream, 5); aclrtRecordNotify(peer, stream);
//     aclrtSynchronizeStream(stream);
// The baseline phase exchanges two counters in a shared page: each side stores, FUTEX_WAKEs and
// sleeps in FUTEX_WAIT until the other's counter moves (no spinning at all).
//
// A run is ROUNDS rounds; each round runs both phases (the baseline first in even rounds, the
// notify first in odd ones) of ITERS round trips each, the first tenth dropped as warm-up.
// Per round: p50 and p99 of the parent's round trips, their ratios (notify / futex), and the CPU
// time (getrusage, user + system, every thread) of each process over the phase, as a share of
// one core over the phase's wall time. At the end: medians over the rounds, and the CPU used by
// a process whose stream waits 1 s on a notify that nobody records.
//
// Every wait is bounded: the notify waits (5 s), the futex waits (1 s slices, 10 s in all), the
// control pipe (poll, 30 s), the whole run (alarm); the child dies with the parent
// (PR_SET_PDEATHSIG) and is reaped on every way out.
//
// usage: notify_pingpong [--rounds R] [--iters N] [--no-idle]

#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"

#define KEY_LEN 65
#define MAX_ROUNDS 64

// The page both processes map: the futex counters (a cache line each) and the notify keys.
struct shared {
    _Atomic uint32_t ping;
    char pad0[60];
    _Atomic uint32_t pong;
    char pad1[60];
    char parent_key[KEY_LEN];
    char child_key[KEY_LEN];
};

static struct shared *sh;
static pid_t child_pid = -1;
static int to_child[2], to_parent[2];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "notify_pingpong[%d]: ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (child_pid > 0) {
        kill(child_pid, SIGKILL);
        waitpid(child_pid, NULL, 0);
    }
    _exit(1);
}

#define CHECK(call)                                                      \
    do {                                                                 \
        aclError rc_ = (call);                                           \
        if (rc_ != ACL_SUCCESS) die("%s failed: %d", #call, (int)rc_); \
    } while (0)

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

// CPU time of this process (every thread), user + system, in microseconds.
static double cpu_us(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts) {
    // Shared (not FUTEX_PRIVATE_FLAG): the two processes map the page at their own addresses.
    return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

// Sleeps until *word >= target: FUTEX_WAIT at once, no spinning (1 s slices, 10 s in all).
static void futex_wait_for(_Atomic uint32_t *word, uint32_t target) {
    const struct timespec slice = {1, 0};
    for (int i = 0; i < 10; i++) {
        uint32_t seen = atomic_load(word);
        while (seen < target) {
            if (futex(word, FUTEX_WAIT, seen, &slice) != 0 && errno == ETIMEDOUT) break;
            seen = atomic_load(word);
        }
        if (seen >= target) return;
    }
    die("futex wait: counter stuck below %u", target);
}

static void futex_post(_Atomic uint32_t *word, uint32_t value) {
    atomic_store(word, value);
    futex(word, FUTEX_WAKE, 1, NULL);
}

// The control pipe: one byte at a time, or a double; every read is bounded.
static void put(int fd, const void *p, size_t n) {
    if (write(fd, p, n) != (ssize_t)n) die("control pipe write: %s", strerror(errno));
}

static void get(int fd, void *p, size_t n) {
    struct pollfd pfd = {fd, POLLIN, 0};
    size_t got = 0;
    while (got < n) {
        int r = poll(&pfd, 1, 30000);
        if (r == 0) die("control pipe: nothing for 30 s");
        if (r < 0 && errno == EINTR) continue;
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k <= 0) die("control pipe closed");
        got += (size_t)k;
    }
}

struct acl_side {
    aclrtStream stream;
    aclrtNotify own;
    aclrtNotify peer;
};

static void setup(struct acl_side *s, int device, char *own_key) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(device));
    CHECK(aclrtCreateStream(&s->stream));
    CHECK(aclrtCreateNotify(&s->own, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtNotifyGetExportKey(s->own, own_key, KEY_LEN, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
}

static void import_peer(struct acl_side *s, const char *key) {
    CHECK(aclrtNotifyImportByKey(&s->peer, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT));
}

static void teardown(struct acl_side *s, int device) {
    CHECK(aclrtDestroyNotify(s->peer));
    CHECK(aclrtDestroyNotify(s->own));
    CHECK(aclrtDestroyStream(s->stream));
    CHECK(aclrtResetDevice(device));
    aclFinalize();
}

// The child: answers the parent's commands ('F' futex phase, 'N' notify phase, 'Q' quit), each
// with 'R' (ready) and then its CPU time over the phase.
static void child_main(int iters) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);
    struct acl_side s;
    setup(&s, 1, sh->child_key);
    char c = 'K';
    put(to_parent[1], &c, 1);
    get(to_child[0], &c, 1);  // the parent's key is in the page
    import_peer(&s, sh->parent_key);
    uint32_t base = 0;
    for (;;) {
        get(to_child[0], &c, 1);
        if (c == 'Q') break;
        double cpu0 = cpu_us();
        char ready = 'R';
        put(to_parent[1], &ready, 1);
        if (c == 'F') {
            for (int i = 1; i <= iters; i++) {
                futex_wait_for(&sh->ping, base + (uint32_t)i);
                futex_post(&sh->pong, base + (uint32_t)i);
            }
            base += (uint32_t)iters;
        } else {
            for (int i = 0; i < iters; i++) {
                CHECK(aclrtWaitAndResetNotify(s.own, s.stream, 5));
                CHECK(aclrtRecordNotify(s.peer, s.stream));
                CHECK(aclrtSynchronizeStream(s.stream));
            }
        }
        double cpu = cpu_us() - cpu0;
        put(to_parent[1], &cpu, sizeof cpu);
    }
    teardown(&s, 1);
    _exit(0);
}

struct phase {
    double p50, p99;      // us
    double cpu_parent;    // share of one core over the phase
    double cpu_child;
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, int n, double p) {
    int i = (int)((double)n * p);
    return sorted[i < n ? i : n - 1];
}

static uint32_t parent_base = 0;

static struct phase run_phase(char kind, struct acl_side *s, int iters, double *times) {
    put(to_child[1], &kind, 1);
    char ready;
    get(to_parent[0], &ready, 1);
    double cpu0 = cpu_us(), t0 = now_us(), last = t0;
    for (int i = 0; i < iters; i++) {
        if (kind == 'F') {
            uint32_t v = parent_base + (uint32_t)i + 1;
            futex_post(&sh->ping, v);
            futex_wait_for(&sh->pong, v);
        } else {
            CHECK(aclrtRecordNotify(s->peer, s->stream));
            CHECK(aclrtWaitAndResetNotify(s->own, s->stream, 5));
            CHECK(aclrtSynchronizeStream(s->stream));
        }
        double t = now_us();
        times[i] = t - last;
        last = t;
    }
    if (kind == 'F') parent_base += (uint32_t)iters;
    double wall = now_us() - t0, cpu = cpu_us() - cpu0, child_cpu;
    get(to_parent[0], &child_cpu, sizeof child_cpu);
    int warm = iters / 10, n = iters - warm;
    qsort(times + warm, (size_t)n, sizeof *times, cmp_double);
    struct phase ph = {pct(times + warm, n, 0.5), pct(times + warm, n, 0.99), cpu / wall, child_cpu / wall};
    return ph;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

// CPU share of this process while its stream waits 1 s on a notify nobody records.
static double idle_wait_share(struct acl_side *s) {
    double cpu0 = cpu_us(), t0 = now_us();
    CHECK(aclrtWaitAndResetNotify(s->own, s->stream, 1));
    aclError rc = aclrtSynchronizeStream(s->stream);
    double wall = now_us() - t0, cpu = cpu_us() - cpu0;
    if (rc == ACL_SUCCESS) die("the wait on a notify nobody records succeeded");
    return cpu / wall;
}

int main(int argc, char **argv) {
    int rounds = 10, iters = 2000, idle = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-idle")) {
            idle = 0;
        } else {
            fprintf(stderr, "usage: %s [--rounds R] [--iters N] [--no-idle]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || iters < 20) {
        fprintf(stderr, "rounds: 1..%d, iters: at least 20\n", MAX_ROUNDS);
        return 2;
    }
    alarm(900);
    sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) die("mmap: %s", strerror(errno));
    if (pipe(to_child) || pipe(to_parent)) die("pipe: %s", strerror(errno));
    // Forked before either process initialises AscendCL: each starts its own runtime.
    child_pid = fork();
    if (child_pid < 0) die("fork: %s", strerror(errno));
    if (child_pid == 0) {
        child_pid = -1;
        child_main(iters);
    }
    struct acl_side s;
    setup(&s, 0, sh->parent_key);
    char c;
    get(to_parent[0], &c, 1);  // the child's key is in the page
    import_peer(&s, sh->child_key);
    c = 'K';
    put(to_child[1], &c, 1);

    double *times = calloc((size_t)iters, sizeof *times);
    struct phase futex_ph[MAX_ROUNDS], notify_ph[MAX_ROUNDS];
    double r50[MAX_ROUNDS], r99[MAX_ROUNDS];
    printf("notify ping-pong between two processes, %d rounds of %d round trips (%d warm-up dropped)\n",
           rounds, iters, iters / 10);
    printf("round  futex p50/p99 us   notify p50/p99 us   ratio p50  p99   CPU futex par/chi   CPU notify par/chi\n");
    for (int r = 0; r < rounds; r++) {
        if (r % 2 == 0) {
            futex_ph[r] = run_phase('F', &s, iters, times);
            notify_ph[r] = run_phase('N', &s, iters, times);
        } else {
            notify_ph[r] = run_phase('N', &s, iters, times);
            futex_ph[r] = run_phase('F', &s, iters, times);
        }
        r50[r] = notify_ph[r].p50 / futex_ph[r].p50;
        r99[r] = notify_ph[r].p99 / futex_ph[r].p99;
        printf("%5d  %7.1f %8.1f   %8.1f %8.1f   %8.2fx %5.2fx   %7.0f%% %5.0f%%   %7.0f%% %5.0f%%\n", r,
               futex_ph[r].p50, futex_ph[r].p99, notify_ph[r].p50, notify_ph[r].p99, r50[r], r99[r],
               100 * futex_ph[r].cpu_parent, 100 * futex_ph[r].cpu_child, 100 * notify_ph[r].cpu_parent,
               100 * notify_ph[r].cpu_child);
        fflush(stdout);
    }
    c = 'Q';
    put(to_child[1], &c, 1);
    int status;
    if (waitpid(child_pid, &status, 0) != child_pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the child failed");
    child_pid = -1;

    double v[6][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        v[0][r] = futex_ph[r].p50;
        v[1][r] = futex_ph[r].p99;
        v[2][r] = notify_ph[r].p50;
        v[3][r] = notify_ph[r].p99;
        v[4][r] = notify_ph[r].cpu_parent + notify_ph[r].cpu_child;
        v[5][r] = futex_ph[r].cpu_parent + futex_ph[r].cpu_child;
    }
    printf("medians over the rounds:\n");
    printf("  futex (sleeping) ping-pong   p50 %7.1f us  p99 %7.1f us  CPU of both %4.0f%% of a core\n",
           median(v[0], rounds), median(v[1], rounds), 100 * median(v[5], rounds));
    printf("  notify + stream ping-pong    p50 %7.1f us  p99 %7.1f us  CPU of both %4.0f%% of a core\n",
           median(v[2], rounds), median(v[3], rounds), 100 * median(v[4], rounds));
    double m50 = median(r50, rounds), m99 = median(r99, rounds);
    printf("  ratio notify / futex         p50 %7.2fx     p99 %7.2fx   (target: p50 <= 1.2x, p99 <= 3x)\n", m50,
           m99);
    printf("  ratios of the rounds: p50");
    for (int r = 0; r < rounds; r++) printf(" %.2f", notify_ph[r].p50 / futex_ph[r].p50);
    printf("; p99");
    for (int r = 0; r < rounds; r++) printf(" %.2f", notify_ph[r].p99 / futex_ph[r].p99);
    printf("\n");
    if (idle) {
        double share = idle_wait_share(&s);
        printf("a stream waiting 1 s on a notify nobody records: %.2f%% of a core (target: < 2%%)\n",
               100 * share);
    }
    free(times);
    teardown(&s, 0);
    return 0;
}
