// A stand-in for a vendor libllm_datadist.so, so the LD_PRELOAD test has a C++ program linked
// against "another" ADXL: ge::AscendString works (a program cannot even name an engine
// without it), and every adxl::AdxlEngine member fails with a status ascendless never returns.
#include <memory>
#include <string>

#include "adxl/adxl_engine.h"

namespace {
constexpr adxl::Status kNotAscendless = 999999U;
}

namespace ge {
AscendString::AscendString(const char_t *const name)
    : name_(name == nullptr ? nullptr : std::make_shared<std::string>(name)) {}
AscendString::AscendString(const char_t *const name, size_t length)
    : name_(name == nullptr ? nullptr : std::make_shared<std::string>(name, length)) {}
const char_t *AscendString::GetString() const { return name_ ? name_->c_str() : ""; }
size_t AscendString::GetLength() const { return name_ ? name_->size() : 0; }
size_t AscendString::Find(const AscendString &s) const { return std::string(GetString()).find(s.GetString()); }
size_t AscendString::Hash() const { return std::hash<std::string>()(GetString()); }
bool AscendString::operator<(const AscendString &d) const { return std::string(GetString()) < d.GetString(); }
bool AscendString::operator>(const AscendString &d) const { return d < *this; }
bool AscendString::operator<=(const AscendString &d) const { return !(d < *this); }
bool AscendString::operator>=(const AscendString &d) const { return !(*this < d); }
bool AscendString::operator==(const AscendString &d) const { return std::string(GetString()) == d.GetString(); }
bool AscendString::operator!=(const AscendString &d) const { return !(*this == d); }
bool AscendString::operator==(const char_t *const d) const { return *this == AscendString(d); }
bool AscendString::operator!=(const char_t *const d) const { return !(*this == d); }
}  // namespace ge

namespace adxl {
class AdxlEngine::AdxlEngineImpl {};
AdxlEngine::AdxlEngine() = default;
AdxlEngine::~AdxlEngine() = default;
Status AdxlEngine::Initialize(const AscendString &, const std::map<AscendString, AscendString> &) {
  return kNotAscendless;
}
void AdxlEngine::Finalize() {}
Status AdxlEngine::RegisterMem(const MemDesc &, MemType, MemHandle &) { return kNotAscendless; }
Status AdxlEngine::DeregisterMem(MemHandle) { return kNotAscendless; }
Status AdxlEngine::Connect(const AscendString &, int32_t) { return kNotAscendless; }
Status AdxlEngine::Disconnect(const AscendString &, int32_t) { return kNotAscendless; }
Status AdxlEngine::TransferSync(const AscendString &, TransferOp, const std::vector<TransferOpDesc> &, int32_t) {
  return kNotAscendless;
}
Status AdxlEngine::TransferAsync(const AscendString &, TransferOp, const std::vector<TransferOpDesc> &,
                                 const TransferArgs &, TransferReq &) {
  return kNotAscendless;
}
Status AdxlEngine::GetTransferStatus(const TransferReq &, TransferStatus &) { return kNotAscendless; }
Status AdxlEngine::SendNotify(const AscendString &, const NotifyDesc &, int32_t) { return kNotAscendless; }
Status AdxlEngine::GetNotifies(std::vector<NotifyDesc> &) { return kNotAscendless; }
Status AdxlEngine::MallocMem(MemType, size_t, void **) { return kNotAscendless; }
Status AdxlEngine::FreeMem(void *) { return kNotAscendless; }
Status AdxlEngine::GetCapability(FeatureType, int32_t &) { return kNotAscendless; }
}  // namespace adxl
