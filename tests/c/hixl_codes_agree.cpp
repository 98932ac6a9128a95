// hixl_codes_agree.cpp - part of ascendless.
// Compiled (syntax only) by tests/c_abi.rs: the numbers, enum values and struct layouts of
// hixl/hixl_types.h are the vendor's (the HIXL spec's measurements, g++ x86_64), and agree
// with the native C API's.
#include <cstddef>

#include "ascendless.h"
#include "hixl/hixl.h"

static_assert(hixl::SUCCESS == ADXL_SUCCESS && hixl::SUCCESS == 0, "SUCCESS");
static_assert(hixl::PARAM_INVALID == ADXL_PARAM_INVALID && hixl::PARAM_INVALID == 103900, "PARAM_INVALID");
static_assert(hixl::TIMEOUT == 103901 && hixl::NOT_CONNECTED == 103902 && hixl::ALREADY_CONNECTED == 103903, "codes");
static_assert(hixl::NOTIFY_FAILED == 103904 && hixl::UNSUPPORTED == 103905, "codes");
static_assert(hixl::RESOURCE_EXHAUSTED == ADXL_RESOURCE_EXHAUSTED && hixl::RESOURCE_EXHAUSTED == 203900, "codes");
static_assert(hixl::FAILED == ADXL_FAILED && hixl::FAILED == 503900, "FAILED");

static_assert(sizeof(hixl::MemDesc) == 144 && alignof(hixl::MemDesc) == 8, "MemDesc");
static_assert(offsetof(hixl::MemDesc, addr) == 0 && offsetof(hixl::MemDesc, len) == 8 &&
                  offsetof(hixl::MemDesc, local_only) == 16 && offsetof(hixl::MemDesc, reserved) == 17,
              "MemDesc fields");
static_assert(sizeof(hixl::TransferOpDesc) == 24, "TransferOpDesc");
static_assert(sizeof(hixl::TransferArgs) == 128 && alignof(hixl::TransferArgs) == 8 &&
                  offsetof(hixl::TransferArgs, reserved) == 8,
              "TransferArgs");
static_assert(sizeof(hixl::GetTransferStatusArgs) == 128 && alignof(hixl::GetTransferStatusArgs) == 4 &&
                  offsetof(hixl::GetTransferStatusArgs, skip_waiting) == 4 &&
                  offsetof(hixl::GetTransferStatusArgs, reserved) == 5,
              "GetTransferStatusArgs");
static_assert(sizeof(hixl::TransferResult) == 128 && offsetof(hixl::TransferResult, user_data) == 8 &&
                  offsetof(hixl::TransferResult, status) == 16 && offsetof(hixl::TransferResult, reserved) == 20,
              "TransferResult");
static_assert(sizeof(hixl::NotifyDesc) == 32 && sizeof(hixl::Hixl) == 8, "NotifyDesc, Hixl");
static_assert(hixl::MEM_DEVICE == 0 && hixl::MEM_HOST == 1 && hixl::READ == 0 && hixl::WRITE == 1, "enums");
static_assert(static_cast<int>(hixl::TransferStatus::FAILED) == 3, "TransferStatus");
static_assert(static_cast<int>(hixl::AsyncConnectStatus::NOT_CONNECT) == 0 &&
                  static_cast<int>(hixl::AsyncConnectStatus::CONNECTED) == 3 &&
                  static_cast<int>(hixl::AsyncConnectStatus::DISCONNECTING) == 6,
              "AsyncConnectStatus");
static_assert(hixl::AUTO_CONNECT == 0 && hixl::CLIENT_SERVER_COMM == 1, "FeatureType");

int main() {
  hixl::GetTransferStatusArgs args;
  return args.max_query_count == UINT32_MAX && !args.skip_waiting ? 0 : 1;
}
