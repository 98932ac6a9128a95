/*
 * adxl/adxl_types.h - part of ascendless.
 * Mirrors the vendor interface of the ADXL transfer engine: the status codes, option keys and
 * plain data types used by adxl::AdxlEngine. Names, values and struct layouts are the vendor's,
 * and so are the includes: acl/acl_rt.h (for ShareableHandle, and whatever code relying on
 * this header takes from it) and external/ge_common/api_error_codes.h (for ge::AscendString).
 */
#ifndef CANN_HIXL_INCLUDE_ADXL_ADXL_TYPES_H_
#define CANN_HIXL_INCLUDE_ADXL_ADXL_TYPES_H_

#include <cstddef>
#include <cstdint>

#include "acl/acl_rt.h"
#include "external/ge_common/api_error_codes.h"

/* Exports the engine class; a definition supplied by the user takes precedence. */
#ifndef ASCEND_FUNC_VISIBILITY
#define ASCEND_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace adxl {
using Status = uint32_t;
using AscendString = ge::AscendString;
using MemHandle = void *;
using TransferReq = void *;

/* Keys accepted in the options map of AdxlEngine::Initialize. */
constexpr const char OPTION_RDMA_TRAFFIC_CLASS[] = "adxl.RdmaTrafficClass";  // 0..255, multiple of 4
constexpr const char OPTION_RDMA_SERVICE_LEVEL[] = "adxl.RdmaServiceLevel";  // 0..7
constexpr const char OPTION_BUFFER_POOL[] = "adxl.BufferPool";               // "NUM:SIZE_MB", "0:0" = off
constexpr const char OPTION_LOCAL_COMM_RES[] = "adxl.LocalCommRes";          // JSON description
constexpr const char OPTION_AUTO_CONNECT[] = "AutoConnect";                  // "0" or "1"

/* Results of every engine call. */
constexpr Status SUCCESS = 0U;
constexpr Status PARAM_INVALID = 103900U;
constexpr Status TIMEOUT = 103901U;
constexpr Status NOT_CONNECTED = 103902U;
constexpr Status ALREADY_CONNECTED = 103903U;
constexpr Status NOTIFY_FAILED = 103904U;
constexpr Status UNSUPPORTED = 103905U;
constexpr Status RESOURCE_EXHAUSTED = 203900U;
constexpr Status FAILED = 503900U;

/* A handle of memory from AdxlEngine::MallocMem, exported with ExportToShareableHandle for
   another process to import (aclrtMemImportFromShareableHandleV2). */
using ShareableHandle = aclrtMemFabricHandle;

/* Where a registered or allocated region lives. */
enum MemType { MEM_DEVICE, MEM_HOST };

/* READ copies remote memory into local memory; WRITE copies local memory into remote memory. */
enum TransferOp { READ, WRITE };

/* A memory region to register; the reserved bytes must stay zero. 144 bytes. `local_only`
   (taken out of the first reserved byte, as the vendor's newest header does) keeps the region
   to this engine: it is never offered to peers, whose transfers into it fail as if it were not
   registered. */
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

/* State of an asynchronous transfer request. */
enum class TransferStatus { WAITING, COMPLETED, TIMEOUT, FAILED };

/* Extra arguments of TransferAsync; currently only reserved (zero) bytes. */
struct TransferArgs {
  uint8_t reserved[128] = {};
};

/* A named message sent with SendNotify and collected with GetNotifies. */
struct NotifyDesc {
  AscendString name;
  AscendString notify_msg;
};

/* Capabilities queried with AdxlEngine::GetCapability. Values are fixed; new ones go last. */
enum FeatureType : int32_t {
  AUTO_CONNECT = 0,
  CLIENT_SERVER_COMM = 1,
};

/* Values written by GetCapability. */
constexpr int32_t FEATURE_SUPPORTED = 1;
constexpr int32_t FEATURE_NOT_SUPPORTED = 0;
}  // namespace adxl

#endif  // CANN_HIXL_INCLUDE_ADXL_ADXL_TYPES_H_
