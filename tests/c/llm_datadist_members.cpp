// llm_datadist_members.cpp - part of ascendless.
// Takes the address of every member of llm_datadist::LlmDataDist as declared by
// include/llm_datadist/llm_datadist.h and defines nothing: the object's undefined symbols are
// the names the library must export. tests/c_abi.rs compiles it under both string ABIs and
// compares them with the vendor's list.
#include "llm_datadist/llm_datadist.h"

using namespace llm_datadist;

unsigned char sink[64];

template <typename T>
static void keep(T member) {
  static_assert(sizeof(T) <= sizeof(sink), "a member pointer fits");
  __builtin_memcpy(static_cast<void *>(sink), static_cast<const void *>(&member), sizeof(T));
}

void touch_every_member() {
  LlmDataDist *d = new LlmDataDist(1U, LlmRole::kPrompt);
  delete d;
  keep(&LlmDataDist::Initialize);
  keep(&LlmDataDist::Finalize);
  keep(&LlmDataDist::SetRole);
  keep(&LlmDataDist::LinkLlmClusters);
  keep(&LlmDataDist::UnlinkLlmClusters);
  keep(&LlmDataDist::AllocateCache);
  keep(&LlmDataDist::DeallocateCache);
  keep(&LlmDataDist::PullKvCache);
  keep(&LlmDataDist::PullKvBlocks);
  keep(&LlmDataDist::CopyKvCache);
  keep(&LlmDataDist::CopyKvBlocks);
  keep(&LlmDataDist::PushKvCache);
  keep(&LlmDataDist::PushKvBlocks);
  keep(&LlmDataDist::RegisterKvCache);
  keep(&LlmDataDist::UnregisterKvCache);
}
