// hccl_bench: HCCL on one host against what a user would write instead (issue 39's benchmark),
// through the installed headers and libraries only.
//
// all-reduce: N rank processes (forked; rank 0's HcclGetRootInfo handed over in shared memory)
// all-reduce M MiB of float32 with HcclAllReduce on aclrtMalloc memory. The baseline, in the same
// processes and run: the same inputs in one MAP_SHARED mapping, each rank sums its 1/N of the
// elements over every rank's input (in rank order, one pass) into a shared result, a
// process-shared barrier, then each copies the whole result into its own output buffer (the
// plain shared-memory all-reduce, its sums a loop the compiler vectorises). Same bits as HCCL's (checked once). Also printed: one
// process's memcpy bandwidth in the same run, the bound every copy here is held to.
//
// send/recv: 2 ranks; HcclSend of M MiB from rank 0 to HcclRecv on rank 1, against an
// adxl::AdxlEngine TransferSync (READ) of the same bytes between the same two processes, each
// side's memory registered once (the engine's fastest use).
//
// Rounds alternate which goes first; per round the best of ITERS calls each; printed: medians
// over the rounds of the times, their ratio (baseline time / HCCL time: >= 1 means HCCL is
// faster) and the CPU time of all ranks per call (getrusage).
//
// usage: hccl_bench [--ranks N] [--mib M] [--rounds R] [--iters I] [--only allreduce|sendrecv]

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"
#include "hccl/hccl.h"

namespace {

constexpr int kMaxRanks = 16;
constexpr int kMaxRounds = 64;
constexpr int32_t kTimeoutMs = 60000;

struct Args {
  int ranks = 8;
  size_t mib = 64;
  int rounds = 5;
  int iters = 3;
  std::string only;
};

// What the rank processes share: barriers, the root info, addresses and the figures.
struct Shared {
  pthread_barrier_t barrier;
  std::atomic<int> root_ready;
  HcclRootInfo root;
  std::atomic<uint64_t> target_addr;  // send/recv baseline: rank 0's registered buffer
  std::atomic<int> target_port;
  double base[kMaxRounds], hccl[kMaxRounds];      // rank 0's best time per round, seconds
  double base_cpu[kMaxRounds][kMaxRanks], hccl_cpu[kMaxRounds][kMaxRanks];  // per call
  double elapsed[kMaxRanks];  // each rank's time of the iteration being timed
  double memcpy_gbs;
  std::atomic<int> failed;
};

Shared *g = nullptr;
int g_rank = 0;

[[noreturn]] void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "hccl_bench rank %d: ", g_rank);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  if (g != nullptr) g->failed.store(1);
  _exit(1);
}

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int rc_ = static_cast<int>(call);                                                   \
    if (rc_ != 0) die("%s = %d (%s)", #call, rc_, aclGetRecentErrMsg());                \
  } while (0)

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void barrier() {
  int rc = pthread_barrier_wait(&g->barrier);
  if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) die("pthread_barrier_wait: %d", rc);
  if (g->failed.load() != 0) _exit(1);
}

float input(int r, size_t i) {
  return static_cast<float>(static_cast<double>((i * 37 + static_cast<size_t>(r) * 11) % 1000) / 7.0 - 70.0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs `f` ITERS times between barriers; an iteration takes as long as its slowest rank (a
// rank with nothing to do may be scheduled late and see only the end of it); the best
// iteration goes to `*best` (rank 0 writes it), each rank's CPU time per call to `cpu`.
template <typename F>
void timed(int n, int iters, F &&f, double *best, double *cpu) {
  double t_best = 1e9, c0 = cpu_seconds();
  for (int i = 0; i < iters; i++) {
    barrier();
    double t0 = now();
    f();
    barrier();
    g->elapsed[g_rank] = now() - t0;
    barrier();
    t_best = std::min(t_best, *std::max_element(g->elapsed, g->elapsed + n));
    barrier();
  }
  cpu[g_rank] = (cpu_seconds() - c0) / iters;
  if (g_rank == 0) *best = t_best;
}

HcclComm join(int n) {
  if (g_rank == 0) {
    CHECK(HcclGetRootInfo(&g->root));
    g->root_ready.store(1);
  }
  for (int i = 0; g->root_ready.load() == 0; i++) {
    if (i > 60000) die("no root info");
    usleep(1000);
  }
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(static_cast<uint32_t>(n), &g->root, static_cast<uint32_t>(g_rank), &comm));
  return comm;
}

// One rank of the all-reduce comparison.
void all_reduce_rank(const Args &a, float *inputs, float *result) {
  const int n = a.ranks;
  const size_t count = a.mib << 18, bytes = a.mib << 20;
  float *mine = inputs + static_cast<size_t>(g_rank) * count;
  for (size_t i = 0; i < count; i++) mine[i] = input(g_rank, i);
  std::vector<float> out(count, 0.0F);
  const size_t first = count / n * g_rank + std::min<size_t>(g_rank, count % n);
  const size_t len = count / n + (static_cast<size_t>(g_rank) < count % n ? 1 : 0);

  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));
  HcclComm comm = join(n);
  void *send = nullptr, *recv = nullptr;
  CHECK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMemcpy(send, bytes, mine, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemset(recv, bytes, 0, bytes));

  auto plain = [&] {
    // Rank 0's part first, then each rank's added in rank order (a loop the compiler
    // vectorises; the same bits per element as summing across the ranks).
    float *res = result + first;
    std::memcpy(res, inputs + first, len * sizeof(float));
    for (int r = 1; r < n; r++) {
      const float *in = inputs + static_cast<size_t>(r) * count + first;
      for (size_t i = 0; i < len; i++) res[i] += in[i];
    }
    barrier();
    std::memcpy(out.data(), result, bytes);
  };
  auto hccl = [&] {
    CHECK(HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
  };
  // Once, checked: HCCL's bits are the plain reduction's.
  plain();
  hccl();
  barrier();
  std::vector<float> got(count);
  CHECK(aclrtMemcpy(got.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  if (std::memcmp(got.data(), out.data(), bytes) != 0) die("HcclAllReduce differs from the plain reduction");
  if (g_rank == 0) {
    std::vector<char> x(bytes * 2), y(bytes * 2, 1);
    double best = 1e9;
    for (int i = 0; i < 3; i++) {
      double t0 = now();
      std::memcpy(x.data(), y.data(), x.size());
      best = std::min(best, now() - t0);
    }
    g->memcpy_gbs = static_cast<double>(x.size()) / best / 1e9;
  }
  barrier();
  for (int r = 0; r < a.rounds; r++) {
    if (r % 2 == 0) {
      timed(n, a.iters, plain, &g->base[r], g->base_cpu[r]);
      timed(n, a.iters, hccl, &g->hccl[r], g->hccl_cpu[r]);
    } else {
      timed(n, a.iters, hccl, &g->hccl[r], g->hccl_cpu[r]);
      timed(n, a.iters, plain, &g->base[r], g->base_cpu[r]);
    }
  }
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtFree(send));
  CHECK(aclrtFree(recv));
  CHECK(aclrtDestroyStream(stream));
}

// One rank of the send/recv comparison.
void send_recv_rank(const Args &a) {
  const size_t bytes = a.mib << 20, count = a.mib << 18;
  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));
  HcclComm comm = join(2);
  void *buf = nullptr;
  CHECK(aclrtMalloc(&buf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> h(count);
  for (size_t i = 0; i < count; i++) h[i] = input(g_rank, i);
  CHECK(aclrtMemcpy(buf, bytes, h.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  adxl::AdxlEngine engine;
  std::map<adxl::AscendString, adxl::AscendString> none;
  adxl::MemHandle handle = nullptr;
  std::string target;
  if (g_rank == 0) {
    for (int port = 26000 + (getpid() % 2000), tries = 0;; port++, tries++) {
      if (engine.Initialize(("127.0.0.1:" + std::to_string(port)).c_str(), none) == adxl::SUCCESS) {
        g->target_port.store(port);
        break;
      }
      if (tries > 50) die("AdxlEngine::Initialize: no free port");
    }
    CHECK(engine.RegisterMem(adxl::MemDesc{reinterpret_cast<uintptr_t>(buf), bytes}, adxl::MEM_DEVICE, handle));
    g->target_addr.store(reinterpret_cast<uintptr_t>(buf));
  } else {
    CHECK(engine.Initialize("127.0.0.1", none));
    CHECK(engine.RegisterMem(adxl::MemDesc{reinterpret_cast<uintptr_t>(buf), bytes}, adxl::MEM_DEVICE, handle));
  }
  barrier();
  if (g_rank == 1) {
    target = "127.0.0.1:" + std::to_string(g->target_port.load());
    CHECK(engine.Connect(target.c_str(), kTimeoutMs));
  }
  const std::vector<adxl::TransferOpDesc> desc{
      adxl::TransferOpDesc{reinterpret_cast<uintptr_t>(buf), static_cast<uintptr_t>(g->target_addr.load()), bytes}};
  auto hccl = [&] {
    if (g_rank == 0) {
      CHECK(HcclSend(buf, count, HCCL_DATA_TYPE_FP32, 1, comm, stream));
    } else {
      CHECK(HcclRecv(buf, count, HCCL_DATA_TYPE_FP32, 0, comm, stream));
    }
    CHECK(aclrtSynchronizeStream(stream));
  };
  auto plain = [&] {
    if (g_rank == 1) CHECK(engine.TransferSync(target.c_str(), adxl::READ, desc, kTimeoutMs));
  };
  hccl();
  if (g_rank == 1) {
    std::vector<float> got(count);
    CHECK(aclrtMemcpy(got.data(), bytes, buf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < count; i++)
      if (got[i] != input(0, i)) die("HcclRecv got the wrong bytes at %zu", i);
  }
  for (int r = 0; r < a.rounds; r++) {
    if (r % 2 == 0) {
      timed(2, a.iters, plain, &g->base[r], g->base_cpu[r]);
      timed(2, a.iters, hccl, &g->hccl[r], g->hccl_cpu[r]);
    } else {
      timed(2, a.iters, hccl, &g->hccl[r], g->hccl_cpu[r]);
      timed(2, a.iters, plain, &g->base[r], g->base_cpu[r]);
    }
  }
  barrier();
  if (g_rank == 1) engine.Disconnect(target.c_str(), kTimeoutMs);
  barrier();
  engine.DeregisterMem(handle);
  engine.Finalize();
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtFree(buf));
  CHECK(aclrtDestroyStream(stream));
}

// Forks `n` ranks running `body`, waits for all (bounded by an alarm in each).
template <typename F>
void run_ranks(int n, F body) {
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&g->barrier, &attr, static_cast<unsigned>(n));
  g->root_ready.store(0);
  g->failed.store(0);
  std::vector<pid_t> kids;
  for (int r = 0; r < n; r++) {
    pid_t p = fork();
    if (p < 0) die("fork");
    if (p == 0) {
      g_rank = r;
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(600);
      body();
      _exit(0);
    }
    kids.push_back(p);
  }
  bool ok = true;
  for (pid_t p : kids) {
    int status = 0;
    waitpid(p, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ok = false;
      g->failed.store(1);
    }
  }
  if (!ok) die("a rank failed");
}

void report(const char *what, const char *base_name, const Args &a, int n, size_t bytes) {
  std::vector<double> b, h, ratio, bc, hc;
  for (int r = 0; r < a.rounds; r++) {
    b.push_back(g->base[r]);
    h.push_back(g->hccl[r]);
    ratio.push_back(g->base[r] / g->hccl[r]);
    double sb = 0, sh = 0;
    for (int k = 0; k < n; k++) sb += g->base_cpu[r][k], sh += g->hccl_cpu[r][k];
    bc.push_back(sb);
    hc.push_back(sh);
  }
  std::printf("%s, %d ranks, %zu MiB (%d rounds, best of %d each; medians):\n", what, n, bytes >> 20, a.rounds, a.iters);
  std::printf("  %-28s %8.2f ms  %6.2f GB/s  CPU %7.1f ms per call (all ranks)\n", base_name, median(b) * 1e3,
              static_cast<double>(bytes) / median(b) / 1e9, median(bc) * 1e3);
  std::printf("  %-28s %8.2f ms  %6.2f GB/s  CPU %7.1f ms per call (all ranks)\n", "HCCL", median(h) * 1e3,
              static_cast<double>(bytes) / median(h) / 1e9, median(hc) * 1e3);
  std::printf("  ratio (baseline time / HCCL time) %.2fx   per round:", median(ratio));
  for (double x : ratio) std::printf(" %.2f", x);
  std::printf("\n");
}

}  // namespace

int main(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string s = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) die("%s needs a value", s.c_str());
      return std::string(argv[++i]);
    };
    if (s == "--ranks") a.ranks = std::atoi(next().c_str());
    else if (s == "--mib") a.mib = std::strtoull(next().c_str(), nullptr, 10);
    else if (s == "--rounds") a.rounds = std::atoi(next().c_str());
    else if (s == "--iters") a.iters = std::atoi(next().c_str());
    else if (s == "--only") a.only = next();
    else die("usage: hccl_bench [--ranks N] [--mib M] [--rounds R] [--iters I] [--only allreduce|sendrecv]");
  }
  if (a.ranks < 2 || a.ranks > kMaxRanks || a.rounds < 1 || a.rounds > kMaxRounds || a.iters < 1 || a.mib < 1)
    die("bad arguments");
  const size_t bytes = a.mib << 20;
  const size_t shared_bytes = sizeof(Shared) + 4096 + bytes * static_cast<size_t>(a.ranks + 1);
  void *m = mmap(nullptr, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) die("mmap of %zu bytes", shared_bytes);
  g = new (m) Shared();
  auto *inputs = reinterpret_cast<float *>(static_cast<char *>(m) + ((sizeof(Shared) + 4095) & ~size_t{4095}));
  float *result = inputs + (bytes / 4) * static_cast<size_t>(a.ranks);
  char load[128] = "?";
  if (FILE *f = std::fopen("/proc/loadavg", "r")) {
    if (std::fgets(load, sizeof load, f) == nullptr) load[0] = 0;
    std::fclose(f);
  }
  std::printf("load average: %s", load);
  if (a.only.empty() || a.only == "allreduce") {
    run_ranks(a.ranks, [&] { all_reduce_rank(a, inputs, result); });
    std::printf("memcpy, one process: %.2f GB/s\n", g->memcpy_gbs);
    report("all-reduce (sum, float32)", "plain shared-memory reduce", a, a.ranks, bytes);
  }
  if (a.only.empty() || a.only == "sendrecv") {
    run_ranks(2, [&] { send_recv_rank(a); });
    report("send/recv", "ADXL TransferSync (READ)", a, 2, bytes);
  }
  return 0;
}
