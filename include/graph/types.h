/*
 * graph/types.h - part of ascendless.
 * Mirrors the vendor interface of the same name (hicann/metadef inc/external/graph/types.h),
 * reduced to what the ADXL, HIXL and LLM-DataDist headers rely on: the scalar aliases, the
 * DataType enum with the vendor's values, and GetSizeByDataType. The vendor file also carries
 * the graph engine's Format enum and tensor type lists; nothing here needs them.
 */
#ifndef INC_EXTERNAL_GRAPH_TYPES_H_
#define INC_EXTERNAL_GRAPH_TYPES_H_

#include <cstdint>

namespace ge {
using char_t = char;
using float32_t = float;
using float64_t = double;

// When a data type's unit is the bit, GetSizeByDataType adds this offset to the bit count.
static constexpr int32_t kDataTypeSizeBitOffset = 1000;

// The vendor's numbers (its c_types.h C_DT_* values); 5 is unused.
enum DataType {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_STRING = 13,
  DT_DUAL_SUB_INT8 = 14,
  DT_DUAL_SUB_UINT8 = 15,
  DT_COMPLEX64 = 16,
  DT_COMPLEX128 = 17,
  DT_QINT8 = 18,
  DT_QINT16 = 19,
  DT_QINT32 = 20,
  DT_QUINT8 = 21,
  DT_QUINT16 = 22,
  DT_RESOURCE = 23,
  DT_STRING_REF = 24,
  DT_DUAL = 25,
  DT_VARIANT = 26,
  DT_BF16 = 27,
  DT_UNDEFINED = 28,
  DT_INT4 = 29,
  DT_UINT1 = 30,
  DT_INT2 = 31,
  DT_UINT2 = 32,
  DT_COMPLEX32 = 33,
  DT_HIFLOAT8 = 34,
  DT_FLOAT8_E5M2 = 35,
  DT_FLOAT8_E4M3FN = 36,
  DT_FLOAT8_E8M0 = 37,
  DT_FLOAT6_E3M2 = 38,
  DT_FLOAT6_E2M3 = 39,
  DT_FLOAT4_E2M1 = 40,
  DT_FLOAT4_E1M2 = 41,
  DT_HIFLOAT4 = 42,
  DT_MAX = 43,
};

// Bytes of one element; kDataTypeSizeBitOffset + bits for the sub-byte types; -1 for types of
// no fixed size (strings, DT_UNDEFINED) and for values out of range.
inline int GetSizeByDataType(DataType data_type) {
  static const int data_type_size[DT_MAX] = {
      4, 2, 1, 4, 1, -1, 2, 2, 4, 8, 8, 8, 1, -1, 1, 1, 8, 16, 1, 2, 4, 1, 2, 8, -1, 5, 8, 2, -1,
      kDataTypeSizeBitOffset + 4, kDataTypeSizeBitOffset + 1, kDataTypeSizeBitOffset + 2, kDataTypeSizeBitOffset + 2,
      4, 1, 1, 1, 1, kDataTypeSizeBitOffset + 6, kDataTypeSizeBitOffset + 6, kDataTypeSizeBitOffset + 4,
      kDataTypeSizeBitOffset + 4, kDataTypeSizeBitOffset + 4,
  };
  if ((data_type < 0) || (data_type >= DT_MAX)) {
    return -1;
  }
  return data_type_size[data_type];
}
}  // namespace ge

#endif  // INC_EXTERNAL_GRAPH_TYPES_H_
