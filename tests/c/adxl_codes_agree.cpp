// The C++ ADXL header and the native C API must agree on every status number, and the C++
// types must have the vendor's layouts. Compiled, not run.
#include <cstddef>
#include <type_traits>

#include "adxl/adxl_engine.h"
#include "ascendless.h"

static_assert(adxl::SUCCESS == ADXL_SUCCESS, "SUCCESS");
static_assert(adxl::PARAM_INVALID == ADXL_PARAM_INVALID && ADXL_PARAM_INVALID == 103900, "PARAM_INVALID");
static_assert(adxl::TIMEOUT == ADXL_TIMEOUT && ADXL_TIMEOUT == 103901, "TIMEOUT");
static_assert(adxl::NOT_CONNECTED == ADXL_NOT_CONNECTED && ADXL_NOT_CONNECTED == 103902, "NOT_CONNECTED");
static_assert(adxl::ALREADY_CONNECTED == ADXL_ALREADY_CONNECTED && ADXL_ALREADY_CONNECTED == 103903, "ALREADY_CONNECTED");
static_assert(adxl::NOTIFY_FAILED == ADXL_NOTIFY_FAILED && ADXL_NOTIFY_FAILED == 103904, "NOTIFY_FAILED");
static_assert(adxl::UNSUPPORTED == ADXL_UNSUPPORTED && ADXL_UNSUPPORTED == 103905, "UNSUPPORTED");
static_assert(adxl::RESOURCE_EXHAUSTED == ADXL_RESOURCE_EXHAUSTED && ADXL_RESOURCE_EXHAUSTED == 203900, "RESOURCE_EXHAUSTED");
static_assert(adxl::FAILED == ADXL_FAILED && ADXL_FAILED == 503900, "FAILED");

static_assert(sizeof(adxl::MemDesc) == 144, "MemDesc");
static_assert(offsetof(adxl::MemDesc, addr) == 0 && offsetof(adxl::MemDesc, len) == 8 &&
                  offsetof(adxl::MemDesc, local_only) == 16 && sizeof(adxl::MemDesc::local_only) == 1 &&
                  offsetof(adxl::MemDesc, reserved) == 17 && sizeof(adxl::MemDesc::reserved) == 127,
              "MemDesc fields (local_only is the first of the 128 reserved bytes of older headers)");
static_assert(sizeof(adxl::TransferOpDesc) == 24, "TransferOpDesc");
static_assert(sizeof(adxl::AdxlEngine) == 8, "AdxlEngine");
static_assert(sizeof(ge::AscendString) == 16, "AscendString");
static_assert(sizeof(adxl::TransferArgs) == 128, "TransferArgs");
static_assert(adxl::MEM_DEVICE == 0 && adxl::MEM_HOST == 1, "MemType");
static_assert(adxl::READ == 0 && adxl::WRITE == 1, "TransferOp");
static_assert(static_cast<int>(adxl::TransferStatus::WAITING) == 0 &&
                  static_cast<int>(adxl::TransferStatus::COMPLETED) == 1 &&
                  static_cast<int>(adxl::TransferStatus::TIMEOUT) == 2 &&
                  static_cast<int>(adxl::TransferStatus::FAILED) == 3,
              "TransferStatus");
// ShareableHandle is the runtime's fabric handle, which adxl/adxl_types.h brings in with
// acl/acl_rt.h (as the vendor's does): code using AscendCL through it needs no other include.
static_assert(std::is_same<adxl::ShareableHandle, aclrtMemFabricHandle>::value, "ShareableHandle");
static_assert(sizeof(adxl::ShareableHandle) == 128, "ShareableHandle layout");
static_assert(sizeof(aclrtStream) == sizeof(void *), "acl_rt.h is included");
static_assert(adxl::AUTO_CONNECT == 0 && adxl::CLIENT_SERVER_COMM == 1, "FeatureType");
