// llm_datadist_face.h - part of ascendless (internal, not installed).
// LLM-DataDist over the one engine, apart from the vendor's class: llm_datadist::LlmDataDist
// (llm_datadist.cpp) forwards each member here, and so does the C API the Python package calls
// (llm_datadist_c.cpp, ascendless_llm_datadist.h). Both faces then behave alike by
// construction; llm_datadist_face.cpp says how the calls map onto the engine.

#ifndef ASCENDLESS_SRC_CXX_LLM_DATADIST_FACE_H_
#define ASCENDLESS_SRC_CXX_LLM_DATADIST_FACE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ascendless.h"
#include "engine_face.h"
#include "llm_datadist/llm_datadist.h"

namespace llm_datadist {
namespace face {

// Cache ids: those RegisterKvCache hands out count from 1 up to kKeyedCacheIdBase - 1; a cache
// registered under a BlocksCacheKey (the Python face) has kKeyedCacheIdBase + model_id, so a
// peer that knows the key knows the id. Both fit a tag beside 8 bits of tensor index.
constexpr int64_t kKeyedCacheIdBase = int64_t{1} << 23;
constexpr int64_t kMaxCacheId = (int64_t{1} << 24) - 1;

// Fails with `code`, saying why through aclGetRecentErrMsg and the log.
Status fail(Status code, const std::string &why);

// A registered cache: its layout and the engine registrations of its tensors.
struct Registered {
  CachePlacement placement = CachePlacement::kDevice;
  uint32_t num_tensors = 0U;
  uint64_t tensor_bytes = 0U;
  uint64_t rows = 0U;  // shape[0]: batches or blocks
  std::vector<uint64_t> addrs;
  std::vector<void *> handles;
  uint64_t row_bytes() const { return tensor_bytes / rows; }
};

// The rows of a transfer: local row local[i] goes with remote row remote[i], i < count (the
// caller's arrays, not copied).
struct Rows {
  const uint64_t *local = nullptr;
  const uint64_t *remote = nullptr;
  size_t count = 0U;
};

// The tensors a transfer pairs: local index i goes with remote index remote_first + (i - first).
struct TensorRange {
  uint32_t local_first = 0U;
  uint32_t remote_first = 0U;
  uint32_t count = 0U;
};

// One peer tensor: where it is and how long.
struct PeerTensor {
  size_t addr = 0U;
  size_t len = 0U;
};

// One LLM-DataDist instance: its members are the vendor's, with the vendor's arguments and
// statuses (a Cache argument is read for its cache_id and placement only). None throws but
// for memory, which each face catches.
class __attribute__((visibility("hidden"))) DataDist {
 public:
  DataDist(uint64_t cluster_id, LlmRole role) : cluster_id_(cluster_id), role_(role) {}

  Status Initialize(const std::map<AscendString, AscendString> &options);
  void Finalize();
  Status SetRole(LlmRole role, const std::map<AscendString, AscendString> &options);
  Status Link(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets, int32_t timeout);
  Status Unlink(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets, int32_t timeout, bool force);
  // The Python face's link by HCCL rank table (the vendor's LLMDataDistV2::Link): cluster c of
  // `cluster2rank` is rank cluster2rank[c] of `rank_table`, and every rank listens at its
  // device_ip:device_port (ascendless_rank_table_address). This instance starts listening at its
  // own rank's address, then connects to every other rank, waiting for each to come up for at
  // most HCCL_CONNECT_TIMEOUT seconds; the clusters are then linked as LinkLlmClusters links them.
  Status LinkComm(const std::string &comm_name, const std::map<uint64_t, uint32_t> &cluster2rank,
                  const std::string &rank_table, uint64_t &comm_id);
  Status UnlinkComm(uint64_t comm_id);
  // RegisterMemStatus of a communicator: 0 OK (its links are up: a peer's caches are looked up
  // at each transfer, so nothing is left to prepare once LinkComm returns).
  Status QueryRegisterMemStatus(uint64_t comm_id, int32_t &status);
  // `keyed_model_id` < 0: the next cache id; else the id of that BlocksCacheKey model id.
  Status Register(const CacheDesc &desc, const std::vector<uint64_t> &addrs, int64_t keyed_model_id,
                  int64_t &cache_id);
  Status Unregister(int64_t cache_id);
  Status PullCache(const CacheIndex &src, const Cache &dst, uint32_t batch_index, int64_t size,
                   const KvCacheExtParam &ext);
  Status PullBlocks(const CacheIndex &src, const Cache &dst, const std::vector<uint64_t> &src_blocks,
                    const std::vector<uint64_t> &dst_blocks, const KvCacheExtParam &ext);
  Status PushCache(const Cache &src, const CacheIndex &dst, uint32_t src_batch_index, int64_t size,
                   const KvCacheExtParam &ext);
  Status PushBlocks(const Cache &src, const CacheIndex &dst, const std::vector<uint64_t> &src_blocks,
                    const std::vector<uint64_t> &dst_blocks, const KvCacheExtParam &ext);

 private:
  Status CheckInitialized() const;
  // What Link and Unlink both need: an initialized instance, 1 to 16 clusters, a time-out > 0.
  Status CheckClusters(const std::vector<ClusterInfo> &clusters, int32_t timeout) const;
  // (Re)starts the engine as `name` and registers every cache again with its tags.
  Status StartEngine(const std::string &name, const std::vector<std::string> &keys,
                     const std::vector<std::string> &values);
  Status RegisterTensors(int64_t cache_id, Registered &cache);
  Status Ranges(uint32_t num_tensors, const KvCacheExtParam &ext, TensorRange &range) const;
  Status PeerTensors(const std::string &remote, int64_t remote_cache, const TensorRange &range,
                     std::vector<PeerTensor> &out);
  // A transfer between local cache `cache_id` and the remote cache `remote` of `cluster`:
  // rows copied whole, or one pair of rows of which `bytes` from the row starts.
  Status Transfer(bool pull, uint64_t cluster, int64_t cache_id, int64_t remote_cache, const Rows &rows,
                  int64_t bytes, const KvCacheExtParam &ext);

  // Waits until `remote` listens and connects to it, or until `deadline_ms` (steady clock).
  Status ConnectWhenUp(const std::string &remote, int64_t deadline_ms, const std::string &who);
  // The engine listening at `own` (the instance's rank in a rank table), started there if the
  // instance is a client with no links.
  Status ListenAt(const std::string &own);

  uint64_t cluster_id_;
  LlmRole role_;
  ascendless_face::EngineHandle engine_;
  std::mutex mutex_;  // every member but the transfers themselves
  bool initialized_ = false;
  int32_t device_id_ = 0;  // the device Initialize set (llm.DeviceId)
  std::string name_;  // the engine's name: the listen address, or "127.0.0.1" for a client
  std::vector<std::string> option_keys_;  // engine options passed through (GlobalResourceConfig...)
  std::vector<std::string> option_values_;
  int32_t wait_ms_ = 1000;
  int64_t next_cache_id_ = 1;
  std::map<int64_t, Registered> caches_;
  std::map<uint64_t, std::string> links_;  // cluster id -> engine name of that cluster
  std::mutex comm_mutex_;  // one LinkComm at a time (held while waiting for peers, mutex_ is not)
  uint64_t next_comm_id_ = 1;  // as the vendor's: comm ids count from 1
  std::map<uint64_t, std::vector<uint64_t>> comms_;  // comm id -> the clusters it linked
};

}  // namespace face
}  // namespace llm_datadist

#endif  // ASCENDLESS_SRC_CXX_LLM_DATADIST_FACE_H_
