// llm_datadist_c.cpp - part of ascendless.
// The C API of ascendless_llm_datadist.h: LLM-DataDist on plain C types for the Python package
// (ctypes), each call a conversion to the vendor's C++ types and one call of face::DataDist,
// the object llm_datadist::LlmDataDist forwards to. Pointers are checked here; what could
// throw (memory) is caught and is LLM_FAILED.

#include "ascendless_llm_datadist.h"

#include <algorithm>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "llm_datadist_face.h"

using llm_datadist::AscendString;
using llm_datadist::Cache;
using llm_datadist::CacheDesc;
using llm_datadist::CacheIndex;
using llm_datadist::CachePlacement;
using llm_datadist::ClusterInfo;
using llm_datadist::KvCacheExtParam;
using llm_datadist::LlmRole;
using llm_datadist::Status;
using llm_datadist::face::fail;

struct AscendlessLlmDataDist {
  AscendlessLlmDataDist(uint64_t cluster_id, LlmRole role) : dd(cluster_id, role) {}
  llm_datadist::face::DataDist dd;
};

namespace {

// Runs `body` (returning a Status) with a checked instance, catching what could throw.
template <class Body>
Status guarded(AscendlessLlmDataDist *dd, const char *what, Body body) {
  if (dd == nullptr) {
    return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": the instance is NULL");
  }
  try {
    return body(dd->dd);
  } catch (...) {
    return fail(llm_datadist::LLM_FAILED, std::string(what) + ": out of memory");
  }
}

Status options(const char *what, const char *const *keys, const char *const *values, size_t count,
               std::map<AscendString, AscendString> &out) {
  if (count != 0U && (keys == nullptr || values == nullptr)) {
    return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": NULL option arrays");
  }
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr || values[i] == nullptr) {
      return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": option " + std::to_string(i) + " is NULL");
    }
    out[AscendString(keys[i])] = AscendString(values[i]);
  }
  return llm_datadist::LLM_SUCCESS;
}

Status clusters_of(const char *what, const AscendlessLlmCluster *clusters, size_t count,
                   std::vector<ClusterInfo> &out) {
  if (count != 0U && clusters == nullptr) {
    return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": clusters is NULL");
  }
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const AscendlessLlmCluster &c = clusters[i];
    out[i].remote_cluster_id = c.remote_cluster_id;
    if (c.remote_ip_count != 0U && (c.remote_ips == nullptr || c.remote_ports == nullptr)) {
      return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": NULL address arrays");
    }
    for (size_t j = 0; j < c.remote_ip_count; ++j) {
      if (c.remote_ips[j] == nullptr) {
        return fail(llm_datadist::LLM_PARAM_INVALID, std::string(what) + ": a remote ip is NULL");
      }
      llm_datadist::IpInfo ip;
      ip.ip = AscendString(c.remote_ips[j]);
      ip.port = c.remote_ports[j];
      out[i].remote_ip_infos.push_back(ip);
    }
  }
  return llm_datadist::LLM_SUCCESS;
}

Status layers_of(const AscendlessLlmLayers *layers, KvCacheExtParam &ext) {
  if (layers == nullptr) {
    return llm_datadist::LLM_SUCCESS;  // every tensor
  }
  if (layers->tensor_num_per_layer == 0U || layers->tensor_num_per_layer > 255U) {
    return fail(llm_datadist::LLM_PARAM_INVALID,
                "tensor_num_per_layer " + std::to_string(layers->tensor_num_per_layer) + ": 1 to 255");
  }
  ext.src_layer_range = {layers->src_first, layers->src_last};
  ext.dst_layer_range = {layers->dst_first, layers->dst_last};
  ext.tensor_num_per_layer = static_cast<uint8_t>(layers->tensor_num_per_layer);
  return llm_datadist::LLM_SUCCESS;
}

Status blocks_of(const char *which, const uint64_t *blocks, size_t count, std::vector<uint64_t> &out) {
  if (count != 0U && blocks == nullptr) {
    return fail(llm_datadist::LLM_PARAM_INVALID, std::string(which) + " blocks are NULL");
  }
  out.assign(blocks, blocks + count);
  return llm_datadist::LLM_SUCCESS;
}

CacheIndex index_of(uint64_t cluster_id, int64_t cache_id, uint32_t batch) {
  CacheIndex index{};
  index.cluster_id = cluster_id;
  index.cache_id = cache_id;
  index.batch_index = batch;
  return index;
}

Cache cache_of(int64_t cache_id, uint32_t placement) {
  Cache cache;
  cache.cache_id = cache_id;
  cache.cache_desc.placement = static_cast<CachePlacement>(placement);
  return cache;
}

#define CHECKED(expr)                            \
  do {                                           \
    Status checked_ = (expr);                    \
    if (checked_ != llm_datadist::LLM_SUCCESS) { \
      return checked_;                           \
    }                                            \
  } while (0)

}  // namespace

// Built with -fvisibility=hidden: these are the exports (src/cxx/faces.txt, face llm_datadist_c).
#pragma GCC visibility push(default)
extern "C" {

uint32_t ascendless_llm_create(uint64_t cluster_id, int32_t role, AscendlessLlmDataDist **out) {
  if (out == nullptr) {
    return fail(llm_datadist::LLM_PARAM_INVALID, "ascendless_llm_create: out is NULL");
  }
  *out = new (std::nothrow) AscendlessLlmDataDist(cluster_id, static_cast<LlmRole>(role));
  return *out == nullptr ? fail(llm_datadist::LLM_FAILED, "ascendless_llm_create: out of memory")
                         : llm_datadist::LLM_SUCCESS;
}

void ascendless_llm_destroy(AscendlessLlmDataDist *dd) {
  if (dd != nullptr) {
    dd->dd.Finalize();
    delete dd;
  }
}

uint32_t ascendless_llm_initialize(AscendlessLlmDataDist *dd, const char *const *keys, const char *const *values,
                                   size_t count) {
  return guarded(dd, "initialize", [&](llm_datadist::face::DataDist &d) {
    std::map<AscendString, AscendString> opts;
    CHECKED(options("initialize", keys, values, count, opts));
    return d.Initialize(opts);
  });
}

void ascendless_llm_finalize(AscendlessLlmDataDist *dd) {
  if (dd != nullptr) {
    dd->dd.Finalize();
  }
}

uint32_t ascendless_llm_set_role(AscendlessLlmDataDist *dd, int32_t role, const char *const *keys,
                                 const char *const *values, size_t count) {
  return guarded(dd, "set_role", [&](llm_datadist::face::DataDist &d) {
    std::map<AscendString, AscendString> opts;
    CHECKED(options("set_role", keys, values, count, opts));
    return d.SetRole(static_cast<LlmRole>(role), opts);
  });
}

uint32_t ascendless_llm_link(AscendlessLlmDataDist *dd, const AscendlessLlmCluster *clusters, size_t count,
                             int32_t timeout_in_millis, uint32_t *rets) {
  return guarded(dd, "link", [&](llm_datadist::face::DataDist &d) {
    std::vector<ClusterInfo> infos;
    CHECKED(clusters_of("link", clusters, count, infos));
    if (count != 0U && rets == nullptr) {
      return fail(llm_datadist::LLM_PARAM_INVALID, "link: rets is NULL");
    }
    std::vector<Status> statuses;
    Status ret = d.Link(infos, statuses, timeout_in_millis);
    std::copy(statuses.begin(), statuses.begin() + std::min(statuses.size(), count), rets);
    return ret;
  });
}

uint32_t ascendless_llm_unlink(AscendlessLlmDataDist *dd, const AscendlessLlmCluster *clusters, size_t count,
                               int32_t timeout_in_millis, int32_t force, uint32_t *rets) {
  return guarded(dd, "unlink", [&](llm_datadist::face::DataDist &d) {
    std::vector<ClusterInfo> infos;
    CHECKED(clusters_of("unlink", clusters, count, infos));
    if (count != 0U && rets == nullptr) {
      return fail(llm_datadist::LLM_PARAM_INVALID, "unlink: rets is NULL");
    }
    std::vector<Status> statuses;
    Status ret = d.Unlink(infos, statuses, timeout_in_millis, force != 0);
    std::copy(statuses.begin(), statuses.begin() + std::min(statuses.size(), count), rets);
    return ret;
  });
}

uint32_t ascendless_llm_link_comm(AscendlessLlmDataDist *dd, const char *comm_name, const uint64_t *cluster_ids,
                                  const uint32_t *rank_ids, size_t count, const char *rank_table, uint64_t *comm_id) {
  return guarded(dd, "link_comm", [&](llm_datadist::face::DataDist &d) {
    if (comm_name == nullptr || rank_table == nullptr || comm_id == nullptr ||
        (count != 0U && (cluster_ids == nullptr || rank_ids == nullptr))) {
      return fail(llm_datadist::LLM_PARAM_INVALID, "link_comm: comm_name, cluster_ids, rank_ids, rank_table or "
                                                   "comm_id is NULL");
    }
    std::map<uint64_t, uint32_t> cluster2rank;
    for (size_t i = 0; i < count; ++i) {
      if (!cluster2rank.emplace(cluster_ids[i], rank_ids[i]).second) {
        return fail(llm_datadist::LLM_PARAM_INVALID,
                    "link_comm: cluster " + std::to_string(cluster_ids[i]) + " is given twice");
      }
    }
    return d.LinkComm(comm_name, cluster2rank, rank_table, *comm_id);
  });
}

uint32_t ascendless_llm_unlink_comm(AscendlessLlmDataDist *dd, uint64_t comm_id) {
  return guarded(dd, "unlink_comm", [&](llm_datadist::face::DataDist &d) { return d.UnlinkComm(comm_id); });
}

uint32_t ascendless_llm_query_register_mem_status(AscendlessLlmDataDist *dd, uint64_t comm_id, int32_t *status) {
  return guarded(dd, "query_register_mem_status", [&](llm_datadist::face::DataDist &d) {
    if (status == nullptr) {
      return fail(llm_datadist::LLM_PARAM_INVALID, "query_register_mem_status: status is NULL");
    }
    return d.QueryRegisterMemStatus(comm_id, *status);
  });
}

uint32_t ascendless_llm_register(AscendlessLlmDataDist *dd, const AscendlessLlmCacheDesc *desc,
                                 const uint64_t *addrs, size_t addr_count, int64_t keyed_model_id,
                                 int64_t *cache_id) {
  return guarded(dd, "register", [&](llm_datadist::face::DataDist &d) {
    if (desc == nullptr || cache_id == nullptr || (addr_count != 0U && addrs == nullptr) ||
        (desc->shape_len != 0U && desc->shape == nullptr)) {
      return fail(llm_datadist::LLM_PARAM_INVALID, "register: desc, addrs, shape or cache_id is NULL");
    }
    CacheDesc cd;
    cd.num_tensors = desc->num_tensors;
    cd.data_type = static_cast<llm_datadist::DataType>(desc->data_type);
    cd.placement = static_cast<CachePlacement>(desc->placement);
    cd.shape.assign(desc->shape, desc->shape + desc->shape_len);
    std::vector<uint64_t> a(addrs, addrs + addr_count);
    return d.Register(cd, a, keyed_model_id < 0 ? -1 : keyed_model_id, *cache_id);
  });
}

uint32_t ascendless_llm_unregister(AscendlessLlmDataDist *dd, int64_t cache_id) {
  return guarded(dd, "unregister", [&](llm_datadist::face::DataDist &d) { return d.Unregister(cache_id); });
}

uint32_t ascendless_llm_blocks_key_cache_id(int64_t model_id, int64_t *cache_id) {
  using llm_datadist::face::kKeyedCacheIdBase;
  using llm_datadist::face::kMaxCacheId;
  if (cache_id == nullptr || model_id < 0 || model_id > kMaxCacheId - kKeyedCacheIdBase) {
    return fail(llm_datadist::LLM_PARAM_INVALID, "BlocksCacheKey model_id " + std::to_string(model_id) +
                                                     ": 0 to " + std::to_string(kMaxCacheId - kKeyedCacheIdBase));
  }
  *cache_id = kKeyedCacheIdBase + model_id;
  return llm_datadist::LLM_SUCCESS;
}

uint32_t ascendless_llm_pull_cache(AscendlessLlmDataDist *dd, uint64_t cluster_id, int64_t remote_cache_id,
                                   uint32_t remote_batch, int64_t local_cache_id, uint32_t local_batch, int64_t size,
                                   const AscendlessLlmLayers *layers) {
  return guarded(dd, "pull_cache", [&](llm_datadist::face::DataDist &d) {
    KvCacheExtParam ext;
    CHECKED(layers_of(layers, ext));
    return d.PullCache(index_of(cluster_id, remote_cache_id, remote_batch), cache_of(local_cache_id, 1U), local_batch,
                       size, ext);
  });
}

uint32_t ascendless_llm_pull_blocks(AscendlessLlmDataDist *dd, uint64_t cluster_id, int64_t remote_cache_id,
                                    const uint64_t *remote_blocks, size_t remote_count, int64_t local_cache_id,
                                    const uint64_t *local_blocks, size_t local_count,
                                    const AscendlessLlmLayers *layers) {
  return guarded(dd, "pull_blocks", [&](llm_datadist::face::DataDist &d) {
    KvCacheExtParam ext;
    CHECKED(layers_of(layers, ext));
    std::vector<uint64_t> src;
    std::vector<uint64_t> dst;
    CHECKED(blocks_of("remote", remote_blocks, remote_count, src));
    CHECKED(blocks_of("local", local_blocks, local_count, dst));
    return d.PullBlocks(index_of(cluster_id, remote_cache_id, 0U), cache_of(local_cache_id, 1U), src, dst, ext);
  });
}

uint32_t ascendless_llm_push_cache(AscendlessLlmDataDist *dd, int64_t local_cache_id, uint32_t local_placement,
                                   uint32_t local_batch, uint64_t cluster_id, int64_t remote_cache_id,
                                   uint32_t remote_batch, int64_t size, const AscendlessLlmLayers *layers) {
  return guarded(dd, "push_cache", [&](llm_datadist::face::DataDist &d) {
    KvCacheExtParam ext;
    CHECKED(layers_of(layers, ext));
    return d.PushCache(cache_of(local_cache_id, local_placement), index_of(cluster_id, remote_cache_id, remote_batch),
                       local_batch, size, ext);
  });
}

uint32_t ascendless_llm_push_blocks(AscendlessLlmDataDist *dd, int64_t local_cache_id, uint32_t local_placement,
                                    const uint64_t *local_blocks, size_t local_count, uint64_t cluster_id,
                                    int64_t remote_cache_id, const uint64_t *remote_blocks, size_t remote_count,
                                    const AscendlessLlmLayers *layers) {
  return guarded(dd, "push_blocks", [&](llm_datadist::face::DataDist &d) {
    KvCacheExtParam ext;
    CHECKED(layers_of(layers, ext));
    std::vector<uint64_t> src;
    std::vector<uint64_t> dst;
    CHECKED(blocks_of("local", local_blocks, local_count, src));
    CHECKED(blocks_of("remote", remote_blocks, remote_count, dst));
    return d.PushBlocks(cache_of(local_cache_id, local_placement), index_of(cluster_id, remote_cache_id, 0U), src, dst,
                        ext);
  });
}

}  // extern "C"
#pragma GCC visibility pop
