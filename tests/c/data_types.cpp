// ge::DataType has the vendor's numbers (hicann/metadef graph/types.h, through its c_types.h;
// the LLM-DataDist spec names DT_FLOAT=0 ... DT_BF16=27, DT_UNDEFINED=28): CacheDesc carries
// them across processes and into Python. Compiled, not run.
#include "graph/types.h"

static_assert(sizeof(ge::DataType) == 4, "a 4-byte enum");
static_assert(ge::DT_FLOAT == 0 && ge::DT_FLOAT16 == 1 && ge::DT_INT8 == 2 && ge::DT_INT32 == 3, "DT_*");
static_assert(ge::DT_UINT8 == 4 && ge::DT_INT16 == 6 && ge::DT_UINT16 == 7 && ge::DT_UINT32 == 8, "DT_*");
static_assert(ge::DT_INT64 == 9 && ge::DT_UINT64 == 10 && ge::DT_DOUBLE == 11 && ge::DT_BOOL == 12, "DT_*");
static_assert(ge::DT_STRING == 13 && ge::DT_COMPLEX64 == 16 && ge::DT_RESOURCE == 23 && ge::DT_VARIANT == 26,
              "DT_*");
static_assert(ge::DT_BF16 == 27 && ge::DT_UNDEFINED == 28 && ge::DT_INT4 == 29 && ge::DT_COMPLEX32 == 33, "DT_*");
static_assert(ge::DT_HIFLOAT8 == 34 && ge::DT_FLOAT8_E4M3FN == 36 && ge::DT_FLOAT4_E1M2 == 41 &&
                  ge::DT_HIFLOAT4 == 42 && ge::DT_MAX == 43,
              "DT_*");

int size_of_bf16();
int size_of_bf16() {
  return ge::GetSizeByDataType(ge::DT_BF16);
}
