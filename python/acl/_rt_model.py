"""Hand-written pyACL functions of the model family in ``acl.rt``: kernel binaries and launches,
label lists, random numbers and task updates, whose C prototypes have structures, arrays,
callbacks or character buffers, so acl/_auto.py cannot build them. acl.rt imports every public
name of this module.

No NPU kernel runs on this machine: the binary and launch functions answer what the C library
answers (207000, ``ACL_ERROR_RT_FEATURE_NOT_SUPPORT``, docs/compatibility.md); their Python forms
still build the C structures exactly, so the same call works on the vendor's runtime.

Structures going in are dicts (keys below, in snake case of the C fields); arrays are lists.

* a launch configuration ``cfg`` (``aclrtLaunchKernelCfg``) is a list of attributes, each a
  dict ``{"id": aclrtLaunchKernelAttrId, "value": int}`` (or an ``(id, value)`` pair); the value
  is written over the union from its first byte, little-endian, so ``uint8``, ``uint16``,
  ``uint32`` and the 64-bit ``timeoutUs`` (low half first) members all take a plain ``int``;
  ``None`` or ``[]`` passes no configuration (NULL);
* binary load ``options`` (``aclrtBinaryLoadOptions``) are a list of ``{"type": int,
  "value": int}`` (or ``(type, value)``) for ``aclrtBinaryLoadOption``; ``None`` is NULL;
* a placeholder array (``aclrtPlaceHolderInfo``) is a list of ``{"addr_offset": int,
  "data_offset": int}`` (or pairs); a ``dim3`` is ``(x, y, z)`` (or a dict with those keys).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from ctypes import POINTER, Structure, Union, byref, c_char, c_char_p, c_int, c_int32, c_size_t
from ctypes import c_uint8, c_uint32, c_void_p
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._lib import func
from ._conv import handle_in as _in, handle_out as _out, text_in as _str_in

__all__: List[str] = [
    "binary_set_exception_callback", "binary_load_from_file", "binary_load_from_data",
    "launch_kernel_with_config", "get_function_name", "launch_kernel_v2",
    "launch_kernel_with_host_args", "launch_kernel_with_args_array",
    "launch_simt_kernel_with_args_array", "launch_simt_kernel_with_host_args",
    "create_label_list", "random_num_async", "task_update_async",
]

_log = logging.getLogger("acl")


def _field(item: Any, key: str, index: int, default: Any = 0) -> Any:
    """`key` of a dict, or element `index` of a pair/tuple."""
    if isinstance(item, dict):
        return item.get(key, default)
    return item[index]


# ---- the C structures (include/acl/acl_rt.h) -----------------------------------------------


class BinaryLoadOptionValue(Union):
    """``aclrtBinaryLoadOptionValue``."""

    _fields_ = [("isLazyLoad", c_uint32), ("magic", c_uint32), ("cpuKernelMode", c_int32), ("rsv", c_uint32 * 4)]


class BinaryLoadOption(Structure):
    """``aclrtBinaryLoadOption``."""

    _fields_ = [("type", c_int32), ("value", BinaryLoadOptionValue)]


class BinaryLoadOptions(Structure):
    """``aclrtBinaryLoadOptions``."""

    _fields_ = [("options", POINTER(BinaryLoadOption)), ("numOpt", c_size_t)]


class LaunchKernelAttrValue(Union):
    """``aclrtLaunchKernelAttrValue`` (16 bytes; written through ``rsv``)."""

    _fields_ = [("rsv", c_uint32 * 4)]


class LaunchKernelAttr(Structure):
    """``aclrtLaunchKernelAttr``."""

    _fields_ = [("id", c_int32), ("value", LaunchKernelAttrValue)]


class LaunchKernelCfg(Structure):
    """``aclrtLaunchKernelCfg``."""

    _fields_ = [("attrs", POINTER(LaunchKernelAttr)), ("numAttrs", c_size_t)]


class PlaceHolderInfo(Structure):
    """``aclrtPlaceHolderInfo``."""

    _fields_ = [("addrOffset", c_uint32), ("dataOffset", c_uint32)]


class Dim3(Structure):
    """``dim3``."""

    _fields_ = [("x", c_uint32), ("y", c_uint32), ("z", c_uint32)]


class RandomParaInfo(Structure):
    """``aclrtRandomParaInfo``."""

    _fields_ = [("isAddr", c_uint8), ("valueOrAddr", c_uint8 * 8), ("size", c_uint8), ("rsv", c_uint8 * 6)]


class _TwoParas(Structure):
    _fields_ = [("a", RandomParaInfo), ("b", RandomParaInfo)]


class RandomNumFuncParamInfo(Union):
    """``aclrtRandomNumFuncParamInfo``: the dropout ratio, (min, max) or (mean, stddev)."""

    _fields_ = [("dropoutRation", RandomParaInfo), ("pair", _TwoParas)]


class RandomNumFuncParaInfo(Structure):
    """``aclrtRandomNumFuncParaInfo``."""

    _fields_ = [("funcType", c_int), ("paramInfo", RandomNumFuncParamInfo)]


class RandomNumTaskInfo(Structure):
    """``aclrtRandomNumTaskInfo``."""

    _fields_ = [
        ("dataType", c_int),
        ("randomNumFuncParaInfo", RandomNumFuncParaInfo),
        ("randomParaAddr", c_void_p),
        ("randomResultAddr", c_void_p),
        ("randomCounterAddr", c_void_p),
        ("randomSeed", RandomParaInfo),
        ("randomNum", RandomParaInfo),
        ("rsv", c_uint8 * 8),
    ]


class RandomTaskUpdateAttr(Structure):
    """``aclrtRandomTaskUpdateAttr``."""

    _fields_ = [("srcAddr", c_void_p), ("size", c_size_t), ("rsv", c_uint32 * 4)]


class AicAivTaskUpdateAttr(Structure):
    """``aclrtAicAivTaskUpdateAttr``."""

    _fields_ = [("binHandle", c_void_p), ("funcEntryAddr", c_void_p), ("blockDimAddr", c_void_p), ("rsv", c_uint32 * 4)]


class UpdateTaskAttrVal(Union):
    """``aclrtUpdateTaskAttrVal``."""

    _fields_ = [("randomTaskAttr", RandomTaskUpdateAttr), ("aicAivTaskAttr", AicAivTaskUpdateAttr)]


class TaskUpdateInfo(Structure):
    """``aclrtTaskUpdateInfo``."""

    _fields_ = [("id", c_int), ("val", UpdateTaskAttrVal)]


#: ``aclrtOpExceptionCallback``: ``void (*)(aclrtExceptionInfo *, void *userData)``.
OpExceptionCallback = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)

_P = c_void_p
_PP = POINTER(c_void_p)
_CFG = POINTER(LaunchKernelCfg)
_PH = POINTER(PlaceHolderInfo)

_PROTOTYPES = {
    "aclrtBinarySetExceptionCallback": [_P, OpExceptionCallback, _P],
    "aclrtBinaryLoadFromFile": [c_char_p, POINTER(BinaryLoadOptions), _PP],
    "aclrtBinaryLoadFromData": [_P, c_size_t, POINTER(BinaryLoadOptions), _PP],
    "aclrtLaunchKernelWithConfig": [_P, c_uint32, _P, _CFG, _P, _P],
    "aclrtGetFunctionName": [_P, c_uint32, POINTER(c_char)],
    "aclrtLaunchKernelV2": [_P, c_uint32, _P, c_size_t, _CFG, _P],
    "aclrtLaunchKernelWithHostArgs": [_P, c_uint32, _P, _CFG, _P, c_size_t, _PH, c_size_t],
    "aclrtLaunchKernelWithArgsArray": [_P, c_uint32, _P, _CFG, _PP],
    "aclrtLaunchSIMTKernelWithArgsArray": [_P, Dim3, Dim3, c_size_t, _P, _CFG, _PP],
    "aclrtLaunchSIMTKernelWithHostArgs": [_P, Dim3, Dim3, c_size_t, _P, _CFG, _P, c_size_t, _PH, c_size_t],
    "aclrtCreateLabelList": [_PP, c_size_t, _PP],
    "aclrtRandomNumAsync": [POINTER(RandomNumTaskInfo), _P, _P],
    "aclrtTaskUpdateAsync": [_P, c_uint32, POINTER(TaskUpdateInfo), _P],
}


def _declare() -> None:
    for name, argtypes in _PROTOTYPES.items():
        try:
            fn = func(name)
        except NotImplementedError:
            continue  # the Python function raises NotImplementedError when called
        fn.restype = c_int
        fn.argtypes = argtypes


_declare()
_c = func


# ---- building the structures ---------------------------------------------------------------


def _cfg(cfg: Any) -> Tuple[Optional[Any], List[Any]]:
    """(pointer to an aclrtLaunchKernelCfg or None, objects to keep alive)."""
    if cfg is None:
        return None, []
    if isinstance(cfg, dict) and "attrs" in cfg:
        cfg = cfg["attrs"]
    items = list(cfg)
    if not items:
        return None, []
    attrs = (LaunchKernelAttr * len(items))()
    for i, item in enumerate(items):
        attrs[i].id = int(_field(item, "id", 0))
        value = int(_field(item, "value", 1)) & 0xFFFFFFFFFFFFFFFF
        attrs[i].value.rsv[0] = value & 0xFFFFFFFF
        attrs[i].value.rsv[1] = value >> 32
    c = LaunchKernelCfg(ctypes.cast(attrs, POINTER(LaunchKernelAttr)), len(items))
    return byref(c), [attrs, c]


def _options(options: Any) -> Tuple[Optional[Any], List[Any]]:
    if options is None:
        return None, []
    if isinstance(options, dict) and "options" in options:
        options = options["options"]
    items = list(options)
    arr = (BinaryLoadOption * max(len(items), 1))()
    for i, item in enumerate(items):
        arr[i].type = int(_field(item, "type", 0))
        value = int(_field(item, "value", 1))
        arr[i].value.rsv[0] = value & 0xFFFFFFFF
    c = BinaryLoadOptions(ctypes.cast(arr, POINTER(BinaryLoadOption)) if items else None, len(items))
    return byref(c), [arr, c]


def _place_holders(items: Optional[Sequence[Any]]) -> Tuple[Optional[Any], int]:
    items = list(items or [])
    if not items:
        return None, 0
    arr = (PlaceHolderInfo * len(items))()
    for i, item in enumerate(items):
        arr[i].addrOffset = int(_field(item, "addr_offset", 0))
        arr[i].dataOffset = int(_field(item, "data_offset", 1))
    return arr, len(items)


def _dim3(value: Any) -> Dim3:
    if isinstance(value, dict):
        return Dim3(int(value.get("x", 1)), int(value.get("y", 1)), int(value.get("z", 1)))
    if isinstance(value, int):
        return Dim3(value, 1, 1)
    x, y, z = (list(value) + [1, 1])[:3]
    return Dim3(int(x), int(y), int(z))


def _ptr_array(values: Optional[Sequence[Optional[int]]]) -> Optional[Any]:
    if values is None:
        return None
    items = [_in(v) for v in values]
    return (c_void_p * max(len(items), 1))(*items)


# ---- kernel binaries and functions (207000 here) -------------------------------------------

# bin handle -> (the C thunk, the Python callback, user data): alive while C may call them.
_exception_callbacks: Dict[int, Tuple[Any, Callable[..., Any], Any]] = {}
_callbacks_lock = threading.Lock()


def binary_set_exception_callback(
    bin_handle: int, callback: Optional[Callable[[int, Any], Any]], user_data: Any = None
) -> int:
    """``aclrtBinarySetExceptionCallback``: `callback(exception_info, user_data)` is called for
    an exception of a kernel of `bin_handle` (`exception_info` the ``aclrtExceptionInfo``
    address, an int; `user_data` the object given here). ``None`` removes it. The callback is
    kept alive while registered; an exception it raises is logged, never passed to C.
    Returns ret (207000 here: no kernel binary can be loaded)."""
    if callback is None:
        ret = _c("aclrtBinarySetExceptionCallback")(_in(bin_handle), ctypes.cast(None, OpExceptionCallback), None)
        if ret == 0:
            with _callbacks_lock:
                _exception_callbacks.pop(int(bin_handle or 0), None)
        return ret

    def trampoline(info: Optional[int], _data: Optional[int]) -> None:
        try:
            callback(int(info or 0), user_data)
        except BaseException:  # noqa: BLE001 - nothing may unwind into C
            _log.exception("acl.rt.binary_set_exception_callback: the callback raised")

    thunk = OpExceptionCallback(trampoline)
    ret = _c("aclrtBinarySetExceptionCallback")(_in(bin_handle), thunk, None)
    if ret == 0:
        with _callbacks_lock:
            _exception_callbacks[int(bin_handle or 0)] = (thunk, callback, user_data)
    return ret


def binary_load_from_file(bin_path: str, options: Any = None) -> Tuple[int, int]:
    """``aclrtBinaryLoadFromFile``: ``bin_handle, ret``; `options` a list of ``{"type", "value"}``
    (module docstring) or None. 207000 here."""
    opts, _keep = _options(options)
    value = c_void_p()
    ret = _c("aclrtBinaryLoadFromFile")(_str_in(bin_path), opts, byref(value))
    return _out(value, ret), ret


def binary_load_from_data(data: int, length: int, options: Any = None) -> Tuple[int, int]:
    """``aclrtBinaryLoadFromData``: ``bin_handle, ret`` for `length` bytes at address `data`
    (``bytes`` are accepted too, `length` then at most their size); `options` as for
    :func:`binary_load_from_file`. 207000 here."""
    keep = None
    if isinstance(data, (bytes, bytearray)):
        keep = ctypes.create_string_buffer(bytes(data), max(len(data), 1))
        length = min(int(length), len(data))
        address: Optional[int] = ctypes.addressof(keep)
    else:
        address = _in(data)
    opts, _keep = _options(options)
    value = c_void_p()
    ret = _c("aclrtBinaryLoadFromData")(address, length, opts, byref(value))
    del keep
    return _out(value, ret), ret


def get_function_name(func_handle: int, max_len: int = 256) -> Tuple[str, int]:
    """``aclrtGetFunctionName``: ``name, ret`` (a buffer of `max_len` bytes). 207000 here."""
    size = max(int(max_len), 0)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = _c("aclrtGetFunctionName")(_in(func_handle), size, buf)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


# ---- kernel launches (207000 here) ---------------------------------------------------------


def launch_kernel_with_config(
    func_handle: int, num_blocks: int, stream: int, cfg: Any, args_handle: int, reserve: int = 0
) -> int:
    """``aclrtLaunchKernelWithConfig``: `cfg` a list of ``{"id", "value"}`` attributes (module
    docstring) or None. Returns ret (207000 here)."""
    c, _keep = _cfg(cfg)
    return _c("aclrtLaunchKernelWithConfig")(
        _in(func_handle), num_blocks, _in(stream), c, _in(args_handle), _in(reserve)
    )


def launch_kernel_v2(func_handle: int, num_blocks: int, args_data: int, args_size: int, cfg: Any, stream: int) -> int:
    """``aclrtLaunchKernelV2``: `args_data` the address of `args_size` bytes of arguments.
    Returns ret (207000 here)."""
    c, _keep = _cfg(cfg)
    return _c("aclrtLaunchKernelV2")(_in(func_handle), num_blocks, _in(args_data), args_size, c, _in(stream))


def launch_kernel_with_host_args(
    func_handle: int, num_blocks: int, stream: int, cfg: Any, host_args: int, args_size: int,
    place_holder_array: Optional[Sequence[Any]] = None,
) -> int:
    """``aclrtLaunchKernelWithHostArgs``: `place_holder_array` a list of ``{"addr_offset",
    "data_offset"}`` (its length is ``placeHolderNum``). Returns ret (207000 here)."""
    c, _keep = _cfg(cfg)
    arr, num = _place_holders(place_holder_array)
    return _c("aclrtLaunchKernelWithHostArgs")(
        _in(func_handle), num_blocks, _in(stream), c, _in(host_args), args_size, arr, num
    )


def launch_kernel_with_args_array(
    func: int, num_blocks: int, stream: int, cfg: Any, args: Optional[Sequence[int]]  # noqa: A002
) -> int:
    """``aclrtLaunchKernelWithArgsArray``: `args` a list of argument addresses (``void **``).
    Returns ret (207000 here)."""
    c, _keep = _cfg(cfg)
    return _c("aclrtLaunchKernelWithArgsArray")(_in(func), num_blocks, _in(stream), c, _ptr_array(args))


def launch_simt_kernel_with_args_array(
    func: int, grid_dim: Any, block_dim: Any, dyn_ubuf_size: int, stream: int, cfg: Any,  # noqa: A002
    args: Optional[Sequence[int]],
) -> int:
    """``aclrtLaunchSIMTKernelWithArgsArray``: `grid_dim` and `block_dim` are ``(x, y, z)``
    (``dim3`` by value); `args` a list of argument addresses. Returns ret (207000 here)."""
    c, _keep = _cfg(cfg)
    return _c("aclrtLaunchSIMTKernelWithArgsArray")(
        _in(func), _dim3(grid_dim), _dim3(block_dim), dyn_ubuf_size, _in(stream), c, _ptr_array(args)
    )


def launch_simt_kernel_with_host_args(
    func: int, grid_dim: Any, block_dim: Any, dyn_ubuf_size: int, stream: int, cfg: Any,  # noqa: A002
    host_args: int, args_size: int, place_holder_array: Optional[Sequence[Any]] = None,
) -> int:
    """``aclrtLaunchSIMTKernelWithHostArgs``: as :func:`launch_simt_kernel_with_args_array`
    with host arguments and placeholders as :func:`launch_kernel_with_host_args`. Returns ret
    (207000 here)."""
    c, _keep = _cfg(cfg)
    arr, num = _place_holders(place_holder_array)
    return _c("aclrtLaunchSIMTKernelWithHostArgs")(
        _in(func), _dim3(grid_dim), _dim3(block_dim), dyn_ubuf_size, _in(stream), c, _in(host_args), args_size, arr, num
    )


# ---- labels ---------------------------------------------------------------------------------


def create_label_list(labels: Sequence[int], num: Optional[int] = None) -> Tuple[int, int]:
    """``aclrtCreateLabelList``: ``label_list, ret`` for the list of label handles `labels`
    (``num`` is ``len(labels)`` unless given, at most that). Every label must be live."""
    items = [_in(x) for x in labels]
    if num is None:
        num = len(items)
    if num < 0 or num > len(items):
        raise ValueError("num (%d) must be between 0 and len(labels) (%d)" % (num, len(items)))
    arr = (c_void_p * max(len(items), 1))(*items)
    value = c_void_p()
    ret = _c("aclrtCreateLabelList")(arr, num, byref(value))
    return _out(value, ret), ret


# ---- random numbers and task updates --------------------------------------------------------


def _para(value: Any) -> RandomParaInfo:
    """An ``aclrtRandomParaInfo`` from ``bytes`` (a value of ``len`` bytes), or from a dict
    ``{"is_addr": 0 or 1, "value_or_addr": int or bytes, "size": int}``."""
    p = RandomParaInfo()
    if isinstance(value, (bytes, bytearray)):
        value = {"is_addr": 0, "value_or_addr": bytes(value), "size": len(value)}
    elif isinstance(value, int):
        value = {"is_addr": 0, "value_or_addr": value, "size": 8}
    is_addr = int(value.get("is_addr", 0))
    raw = value.get("value_or_addr", value.get("value", 0))
    if isinstance(raw, (bytes, bytearray)):
        data = bytes(raw)[:8]
        size = int(value.get("size", len(data)))
    else:
        data = (int(raw) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
        size = int(value.get("size", 8))
    p.isAddr = is_addr
    p.valueOrAddr[: len(data)] = list(data)
    p.size = size
    return p


def random_num_async(task_info: Dict[str, Any], stream: int, reserve: int = 0) -> int:
    """``aclrtRandomNumAsync``: queues a random-number task. Returns ret.

    `task_info` (``aclrtRandomNumTaskInfo``) is a dict:

    * ``data_type``: an ``aclDataType``; ``func_type``: ``ACL_RT_RANDOM_NUM_FUNC_TYPE_*``
      (0 dropout bitmask, 1 uniform, 2 normal, 3 truncated normal);
    * the function's parameters, each a *para* (below): ``dropout_ration`` for a dropout
      bitmask, ``min`` and ``max`` for uniform, ``mean`` and ``stddev`` for the normals;
    * ``random_para_addr`` (0 allowed), ``random_result_addr``, ``random_counter_addr``: device
      addresses (the counter is 16 bytes);
    * ``random_seed`` and ``random_num``: paras (an ``int`` is an 8-byte value).

    A *para* (``aclrtRandomParaInfo``) is ``bytes`` (a value in the data type's width, e.g.
    ``struct.pack("<f", 0.5)``), an ``int`` (an 8-byte value), or a dict ``{"is_addr": 1,
    "value_or_addr": device_address, "size": 8}`` for a parameter read from device memory.
    """
    info = RandomNumTaskInfo()
    info.dataType = int(task_info.get("data_type", 0))
    func_type = int(task_info.get("func_type", 0))
    info.randomNumFuncParaInfo.funcType = func_type
    pi = info.randomNumFuncParaInfo.paramInfo
    if func_type == 0:
        pi.dropoutRation = _para(task_info.get("dropout_ration", b""))
    elif func_type == 1:
        pi.pair.a = _para(task_info.get("min", b""))
        pi.pair.b = _para(task_info.get("max", b""))
    else:
        pi.pair.a = _para(task_info.get("mean", b""))
        pi.pair.b = _para(task_info.get("stddev", b""))
    info.randomParaAddr = _in(task_info.get("random_para_addr"))
    info.randomResultAddr = _in(task_info.get("random_result_addr"))
    info.randomCounterAddr = _in(task_info.get("random_counter_addr"))
    info.randomSeed = _para(task_info.get("random_seed", 0))
    info.randomNum = _para(task_info.get("random_num", 0))
    return _c("aclrtRandomNumAsync")(byref(info), _in(stream), _in(reserve))


def task_update_async(task_stream: int, task_id: int, info: Dict[str, Any], exec_stream: int) -> int:
    """``aclrtTaskUpdateAsync``: `info` (``aclrtTaskUpdateInfo``) is a dict with ``id``
    (``ACL_RT_UPDATE_RANDOM_TASK`` 1 or ``ACL_RT_UPDATE_AIC_AIV_TASK`` 2) and, for 1,
    ``src_addr`` and ``size``; for 2, ``bin_handle``, ``func_entry_addr`` and
    ``block_dim_addr``. Returns ret (207000 here: only an NPU runs those tasks)."""
    c = TaskUpdateInfo()
    c.id = int(info.get("id", 0))
    if c.id == 2:
        c.val.aicAivTaskAttr.binHandle = _in(info.get("bin_handle"))
        c.val.aicAivTaskAttr.funcEntryAddr = _in(info.get("func_entry_addr"))
        c.val.aicAivTaskAttr.blockDimAddr = _in(info.get("block_dim_addr"))
    else:
        c.val.randomTaskAttr.srcAddr = _in(info.get("src_addr"))
        c.val.randomTaskAttr.size = int(info.get("size", 0))
    return _c("aclrtTaskUpdateAsync")(_in(task_stream), task_id, byref(c), _in(exec_stream))

