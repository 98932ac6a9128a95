"""Hand-written pyACL functions of the devices family: those whose C prototypes have structures,
arrays, callbacks or character buffers, so acl/_auto.py cannot build them. acl.rt imports every
public name of this module.

Conventions beyond acl.rt's:

* a structure coming out is a ``dict`` of its fields, the C field names in snake case
  (``cubeUtilization`` is ``"cube_utilization"``, as pyACL names them); a structure going in
  is such a dict (missing keys are 0);
* when ``ret`` is not 0 an output is empty of its kind: ``{}`` for a structure, ``[]`` for a
  list, ``""`` for a string, 0 for a number;
* a callback is a Python callable; the C function pointer made for it (a ctypes ``CFUNCTYPE``)
  is kept alive by this module for as long as the C side may call it, and an exception it
  raises is caught and logged (logger ``"acl"``), never passed into C (a callback that must
  return an ``aclError`` then returns ``ACL_ERROR_FAILURE``, 500001);
* user data (``args``) is any Python object, handed back to the callback as it was given.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from ctypes import (
    POINTER,
    Structure,
    Union,
    byref,
    c_char,
    c_char_p,
    c_int,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_void_p,
)
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._lib import func, lib
from ._conv import handle_in as _in

__all__: List[str] = [
    # exception information
    "set_exception_info_callback", "exception_info_callback_register",
    "exception_info_callback_unregister",
    # device queries
    "get_device_utilization_rate", "device_get_uuid", "device_get_pci_bus_id",
    "device_get_host_atomic_capabilities", "device_get_p2p_atomic_capabilities",
    "get_primary_ctx_state",
    # device state callbacks
    "reg_device_state_callback", "set_device_task_abort_callback",
    # device errors
    "get_error_verbose", "repair_error",
]

_log = logging.getLogger("acl")

#: ``ACL_ERROR_FAILURE``: what a callback that must return an ``aclError`` gives when it raised.
ACL_ERROR_FAILURE = 500001
#: ``ACL_RT_MEM_UCE_INFO_MAX_NUM`` and ``UCE_INFO_RESERVED_SIZE`` of ``acl/acl_rt.h``.
MEM_UCE_INFO_MAX_NUM = 20
UCE_INFO_RESERVED_SIZE = 14


def _bytes_in(text: Optional[str]) -> Optional[bytes]:
    if text is None or isinstance(text, bytes):
        return text
    return str(text).encode("utf-8")


def _call_safely(what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Calls a user's callback from a C thread: ``(True, result)``, or ``(False, None)`` when it
    raised (logged, never passed into C)."""
    try:
        return True, fn(*args)
    except BaseException:  # noqa: BLE001 - nothing may unwind into the C caller
        _log.exception("acl: the %s callback raised; the exception stops here", what)
        return False, None


def _code(what: str, fn: Callable[..., Any], *args: Any) -> int:
    """A callback returning an ``aclError``: its int (None is 0), ACL_ERROR_FAILURE if it raised."""
    ok, result = _call_safely(what, fn, *args)
    if not ok:
        return ACL_ERROR_FAILURE
    if result is None:
        return 0
    try:
        return int(result)
    except (TypeError, ValueError):
        _log.error("acl: the %s callback returned %r, not an int: taken as failure", what, result)
        return ACL_ERROR_FAILURE


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _to_dict(value: Any) -> Any:
    """A ctypes structure (or array of them) as dicts and lists, field names in snake case."""
    if isinstance(value, Structure):
        return {_snake(name): _to_dict(getattr(value, name)) for name, *_ in value._fields_}
    if isinstance(value, ctypes.Array):
        return [_to_dict(v) for v in value]
    return value


# ---- structures and callback types of acl/acl_rt.h ------------------------------------------


class Uuid(Structure):
    """``aclrtUuid``: 16 bytes (``char bytes[16]``, read as raw bytes)."""

    _fields_ = [("bytes", ctypes.c_ubyte * 16)]


class UtilizationInfo(Structure):
    """``aclrtUtilizationInfo``."""

    _fields_ = [
        ("cubeUtilization", c_int32),
        ("vectorUtilization", c_int32),
        ("aicpuUtilization", c_int32),
        ("memoryUtilization", c_int32),
        ("utilizationExtend", c_void_p),
    ]


class MemUceInfo(Structure):
    """``aclrtMemUceInfo``: a range hit by an uncorrectable error."""

    _fields_ = [("addr", c_void_p), ("len", c_size_t), ("reserved", c_size_t * UCE_INFO_RESERVED_SIZE)]


class MemUceInfoArray(Structure):
    """``aclrtMemUceInfoArray``."""

    _fields_ = [("arraySize", c_size_t), ("memUceInfoArray", MemUceInfo * MEM_UCE_INFO_MAX_NUM)]


class ErrorInfoDetail(Union):
    """``aclrtErrorInfoDetail``: the details the error type names."""

    _fields_ = [("uceInfo", MemUceInfoArray), ("aicoreErrType", c_int)]


class ErrorInfo(Structure):
    """``aclrtErrorInfo``."""

    _fields_ = [
        ("tryRepair", c_uint8),
        ("hasDetail", c_uint8),
        ("reserved", c_uint8 * 2),
        ("errorType", c_int),
        ("detail", ErrorInfoDetail),
    ]


ExceptionInfoCallback = ctypes.CFUNCTYPE(None, c_void_p)
DeviceStateCallback = ctypes.CFUNCTYPE(None, c_int32, c_int, c_void_p)
DeviceTaskAbortCallback = ctypes.CFUNCTYPE(c_int32, c_int32, c_int, c_uint32, c_void_p)

_PROTOTYPES = {
    "aclrtSetExceptionInfoCallback": (c_int, [ExceptionInfoCallback]),
    "aclrtExceptionInfoCallbackRegister": (c_int, [ExceptionInfoCallback]),
    "aclrtExceptionInfoCallbackUnregister": (c_int, [ExceptionInfoCallback]),
    "aclrtGetDeviceUtilizationRate": (c_int, [c_int32, POINTER(UtilizationInfo)]),
    "aclrtDeviceGetUuid": (c_int, [c_int32, POINTER(Uuid)]),
    "aclrtDeviceGetPCIBusId": (c_int, [c_int32, POINTER(c_char), c_int32]),
    "aclrtDeviceGetHostAtomicCapabilities": (c_int, [POINTER(c_uint32), POINTER(c_int), c_uint32, c_int32]),
    "aclrtDeviceGetP2PAtomicCapabilities": (
        c_int, [POINTER(c_uint32), POINTER(c_int), c_uint32, c_int32, c_int32]
    ),
    "aclrtGetPrimaryCtxState": (c_int, [c_int32, POINTER(c_uint32), POINTER(c_int32)]),
    "aclrtRegDeviceStateCallback": (c_int, [c_char_p, DeviceStateCallback, c_void_p]),
    "aclrtSetDeviceTaskAbortCallback": (c_int, [c_char_p, DeviceTaskAbortCallback, c_void_p]),
    "aclrtGetErrorVerbose": (c_int, [c_int32, POINTER(ErrorInfo)]),
    "aclrtRepairError": (c_int, [c_int32, POINTER(ErrorInfo)]),
}

for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name, None)
    if _fn is not None:
        _fn.restype = _restype
        _fn.argtypes = _argtypes

# Every C function pointer made for a Python callback, kept here while C may call it.
_lock = threading.RLock()  # re-entrant: a callback run inside a registration may register
_legacy_exception_callback: List[Any] = []  # [thunk] while one is set
_exception_callbacks: Dict[Any, Any] = {}  # Python callable -> thunk
# Thunks of unregistered exception callbacks: the C side documents that a report already under
# way may still call one, so they are never freed (one per function ever registered).
_retired_exception_callbacks: Dict[Any, Any] = {}
_retired_legacy_callbacks: List[Any] = []
_device_state_callbacks: Dict[str, Any] = {}  # regName -> thunk
_task_abort_callbacks: Dict[str, Any] = {}  # regName -> thunk


# ---- exception information -----------------------------------------------------------------


def _exception_thunk(fn: Callable[[int], Any]) -> Any:
    def call(info: Optional[int]) -> None:
        _call_safely("exception info", fn, 0 if info is None else int(info))

    return ExceptionInfoCallback(call)


def set_exception_info_callback(fn: Optional[Callable[[int], Any]] = None) -> int:
    """``aclrtSetExceptionInfoCallback``: ``ret = acl.rt.set_exception_info_callback(fn)``.

    ``fn(exception_info)`` is called on the failing stream's worker thread when a stream task
    fails, with the address of the ``aclrtExceptionInfo`` (an int), to read during the call
    with ``acl.rt.get_task_id_from_exception_info`` and the other ``get_*_from_exception_info``
    functions. One process-wide callback: setting another replaces it, None (or no argument)
    clears it. It stands apart from the ones of ``exception_info_callback_register``.
    """
    with _lock:
        thunk = None if fn is None else _exception_thunk(fn)
        ret = func("aclrtSetExceptionInfoCallback")(ExceptionInfoCallback() if thunk is None else thunk)
        if ret == 0:
            # The one replaced may be in a report under way: keep it with the retired ones.
            _retired_legacy_callbacks.extend(_legacy_exception_callback)
            _legacy_exception_callback[:] = [] if thunk is None else [thunk]
        return ret


def exception_info_callback_register(fn: Optional[Callable[[int], Any]]) -> int:
    """``aclrtExceptionInfoCallbackRegister``: adds the process-wide callback ``fn(exception_info)``
    (as for ``set_exception_info_callback``). Registering the same callable again adds
    nothing; None is 100000. Returns ret.
    """
    if fn is None:
        return func("aclrtExceptionInfoCallbackRegister")(ExceptionInfoCallback())
    with _lock:
        thunk = _exception_callbacks.get(fn)
        if thunk is None:
            thunk = _retired_exception_callbacks.get(fn)
        if thunk is None:
            thunk = _exception_thunk(fn)
        ret = func("aclrtExceptionInfoCallbackRegister")(thunk)
        if ret == 0:
            _exception_callbacks[fn] = thunk
            _retired_exception_callbacks.pop(fn, None)
        return ret


def exception_info_callback_unregister(fn: Optional[Callable[[int], Any]]) -> int:
    """``aclrtExceptionInfoCallbackUnregister``: removes a callable registered with
    ``exception_info_callback_register`` (one never registered: 0, nothing done; None: 100000).
    Returns ret. A report already under way may still call it once.
    """
    if fn is None:
        return func("aclrtExceptionInfoCallbackUnregister")(ExceptionInfoCallback())
    with _lock:
        thunk = _exception_callbacks.get(fn)
        if thunk is None:
            # Not registered from here: C answers for a pointer it never saw (success).
            thunk = _retired_exception_callbacks.get(fn)
        if thunk is None:
            thunk = _exception_thunk(fn)
        ret = func("aclrtExceptionInfoCallbackUnregister")(thunk)
        if ret == 0 and fn in _exception_callbacks:
            _retired_exception_callbacks[fn] = _exception_callbacks.pop(fn)
        return ret


# ---- device queries ------------------------------------------------------------------------


def get_device_utilization_rate(device_id: int) -> Tuple[Dict[str, int], int]:
    """``aclrtGetDeviceUtilizationRate``: ``utilization_info, ret`` (pyACL's form).

    `utilization_info` is a dict with ``cube_utilization``, ``vector_utilization``,
    ``aicpu_utilization`` and ``memory_utilization`` (percent, -1: not there / not measured)
    and ``utilization_extend`` (reserved, 0).
    """
    info = UtilizationInfo()
    ret = func("aclrtGetDeviceUtilizationRate")(device_id, byref(info))
    if ret != 0:
        return {}, ret
    out = _to_dict(info)
    out["utilization_extend"] = out["utilization_extend"] or 0
    return out, ret


def device_get_uuid(device_id: int) -> Tuple[Dict[str, bytes], int]:
    """``aclrtDeviceGetUuid``: ``uuid, ret``; `uuid` is ``{"bytes": <16 bytes>}`` (the
    ``aclrtUuid`` structure as a dict), the same in every process, different per device."""
    uuid = Uuid()
    ret = func("aclrtDeviceGetUuid")(device_id, byref(uuid))
    if ret != 0:
        return {}, ret
    return {"bytes": bytes(uuid.bytes)}, ret


def device_get_pci_bus_id(device_id: int, len: int = 64) -> Tuple[str, int]:  # noqa: A002
    """``aclrtDeviceGetPCIBusId``: ``pci_bus_id, ret``, e.g. ``"0000:01:00.0"``.

    `len` is the size of the C buffer (at least 13, else 107000), as ``notify_get_export_key``
    takes its key length.
    """
    size = int(len)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = func("aclrtDeviceGetPCIBusId")(device_id, buf, size)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


def _operations(operations: Sequence[int]) -> Tuple[Any, Any, int]:
    ops = [int(op) for op in ([operations] if isinstance(operations, int) else operations)]
    count = len(ops)
    return (c_int * max(count, 1))(*ops), (c_uint32 * max(count, 1))(), count


def device_get_host_atomic_capabilities(operations: Sequence[int], device_id: int) -> Tuple[List[int], int]:
    """``aclrtDeviceGetHostAtomicCapabilities``: ``capabilities, ret``.

    `operations` is a list of ``aclrtAtomicOperation`` values (its length is the C `count`;
    an empty list is 100000); `capabilities` the list of their ``aclrtAtomicOperationCapability``
    bit sets between the host and `device_id`, in the same order.
    """
    ops, caps, count = _operations(operations)
    ret = func("aclrtDeviceGetHostAtomicCapabilities")(caps, ops, count, device_id)
    return (list(caps[:count]) if ret == 0 else []), ret


def device_get_p2p_atomic_capabilities(
    operations: Sequence[int], src_device_id: int, dst_device_id: int
) -> Tuple[List[int], int]:
    """``aclrtDeviceGetP2PAtomicCapabilities``: ``capabilities, ret``, as
    ``device_get_host_atomic_capabilities`` between devices `src_device_id` and `dst_device_id`."""
    ops, caps, count = _operations(operations)
    ret = func("aclrtDeviceGetP2PAtomicCapabilities")(caps, ops, count, src_device_id, dst_device_id)
    return (list(caps[:count]) if ret == 0 else []), ret


def get_primary_ctx_state(device_id: int) -> Tuple[int, int, int]:
    """``aclrtGetPrimaryCtxState``: ``active, flags, ret`` (pyACL's form and order).

    `active` is 1 while the device is set, else 0; `flags` is reserved and always 0: the C
    `flags` must be NULL, which this passes (the prototype alone would give it an output cell,
    which the C function refuses with 100000).
    """
    active = c_int32(0)
    ret = func("aclrtGetPrimaryCtxState")(device_id, None, byref(active))
    return (active.value if ret == 0 else 0), 0, ret


# ---- device state callbacks ----------------------------------------------------------------


def reg_device_state_callback(
    reg_name: str, callback: Optional[Callable[[int, int, Any], Any]], args: Any = None
) -> int:
    """``aclrtRegDeviceStateCallback``: ``ret = acl.rt.reg_device_state_callback(reg_name,
    callback, args)``.

    ``callback(device_id, state, args)`` is called on the calling thread before and after a
    device opens (``ACL_RT_DEVICE_STATE_SET_PRE`` 0, ``..._SET_POST`` 1: the first
    ``set_device``) and closes (``..._RESET_PRE`` 2, ``..._RESET_POST`` 3: the last reset,
    ``finalize``'s included); `args` is handed back as given. `reg_name` must be unique
    (107000 when taken; "" or None: 100000); a None `callback` unregisters `reg_name`.
    """
    name = _bytes_in(reg_name)
    with _lock:
        if callback is None:
            ret = func("aclrtRegDeviceStateCallback")(name, DeviceStateCallback(), None)
            if ret == 0 and reg_name is not None:
                _device_state_callbacks.pop(str(reg_name), None)
            return ret

        def call(device_id: int, state: int, _args: Optional[int]) -> None:
            _call_safely("device state", callback, device_id, state, args)

        thunk = DeviceStateCallback(call)
        ret = func("aclrtRegDeviceStateCallback")(name, thunk, None)
        if ret == 0:
            _device_state_callbacks[str(reg_name)] = thunk
        return ret


def set_device_task_abort_callback(
    reg_name: str, callback: Optional[Callable[[int, int, int, Any], Any]], args: Any = None
) -> int:
    """``aclrtSetDeviceTaskAbortCallback``: ``ret = acl.rt.set_device_task_abort_callback(reg_name,
    callback, args)``.

    ``callback(device_id, stage, timeout, args)`` is called before (``ACL_RT_DEVICE_TASK_ABORT_PRE``
    0) and after (``..._POST`` 1) every ``device_task_abort``, with its device and time-out;
    it returns an int (None is 0: a non-zero one is logged and the abort goes on). Names and
    None `callback` as for ``reg_device_state_callback``.
    """
    name = _bytes_in(reg_name)
    with _lock:
        if callback is None:
            ret = func("aclrtSetDeviceTaskAbortCallback")(name, DeviceTaskAbortCallback(), None)
            if ret == 0 and reg_name is not None:
                _task_abort_callbacks.pop(str(reg_name), None)
            return ret

        def call(device_id: int, stage: int, timeout: int, _args: Optional[int]) -> int:
            return _code("device task abort", callback, device_id, stage, timeout, args)

        thunk = DeviceTaskAbortCallback(call)
        ret = func("aclrtSetDeviceTaskAbortCallback")(name, thunk, None)
        if ret == 0:
            _task_abort_callbacks[str(reg_name)] = thunk
        return ret


# ---- device errors -------------------------------------------------------------------------


def _error_info_dict(info: ErrorInfo) -> Dict[str, Any]:
    uce = info.detail.uceInfo
    shown = min(int(uce.arraySize), MEM_UCE_INFO_MAX_NUM)
    return {
        "try_repair": info.tryRepair,
        "has_detail": info.hasDetail,
        "reserved": list(info.reserved),
        "error_type": info.errorType,
        "detail": {
            "uce_info": {
                "array_size": int(uce.arraySize),
                "mem_uce_info_array": [
                    {"addr": e.addr or 0, "len": e.len, "reserved": list(e.reserved)}
                    for e in uce.memUceInfoArray[:shown]
                ],
            },
            "aicore_err_type": info.detail.aicoreErrType,
        },
    }


def _error_info_struct(value: Dict[str, Any]) -> ErrorInfo:
    info = ErrorInfo()
    info.tryRepair = int(value.get("try_repair", 0))
    info.hasDetail = int(value.get("has_detail", 0))
    info.errorType = int(value.get("error_type", 0))
    detail = value.get("detail") or {}
    uce = detail.get("uce_info")
    if uce:
        entries = list(uce.get("mem_uce_info_array", []))[:MEM_UCE_INFO_MAX_NUM]
        info.detail.uceInfo.arraySize = int(uce.get("array_size", len(entries)))
        for i, e in enumerate(entries):
            info.detail.uceInfo.memUceInfoArray[i].addr = _in(e.get("addr"))
            info.detail.uceInfo.memUceInfoArray[i].len = int(e.get("len", 0))
    elif "aicore_err_type" in detail:
        info.detail.aicoreErrType = int(detail["aicore_err_type"])
    return info


def get_error_verbose(device_id: int) -> Tuple[Dict[str, Any], int]:
    """``aclrtGetErrorVerbose``: ``error_info, ret``, the device's error details after a fault.

    `error_info` is the ``aclrtErrorInfo`` as a dict: ``try_repair``, ``has_detail``,
    ``reserved`` (2 ints), ``error_type`` (``aclrtErrorType``) and ``detail``, the union given
    both ways: ``{"uce_info": {"array_size": n, "mem_uce_info_array": [{"addr", "len",
    "reserved"}, ...]}, "aicore_err_type": int}`` (read the one `error_type` names; the list
    holds `array_size` entries, at most 20). Here a device never fails: ``ACL_RT_NO_ERROR``.
    """
    info = ErrorInfo()
    ret = func("aclrtGetErrorVerbose")(device_id, byref(info))
    return (_error_info_dict(info) if ret == 0 else {}), ret


def repair_error(device_id: int, error_info: Dict[str, Any]) -> int:
    """``aclrtRepairError``: repairs the error `error_info` describes (a dict as
    ``get_error_verbose`` gives; missing keys are 0; ``detail`` may hold either ``uce_info`` or
    ``aicore_err_type``). Needs an NPU's HBM: 207000 here. Returns ret."""
    info = _error_info_struct(dict(error_info or {}))
    return func("aclrtRepairError")(device_id, byref(info))
