"""``acl.dump``: dump (`acldump*` of `acl/acl_dump.h`), in pyACL's form (see :mod:`acl.rt`). Every
function is built from its C prototype (acl/_auto.py) but those written by hand here (pyACL has
none of them: the forms are ours, by acl.rt's conventions):

* ``reg_callback(callback, flag=0)`` / ``unreg_callback()``: `callback` a Python callable
  ``callback(chunk, length) -> int`` getting each ``acldumpChunk`` as a dict (see
  ``reg_callback``); the module keeps its C wrapper alive until ``unreg_callback`` (or a later
  ``reg_callback``);
* ``save_exception_info(file_name, user_tag, tensors)``: `tensors` a list of dicts, one per
  ``acldumpTensorInfo`` (its length is the C ``tensorCount``);
* ``get_exception_info_path(max_len=4096)``: ``path, ret``, the path read into `max_len` bytes.

``aclopStartDumpArgs`` / ``aclopStopDumpArgs`` are ``acl.op_start_dump_args`` /
``acl.op_stop_dump_args`` (the ``acl`` prefix only, by the naming rule).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _auto
from ._conv import declared, field as _get, text_in as _bytes
from ._lib import func

__all__: List[str] = ["reg_callback", "unreg_callback", "save_exception_info", "get_exception_info_path"]

_log = logging.getLogger("acl")

#: ``ACL_DUMP_MAX_FILE_PATH_LENGTH``.
MAX_FILE_PATH_LENGTH = 4096
#: ``ACL_DUMP_MAX_SHAPE_NUM``.
MAX_SHAPE_NUM = 25


class DumpChunk(Structure):
    """``acldumpChunk`` (its ``dataBuf`` is a flexible array: ``bufLen`` bytes from its offset)."""

    _fields_ = [
        ("fileName", c_char * MAX_FILE_PATH_LENGTH),
        ("bufLen", c_uint32),
        ("isLastChunk", c_uint32),
        ("offset", c_int64),
        ("flag", c_int32),
        ("dataBuf", c_uint8 * 0),
    ]


class DumpTensorInfo(Structure):
    """``acldumpTensorInfo``."""

    _fields_ = [
        ("type", c_int),
        ("tensorSize", c_size_t),
        ("format", c_int32),
        ("dataType", c_int32),
        ("tensorAddr", POINTER(c_int64)),
        ("addrType", c_int),
        ("placement", c_int),
        ("argsOffset", c_uint32),
        ("shapeNum", c_uint32),
        ("originShapeNum", c_uint32),
        ("shape", c_uint64 * MAX_SHAPE_NUM),
        ("originShape", c_uint64 * MAX_SHAPE_NUM),
    ]


#: ``int32_t (*messageCallback)(const acldumpChunk *, int32_t)``.
DumpCallback = CFUNCTYPE(c_int32, POINTER(DumpChunk), c_int32)

#: The structures of this module by C name, for the layout test.
STRUCTURES = {"acldumpChunk": DumpChunk, "acldumpTensorInfo": DumpTensorInfo}

_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "acldumpRegCallback": (c_int, [DumpCallback, c_int32]),
    "acldumpUnregCallback": (None, []),
    "acldumpSaveExceptionInfo": (c_int, [c_char_p, c_char_p, POINTER(DumpTensorInfo), c_size_t]),
    "acldumpGetExceptionInfoPath": (c_int, [POINTER(c_char), c_size_t]),
}

_c = declared(_PROTOTYPES)


# ---- the dump callback ------------------------------------------------------------------------

_DATA_OFFSET = DumpChunk.dataBuf.offset

# The registered callable and its C wrapper: alive while the C side holds the wrapper.
_callback: Optional[Tuple[Callable[..., Any], Any]] = None
_callback_lock = threading.Lock()


def chunk_dict(chunk: Any) -> Dict[str, Any]:
    """An ``acldumpChunk`` (a pointer to one, or its address) as the dict ``reg_callback``'s
    callable gets: ``fileName`` (str), ``bufLen``, ``isLastChunk``, ``offset``, ``flag`` and
    ``dataBuf`` (``bytes``, the ``bufLen`` bytes of the flexible array)."""
    address = chunk if isinstance(chunk, int) else ctypes.cast(chunk, c_void_p).value
    if not address:
        raise ValueError("a NULL acldumpChunk")
    c = DumpChunk.from_address(address)
    return {
        "fileName": c.fileName.decode("utf-8", errors="replace"),
        "bufLen": c.bufLen,
        "isLastChunk": c.isLastChunk,
        "offset": c.offset,
        "flag": c.flag,
        "dataBuf": ctypes.string_at(address + _DATA_OFFSET, c.bufLen),
    }


def _wrapper(callback: Callable[[Optional[Dict[str, Any]], int], Any]) -> Any:
    def call(chunk: Any, length: int) -> int:
        try:
            if not chunk:
                result = callback(None, length)
            else:
                result = callback(chunk_dict(chunk), length)
            return 0 if result is None else int(result)
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.dump callback %r raised", callback)
            return -1

    return DumpCallback(call)


def reg_callback(callback: Optional[Callable[[Optional[Dict[str, Any]], int], Any]], flag: int = 0) -> int:
    """``acldumpRegCallback``: dump data goes to `callback` instead of files (`flag` 0 only, as
    the vendor's). `callback(chunk, length)` gets each chunk as a dict (``chunk_dict``:
    ``fileName``, ``bufLen``, ``isLastChunk``, ``offset``, ``flag``, ``dataBuf`` bytes; None for
    a NULL chunk) and the chunk's length; it returns an int (None counts as 0); an exception is logged and answered
    -1, never passed into C. `callback` None passes NULL (100000). The module keeps the C
    wrapper until ``unreg_callback`` or the next successful ``reg_callback``. Here no operator
    produces dump data, so the runtime keeps the callback without calling it. Returns ret."""
    global _callback
    with _callback_lock:
        if callback is None:
            return _c("acldumpRegCallback")(DumpCallback(), flag)
        wrapper = _wrapper(callback)
        ret = _c("acldumpRegCallback")(wrapper, flag)
        if ret == 0:
            _callback = (callback, wrapper)
    return ret


def unreg_callback() -> None:
    """``acldumpUnregCallback``: the callback is forgotten (its wrapper released). Returns None,
    as the C function returns nothing."""
    global _callback
    with _callback_lock:
        _c("acldumpUnregCallback")()
        _callback = None


def registered_callback() -> Optional[Callable[..., Any]]:
    """The Python callable ``reg_callback`` registered last (None after ``unreg_callback``)."""
    current = _callback
    return None if current is None else current[0]


def registered_wrapper() -> Optional[Any]:
    """The C function (``DumpCallback``) handed to the runtime for it, or None."""
    current = _callback
    return None if current is None else current[1]


# ---- exception data ---------------------------------------------------------------------------


def _shape(values: Sequence[int], what: str) -> List[int]:
    shape = [int(v) for v in values]
    if len(shape) > MAX_SHAPE_NUM:
        raise ValueError("%s holds at most %d dimensions, not %d" % (what, MAX_SHAPE_NUM, len(shape)))
    return shape


def _tensor(value: Mapping[str, Any]) -> DumpTensorInfo:
    t = DumpTensorInfo()
    t.type = int(_get(value, "type"))
    t.tensorSize = int(_get(value, "tensorSize"))
    t.format = int(_get(value, "format"))
    t.dataType = int(_get(value, "dataType"))
    addr = _get(value, "tensorAddr", 0)
    t.tensorAddr = ctypes.cast(c_void_p(int(addr) if addr else None), POINTER(c_int64))
    t.addrType = int(_get(value, "addrType", 2))
    t.placement = int(_get(value, "placement", 0))
    t.argsOffset = int(_get(value, "argsOffset"))
    shape = _shape(_get(value, "shape", []), "shape")
    origin = _shape(_get(value, "originShape", shape), "originShape")
    t.shapeNum = int(_get(value, "shapeNum", len(shape)))
    t.originShapeNum = int(_get(value, "originShapeNum", len(origin)))
    for i, s in enumerate(shape):
        t.shape[i] = s
    for i, s in enumerate(origin):
        t.originShape[i] = s
    return t


def save_exception_info(file_name: str, user_tag: Optional[str], tensors: Optional[Sequence[Mapping[str, Any]]]) -> int:
    """``acldumpSaveExceptionInfo``: saves the tensors (read from device memory) under the
    exception dump's root of the current device as ``<file_name>.custom.<time>``, tagged
    `user_tag` (None: NULL). Needs the exception dump enabled (``dump_scene``; 100045). Returns
    ret.

    `tensors` is a list (its length is the C ``tensorCount``; None: NULL) of dicts for
    ``acldumpTensorInfo``::

        {"type": ACL_DUMP_TENSOR_INPUT / _OUTPUT / _WORKSPACE (0, 1, 2),
         "tensorSize": bytes, "format": int, "dataType": int,
         "tensorAddr": device address (int),
         "addrType": 2,          # ACL_DUMP_ADDR_RAW, the default (the only kind saved)
         "placement": 0,         # ACL_DUMP_PLACEMENT_DEVICE, the default
         "argsOffset": int,
         "shape": [int, ...], "originShape": [int, ...],   # at most 25 each;
                                 # originShape defaults to shape
         "shapeNum": ..., "originShapeNum": ...}           # default: the lists' lengths

    Snake-case keys are accepted too (``tensor_size``, ``tensor_addr``, ...).
    """
    if tensors is None:
        array, count = None, 0
    else:
        items = [_tensor(t) for t in tensors]
        array, count = (DumpTensorInfo * max(len(items), 1))(*items), len(items)
    return _c("acldumpSaveExceptionInfo")(_bytes(file_name), _bytes(user_tag), array, count)


def get_exception_info_path(max_len: int = MAX_FILE_PATH_LENGTH) -> Tuple[str, int]:
    """``acldumpGetExceptionInfoPath``: ``path, ret``, the exception dump's root for the current
    device (``<root>/extra-info/data-dump/<device>/``), read into `max_len` bytes (more than 1,
    room for the NUL; too few: 100000). Needs the exception dump enabled (100045). ``""`` when
    ret is not 0."""
    size = int(max_len)
    if size < 0:
        raise ValueError("max_len must not be negative: %d" % size)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = _c("acldumpGetExceptionInfoPath")(buf, size)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


__all__ += _auto.install(globals(), "dump", func)
