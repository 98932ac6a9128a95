// ge/llm_error_codes.h and ge/llm_engine_types.h say what the LLM-DataDist spec says
// (spec/llm-datadist.md sections 3 and 4: 0x5010B000 + n). Compiled, not run.
#include <cstring>

#include "ge/llm_engine_types.h"
#include "ge/llm_error_codes.h"

static_assert(ge::LLM_WAIT_PROC_TIMEOUT == 0x5010B001U && ge::LLM_KV_CACHE_NOT_EXIST == 0x5010B002U, "codes");
static_assert(ge::LLM_REPEAT_REQUEST == 0x5010B003U && ge::LLM_PARAM_INVALID == 0x5010B005U, "codes");
static_assert(ge::LLM_NOT_YET_LINK == 0x5010B007U && ge::LLM_ALREADY_LINK == 0x5010B008U, "codes");
static_assert(ge::LLM_LINK_FAILED == 0x5010B009U && ge::LLM_UNLINK_FAILED == 0x5010B00AU, "codes");
static_assert(ge::LLM_NOTIFY_PROMPT_UNLINK_FAILED == 0x5010B00BU && ge::LLM_CLUSTER_NUM_EXCEED_LIMIT == 0x5010B00CU,
              "codes");
static_assert(ge::LLM_PROCESSING_LINK == 0x5010B00DU && ge::LLM_DEVICE_OUT_OF_MEMORY == 0x5010B00EU, "codes");
static_assert(ge::LLM_NO_FREE_BLOCK == 0x5010B012U && ge::LLM_CACHE_ID_ALREADY_EXIST == 0x5010B017U, "codes");
static_assert(ge::LLM_EXIST_LINK == 0x5010B018U && ge::LLM_FEATURE_NOT_ENABLED == 0x5010B019U, "codes");
static_assert(ge::LLM_TIMEOUT == 0x5010B01AU && ge::LLM_LINK_BUSY == 0x5010B01BU && ge::LLM_OUT_OF_MEMORY == 0x5010B01CU,
              "codes");

bool options_are_the_vendors();
bool options_are_the_vendors() {
  return std::strcmp(llm::LLM_OPTION_SYNC_KV_CACHE_WAIT_TIME, "llm.SyncKvCacheWaitTime") == 0 &&
         std::strcmp(llm::LLM_OPTION_CLUSTER_INFO, "llm.ClusterInfo") == 0 && std::strcmp(llm::kPrompt, "Prompt") == 0;
}
