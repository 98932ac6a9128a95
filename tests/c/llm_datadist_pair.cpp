// Two processes use llm_datadist::LlmDataDist as the vendor's C++ samples do
// (hicann/hixl examples/cpp prompt_*/decoder_*): the decoder listens (llm.ListenIpInfo) and
// registers its KV cache; the prompt links to it and pushes and pulls blocks and whole
// batches, with layer ranges; both check every byte. Then the documented errors, a forced
// unlink after the decoder is killed, and a link to a new decoder on the same address.
//
// Built by tests/c_abi.rs with the installed headers' include line and -Wall -Wextra -Werror;
// run as `llm_datadist_pair PORT`; each decoder is this program run again (`decoder ...`), a
// fresh process.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "llm_datadist/llm_datadist.h"

using namespace llm_datadist;

static int failures = 0;
#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
      ++failures;                                                                       \
    }                                                                                   \
  } while (0)
#define CHECK_STATUS(call, want)                                                                        \
  do {                                                                                                  \
    Status got_ = (call);                                                                               \
    if (got_ != (want)) {                                                                               \
      const char *m_ = aclGetRecentErrMsg();                                                            \
      std::fprintf(stderr, "%s:%d: %s = %#x, not %#x (%s)\n", __FILE__, __LINE__, #call, got_, (want), \
                   m_ ? m_ : "no message");                                                             \
      ++failures;                                                                                       \
    }                                                                                                   \
  } while (0)

constexpr uint32_t kTensors = 4U;
constexpr uint64_t kBlocks = 16U;
constexpr uint64_t kBlockBytes = 64U * sizeof(float);
constexpr uint64_t kTensorBytes = kBlocks * kBlockBytes;
constexpr uint64_t kDecoderCluster = 2U;
constexpr uint64_t kPromptCluster = 1U;

// The byte at offset `at` of tensor `t` of the cache of `who` (1 prompt, 2 decoder).
static unsigned char pattern(int who, uint32_t t, uint64_t at) {
  return static_cast<unsigned char>(who * 89 + t * 31 + at * 7 + at / 251);
}

static CacheDesc desc() {
  CacheDesc d;
  d.num_tensors = kTensors;
  d.data_type = DT_FLOAT;
  d.shape = {static_cast<int64_t>(kBlocks), 64};
  return d;
}

// Device tensors filled with `who`'s pattern.
static std::vector<uint64_t> tensors(int who) {
  std::vector<uint64_t> addrs;
  std::vector<unsigned char> host(kTensorBytes);
  for (uint32_t t = 0; t < kTensors; ++t) {
    void *p = nullptr;
    CHECK(aclrtMalloc(&p, kTensorBytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    for (uint64_t i = 0; i < kTensorBytes; ++i) host[i] = pattern(who, t, i);
    CHECK(aclrtMemcpy(p, kTensorBytes, host.data(), kTensorBytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    addrs.push_back(reinterpret_cast<uint64_t>(p));
  }
  return addrs;
}

static std::vector<unsigned char> read_tensor(uint64_t addr) {
  std::vector<unsigned char> host(kTensorBytes);
  CHECK(aclrtMemcpy(host.data(), kTensorBytes, reinterpret_cast<void *>(addr), kTensorBytes,
                    ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  return host;
}

// Whether block `blk` of tensor `t` (`bytes` at `addr`) holds `who`'s block `from_blk`.
static bool block_is(const std::vector<unsigned char> &bytes, uint64_t blk, int who, uint32_t t, uint64_t from_blk) {
  for (uint64_t i = 0; i < kBlockBytes; ++i) {
    if (bytes[blk * kBlockBytes + i] != pattern(who, t, from_blk * kBlockBytes + i)) return false;
  }
  return true;
}

static std::map<AscendString, AscendString> options(const std::string &listen) {
  std::map<AscendString, AscendString> o;
  o[OPTION_DEVICE_ID] = "0";
  o[OPTION_SYNC_CACHE_WAIT_TIME] = "3000";
  if (!listen.empty()) o[OPTION_LISTEN_IP_INFO] = listen.c_str();
  return o;
}

static ClusterInfo decoder_at(uint16_t port) {
  ClusterInfo c;
  c.remote_cluster_id = kDecoderCluster;
  IpInfo local;
  local.ip = "127.0.0.1";
  c.local_ip_infos.push_back(local);
  IpInfo remote;
  remote.ip = "127.0.0.1";
  remote.port = port;
  c.remote_ip_infos.push_back(remote);
  return c;
}

// The decoder: listen, register, say ready, wait for the prompt to finish, check its pushes.
// As the vendor's samples do, it never sets the device itself: Initialize sets llm.DeviceId's
// on this thread, and Finalize takes that count away.
static int decoder(uint16_t port, int ready_fd, int done_fd, bool check) {
  CHECK(aclInit(nullptr) == ACL_SUCCESS);
  LlmDataDist dd(kDecoderCluster, LlmRole::kDecoder);
  CHECK_STATUS(dd.Initialize(options("127.0.0.1:" + std::to_string(port))), LLM_SUCCESS);
  int32_t device = -1;
  CHECK(aclrtGetDevice(&device) == ACL_SUCCESS && device == 0);
  std::vector<uint64_t> addrs = tensors(2);
  int64_t cache_id = -1;
  CHECK_STATUS(dd.RegisterKvCache(desc(), addrs, {}, cache_id), LLM_SUCCESS);
  CHECK(cache_id == 1);
  // The decoder did not link: it cannot transfer to the prompt.
  Cache mine;
  mine.cache_id = cache_id;
  CacheIndex prompt{kPromptCluster, 1, 0U, {}};
  CHECK_STATUS(dd.PushKvBlocks(mine, prompt, {0}, {0}), LLM_NOT_YET_LINK);
  char c = 'r';
  CHECK(write(ready_fd, &c, 1) == 1);
  CHECK(read(done_fd, &c, 1) == 1);
  if (check) {
    // PushKvBlocks of layer 1 (tensors 2, 3): prompt blocks 1, 7 into blocks 10, 11.
    for (uint32_t t = 0; t < kTensors; ++t) {
      std::vector<unsigned char> got = read_tensor(addrs[t]);
      CHECK(t >= 2 ? block_is(got, 10, 1, t, 1) : block_is(got, 10, 2, t, 10));
      CHECK(t >= 2 ? block_is(got, 11, 1, t, 7) : block_is(got, 11, 2, t, 11));
      // PushKvCache of batch 3 into batch 12, every tensor.
      CHECK(block_is(got, 12, 1, t, 3));
      CHECK(block_is(got, 13, 2, t, 13));
    }
  }
  CHECK_STATUS(dd.UnregisterKvCache(cache_id), LLM_SUCCESS);
  for (uint64_t a : addrs) CHECK(aclrtFree(reinterpret_cast<void *>(a)) == ACL_SUCCESS);
  dd.Finalize();
  CHECK(aclrtGetDevice(&device) != ACL_SUCCESS);  // Initialize's count is gone: no device here
  std::printf("decoder: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}

static pid_t start_decoder(uint16_t port, bool check, int &done_w) {
  int ready[2], done[2];
  if (pipe(ready) != 0 || pipe(done) != 0) std::exit(2);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    // A fresh process (the library of this one is already running): this program again.
    close(ready[0]);
    close(done[1]);
    std::string args[] = {std::to_string(port), std::to_string(ready[1]), std::to_string(done[0]), check ? "1" : "0"};
    execl("/proc/self/exe", "llm_datadist_pair", "decoder", args[0].c_str(), args[1].c_str(), args[2].c_str(),
          args[3].c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  close(ready[1]);
  close(done[0]);
  char c = 0;
  if (read(ready[0], &c, 1) != 1) {
    std::fprintf(stderr, "the decoder did not start\n");
    ++failures;
  }
  close(ready[0]);
  done_w = done[1];
  return pid;
}

static int prompt(uint16_t port) {
  CHECK(aclInit(nullptr) == ACL_SUCCESS);
  CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
  {
    LlmDataDist bad(kPromptCluster, LlmRole::kPrompt);
    std::map<AscendString, AscendString> none;
    CHECK_STATUS(bad.Initialize(none), LLM_PARAM_INVALID);
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != nullptr && std::strstr(msg, "llm.DeviceId") != nullptr);
    std::map<AscendString, AscendString> o = options("");
    o[OPTION_TRANSFER_BACKEND] = "hccl";
    CHECK_STATUS(bad.Initialize(o), LLM_PARAM_INVALID);
    LlmDataDist no_role(kPromptCluster, LlmRole::kEnd);
    CHECK_STATUS(no_role.Initialize(options("")), LLM_PARAM_INVALID);
  }
  int done_w = -1;
  pid_t dec = start_decoder(port, true, done_w);

  LlmDataDist dd(kPromptCluster, LlmRole::kPrompt);
  std::vector<Status> rets;
  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets), LLM_FAILED);  // not initialized
  CHECK_STATUS(dd.Initialize(options("")), LLM_SUCCESS);
  CHECK_STATUS(dd.Initialize(options("")), LLM_SUCCESS);  // again: nothing changes
  std::vector<uint64_t> addrs = tensors(1);
  int64_t cache_id = -1;
  CHECK_STATUS(dd.RegisterKvCache(desc(), addrs, {}, cache_id), LLM_SUCCESS);
  CHECK(cache_id == 1);
  CacheDesc wrong = desc();
  CHECK_STATUS(dd.RegisterKvCache(wrong, {addrs[0]}, {}, cache_id), LLM_PARAM_INVALID);
  wrong.data_type = DT_UNDEFINED;
  CHECK_STATUS(dd.RegisterKvCache(wrong, addrs, {}, cache_id), LLM_PARAM_INVALID);
  CHECK(cache_id == 1);

  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets, 0), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.LinkLlmClusters(std::vector<ClusterInfo>(17, decoder_at(port)), rets),
               LLM_CLUSTER_NUM_EXCEED_LIMIT);
  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets, 5000), LLM_SUCCESS);
  CHECK(rets.size() == 1U && rets[0] == LLM_SUCCESS);
  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets), LLM_ALREADY_LINK);
  CHECK(rets.size() == 1U && rets[0] == LLM_ALREADY_LINK);
  CHECK_STATUS(dd.SetRole(LlmRole::kDecoder), LLM_EXIST_LINK);

  Cache mine;
  mine.cache_id = cache_id;
  mine.cache_desc = desc();
  CacheIndex theirs{kDecoderCluster, 1, 0U, {}};

  // Pull blocks 1, 2, 3, 9 of every tensor into blocks 4, 5, 6, 0.
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {1, 2, 3, 9}, {4, 5, 6, 0}), LLM_SUCCESS);
  for (uint32_t t = 0; t < kTensors; ++t) {
    std::vector<unsigned char> got = read_tensor(addrs[t]);
    CHECK(block_is(got, 4, 2, t, 1) && block_is(got, 5, 2, t, 2) && block_is(got, 6, 2, t, 3));
    CHECK(block_is(got, 0, 2, t, 9) && block_is(got, 7, 1, t, 7));
  }
  // Pull batch 7 of the decoder's layer 0 (tensors 0, 1) into batch 8 of local layer 1.
  KvCacheExtParam layers;
  layers.src_layer_range = {0, 0};
  layers.dst_layer_range = {1, 1};
  CHECK_STATUS(dd.PullKvCache(CacheIndex{kDecoderCluster, 1, 7U, {}}, mine, 8U, -1, layers), LLM_SUCCESS);
  for (uint32_t t = 0; t < kTensors; ++t) {
    std::vector<unsigned char> got = read_tensor(addrs[t]);
    CHECK(t >= 2 ? block_is(got, 8, 2, t - 2, 7) : block_is(got, 8, 1, t, 8));
  }
  // Push layer 1 (tensors 2, 3): blocks 1, 7 into the decoder's 10, 11.
  layers.src_layer_range = {1, 1};
  layers.dst_layer_range = {1, 1};
  CHECK_STATUS(dd.PushKvBlocks(mine, theirs, {1, 7}, {10, 11}, layers), LLM_SUCCESS);
  // Push batch 3 into the decoder's batch 12, every tensor.
  CHECK_STATUS(dd.PushKvCache(mine, CacheIndex{kDecoderCluster, 1, 12U, {}}, 3U), LLM_SUCCESS);

  // The documented errors, nothing else affected.
  CHECK_STATUS(dd.PullKvBlocks(CacheIndex{9U, 1, 0U, {}}, mine, {1}, {1}), LLM_NOT_YET_LINK);
  CHECK_STATUS(dd.PullKvBlocks(CacheIndex{kDecoderCluster, 5, 0U, {}}, mine, {1}, {1}), LLM_KV_CACHE_NOT_EXIST);
  Cache unknown;
  unknown.cache_id = 42;
  CHECK_STATUS(dd.PullKvBlocks(theirs, unknown, {1}, {1}), LLM_KV_CACHE_NOT_EXIST);
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {99}, {1}), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {1}, {16}), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {1, 2}, {1}), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.PullKvBlocks(CacheIndex{kDecoderCluster, 1, 1U, {}}, mine, {1}, {1}), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.PushKvCache(mine, theirs, 0U, 128), LLM_PARAM_INVALID);
  CHECK_STATUS(dd.PullKvCache(theirs, mine, 0U, 0), LLM_PARAM_INVALID);
  layers.src_layer_range = {0, 1};
  layers.dst_layer_range = {0, 0};
  CHECK_STATUS(dd.PushKvBlocks(mine, theirs, {0}, {0}, layers), LLM_PARAM_INVALID);
  layers.tensor_num_per_layer = 0;
  CHECK_STATUS(dd.PushKvBlocks(mine, theirs, {0}, {0}, layers), LLM_PARAM_INVALID);
  Cache c;
  CHECK_STATUS(dd.AllocateCache(desc(), c), LLM_FEATURE_NOT_ENABLED);
  CHECK_STATUS(dd.DeallocateCache(1), LLM_FEATURE_NOT_ENABLED);
  CHECK_STATUS(dd.CopyKvCache(mine, mine), LLM_FEATURE_NOT_ENABLED);
  CHECK_STATUS(dd.CopyKvBlocks(mine, mine, {0}, {{1}}), LLM_FEATURE_NOT_ENABLED);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg != nullptr && std::strstr(msg, "CopyKvBlocks") != nullptr);

  CHECK_STATUS(dd.UnlinkLlmClusters({decoder_at(port)}, rets), LLM_SUCCESS);
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {1}, {1}), LLM_NOT_YET_LINK);
  CHECK_STATUS(dd.UnlinkLlmClusters({decoder_at(port)}, rets), LLM_NOT_YET_LINK);
  char go = 'd';
  CHECK(write(done_w, &go, 1) == 1);
  int status = 0;
  CHECK(waitpid(dec, &status, 0) == dec && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(done_w);

  // A decoder killed while linked: the pull fails within its wait time, a forced unlink
  // releases the link, and a new decoder on the same address links again.
  dec = start_decoder(port, false, done_w);
  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets, 5000), LLM_SUCCESS);
  kill(dec, SIGKILL);
  CHECK(waitpid(dec, &status, 0) == dec);
  close(done_w);
  auto t0 = std::chrono::steady_clock::now();
  Status s = dd.PullKvBlocks(theirs, mine, {1}, {1});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s != LLM_SUCCESS);
  CHECK(ms < 3500.0);
  CHECK_STATUS(dd.UnlinkLlmClusters({decoder_at(port)}, rets, 1000, true), LLM_SUCCESS);
  dec = start_decoder(port, false, done_w);
  CHECK_STATUS(dd.LinkLlmClusters({decoder_at(port)}, rets, 5000), LLM_SUCCESS);
  CHECK_STATUS(dd.PullKvBlocks(theirs, mine, {3}, {3}), LLM_SUCCESS);
  CHECK(block_is(read_tensor(addrs[0]), 3, 2, 0, 3));
  CHECK_STATUS(dd.UnlinkLlmClusters({decoder_at(port)}, rets), LLM_SUCCESS);
  CHECK(write(done_w, &go, 1) == 1);
  CHECK(waitpid(dec, &status, 0) == dec && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(done_w);

  // SetRole without links: become a server, then a client again; the cache stays registered.
  std::map<AscendString, AscendString> listen;
  listen[OPTION_LISTEN_IP_INFO] = ("127.0.0.1:" + std::to_string(port)).c_str();
  CHECK_STATUS(dd.SetRole(LlmRole::kDecoder, listen), LLM_SUCCESS);
  CHECK_STATUS(dd.SetRole(LlmRole::kPrompt), LLM_SUCCESS);
  CHECK_STATUS(dd.UnregisterKvCache(cache_id), LLM_SUCCESS);
  CHECK_STATUS(dd.UnregisterKvCache(cache_id), LLM_SUCCESS);  // unknown: success, as documented
  dd.Finalize();
  for (uint64_t a : addrs) CHECK(aclrtFree(reinterpret_cast<void *>(a)) == ACL_SUCCESS);
  std::printf("prompt: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 6 && std::strcmp(argv[1], "decoder") == 0) {
    return decoder(static_cast<uint16_t>(std::atoi(argv[2])), std::atoi(argv[3]), std::atoi(argv[4]),
                   std::strcmp(argv[5], "1") == 0);
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  return prompt(static_cast<uint16_t>(std::atoi(argv[1])));
}
