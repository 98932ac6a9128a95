"""The API table: every function pyACL has for what ascendless implements, with pyACL's names,
argument order and return shapes, and the vendor's error numbers for bad input."""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, List

import pytest

import acl
from acl import constants as c

# name -> pyACL's parameter names, in order (our optional extras may follow).
RT_TABLE = {
    "set_device": ["device_id"],
    "reset_device": ["device_id"],
    "reset_device_force": ["device_id"],
    "get_device": [],
    "get_device_count": [],
    "get_soc_name": [],
    "device_get_bare_tgid": [],
    "device_can_access_peer": ["device_id", "peer_device_id"],
    "device_enable_peer_access": ["peer_device_id", "flags"],
    "device_disable_peer_access": ["peer_device_id"],
    "device_peer_access_status": ["device_id", "peer_device_id"],
    "create_context": ["device_id"],
    "destroy_context": ["context"],
    "set_context": ["context"],
    "get_context": [],
    "create_stream": [],
    "create_stream_with_config": ["priority", "flag"],
    "destroy_stream": ["stream"],
    "destroy_stream_force": ["stream"],
    "synchronize_stream": ["stream"],
    "synchronize_stream_with_timeout": ["stream", "timeout"],
    "create_event": [],
    "create_event_with_flag": ["flag"],
    "destroy_event": ["event"],
    "record_event": ["event", "stream"],
    "reset_event": ["event", "stream"],
    "synchronize_event": ["event"],
    "synchronize_event_with_timeout": ["event", "timeout"],
    "stream_wait_event": ["stream", "event"],
    "malloc": ["size", "policy"],
    "free": ["dev_ptr"],
    "malloc_host": ["size"],
    "free_host": ["host_ptr"],
    "memcpy": ["dst", "dest_max", "src", "count", "kind"],
    "memcpy_async": ["dst", "dest_max", "src", "count", "kind", "stream"],
    "memset": ["dev_ptr", "max_size", "value", "count"],
    "memset_async": ["dev_ptr", "max_size", "value", "count", "stream"],
    "get_mem_info": ["attr"],
    "create_notify": ["flag"],
    "destroy_notify": ["notify"],
    "record_notify": ["notify", "stream"],
    "wait_and_reset_notify": ["notify", "stream", "timeout"],
    "get_notify_id": ["notify"],
    "notify_batch_reset": ["notifies"],
    "notify_get_export_key": ["notify", "len", "flags"],
    "notify_set_import_pid": ["notify", "pid"],
    "notify_import_by_key": ["key", "flags"],
    "ipc_mem_get_export_key": ["dev_ptr", "size", "len", "flags"],
    "ipc_mem_set_import_pid": ["key", "pid"],
    "ipc_mem_import_by_key": ["key", "flags"],
    "ipc_mem_close": ["key"],
}

# The C functions the library exports for acl.rt (every one must have a Python function).
C_NAMES = {
    "aclrtSetDevice", "aclrtResetDevice", "aclrtResetDeviceForce", "aclrtGetDevice",
    "aclrtGetDeviceCount", "aclrtGetSocName", "aclrtDeviceGetBareTgid", "aclrtDeviceCanAccessPeer",
    "aclrtDeviceEnablePeerAccess", "aclrtDeviceDisablePeerAccess", "aclrtDevicePeerAccessStatus",
    "aclrtCreateContext", "aclrtDestroyContext", "aclrtSetCurrentContext", "aclrtGetCurrentContext",
    "aclrtCreateStream", "aclrtCreateStreamWithConfig", "aclrtDestroyStream",
    "aclrtDestroyStreamForce", "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
    "aclrtCreateEvent", "aclrtCreateEventWithFlag", "aclrtDestroyEvent", "aclrtRecordEvent",
    "aclrtResetEvent", "aclrtSynchronizeEvent", "aclrtSynchronizeEventWithTimeout",
    "aclrtStreamWaitEvent", "aclrtMalloc", "aclrtFree", "aclrtMallocHost", "aclrtFreeHost",
    "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset", "aclrtMemsetAsync", "aclrtGetMemInfo",
    "aclrtCreateNotify", "aclrtDestroyNotify", "aclrtRecordNotify", "aclrtWaitAndResetNotify",
    "aclrtGetNotifyId", "aclrtNotifyBatchReset", "aclrtNotifyGetExportKey",
    "aclrtNotifySetImportPid", "aclrtNotifySetImportPidInterServer", "aclrtNotifyImportByKey",
    "aclrtIpcMemGetExportKey", "aclrtIpcMemSetImportPid", "aclrtIpcMemImportByKey",
    "aclrtIpcMemClose",
}


def _snake(c_name: str) -> str:
    special = {
        "aclrtSetCurrentContext": "set_context",
        "aclrtGetCurrentContext": "get_context",
    }
    if c_name in special:
        return special[c_name]
    name = c_name[len("aclrt"):]
    out = ""
    for ch in name:
        out += ("_" + ch.lower()) if ch.isupper() else ch
    return out.lstrip("_")


@pytest.mark.parametrize("name", sorted(RT_TABLE))
def test_function_exists_with_vendor_parameters(name: str) -> None:
    fn = getattr(acl.rt, name)
    assert callable(fn)
    assert fn.__doc__, name
    params = list(inspect.signature(fn).parameters)
    expected = RT_TABLE[name]
    assert params[: len(expected)] == expected
    # Parameters beyond pyACL's are ours and optional.
    for extra in list(inspect.signature(fn).parameters.values())[len(expected):]:
        assert extra.default is not inspect.Parameter.empty, (name, extra.name)


@pytest.mark.parametrize("c_name", sorted(C_NAMES))
def test_every_exported_c_function_has_a_python_function(c_name: str) -> None:
    assert hasattr(acl._lib.lib, c_name), c_name
    assert callable(getattr(acl.rt, _snake(c_name))), c_name


def test_top_level_functions() -> None:
    for name in ("init", "finalize", "finalize_reference", "get_recent_err_msg", "get_soc_name"):
        assert callable(getattr(acl, name))
    assert acl.get_soc_name() == acl.rt.get_soc_name()
    assert isinstance(acl.get_soc_name(), str)
    assert list(inspect.signature(acl.init).parameters) == ["config_path"]


def test_init_again_is_repeat_and_finalize_reference_counts() -> None:
    assert acl.init() == c.ACL_ERROR_REPEAT_INITIALIZE
    count, ret = acl.finalize_reference()
    assert ret == 0 and count >= 1


def _shape(value: Any, types: List[type]) -> None:
    assert isinstance(value, tuple) and len(value) == len(types) + 1, value
    for v, t in zip(value, types):
        assert isinstance(v, t), (value, types)
    assert isinstance(value[-1], int)


def test_return_shapes(device: int) -> None:
    rt = acl.rt
    _shape(rt.get_device(), [int])
    _shape(rt.get_device_count(), [int])
    _shape(rt.device_get_bare_tgid(), [int])
    _shape(rt.device_can_access_peer(0, 1), [int])
    _shape(rt.device_peer_access_status(0, 1), [int])
    _shape(rt.get_context(), [int])
    _shape(rt.get_mem_info(c.ACL_HBM_MEM), [int, int])
    stream = rt.create_stream()
    _shape(stream, [int])
    stream2 = rt.create_stream_with_config(0, 0)
    _shape(stream2, [int])
    event = rt.create_event()
    _shape(event, [int])
    event2 = rt.create_event_with_flag(c.ACL_EVENT_SYNC)
    _shape(event2, [int])
    notify = rt.create_notify(c.ACL_NOTIFY_DEFAULT)
    _shape(notify, [int])
    _shape(rt.get_notify_id(notify[0]), [int])
    key = rt.notify_get_export_key(notify[0], 65, 0)
    _shape(key, [str])
    assert 0 < len(key[0]) <= 64
    mem = rt.malloc(1 << 20, c.ACL_MEM_MALLOC_HUGE_FIRST)
    _shape(mem, [int])
    host = rt.malloc_host(4096)
    _shape(host, [int])
    mkey = rt.ipc_mem_get_export_key(mem[0], 1 << 20, 65, 0)
    _shape(mkey, [str])
    for ret in (
        rt.ipc_mem_close(mkey[0]), rt.free(mem[0]), rt.free_host(host[0]),
        rt.destroy_notify(notify[0]), rt.destroy_event(event[0]), rt.destroy_event(event2[0]),
        rt.destroy_stream(stream[0]), rt.destroy_stream(stream2[0]),
    ):
        assert ret == 0 and type(ret) is int
    assert rt.device_get_bare_tgid()[0] > 0


def test_context_functions() -> None:
    rt = acl.rt
    ctx, ret = rt.create_context(1)
    assert ret == 0 and ctx != 0
    assert rt.get_context() == (ctx, 0)
    assert rt.get_device() == (1, 0)
    assert rt.set_context(ctx) == 0
    assert rt.destroy_context(ctx) == 0
    assert rt.destroy_context(ctx) == c.ACL_ERROR_RT_INVALID_HANDLE


def test_get_recent_err_msg_is_consumed() -> None:
    acl.get_recent_err_msg()
    assert acl.rt.set_device(99) == 107001
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and "99" in msg
    assert acl.get_recent_err_msg() is None


def _in_fresh_thread(fn: Callable[[], Any]) -> Any:
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(30)
    return out[0]


def test_no_current_device_gives_107002() -> None:
    rt = acl.rt
    assert _in_fresh_thread(rt.get_device) == (0, c.ACL_ERROR_RT_CONTEXT_NULL)
    assert _in_fresh_thread(rt.create_stream) == (0, c.ACL_ERROR_RT_CONTEXT_NULL)
    assert _in_fresh_thread(lambda: rt.create_notify(0)) == (0, c.ACL_ERROR_RT_CONTEXT_NULL)
    assert _in_fresh_thread(lambda: rt.malloc(4096, 0)) == (0, c.ACL_ERROR_RT_CONTEXT_NULL)


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: acl.rt.set_device(99), 107001),
        (lambda: acl.rt.set_device(-1), 107001),
        (lambda: acl.rt.create_notify(5), (0, 107000)),
        (lambda: acl.rt.destroy_notify(0), 100000),
        (lambda: acl.rt.destroy_notify(None), 100000),
        (lambda: acl.rt.record_notify(0, 0), 100000),
        (lambda: acl.rt.notify_import_by_key("not-a-key", 0), (0, 107000)),
        (lambda: acl.rt.notify_import_by_key(None, 0), (0, 100000)),
        (lambda: acl.rt.ipc_mem_import_by_key("not-a-key", 0), (0, 107000)),
        (lambda: acl.rt.malloc(0, 0), (0, 100000)),
        (lambda: acl.rt.get_notify_id(0), (0, 100000)),
        (lambda: acl.rt.destroy_stream(0xA5FF000000000001), 107017),
        (lambda: acl.rt.device_can_access_peer(0, 99), (0, 107001)),
    ],
)
def test_error_numbers(device: int, call: Callable[[], Any], expected: Any) -> None:
    assert call() == expected
    acl.get_recent_err_msg()


def test_notify_export_errors(device: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(0)
    assert ret == 0
    assert rt.notify_get_export_key(notify, 10, 0) == ("", 107000)  # key buffer under 65
    assert rt.notify_get_export_key(notify, 65, 1) == ("", 107000)  # flags only 0 or 2
    key, ret = rt.notify_get_export_key(notify, 65, c.ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    assert ret == 0 and key
    assert rt.notify_get_export_key(notify, 65, 0) == ("", 507000)  # exported once
    assert rt.notify_set_import_pid(notify, []) == 100000  # no pid at all
    assert rt.destroy_notify(notify) == 0
    assert rt.destroy_notify(notify) == 107017


def test_inter_server_pids_unsupported_on_a2(device: int) -> None:
    notify, ret = acl.rt.create_notify(0)
    assert ret == 0
    _key, ret = acl.rt.notify_get_export_key(notify, 65, 0)
    assert ret == 0
    assert acl.rt.notify_set_import_pid_inter_server(notify, [(0, [1234])]) == 207000
    assert acl.rt.destroy_notify(notify) == 0


def test_peer_access(device: int) -> None:
    rt = acl.rt
    assert rt.device_can_access_peer(0, 1) == (1, 0)
    assert rt.device_can_access_peer(0, 0) == (0, 0)
    assert rt.device_enable_peer_access(1, 0) == 0
    assert rt.device_peer_access_status(0, 1) == (1, 0)
    assert rt.device_enable_peer_access(1, 1) != 0
    assert rt.device_disable_peer_access(1) == 0
    assert rt.device_peer_access_status(0, 1) == (0, 0)
    acl.get_recent_err_msg()
