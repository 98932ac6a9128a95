// engine_face.h - part of ascendless (internal, not installed).
// What the engine's C++ faces (adxl::AdxlEngine in adxl_engine.cpp, hixl::Hixl in hixl.cpp)
// share: the conversions between the vendor's C++ types and the native C API (ascendless.h).
// Each face's types live in its own namespace, so the helpers are templates over them; the
// faces keep only their members, each a call of the native function or of one helper here.
//
// Nothing here lets an exception escape: what could throw (allocating, filling the caller's
// containers) is caught and answered with the status FAILED (503900, the same in both faces).

#ifndef ASCENDLESS_SRC_CXX_ENGINE_FACE_H_
#define ASCENDLESS_SRC_CXX_ENGINE_FACE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <utility>
#include <vector>

#include "ascendless.h"

namespace ascendless_face {

// The vendor's FAILED status of both faces.
constexpr uint32_t kFailed = 503900U;

// The native engine behind one face object, made with it and destroyed (finalized first) with
// it. NULL if it could not be created: every call then fails in the native API with a message.
struct EngineHandle {
  AscendlessEngine engine = nullptr;
  EngineHandle() {
    if (ascendless_engine_create(&engine) != ADXL_SUCCESS) {
      engine = nullptr;
    }
  }
  ~EngineHandle() {
    if (engine != nullptr) {
      ascendless_engine_destroy(engine);
    }
  }
  EngineHandle(const EngineHandle &) = delete;
  EngineHandle &operator=(const EngineHandle &) = delete;
};

// A face's TransferOpDesc is the native descriptor, field for field: its vector is passed as
// the native array without a copy.
template <class Desc>
const AscendlessTransferDesc *descs(const std::vector<Desc> &op_descs) {
  static_assert(sizeof(Desc) == sizeof(AscendlessTransferDesc), "descriptor layouts agree");
  static_assert(offsetof(Desc, local_addr) == offsetof(AscendlessTransferDesc, local_addr), "local_addr");
  static_assert(offsetof(Desc, remote_addr) == offsetof(AscendlessTransferDesc, remote_addr), "remote_addr");
  static_assert(offsetof(Desc, len) == offsetof(AscendlessTransferDesc, len), "len");
  return reinterpret_cast<const AscendlessTransferDesc *>(op_descs.data());
}

// Initialize with the options map as the native key and value arrays.
template <class String>
uint32_t initialize(AscendlessEngine engine, const String &local_engine, const std::map<String, String> &options) {
  try {
    std::vector<const char *> keys;
    std::vector<const char *> values;
    keys.reserve(options.size());
    values.reserve(options.size());
    for (const auto &kv : options) {
      keys.push_back(kv.first.GetString());
      values.push_back(kv.second.GetString());
    }
    return ascendless_engine_initialize(engine, local_engine.GetString(), keys.data(), values.data(), keys.size());
  } catch (...) {
    return kFailed;
  }
}

// GetNotifies: the notifies received, appended to the caller's vector.
template <class NotifyDesc>
uint32_t get_notifies(AscendlessEngine engine, std::vector<NotifyDesc> &notifies) {
  AscendlessNotify *got = nullptr;
  size_t count = 0;
  uint32_t ret = ascendless_engine_get_notifies(engine, &got, &count);
  if (ret != ADXL_SUCCESS) {
    return ret;
  }
  try {
    notifies.reserve(notifies.size() + count);
    for (size_t i = 0; i < count; ++i) {
      NotifyDesc desc;
      desc.name = decltype(desc.name)(got[i].name);
      desc.notify_msg = decltype(desc.notify_msg)(got[i].notify_msg);
      notifies.push_back(std::move(desc));
    }
  } catch (...) {
    ascendless_notifies_free(got, count);
    return kFailed;
  }
  ascendless_notifies_free(got, count);
  return ADXL_SUCCESS;
}

}  // namespace ascendless_face

#endif  // ASCENDLESS_SRC_CXX_ENGINE_FACE_H_
