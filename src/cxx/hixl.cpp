// hixl.cpp - part of ascendless.
// Implements the vendor interface hixl::Hixl (declared in hixl/hixl.h), the transfer engine's
// current name, on the library's native C API (ascendless.h), exactly as adxl_engine.cpp does
// for adxl::AdxlEngine: the same engine underneath, so the two faces talk to each other. What
// HIXL adds (ConnectAsync/DisconnectAsync and their states, TransferArgs::user_data and the
// batched GetTransferStatus, MemDesc::local_only) goes to the native functions made for it.
//
// No member lets an exception escape: anything that could throw (allocating the option
// arrays, filling the caller's vectors and maps) is caught and turned into FAILED.

#include "hixl/hixl.h"

#include <cstddef>
#include <new>

#include "ascendless.h"
#include "engine_face.h"

namespace hixl {

static_assert(sizeof(MemDesc) == 144 && offsetof(MemDesc, local_only) == 16, "MemDesc is the vendor's");
static_assert(sizeof(TransferArgs) == 128 && sizeof(GetTransferStatusArgs) == 128 && sizeof(TransferResult) == 128,
              "the HIXL argument structs are the vendor's 128 bytes");

// The native engine handle behind one Hixl.
class Hixl::HixlImpl : public ascendless_face::EngineHandle {};

// The native handle of this engine (NULL if it could not be created: every call then fails
// in the native API with a message). A macro because the impl class is private to Hixl.
#define ENGINE (impl_ ? impl_->engine : nullptr)

Hixl::Hixl() {
  impl_.reset(new (std::nothrow) HixlImpl);  // NULL engine: every member answers FAILED
}

Hixl::~Hixl() = default;  // the impl's EngineHandle destroys the engine (finalizing first)

Status Hixl::Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options) {
  return ascendless_face::initialize(ENGINE, local_engine, options);
}

void Hixl::Finalize() {
  ascendless_engine_finalize(ENGINE);
}

Status Hixl::RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle) {
  return ascendless_engine_register_mem_with(ENGINE, mem.addr, mem.len, static_cast<int32_t>(type), mem.local_only,
                                             &mem_handle);
}

Status Hixl::DeregisterMem(MemHandle mem_handle) {
  return ascendless_engine_deregister_mem(ENGINE, mem_handle);
}

Status Hixl::Connect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_connect(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status Hixl::Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_disconnect(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status Hixl::ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_connect_async(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status Hixl::DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis) {
  return ascendless_engine_disconnect_async(ENGINE, remote_engine.GetString(), timeout_in_millis);
}

Status Hixl::GetAsyncConnectStatus(const AscendString &remote_engine, AsyncConnectStatus &status) {
  int32_t value = 0;
  Status ret = ascendless_engine_get_async_connect_status(ENGINE, remote_engine.GetString(), &value);
  if (ret == SUCCESS) {
    status = static_cast<AsyncConnectStatus>(value);
  }
  return ret;
}

Status Hixl::GetAsyncConnectStatus(std::map<AscendString, AsyncConnectStatus> &statuses) {
  AscendlessAsyncConnectStatus *got = nullptr;
  size_t count = 0;
  Status ret = ascendless_engine_get_async_connect_statuses(ENGINE, &got, &count);
  if (ret != SUCCESS) {
    return ret;
  }
  try {
    statuses.clear();
    for (size_t i = 0; i < count; ++i) {
      statuses[AscendString(got[i].remote_engine)] = static_cast<AsyncConnectStatus>(got[i].status);
    }
  } catch (...) {
    ascendless_async_connect_statuses_free(got, count);
    return FAILED;
  }
  ascendless_async_connect_statuses_free(got, count);
  return SUCCESS;
}

Status Hixl::TransferSync(const AscendString &remote_engine, TransferOp operation,
                          const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis) {
  return ascendless_engine_transfer_sync(ENGINE, remote_engine.GetString(), static_cast<int32_t>(operation),
                                         ascendless_face::descs(op_descs),
                                         op_descs.size(), timeout_in_millis);
}

Status Hixl::TransferAsync(const AscendString &remote_engine, TransferOp operation,
                           const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                           TransferReq &req) {
  return ascendless_engine_transfer_async_with_user_data(
      ENGINE, remote_engine.GetString(), static_cast<int32_t>(operation),
      ascendless_face::descs(op_descs), op_descs.size(), optional_args.user_data,
      &req);
}

Status Hixl::GetTransferStatus(const TransferReq &req, TransferStatus &status) {
  int32_t value = static_cast<int32_t>(TransferStatus::FAILED);
  Status ret = ascendless_engine_get_transfer_status(ENGINE, req, &value);
  // The vendor's rule: on an error the status reads FAILED.
  status = static_cast<TransferStatus>(ret == SUCCESS || ret == NOT_CONNECTED ? value
                                                                               : static_cast<int32_t>(TransferStatus::FAILED));
  return ret;
}

Status Hixl::GetTransferStatus(const GetTransferStatusArgs &args, std::vector<TransferResult> &results) {
  AscendlessTransferResult *got = nullptr;
  size_t count = 0;
  try {
    results.clear();
  } catch (...) {
    return FAILED;
  }
  Status ret = ascendless_engine_get_transfer_statuses(ENGINE, args.max_query_count, args.skip_waiting, &got, &count);
  if (ret != SUCCESS) {
    return ret;
  }
  try {
    results.resize(count);
    for (size_t i = 0; i < count; ++i) {
      results[i].req = got[i].req;
      results[i].user_data = got[i].user_data;
      results[i].status = static_cast<TransferStatus>(got[i].status);
    }
  } catch (...) {
    ascendless_transfer_results_free(got, count);
    return FAILED;
  }
  ascendless_transfer_results_free(got, count);
  return SUCCESS;
}

Status Hixl::SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis) {
  return ascendless_engine_send_notify(ENGINE, remote_engine.GetString(), notify.name.GetString(),
                                       notify.notify_msg.GetString(), timeout_in_millis);
}

Status Hixl::GetNotifies(std::vector<NotifyDesc> &notifies) {
  return ascendless_face::get_notifies(ENGINE, notifies);
}

Status Hixl::GetCapability(FeatureType feature_type, int32_t &value) {
  return ascendless_get_capability(static_cast<int32_t>(feature_type), &value);
}

}  // namespace hixl
