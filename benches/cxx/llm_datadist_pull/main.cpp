// llm_datadist_pull: LLM-DataDist's PullKvBlocks against ADXL's TransferSync of the same
// descriptors, two processes on one host (issue 35's benchmark). Written against the installed
// headers and libraries only, as a user of the vendor's API would.
//
// The prompt process (this program run again from /proc/self/exe, `prompt ...`) fills a KV
// cache of two tensors (K and V, each BLOCKS rows of BLOCK bytes), listens on
// llm.ListenIpInfo, registers the cache (RegisterKvCache) and serves until told to stop. The
// decoder process (the one started by the user) registers a cache of the same layout, links
// to the prompt (LinkLlmClusters) and pulls every block with PullKvBlocks; its baseline is an
// adxl::AdxlEngine in the same process connected to the prompt's listen address, doing
// TransferSync (READ) of the descriptors PullKvBlocks is asked for: for each tensor, each
// block's bytes at its remote and local addresses.
//
// Two block orders: "shuffled" (fixed permutations for the remote and the local blocks, so
// no two rows are consecutive on both sides and the face cannot merge them) and
// "consecutive" (block i into block i: the face merges each tensor into one descriptor, the
// baseline still sends one per block). Each case is verified once (every byte of the local
// cache), then the face and the baseline alternate for ROUNDS rounds (the order swapping each
// round), each round a duration or a number of calls; printed: medians over the rounds of
// GB/s, time per call and the decoder process's CPU time (getrusage) per round.
//
// Every wait is bounded: the prompt's answers (poll on a pipe), the link, the transfers, the
// whole run (alarm); the prompt is killed and reaped on every way out of the decoder, and it
// dies with the decoder (PR_SET_PDEATHSIG, and the end of its pipe).
//
// usage: llm_datadist_pull [--blocks N] [--block-bytes B] [--rounds R]
//                          [--duration SECONDS | --calls K] [--order shuffled|consecutive|both]
//                          [--transport auto|shm|tcp] [--port P]

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"
#include "llm_datadist/llm_datadist.h"
#include "outside.h"

namespace {

constexpr uint32_t kTensors = 2U;  // K and V
constexpr uint64_t kPromptCluster = 1U;
constexpr uint64_t kDecoderCluster = 2U;
constexpr int32_t kTransferTimeoutMs = 20000;
constexpr int32_t kLinkTimeoutMs = 10000;
constexpr int kAnswerTimeoutMs = 60000;  // the prompt's "ready" line

using outside::die;
using outside::recent_error;

void on_alarm(int) {
  static const char msg[] = "llm_datadist_pull: the run took longer than its limit: stopped\n";
  ssize_t ignored = write(2, msg, sizeof(msg) - 1);
  (void)ignored;
  if (outside::child > 0) {
    kill(outside::child, SIGKILL);
    waitpid(outside::child, nullptr, 0);  // async-signal-safe
  }
  _exit(3);
}

// The 64-bit word `w` of tensor `t` of the prompt's cache: different in every block.
uint64_t pattern(uint32_t t, uint64_t w) {
  uint64_t z = (static_cast<uint64_t>(t + 1U) << 48) ^ (w * 0x9E3779B97F4A7C15ULL) ^ 0x5DEECE66DULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A fixed permutation of 0..n-1 (Fisher-Yates over splitmix64, the same on every machine).
std::vector<uint64_t> permutation(uint64_t n, uint64_t seed) {
  std::vector<uint64_t> p(n);
  for (uint64_t i = 0; i < n; ++i) p[i] = i;
  uint64_t s = seed;
  for (uint64_t i = n; i > 1; --i) {
    s += 0x9E3779B97F4A7C15ULL;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::swap(p[i - 1], p[z % i]);
  }
  return p;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0);
}


llm_datadist::CacheDesc cache_desc(uint64_t blocks, uint64_t block_bytes) {
  llm_datadist::CacheDesc d;
  d.placement = llm_datadist::CachePlacement::kDevice;
  d.num_tensors = kTensors;
  d.data_type = llm_datadist::DT_FLOAT16;
  d.shape = {static_cast<int64_t>(blocks), static_cast<int64_t>(block_bytes / 2U)};
  return d;
}

std::map<ge::AscendString, ge::AscendString> datadist_options(const std::string &listen) {
  std::map<ge::AscendString, ge::AscendString> o;
  o[llm_datadist::OPTION_DEVICE_ID] = "0";
  o[llm_datadist::OPTION_SYNC_CACHE_WAIT_TIME] = std::to_string(kTransferTimeoutMs).c_str();
  if (!listen.empty()) o[llm_datadist::OPTION_LISTEN_IP_INFO] = listen.c_str();
  return o;
}

// Device tensors of `bytes` each (filled with the prompt's pattern when `fill`).
std::vector<uint64_t> device_tensors(uint64_t bytes, bool fill) {
  std::vector<uint64_t> addrs;
  std::vector<uint64_t> host(fill ? bytes / 8U : 0U);
  for (uint32_t t = 0; t < kTensors; ++t) {
    void *p = nullptr;
    if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) die("aclrtMalloc: %s", recent_error());
    if (fill) {
      for (uint64_t w = 0; w < host.size(); ++w) host[w] = pattern(t, w);
      if (aclrtMemcpy(p, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        die("aclrtMemcpy: %s", recent_error());
      }
    }
    addrs.push_back(reinterpret_cast<uint64_t>(p));
  }
  return addrs;
}

void write_all(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader is gone: it will see the pipe end
    off += static_cast<size_t>(n);
  }
}

// One line from `fd` within `timeout_ms`, or false (time-out, end of file).
bool read_line(int fd, int timeout_ms, std::string &line) {
  line.clear();
  const double deadline = now_s() + timeout_ms / 1000.0;
  for (;;) {
    const int left = static_cast<int>((deadline - now_s()) * 1000.0);
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char c = 0;
    ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    line.push_back(c);
  }
}

// --- The prompt: fill, listen, register, report, serve until told to stop. -----------------

int prompt_main(uint16_t port, int up, int down, uint64_t blocks, uint64_t block_bytes, int limit_s) {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
    write_all(up, std::string("error aclInit/aclrtSetDevice: ") + recent_error() + "\n");
    return 1;
  }
  const uint64_t tensor_bytes = blocks * block_bytes;
  std::vector<uint64_t> addrs = device_tensors(tensor_bytes, true);
  int rc = 0;
  {
    llm_datadist::LlmDataDist dd(kPromptCluster, llm_datadist::LlmRole::kPrompt);
    llm_datadist::Status s = dd.Initialize(datadist_options("127.0.0.1:" + std::to_string(port)));
    int64_t cache_id = -1;
    if (s == llm_datadist::LLM_SUCCESS) s = dd.RegisterKvCache(cache_desc(blocks, block_bytes), addrs, {}, cache_id);
    if (s != llm_datadist::LLM_SUCCESS) {
      write_all(up, "error Initialize/RegisterKvCache: " + std::to_string(s) + " (" + recent_error() + ")\n");
      rc = 1;
    } else {
      char line[128];
      std::snprintf(line, sizeof(line), "ready %lld %#llx %#llx\n", static_cast<long long>(cache_id),
                    static_cast<unsigned long long>(addrs[0]), static_cast<unsigned long long>(addrs[1]));
      write_all(up, line);
      // Serve until the decoder says stop or goes away (end of the pipe), at most limit_s.
      std::string cmd;
      if (!read_line(down, limit_s * 1000, cmd) || cmd != "stop") rc = 1;
      dd.UnregisterKvCache(cache_id);
      dd.Finalize();
    }
  }
  for (uint64_t a : addrs) aclrtFree(reinterpret_cast<void *>(a));
  aclrtResetDevice(0);
  aclFinalize();
  return rc;
}

// --- The decoder: the measuring side. ------------------------------------------------------

struct Args {
  uint64_t blocks = 1024U;
  uint64_t block_bytes = 16U * 1024U;
  int rounds = 5;
  double duration = 0.5;  // seconds per round and side, unless calls > 0
  long calls = 0;
  std::string order = "both";
  std::string transport;  // empty: leave ASCENDLESS_TRANSPORT as it is
  int port = 0;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "llm_datadist_pull: %s\n"
               "usage: llm_datadist_pull [--blocks N] [--block-bytes B] [--rounds R] [--duration SECONDS | --calls K]\n"
               "                         [--order shuffled|consecutive|both] [--transport auto|shm|tcp] [--port P]\n",
               why);
  std::exit(2);
}

Args parse(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) usage(("no value after " + k).c_str());
    const char *v = argv[++i];
    char *end = nullptr;
    errno = 0;
    if (k == "--blocks") {
      a.blocks = std::strtoull(v, &end, 10);
    } else if (k == "--block-bytes") {
      a.block_bytes = std::strtoull(v, &end, 10);
    } else if (k == "--rounds") {
      a.rounds = static_cast<int>(std::strtol(v, &end, 10));
    } else if (k == "--duration") {
      a.duration = std::strtod(v, &end);
    } else if (k == "--calls") {
      a.calls = std::strtol(v, &end, 10);
    } else if (k == "--port") {
      a.port = static_cast<int>(std::strtol(v, &end, 10));
    } else if (k == "--order") {
      a.order = v;
      end = const_cast<char *>(v) + std::strlen(v);
    } else if (k == "--transport") {
      a.transport = v;
      end = const_cast<char *>(v) + std::strlen(v);
    } else {
      usage(("unknown option " + k).c_str());
    }
    if (errno != 0 || end == v || *end != '\0') usage(("bad value for " + k).c_str());
  }
  if (a.blocks == 0 || a.blocks > (1U << 20)) usage("--blocks: 1 to 1048576");
  if (a.block_bytes < 8 || a.block_bytes % 8 != 0 || a.block_bytes > (64U << 20)) {
    usage("--block-bytes: a multiple of 8, at most 64 MiB");
  }
  if (a.blocks * a.block_bytes > (1ULL << 30)) usage("a tensor of at most 1 GiB");
  if (a.rounds < 1 || a.rounds > 1000) usage("--rounds: 1 to 1000");
  if (a.calls < 0 || (a.calls == 0 && !(a.duration > 0.0 && a.duration <= 60.0))) {
    usage("--duration: (0, 60] seconds, or --calls K > 0");
  }
  if (a.order != "shuffled" && a.order != "consecutive" && a.order != "both") usage("--order");
  if (!a.transport.empty() && a.transport != "auto" && a.transport != "shm" && a.transport != "tcp") {
    usage("--transport: auto, shm or tcp");
  }
  if (a.port < 0 || a.port > 65535) usage("--port: 1 to 65535");
  return a;
}

// A port on 127.0.0.1 that nothing listens on, below the kernel's ephemeral range (where
// outgoing connections do not take it between this choice and the prompt's bind).
int free_port() {
  int lo = 32768;
  if (FILE *f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d", &lo) != 1) lo = 32768;
    std::fclose(f);
  }
  const int base = 20000;
  const int span = lo - base >= 1000 ? lo - base : 30000;
  srand(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(time(nullptr)));
  for (int tries = 0; tries < 100; ++tries) {
    const int p = base + rand() % span;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(p));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
    close(fd);
    if (ok) return p;
  }
  die("no free port on 127.0.0.1");
}

struct Prompt {
  pid_t pid = -1;
  int up = -1;    // its lines
  int down = -1;  // "stop"
  int64_t cache_id = -1;
  uint64_t addrs[kTensors] = {};
};

Prompt start_prompt(const Args &a, int port, int limit_s) {
  int up[2], down[2];
  if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0) die("pipe: %s", std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    // The two ends the prompt keeps, without close-on-exec.
    int u = dup(up[1]);
    int d = dup(down[0]);
    std::string args[] = {std::to_string(port),         std::to_string(u),
                          std::to_string(d),            std::to_string(a.blocks),
                          std::to_string(a.block_bytes), std::to_string(limit_s)};
    execl("/proc/self/exe", "llm_datadist_pull", "prompt", args[0].c_str(), args[1].c_str(), args[2].c_str(),
          args[3].c_str(), args[4].c_str(), args[5].c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  outside::child = pid;
  close(up[1]);
  close(down[0]);
  Prompt p;
  p.pid = pid;
  p.up = up[0];
  p.down = down[1];
  std::string line;
  if (!read_line(p.up, kAnswerTimeoutMs, line)) die("the prompt process did not report ready in %d ms", kAnswerTimeoutMs);
  unsigned long long a0 = 0, a1 = 0;
  long long id = 0;
  if (std::sscanf(line.c_str(), "ready %lld %llx %llx", &id, &a0, &a1) != 3) die("the prompt: %s", line.c_str());
  p.cache_id = id;
  p.addrs[0] = a0;
  p.addrs[1] = a1;
  return p;
}

// Tells the prompt to stop and reaps it (within 10 s, else kills it).
bool stop_prompt(Prompt &p) {
  write_all(p.down, "stop\n");
  close(p.down);
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 1000; ++i) {
    pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) {
      exited = true;
      break;
    }
    usleep(10000);
  }
  if (!exited) {
    kill(p.pid, SIGKILL);
    waitpid(p.pid, &status, 0);
  }
  outside::child = 0;
  close(p.up);
  return exited && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// One side's rounds: GB/s, seconds per call and decoder CPU seconds per round.
struct Side {
  std::vector<double> gbps, call_s, cpu_round_s, cpu_per_gb;
  long calls = 0;
  void add(double wall, double cpu, long n, double bytes_per_call) {
    gbps.push_back(bytes_per_call * static_cast<double>(n) / wall / 1e9);
    call_s.push_back(wall / static_cast<double>(n));
    cpu_round_s.push_back(cpu);
    cpu_per_gb.push_back(cpu / (bytes_per_call * static_cast<double>(n) / 1e9));
    calls += n;
  }
};

// Descriptors after the face's merging rule: consecutive rows on both sides are one.
size_t merged_count(const std::vector<uint64_t> &src, const std::vector<uint64_t> &dst) {
  size_t n = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    if (i == 0 || src[i] != src[i - 1] + 1 || dst[i] != dst[i - 1] + 1) ++n;
  }
  return n * kTensors;
}

struct Decoder {
  const Args &args;
  const Prompt &prompt;
  uint64_t tensor_bytes;
  std::vector<uint64_t> local;
  llm_datadist::LlmDataDist dd{kDecoderCluster, llm_datadist::LlmRole::kDecoder};
  llm_datadist::Cache dst_cache;
  llm_datadist::CacheIndex src_index{kPromptCluster, 0, 0U, {}};
  adxl::AdxlEngine engine;
  std::vector<adxl::MemHandle> handles;
  ge::AscendString remote;
  std::vector<uint64_t> host;  // for checking

  Decoder(const Args &a, const Prompt &p, int port)
      : args(a), prompt(p), tensor_bytes(a.blocks * a.block_bytes), remote(("127.0.0.1:" + std::to_string(port)).c_str()) {
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) die("aclInit: %s", recent_error());
    local = device_tensors(tensor_bytes, false);
    host.resize(tensor_bytes / 8U);

    // The face: a client instance (no listen address) that links to the prompt and pulls.
    llm_datadist::Status s = dd.Initialize(datadist_options(""));
    if (s != llm_datadist::LLM_SUCCESS) die("LlmDataDist::Initialize: %#x (%s)", s, recent_error());
    int64_t id = -1;
    s = dd.RegisterKvCache(cache_desc(a.blocks, a.block_bytes), local, {}, id);
    if (s != llm_datadist::LLM_SUCCESS) die("RegisterKvCache: %#x (%s)", s, recent_error());
    dst_cache.cache_id = id;
    dst_cache.cache_desc = cache_desc(a.blocks, a.block_bytes);
    src_index.cache_id = p.cache_id;
    llm_datadist::ClusterInfo c;
    c.remote_cluster_id = kPromptCluster;
    llm_datadist::IpInfo mine;
    mine.ip = "127.0.0.1";
    c.local_ip_infos.push_back(mine);
    llm_datadist::IpInfo theirs;
    theirs.ip = "127.0.0.1";
    theirs.port = static_cast<uint16_t>(port);
    c.remote_ip_infos.push_back(theirs);
    std::vector<llm_datadist::Status> rets;
    s = dd.LinkLlmClusters({c}, rets, kLinkTimeoutMs);
    if (s != llm_datadist::LLM_SUCCESS) die("LinkLlmClusters: %#x (%s)", s, recent_error());

    // The baseline: an ADXL engine with a loopback name, the same local memory registered,
    // connected to the prompt's listen address.
    std::map<ge::AscendString, ge::AscendString> none;
    adxl::Status e = engine.Initialize("127.0.0.1", none);
    if (e != adxl::SUCCESS) die("AdxlEngine::Initialize: %u (%s)", e, recent_error());
    for (uint64_t addr : local) {
      adxl::MemDesc m{static_cast<uintptr_t>(addr), static_cast<size_t>(tensor_bytes)};
      adxl::MemHandle h = nullptr;
      e = engine.RegisterMem(m, adxl::MEM_DEVICE, h);
      if (e != adxl::SUCCESS) die("AdxlEngine::RegisterMem: %u (%s)", e, recent_error());
      handles.push_back(h);
    }
    e = engine.Connect(remote, kLinkTimeoutMs);
    if (e != adxl::SUCCESS) die("AdxlEngine::Connect: %u (%s)", e, recent_error());
  }

  ~Decoder() {
    engine.Disconnect(remote, kLinkTimeoutMs);
    for (adxl::MemHandle h : handles) engine.DeregisterMem(h);
    engine.Finalize();
    dd.Finalize();
    for (uint64_t a : local) aclrtFree(reinterpret_cast<void *>(a));
    aclrtResetDevice(0);
    aclFinalize();
  }

  // What PullKvBlocks of (src, dst) asks for, one descriptor per block of each tensor.
  std::vector<adxl::TransferOpDesc> descriptors(const std::vector<uint64_t> &src, const std::vector<uint64_t> &dst) {
    std::vector<adxl::TransferOpDesc> d;
    d.reserve(src.size() * kTensors);
    for (uint32_t t = 0; t < kTensors; ++t) {
      for (size_t i = 0; i < src.size(); ++i) {
        d.push_back(adxl::TransferOpDesc{static_cast<uintptr_t>(local[t] + dst[i] * args.block_bytes),
                                         static_cast<uintptr_t>(prompt.addrs[t] + src[i] * args.block_bytes),
                                         static_cast<size_t>(args.block_bytes)});
      }
    }
    return d;
  }

  void face(const std::vector<uint64_t> &src, const std::vector<uint64_t> &dst) {
    llm_datadist::Status s = dd.PullKvBlocks(src_index, dst_cache, src, dst);
    if (s != llm_datadist::LLM_SUCCESS) die("PullKvBlocks: %#x (%s)", s, recent_error());
  }

  void baseline(const std::vector<adxl::TransferOpDesc> &d) {
    adxl::Status s = engine.TransferSync(remote, adxl::READ, d, kTransferTimeoutMs);
    if (s != adxl::SUCCESS) die("TransferSync: %u (%s)", s, recent_error());
  }

  void clear() {
    for (uint64_t a : local) {
      if (aclrtMemset(reinterpret_cast<void *>(a), tensor_bytes, 0, tensor_bytes) != ACL_SUCCESS) {
        die("aclrtMemset: %s", recent_error());
      }
    }
  }

  // Every byte of the local cache: block dst[i] holds the prompt's block src[i].
  void check(const char *what, const std::vector<uint64_t> &src, const std::vector<uint64_t> &dst) {
    const uint64_t words = args.block_bytes / 8U;
    std::vector<uint64_t> from(args.blocks, UINT64_MAX);
    for (size_t i = 0; i < dst.size(); ++i) from[dst[i]] = src[i];
    for (uint32_t t = 0; t < kTensors; ++t) {
      if (aclrtMemcpy(host.data(), tensor_bytes, reinterpret_cast<void *>(local[t]), tensor_bytes,
                      ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        die("aclrtMemcpy: %s", recent_error());
      }
      for (uint64_t b = 0; b < args.blocks; ++b) {
        for (uint64_t w = 0; w < words; ++w) {
          const uint64_t want = from[b] == UINT64_MAX ? 0U : pattern(t, from[b] * words + w);
          if (host[b * words + w] != want) {
            die("%s: tensor %u, block %llu, byte %llu differs (%#llx, not %#llx)", what, t,
                static_cast<unsigned long long>(b), static_cast<unsigned long long>(w * 8U),
                static_cast<unsigned long long>(host[b * words + w]), static_cast<unsigned long long>(want));
          }
        }
      }
    }
  }

  // One round of one side: calls for the duration (or the count), timed.
  template <class Call>
  void round(Side &side, Call call) {
    const double bytes = static_cast<double>(tensor_bytes) * kTensors;
    const double c0 = cpu_s();
    const double t0 = now_s();
    long n = 0;
    double t = t0;
    do {
      call();
      ++n;
      t = now_s();
    } while (args.calls > 0 ? n < args.calls : t - t0 < args.duration);
    side.add(t - t0, cpu_s() - c0, n, bytes);
  }

  void run_case(const char *name, const std::vector<uint64_t> &src, const std::vector<uint64_t> &dst) {
    const std::vector<adxl::TransferOpDesc> d = descriptors(src, dst);
    // Verified once each (the first call of each path also opens its same-host channel).
    clear();
    face(src, dst);
    check("PullKvBlocks", src, dst);
    clear();
    baseline(d);
    check("TransferSync", src, dst);

    Side f, b;
    for (int r = 0; r < args.rounds; ++r) {
      if (r % 2 == 0) {
        round(f, [&] { face(src, dst); });
        round(b, [&] { baseline(d); });
      } else {
        round(b, [&] { baseline(d); });
        round(f, [&] { face(src, dst); });
      }
    }
    std::printf("%s blocks: PullKvBlocks sends %zu descriptors, the baseline %zu; bytes verified for both\n", name,
                merged_count(src, dst), d.size());
    print("PullKvBlocks", f);
    print("TransferSync (READ)", b);
    std::vector<double> ratios;
    for (size_t i = 0; i < f.gbps.size(); ++i) ratios.push_back(f.gbps[i] / b.gbps[i]);
    std::sort(ratios.begin(), ratios.end());
    std::printf("  %-22s %7.2fx                 (rounds %.2fx-%.2fx)\n", "ratio face/baseline",
                median(f.gbps) / median(b.gbps), ratios.front(), ratios.back());
    std::fflush(stdout);
  }

  static void print(const char *what, const Side &s) {
    std::string rounds;
    for (double g : s.gbps) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), rounds.empty() ? "%.2f" : " %.2f", g);
      rounds += buf;
    }
    std::printf("  %-22s %7.2f GB/s %9.1f us/call   cpu %7.2f ms/round %6.3f s/GB   %5ld calls   rounds %s\n", what,
                median(s.gbps), median(s.call_s) * 1e6, median(s.cpu_round_s) * 1e3, median(s.cpu_per_gb), s.calls,
                rounds.c_str());
  }
};

int decoder_main(const Args &a) {
  if (!a.transport.empty()) setenv("ASCENDLESS_TRANSPORT", a.transport.c_str(), 1);  // both processes
  const char *transport = std::getenv("ASCENDLESS_TRANSPORT");
  const int port = a.port > 0 ? a.port : free_port();
  // A bound on the whole run: setup, two cases of rounds on both sides, checks.
  const double per_round = a.calls > 0 ? 2.0 : a.duration;
  const int limit_s = 120 + static_cast<int>(2 * 2 * a.rounds * per_round * 3.0);
  signal(SIGALRM, on_alarm);
  alarm(static_cast<unsigned>(limit_s));

  Prompt p = start_prompt(a, port, limit_s);
  char round_text[64];
  if (a.calls > 0) {
    std::snprintf(round_text, sizeof(round_text), "%ld calls", a.calls);
  } else {
    std::snprintf(round_text, sizeof(round_text), "%.2f s", a.duration);
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = 0;
  std::printf("llm_datadist_pull: %llu blocks x %llu B x %u tensors (%.1f MiB a call), two processes, "
              "ASCENDLESS_TRANSPORT=%s; %d rounds of %s per side, alternating; %ld CPUs, load %.2f %.2f %.2f\n",
              static_cast<unsigned long long>(a.blocks), static_cast<unsigned long long>(a.block_bytes), kTensors,
              static_cast<double>(a.blocks * a.block_bytes * kTensors) / (1 << 20),
              transport != nullptr && *transport != '\0' ? transport : "(unset: auto)", a.rounds,
              round_text,
              sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
  {
    Decoder dec(a, p, port);
    std::vector<uint64_t> identity(a.blocks);
    for (uint64_t i = 0; i < a.blocks; ++i) identity[i] = i;
    if (a.order != "consecutive") {
      std::vector<uint64_t> src = permutation(a.blocks, 0x51ED);
      std::vector<uint64_t> dst = permutation(a.blocks, 0xDEC0DE);
      dec.run_case("shuffled", src, dst);
    }
    if (a.order != "shuffled") dec.run_case("consecutive", identity, identity);
  }
  if (!stop_prompt(p)) die("the prompt process did not end cleanly");
  alarm(0);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  outside::program = "llm_datadist_pull";
  if (argc == 8 && std::strcmp(argv[1], "prompt") == 0) {
    return prompt_main(static_cast<uint16_t>(std::atoi(argv[2])), std::atoi(argv[3]), std::atoi(argv[4]),
                       std::strtoull(argv[5], nullptr, 10), std::strtoull(argv[6], nullptr, 10), std::atoi(argv[7]));
  }
  return decoder_main(parse(argc, argv));
}
