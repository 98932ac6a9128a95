/*
 * hixl/hixl.h - part of ascendless.
 * Mirrors the vendor interface of hixl::Hixl, the transfer engine's current name. The class is
 * non-virtual and holds a single pointer (sizeof == 8); every member is declared exactly as
 * the vendor declares it, so the exported symbol names are identical. A Hixl engine and an
 * adxl::AdxlEngine are the same engine underneath and talk to each other.
 */
#ifndef CANN_HIXL_INCLUDE_HIXL_HIXL_H_
#define CANN_HIXL_INCLUDE_HIXL_HIXL_H_

#include <map>
#include <memory>
#include <vector>

#include "hixl_types.h"

#ifndef ASCEND_FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace hixl {
class ASCEND_FUNC_VISIBILITY Hixl {
 public:
  /// Creates an engine that is not yet initialised.
  Hixl();

  /// Destroys the engine; calls Finalize() first.
  ~Hixl();

  /// Starts the engine as `local_engine` ("ip", "ip:port", "[ipv6]" or "[ipv6]:port"; a port > 0 makes it listen).
  Status Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options);

  /// Releases every link, registration and request; the engine may be initialised again.
  void Finalize();

  /// Registers a region; same addr and len again gives the same handle.
  Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle);

  /// Deregisters a region (NULL: PARAM_INVALID; unknown: SUCCESS).
  Status DeregisterMem(MemHandle mem_handle);

  /// Connects to `remote_engine` and waits for the link.
  Status Connect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// Closes the link to `remote_engine` (none: NOT_CONNECTED).
  Status Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// Queues a connect to `remote_engine`; full queue: RESOURCE_EXHAUSTED.
  Status ConnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// Queues a disconnect from `remote_engine`; full queue: RESOURCE_EXHAUSTED.
  Status DisconnectAsync(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// The state of the latest async task for `remote_engine` (none: NOT_CONNECT).
  Status GetAsyncConnectStatus(const AscendString &remote_engine, AsyncConnectStatus &status);

  /// Every remote with an async state other than NOT_CONNECT (the map is cleared first).
  Status GetAsyncConnectStatus(std::map<AscendString, AsyncConnectStatus> &statuses);

  /// Moves the bytes of every descriptor and returns once they have landed.
  Status TransferSync(const AscendString &remote_engine, TransferOp operation,
                      const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis = 1000);

  /// Queues a transfer; `optional_args.user_data` comes back in the batched GetTransferStatus.
  Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
                       const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                       TransferReq &req);

  /// Polls one request; COMPLETED or FAILED frees it.
  Status GetTransferStatus(const TransferReq &req, TransferStatus &status);

  /// Polls this engine's requests in submission order (see GetTransferStatusArgs).
  Status GetTransferStatus(const GetTransferStatusArgs &args, std::vector<TransferResult> &results);

  /// Sends a notify to `remote_engine` and waits until the peer has queued it.
  Status SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis = 1000);

  /// Appends and clears every notify received by this engine.
  Status GetNotifies(std::vector<NotifyDesc> &notifies);

  /// Whether a feature is supported (no Initialize needed).
  static Status GetCapability(FeatureType feature_type, int32_t &value);

 private:
  class HixlImpl;
  std::unique_ptr<HixlImpl> impl_;
};
}  // namespace hixl

#endif  // CANN_HIXL_INCLUDE_HIXL_HIXL_H_
