"""``DataType``: the vendor's ``ge::DataType`` numbers (graph/types.h) under its Python names."""

from __future__ import annotations

from enum import Enum

__all__ = ["DataType"]


class DataType(Enum):
    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_BF16 = 27
