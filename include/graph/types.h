/*
 * graph/types.h - part of ascendless.
 * Mirrors the vendor interface of the same name, reduced to the scalar aliases that
 * graph/ascend_string.h and the ADXL headers rely on. The vendor file also carries the
 * graph engine's DataType/Format enums; nothing in ascendless needs them.
 */
#ifndef INC_EXTERNAL_GRAPH_TYPES_H_
#define INC_EXTERNAL_GRAPH_TYPES_H_

#include <cstdint>

namespace ge {
using char_t = char;
using float32_t = float;
using float64_t = double;
}  // namespace ge

#endif  // INC_EXTERNAL_GRAPH_TYPES_H_
