// llm_datadist_face.cpp - part of ascendless.
// LLM-DataDist (the vendor's llm_datadist::LlmDataDist, and the Python package through
// llm_datadist_c.cpp) as a third face of the transfer engine, on the native C API
// (ascendless.h), beside adxl_engine.cpp and hixl.cpp; docs/llm-datadist.md says how the calls
// map:
// - Initialize sets the device of llm.DeviceId on the calling thread (aclrtSetDevice, one count,
//   as the vendor's does, so the caller may allocate device memory after it without setting the
//   device itself) and Finalize takes that count away (aclrtResetDevice);
// - an instance is one engine: named by `llm.ListenIpInfo` ("ip:port", so it listens: a
//   server) or, without it, "127.0.0.1" (a client, which never listens);
// - LinkLlmClusters connects to each cluster's remote_ip_infos[0] "ip:port"; the linking side
//   is the one that transfers (pull or push), as in the vendor's samples; a cluster id this
//   instance did not link is LLM_NOT_YET_LINK;
// - link by HCCL rank table (the Python face's link(comm_name, cluster_rank_info, rank_table)):
//   every rank listens at its device_ip:device_port, so this instance listens at its own
//   rank's and connects to the others' as they come up; then each cluster is linked as above;
// - RegisterKvCache registers each tensor with the tag (cache_id << 8) | tensor index, by
//   which the peer finds it (ascendless_engine_peer_region); cache ids count from 1 per
//   instance, as the vendor's samples rely on;
// - Pull/Push of caches and blocks are one TransferSync of descriptors built from the local
//   cache's layout (a block or batch row is tensor bytes / shape[0]), with the peer's tensors
//   checked to hold every byte named.
//
// No member lets an exception escape: anything that could throw is caught and is LLM_FAILED.

#include "llm_datadist_face.h"

#include "acl/acl_rt.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace llm_datadist {
namespace face {

// Fails with `code`, saying why through aclGetRecentErrMsg and the log.
Status fail(Status code, const std::string &why) {
  ascendless_record_error(("LLM-DataDist: " + why).c_str());
  return code;
}

namespace {

constexpr size_t kMaxClusters = 16U;
constexpr uint32_t kMaxTensors = 240U;  // the vendor's documented limit per cache
constexpr const char *kClientName = "127.0.0.1";
constexpr int32_t kReadOp = 0;   // adxl::READ
constexpr int32_t kWriteOp = 1;  // adxl::WRITE
constexpr size_t kMaxCommName = 128U;  // the vendor's COMM_NAME_MAX_LENGTH, NUL included
constexpr size_t kMaxComms = 512U;     // the vendor's kMaxLinkNum
constexpr long long kDefaultConnectSeconds = 120;  // HCCL_CONNECT_TIMEOUT's default

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The LLM-DataDist status of a native engine status (its message is already recorded).
Status from_engine(AdxlStatus status) {
  switch (status) {
    case ADXL_SUCCESS:
      return LLM_SUCCESS;
    case ADXL_PARAM_INVALID:
      return LLM_PARAM_INVALID;
    case ADXL_TIMEOUT:
      return LLM_TIMEOUT;
    case ADXL_NOT_CONNECTED:
      return LLM_NOT_YET_LINK;
    case ADXL_ALREADY_CONNECTED:
      return LLM_ALREADY_LINK;
    case ADXL_RESOURCE_EXHAUSTED:
      return LLM_OUT_OF_MEMORY;
    default:
      return LLM_FAILED;
  }
}

// A decimal integer in [min, max], or false.
bool parse_int(const char *text, long long min, long long max, long long &out) {
  if (text == nullptr || *text == '\0') {
    return false;
  }
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
    return false;
  }
  out = v;
  return true;
}

bool valid_role(LlmRole role) {
  return role == LlmRole::kPrompt || role == LlmRole::kDecoder || role == LlmRole::kMix;
}

// The engine name of an address: "ip:port", or "[ipv6]:port" for an address with a ':'.
std::string engine_name(const IpInfo &info) {
  std::string ip = info.ip.GetString();
  if (ip.find(':') != std::string::npos && ip.front() != '[') {
    ip = "[" + ip + "]";
  }
  return ip + ":" + std::to_string(info.port);
}

uint32_t tag_of(int64_t cache_id, uint32_t tensor) {
  return (static_cast<uint32_t>(cache_id) << 8) | tensor;
}

}  // namespace

Status DataDist::CheckInitialized() const {
  return initialized_ ? LLM_SUCCESS : fail(LLM_FAILED, "the instance is not initialized (call Initialize)");
}

Status DataDist::CheckClusters(const std::vector<ClusterInfo> &clusters, int32_t timeout) const {
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  if (clusters.empty() || timeout <= 0) {
    return fail(LLM_PARAM_INVALID, clusters.empty() ? "no cluster given" : "timeout_in_millis must be > 0");
  }
  if (clusters.size() > kMaxClusters) {
    return fail(LLM_CLUSTER_NUM_EXCEED_LIMIT, std::to_string(clusters.size()) + " clusters: at most 16 per call");
  }
  return LLM_SUCCESS;
}

Status DataDist::StartEngine(const std::string &name, const std::vector<std::string> &keys,
                                                 const std::vector<std::string> &values) {
  std::vector<const char *> k;
  std::vector<const char *> v;
  for (size_t i = 0; i < keys.size(); ++i) {
    k.push_back(keys[i].c_str());
    v.push_back(values[i].c_str());
  }
  ascendless_engine_finalize(engine_.engine);
  Status ret = from_engine(ascendless_engine_initialize(engine_.engine, name.c_str(), k.data(), v.data(), k.size()));
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  name_ = name;
  option_keys_ = keys;
  option_values_ = values;
  for (auto &entry : caches_) {
    entry.second.handles.clear();
    ret = RegisterTensors(entry.first, entry.second);
    if (ret != LLM_SUCCESS) {
      return ret;
    }
  }
  return LLM_SUCCESS;
}

Status DataDist::Initialize(const std::map<AscendString, AscendString> &options) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (initialized_) {
    return LLM_SUCCESS;
  }
  if (!valid_role(role_)) {
    return fail(LLM_PARAM_INVALID, "role " + std::to_string(static_cast<int32_t>(role_)) +
                                       " is not kPrompt (1), kDecoder (2) or kMix (3)");
  }
  std::string listen;
  const char *device = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> values;
  for (const auto &kv : options) {
    const std::string key = kv.first.GetString();
    const char *value = kv.second.GetString();
    long long n = 0;
    // The Python package's spellings ("llm.listenIpInfo", "ge.exec.deviceId") too.
    if (key == OPTION_LISTEN_IP_INFO || key == "llm.listenIpInfo") {
      listen = value;
    } else if (key == OPTION_DEVICE_ID || key == "ge.exec.deviceId") {
      device = value;
    } else if (key == OPTION_SYNC_CACHE_WAIT_TIME) {
      if (!parse_int(value, 1, INT32_MAX, n)) {
        return fail(LLM_PARAM_INVALID, key + " = \"" + value + "\": a positive number of milliseconds");
      }
      wait_ms_ = static_cast<int32_t>(n);
    } else if (key == OPTION_TRANSFER_BACKEND) {
      if (std::strcmp(value, "hixl") != 0) {
        return fail(LLM_PARAM_INVALID, key + " = \"" + value + "\": the only backend is \"hixl\"");
      }
    } else if (key == OPTION_GLOBAL_RESOURCE_CONFIG || key == OPTION_LOCAL_COMM_RES) {
      keys.push_back(key == OPTION_LOCAL_COMM_RES ? "LocalCommRes" : "GlobalResourceConfig");
      values.push_back(value);
    }
    // Other keys (llm.BufPoolCfg, llm.EnableSwitchRole, llm.RdmaTrafficClass...) configure
    // the vendor's pools and RDMA; they change nothing here (docs/llm-datadist.md).
  }
  long long id = 0;
  if (device == nullptr) {
    return fail(LLM_PARAM_INVALID, std::string(OPTION_DEVICE_ID) + " is required");
  }
  if (std::strchr(device, ';') != nullptr) {
    return fail(LLM_FEATURE_NOT_ENABLED, std::string(OPTION_DEVICE_ID) + " = \"" + device +
                                             "\": one device per instance (the vendor's multi-card mode is not here)");
  }
  if (!parse_int(device, 0, INT32_MAX, id)) {
    return fail(LLM_PARAM_INVALID, std::string(OPTION_DEVICE_ID) + " = \"" + device + "\": a device id >= 0");
  }
  const aclError set = aclrtSetDevice(static_cast<int32_t>(id));
  if (set != ACL_SUCCESS) {
    return fail(LLM_FAILED, "aclrtSetDevice(" + std::to_string(id) + ") failed with " + std::to_string(set));
  }
  Status ret = StartEngine(listen.empty() ? kClientName : listen, keys, values);
  if (ret != LLM_SUCCESS) {
    (void)aclrtResetDevice(static_cast<int32_t>(id));
    return ret;
  }
  device_id_ = static_cast<int32_t>(id);
  initialized_ = true;
  return LLM_SUCCESS;
}

void DataDist::Finalize() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!initialized_) {
    return;
  }
  // The engine closes its links and drops its registrations as it finalizes.
  ascendless_engine_finalize(engine_.engine);
  links_.clear();
  comms_.clear();
  next_comm_id_ = 1U;
  (void)aclrtResetDevice(device_id_);
  caches_.clear();
  next_cache_id_ = 1;
  initialized_ = false;
}

Status DataDist::SetRole(LlmRole role, const std::map<AscendString, AscendString> &options) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  if (!valid_role(role)) {
    return fail(LLM_PARAM_INVALID, "role " + std::to_string(static_cast<int32_t>(role)) + " is not a role");
  }
  if (!links_.empty()) {
    return fail(LLM_EXIST_LINK, "SetRole with " + std::to_string(links_.size()) + " links: unlink them first");
  }
  std::string name = kClientName;
  for (const auto &kv : options) {
    const std::string key = kv.first.GetString();
    if (key == OPTION_LISTEN_IP_INFO || key == "llm.listenIpInfo") {
      name = kv.second.GetString();
    }
  }
  if (name != name_) {
    ret = StartEngine(name, option_keys_, option_values_);
    if (ret != LLM_SUCCESS) {
      // Back to what it was, so the instance stays usable.
      (void)StartEngine(name_, option_keys_, option_values_);
      return ret;
    }
  }
  role_ = role;
  return LLM_SUCCESS;
}

Status DataDist::Link(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                                          int32_t timeout) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckClusters(clusters, timeout);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  rets.assign(clusters.size(), LLM_SUCCESS);
  Status overall = LLM_SUCCESS;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const ClusterInfo &c = clusters[i];
    const std::string id = std::to_string(c.remote_cluster_id);
    if (c.remote_ip_infos.size() != 1U) {
      rets[i] = fail(LLM_PARAM_INVALID, "cluster " + id + ": one remote_ip_infos entry, not " +
                                            std::to_string(c.remote_ip_infos.size()));
    } else if (links_.count(c.remote_cluster_id) != 0U) {
      rets[i] = fail(LLM_ALREADY_LINK, "cluster " + id + " is already linked");
    } else {
      const std::string remote = engine_name(c.remote_ip_infos[0]);
      AdxlStatus s = ascendless_engine_connect(engine_.engine, remote.c_str(), timeout);
      if (s == ADXL_SUCCESS) {
        links_[c.remote_cluster_id] = remote;
      } else if (s == ADXL_ALREADY_CONNECTED) {
        rets[i] = fail(LLM_ALREADY_LINK, "cluster " + id + ": " + remote + " is linked already (as another cluster)");
      } else if (s == ADXL_TIMEOUT) {
        rets[i] = fail(LLM_LINK_FAILED, "cluster " + id + ": " + remote + " did not answer in " +
                                            std::to_string(timeout) + " ms");
      } else {
        rets[i] = LLM_LINK_FAILED;  // the engine said why
      }
    }
    if (overall == LLM_SUCCESS) {
      overall = rets[i];
    }
  }
  return overall;
}

Status DataDist::Unlink(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                                            int32_t timeout, bool force) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckClusters(clusters, timeout);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  rets.assign(clusters.size(), LLM_SUCCESS);
  Status overall = LLM_SUCCESS;
  for (size_t i = 0; i < clusters.size(); ++i) {
    auto link = links_.find(clusters[i].remote_cluster_id);
    if (link == links_.end()) {
      // A forced unlink releases what is here: nothing, when this side did not link.
      if (!force) {
        rets[i] = fail(LLM_NOT_YET_LINK,
                       "cluster " + std::to_string(clusters[i].remote_cluster_id) + " is not linked from here");
      }
    } else {
      // Disconnect releases the local end even when the peer is gone; a forced unlink does not
      // wait for the peer to hear it.
      AdxlStatus s = ascendless_engine_disconnect(engine_.engine, link->second.c_str(), timeout);
      links_.erase(link);
      if (s != ADXL_SUCCESS && s != ADXL_NOT_CONNECTED && !force) {
        rets[i] = LLM_UNLINK_FAILED;
      }
    }
    if (overall == LLM_SUCCESS) {
      overall = rets[i];
    }
  }
  return overall;
}

Status DataDist::ListenAt(const std::string &own) {
  if (name_ == own) {
    return LLM_SUCCESS;
  }
  if (name_ != kClientName || !links_.empty()) {
    return fail(LLM_LINK_FAILED, "this instance's engine is " + name_ + ", but the rank table puts its rank at " + own +
                                     ": give llm.listenIpInfo that address, or none");
  }
  Status ret = StartEngine(own, option_keys_, option_values_);
  if (ret != LLM_SUCCESS) {
    // The engine said why (an address of another machine, or one in use); a client again.
    (void)StartEngine(kClientName, option_keys_, option_values_);
    return LLM_LINK_FAILED;
  }
  return LLM_SUCCESS;
}

Status DataDist::ConnectWhenUp(const std::string &remote, int64_t deadline_ms, const std::string &who) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!initialized_) {
        return fail(LLM_FAILED, "the instance was finalized while linking " + who);
      }
    }
    const int64_t left = deadline_ms - now_ms();
    if (left <= 0) {
      return fail(LLM_LINK_FAILED, who + " at " + remote + " did not come up in time (HCCL_CONNECT_TIMEOUT)");
    }
    const auto attempt_ms = static_cast<int32_t>(std::min<int64_t>(left, 1000));
    AdxlStatus s = ascendless_engine_connect(engine_.engine, remote.c_str(), attempt_ms);
    if (s == ADXL_SUCCESS) {
      return LLM_SUCCESS;
    }
    if (s == ADXL_ALREADY_CONNECTED) {
      return fail(LLM_ALREADY_LINK, who + ": " + remote + " is linked already (as another cluster)");
    }
    if (s != ADXL_FAILED && s != ADXL_TIMEOUT) {
      return LLM_LINK_FAILED;  // the engine said why
    }
    // Nobody listens there yet: the peer has not called link. HCCL's comm init waits for every
    // rank likewise.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status DataDist::LinkComm(const std::string &comm_name, const std::map<uint64_t, uint32_t> &cluster2rank,
                          const std::string &rank_table, uint64_t &comm_id) {
  std::lock_guard<std::mutex> one_at_a_time(comm_mutex_);
  long long seconds = kDefaultConnectSeconds;
  const char *env = std::getenv("HCCL_CONNECT_TIMEOUT");
  if (env != nullptr && *env != '\0' && !parse_int(env, 1, 7200, seconds)) {
    return fail(LLM_PARAM_INVALID, std::string("HCCL_CONNECT_TIMEOUT = \"") + env + "\": seconds, 1 to 7200");
  }
  const int64_t deadline = now_ms() + seconds * 1000;
  // Every peer's address, checked before anything starts.
  std::vector<std::pair<uint64_t, std::string>> peers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Status ret = CheckInitialized();
    if (ret != LLM_SUCCESS) {
      return ret;
    }
    if (comm_name.empty() || comm_name.size() >= kMaxCommName) {
      return fail(LLM_PARAM_INVALID, "comm_name of " + std::to_string(comm_name.size()) + " characters: 1 to 127");
    }
    auto own = cluster2rank.find(cluster_id_);
    if (own == cluster2rank.end()) {
      return fail(LLM_PARAM_INVALID, "this instance's cluster " + std::to_string(cluster_id_) +
                                         " is not in cluster_rank_info");
    }
    if (cluster2rank.size() < 2U) {
      return fail(LLM_PARAM_INVALID, "cluster_rank_info names no other cluster");
    }
    if (comms_.size() >= kMaxComms) {
      return fail(LLM_PARAM_INVALID, "512 communicators are linked already (the vendor's limit)");
    }
    char address[64];
    std::string own_address;
    for (const auto &entry : cluster2rank) {
      const std::string who = "cluster " + std::to_string(entry.first) + " (rank " + std::to_string(entry.second) + ")";
      if (ascendless_rank_table_address(rank_table.c_str(), entry.second, address, sizeof address) != ADXL_SUCCESS) {
        return LLM_LINK_FAILED;  // the rank table's fault, recorded
      }
      if (entry.first == cluster_id_) {
        own_address = address;
      } else if (links_.count(entry.first) != 0U) {
        return fail(LLM_ALREADY_LINK, who + " is linked already");
      } else {
        peers.emplace_back(entry.first, address);
      }
    }
    ret = ListenAt(own_address);
    if (ret != LLM_SUCCESS) {
      return ret;
    }
  }
  // Waiting for the peers without mutex_: transfers on other links go on meanwhile.
  std::vector<std::string> connected;
  for (const auto &peer : peers) {
    Status ret = ConnectWhenUp(peer.second, deadline, "cluster " + std::to_string(peer.first));
    if (ret != LLM_SUCCESS) {
      for (const auto &remote : connected) {
        (void)ascendless_engine_disconnect(engine_.engine, remote.c_str(), wait_ms_);
      }
      return ret;
    }
    connected.push_back(peer.second);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!initialized_) {
    return fail(LLM_FAILED, "the instance was finalized while linking " + comm_name);
  }
  std::vector<uint64_t> clusters;
  for (const auto &peer : peers) {
    links_[peer.first] = peer.second;
    clusters.push_back(peer.first);
  }
  comm_id = next_comm_id_++;
  comms_[comm_id] = std::move(clusters);
  return LLM_SUCCESS;
}

Status DataDist::UnlinkComm(uint64_t comm_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  auto comm = comms_.find(comm_id);
  if (comm == comms_.end()) {
    return fail(LLM_NOT_YET_LINK, "comm " + std::to_string(comm_id) + " is not linked");
  }
  // The local ends are released even when a peer is gone, as the vendor's unlink destroys the
  // communicator whatever the peers do.
  for (uint64_t cluster : comm->second) {
    auto link = links_.find(cluster);
    if (link != links_.end()) {
      (void)ascendless_engine_disconnect(engine_.engine, link->second.c_str(), wait_ms_);
      links_.erase(link);
    }
  }
  comms_.erase(comm);
  return LLM_SUCCESS;
}

Status DataDist::QueryRegisterMemStatus(uint64_t comm_id, int32_t &status) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  if (comms_.count(comm_id) == 0U) {
    return fail(LLM_NOT_YET_LINK, "comm " + std::to_string(comm_id) + " is not linked");
  }
  status = 0;  // RegisterMemStatus.OK
  return LLM_SUCCESS;
}

Status DataDist::RegisterTensors(int64_t cache_id, Registered &cache) {
  const int32_t mem_type = cache.placement == CachePlacement::kHost ? 1 : 0;
  for (uint32_t i = 0; i < cache.num_tensors; ++i) {
    void *handle = nullptr;
    AdxlStatus s = ascendless_engine_register_mem_tagged(engine_.engine, static_cast<uintptr_t>(cache.addrs[i]),
                                                         static_cast<size_t>(cache.tensor_bytes), mem_type,
                                                         tag_of(cache_id, i), &handle);
    if (s != ADXL_SUCCESS) {
      for (void *h : cache.handles) {
        ascendless_engine_deregister_mem(engine_.engine, h);
      }
      cache.handles.clear();
      return from_engine(s);
    }
    cache.handles.push_back(handle);
  }
  return LLM_SUCCESS;
}

Status DataDist::Register(const CacheDesc &desc, const std::vector<uint64_t> &addrs, int64_t keyed_model_id,
                          int64_t &cache_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  if (desc.num_tensors == 0U || desc.num_tensors > kMaxTensors || addrs.size() != desc.num_tensors) {
    return fail(LLM_PARAM_INVALID, "num_tensors " + std::to_string(desc.num_tensors) + " with " +
                                       std::to_string(addrs.size()) + " addresses: 1 to 240 tensors, one address each");
  }
  if (desc.placement != CachePlacement::kDevice && desc.placement != CachePlacement::kHost) {
    return fail(LLM_PARAM_INVALID, "placement " + std::to_string(static_cast<uint32_t>(desc.placement)));
  }
  const int elem = ge::GetSizeByDataType(desc.data_type);
  if (elem <= 0 || elem >= ge::kDataTypeSizeBitOffset) {
    return fail(LLM_PARAM_INVALID, "data type " + std::to_string(static_cast<int>(desc.data_type)) +
                                       " has no whole-byte size");
  }
  uint64_t bytes = static_cast<uint64_t>(elem);
  for (int64_t dim : desc.shape) {
    if (dim <= 0 || bytes > UINT64_MAX / static_cast<uint64_t>(dim)) {
      return fail(LLM_PARAM_INVALID, "shape dims must be > 0 (and the tensor must fit in memory)");
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  if (desc.shape.empty()) {
    return fail(LLM_PARAM_INVALID, "shape is empty: dim 0 is the batch or block count");
  }
  for (uint64_t a : addrs) {
    if (a == 0U) {
      return fail(LLM_PARAM_INVALID, "a tensor address is 0");
    }
  }
  int64_t id = next_cache_id_;
  if (keyed_model_id >= 0) {
    if (keyed_model_id > kMaxCacheId - kKeyedCacheIdBase) {
      return fail(LLM_PARAM_INVALID, "BlocksCacheKey model_id " + std::to_string(keyed_model_id) + ": at most " +
                                         std::to_string(kMaxCacheId - kKeyedCacheIdBase));
    }
    id = kKeyedCacheIdBase + keyed_model_id;
    if (caches_.count(id) != 0U) {
      return fail(LLM_PARAM_INVALID, "a cache is registered with BlocksCacheKey model_id " +
                                         std::to_string(keyed_model_id) + " already (cache id " + std::to_string(id) +
                                         "): unregister it first");
    }
  } else if (id >= kKeyedCacheIdBase) {
    return fail(LLM_OUT_OF_MEMORY, "no cache ids left for this instance");
  }
  Registered cache;
  cache.placement = desc.placement;
  cache.num_tensors = desc.num_tensors;
  cache.tensor_bytes = bytes;
  cache.rows = static_cast<uint64_t>(desc.shape[0]);
  cache.addrs = addrs;
  ret = RegisterTensors(id, cache);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  if (keyed_model_id < 0) {
    ++next_cache_id_;
  }
  caches_[id] = std::move(cache);
  cache_id = id;
  return LLM_SUCCESS;
}

Status DataDist::Unregister(int64_t cache_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status ret = CheckInitialized();
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  auto it = caches_.find(cache_id);
  if (it == caches_.end()) {
    return LLM_SUCCESS;  // as the vendor documents
  }
  for (void *h : it->second.handles) {
    ascendless_engine_deregister_mem(engine_.engine, h);
  }
  caches_.erase(it);
  return LLM_SUCCESS;
}

Status DataDist::Ranges(uint32_t num_tensors, const KvCacheExtParam &ext,
                                            TensorRange &range) const {
  const auto all = std::make_pair(-1, -1);
  if (ext.tensor_num_per_layer == 0U) {
    return fail(LLM_PARAM_INVALID, "tensor_num_per_layer is 0");
  }
  if (ext.src_layer_range == all && ext.dst_layer_range == all) {
    range = TensorRange{0U, 0U, num_tensors};
    return LLM_SUCCESS;
  }
  const uint32_t per = ext.tensor_num_per_layer;
  if (per > num_tensors || num_tensors % per != 0U) {
    return fail(LLM_PARAM_INVALID, "tensor_num_per_layer " + std::to_string(per) + " does not divide num_tensors " +
                                       std::to_string(num_tensors));
  }
  const int32_t layers = static_cast<int32_t>(num_tensors / per);
  const auto &s = ext.src_layer_range;
  const auto &d = ext.dst_layer_range;
  auto bad = [layers](const std::pair<int32_t, int32_t> &r) {
    return r.first < 0 || r.first > r.second || r.second >= layers;
  };
  if (bad(s) || bad(d) || s.second - s.first != d.second - d.first) {
    return fail(LLM_PARAM_INVALID, "layer ranges [" + std::to_string(s.first) + ", " + std::to_string(s.second) +
                                       "] and [" + std::to_string(d.first) + ", " + std::to_string(d.second) +
                                       "]: 0 <= first <= second < " + std::to_string(layers) + ", of equal length");
  }
  range.count = static_cast<uint32_t>(s.second - s.first + 1) * per;
  // The caller's "src" is the remote side of a pull and the local side of a push: the caller
  // swaps before calling, so here src is always local.
  range.local_first = static_cast<uint32_t>(s.first) * per;
  range.remote_first = static_cast<uint32_t>(d.first) * per;
  return LLM_SUCCESS;
}

Status DataDist::PeerTensors(const std::string &remote, int64_t remote_cache,
                                                 const TensorRange &range, std::vector<PeerTensor> &out) {
  if (remote_cache <= 0 || remote_cache > kMaxCacheId) {
    return fail(LLM_KV_CACHE_NOT_EXIST, "cache id " + std::to_string(remote_cache) + " is no cache of " + remote);
  }
  for (uint32_t i = 0; i < range.count; ++i) {
    const uint32_t tensor = range.remote_first + i;
    PeerTensor t;
    int32_t mem_type = 0;
    AdxlStatus s = ascendless_engine_peer_region(engine_.engine, remote.c_str(), tag_of(remote_cache, tensor),
                                                 wait_ms_, &t.addr, &t.len, &mem_type);
    if (s == ADXL_PARAM_INVALID) {
      return fail(LLM_KV_CACHE_NOT_EXIST, "cache " + std::to_string(remote_cache) + " of " + remote +
                                              " has no tensor " + std::to_string(tensor) +
                                              " (not registered, or unregistered)");
    }
    if (s != ADXL_SUCCESS) {
      return from_engine(s);
    }
    out.push_back(t);
  }
  return LLM_SUCCESS;
}

Status DataDist::Transfer(bool pull, uint64_t cluster, int64_t cache_id, int64_t remote_cache,
                                              const Rows &rows, int64_t bytes, const KvCacheExtParam &ext) {
  // What the transfer needs of the local cache, copied under the lock (another thread may
  // unregister it meanwhile).
  std::string remote;
  uint32_t num_tensors = 0U;
  uint64_t local_rows = 0U;
  uint64_t row = 0U;
  std::vector<uint64_t> addrs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Status ret = CheckInitialized();
    if (ret != LLM_SUCCESS) {
      return ret;
    }
    auto link = links_.find(cluster);
    if (link == links_.end()) {
      return fail(LLM_NOT_YET_LINK, "cluster " + std::to_string(cluster) + " is not linked from here");
    }
    auto it = caches_.find(cache_id);
    if (it == caches_.end()) {
      return fail(LLM_KV_CACHE_NOT_EXIST, "no local cache " + std::to_string(cache_id));
    }
    remote = link->second;
    num_tensors = it->second.num_tensors;
    local_rows = it->second.rows;
    row = it->second.row_bytes();
    addrs = it->second.addrs;
  }
  KvCacheExtParam swapped = ext;
  if (pull) {  // Ranges takes src as the local side
    std::swap(swapped.src_layer_range, swapped.dst_layer_range);
  }
  TensorRange range;
  Status ret = Ranges(num_tensors, swapped, range);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  std::vector<PeerTensor> peer;
  peer.reserve(range.count);
  ret = PeerTensors(remote, remote_cache, range, peer);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  const uint64_t len = bytes < 0 ? row : static_cast<uint64_t>(bytes);
  if (rows.count == 0U) {
    return fail(LLM_PARAM_INVALID, "no rows to transfer");
  }
  if (len > row) {
    return fail(LLM_PARAM_INVALID, "size " + std::to_string(bytes) + " is more than a batch (" + std::to_string(row) +
                                       " bytes)");
  }
  // The rows are checked once: every local row in the cache, and the largest remote row in
  // each peer tensor (the first row out of range is the one named, as the caller gave them).
  uint64_t max_remote = 0U;
  for (size_t j = 0; j < rows.count; ++j) {
    if (rows.local[j] >= local_rows) {
      return fail(LLM_PARAM_INVALID, "row " + std::to_string(rows.local[j]) + " is out of range of the local cache (" +
                                         std::to_string(local_rows) + " rows of " + std::to_string(row) + " bytes)");
    }
    max_remote = std::max(max_remote, rows.remote[j]);
  }
  for (uint32_t i = 0; i < range.count; ++i) {
    const uint64_t peer_rows = peer[i].len / row;
    if (max_remote >= peer_rows) {
      uint64_t first = 0U;
      for (size_t j = 0; j < rows.count; ++j) {
        if (rows.remote[j] >= peer_rows) {
          first = rows.remote[j];
          break;
        }
      }
      return fail(LLM_PARAM_INVALID, "row " + std::to_string(first) + " is out of range of the remote cache (" +
                                         std::to_string(peer_rows) + " rows of " + std::to_string(row) + " bytes)");
    }
  }
  // One descriptor per row of each tensor, consecutive rows on both sides merged into one. The
  // descriptor being extended is kept in locals and stored when the next one starts, so the
  // loop does not read back what it just wrote.
  const bool whole = len == row;
  std::unique_ptr<AscendlessTransferDesc[]> descs(new AscendlessTransferDesc[static_cast<size_t>(range.count) *
                                                                            rows.count]);
  size_t n = 0;
  for (uint32_t i = 0; i < range.count; ++i) {
    const uint64_t local_base = addrs[range.local_first + i];
    const uint64_t remote_base = peer[i].addr;
    uint64_t at_local = local_base + rows.local[0] * row;
    uint64_t at_remote = remote_base + rows.remote[0] * row;
    uint64_t run = len;
    for (size_t j = 1; j < rows.count; ++j) {
      const uint64_t l = local_base + rows.local[j] * row;
      const uint64_t r = remote_base + rows.remote[j] * row;
      if (whole && at_local + run == l && at_remote + run == r) {
        run += len;
        continue;
      }
      descs[n++] = AscendlessTransferDesc{static_cast<uintptr_t>(at_local), static_cast<uintptr_t>(at_remote),
                                          static_cast<size_t>(run)};
      at_local = l;
      at_remote = r;
      run = len;
    }
    descs[n++] = AscendlessTransferDesc{static_cast<uintptr_t>(at_local), static_cast<uintptr_t>(at_remote),
                                        static_cast<size_t>(run)};
  }
  AdxlStatus s = ascendless_engine_transfer_sync(engine_.engine, remote.c_str(), pull ? kReadOp : kWriteOp,
                                                 descs.get(), n, wait_ms_);
  if (s == ADXL_TIMEOUT) {
    return fail(LLM_TIMEOUT, std::string(pull ? "pull" : "push") + " from cluster " + std::to_string(cluster) +
                                 " did not finish in " + std::to_string(wait_ms_) + " ms (llm.SyncKvCacheWaitTime)");
  }
  return from_engine(s);
}


namespace {
// The rows of a transfer of blocks (the caller's lists, not copied), or a status.
Status block_rows(const std::vector<uint64_t> &local, const std::vector<uint64_t> &remote, uint32_t batch_index,
                  Rows &out) {
  if (batch_index != 0U) {
    return fail(LLM_PARAM_INVALID, "the remote cache index's batch_index must be 0 for blocks");
  }
  if (local.empty() || local.size() != remote.size()) {
    return fail(LLM_PARAM_INVALID, "block lists of " + std::to_string(local.size()) + " and " +
                                       std::to_string(remote.size()) + " indexes: non-empty and of equal length");
  }
  out = Rows{local.data(), remote.data(), local.size()};
  return LLM_SUCCESS;
}
}  // namespace

Status DataDist::PullCache(const CacheIndex &src, const Cache &dst, uint32_t batch_index, int64_t size,
                           const KvCacheExtParam &ext) {
  if (size == 0 || size < -1) {
    return fail(LLM_PARAM_INVALID, "size " + std::to_string(size) + ": -1 (the whole batch) or > 0");
  }
  const uint64_t local = batch_index;
  const uint64_t remote = src.batch_index;
  return Transfer(true, src.cluster_id, dst.cache_id, src.cache_id, Rows{&local, &remote, 1U}, size, ext);
}

Status DataDist::PullBlocks(const CacheIndex &src, const Cache &dst, const std::vector<uint64_t> &src_blocks,
                            const std::vector<uint64_t> &dst_blocks, const KvCacheExtParam &ext) {
  Rows rows;
  Status ret = block_rows(dst_blocks, src_blocks, src.batch_index, rows);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  return Transfer(true, src.cluster_id, dst.cache_id, src.cache_id, rows, -1, ext);
}

Status DataDist::PushCache(const Cache &src, const CacheIndex &dst, uint32_t src_batch_index, int64_t size,
                           const KvCacheExtParam &ext) {
  if (size != -1) {
    return fail(LLM_PARAM_INVALID, "size " + std::to_string(size) + ": a push moves whole batches (-1)");
  }
  if (src.cache_desc.placement != CachePlacement::kDevice) {
    return fail(LLM_PARAM_INVALID, "a pushed cache's placement is kDevice");
  }
  const uint64_t local = src_batch_index;
  const uint64_t remote = dst.batch_index;
  return Transfer(false, dst.cluster_id, src.cache_id, dst.cache_id, Rows{&local, &remote, 1U}, -1, ext);
}

Status DataDist::PushBlocks(const Cache &src, const CacheIndex &dst, const std::vector<uint64_t> &src_blocks,
                            const std::vector<uint64_t> &dst_blocks, const KvCacheExtParam &ext) {
  if (src.cache_desc.placement != CachePlacement::kDevice) {
    return fail(LLM_PARAM_INVALID, "a pushed cache's placement is kDevice");
  }
  Rows rows;
  Status ret = block_rows(src_blocks, dst_blocks, dst.batch_index, rows);
  if (ret != LLM_SUCCESS) {
    return ret;
  }
  return Transfer(false, dst.cluster_id, src.cache_id, dst.cache_id, rows, -1, ext);
}

}  // namespace face
}  // namespace llm_datadist
