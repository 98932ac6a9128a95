"""``acl.rt``: the AscendCL runtime, notify and IPC-memory functions in pyACL's form.

The convention is the vendor's pyACL one:

* handles (streams, events, contexts, notifies) and memory addresses are plain ``int``;
  0 stands for NULL (``None`` is accepted too where a handle or address goes in);
* a function with outputs returns a tuple, outputs first and the ``aclError`` code ``ret``
  last (``stream, ret = acl.rt.create_stream()``); a function without outputs returns ``ret``;
* when ``ret`` is not 0 the outputs are 0 (or ``""`` for keys); nothing raises for an error
  code, exactly as with the vendor module (a wrong Python *type* raises ``TypeError`` /
  ``ctypes.ArgumentError``);
* list arguments (pids, notifies) are Python lists; their length is the C ``num``.

Every function calls the C function of the same name (``aclrtSetDevice`` for ``set_device``;
``set_context`` / ``get_context`` are ``aclrtSetCurrentContext`` / ``aclrtGetCurrentContext``).
The GIL is released during each call, so blocking calls (synchronisations) let other Python
threads run.
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_int32, c_size_t, c_uint32, c_void_p
from typing import Iterable, List, Optional, Sequence, Tuple

from . import _lib
from ._conv import handle_in as _in, handle_out as _out
from ._lib import func, optional_str

__all__ = [
    # devices
    "set_device", "reset_device", "reset_device_force", "get_device", "get_device_count",
    "get_soc_name", "device_get_bare_tgid", "device_can_access_peer", "device_enable_peer_access",
    "device_disable_peer_access", "device_peer_access_status",
    # contexts
    "create_context", "destroy_context", "set_context", "get_context",
    # streams
    "create_stream", "create_stream_with_config", "destroy_stream", "destroy_stream_force",
    "synchronize_stream", "synchronize_stream_with_timeout",
    # events
    "create_event", "create_event_with_flag", "destroy_event", "record_event", "reset_event",
    "synchronize_event", "synchronize_event_with_timeout", "stream_wait_event",
    # memory
    "malloc", "free", "malloc_host", "free_host", "memcpy", "memcpy_async", "memset",
    "memset_async", "get_mem_info",
    # notify
    "create_notify", "destroy_notify", "record_notify", "wait_and_reset_notify", "get_notify_id",
    "notify_batch_reset", "notify_get_export_key", "notify_set_import_pid",
    "notify_set_import_pid_inter_server", "notify_import_by_key",
    # IPC memory
    "ipc_mem_get_export_key", "ipc_mem_set_import_pid", "ipc_mem_import_by_key", "ipc_mem_close",
]

#: Size of the key buffers of the export calls (``ACL_IPC_HANDLE_SIZE``): 64 characters + NUL.
IPC_HANDLE_SIZE = 65

Handle = int
Ptr = int


def _key_in(key: Optional[str]) -> Optional[bytes]:
    if key is None:
        return None
    if isinstance(key, bytes):
        return key
    return str(key).encode("utf-8")


def _pid_array(pids: Sequence[int], num: Optional[int]) -> Tuple[ctypes.Array, int]:
    pids = [int(p) for p in _as_list(pids)]
    if num is None:
        num = len(pids)
    if num < 0 or num > len(pids):
        raise ValueError("num (%d) must be between 0 and len(pid) (%d)" % (num, len(pids)))
    return (c_int32 * max(len(pids), 1))(*pids), num


def _as_list(values: Iterable[int]) -> List[int]:
    if isinstance(values, int):
        return [values]
    return list(values)


# ---- devices -------------------------------------------------------------------------------


def set_device(device_id: int) -> int:
    """``aclrtSetDevice``: makes `device_id` this thread's current device (counted). Returns ret."""
    return func("aclrtSetDevice")(device_id)


def reset_device(device_id: int) -> int:
    """``aclrtResetDevice``: takes one ``set_device`` count away. Returns ret."""
    return func("aclrtResetDevice")(device_id)


def reset_device_force(device_id: int) -> int:
    """``aclrtResetDeviceForce``: releases the device at once. Returns ret."""
    return func("aclrtResetDeviceForce")(device_id)


def get_device() -> Tuple[int, int]:
    """``aclrtGetDevice``: ``device_id, ret`` (107002 when this thread has no device)."""
    value = c_int32(0)
    ret = func("aclrtGetDevice")(byref(value))
    return (value.value if ret == 0 else 0), ret


def get_device_count() -> Tuple[int, int]:
    """``aclrtGetDeviceCount``: ``count, ret``."""
    value = c_uint32(0)
    ret = func("aclrtGetDeviceCount")(byref(value))
    return (value.value if ret == 0 else 0), ret


def get_soc_name() -> Optional[str]:
    """``aclrtGetSocName``: the SoC name (``str``), or None. pyACL has it as ``acl.get_soc_name``."""
    return optional_str(func("aclrtGetSocName")())


def device_get_bare_tgid() -> Tuple[int, int]:
    """``aclrtDeviceGetBareTgid``: ``pid, ret``; the pid other processes must whitelist."""
    value = c_int32(0)
    ret = func("aclrtDeviceGetBareTgid")(byref(value))
    return (value.value if ret == 0 else 0), ret


def device_can_access_peer(device_id: int, peer_device_id: int) -> Tuple[int, int]:
    """``aclrtDeviceCanAccessPeer``: ``can_access_peer, ret`` (1 or 0)."""
    value = c_int32(0)
    ret = func("aclrtDeviceCanAccessPeer")(byref(value), device_id, peer_device_id)
    return (value.value if ret == 0 else 0), ret


def device_enable_peer_access(peer_device_id: int, flags: int) -> int:
    """``aclrtDeviceEnablePeerAccess``: current device to `peer_device_id`; flags must be 0."""
    return func("aclrtDeviceEnablePeerAccess")(peer_device_id, flags)


def device_disable_peer_access(peer_device_id: int) -> int:
    """``aclrtDeviceDisablePeerAccess``. Returns ret."""
    return func("aclrtDeviceDisablePeerAccess")(peer_device_id)


def device_peer_access_status(device_id: int, peer_device_id: int) -> Tuple[int, int]:
    """``aclrtDevicePeerAccessStatus``: ``status, ret`` (1 enabled, 0 not)."""
    value = c_int32(0)
    ret = func("aclrtDevicePeerAccessStatus")(device_id, peer_device_id, byref(value))
    return (value.value if ret == 0 else 0), ret


# ---- contexts ------------------------------------------------------------------------------


def create_context(device_id: int) -> Tuple[Handle, int]:
    """``aclrtCreateContext``: ``context, ret``; the new context becomes current."""
    value = c_void_p()
    ret = func("aclrtCreateContext")(byref(value), device_id)
    return _out(value, ret), ret


def destroy_context(context: Handle) -> int:
    """``aclrtDestroyContext``. Returns ret."""
    return func("aclrtDestroyContext")(_in(context))


def set_context(context: Handle) -> int:
    """``aclrtSetCurrentContext`` (pyACL's name): makes `context` current on this thread."""
    return func("aclrtSetCurrentContext")(_in(context))


def get_context() -> Tuple[Handle, int]:
    """``aclrtGetCurrentContext`` (pyACL's name): ``context, ret``."""
    value = c_void_p()
    ret = func("aclrtGetCurrentContext")(byref(value))
    return _out(value, ret), ret


# ---- streams -------------------------------------------------------------------------------


def create_stream() -> Tuple[Handle, int]:
    """``aclrtCreateStream``: ``stream, ret``."""
    value = c_void_p()
    ret = func("aclrtCreateStream")(byref(value))
    return _out(value, ret), ret


def create_stream_with_config(priority: int, flag: int) -> Tuple[Handle, int]:
    """``aclrtCreateStreamWithConfig``: ``stream, ret``."""
    value = c_void_p()
    ret = func("aclrtCreateStreamWithConfig")(byref(value), priority, flag)
    return _out(value, ret), ret


def destroy_stream(stream: Handle) -> int:
    """``aclrtDestroyStream``: after its pending tasks. Returns ret."""
    return func("aclrtDestroyStream")(_in(stream))


def destroy_stream_force(stream: Handle) -> int:
    """``aclrtDestroyStreamForce``: pending tasks dropped. Returns ret."""
    return func("aclrtDestroyStreamForce")(_in(stream))


def synchronize_stream(stream: Handle) -> int:
    """``aclrtSynchronizeStream`` (0: the default stream). Returns ret (the first task failure)."""
    return func("aclrtSynchronizeStream")(_in(stream))


def synchronize_stream_with_timeout(stream: Handle, timeout: int) -> int:
    """``aclrtSynchronizeStreamWithTimeout``: `timeout` in ms, -1 without limit. Returns ret."""
    return func("aclrtSynchronizeStreamWithTimeout")(_in(stream), timeout)


# ---- events --------------------------------------------------------------------------------


def create_event() -> Tuple[Handle, int]:
    """``aclrtCreateEvent``: ``event, ret``."""
    value = c_void_p()
    ret = func("aclrtCreateEvent")(byref(value))
    return _out(value, ret), ret


def create_event_with_flag(flag: int) -> Tuple[Handle, int]:
    """``aclrtCreateEventWithFlag``: ``event, ret`` (flags ``ACL_EVENT_*`` OR-ed)."""
    value = c_void_p()
    ret = func("aclrtCreateEventWithFlag")(byref(value), flag)
    return _out(value, ret), ret


def destroy_event(event: Handle) -> int:
    """``aclrtDestroyEvent``. Returns ret."""
    return func("aclrtDestroyEvent")(_in(event))


def record_event(event: Handle, stream: Handle) -> int:
    """``aclrtRecordEvent``: queued on `stream`. Returns ret."""
    return func("aclrtRecordEvent")(_in(event), _in(stream))


def reset_event(event: Handle, stream: Handle) -> int:
    """``aclrtResetEvent``: queued on `stream`. Returns ret."""
    return func("aclrtResetEvent")(_in(event), _in(stream))


def synchronize_event(event: Handle) -> int:
    """``aclrtSynchronizeEvent``. Returns ret."""
    return func("aclrtSynchronizeEvent")(_in(event))


def synchronize_event_with_timeout(event: Handle, timeout: int) -> int:
    """``aclrtSynchronizeEventWithTimeout``: `timeout` in ms, -1 without limit. Returns ret."""
    return func("aclrtSynchronizeEventWithTimeout")(_in(event), timeout)


def stream_wait_event(stream: Handle, event: Handle) -> int:
    """``aclrtStreamWaitEvent``. Returns ret."""
    return func("aclrtStreamWaitEvent")(_in(stream), _in(event))


# ---- memory --------------------------------------------------------------------------------


def malloc(size: int, policy: int) -> Tuple[Ptr, int]:
    """``aclrtMalloc``: ``dev_ptr, ret`` (policy ``ACL_MEM_MALLOC_*``)."""
    value = c_void_p()
    ret = func("aclrtMalloc")(byref(value), size, policy)
    return _out(value, ret), ret


def free(dev_ptr: Ptr) -> int:
    """``aclrtFree``. Returns ret."""
    return func("aclrtFree")(_in(dev_ptr))


def malloc_host(size: int) -> Tuple[Ptr, int]:
    """``aclrtMallocHost``: ``host_ptr, ret``."""
    value = c_void_p()
    ret = func("aclrtMallocHost")(byref(value), size)
    return _out(value, ret), ret


def free_host(host_ptr: Ptr) -> int:
    """``aclrtFreeHost``. Returns ret."""
    return func("aclrtFreeHost")(_in(host_ptr))


def memcpy(dst: Ptr, dest_max: int, src: Ptr, count: int, kind: int) -> int:
    """``aclrtMemcpy``: copies `count` bytes now (kind ``ACL_MEMCPY_*``). Returns ret."""
    return func("aclrtMemcpy")(_in(dst), dest_max, _in(src), count, kind)


def memcpy_async(dst: Ptr, dest_max: int, src: Ptr, count: int, kind: int, stream: Handle) -> int:
    """``aclrtMemcpyAsync``: queued on `stream`; host memory must live until it ran. Returns ret."""
    return func("aclrtMemcpyAsync")(_in(dst), dest_max, _in(src), count, kind, _in(stream))


def memset(dev_ptr: Ptr, max_size: int, value: int, count: int) -> int:
    """``aclrtMemset``: sets `count` bytes to the low byte of `value`. Returns ret."""
    return func("aclrtMemset")(_in(dev_ptr), max_size, value, count)


def memset_async(dev_ptr: Ptr, max_size: int, value: int, count: int, stream: Handle) -> int:
    """``aclrtMemsetAsync``: queued on `stream`. Returns ret."""
    return func("aclrtMemsetAsync")(_in(dev_ptr), max_size, value, count, _in(stream))


def get_mem_info(attr: int) -> Tuple[int, int, int]:
    """``aclrtGetMemInfo``: ``free, total, ret`` of the current device (attr ``ACL_*_MEM*``)."""
    free_bytes = c_size_t(0)
    total = c_size_t(0)
    ret = func("aclrtGetMemInfo")(attr, byref(free_bytes), byref(total))
    if ret != 0:
        return 0, 0, ret
    return free_bytes.value, total.value, ret


# ---- notify --------------------------------------------------------------------------------


def create_notify(flag: int) -> Tuple[Handle, int]:
    """``aclrtCreateNotify``: ``notify, ret`` (flag ``ACL_NOTIFY_DEFAULT`` or ``..._DEVICE_USE_ONLY``)."""
    value = c_void_p()
    ret = func("aclrtCreateNotify")(byref(value), flag)
    return _out(value, ret), ret


def destroy_notify(notify: Handle) -> int:
    """``aclrtDestroyNotify``: this process's handle (created or imported). Returns ret."""
    return func("aclrtDestroyNotify")(_in(notify))


def record_notify(notify: Handle, stream: Handle) -> int:
    """``aclrtRecordNotify``: queued on `stream`; releases exactly one wait. Returns ret."""
    return func("aclrtRecordNotify")(_in(notify), _in(stream))


def wait_and_reset_notify(notify: Handle, stream: Handle, timeout: int) -> int:
    """``aclrtWaitAndResetNotify``: queued on `stream`; `timeout` in SECONDS, 0 without limit.

    A wait that times out fails the stream's next synchronisation (107020). Returns ret.
    """
    return func("aclrtWaitAndResetNotify")(_in(notify), _in(stream), timeout)


def get_notify_id(notify: Handle) -> Tuple[int, int]:
    """``aclrtGetNotifyId``: ``notify_id, ret``."""
    value = c_uint32(0)
    ret = func("aclrtGetNotifyId")(_in(notify), byref(value))
    return (value.value if ret == 0 else 0), ret


def notify_batch_reset(notifies: Sequence[Handle], num: Optional[int] = None) -> int:
    """``aclrtNotifyBatchReset``: `notifies` is a list of notify handles. Returns ret.

    pyACL's form is ``notify_batch_reset(notifies)``; `num` (ours, optional) passes fewer.
    """
    items = [_in(n) for n in _as_list(notifies)]
    if num is None:
        num = len(items)
    if num < 0 or num > len(items):
        raise ValueError("num (%d) must be between 0 and len(notifies) (%d)" % (num, len(items)))
    array = (c_void_p * max(len(items), 1))(*items)
    return func("aclrtNotifyBatchReset")(array, num)


def notify_get_export_key(notify: Handle, len: int = IPC_HANDLE_SIZE, flags: int = 0) -> Tuple[str, int]:  # noqa: A002
    """``aclrtNotifyGetExportKey``: ``key, ret``; `len` is the key buffer size (at least 65).

    flags: ``ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT`` (0, pid validation on) or
    ``..._DISABLE_PID_VALIDATION`` (2).
    """
    size = int(len)
    buf = ctypes.create_string_buffer(max(size, 1))
    ret = func("aclrtNotifyGetExportKey")(_in(notify), buf, size, flags)
    return (buf.value.decode("utf-8") if ret == 0 else ""), ret


def notify_set_import_pid(notify: Handle, pid: Sequence[int], num: Optional[int] = None) -> int:
    """``aclrtNotifySetImportPid``: whitelists the processes in the list `pid`. Returns ret.

    pyACL's form is ``notify_set_import_pid(notify, pid)`` with ``pid=[pid_1, ...]``; a single int
    is taken as a one-element list, and `num` (ours, optional) passes fewer than ``len(pid)``.
    """
    array, count = _pid_array(pid, num)
    return func("aclrtNotifySetImportPid")(_in(notify), array, count)


def notify_set_import_pid_inter_server(
    notify: Handle, server_pids: Sequence[Tuple[int, Sequence[int]]]
) -> int:
    """``aclrtNotifySetImportPidInterServer`` (no pyACL counterpart: this form is ours).

    `server_pids` is a list of ``(sdid, [pid, ...])`` pairs. Super-node products only (A3, 950);
    elsewhere 207000. Returns ret.
    """
    entries = list(server_pids)
    keep = []
    structs = (_lib.ServerPid * max(len(entries), 1))()
    for i, (sdid, pids) in enumerate(entries):
        pids = [int(p) for p in _as_list(pids)]
        arr = (c_int32 * max(len(pids), 1))(*pids)
        keep.append(arr)
        structs[i].sdid = int(sdid)
        structs[i].pid = ctypes.cast(arr, ctypes.POINTER(c_int32))
        structs[i].num = len(pids)
    return func("aclrtNotifySetImportPidInterServer")(_in(notify), structs, len(entries))


def notify_import_by_key(key: str, flags: int) -> Tuple[Handle, int]:
    """``aclrtNotifyImportByKey``: ``notify, ret`` for the key another process exported.

    flags: ``ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT`` (0) or ``..._ENABLE_PEER_ACCESS`` (2).
    """
    value = c_void_p()
    ret = func("aclrtNotifyImportByKey")(byref(value), _key_in(key), flags)
    return _out(value, ret), ret


# ---- IPC memory ----------------------------------------------------------------------------


def ipc_mem_get_export_key(
    dev_ptr: Ptr, size: int, len: int = IPC_HANDLE_SIZE, flags: Optional[int] = None  # noqa: A002
) -> Tuple[str, int]:
    """``aclrtIpcMemGetExportKey``: ``key, ret`` for `size` bytes at `dev_ptr` (page aligned).

    Called as ``(dev_ptr, size, len, flags)``, as ``notify_get_export_key`` takes its key length;
    the three-argument form ``(dev_ptr, size, flags)`` is accepted too: a third argument below
    65 is taken as the flags, with a key buffer of 65.
    flags: ``ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT`` (0) or ``..._DISABLE_PID_VALIDATION`` (1).
    """
    if flags is None and int(len) < IPC_HANDLE_SIZE:
        # Three arguments: the third is the flags (valid flags are 0 and 1, far below 65).
        size_of_key, flags = IPC_HANDLE_SIZE, int(len)
    else:
        size_of_key, flags = int(len), (0 if flags is None else flags)
    buf = ctypes.create_string_buffer(max(size_of_key, 1))
    ret = func("aclrtIpcMemGetExportKey")(_in(dev_ptr), size, buf, size_of_key, flags)
    return (buf.value.decode("utf-8") if ret == 0 else ""), ret


def ipc_mem_set_import_pid(key: str, pid: Sequence[int], num: Optional[int] = None) -> int:
    """``aclrtIpcMemSetImportPid``: whitelists the processes in the list `pid`. Returns ret."""
    array, count = _pid_array(pid, num)
    return func("aclrtIpcMemSetImportPid")(_key_in(key), array, count)


def ipc_mem_import_by_key(key: str, flags: int) -> Tuple[Ptr, int]:
    """``aclrtIpcMemImportByKey``: ``dev_ptr, ret``, the same pages the exporter has.

    flags: ``ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT`` (0) or ``..._ENABLE_PEER_ACCESS`` (1).
    """
    value = c_void_p()
    ret = func("aclrtIpcMemImportByKey")(byref(value), _key_in(key), flags)
    return _out(value, ret), ret


def ipc_mem_close(key: str) -> int:
    """``aclrtIpcMemClose``: unmaps (importer) or withdraws the export (exporter). Returns ret."""
    return func("aclrtIpcMemClose")(_key_in(key))


# ---- every other runtime function, built from its C prototype ------------------------------

from . import _auto, _rt_allocator, _rt_devices, _rt_memory, _rt_model, _rt_streams  # noqa: E402

for _family in (_rt_devices, _rt_streams, _rt_memory, _rt_model, _rt_allocator):
    for _name in _family.__all__:
        globals()[_name] = getattr(_family, _name)
    __all__ += _family.__all__
__all__ += _auto.install(globals(), "rt", func)
