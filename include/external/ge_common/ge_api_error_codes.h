/*
 * external/ge_common/ge_api_error_codes.h - part of ascendless.
 * Mirrors the vendor interface under the same path and include guard. The vendor deprecates
 * this header in favour of external/ge_common/api_error_codes.h; code written against either
 * gets the same declarations (ge::Status, ge::SUCCESS, ge::FAILED, ge::AscendString), which
 * live in that file.
 */
#ifndef INC_EXTERNAL_GE_COMMON_GE_API_ERROR_CODES_H_
#define INC_EXTERNAL_GE_COMMON_GE_API_ERROR_CODES_H_

#include "external/ge_common/api_error_codes.h"

#endif  // INC_EXTERNAL_GE_COMMON_GE_API_ERROR_CODES_H_
