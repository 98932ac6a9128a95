"""``acl.tdt``: TDT channels and queues (`acltdt*` of `acl/acl_tdt.h` and `acl/acl_tdt_queue.h`), in pyACL's form (see :mod:`acl.rt`). Every function is built from its
C prototype (acl/_auto.py) but those written by hand here: the two that take or give the
``int64_t`` array of an item's dims (``create_data_item``, ``get_dims_from_item``), where the
array is a Python list of ints."""

from __future__ import annotations

from ctypes import POINTER, c_int, c_int64, c_size_t, c_void_p
from typing import List, Optional, Sequence, Tuple

from . import _auto
from ._lib import func, lib

__all__: List[str] = ["create_data_item", "get_dims_from_item"]

#: The most dims an item may have (the C side refuses more).
MAX_DIMS = 128

_PROTOTYPES = {
    "acltdtCreateDataItem": (c_void_p, [c_int, POINTER(c_int64), c_size_t, c_int, c_void_p, c_size_t]),
    "acltdtGetDimsFromItem": (c_int, [c_void_p, POINTER(c_int64), c_size_t]),
}

for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name, None)
    if _fn is not None:
        _fn.restype = _restype
        _fn.argtypes = _argtypes


def _addr(value: Optional[int]) -> Optional[int]:
    return None if value is None or value == 0 else int(value)


def create_data_item(
    tdt_type: int,
    dims: Optional[Sequence[int]],
    dim_num: Optional[int],
    data_type: int,
    data_ptr: Optional[int],
    size: int,
) -> int:
    """``acltdtCreateDataItem``: ``data_item`` (an ``int`` handle, 0 when the C call gives NULL).

    Inputs in the C order: `tdt_type` an ``acltdtTensorType``, `dims` the shape as a list of
    ints (``[]`` or None: no dims, the C NULL), `dim_num` how many of them the C call reads
    (None: ``len(dims)``; more than ``len(dims)`` raises ValueError, as the C side would read
    past the list), `data_type` an ``aclDataType``, `data_ptr` the address of the item's data
    (the caller's memory, neither copied nor freed: it must stay alive until the item is sent)
    and `size` its length in bytes. What the C side refuses (dims with `dim_num` 0, `dim_num`
    > 0 without dims, more than 128 dims, dims on an item that is not a tensor) gives 0.
    """
    values = [] if dims is None else [int(d) for d in ([dims] if isinstance(dims, int) else dims)]
    num = len(values) if dim_num is None else int(dim_num)
    if num < 0 or (values and num > len(values)):
        raise ValueError("dim_num (%d) must be between 0 and len(dims) (%d)" % (num, len(values)))
    array = (c_int64 * len(values))(*values) if values else None
    item = func("acltdtCreateDataItem")(tdt_type, array, num, data_type, _addr(data_ptr), size)
    return 0 if item is None else int(item)


def get_dims_from_item(data_item: int, dim_num: Optional[int] = None) -> Tuple[List[int], int]:
    """``acltdtGetDimsFromItem``: ``dims, ret``; `dims` the item's shape as a list of ints
    (``[]`` when ``ret`` is not 0).

    `dim_num` is the C room for dims (None: the item's own count, from
    ``acltdtGetDimNumFromItem``; 0 passes the C NULL, which only an item without dims
    accepts). Fewer places than the item has dims: 100000, as the C call answers.
    """
    if dim_num is None:
        num = int(func("acltdtGetDimNumFromItem")(_addr(data_item)))
    else:
        num = int(dim_num)
    if num < 0:
        raise ValueError("dim_num (%d) must not be negative" % num)
    # The C call writes at most the item's dims (at most 128), so a room past that is never used.
    room = min(num, MAX_DIMS)
    array = (c_int64 * room)() if num > 0 else None
    ret = func("acltdtGetDimsFromItem")(_addr(data_item), array, num)
    if ret != 0:
        return [], ret
    count = int(func("acltdtGetDimNumFromItem")(_addr(data_item)))
    return ([int(v) for v in array[: min(count, room)]] if array is not None else []), ret


__all__ += _auto.install(globals(), "tdt", func)
