"""``acl.mdl``: the model runtime instances of AscendCL (``aclmdlRI*``: stream capture and
replay, ``acl.mdl.ri_capture_begin``...), in pyACL's form (see :mod:`acl.rt`). Every function is
built from its C prototype (acl/_auto.py) but those written by hand here: the ones with
structures (task parameters, conditional tasks: dicts), arrays (a model's streams and tasks:
lists), callbacks (destroy callbacks: Python callables) or character buffers (names: ``str``).

A task's parameters (``aclmdlRITaskParams``) are a dict: ``type`` (``aclmdlRITaskType``: 0
DEFAULT, 1 KERNEL, 2 EVENT_RECORD, 3 EVENT_WAIT, 4 EVENT_RESET, 5 VALUE_WRITE, 6 VALUE_WAIT),
``task_grp``, ``op_info_ptr``, ``op_info_size`` and the member of the union the type selects,
named as in C (a missing key is 0):

* ``kernel_task_params``: ``funchandle``, ``cfg``, ``args``, ``is_host_args``, ``args_size``,
  ``num_blocks`` (never filled here: no kernel runs);
* ``event_record_task_params`` / ``event_wait_task_params`` / ``event_reset_task_params``:
  ``event``, ``event_flag`` and ``record_flag`` / ``wait_flag`` / ``reset_flag``;
* ``value_write_task_params``: ``dev_addr``, ``value``;
* ``value_wait_task_params``: ``dev_addr``, ``value``, ``flag``.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from ctypes import POINTER, Structure, Union, byref, c_char, c_int, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _auto
from ._conv import handle_in as _in
from ._lib import func as _cfunc

__all__: List[str] = [
    "ri_get_name", "ri_get_streams", "ri_get_tasks_by_stream", "ri_task_get_params",
    "ri_task_set_params", "ri_kernel_task_get_attribute", "ri_destroy_register_callback",
    "ri_destroy_unregister_callback", "ri_cond_handle_get_cond_ptr", "ri_add_cond_task",
    "ri_capture_thread_exchange_mode",
]

_log = logging.getLogger("acl")

#: ``ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY``: the array given has no room for every handle.
_INSUFFICIENT_INPUT_ARRAY = 107039


def _int(value: Optional[int]) -> int:
    return 0 if value is None else int(value)


# ---- the C structures (include/acl/acl_rt.h) -----------------------------------------------


class KernelTaskParams(Structure):
    """``aclmdlRIKernelTaskParams``."""

    _fields_ = [
        ("funcHandle", c_void_p), ("cfg", c_void_p), ("args", c_void_p), ("isHostArgs", c_uint32),
        ("argsSize", c_size_t), ("numBlocks", c_uint32), ("rsv", c_uint32 * 10),
    ]


class EventTaskParams(Structure):
    """``aclmdlRIEventRecordTaskParams`` / ``...WaitTaskParams`` / ``...ResetTaskParams``."""

    _fields_ = [("event", c_void_p), ("eventFlag", c_uint32), ("flag", c_uint32)]


class ValueWriteTaskParams(Structure):
    """``aclmdlRIValueWriteTaskParams``."""

    _fields_ = [("devAddr", c_void_p), ("value", c_uint64)]


class ValueWaitTaskParams(Structure):
    """``aclmdlRIValueWaitTaskParams``."""

    _fields_ = [("devAddr", c_void_p), ("value", c_uint64), ("flag", c_uint32)]


class _TaskParamsUnion(Union):
    _fields_ = [
        ("rsv2", c_uint8 * 128), ("kernel", KernelTaskParams), ("event", EventTaskParams),
        ("valueWrite", ValueWriteTaskParams), ("valueWait", ValueWaitTaskParams),
    ]


class TaskParams(Structure):
    """``aclmdlRITaskParams`` (200 bytes, the union at 72)."""

    _anonymous_ = ("u",)
    _fields_ = [
        ("type", c_int), ("rsv0", c_uint32 * 3), ("taskGrp", c_void_p), ("opInfoPtr", c_void_p),
        ("opInfoSize", c_size_t), ("rsv1", c_uint8 * 32), ("u", _TaskParamsUnion),
    ]


class CondTaskParams(Structure):
    """``aclmdlRICondTaskParams`` (passed by value)."""

    _fields_ = [("handle", c_void_p), ("type", c_int), ("size", c_uint32), ("modelRIArray", POINTER(c_void_p))]


class _LaunchKernelAttrValue(Union):
    """``aclrtLaunchKernelAttrValue`` (16 bytes)."""

    _fields_ = [("rsv", c_uint32 * 4)]


#: ``aclrtCallback``: ``void (*)(void *userData)``.
Callback = ctypes.CFUNCTYPE(None, c_void_p)

_P = c_void_p
_PROTOTYPES = {
    "aclmdlRIGetName": [_P, c_uint32, POINTER(c_char)],
    "aclmdlRIGetStreams": [_P, POINTER(c_void_p), POINTER(c_uint32)],
    "aclmdlRIGetTasksByStream": [_P, POINTER(c_void_p), POINTER(c_uint32)],
    "aclmdlRITaskGetParams": [_P, POINTER(TaskParams)],
    "aclmdlRITaskSetParams": [_P, POINTER(TaskParams)],
    "aclmdlRIKernelTaskGetAttribute": [_P, ctypes.c_int32, POINTER(_LaunchKernelAttrValue)],
    "aclmdlRIDestroyRegisterCallback": [_P, Callback, _P],
    "aclmdlRIDestroyUnregisterCallback": [_P, Callback],
    "aclmdlRICondHandleGetCondPtr": [_P, POINTER(c_void_p)],
    "aclmdlRIAddCondTask": [CondTaskParams, _P, c_uint32],
    "aclmdlRICaptureThreadExchangeMode": [POINTER(c_int)],
}


def _declare() -> None:
    for name, argtypes in _PROTOTYPES.items():
        try:
            fn = _cfunc(name)
        except NotImplementedError:
            continue  # the Python function raises NotImplementedError when called
        fn.restype = c_int
        fn.argtypes = argtypes


_declare()

# ---- capture modes ---------------------------------------------------------------------------


def ri_capture_thread_exchange_mode(mode: int) -> Tuple[int, int]:
    """``aclmdlRICaptureThreadExchangeMode``: sets this thread's capture mode to `mode`
    (``aclmdlRICaptureMode``: 0 GLOBAL, 1 THREAD_LOCAL, 2 RELAXED) and returns ``mode, ret``,
    the previous mode (the C ``*mode`` goes in and comes out; written by hand because the
    prototype alone reads as an output only)."""
    cell = c_int(int(mode))
    ret = _cfunc("aclmdlRICaptureThreadExchangeMode")(byref(cell))
    return (cell.value if ret == 0 else 0), ret


# ---- names, streams and tasks --------------------------------------------------------------


def ri_get_name(model_ri: int, max_len: int = 256) -> Tuple[str, int]:
    """``aclmdlRIGetName``: ``name, ret``; `max_len` is the buffer's size, NUL included (no room
    for the name and its NUL: 107000)."""
    size = max(int(max_len), 0)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = _cfunc("aclmdlRIGetName")(_in(model_ri), size, buf)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


def _handles(c_name: str, owner: Optional[int], num: Optional[int]) -> Tuple[List[int], int]:
    fn = _cfunc(c_name)
    if num is None:
        count = c_uint32(0)
        ret = fn(_in(owner), None, byref(count))
        if ret != 0:
            return [], ret
        room = count.value
    else:
        room = int(num)
    arr = (c_void_p * max(room, 1))()
    n = c_uint32(room)
    ret = fn(_in(owner), arr, byref(n))
    if ret != 0:
        return [], ret
    return [_int(arr[i]) for i in range(min(n.value, room))], ret


def ri_get_streams(model_ri: int, num_streams: Optional[int] = None) -> Tuple[List[int], int]:
    """``aclmdlRIGetStreams``: ``streams, ret``, the list of the model's stream handles (for
    :func:`ri_get_tasks_by_stream`). Without `num_streams` the count is asked first and the
    array sized to it; with it, that is the array's room (too small: 107039)."""
    return _handles("aclmdlRIGetStreams", model_ri, num_streams)


def ri_get_tasks_by_stream(stream: int, num_tasks: Optional[int] = None) -> Tuple[List[int], int]:
    """``aclmdlRIGetTasksByStream``: ``tasks, ret``, the list of the task handles of a model's
    stream (from :func:`ri_get_streams`) in recording order; `num_tasks` as for
    :func:`ri_get_streams`."""
    return _handles("aclmdlRIGetTasksByStream", stream, num_tasks)


_EVENT_MEMBERS = {2: ("event_record_task_params", "record_flag"), 3: ("event_wait_task_params", "wait_flag"),
                  4: ("event_reset_task_params", "reset_flag")}


def _params_dict(p: TaskParams) -> Dict[str, Any]:
    out: Dict[str, Any] = {
        "type": p.type, "task_grp": _int(p.taskGrp), "op_info_ptr": _int(p.opInfoPtr), "op_info_size": p.opInfoSize,
    }
    if p.type == 1:
        k = p.kernel
        out["kernel_task_params"] = {
            "funchandle": _int(k.funcHandle), "cfg": _int(k.cfg), "args": _int(k.args),
            "is_host_args": k.isHostArgs, "args_size": k.argsSize, "num_blocks": k.numBlocks,
        }
    elif p.type in _EVENT_MEMBERS:
        member, flag = _EVENT_MEMBERS[p.type]
        out[member] = {"event": _int(p.event.event), "event_flag": p.event.eventFlag, flag: p.event.flag}
    elif p.type == 5:
        out["value_write_task_params"] = {"dev_addr": _int(p.valueWrite.devAddr), "value": p.valueWrite.value}
    elif p.type == 6:
        w = p.valueWait
        out["value_wait_task_params"] = {"dev_addr": _int(w.devAddr), "value": w.value, "flag": w.flag}
    return out


def _params_struct(params: Dict[str, Any]) -> TaskParams:
    p = TaskParams()
    p.type = int(params.get("type", 0))
    p.taskGrp = _in(params.get("task_grp"))
    p.opInfoPtr = _in(params.get("op_info_ptr"))
    p.opInfoSize = int(params.get("op_info_size", 0))
    if p.type == 1:
        k = params.get("kernel_task_params", {})
        p.kernel.funcHandle = _in(k.get("funchandle"))
        p.kernel.cfg = _in(k.get("cfg"))
        p.kernel.args = _in(k.get("args"))
        p.kernel.isHostArgs = int(k.get("is_host_args", 0))
        p.kernel.argsSize = int(k.get("args_size", 0))
        p.kernel.numBlocks = int(k.get("num_blocks", 0))
    elif p.type in _EVENT_MEMBERS:
        member, flag = _EVENT_MEMBERS[p.type]
        e = params.get(member, {})
        p.event.event = _in(e.get("event"))
        p.event.eventFlag = int(e.get("event_flag", 0))
        p.event.flag = int(e.get(flag, 0))
    elif p.type == 5:
        w = params.get("value_write_task_params", {})
        p.valueWrite.devAddr = _in(w.get("dev_addr"))
        p.valueWrite.value = int(w.get("value", 0))
    elif p.type == 6:
        w = params.get("value_wait_task_params", {})
        p.valueWait.devAddr = _in(w.get("dev_addr"))
        p.valueWait.value = int(w.get("value", 0))
        p.valueWait.flag = int(w.get("flag", 0))
    return p


def ri_task_get_params(task: int) -> Tuple[Dict[str, Any], int]:
    """``aclmdlRITaskGetParams``: ``params, ret``, the task's parameters as a dict (module
    docstring; those set by :func:`ri_task_set_params` if not applied yet); ``{}`` on an
    error."""
    p = TaskParams()
    ret = _cfunc("aclmdlRITaskGetParams")(_in(task), byref(p))
    return (_params_dict(p) if ret == 0 else {}), ret


def ri_task_set_params(task: int, params: Dict[str, Any]) -> int:
    """``aclmdlRITaskSetParams``: new parameters for an event or value task, a dict as
    :func:`ri_task_get_params` gives (``type`` must be the task's); applied by the next
    ``ri_update`` of its model. Returns ret."""
    p = _params_struct(params)
    return _cfunc("aclmdlRITaskSetParams")(_in(task), byref(p))


def ri_kernel_task_get_attribute(task: int, attr_id: int) -> Tuple[int, int]:
    """``aclmdlRIKernelTaskGetAttribute``: ``attr_value, ret``, the ``aclrtLaunchKernelAttrValue``
    union read as a little-endian 64-bit int (so every member of it, ``timeoutUs`` low half
    first). 207000 here: no kernel task is ever recorded."""
    v = _LaunchKernelAttrValue()
    ret = _cfunc("aclmdlRIKernelTaskGetAttribute")(_in(task), attr_id, byref(v))
    return ((v.rsv[0] | (v.rsv[1] << 32)) if ret == 0 else 0), ret


# ---- destroy callbacks ---------------------------------------------------------------------

# (model, id of the Python callable) -> [C thunk, callable, user data]; alive while C may call it.
_destroy_callbacks: Dict[Tuple[int, int], List[Any]] = {}
# Entries whose callback ran (it is called once) or that were unregistered: released two
# (un)registrations later, never inside the callback itself, whose thunk is still running.
_spent: List[List[Any]] = []
_spent_before: List[List[Any]] = []
_lock = threading.Lock()


def _sweep() -> None:
    _spent_before[:] = _spent
    del _spent[:]


def ri_destroy_register_callback(model_ri: int, func: Callable[[Any], Any], user_data: Any = None) -> int:
    """``aclmdlRIDestroyRegisterCallback``: `func(user_data)` is called once, on a runtime
    thread, when the model's resources go after ``ri_destroy``; registering the same callable
    again replaces its `user_data` (any Python object). The callable is kept alive until it ran
    or is unregistered; an exception it raises is logged, never passed to C. Returns ret."""
    if func is None:
        return _cfunc("aclmdlRIDestroyRegisterCallback")(_in(model_ri), ctypes.cast(None, Callback), None)
    key = (_int(model_ri), id(func))
    with _lock:
        _sweep()
        entry = _destroy_callbacks.get(key)
        if entry is None:
            entry = [None, func, user_data]

            def trampoline(_data: Optional[int], entry: List[Any] = entry, key: Tuple[int, int] = key) -> None:
                try:
                    entry[1](entry[2])
                except BaseException:  # noqa: BLE001 - nothing may unwind into C
                    _log.exception("acl.mdl.ri_destroy_register_callback: the callback raised")
                finally:
                    with _lock:
                        if _destroy_callbacks.get(key) is entry:
                            del _destroy_callbacks[key]
                        _spent.append(entry)

            entry[0] = Callback(trampoline)
            fresh = True
        else:
            fresh = False
    ret = _cfunc("aclmdlRIDestroyRegisterCallback")(_in(model_ri), entry[0], None)
    with _lock:
        if ret == 0:
            entry[2] = user_data
            _destroy_callbacks[key] = entry
        elif fresh:
            _spent.append(entry)
    return ret


def ri_destroy_unregister_callback(model_ri: int, func: Callable[[Any], Any]) -> int:
    """``aclmdlRIDestroyUnregisterCallback``: unregisters `func` (the callable given to
    :func:`ri_destroy_register_callback`); not registered: 107000. Returns ret."""
    key = (_int(model_ri), id(func))
    with _lock:
        _sweep()
        entry = _destroy_callbacks.get(key)
    if entry is None or entry[1] is not func:
        # Never registered from Python: NULL, or a thunk the C side cannot know (107000).
        thunk = ctypes.cast(None, Callback) if func is None else Callback(lambda _data: None)
        return _cfunc("aclmdlRIDestroyUnregisterCallback")(_in(model_ri), thunk)
    ret = _cfunc("aclmdlRIDestroyUnregisterCallback")(_in(model_ri), entry[0])
    if ret == 0:
        with _lock:
            if _destroy_callbacks.get(key) is entry:
                del _destroy_callbacks[key]
            _spent.append(entry)
    return ret


# ---- conditional tasks ---------------------------------------------------------------------


def ri_cond_handle_get_cond_ptr(handle: int) -> Tuple[int, int]:
    """``aclmdlRICondHandleGetCondPtr``: ``ptr, ret``, the device address of the condition's
    8-byte word."""
    value = c_void_p()
    ret = _cfunc("aclmdlRICondHandleGetCondPtr")(_in(handle), byref(value))
    return (_int(value.value) if ret == 0 else 0), ret


def ri_add_cond_task(params: Dict[str, Any], stream: int, flags: int = 0) -> Tuple[List[int], int]:
    """``aclmdlRIAddCondTask``: ``model_ri_array, ret``. `params` (``aclmdlRICondTaskParams``) is a
    dict ``{"handle": cond handle, "type": ACL_MODEL_RI_COND_TYPE_* (0 IF, 1 WHILE, 2 SWITCH),
    "size": number of branches}``; the call makes ``size`` empty branch models, returned as a
    list (capture each with ``ri_capture_to_model_ri_begin``). `flags` is reserved: 0."""
    size = int(params.get("size", 0))
    arr = (c_void_p * max(size, 1))()
    c = CondTaskParams(_in(params.get("handle")), int(params.get("type", 0)), size, arr)
    ret = _cfunc("aclmdlRIAddCondTask")(c, _in(stream), flags)
    return ([_int(arr[i]) for i in range(size)] if ret == 0 else []), ret


__all__ += _auto.install(globals(), "mdl", _cfunc)
