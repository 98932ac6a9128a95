// notify_pingpong: an IPC notify ping-pong and an IPC event ping-pong between two processes
// through the public AscendCL C API (acl/acl.h), against a raw futex ping-pong over shared
// memory that really sleeps in FUTEX_WAIT, measured in the same run (issue 37's harness).
// Written against the installed headers and libraries only, as a user of the vendor's API would.
//
// Each process has one stream and one notify, exported to the other. Each iteration of the
// notify phase is, in the parent (the one timing):
//     aclrtRecordNotify(peer, stream); aclrtWaitAndResetNotify(own, stream, 5);
//     aclrtSynchronizeStream(stream);
// and, mirrored, in the child:
//     aclrtWaitAndResetNotify(own, stream, 5); aclrtRecordNotify(peer, stream);
//     aclrtSynchronizeStream(stream);
// The IPC event phase: each process creates an event with aclrtCreateEventExWithFlag(ACL_EVENT_IPC),
// hands its aclrtIpcGetEventHandle to the other, which opens it with aclrtIpcOpenEventHandle.
// The parent's stream records its event and waits on the child's (aclrtRecordEvent,
// aclrtStreamWaitEvent), the child's stream waits on the parent's and records its own. A wait
// targets the record queued last when the wait is queued (the vendor's semantics), so a host
// cannot queue its wait before the peer has queued the record: the two hosts queue every round
// trip in lock-step over the control pipe first, while an aclrtValueWait on a word of device
// memory holds the parent's stream; then the word is written (aclrtValueWrite), the streams
// ping-pong alone and each host sits in aclrtSynchronizeStream. The parent's stream times each
// round trip with an aclrtLaunchHostFunc after the wait.
// The baseline phase exchanges two counters in a shared page: each side stores, FUTEX_WAKEs and
// sleeps in FUTEX_WAIT until the other's counter moves (no spinning at all).
//
// A run is ROUNDS rounds; each round runs the three phases (futex, notify, event; which goes
// first rotating from round to round) of ITERS round trips each, the first tenth dropped as
// warm-up. Per round: p50 and p99 of the parent's round trips, their ratios (notify / futex,
// event / futex), and the CPU time (getrusage, user + system, every thread) of both processes
// over the phase, as a share of one core over the phase's wall time (for the event phase, from
// the opening of the gate). At the end: medians over the rounds, and the CPU used by a process
// whose stream waits 1 s on a notify that nobody records.
//
// Every wait is bounded: the notify waits (5 s), the futex waits (1 s slices, 10 s in all), the
// control pipe (poll, 30 s), the whole run (alarm); the child dies with the parent
// (PR_SET_PDEATHSIG) and is reaped on every way out.
//
// usage: notify_pingpong [--rounds R] [--iters N] [--no-idle] [--no-event]

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
    aclrtIpcEventHandle parent_event;
    aclrtIpcEventHandle child_event;
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
    aclrtEvent own_event;
    aclrtEvent peer_event;
    void *gate;  // a word of device memory the parent's stream waits on in the event phase
};

static void setup(struct acl_side *s, int device, char *own_key, aclrtIpcEventHandle *own_event) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(device));
    CHECK(aclrtCreateStream(&s->stream));
    CHECK(aclrtCreateNotify(&s->own, ACL_NOTIFY_DEFAULT));
    CHECK(aclrtNotifyGetExportKey(s->own, own_key, KEY_LEN, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    CHECK(aclrtCreateEventExWithFlag(&s->own_event, ACL_EVENT_IPC));
    CHECK(aclrtIpcGetEventHandle(s->own_event, own_event));
    CHECK(aclrtMalloc(&s->gate, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
}

static void import_peer(struct acl_side *s, const char *key, aclrtIpcEventHandle peer_event) {
    CHECK(aclrtNotifyImportByKey(&s->peer, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT));
    CHECK(aclrtIpcOpenEventHandle(peer_event, &s->peer_event));
}

static void teardown(struct acl_side *s, int device) {
    CHECK(aclrtDestroyNotify(s->peer));
    CHECK(aclrtDestroyNotify(s->own));
    CHECK(aclrtDestroyEvent(s->peer_event));
    CHECK(aclrtDestroyEvent(s->own_event));
    CHECK(aclrtFree(s->gate));
    CHECK(aclrtDestroyStream(s->stream));
    CHECK(aclrtResetDevice(device));
    aclFinalize();
}

// The child's side of an event phase: for each round trip, when the parent says it has queued
// its record, queues the wait on it and its own record, and says so; then synchronises. The CPU
// time counted starts when every round trip is queued.
static double child_event_phase(struct acl_side *s, int iters) {
    char c;
    for (int i = 0; i < iters; i++) {
        get(to_child[0], &c, 1);
        CHECK(aclrtStreamWaitEvent(s->stream, s->peer_event));
        CHECK(aclrtRecordEvent(s->own_event, s->stream));
        put(to_parent[1], &c, 1);
    }
    double cpu0 = cpu_us();
    CHECK(aclrtSynchronizeStream(s->stream));
    return cpu_us() - cpu0;
}

// The child: answers the parent's commands ('F' futex phase, 'N' notify phase, 'E' event phase,
// 'Q' quit), each with 'R' (ready) and then its CPU time over the phase.
static void child_main(int iters) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);
    struct acl_side s;
    setup(&s, 1, sh->child_key, &sh->child_event);
    char c = 'K';
    put(to_parent[1], &c, 1);
    get(to_child[0], &c, 1);  // the parent's key and handle are in the page
    import_peer(&s, sh->parent_key, sh->parent_event);
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
        } else if (c == 'E') {
            double cpu = child_event_phase(&s, iters);
            put(to_parent[1], &cpu, sizeof cpu);
            continue;
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

// A phase's figures from its round trips' times (the first tenth dropped) and CPU shares.
static struct phase summarise(double *times, int iters, double cpu_parent, double cpu_child) {
    int warm = iters / 10, n = iters - warm;
    qsort(times + warm, (size_t)n, sizeof *times, cmp_double);
    struct phase ph = {pct(times + warm, n, 0.5), pct(times + warm, n, 0.99), cpu_parent, cpu_child};
    return ph;
}

static uint32_t parent_base = 0;

// The event phase's time stamps, taken by a host function on the parent's stream after each
// round trip.
static double *stamps;
static int stamp_next;

static void stamp(void *arg) {
    (void)arg;
    stamps[stamp_next++] = now_us();
}

// The parent's side of an event phase (see the top of the file); the wall time and CPU time
// counted start when the gate opens.
static void parent_event_phase(struct acl_side *s, int iters, double *times, double *wall, double *cpu) {
    static uint64_t gate_value = 0;
    gate_value++;
    CHECK(aclrtValueWait(s->gate, gate_value, ACL_STREAM_WAIT_VALUE_EQ, s->stream));
    stamps = times;
    stamp_next = 0;
    char c = 'e';
    for (int i = 0; i < iters; i++) {
        CHECK(aclrtRecordEvent(s->own_event, s->stream));
        put(to_child[1], &c, 1);
        get(to_parent[0], &c, 1);
        CHECK(aclrtStreamWaitEvent(s->stream, s->peer_event));
        CHECK(aclrtLaunchHostFunc(s->stream, stamp, NULL));
    }
    double cpu0 = cpu_us(), t0 = now_us();
    CHECK(aclrtValueWrite(s->gate, gate_value, 0, NULL));
    CHECK(aclrtSynchronizeStream(s->stream));
    *wall = now_us() - t0;
    *cpu = cpu_us() - cpu0;
    if (stamp_next != iters) die("%d time stamps for %d round trips", stamp_next, iters);
    // Round trip i ends at stamp i; the first begins when the gate opens.
    for (int i = iters - 1; i > 0; i--) times[i] -= times[i - 1];
    times[0] -= t0;
}

static struct phase run_phase(char kind, struct acl_side *s, int iters, double *times) {
    put(to_child[1], &kind, 1);
    char ready;
    get(to_parent[0], &ready, 1);
    if (kind == 'E') {
        double wall, cpu, child_cpu;
        parent_event_phase(s, iters, times, &wall, &cpu);
        get(to_parent[0], &child_cpu, sizeof child_cpu);
        return summarise(times, iters, cpu / wall, child_cpu / wall);
    }
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
    return summarise(times, iters, cpu / wall, child_cpu / wall);
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

// The medians over the rounds of phase k's figures against the futex phase's (phase 0).
static void print_medians(const char *name, struct phase *ph, struct phase *futex_ph, int rounds) {
    double v[5][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        v[0][r] = ph[r].p50;
        v[1][r] = ph[r].p99;
        v[2][r] = ph[r].cpu_parent + ph[r].cpu_child;
        v[3][r] = ph[r].p50 / futex_ph[r].p50;
        v[4][r] = ph[r].p99 / futex_ph[r].p99;
    }
    printf("  %-28s p50 %7.1f us  p99 %7.1f us  CPU of both %4.0f%% of a core\n", name, median(v[0], rounds),
           median(v[1], rounds), 100 * median(v[2], rounds));
    if (ph == futex_ph) return;
    printf("  %-28s p50 %7.2fx     p99 %7.2fx   (target: p50 <= 1.2x, p99 <= 3x)\n", "  ratio / futex",
           median(v[3], rounds), median(v[4], rounds));
}

static void print_round_ratios(const char *name, struct phase *ph, struct phase *futex_ph, int rounds) {
    printf("  %s ratios of the rounds: p50", name);
    for (int r = 0; r < rounds; r++) printf(" %.2f", ph[r].p50 / futex_ph[r].p50);
    printf("; p99");
    for (int r = 0; r < rounds; r++) printf(" %.2f", ph[r].p99 / futex_ph[r].p99);
    printf("\n");
}

int main(int argc, char **argv) {
    int rounds = 10, iters = 2000, idle = 1, event = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-idle")) {
            idle = 0;
        } else if (!strcmp(argv[i], "--no-event")) {
            event = 0;
        } else {
            fprintf(stderr, "usage: %s [--rounds R] [--iters N] [--no-idle] [--no-event]\n", argv[0]);
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
    setup(&s, 0, sh->parent_key, &sh->parent_event);
    char c;
    get(to_parent[0], &c, 1);  // the child's key and handle are in the page
    import_peer(&s, sh->child_key, sh->child_event);
    c = 'K';
    put(to_child[1], &c, 1);

    double *times = calloc((size_t)iters, sizeof *times);
    // Phases: 0 futex, 1 notify, 2 event.
    static const char kinds[3] = {'F', 'N', 'E'};
    int phases = event ? 3 : 2;
    static struct phase ph[3][MAX_ROUNDS];
    printf("notify%s ping-pong between two processes, %d rounds of %d round trips (%d warm-up dropped)\n",
           event ? " and IPC event" : "", rounds, iters, iters / 10);
    printf("round  futex p50/p99 us   notify p50/p99 us  ratio p50  p99 %s  CPU %% futex/notify%s\n",
           event ? "  event p50/p99 us   ratio p50  p99" : "", event ? "/event" : "");
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < phases; k++) {
            int p = (r + k) % phases;
            ph[p][r] = run_phase(kinds[p], &s, iters, times);
        }
        printf("%5d  %7.1f %8.1f   %8.1f %8.1f  %8.2fx %5.2fx", r, ph[0][r].p50, ph[0][r].p99, ph[1][r].p50,
               ph[1][r].p99, ph[1][r].p50 / ph[0][r].p50, ph[1][r].p99 / ph[0][r].p99);
        if (event)
            printf("   %8.1f %8.1f  %8.2fx %5.2fx", ph[2][r].p50, ph[2][r].p99, ph[2][r].p50 / ph[0][r].p50,
                   ph[2][r].p99 / ph[0][r].p99);
        for (int k = 0; k < phases; k++)
            printf("%s%.0f", k ? "/" : "  ", 100 * (ph[k][r].cpu_parent + ph[k][r].cpu_child));
        printf("\n");
        fflush(stdout);
    }
    c = 'Q';
    put(to_child[1], &c, 1);
    int status;
    if (waitpid(child_pid, &status, 0) != child_pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the child failed");
    child_pid = -1;

    printf("medians over the rounds (CPU: both processes):\n");
    print_medians("futex (sleeping) ping-pong", ph[0], ph[0], rounds);
    print_medians("notify + stream ping-pong", ph[1], ph[0], rounds);
    if (event) print_medians("IPC event + stream ping-pong", ph[2], ph[0], rounds);
    print_round_ratios("notify", ph[1], ph[0], rounds);
    if (event) print_round_ratios("IPC event", ph[2], ph[0], rounds);
    if (idle) {
        double share = idle_wait_share(&s);
        printf("a stream waiting 1 s on a notify nobody records: %.2f%% of a core (target: < 2%%)\n",
               100 * share);
    }
    free(times);
    teardown(&s, 0);
    return 0;
}
