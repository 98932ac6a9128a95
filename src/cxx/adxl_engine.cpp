// adxl_engine.cpp - part of ascendless.
// Implements the vendor interface adxl::AdxlEngine (declared in adxl/adxl_engine.h) on the
// library's native C API (ascendless.h): every member converts its C++ arguments and calls the
// matching ascendless_* function, which checks them, catches panics and returns the ADXL
// status numbers. TransferArgs of TransferAsync carries nothing yet and is ignored; MemDesc's
// local_only keeps a registration from peers, as for hixl::Hixl (hixl.cpp).
//
// No member lets an exception escape: anything that could throw (allocating the option
// arrays, appending to GetNotifies' vector) is caught and turned into FAILED.

#include "adxl/adxl_engine.h"

#include <cstddef>
#include <new>

#include "ascendless.h"
#include "engine_face.h"

namespace adxl {


// The native engine handle behind one AdxlEngine.
class AdxlEngine::AdxlEngineImpl : public ascendless_face::EngineHandle {};

// The native handle of this engine (NULL if it could not be created: every call then fails
// in the native API with a message). A macro because the impl class is private to AdxlEngine.
#define ENGINE (impl_ ? impl_->engine : nullptr)

AdxlEngine::AdxlEngine() {
  impl_.reset(new (std::nothrow) AdxlEngineImpl);  // NULL engine: every member answers FAILED
}

AdxlEngine::~AdxlEngine() = default;  // the impl's EngineHandle destroys the engine (finalizing first)

Status AdxlEngine::Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options) {
  return ascendless_face::initialize(ENGINE, local_engine, options);
}

void AdxlEngine::Finalize() {
  ascendless_engine_finalize(ENGINE);
}

Status AdxlEngine::RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle) {
  return ascendless_engine_register_mem_with(ENGINE, mem.addr, mem.len, static_cast<int32_t>(type), mem.local_only,
                                             &mem_handle);
}

Status AdxlEngine::DeregisterMem(MemHandle mem_handle) {
  return ascendless_engine_deregister_mem(ENGINE, mem_handle);
}

Status AdxlEngine::Connect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_connect(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status AdxlEngine::Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_disconnect(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status AdxlEngine::TransferSync(const AscendString &remote_engine, TransferOp operation,
                                const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis) {
  return ascendless_engine_transfer_sync(ENGINE, remote_engine.GetString(), static_cast<int32_t>(operation),
                                         ascendless_face::descs(op_descs),
                                         op_descs.size(), timeout_in_millis);
}

Status AdxlEngine::TransferAsync(const AscendString &remote_engine, TransferOp operation,
                                 const std::vector<TransferOpDesc> &op_descs, const TransferArgs &,
                                 TransferReq &req) {
  return ascendless_engine_transfer_async(ENGINE, remote_engine.GetString(), static_cast<int32_t>(operation),
                                          ascendless_face::descs(op_descs),
                                          op_descs.size(), &req);
}

Status AdxlEngine::GetTransferStatus(const TransferReq &req, TransferStatus &status) {
  int32_t value = 0;
  Status ret = ascendless_engine_get_transfer_status(ENGINE, req, &value);
  if (ret == SUCCESS || ret == NOT_CONNECTED) {
    status = static_cast<TransferStatus>(value);
  }
  return ret;
}

Status AdxlEngine::SendNotify(const AscendString &remote_engine, const NotifyDesc &notify,
                              int32_t timeout_in_millis) {
  return ascendless_engine_send_notify(ENGINE, remote_engine.GetString(), notify.name.GetString(),
                                       notify.notify_msg.GetString(), timeout_in_millis);
}

Status AdxlEngine::GetNotifies(std::vector<NotifyDesc> &notifies) {
  return ascendless_face::get_notifies(ENGINE, notifies);
}

Status AdxlEngine::MallocMem(MemType type, size_t size, void **ptr) {
  return ascendless_malloc_mem(static_cast<int32_t>(type), size, ptr);
}

static_assert(sizeof(ShareableHandle) == sizeof(AscendlessShareableHandle), "shareable handle layouts agree");
static_assert(sizeof(ShareableHandle::data) == sizeof(AscendlessShareableHandle::data), "data");

Status AdxlEngine::ExportToShareableHandle(void *addr, ShareableHandle &handle) {
  return ascendless_export_to_shareable_handle(addr, reinterpret_cast<AscendlessShareableHandle *>(&handle));
}

Status AdxlEngine::FreeMem(void *ptr) {
  return ascendless_free_mem(ptr);
}

Status AdxlEngine::GetCapability(FeatureType feature_type, int32_t &value) {
  return ascendless_get_capability(static_cast<int32_t>(feature_type), &value);
}

}  // namespace adxl
