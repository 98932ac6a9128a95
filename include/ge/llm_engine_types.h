/*
 * ge/llm_engine_types.h - part of ascendless.
 * Mirrors the vendor interface of the same name (hicann/hixl include/llm_datadist/, which the
 * vendor installs as include/ge/): the role names and option keys of the LLM engine.
 */
#ifndef LLM_ENGINE_INC_EXTERNAL_LLM_ENGINE_TYPES_H
#define LLM_ENGINE_INC_EXTERNAL_LLM_ENGINE_TYPES_H

namespace llm {
constexpr const char kPrompt[] = "Prompt";
constexpr const char kDecoder[] = "Decoder";
constexpr const char LLM_OPTION_CLUSTER_INFO[] = "llm.ClusterInfo";
constexpr const char LLM_OPTION_ROLE[] = "llm.Role";
constexpr const char LLM_OPTION_SYNC_KV_CACHE_WAIT_TIME[] = "llm.SyncKvCacheWaitTime";
constexpr const char LLM_OPTION_OUTPUT_MAX_SIZE[] = "llm.OutputMaxSize";
constexpr const char LLM_OPTION_ENABLE_SWITCH_ROLE[] = "llm.EnableSwitchRole";
constexpr const char LLM_OPTION_BUF_POOL_CFG[] = "llm.BufPoolCfg";
}  // namespace llm

#endif  // LLM_ENGINE_INC_EXTERNAL_LLM_ENGINE_TYPES_H
