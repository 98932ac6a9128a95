// engine_outside: the ADXL engine measured from outside, through the installed C++ API
// (adxl/adxl_engine.h), against raw TCP measured in the same run (issue 37's engine targets).
// Written against the installed headers and libraries only, as a user of the vendor's API would.
//
// Transfer: this program (the initiator) starts itself again from /proc/self/exe as the target
// (`target`), which allocates 4 KiB with AdxlEngine::MallocMem, registers it on an engine
// listening on a loopback port, and runs a raw TCP echo of 64 bytes on another. The initiator
// registers 4 KiB of its own, connects, and times TransferSync READs of 8 bytes; its baseline is
// a 64-byte round trip over a loopback TCP socket (TCP_NODELAY) to the target's echo. ROUNDS
// rounds of CALLS calls each, engine and raw alternating which goes first; per round p50 and p99
// of each and their ratios (target: TransferSync p50 <= 0.01x the raw round trip).
//
// Setup: in this process, a serving engine Initialize on a free loopback port, a client engine
// Initialize, Connect, Disconnect, client Finalize, server Finalize; its baseline a raw TCP
// listen, connect, accept and close in one thread (the rounds of `ascendless-bench setup`).
// ROUNDS rounds of SETUPS of each, alternating; per round p50 and p99 and their ratios (target:
// p50 <= 5x). Each round leaves sockets in TIME_WAIT for a minute: keep SETUPS x ROUNDS small.
//
// Every wait is bounded: the engine calls (time-outs), the target's lines (poll), the echo
// (poll), the whole run (alarm); the target dies with the initiator (PR_SET_PDEATHSIG, and the
// end of its pipe) and is killed and reaped on every way out.
//
// usage: engine_outside [--rounds R] [--calls N] [--setups S] [--transport auto|shm|tcp]

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"
#include "outside.h"

namespace {

constexpr int32_t kTimeoutMs = 5000;
constexpr int kLineTimeoutMs = 30000;
constexpr size_t kRawBytes = 64;
constexpr size_t kTransferBytes = 8;
constexpr size_t kRegion = 4096;

using outside::die;
using outside::recent_error;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A loopback TCP socket bound to port 0 (a free port), listening; its port in `port`.
int listen_loopback(uint16_t &port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket: %s", std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
    die("bind/listen: %s", std::strerror(errno));
  port = ntohs(a.sin_port);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket: %s", std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) die("connect: %s", std::strerror(errno));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Reads exactly n bytes, waiting at most kLineTimeoutMs for each piece; false at end of stream.
bool read_full(int fd, void *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, kLineTimeoutMs);
    if (r == 0) die("read: nothing for %d ms", kLineTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    ssize_t k = read(fd, static_cast<char *>(p) + got, n - got);
    if (k == 0) return false;
    if (k < 0) {
      if (errno == EINTR) continue;
      die("read: %s", std::strerror(errno));
    }
    got += static_cast<size_t>(k);
  }
  return true;
}

void write_full(int fd, const void *p, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t k = write(fd, static_cast<const char *>(p) + put, n - put);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) die("write: %s", std::strerror(errno));
    put += static_cast<size_t>(k);
  }
}

// AscendCL initialised and `device` current: device memory (MallocMem) needs one.
void use_device(int32_t device) {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(device) != ACL_SUCCESS)
    die("aclInit/aclrtSetDevice: %s", recent_error());
}

std::map<ge::AscendString, ge::AscendString> engine_options(const std::string &transport) {
  std::map<ge::AscendString, ge::AscendString> o;
  o[ge::AscendString("adxl.Transport")] = ge::AscendString(transport.c_str());
  return o;
}

// ---- the target: an engine with 4 KiB registered, and a 64-byte TCP echo ----

[[noreturn]] void target_main(const std::string &transport) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) std::_Exit(1);
  uint16_t echo_port = 0;
  int echo = listen_loopback(echo_port);
  use_device(1);
  void *mem = nullptr;
  if (adxl::AdxlEngine::MallocMem(adxl::MEM_DEVICE, kRegion, &mem) != adxl::SUCCESS)
    die("MallocMem: %s", recent_error());
  std::memset(mem, 0x5a, kRegion);
  adxl::AdxlEngine engine;
  uint16_t port = 0;
  adxl::Status s = adxl::FAILED;
  for (int attempt = 0; attempt < 5 && s != adxl::SUCCESS; attempt++) {
    close(listen_loopback(port));  // a port free a moment ago
    s = engine.Initialize(ge::AscendString(("127.0.0.1:" + std::to_string(port)).c_str()),
                          engine_options(transport));
  }
  if (s != adxl::SUCCESS) die("target Initialize: %u (%s)", s, recent_error());
  adxl::MemHandle h = nullptr;
  if (engine.RegisterMem(adxl::MemDesc{reinterpret_cast<uintptr_t>(mem), kRegion}, adxl::MEM_DEVICE, h) !=
      adxl::SUCCESS)
    die("target RegisterMem: %s", recent_error());
  std::printf("ready %u %u %llu\n", static_cast<unsigned>(port), static_cast<unsigned>(echo_port),
              static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(mem)));
  std::fflush(stdout);
  // The echo serves one connection in a thread until it closes; stdin closing ends the target.
  std::thread echo_thread([echo] {
    pollfd pfd{echo, POLLIN, 0};
    if (poll(&pfd, 1, kLineTimeoutMs) <= 0) return;
    int c = accept4(echo, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buf[kRawBytes];
    while (read_full(c, buf, sizeof buf)) write_full(c, buf, sizeof buf);
    close(c);
  });
  char c;
  while (read(0, &c, 1) > 0) {
  }
  shutdown(echo, SHUT_RDWR);
  echo_thread.join();
  engine.DeregisterMem(h);
  engine.Finalize();
  adxl::AdxlEngine::FreeMem(mem);
  aclrtResetDevice(1);
  aclFinalize();
  std::_Exit(0);
}

// ---- the initiator ----

struct Figures {
  double p50, p99;
};

Figures summarise(std::vector<double> &t) {
  size_t warm = t.size() / 10;
  std::vector<double> v(t.begin() + static_cast<long>(warm), t.end());
  std::sort(v.begin(), v.end());
  auto at = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(static_cast<double>(v.size()) * p))]; };
  return Figures{at(0.5), at(0.99)};
}

template <typename F>
Figures timed(int n, F call) {
  std::vector<double> t(static_cast<size_t>(n));
  for (auto &x : t) {
    double t0 = now_us();
    call();
    x = now_us() - t0;
  }
  return summarise(t);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Pair {
  std::vector<Figures> engine, raw;
};

void report(const char *what, const char *engine_name, const char *raw_name, const Pair &p, const char *target) {
  std::printf("%s\n", what);
  std::printf("round  %-22s p50/p99 us   %-22s p50/p99 us   ratio p50   p99\n", engine_name, raw_name);
  std::vector<double> r50, r99, e50, e99, b50, b99;
  for (size_t r = 0; r < p.engine.size(); r++) {
    const Figures &e = p.engine[r], &b = p.raw[r];
    r50.push_back(e.p50 / b.p50);
    r99.push_back(e.p99 / b.p99);
    e50.push_back(e.p50);
    e99.push_back(e.p99);
    b50.push_back(b.p50);
    b99.push_back(b.p99);
    std::printf("%5zu  %10.2f %10.2f    %10.2f %10.2f    %10.4fx %7.3fx\n", r, e.p50, e.p99, b.p50, b.p99, r50.back(),
                r99.back());
  }
  std::printf("  medians: %s p50 %.2f us p99 %.2f us; %s p50 %.2f us p99 %.2f us\n", engine_name, median(e50),
              median(e99), raw_name, median(b50), median(b99));
  std::printf("  ratio p50 %.4fx (rounds %.4fx to %.4fx), p99 %.3fx   %s\n", median(r50),
              *std::min_element(r50.begin(), r50.end()), *std::max_element(r50.begin(), r50.end()), median(r99),
              target);
}

Pair transfer_rounds(int rounds, int calls, const std::string &transport) {
  int up[2], down[2];
  if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0) die("pipe: %s", std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", std::strerror(errno));
  if (pid == 0) {
    dup2(down[0], 0);
    dup2(up[1], 1);
    execl("/proc/self/exe", "engine_outside", "target", transport.c_str(), static_cast<char *>(nullptr));
    die("exec: %s", std::strerror(errno));
  }
  outside::child = pid;
  close(up[1]);
  close(down[0]);
  std::string line;
  char c;
  while (line.size() < 200) {
    if (!read_full(up[0], &c, 1)) die("the target ended before it was ready");
    if (c == '\n') break;
    line += c;
  }
  unsigned port = 0, echo_port = 0;
  unsigned long long remote_addr = 0;
  if (std::sscanf(line.c_str(), "ready %u %u %llu", &port, &echo_port, &remote_addr) != 3)
    die("the target said '%s'", line.c_str());

  use_device(0);
  void *local = nullptr;
  if (adxl::AdxlEngine::MallocMem(adxl::MEM_DEVICE, kRegion, &local) != adxl::SUCCESS)
    die("MallocMem: %s", recent_error());
  adxl::AdxlEngine engine;
  if (engine.Initialize(ge::AscendString("127.0.0.1"), engine_options(transport)) != adxl::SUCCESS)
    die("Initialize: %s", recent_error());
  adxl::MemHandle h = nullptr;
  if (engine.RegisterMem(adxl::MemDesc{reinterpret_cast<uintptr_t>(local), kRegion}, adxl::MEM_DEVICE, h) !=
      adxl::SUCCESS)
    die("RegisterMem: %s", recent_error());
  const ge::AscendString remote(("127.0.0.1:" + std::to_string(port)).c_str());
  if (engine.Connect(remote, kTimeoutMs) != adxl::SUCCESS) die("Connect: %s", recent_error());
  const std::vector<adxl::TransferOpDesc> d{
      adxl::TransferOpDesc{reinterpret_cast<uintptr_t>(local), static_cast<uintptr_t>(remote_addr), kTransferBytes}};
  auto transfer = [&] {
    if (engine.TransferSync(remote, adxl::READ, d, kTimeoutMs) != adxl::SUCCESS)
      die("TransferSync: %s", recent_error());
  };
  transfer();
  if (static_cast<unsigned char *>(local)[0] != 0x5a) die("TransferSync brought the wrong bytes");
  int sock = connect_loopback(static_cast<uint16_t>(echo_port));
  char buf[kRawBytes] = {1};
  auto raw = [&] {
    write_full(sock, buf, sizeof buf);
    if (!read_full(sock, buf, sizeof buf)) die("the echo closed");
  };
  Pair p;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      if ((r + k) % 2 == 0)
        p.engine.push_back(timed(calls, transfer));
      else
        p.raw.push_back(timed(calls, raw));
    }
  }
  close(sock);
  if (engine.Disconnect(remote, kTimeoutMs) != adxl::SUCCESS) die("Disconnect: %s", recent_error());
  engine.DeregisterMem(h);
  engine.Finalize();
  adxl::AdxlEngine::FreeMem(local);
  close(down[1]);  // the target's stdin ends: it finalizes and exits
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the target failed");
  outside::child = 0;
  close(up[0]);
  return p;
}

void engine_setup_round(const std::string &transport) {
  const auto options = engine_options(transport);
  adxl::AdxlEngine server, client;
  uint16_t port = 0;
  close(listen_loopback(port));
  const ge::AscendString name(("127.0.0.1:" + std::to_string(port)).c_str());
  if (server.Initialize(name, options) != adxl::SUCCESS) die("server Initialize: %s", recent_error());
  if (client.Initialize(ge::AscendString("127.0.0.1"), options) != adxl::SUCCESS)
    die("client Initialize: %s", recent_error());
  if (client.Connect(name, kTimeoutMs) != adxl::SUCCESS) die("Connect: %s", recent_error());
  if (client.Disconnect(name, kTimeoutMs) != adxl::SUCCESS) die("Disconnect: %s", recent_error());
  client.Finalize();
  server.Finalize();
}

void raw_setup_round() {
  uint16_t port = 0;
  int l = listen_loopback(port);
  int a = connect_loopback(port);
  int b = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  if (b < 0) die("accept: %s", std::strerror(errno));
  close(a);
  close(b);
  close(l);
}

Pair setup_rounds(int rounds, int setups, const std::string &transport) {
  Pair p;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      if ((r + k) % 2 == 0)
        p.engine.push_back(timed(setups, [&] { engine_setup_round(transport); }));
      else
        p.raw.push_back(timed(setups, raw_setup_round));
    }
  }
  return p;
}

}  // namespace

int main(int argc, char **argv) {
  outside::program = "engine_outside";
  if (argc == 3 && std::strcmp(argv[1], "target") == 0) target_main(argv[2]);
  int rounds = 5, calls = 5000, setups = 100;
  std::string transport = "auto";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--calls" && i + 1 < argc) {
      calls = std::atoi(argv[++i]);
    } else if (a == "--setups" && i + 1 < argc) {
      setups = std::atoi(argv[++i]);
    } else if (a == "--transport" && i + 1 < argc) {
      transport = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--rounds R] [--calls N] [--setups S] [--transport auto|shm|tcp]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1 || rounds > 99 || calls < 20 || setups < 10 || setups > 1000) {
    std::fprintf(stderr, "rounds: 1..99, calls: at least 20, setups: 10..1000\n");
    return 2;
  }
  alarm(600);
  signal(SIGPIPE, SIG_IGN);
  const Pair t = transfer_rounds(rounds, calls, transport);
  char what[200];
  std::snprintf(what, sizeof what,
                "8-byte TransferSync READ between two processes (transport %s) against a 64-byte raw TCP round trip, "
                "%d rounds of %d calls (first tenth dropped):",
                transport.c_str(), rounds, calls);
  report(what, "TransferSync 8 B", "raw TCP 64 B", t, "(target: p50 <= 0.01x)");
  const Pair s = setup_rounds(rounds, setups, transport);
  std::snprintf(what, sizeof what,
                "engine Initialize x2 + Connect + Disconnect + Finalize x2 (transport %s) against a raw TCP listen, "
                "connect, accept, close; %d rounds of %d:",
                transport.c_str(), rounds, setups);
  report(what, "engine setup", "raw TCP connect", s, "(target: p50 <= 5x)");
  return 0;
}
