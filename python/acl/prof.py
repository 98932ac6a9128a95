"""``acl.prof``: profiling (`aclprof*` of `acl/acl_prof.h`), in pyACL's form (see :mod:`acl.rt`).
Every function is built from its C prototype (acl/_auto.py) but those written by hand here.

The hand-written ones:

* ``init(profiler_result_path)`` and ``set_config(config_type, config)``: pyACL's forms, the C
  length computed from the ``str`` (it may still be given, as the C call takes it);
* ``create_config(device_id_list, aicore_metrics, aicore_events, data_type_config)``: pyACL's
  form, the device ids a Python list (its length is the C ``deviceNums``), ``aicore_events`` 0
  (NULL, the only value the C function takes); returns the configuration (0 on bad input);
* ``get_op_type(op_info, op_info_len, index, op_type_len)`` and ``get_op_name(..., op_name_len)``:
  ``text, ret``, pyACL's forms, the text read into a buffer of the length given;
* ``range_push_ex(attr)``: ``attr`` a dict for ``aclprofEventAttributes`` (ours: pyACL has no
  such function), see its docstring.

``op_info`` is the address of the records read from a subscription's pipe (an ``int``), as in
pyACL.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    POINTER,
    Structure,
    Union,
    byref,
    c_char,
    c_char_p,
    c_int,
    c_size_t,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _auto
from ._conv import declared, field as _get, handle_in as _in, text_in as _bytes
from ._lib import func

__all__: List[str] = ["init", "set_config", "create_config", "get_op_type", "get_op_name", "range_push_ex"]

#: ``ACL_PROF_TENSOR_DATA_SHAPE_LEN``: the dimensions one ``aclprofTensor`` holds.
TENSOR_DATA_SHAPE_LEN = 8
#: ``ACL_PROF_EVENT_ATTR_VERSION``.
EVENT_ATTR_VERSION = 1
#: ``ACL_PROF_MESSAGE_TYPE_TENSOR_INFO``.
MESSAGE_TYPE_TENSOR_INFO = 0


class ProfTensor(Structure):
    """``aclprofTensor``."""

    _fields_ = [
        ("type", c_uint32),
        ("format", c_uint32),
        ("dataType", c_uint32),
        ("shapeDim", c_uint32),
        ("shape", c_uint32 * TENSOR_DATA_SHAPE_LEN),
    ]


class ProfTensorInfo(Structure):
    """``aclprofTensorInfo``."""

    _fields_ = [
        ("opNameId", c_uint64),
        ("opTypeId", c_uint64),
        ("resv", c_uint32),
        ("tensorNum", c_uint32),
        ("kernelType", c_uint32),
        ("blockNums", c_uint32),
        ("stream", c_void_p),
        ("tensors", POINTER(ProfTensor)),
    ]


class ProfMessage(Union):
    """``aclprofEventAttributes::Message``."""

    _fields_ = [("tensorInfo", POINTER(ProfTensorInfo))]


class ProfEventAttributes(Structure):
    """``aclprofEventAttributes``."""

    _fields_ = [("version", c_uint16), ("size", c_uint16), ("messageType", c_uint32), ("message", ProfMessage)]


#: The structures of this module by C name, for the layout test.
STRUCTURES = {
    "aclprofTensor": ProfTensor,
    "aclprofTensorInfo": ProfTensorInfo,
    "aclprofEventAttributes": ProfEventAttributes,
}

_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "aclprofInit": (c_int, [c_char_p, c_size_t]),
    "aclprofSetConfig": (c_int, [c_int, c_char_p, c_size_t]),
    "aclprofCreateConfig": (c_void_p, [POINTER(c_uint32), c_uint32, c_int, c_void_p, c_uint64]),
    "aclprofGetOpType": (c_int, [c_void_p, c_size_t, c_uint32, POINTER(c_char), c_size_t]),
    "aclprofGetOpName": (c_int, [c_void_p, c_size_t, c_uint32, POINTER(c_char), c_size_t]),
    "aclprofRangePushEx": (c_int, [POINTER(ProfEventAttributes)]),
}

_c = declared(_PROTOTYPES)


# ---- the session ------------------------------------------------------------------------------


def init(profiler_result_path: str, length: Optional[int] = None) -> int:
    """``aclprofInit``: pyACL's ``ret = acl.prof.init(profiler_result_path)``; the C `length` is
    the path's length in bytes unless given. Returns ret (a second init: 100002)."""
    path = _bytes(profiler_result_path)
    size = (0 if path is None else len(path)) if length is None else int(length)
    return _c("aclprofInit")(path, size)


def set_config(config_type: int, config: str, config_length: Optional[int] = None) -> int:
    """``aclprofSetConfig``: pyACL's ``ret = acl.prof.set_config(config_type, config)``; the C
    length is the value's length in bytes unless given. Returns ret."""
    value = _bytes(config)
    size = (0 if value is None else len(value)) if config_length is None else int(config_length)
    return _c("aclprofSetConfig")(config_type, value, size)


def create_config(
    device_id_list: Sequence[int], aicore_metrics: int, aicore_events: Optional[int], data_type_config: int
) -> int:
    """``aclprofCreateConfig``: pyACL's ``prof_config = acl.prof.create_config(device_id_list,
    aicore_metrics, aicore_events, data_type_config)``. `device_id_list` is a list of device
    ids (its length is the C ``deviceNums``; an empty list only with ``ACL_PROF_MSPROFTX``);
    `aicore_events` must be 0 or None (NULL). Returns the configuration, 0 on bad input (the
    reason in ``acl.get_recent_err_msg()``)."""
    ids = [int(d) for d in ([device_id_list] if isinstance(device_id_list, int) else list(device_id_list))]
    array = (c_uint32 * max(len(ids), 1))(*ids)
    result = _c("aclprofCreateConfig")(array, len(ids), aicore_metrics, _in(aicore_events), data_type_config)
    return 0 if result is None else int(result)


# ---- subscription records ---------------------------------------------------------------------


def _text_of(c_name: str, op_info: int, op_info_len: int, index: int, length: int) -> Tuple[str, int]:
    size = int(length)
    if size < 0:
        raise ValueError("the text length must not be negative: %d" % size)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = _c(c_name)(_in(op_info), op_info_len, index, buf, size)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


def get_op_type(op_info: int, op_info_len: int, index: int, op_type_len: int) -> Tuple[str, int]:
    """``aclprofGetOpType``: ``op_type, ret`` of record `index` of the records at address
    `op_info` (`op_info_len` bytes), read into `op_type_len` bytes (``get_op_type_len``'s
    length, with the NUL). Each is read once, as the vendor's. ``""`` when ret is not 0."""
    return _text_of("aclprofGetOpType", op_info, op_info_len, index, op_type_len)


def get_op_name(op_info: int, op_info_len: int, index: int, op_name_len: int) -> Tuple[str, int]:
    """``aclprofGetOpName``: ``op_name, ret`` of record `index` (``model<id>/task<seq>``), read
    into `op_name_len` bytes (``get_op_name_len``'s length). Read once. ``""`` when ret is not 0."""
    return _text_of("aclprofGetOpName", op_info, op_info_len, index, op_name_len)


# ---- msproftx ranges with tensors -------------------------------------------------------------


def _tensor(value: Mapping[str, Any]) -> ProfTensor:
    shape = [int(s) for s in _get(value, "shape", [])]
    if len(shape) > TENSOR_DATA_SHAPE_LEN:
        raise ValueError("an aclprofTensor holds at most %d dimensions, not %d" % (TENSOR_DATA_SHAPE_LEN, len(shape)))
    t = ProfTensor(int(_get(value, "type")), int(_get(value, "format")), int(_get(value, "dataType")))
    t.shapeDim = int(_get(value, "shapeDim", len(shape)))
    for i, s in enumerate(shape):
        t.shape[i] = s
    return t


def range_push_ex(attr: Optional[Mapping[str, Any]]) -> int:
    """``aclprofRangePushEx`` (no pyACL counterpart: this form is ours): pushes a range
    carrying tensor information on this thread, popped by ``range_pop``. Returns ret.

    `attr` is a dict for ``aclprofEventAttributes`` (None: NULL)::

        {"version": 1,            # ACL_PROF_EVENT_ATTR_VERSION (default 1)
         "size": ...,             # default: the size of the C structure
         "messageType": 0,        # ACL_PROF_MESSAGE_TYPE_TENSOR_INFO (default 0)
         "tensorInfo": {          # aclprofTensorInfo, or None (NULL)
             "opNameId": int, "opTypeId": int,   # acl.prof.str2_id(...) of the names
             "resv": 0, "kernelType": int, "blockNums": int, "stream": int,
             "tensorNum": ...,    # default: len(tensors)
             "tensors": [{"type": int, "format": int, "dataType": int,
                          "shape": [int, ...],   # at most 8 dimensions
                          "shapeDim": ...}]}}    # default: len(shape)

    A ``tensorNum`` above ``len(tensors)`` raises ``ValueError`` (the C side would read past
    the list). Keys may be given in snake case too (``message_type``, ``tensor_info``, ``op_name_id``, ...).
    """
    if attr is None:
        return _c("aclprofRangePushEx")(None)
    a = ProfEventAttributes()
    a.version = int(_get(attr, "version", EVENT_ATTR_VERSION))
    a.size = int(_get(attr, "size", ctypes.sizeof(ProfEventAttributes)))
    a.messageType = int(_get(attr, "messageType", MESSAGE_TYPE_TENSOR_INFO))
    info_value = _get(attr, "tensorInfo", None)
    keep: List[Any] = []
    if info_value is not None:
        tensors = [_tensor(t) for t in _get(info_value, "tensors", [])]
        array = (ProfTensor * max(len(tensors), 1))(*tensors)
        info = ProfTensorInfo()
        info.opNameId = int(_get(info_value, "opNameId"))
        info.opTypeId = int(_get(info_value, "opTypeId"))
        info.resv = int(_get(info_value, "resv"))
        info.tensorNum = int(_get(info_value, "tensorNum", len(tensors)))
        if info.tensorNum > len(tensors):
            raise ValueError("tensorNum %d is more than the %d tensors given" % (info.tensorNum, len(tensors)))
        info.kernelType = int(_get(info_value, "kernelType"))
        info.blockNums = int(_get(info_value, "blockNums"))
        info.stream = _in(_get(info_value, "stream", None))
        info.tensors = ctypes.cast(array, POINTER(ProfTensor))
        keep += [array, info]
        a.message.tensorInfo = ctypes.pointer(info)
    ret = _c("aclprofRangePushEx")(byref(a))
    del keep
    return ret


__all__ += _auto.install(globals(), "prof", func)
