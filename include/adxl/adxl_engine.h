/*
 * adxl/adxl_engine.h - part of ascendless.
 * Mirrors the vendor interface of adxl::AdxlEngine, the point-to-point memory transfer engine.
 * The class is non-virtual and holds a single pointer (sizeof == 8); every member is declared
 * exactly as the vendor declares it, so the exported symbol names are identical.
 */
#ifndef CANN_HIXL_INCLUDE_ADXL_ADXL_ENGINE_H_
#define CANN_HIXL_INCLUDE_ADXL_ADXL_ENGINE_H_

#include <map>
#include <memory>
#include <vector>

#include "adxl_types.h"

#ifndef ASCEND_FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace adxl {
class ASCEND_FUNC_VISIBILITY AdxlEngine {
 public:
  /// Creates an engine that is not yet initialised.
  AdxlEngine();

  /// Destroys the engine; calls Finalize() first.
  ~AdxlEngine();

  /// Starts the engine as `local_engine` ("ip", "ip:port", "[ipv6]" or "[ipv6]:port"; a port > 0 makes it listen); bad name or option: PARAM_INVALID.
  Status Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options);

  /// Disconnects every peer and releases all resources; idempotent, later calls give FAILED.
  void Finalize();

  /// Registers a memory region for transfers (do it before Connect); addr 0 or overflowing range: PARAM_INVALID.
  Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle);

  /// Deregisters a region; null handle: PARAM_INVALID, unknown handle: SUCCESS.
  Status DeregisterMem(MemHandle mem_handle);

  /// Connects to the engine named `remote_engine`; timeout <= 0: PARAM_INVALID, already connected: ALREADY_CONNECTED, timed out: TIMEOUT.
  Status Connect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// Drops the link to `remote_engine`; timeout <= 0: PARAM_INVALID, not connected: NOT_CONNECTED.
  Status Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis = 1000);

  /// Copies every descriptor (READ remote->local, WRITE local->remote) and returns once all data has landed; zero address or timeout <= 0: PARAM_INVALID.
  Status TransferSync(const AscendString &remote_engine, TransferOp operation,
                      const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis = 1000);

  /// Starts the copies without waiting and returns a request handle in `req`; out of resources: RESOURCE_EXHAUSTED.
  Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
                       const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
                       TransferReq &req);

  /// Reports WAITING, COMPLETED, TIMEOUT (its time limit passed first) or FAILED for `req`; the request is freed once it has finished (asking again: PARAM_INVALID).
  Status GetTransferStatus(const TransferReq &req, TransferStatus &status);

  /// Sends a notify to `remote_engine` and waits for its acknowledgement; name or message over 1024 chars: PARAM_INVALID.
  Status SendNotify(const AscendString &remote_engine, const NotifyDesc &notify, int32_t timeout_in_millis = 1000);

  /// Appends every pending notify received from any peer to `notifies` and clears them.
  Status GetNotifies(std::vector<NotifyDesc> &notifies);

  /// Allocates `size` bytes of device or host memory suited to transfers; size 0: PARAM_INVALID.
  static Status MallocMem(MemType type, size_t size, void **ptr);

  /// Exports memory from MallocMem (its start address) as a fabric handle another process can import; the first call exports, later ones give the same handle; any other address (or freed memory): PARAM_INVALID. Not yet available in this build: UNSUPPORTED.
  static Status ExportToShareableHandle(void *addr, ShareableHandle &handle);

  /// Frees memory returned by MallocMem.
  static Status FreeMem(void *ptr);

  /// Writes FEATURE_SUPPORTED or FEATURE_NOT_SUPPORTED to `value`; negative feature: PARAM_INVALID, unknown feature: SUCCESS with 0.
  static Status GetCapability(FeatureType feature_type, int32_t &value);

 private:
  class AdxlEngineImpl;
  std::unique_ptr<AdxlEngineImpl> impl_;
};
}  // namespace adxl

#endif  // CANN_HIXL_INCLUDE_ADXL_ADXL_ENGINE_H_
