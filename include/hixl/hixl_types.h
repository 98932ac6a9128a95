/*
 * hixl/hixl_types.h - part of ascendless.
 * Mirrors the vendor interface of HIXL, the successor of the ADXL transfer engine: the status
 * codes, option keys and plain data types used by hixl::Hixl. Names, values and struct layouts
 * are the vendor's, and so are the includes (external/ge_common/api_error_codes.h brings
 * ge::AscendString); <cstddef> is added so size_t is declared whatever the include order.
 */
#ifndef CANN_HIXL_INCLUDE_HIXL_HIXL_TYPES_H_
#define CANN_HIXL_INCLUDE_HIXL_HIXL_TYPES_H_

#include <cstddef>
#include <cstdint>

#include "external/ge_common/api_error_codes.h"

/* Exports the engine class; a definition supplied by the user takes precedence. */
#ifndef ASCEND_FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace hixl {
using Status = uint32_t;
using AscendString = ge::AscendString;
using TransferReq = void *;

/* Keys accepted in the options map of Hixl::Initialize (the "adxl."-prefixed spellings of
   the ADXL header are accepted as well). */
constexpr const char OPTION_ENABLE_USE_FABRIC_MEM[] = "EnableUseFabricMem";      // "0" or "1"
constexpr const char OPTION_RDMA_TRAFFIC_CLASS[] = "RdmaTrafficClass";           // 0..255, multiple of 4
constexpr const char OPTION_RDMA_SERVICE_LEVEL[] = "RdmaServiceLevel";           // 0..7
constexpr const char OPTION_BUFFER_POOL[] = "BufferPool";                        // "NUM:SIZE_MB", "0:0" = off
constexpr const char OPTION_GLOBAL_RESOURCE_CONFIG[] = "GlobalResourceConfig";  // JSON object
constexpr const char OPTION_AUTO_CONNECT[] = "AutoConnect";                      // "0" or "1"
constexpr const char OPTION_LOCAL_COMM_RES[] = "LocalCommRes";                   // JSON description

/* Results of every engine call (the same numbers as ADXL). */
constexpr Status SUCCESS = 0U;
constexpr Status PARAM_INVALID = 103900U;
constexpr Status TIMEOUT = 103901U;
constexpr Status NOT_CONNECTED = 103902U;
constexpr Status ALREADY_CONNECTED = 103903U;
constexpr Status NOTIFY_FAILED = 103904U;
constexpr Status UNSUPPORTED = 103905U;
constexpr Status FAILED = 503900U;
constexpr Status RESOURCE_EXHAUSTED = 203900U;

/* Capabilities queried with Hixl::GetCapability. Values are fixed; new ones go last. */
enum FeatureType : int32_t {
  AUTO_CONNECT = 0,
  CLIENT_SERVER_COMM = 1,
};

/* Values written by GetCapability. */
constexpr int32_t FEATURE_SUPPORTED = 1;
constexpr int32_t FEATURE_NOT_SUPPORTED = 0;

using MemHandle = void *;

/* Where a registered region lives. */
enum MemType { MEM_DEVICE, MEM_HOST };

/* READ copies remote memory into local memory; WRITE copies local memory into remote memory. */
enum TransferOp { READ, WRITE };

/* A memory region to register; the reserved bytes must stay zero. 144 bytes. `local_only`
   (taken out of the first reserved byte, as the vendor's newest header does) keeps the region
   to this engine: it is never offered to peers. */
struct MemDesc {
  uintptr_t addr;
  size_t len;
  bool local_only = false;
  uint8_t reserved[127] = {};
};

/* One contiguous copy of `len` bytes between a local and a remote address. 24 bytes. */
struct TransferOpDesc {
  uintptr_t local_addr;
  uintptr_t remote_addr;
  size_t len;
};

/* State of an asynchronous transfer request (TIMEOUT is never reported by the vendor). */
enum class TransferStatus { WAITING, COMPLETED, TIMEOUT, FAILED };

/* Extra arguments of TransferAsync: `user_data` comes back with the request in the batched
   GetTransferStatus. 128 bytes. */
struct TransferArgs {
  const void *user_data = nullptr;
  uint8_t reserved[120] = {};
};

/* Arguments of the batched GetTransferStatus: report at most `max_query_count` requests, and
   leave out the ones still WAITING when `skip_waiting`. 128 bytes. */
struct GetTransferStatusArgs {
  uint32_t max_query_count = UINT32_MAX;
  bool skip_waiting = false;
  uint8_t reserved[123] = {};
};

/* One request reported by the batched GetTransferStatus. 128 bytes. */
struct TransferResult {
  TransferReq req = nullptr;
  const void *user_data = nullptr;
  TransferStatus status = TransferStatus::WAITING;
  uint8_t reserved[108] = {};
};

/* A named message sent with SendNotify and collected with GetNotifies. */
struct NotifyDesc {
  AscendString name;
  AscendString notify_msg;
};

/* State of a remote's latest ConnectAsync / DisconnectAsync task. */
enum class AsyncConnectStatus {
  NOT_CONNECT,
  CONNECT_PENDING,
  CONNECTING,
  CONNECTED,
  CONNECT_FAILED,
  DISCONNECT_PENDING,
  DISCONNECTING
};
}  // namespace hixl

#endif  // CANN_HIXL_INCLUDE_HIXL_HIXL_TYPES_H_
