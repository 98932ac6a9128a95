/*
 * external/ge_common/api_error_codes.h - part of ascendless.
 * Mirrors the vendor interface under the same path, as a light stand-in: the vendor's file
 * (which replaces the deprecated ge_common/ge_api_error_codes.h; adxl/adxl_types.h includes
 * it) brings in the graph engine's error-number registry. ADXL users need nothing from it
 * beyond ge::AscendString and the ge::Status type with its SUCCESS/FAILED values, which is
 * all this file provides, plus <iostream>: the vendor's HIXL samples (hicann/hixl
 * examples/cpp) print with std::cerr after including only acl/acl.h and hixl/hixl.h, which
 * the vendor's include chain allows.
 */
#ifndef INC_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_
#define INC_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_

#include <cstdint>
#include <iostream>
#include <map>
#include <string>

#include "graph/ascend_string.h"

// How the graph engine composes its status numbers (runtime 2 bits, type 2, level 3, system
// id 8, module id 5, value 12), as the vendor's file defines it: llm_datadist/llm_error_codes.h
// defines the LLM-DataDist family with it.
#ifndef GE_ERRORNO_DEFINE
#define GE_ERRORNO_DEFINE(runtime, type, level, sysid, modid, name, value)                                \
  constexpr ge::Status name = ((static_cast<uint32_t>(0xFFU & (static_cast<uint32_t>(runtime))) << 30U) | \
                              (static_cast<uint32_t>(0xFFU & (static_cast<uint32_t>(type))) << 28U) |     \
                              (static_cast<uint32_t>(0xFFU & (static_cast<uint32_t>(level))) << 25U) |    \
                              (static_cast<uint32_t>(0xFFU & (static_cast<uint32_t>(sysid))) << 17U) |    \
                              (static_cast<uint32_t>(0xFFU & (static_cast<uint32_t>(modid))) << 12U) |    \
                              (static_cast<uint32_t>(0x0FFFU) & (static_cast<uint32_t>(value))))
#endif

namespace ge {
using Status = uint32_t;
constexpr Status SUCCESS = 0U;
constexpr Status FAILED = 0xFFFFFFFFU;
}  // namespace ge

#endif  // INC_EXTERNAL_GE_COMMON_API_ERROR_CODES_H_
