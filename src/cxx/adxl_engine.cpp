// adxl_engine.cpp - part of ascendless.
// Implements the vendor interface adxl::AdxlEngine (declared in adxl/adxl_engine.h).
//
// The transfer engine itself is not in the Rust core yet. Until it lands, every member that
// needs it is a placeholder returning UNSUPPORTED without touching its arguments. All members
// must still be defined: code built against the vendor class references each symbol, and it
// has to link (and load) against this library as well.
//
// No member lets an exception escape; where something could throw, it is caught and turned
// into FAILED.

#include "adxl/adxl_engine.h"

#include "ascendless.h"

namespace adxl {

// Empty until the engine lands; defined here so std::unique_ptr can destroy it.
class AdxlEngine::AdxlEngineImpl {};

AdxlEngine::AdxlEngine() = default;

AdxlEngine::~AdxlEngine() {
  Finalize();
}

Status AdxlEngine::Initialize(const AscendString &, const std::map<AscendString, AscendString> &) {
  return UNSUPPORTED;
}

void AdxlEngine::Finalize() {}

Status AdxlEngine::RegisterMem(const MemDesc &, MemType, MemHandle &) {
  return UNSUPPORTED;
}

Status AdxlEngine::DeregisterMem(MemHandle) {
  return UNSUPPORTED;
}

Status AdxlEngine::Connect(const AscendString &, int32_t) {
  return UNSUPPORTED;
}

Status AdxlEngine::Disconnect(const AscendString &, int32_t) {
  return UNSUPPORTED;
}

Status AdxlEngine::TransferSync(const AscendString &, TransferOp, const std::vector<TransferOpDesc> &, int32_t) {
  return UNSUPPORTED;
}

Status AdxlEngine::TransferAsync(const AscendString &, TransferOp, const std::vector<TransferOpDesc> &,
                                 const TransferArgs &, TransferReq &) {
  return UNSUPPORTED;
}

Status AdxlEngine::GetTransferStatus(const TransferReq &, TransferStatus &) {
  return UNSUPPORTED;
}

Status AdxlEngine::SendNotify(const AscendString &, const NotifyDesc &, int32_t) {
  return UNSUPPORTED;
}

Status AdxlEngine::GetNotifies(std::vector<NotifyDesc> &) {
  return UNSUPPORTED;
}

Status AdxlEngine::MallocMem(MemType, size_t, void **) {
  return UNSUPPORTED;
}

Status AdxlEngine::FreeMem(void *) {
  return UNSUPPORTED;
}

Status AdxlEngine::GetCapability(FeatureType feature_type, int32_t &value) {
  return ascendless_get_capability(static_cast<int32_t>(feature_type), &value);
}

}  // namespace adxl
