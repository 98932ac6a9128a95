// llm_datadist.cpp - part of ascendless.
// Implements the vendor interface llm_datadist::LlmDataDist (llm_datadist/llm_datadist.h): each
// member forwards to face::DataDist (llm_datadist_face.cpp, which the Python package's C API
// calls too), catching what could throw (memory) as LLM_FAILED.

#include "llm_datadist/llm_datadist.h"

#include <cstddef>
#include <new>

#include "llm_datadist_face.h"

namespace llm_datadist {

static_assert(sizeof(IpInfo) == 152 && offsetof(IpInfo, port) == 16, "IpInfo is the vendor's");
static_assert(sizeof(ClusterInfo) == 192 && offsetof(ClusterInfo, remote_ip_infos) == 40, "ClusterInfo");
static_assert(sizeof(CacheIndex) == 152 && offsetof(CacheIndex, batch_index) == 16, "CacheIndex");
static_assert(sizeof(CacheDesc) == 168 && offsetof(CacheDesc, shape) == 16, "CacheDesc");
static_assert(sizeof(Cache) == 328 && offsetof(Cache, cache_desc) == 32, "Cache");
static_assert(sizeof(KvCacheExtParam) == 144 && offsetof(KvCacheExtParam, tensor_num_per_layer) == 16,
              "KvCacheExtParam");
static_assert(sizeof(RegisterCfg) == 128 && sizeof(LlmDataDist) == 8, "RegisterCfg, LlmDataDist");

using face::fail;

// Hidden: the class it is nested in is exported, and it is the face's instance by another name.
class __attribute__((visibility("hidden"))) LlmDataDist::LlmDataDistImpl : public face::DataDist {
 public:
  using face::DataDist::DataDist;
};

// Runs `call` on the impl: LLM_FAILED with a message when there is none or memory runs out.
#define FORWARD(what, call)                                                \
  if (!impl_) {                                                            \
    return fail(LLM_FAILED, "the instance could not be created (memory)"); \
  }                                                                        \
  try {                                                                    \
    return impl_->call;                                                    \
  } catch (...) {                                                          \
    return fail(LLM_FAILED, what ": out of memory");                       \
  }

LlmDataDist::LlmDataDist(uint64_t cluster_id, LlmRole role) {
  impl_.reset(new (std::nothrow) LlmDataDistImpl(cluster_id, role));
}

LlmDataDist::~LlmDataDist() = default;  // the impl's engine handle finalizes and destroys the engine

Status LlmDataDist::Initialize(const std::map<AscendString, AscendString> &options) {
  FORWARD("Initialize", Initialize(options))
}

void LlmDataDist::Finalize() {
  if (impl_) {
    impl_->Finalize();
  }
}

Status LlmDataDist::SetRole(LlmRole role, const std::map<AscendString, AscendString> &options) {
  FORWARD("SetRole", SetRole(role, options))
}

Status LlmDataDist::LinkLlmClusters(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                                    int32_t timeout_in_millis) {
  FORWARD("LinkLlmClusters", Link(clusters, rets, timeout_in_millis))
}

Status LlmDataDist::UnlinkLlmClusters(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                                      int32_t timeout_in_millis, bool force_flag) {
  FORWARD("UnlinkLlmClusters", Unlink(clusters, rets, timeout_in_millis, force_flag))
}

Status LlmDataDist::AllocateCache(const CacheDesc &, Cache &) {
  return fail(LLM_FEATURE_NOT_ENABLED, "AllocateCache is not supported (as on the vendor's library): "
                                       "allocate the memory and call RegisterKvCache");
}

Status LlmDataDist::DeallocateCache(int64_t) {
  return fail(LLM_FEATURE_NOT_ENABLED, "DeallocateCache is not supported (as on the vendor's library): "
                                       "use UnregisterKvCache");
}

Status LlmDataDist::CopyKvCache(const Cache &, const Cache &, uint32_t, uint32_t, uint64_t, int64_t) {
  return fail(LLM_FEATURE_NOT_ENABLED, "CopyKvCache is not supported (as on the vendor's library)");
}

Status LlmDataDist::CopyKvBlocks(const Cache &, const Cache &, const std::vector<uint64_t> &,
                                 const std::vector<std::vector<uint64_t>> &) {
  return fail(LLM_FEATURE_NOT_ENABLED, "CopyKvBlocks is not supported (as on the vendor's library)");
}

Status LlmDataDist::PullKvCache(const CacheIndex &src_cache_index, const Cache &dst_cache, uint32_t batch_index,
                                int64_t size, const KvCacheExtParam &ext_param) {
  FORWARD("PullKvCache", PullCache(src_cache_index, dst_cache, batch_index, size, ext_param))
}

Status LlmDataDist::PullKvBlocks(const CacheIndex &src_cache_index, const Cache &dst_cache,
                                 const std::vector<uint64_t> &src_blocks, const std::vector<uint64_t> &dst_blocks,
                                 const KvCacheExtParam &ext_param) {
  FORWARD("PullKvBlocks", PullBlocks(src_cache_index, dst_cache, src_blocks, dst_blocks, ext_param))
}

Status LlmDataDist::PushKvCache(const Cache &src_cache, const CacheIndex &dst_cache_index, uint32_t src_batch_index,
                                int64_t size, const KvCacheExtParam &ext_param) {
  FORWARD("PushKvCache", PushCache(src_cache, dst_cache_index, src_batch_index, size, ext_param))
}

Status LlmDataDist::PushKvBlocks(const Cache &src_cache, const CacheIndex &dst_cache_index,
                                 const std::vector<uint64_t> &src_blocks, const std::vector<uint64_t> &dst_blocks,
                                 const KvCacheExtParam &ext_param) {
  FORWARD("PushKvBlocks", PushBlocks(src_cache, dst_cache_index, src_blocks, dst_blocks, ext_param))
}

Status LlmDataDist::RegisterKvCache(const CacheDesc &cache_desc, const std::vector<uint64_t> &addrs,
                                    const RegisterCfg &, int64_t &cache_id) {
  FORWARD("RegisterKvCache", Register(cache_desc, addrs, -1, cache_id))
}

Status LlmDataDist::UnregisterKvCache(int64_t cache_id) {
  FORWARD("UnregisterKvCache", Unregister(cache_id))
}

}  // namespace llm_datadist
