/*
 * llm_datadist/llm_datadist.h - part of ascendless.
 * Mirrors the vendor interface of llm_datadist::LlmDataDist, the KV-cache API of
 * libllm_datadist.so: the same option keys, status codes, structs (layouts checked in
 * src/cxx/llm_datadist.cpp) and members, declared exactly as the vendor declares them, so the
 * exported symbol names are identical. It is a face of the same transfer engine as
 * adxl::AdxlEngine and hixl::Hixl (docs/llm-datadist.md).
 */
#ifndef CANN_GRAPH_ENGINE_INC_EXTERNAL_LLM_DATADIST_LLM_DATA_DIST_H_
#define CANN_GRAPH_ENGINE_INC_EXTERNAL_LLM_DATADIST_LLM_DATA_DIST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "external/ge_common/api_error_codes.h"

#ifndef ASCEND_FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace llm_datadist {
namespace {
constexpr uint8_t kDefaultTensorNumPerLayer = 2U;
}
using Status = ge::Status;
using AscendString = ge::AscendString;
using DataType = ge::DataType;

// Option keys of Initialize and SetRole (values are strings).
constexpr const char OPTION_LISTEN_IP_INFO[] = "llm.ListenIpInfo";
constexpr const char OPTION_DEVICE_ID[] = "llm.DeviceId";
constexpr const char OPTION_SYNC_CACHE_WAIT_TIME[] = "llm.SyncKvCacheWaitTime";
constexpr const char OPTION_BUF_POOL_CFG[] = "llm.BufPoolCfg";
constexpr const char OPTION_ENABLE_SET_ROLE[] = "llm.EnableSwitchRole";
constexpr const char OPTION_LOCAL_COMM_RES[] = "llm.LocalCommRes";
constexpr const char OPTION_TRANSFER_BACKEND[] = "llm.TransferBackend";
constexpr const char OPTION_GLOBAL_RESOURCE_CONFIG[] = "llm.GlobalResourceConfig";

// Status codes: GE_ERRORNO_DEFINE(1, 1, 0, 8, 11, name, n) = 0x5010B000 | n.
constexpr Status LLM_SUCCESS = 0x0U;
constexpr Status LLM_FAILED = 0xFFFFFFFFU;
constexpr Status LLM_WAIT_PROC_TIMEOUT = 0x5010B001U;
constexpr Status LLM_KV_CACHE_NOT_EXIST = 0x5010B002U;
constexpr Status LLM_PARAM_INVALID = 0x5010B005U;
constexpr Status LLM_NOT_YET_LINK = 0x5010B007U;
constexpr Status LLM_ALREADY_LINK = 0x5010B008U;
constexpr Status LLM_LINK_FAILED = 0x5010B009U;
constexpr Status LLM_UNLINK_FAILED = 0x5010B00AU;
constexpr Status LLM_NOTIFY_PROMPT_UNLINK_FAILED = 0x5010B00BU;
constexpr Status LLM_CLUSTER_NUM_EXCEED_LIMIT = 0x5010B00CU;
constexpr Status LLM_PROCESSING_LINK = 0x5010B00DU;
constexpr Status LLM_DEVICE_OUT_OF_MEMORY = 0x5010B00EU;
constexpr Status LLM_EXIST_LINK = 0x5010B018U;
constexpr Status LLM_FEATURE_NOT_ENABLED = 0x5010B019U;
constexpr Status LLM_TIMEOUT = 0x5010B01AU;
constexpr Status LLM_LINK_BUSY = 0x5010B01BU;
constexpr Status LLM_OUT_OF_MEMORY = 0x5010B01CU;

// The data types of a cache (ge::DataType, graph/types.h).
using ge::DT_BF16;
using ge::DT_BOOL;
using ge::DT_COMPLEX128;
using ge::DT_COMPLEX32;
using ge::DT_COMPLEX64;
using ge::DT_DOUBLE;
using ge::DT_DUAL;
using ge::DT_DUAL_SUB_INT8;
using ge::DT_DUAL_SUB_UINT8;
using ge::DT_FLOAT;
using ge::DT_FLOAT16;
using ge::DT_FLOAT4_E1M2;
using ge::DT_FLOAT4_E2M1;
using ge::DT_FLOAT6_E2M3;
using ge::DT_FLOAT6_E3M2;
using ge::DT_FLOAT8_E4M3FN;
using ge::DT_FLOAT8_E5M2;
using ge::DT_FLOAT8_E8M0;
using ge::DT_HIFLOAT8;
using ge::DT_INT16;
using ge::DT_INT2;
using ge::DT_INT32;
using ge::DT_INT4;
using ge::DT_INT64;
using ge::DT_INT8;
using ge::DT_QINT16;
using ge::DT_QINT32;
using ge::DT_QINT8;
using ge::DT_QUINT16;
using ge::DT_QUINT8;
using ge::DT_RESOURCE;
using ge::DT_STRING;
using ge::DT_STRING_REF;
using ge::DT_UINT1;
using ge::DT_UINT16;
using ge::DT_UINT2;
using ge::DT_UINT32;
using ge::DT_UINT64;
using ge::DT_UINT8;
using ge::DT_UNDEFINED;
using ge::DT_VARIANT;

/// An IPv4 address (dotted) and port of one end of a link.
struct IpInfo {
  AscendString ip;
  uint16_t port = 0U;
  uint8_t reserved[128];
};

/// A remote cluster to link: its id (the one peers name in CacheIndex) and its address.
struct ClusterInfo {
  uint64_t remote_cluster_id = 0U;
  int32_t remote_role_type = 0;
  std::vector<IpInfo> local_ip_infos;
  std::vector<IpInfo> remote_ip_infos;
  uint8_t reserved[128];
};

/// The role an instance is labelled with (it does not change who listens or who transfers).
enum class LlmRole : int32_t { kPrompt = 1, kDecoder = 2, kMix = 3, kEnd };

/// A cache of a remote cluster: cluster, cache id (as its RegisterKvCache returned it), batch.
struct CacheIndex {
  uint64_t cluster_id;
  int64_t cache_id;
  uint32_t batch_index;
  uint8_t reserved[128];
};

enum class CachePlacement : uint32_t {
  kHost = 0U,
  kDevice = 1U,
};

/// `num_tensors` tensors of `shape` (dim 0: batches or blocks) and `data_type`.
struct CacheDesc {
  CachePlacement placement = CachePlacement::kDevice;
  uint32_t num_tensors = 0U;
  DataType data_type = DT_UNDEFINED;
  std::vector<int64_t> shape;
  uint8_t reserved[128];
};

/// A local cache: its id and, for AllocateCache, its tensors' addresses.
struct Cache {
  int64_t cache_id = -1;
  std::vector<uintptr_t> tensor_addrs;
  CacheDesc cache_desc;
  uint8_t reserved[128];
};

/// Layer ranges of a transfer: tensors grouped `tensor_num_per_layer` to a layer; {-1, -1} all.
struct KvCacheExtParam {
  std::pair<int32_t, int32_t> src_layer_range = {-1, -1};
  std::pair<int32_t, int32_t> dst_layer_range{-1, -1};
  uint8_t tensor_num_per_layer = kDefaultTensorNumPerLayer;
  uint8_t reserved[127];
};

struct RegisterCfg {
  uint8_t reserved[128] = {0};
};

class ASCEND_FUNC_VISIBILITY LlmDataDist {
 public:
  /// An instance that is not initialised; `cluster_id` is how peers name it.
  LlmDataDist(uint64_t cluster_id, LlmRole role);

  /// Finalizes the instance if it was initialised.
  ~LlmDataDist();

  /// Starts the instance: `llm.DeviceId` required; `llm.ListenIpInfo` makes it listen.
  Status Initialize(const std::map<AscendString, AscendString> &options);

  /// Unlinks every cluster, unregisters every cache and stops listening.
  void Finalize();

  /// Changes the role, and listens or stops listening as `llm.ListenIpInfo` says; no links allowed.
  Status SetRole(LlmRole role, const std::map<AscendString, AscendString> &options = {});

  /// Links to each cluster (at most 16); `rets` has one status per cluster.
  Status LinkLlmClusters(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                         int32_t timeout_in_millis = 1000);

  /// Unlinks each cluster; `force_flag` releases only the local end (after a peer failed).
  Status UnlinkLlmClusters(const std::vector<ClusterInfo> &clusters, std::vector<Status> &rets,
                           int32_t timeout_in_millis = 1000, bool force_flag = false);

  /// Unsupported, as on the vendor's library: LLM_FEATURE_NOT_ENABLED.
  Status AllocateCache(const CacheDesc &cache_desc, Cache &cache);

  /// Unsupported, as on the vendor's library: LLM_FEATURE_NOT_ENABLED.
  Status DeallocateCache(int64_t cache_id);

  /// Copies a remote cache's batch into the local cache `dst_cache.cache_id` at `batch_index`.
  Status PullKvCache(const CacheIndex &src_cache_index, const Cache &dst_cache, uint32_t batch_index = 0U,
                     int64_t size = -1, const KvCacheExtParam &ext_param = {});

  /// Copies remote block src_blocks[i] into local block dst_blocks[i] of every tensor in range.
  Status PullKvBlocks(const CacheIndex &src_cache_index, const Cache &dst_cache,
                      const std::vector<uint64_t> &src_blocks, const std::vector<uint64_t> &dst_blocks,
                      const KvCacheExtParam &ext_param = {});

  /// Unsupported, as on the vendor's library: LLM_FEATURE_NOT_ENABLED.
  Status CopyKvCache(const Cache &src_cache, const Cache &dst_cache, uint32_t src_batch_index = 0U,
                     uint32_t dst_batch_index = 0U, uint64_t offset = 0U, int64_t size = -1);

  /// Unsupported, as on the vendor's library: LLM_FEATURE_NOT_ENABLED.
  Status CopyKvBlocks(const Cache &src_cache, const Cache &dst_cache, const std::vector<uint64_t> &src_blocks,
                      const std::vector<std::vector<uint64_t>> &dst_blocks_list);

  /// Writes the local cache's batch `src_batch_index` into a remote cache's batch.
  Status PushKvCache(const Cache &src_cache, const CacheIndex &dst_cache_index, uint32_t src_batch_index = 0U,
                     int64_t size = -1, const KvCacheExtParam &ext_param = {});

  /// Writes local block src_blocks[i] into remote block dst_blocks[i] of every tensor in range.
  Status PushKvBlocks(const Cache &src_cache, const CacheIndex &dst_cache_index,
                      const std::vector<uint64_t> &src_blocks, const std::vector<uint64_t> &dst_blocks,
                      const KvCacheExtParam &ext_param = {});

  /// Registers caller memory, one address per tensor; `cache_id` is what peers name it by.
  Status RegisterKvCache(const CacheDesc &cache_desc, const std::vector<uint64_t> &addrs, const RegisterCfg &cfg,
                         int64_t &cache_id);

  /// Unregisters a cache (an unknown id: LLM_SUCCESS).
  Status UnregisterKvCache(int64_t cache_id);

 private:
  class LlmDataDistImpl;
  std::unique_ptr<LlmDataDistImpl> impl_;
};
}  // namespace llm_datadist

#endif  // CANN_GRAPH_ENGINE_INC_EXTERNAL_LLM_DATADIST_LLM_DATA_DIST_H_
