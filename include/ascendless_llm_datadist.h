/* ascendless_llm_datadist.h - part of ascendless (not a vendor header).
 *
 * LLM-DataDist in C: the calls of llm_datadist::LlmDataDist (llm_datadist/llm_datadist.h) on
 * plain C types, for callers that cannot construct C++ objects, above all the Python package
 * `llm_datadist` (through ctypes). An instance here is the same object the C++ class holds, so
 * both behave alike: the same options, statuses (ge/llm_error_codes.h: LLM_SUCCESS 0,
 * LLM_PARAM_INVALID 0x5010B001, ...) and messages (aclGetRecentErrMsg).
 *
 * One addition: a cache registered with a BlocksCacheKey model id (`keyed_model_id` >= 0) gets
 * the cache id ascendless_llm_blocks_key_cache_id gives for that model id, so a peer that knows
 * the key (the Python face's BlocksCacheKey(cluster_id, model_id)) knows the id.
 *
 * Pointers may be NULL where a count is 0; otherwise NULL is LLM_PARAM_INVALID. No call
 * blocks longer than the time-out it is given or the instance's llm.SyncKvCacheWaitTime.
 */
#ifndef ASCENDLESS_LLM_DATADIST_H
#define ASCENDLESS_LLM_DATADIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An LLM-DataDist instance (llm_datadist::LlmDataDist). */
typedef struct AscendlessLlmDataDist AscendlessLlmDataDist;

/* A cluster to link or unlink: its id and its listen addresses (LinkLlmClusters takes exactly
 * one remote address: "ip" and port; unlink needs only the id). */
typedef struct AscendlessLlmCluster {
  uint64_t remote_cluster_id;
  const char *const *remote_ips;
  const uint16_t *remote_ports;
  size_t remote_ip_count;
} AscendlessLlmCluster;

/* A cache's layout (llm_datadist::CacheDesc): `data_type` is a ge::DataType, `placement` 0
 * host or 1 device, `shape[0]` the batch or block count. */
typedef struct AscendlessLlmCacheDesc {
  uint32_t num_tensors;
  int32_t data_type;
  uint32_t placement;
  const int64_t *shape;
  size_t shape_len;
} AscendlessLlmCacheDesc;

/* Which layers move (llm_datadist::KvCacheExtParam): inclusive [first, last] on the source
 * and the destination side, -1 and -1 on both for every tensor. */
typedef struct AscendlessLlmLayers {
  int32_t src_first;
  int32_t src_last;
  int32_t dst_first;
  int32_t dst_last;
  uint32_t tensor_num_per_layer;
} AscendlessLlmLayers;

/* LlmDataDist(cluster_id, role): role 1 prompt, 2 decoder, 3 mix (checked by initialize). */
uint32_t ascendless_llm_create(uint64_t cluster_id, int32_t role, AscendlessLlmDataDist **out);
/* Finalizes the instance if it is initialized, then frees it. NULL does nothing. */
void ascendless_llm_destroy(AscendlessLlmDataDist *dd);

uint32_t ascendless_llm_initialize(AscendlessLlmDataDist *dd, const char *const *keys, const char *const *values,
                                   size_t count);
void ascendless_llm_finalize(AscendlessLlmDataDist *dd);
uint32_t ascendless_llm_set_role(AscendlessLlmDataDist *dd, int32_t role, const char *const *keys,
                                 const char *const *values, size_t count);

/* LinkLlmClusters / UnlinkLlmClusters: `rets` has room for `count` statuses, one per cluster. */
uint32_t ascendless_llm_link(AscendlessLlmDataDist *dd, const AscendlessLlmCluster *clusters, size_t count,
                             int32_t timeout_in_millis, uint32_t *rets);
uint32_t ascendless_llm_unlink(AscendlessLlmDataDist *dd, const AscendlessLlmCluster *clusters, size_t count,
                               int32_t timeout_in_millis, int32_t force, uint32_t *rets);

/* The Python package's link(comm_name, cluster_rank_info, rank_table): cluster cluster_ids[i] is
 * rank rank_ids[i] of `rank_table`, an HCCL rank table (JSON text), in which every rank listens
 * at its device_ip:device_port (16666 when not given; ascendless_rank_table_address). The
 * instance listens at its own rank's address (it must be a client, or already listen there),
 * then waits for every other rank to listen and links it, for at most HCCL_CONNECT_TIMEOUT
 * seconds (default 120): LLM_LINK_FAILED when a rank does not come up or the table is refused,
 * LLM_ALREADY_LINK for a cluster linked already. `*comm_id` names the communicator after. */
uint32_t ascendless_llm_link_comm(AscendlessLlmDataDist *dd, const char *comm_name, const uint64_t *cluster_ids,
                                  const uint32_t *rank_ids, size_t count, const char *rank_table, uint64_t *comm_id);
/* unlink(comm_id): unlinks every cluster of the communicator (LLM_NOT_YET_LINK if unknown). */
uint32_t ascendless_llm_unlink_comm(AscendlessLlmDataDist *dd, uint64_t comm_id);
/* query_register_mem_status(comm_id): `*status` 0 (RegisterMemStatus.OK) once linked; the
 * peers' caches are found at each transfer, so nothing stays to prepare. */
uint32_t ascendless_llm_query_register_mem_status(AscendlessLlmDataDist *dd, uint64_t comm_id, int32_t *status);

/* RegisterKvCache, with `keyed_model_id` -1 (the next id) or a BlocksCacheKey model id. */
uint32_t ascendless_llm_register(AscendlessLlmDataDist *dd, const AscendlessLlmCacheDesc *desc,
                                 const uint64_t *addrs, size_t addr_count, int64_t keyed_model_id,
                                 int64_t *cache_id);
uint32_t ascendless_llm_unregister(AscendlessLlmDataDist *dd, int64_t cache_id);
/* The cache id of BlocksCacheKey model id `model_id`: LLM_PARAM_INVALID if none can have it. */
uint32_t ascendless_llm_blocks_key_cache_id(int64_t model_id, int64_t *cache_id);

/* PullKvCache: batch `remote_batch` of cache `remote_cache_id` of `cluster_id` into batch
 * `local_batch` of the local cache; `size` -1 or the bytes of each tensor's batch to move. */
uint32_t ascendless_llm_pull_cache(AscendlessLlmDataDist *dd, uint64_t cluster_id, int64_t remote_cache_id,
                                   uint32_t remote_batch, int64_t local_cache_id, uint32_t local_batch, int64_t size,
                                   const AscendlessLlmLayers *layers);
/* PullKvBlocks: remote block remote_blocks[i] into local block local_blocks[i]. */
uint32_t ascendless_llm_pull_blocks(AscendlessLlmDataDist *dd, uint64_t cluster_id, int64_t remote_cache_id,
                                    const uint64_t *remote_blocks, size_t remote_count, int64_t local_cache_id,
                                    const uint64_t *local_blocks, size_t local_count,
                                    const AscendlessLlmLayers *layers);
/* PushKvCache: local batch `local_batch` into remote batch `remote_batch`; `local_placement`
 * is the local cache's (a push needs a device cache, as the vendor's). */
uint32_t ascendless_llm_push_cache(AscendlessLlmDataDist *dd, int64_t local_cache_id, uint32_t local_placement,
                                   uint32_t local_batch, uint64_t cluster_id, int64_t remote_cache_id,
                                   uint32_t remote_batch, int64_t size, const AscendlessLlmLayers *layers);
/* PushKvBlocks: local block local_blocks[i] into remote block remote_blocks[i]. */
uint32_t ascendless_llm_push_blocks(AscendlessLlmDataDist *dd, int64_t local_cache_id, uint32_t local_placement,
                                    const uint64_t *local_blocks, size_t local_count, uint64_t cluster_id,
                                    int64_t remote_cache_id, const uint64_t *remote_blocks, size_t remote_count,
                                    const AscendlessLlmLayers *layers);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* ASCENDLESS_LLM_DATADIST_H */
