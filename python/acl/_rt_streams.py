"""Hand-written pyACL functions of the streams family: those whose C prototypes have structures,
arrays, callbacks or character buffers, so acl/_auto.py cannot build them. acl.rt imports every
public name of this module.

Callbacks. A Python callable handed to the runtime is called from a thread of the runtime (a
stream's worker for host functions, the thread in ``process_report`` for report callbacks, the
creating or destroying thread for stream state callbacks). ctypes takes the GIL for it; an
exception raised by it never reaches C: it is caught and logged on the ``acl`` logger. The
module keeps every callable (and its data) referenced for as long as the C side may call it:

* ``launch_callback`` / ``launch_host_func``: until the callback has run once (a task queued on
  a stream being captured runs at every replay of the graph: it stays referenced for good);
  one the runtime withdraws unrun (its report thread unsubscribed first) stays referenced too,
  since the Python side cannot tell;
* ``reg_stream_state_callback``: until it is unregistered (``callback`` None).
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_uint8, c_uint32, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from ._lib import func
from ._conv import handle_in as _in, handle_out as _out

__all__: List[str] = [
    "launch_callback",
    "launch_host_func",
    "reg_stream_state_callback",
    "set_stream_attribute",
    "get_stream_attribute",
    "cnt_notify_record",
    "cnt_notify_wait_with_timeout",
    "ipc_get_event_handle",
    "ipc_open_event_handle",
]

_log = logging.getLogger("acl")

#: Size of an IPC event handle (``ACL_IPC_EVENT_HANDLE_SIZE``).
IPC_EVENT_HANDLE_SIZE = 64

Handle = int


# ---- C types (acl/acl_rt.h) ----------------------------------------------------------------


class IpcEventHandle(ctypes.Structure):
    """``struct aclrtIpcEventHandle``: ``char reserved[ACL_IPC_EVENT_HANDLE_SIZE]`` (read as
    unsigned bytes, so that a NUL inside does not cut it short)."""

    _fields_ = [("reserved", c_uint8 * IPC_EVENT_HANDLE_SIZE)]


class StreamAttrValue(ctypes.Union):
    """``union aclrtStreamAttrValue``."""

    _fields_ = [
        ("failureMode", c_uint64),
        ("overflowSwitch", c_uint32),
        ("userCustomTag", c_uint32),
        ("cacheOpInfoSwitch", c_uint32),
        ("streamPriority", c_uint32),
        ("reserve", c_uint32 * 4),
    ]


class CntNotifyRecordInfo(ctypes.Structure):
    """``struct aclrtCntNotifyRecordInfo``."""

    _fields_ = [("mode", c_int), ("value", c_uint32)]


class CntNotifyWaitInfo(ctypes.Structure):
    """``struct aclrtCntNotifyWaitInfo``."""

    _fields_ = [
        ("mode", c_int),
        ("value", c_uint32),
        ("timeout", c_uint32),
        ("isClear", c_uint8),
        ("rsv", c_uint8 * 3),
    ]


# typedef void (*aclrtCallback)(void *userData); typedef void (*aclrtHostFunc)(void *args);
CALLBACK = ctypes.CFUNCTYPE(None, c_void_p)
HOST_FUNC = ctypes.CFUNCTYPE(None, c_void_p)
# typedef void (*aclrtStreamStateCallback)(aclrtStream stm, enum aclrtStreamState state, void *args);
STREAM_STATE_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_void_p)

_PROTOTYPES = {
    "aclrtLaunchCallback": (c_int, [CALLBACK, c_void_p, c_int, c_void_p]),
    "aclrtLaunchHostFunc": (c_int, [c_void_p, HOST_FUNC, c_void_p]),
    "aclrtRegStreamStateCallback": (c_int, [c_char_p, STREAM_STATE_CALLBACK, c_void_p]),
    "aclrtSetStreamAttribute": (c_int, [c_void_p, c_int, POINTER(StreamAttrValue)]),
    "aclrtGetStreamAttribute": (c_int, [c_void_p, c_int, POINTER(StreamAttrValue)]),
    "aclrtCntNotifyRecord": (c_int, [c_void_p, c_void_p, POINTER(CntNotifyRecordInfo)]),
    "aclrtCntNotifyWaitWithTimeout": (c_int, [c_void_p, c_void_p, POINTER(CntNotifyWaitInfo)]),
    "aclrtIpcGetEventHandle": (c_int, [c_void_p, POINTER(IpcEventHandle)]),
    "aclrtIpcOpenEventHandle": (c_int, [IpcEventHandle, POINTER(c_void_p)]),
}


def _declare() -> None:
    from ._lib import lib

    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue  # func() raises NotImplementedError when it is called
        fn.restype = restype
        fn.argtypes = argtypes


_declare()


# ---- callbacks queued on streams -----------------------------------------------------------

_lock = threading.Lock()
_keys = itertools.count(1)
# key -> (callable, its argument, kept for good). The key goes to C as the user data.
_queued: Dict[int, Tuple[Callable[[Any], Any], Any, bool]] = {}


def _capturing(stream: Optional[int]) -> bool:
    """Whether `stream` is being captured into a graph (its tasks then run at every replay)."""
    try:
        capture_info = func("aclmdlRICaptureGetInfo")
    except NotImplementedError:
        return False
    status = c_int(0)
    model = c_void_p()
    try:
        ret = capture_info(_in(stream), byref(status), byref(model))
    except (ctypes.ArgumentError, TypeError):
        return False
    return ret == 0 and status.value == 1  # ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE


def _run_queued(what: str, user_data: Optional[int]) -> None:
    key = int(user_data or 0)
    with _lock:
        entry = _queued.get(key)
        if entry is not None and not entry[2]:
            del _queued[key]
    if entry is None:
        _log.error("acl.rt.%s: the runtime called an unknown callback (%d); ignored", what, key)
        return
    fn, data, _ = entry
    try:
        fn(data)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        _log.exception("acl.rt.%s: the Python callback %r raised; the exception was dropped", what, fn)


def _run_callback(user_data: Optional[int]) -> None:
    _run_queued("launch_callback", user_data)


def _run_host_func(args: Optional[int]) -> None:
    _run_queued("launch_host_func", args)


# One C entry point each, alive as long as the module: the per-call data travels as the key.
_CALLBACK_THUNK = CALLBACK(_run_callback)
_HOST_FUNC_THUNK = HOST_FUNC(_run_host_func)


def _queue(fn: Callable[[Any], Any], data: Any, stream: Optional[int]) -> int:
    key = next(_keys)
    keep = _capturing(stream)
    with _lock:
        _queued[key] = (fn, data, keep)
    return key


def _unqueue(key: int) -> None:
    with _lock:
        _queued.pop(key, None)


def launch_callback(fn: Optional[Callable[[Any], Any]], user_data_list: Any, block_type: int, stream: Handle) -> int:
    """``aclrtLaunchCallback``, pyACL's ``ret = acl.rt.launch_callback(fn, user_data_list,
    block_type, stream)``: queues on `stream` (0: the default stream) the call
    ``fn(user_data_list)``, run by the thread subscribed to the stream
    (``acl.rt.subscribe_report(thread_id, stream)``, `thread_id` that thread's
    ``threading.get_ident()``) inside its ``acl.rt.process_report(timeout)``.

    `block_type`: ``ACL_CALLBACK_NO_BLOCK`` (0) or ``ACL_CALLBACK_BLOCK`` (1, the stream's later
    tasks wait until the callback has run). `fn` None passes NULL (107000); a stream without a
    subscribed thread is 107015. An exception out of `fn` is logged and dropped. Returns ret.
    """
    if fn is None:
        return func("aclrtLaunchCallback")(CALLBACK(), None, block_type, _in(stream))
    if not callable(fn):
        raise TypeError("launch_callback: fn must be callable, not %r" % (fn,))
    key = _queue(fn, user_data_list, stream)
    ret = func("aclrtLaunchCallback")(_CALLBACK_THUNK, key, block_type, _in(stream))
    if ret != 0:
        _unqueue(key)
    return ret


def launch_host_func(stream: Handle, fn: Optional[Callable[[Any], Any]], args: Any) -> int:
    """``aclrtLaunchHostFunc`` (no pyACL counterpart; the form follows ``launch_callback``):
    ``ret = acl.rt.launch_host_func(stream, fn, args)`` queues on `stream` (0: the default
    stream) the call ``fn(args)``; it runs on the stream's worker (or in the thread of
    ``acl.rt.process_host_func`` bound with ``acl.rt.subscribe_host_func``), and the stream's
    later tasks wait until it returns. `fn` must not call the runtime (it would wait for
    itself). `fn` None passes NULL (107000). An exception out of `fn` is logged and dropped.
    Returns ret.
    """
    if fn is None:
        return func("aclrtLaunchHostFunc")(_in(stream), HOST_FUNC(), None)
    if not callable(fn):
        raise TypeError("launch_host_func: fn must be callable, not %r" % (fn,))
    key = _queue(fn, args, stream)
    ret = func("aclrtLaunchHostFunc")(_in(stream), _HOST_FUNC_THUNK, key)
    if ret != 0:
        _unqueue(key)
    return ret


# ---- stream state callbacks ----------------------------------------------------------------

# reg_name -> the C function pointer registered under it (kept until unregistered).
_state_callbacks: Dict[bytes, Any] = {}


def _name_in(reg_name: Union[str, bytes, None]) -> Optional[bytes]:
    if reg_name is None or isinstance(reg_name, bytes):
        return reg_name
    return str(reg_name).encode("utf-8")


def reg_stream_state_callback(
    reg_name: Union[str, bytes, None], callback: Optional[Callable[[int, int, Any], Any]], args: Any = None
) -> int:
    """``aclrtRegStreamStateCallback`` (no pyACL counterpart): ``ret =
    acl.rt.reg_stream_state_callback(reg_name, callback, args)`` registers
    ``callback(stream, state, args)`` under the unique name `reg_name`; it is called after every
    stream is created (``state`` ``ACL_RT_STREAM_STATE_CREATE_POST``, 1) and before it is
    destroyed (``ACL_RT_STREAM_STATE_DESTROY_PRE``, 2), `stream` the handle as an int. `callback`
    None unregisters `reg_name` (and releases the Python callable). A name already registered:
    107000; an empty or None name: 100000. An exception out of `callback` is logged and dropped.
    Returns ret.
    """
    name = _name_in(reg_name)
    if callback is None:
        ret = func("aclrtRegStreamStateCallback")(name, STREAM_STATE_CALLBACK(), None)
        if ret == 0 and name is not None:
            with _lock:
                _state_callbacks.pop(name, None)
        return ret
    if not callable(callback):
        raise TypeError("reg_stream_state_callback: callback must be callable, not %r" % (callback,))

    def call(stm: Optional[int], state: int, _args: Optional[int]) -> None:
        try:
            callback(int(stm or 0), int(state), args)
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception(
                "acl.rt.reg_stream_state_callback(%r): the Python callback raised; the exception was dropped",
                reg_name,
            )

    thunk = STREAM_STATE_CALLBACK(call)
    with _lock:
        # Held before the call: the runtime may call it as soon as it is registered.
        previous = _state_callbacks.get(name) if name is not None else None
        if name is not None:
            _state_callbacks[name] = thunk
    ret = func("aclrtRegStreamStateCallback")(name, thunk, None)
    if ret != 0 and name is not None:
        with _lock:
            if previous is not None:
                _state_callbacks[name] = previous  # the name's registration stands
            elif _state_callbacks.get(name) is thunk:
                del _state_callbacks[name]
    return ret


# ---- stream attributes ---------------------------------------------------------------------

# aclrtStreamAttr -> the member of aclrtStreamAttrValue it reads and writes.
_ATTR_MEMBER = {
    1: "failureMode",  # ACL_STREAM_ATTR_FAILURE_MODE
    2: "overflowSwitch",  # ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK
    3: "userCustomTag",  # ACL_STREAM_ATTR_USER_CUSTOM_TAG
    4: "cacheOpInfoSwitch",  # ACL_STREAM_ATTR_CACHE_OP_INFO
    5: "streamPriority",  # ACL_STREAM_ATTR_PRIORITY
}
_MEMBERS = [name for name, _ in StreamAttrValue._fields_]


def set_stream_attribute(
    stream: Handle, stm_attr_type: int, value: Union[int, Mapping[str, Any], None]
) -> int:
    """``aclrtSetStreamAttribute`` (no pyACL counterpart): ``ret =
    acl.rt.set_stream_attribute(stream, stm_attr_type, value)``.

    `value` is the attribute's value as an int, stored in the member of
    ``aclrtStreamAttrValue`` that `stm_attr_type` names (``ACL_STREAM_ATTR_FAILURE_MODE`` (1):
    ``failureMode``, ``..._FLOAT_OVERFLOW_CHECK`` (2): ``overflowSwitch``,
    ``..._USER_CUSTOM_TAG`` (3): ``userCustomTag``, ``..._CACHE_OP_INFO`` (4):
    ``cacheOpInfoSwitch``, ``..._PRIORITY`` (5): ``streamPriority``), or a dict of the union's
    members (``{"streamPriority": 3}``, ``{"reserve": [a, b, c, d]}``); None passes NULL.
    `stream` 0 is the default stream. Returns ret.
    """
    if value is None:
        return func("aclrtSetStreamAttribute")(_in(stream), stm_attr_type, None)
    v = StreamAttrValue()
    if isinstance(value, Mapping):
        for member, item in value.items():
            if member not in _MEMBERS:
                raise ValueError(
                    "set_stream_attribute: %r is not a member of aclrtStreamAttrValue %s" % (member, _MEMBERS)
                )
            if member == "reserve":
                items = list(item)
                if len(items) > 4:
                    raise ValueError("set_stream_attribute: reserve has 4 elements")
                for i, x in enumerate(items):
                    v.reserve[i] = int(x)
            else:
                setattr(v, member, int(item))
    else:
        setattr(v, _ATTR_MEMBER.get(int(stm_attr_type), "failureMode"), int(value))
    return func("aclrtSetStreamAttribute")(_in(stream), stm_attr_type, byref(v))


def get_stream_attribute(stream: Handle, stm_attr_type: int) -> Tuple[int, int]:
    """``aclrtGetStreamAttribute`` (no pyACL counterpart): ``value, ret =
    acl.rt.get_stream_attribute(stream, stm_attr_type)``, `value` the member of
    ``aclrtStreamAttrValue`` that `stm_attr_type` names, as an int (see
    ``set_stream_attribute``; for another attribute id the union's first 64 bits); 0 when ret
    is not 0. `stream` 0 is the default stream.
    """
    v = StreamAttrValue()
    ret = func("aclrtGetStreamAttribute")(_in(stream), stm_attr_type, byref(v))
    if ret != 0:
        return 0, ret
    return int(getattr(v, _ATTR_MEMBER.get(int(stm_attr_type), "failureMode"))), ret


# ---- counting notifies ---------------------------------------------------------------------


def _fill(struct: ctypes.Structure, info: Mapping[str, Any], aliases: Mapping[str, str], what: str) -> None:
    fields = [name for name, _ in struct._fields_ if name != "rsv"]
    for key, item in info.items():
        name = aliases.get(key, key)
        if name not in fields:
            raise ValueError("%s: %r is not a field of the info (%s)" % (what, key, ", ".join(fields)))
        setattr(struct, name, int(item))


def cnt_notify_record(cnt_notify: Handle, stream: Handle, info: Optional[Mapping[str, int]]) -> int:
    """``aclrtCntNotifyRecord`` (no pyACL counterpart): ``ret = acl.rt.cnt_notify_record(
    cnt_notify, stream, info)`` queues on `stream` (0: the default stream) a change of the count.

    `info` is a dict of ``aclrtCntNotifyRecordInfo``: ``mode`` (``ACL_RT_CNT_NOTIFY_RECORD_*``:
    set 0, add 1, bit or 2, bit and 4) and ``value``; a missing key is 0, None passes NULL.
    Returns ret.
    """
    if info is None:
        return func("aclrtCntNotifyRecord")(_in(cnt_notify), _in(stream), None)
    s = CntNotifyRecordInfo()
    _fill(s, info, {}, "cnt_notify_record")
    return func("aclrtCntNotifyRecord")(_in(cnt_notify), _in(stream), byref(s))


def cnt_notify_wait_with_timeout(cnt_notify: Handle, stream: Handle, info: Optional[Mapping[str, int]]) -> int:
    """``aclrtCntNotifyWaitWithTimeout`` (no pyACL counterpart): ``ret =
    acl.rt.cnt_notify_wait_with_timeout(cnt_notify, stream, info)`` queues on `stream` (0: the
    default stream) a wait until the count passes the comparison.

    `info` is a dict of ``aclrtCntNotifyWaitInfo``: ``mode`` (``ACL_RT_CNT_NOTIFY_WAIT_*``:
    less 0, equal 1, bigger 2, bigger or equal 3, equal with bitmask 4), ``value``, ``timeout``
    (seconds, 0: none; a time-out fails the stream with 107020) and ``isClear`` (also
    ``is_clear``; 1: the count goes to 0 when the wait passes); a missing key is 0, None passes
    NULL. Returns ret.
    """
    if info is None:
        return func("aclrtCntNotifyWaitWithTimeout")(_in(cnt_notify), _in(stream), None)
    s = CntNotifyWaitInfo()
    _fill(s, info, {"is_clear": "isClear"}, "cnt_notify_wait_with_timeout")
    return func("aclrtCntNotifyWaitWithTimeout")(_in(cnt_notify), _in(stream), byref(s))


# ---- IPC events ----------------------------------------------------------------------------


def ipc_get_event_handle(event: Handle) -> Tuple[bytes, int]:
    """``aclrtIpcGetEventHandle`` (no pyACL counterpart): ``handle, ret =
    acl.rt.ipc_get_event_handle(event)``, `handle` the 64 bytes of ``aclrtIpcEventHandle``
    (``bytes``; plain data another process of the same user opens with
    ``acl.rt.ipc_open_event_handle``), ``b""`` when ret is not 0. Only events made by
    ``acl.rt.create_event_ex_with_flag(ACL_EVENT_IPC)``, by their creator (107000 otherwise).
    """
    h = IpcEventHandle()
    ret = func("aclrtIpcGetEventHandle")(_in(event), byref(h))
    return (bytes(h.reserved) if ret == 0 else b""), ret


def ipc_open_event_handle(handle: Union[bytes, bytearray, memoryview]) -> Tuple[Handle, int]:
    """``aclrtIpcOpenEventHandle`` (no pyACL counterpart): ``event, ret =
    acl.rt.ipc_open_event_handle(handle)``, `handle` the bytes ``ipc_get_event_handle`` gave
    in another process (at most 64; shorter is padded with NULs). The event's records and waits
    reach the creator's process. A handle not from ``ipc_get_event_handle``, or withdrawn by the
    creator's destroy: 107000.
    """
    data = bytes(handle)
    if len(data) > IPC_EVENT_HANDLE_SIZE:
        raise ValueError("ipc_open_event_handle: a handle has %d bytes, not %d" % (IPC_EVENT_HANDLE_SIZE, len(data)))
    h = IpcEventHandle()
    ctypes.memmove(h.reserved, data, len(data))
    value = c_void_p()
    ret = func("aclrtIpcOpenEventHandle")(h, byref(value))
    return _out(value, ret), ret
