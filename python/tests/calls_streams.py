"""Call cases (pyacl_cases.py) of the streams family, for test_every_function.py: streams,
events, IPC events, notifies, counting notifies, report callbacks and host functions, stream
attributes, value waits and writes.

Counting notifies exist on Ascend 950 only (207000 elsewhere, the default product included):
their cases run in one child process with ``ASCENDLESS_SOC`` set to an Ascend 950 SoC, the
child being this module run as a script (``python calls_streams.py --on-950``), which prints
every such case's valid and bad results as one line of JSON.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import acl  # noqa: F401
from pyacl_cases import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    BAD_HANDLE,
    Case,
    Ctx,
)

rt = acl.rt

ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011
ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
ACL_ERROR_RT_STREAM_NO_CB_REG = 107015
ACL_ERROR_RT_INVALID_HANDLE = 107017
ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006

ACL_EVENT_SYNC = 0x1
ACL_EVENT_TIME_LINE = 0x8
ACL_EVENT_IPC = 0x40
ACL_EVENT_RECORD_EXTERNAL = 1
ACL_EVENT_WAIT_EXTERNAL = 1
ACL_STREAM_FAST_SYNC = 2
ACL_STREAM_DEVICE_USE_ONLY = 32
ACL_STREAM_ATTR_FAILURE_MODE = 1
ACL_STREAM_ATTR_PRIORITY = 5
ACL_RT_STREAM_PRIORITY = 3  # aclrtStreamConfigAttr
ACL_RT_DEV_RES_CUBE_CORE = 0
ACL_STREAM_WAIT_VALUE_EQ = 1
ACL_CALLBACK_BLOCK = 1
ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x2
ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0
ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
UINT32_MAX = 0xFFFFFFFF

SOC_950 = "Ascend950PR_9579"
WORD = 4096  # the device memory of a value wait or write


def ok(result: Any) -> bool:
    return (result[-1] if isinstance(result, tuple) else result) == 0


def in_thread(fn: Callable[[], Any]) -> Any:
    """`fn()` on a new thread, one without a current device or context."""
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(30)
    assert out, "the call did not return within 30 s"
    return out[0]


def stream_of(ctx: Ctx, priority: Optional[int] = None, flag: int = 0) -> int:
    s, ret = rt.create_stream() if priority is None else rt.create_stream_with_config(priority, flag)
    assert ret == 0
    ctx.cleanup.append((rt.destroy_stream, s))
    return s


def event_of(ctx: Ctx, flag: Optional[int] = None, ex: bool = False) -> int:
    if ex:
        e, ret = rt.create_event_ex_with_flag(flag)
    elif flag is None:
        e, ret = rt.create_event()
    else:
        e, ret = rt.create_event_with_flag(flag)
    assert ret == 0
    ctx.cleanup.append((rt.destroy_event, e))
    return e


def notify_of(ctx: Ctx) -> int:
    n, ret = rt.create_notify(0)
    assert ret == 0
    ctx.cleanup.append((rt.destroy_notify, n))
    return n


def word_of(ctx: Ctx, value: int = 0) -> int:
    """A 64-bit word of device memory holding `value`."""
    dev, ret = rt.malloc(WORD, 0)
    assert ret == 0
    ctx.cleanup.append((rt.free, dev))
    cell = ctypes.c_uint64(value)
    assert rt.memcpy(dev, 8, ctypes.addressof(cell), 8, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    return dev


def read_word(dev: int) -> int:
    cell = ctypes.c_uint64(0)
    assert rt.memcpy(ctypes.addressof(cell), 8, dev, 8, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return cell.value


def config_of(ctx: Ctx) -> int:
    h = rt.create_stream_config_handle()
    assert h != 0
    ctx.cleanup.append((rt.destroy_stream_config_handle, h))
    return h


def then(ret: Any, *steps: Callable[[], Any]) -> Any:
    """`ret`, after checking that each of `steps` gives 0."""
    for step in steps:
        assert ok(step()), step
    return ret


def creates(release: Callable[[int], Any]) -> Callable[[Any, Ctx], None]:
    """A check that the valid call made a non-zero handle; it is released after the case."""

    def check(result: Any, ctx: Ctx) -> None:
        assert result[0] != 0
        ctx.cleanup.append((release, result[0]))

    return check


def created_in(release: Callable[[int], Any], make: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
    """`make(ctx)`, its handle (if any) released after the case."""

    def call(ctx: Ctx) -> Any:
        result = make(ctx)
        if ok(result) and result[0]:
            ctx.cleanup.append((release, result[0]))
        return result

    return call


# ---- report callbacks and host functions ----------------------------------------------------


def subscription_calls(host_func: bool) -> Tuple[Callable[[int, int], int], Callable[[int, int], int]]:
    if host_func:
        return rt.subscribe_host_func, rt.unsubscribe_host_func
    return rt.subscribe_report, rt.unsubscribe_report


def subscribed(ctx: Ctx, host_func: bool = False) -> int:
    """A new stream bound to this thread (report callbacks, or host functions)."""
    s = stream_of(ctx)
    tid = threading.get_ident()
    if host_func:
        assert rt.subscribe_host_func(tid, s) == 0
        ctx.cleanup.append((lambda s: rt.unsubscribe_host_func(tid, s), s))
    else:
        assert rt.subscribe_report(tid, s) == 0
        ctx.cleanup.append((lambda s: rt.unsubscribe_report(tid, s), s))
    return s


def process_report_valid(ctx: Ctx) -> Any:
    s = subscribed(ctx)
    ran: List[Any] = []
    assert rt.launch_callback(ran.append, ["report"], ACL_CALLBACK_BLOCK, s) == 0
    ret = rt.process_report(5000)
    assert ran == [["report"]]
    return then(ret, lambda: rt.synchronize_stream(s))


def launch_callback_valid(ctx: Ctx) -> Any:
    s = subscribed(ctx)
    ran: List[Any] = []
    ret = rt.launch_callback(lambda data: ran.append(data), [1, "two"], ACL_CALLBACK_BLOCK, s)
    assert rt.process_report(5000) == 0
    assert rt.synchronize_stream(s) == 0
    assert ran == [[1, "two"]]
    return ret


def launch_host_func_valid(ctx: Ctx) -> Any:
    s = stream_of(ctx)
    ran: List[Any] = []
    ret = rt.launch_host_func(s, ran.append, {"args": 1})
    assert rt.synchronize_stream(s) == 0
    assert ran == [{"args": 1}]
    return ret


def process_host_func_valid(ctx: Ctx) -> Any:
    s = subscribed(ctx, host_func=True)
    ran: List[int] = []
    assert rt.launch_host_func(s, lambda tid: ran.append(threading.get_ident() - tid), threading.get_ident()) == 0
    ret = rt.process_host_func(5000)
    assert ran == [0], "the host function ran in the subscribed thread"
    return then(ret, lambda: rt.synchronize_stream(s))


def subscribe_valid(ctx: Ctx, host_func: bool = False) -> Any:
    s = stream_of(ctx)
    tid = threading.get_ident()
    sub, unsub = subscription_calls(host_func)
    ret = sub(tid, s)
    if ret == 0:
        ctx.cleanup.append((lambda s: unsub(tid, s), s))
    return ret


def subscribe_twice(ctx: Ctx, host_func: bool = False) -> Any:
    s = subscribed(ctx, host_func)
    sub = rt.subscribe_host_func if host_func else rt.subscribe_report
    return sub(threading.get_ident(), s)


def unsubscribe_once(ctx: Ctx, host_func: bool = False) -> Any:
    s = stream_of(ctx)
    tid = threading.get_ident()
    sub, unsub = subscription_calls(host_func)
    assert sub(tid, s) == 0
    return unsub(tid, s)


def unsubscribe_unsubscribed(ctx: Ctx, host_func: bool = False) -> Any:
    unsub = rt.unsubscribe_host_func if host_func else rt.unsubscribe_report
    return unsub(threading.get_ident(), stream_of(ctx))


STATE_NAME = "calls_streams"


def reg_stream_state_valid(ctx: Ctx) -> Any:
    seen: List[Tuple[int, int, Any]] = []
    ret = rt.reg_stream_state_callback(STATE_NAME, lambda s, state, args: seen.append((s, state, args)), "args")
    if ret != 0:
        return ret
    ctx.cleanup.append((lambda name: rt.reg_stream_state_callback(name, None), STATE_NAME))
    s, r = rt.create_stream()
    assert r == 0
    assert rt.destroy_stream(s) == 0
    assert [x for x in seen if x[0] == s] == [(s, 1, "args"), (s, 2, "args")], seen
    return ret


def reg_stream_state_twice(ctx: Ctx) -> Any:
    name = STATE_NAME + ".twice"
    assert rt.reg_stream_state_callback(name, lambda *a: None) == 0
    ctx.cleanup.append((lambda name: rt.reg_stream_state_callback(name, None), name))
    return rt.reg_stream_state_callback(name, lambda *a: None)


# ---- exception information -----------------------------------------------------------------

_EXCEPTION_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _set_exception_info_callback(callback: Any) -> int:
    # A prototype of our own for aclrtSetExceptionInfoCallback (its Python twin is another
    # family's), so that the library function object's declaration is left alone.
    proto = ctypes.CFUNCTYPE(ctypes.c_int, _EXCEPTION_CALLBACK)
    return proto(("aclrtSetExceptionInfoCallback", acl._lib.lib))(callback)  # type: ignore[attr-defined]


def stream_id_of_a_failed_task(ctx: Ctx) -> Any:
    """Fails a task (a wait for an event whose record is held, 10 ms) and asks, inside the
    exception callback, for the failed task's stream id."""
    got: List[int] = []
    thunk = _EXCEPTION_CALLBACK(lambda info: got.append(rt.get_stream_id_from_exception_info(info)))
    assert _set_exception_info_callback(thunk) == 0
    ctx.cleanup.append((lambda t: _set_exception_info_callback(_EXCEPTION_CALLBACK()), thunk))
    held = stream_of(ctx)
    s = stream_of(ctx)
    e = event_of(ctx)
    word = word_of(ctx)
    assert rt.value_wait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, held) == 0
    ctx.cleanup.append((lambda w: (rt.value_write(w, 1, 0, s), rt.synchronize_stream(held)), word))
    assert rt.record_event(e, held) == 0
    assert rt.stream_wait_event_with_timeout(s, e, 10) == 0
    assert rt.synchronize_stream(s) == 107019
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    assert got, "the exception callback was not called"
    stream_id, ret = rt.stream_get_id(s)
    assert ret == 0 and got[0] == stream_id
    return got[0]


# ---- counting notifies, on Ascend 950 --------------------------------------------------------

_ON_950: Dict[str, Tuple[Callable[[Ctx], Any], Callable[[Ctx], Any]]] = {}


def cnt_notify_of(ctx: Ctx) -> int:
    n, ret = rt.cnt_notify_create(0)
    assert ret == 0, ret
    ctx.cleanup.append((rt.cnt_notify_destroy, n))
    return n


@functools.lru_cache(maxsize=None)
def _results_on_950() -> Dict[str, Tuple[Any, Any]]:
    env = dict(os.environ)
    env["ASCENDLESS_SOC"] = SOC_950
    env.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--on-950"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads(out.stdout.strip().splitlines()[-1])

    def back(x: Any) -> Any:
        return tuple(x) if isinstance(x, list) else x

    return {name: (back(v), back(b)) for name, (v, b) in results.items()}


def on_950(name: str, valid: Callable[[Ctx], Any], bad: Callable[[Ctx], Any], **kw: Any) -> Case:
    """A case whose valid and bad calls run in the Ascend 950 child (their results come back
    here; `check` runs here, without the child's resources)."""
    _ON_950[name] = (valid, bad)
    return Case(name, valid=lambda ctx: _results_on_950()[name][0], bad=lambda ctx: _results_on_950()[name][1], **kw)


def _run_on_950() -> None:
    """The child: every counting notify case, valid then bad, with a Ctx as the runner's."""
    assert acl.init() == 0
    assert rt.set_device(0) == 0
    results: Dict[str, Tuple[Any, Any]] = {}
    for name, (valid, bad) in _ON_950.items():
        stream, ret = rt.create_stream()
        assert ret == 0
        event, ret = rt.create_event()
        assert ret == 0
        dev, ret = rt.malloc(1 << 20, 0)
        assert ret == 0
        host, ret = rt.malloc_host(1 << 20)
        assert ret == 0
        ctx = Ctx(device=0, stream=stream, event=event, dev=dev, host=host, size=1 << 20, cleanup=[])
        try:
            results[name] = (valid(ctx), bad(ctx))
        finally:
            for release, handle in reversed(ctx.cleanup):
                release(handle)
            rt.synchronize_stream(stream)
            rt.free_host(host)
            rt.free(dev)
            rt.destroy_event(event)
            rt.destroy_stream(stream)
    assert rt.reset_device(0) == 0
    acl.finalize()
    print(json.dumps(results), flush=True)


def cnt_wait_valid(ctx: Ctx) -> Any:
    n = cnt_notify_of(ctx)
    record = {"mode": ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, "value": 5}
    assert rt.cnt_notify_record(n, ctx.stream, record) == 0
    ret = rt.cnt_notify_wait_with_timeout(
        n, ctx.stream, {"mode": ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, "value": 5, "timeout": 5, "isClear": 1}
    )
    return then(ret, lambda: rt.synchronize_stream(ctx.stream))


CNT_CASES = [
    on_950(
        "rt.cnt_notify_create",
        valid=created_in(rt.cnt_notify_destroy, lambda ctx: rt.cnt_notify_create(0)),
        bad=lambda ctx: rt.cnt_notify_create(1),  # flag is reserved: 0
        check=lambda r, ctx: r[0] != 0,
    ),
    on_950(
        "rt.cnt_notify_destroy",
        valid=lambda ctx: rt.cnt_notify_destroy(rt.cnt_notify_create(0)[0]),
        bad=lambda ctx: rt.cnt_notify_destroy(BAD_HANDLE),
        code=ACL_ERROR_RT_INVALID_HANDLE,
    ),
    on_950(
        "rt.cnt_notify_get_id",
        valid=lambda ctx: rt.cnt_notify_get_id(cnt_notify_of(ctx)),
        bad=lambda ctx: rt.cnt_notify_get_id(0),
        code=ACL_ERROR_INVALID_PARAM,
    ),
    on_950(
        "rt.cnt_notify_reset",
        valid=lambda ctx: then(
            rt.cnt_notify_reset(cnt_notify_of(ctx), ctx.stream), lambda: rt.synchronize_stream(ctx.stream)
        ),
        bad=lambda ctx: rt.cnt_notify_reset(BAD_HANDLE, ctx.stream),
        code=ACL_ERROR_RT_INVALID_HANDLE,
    ),
    on_950(
        "rt.cnt_notify_record",
        valid=lambda ctx: then(
            rt.cnt_notify_record(cnt_notify_of(ctx), ctx.stream, {"mode": 1, "value": 3}),
            lambda: rt.synchronize_stream(ctx.stream),
        ),
        bad=lambda ctx: rt.cnt_notify_record(cnt_notify_of(ctx), ctx.stream, {"mode": 3, "value": 1}),  # no mode 3
    ),
    on_950(
        "rt.cnt_notify_wait_with_timeout",
        valid=cnt_wait_valid,
        bad=lambda ctx: rt.cnt_notify_wait_with_timeout(cnt_notify_of(ctx), ctx.stream, {"mode": 1, "isClear": 2}),
    ),
]


# ---- the rest ------------------------------------------------------------------------------


def elapsed_valid(ctx: Ctx) -> Any:
    start = event_of(ctx, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    end = event_of(ctx, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
    assert rt.record_event(start, ctx.stream) == 0
    assert rt.record_event(end, ctx.stream) == 0
    assert rt.synchronize_stream(ctx.stream) == 0
    return rt.event_elapsed_time(start, end)


def exported_notify(ctx: Ctx) -> Tuple[int, str]:
    n = notify_of(ctx)
    key, ret = rt.notify_get_export_key(n, 65, ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    assert ret == 0 and key
    return n, key


def config_opt(ctx: Ctx, priority: int) -> Any:
    h = config_of(ctx)
    ctypes.c_uint32.from_address(ctx.host).value = priority
    return rt.set_stream_config_opt(h, ACL_RT_STREAM_PRIORITY, ctx.host, 4)


def stream_v2_valid(ctx: Ctx) -> Any:
    h = config_of(ctx)
    ctypes.c_uint32.from_address(ctx.host).value = 4
    assert rt.set_stream_config_opt(h, ACL_RT_STREAM_PRIORITY, ctx.host, 4) == 0
    result = rt.create_stream_v2(h)
    if ok(result):
        ctx.cleanup.append((rt.destroy_stream, result[0]))
        assert rt.stream_get_priority(result[0]) == (4, 0)
    return result


def stopped_stream(ctx: Ctx) -> Any:
    s, ret = rt.create_stream()
    assert ret == 0
    ctx.cleanup.append((lambda s: (rt.stream_abort(s), rt.destroy_stream(s)), s))
    return rt.stream_stop(s)


def value_write_valid(ctx: Ctx) -> Any:
    word = word_of(ctx)
    ret = rt.value_write(word, 0x1122334455667788, 0, ctx.stream)
    assert rt.synchronize_stream(ctx.stream) == 0
    assert read_word(word) == 0x1122334455667788
    return ret


def value_wait_valid(ctx: Ctx) -> Any:
    word = word_of(ctx)
    s = stream_of(ctx)
    ret = rt.value_wait(word, 9, ACL_STREAM_WAIT_VALUE_EQ, s)
    assert rt.stream_query(s) == (1, 0), "the wait holds the stream"  # ACL_STREAM_STATUS_NOT_READY
    assert rt.value_write(word, 9, 0, ctx.stream) == 0
    assert rt.synchronize_stream(s) == 0
    return ret


def wait_notify_valid(ctx: Ctx) -> Any:
    n = notify_of(ctx)
    assert rt.record_notify(n, ctx.stream) == 0
    return then(rt.wait_and_reset_notify(n, ctx.stream, 5), lambda: rt.synchronize_stream(ctx.stream))


def recorded(ctx: Ctx) -> int:
    assert rt.record_event(ctx.event, ctx.stream) == 0
    assert rt.synchronize_stream(ctx.stream) == 0
    return ctx.event


def stream_attribute_set(ctx: Ctx, value: Any) -> Any:
    s = stream_of(ctx)
    ret = rt.set_stream_attribute(s, ACL_STREAM_ATTR_PRIORITY, value)
    if ret == 0:
        assert rt.get_stream_attribute(s, ACL_STREAM_ATTR_PRIORITY) == (value, 0)
        assert rt.stream_get_priority(s) == (value, 0)
    return ret


def ipc_handle_of(ctx: Ctx) -> bytes:
    handle, ret = rt.ipc_get_event_handle(event_of(ctx, ACL_EVENT_IPC, ex=True))
    assert ret == 0
    return handle


def is_u32(r: Any, ctx: Ctx) -> None:
    assert 0 <= r[0] <= UINT32_MAX


CASES: List[Case] = CNT_CASES + [
    # ---- streams
    Case("rt.create_stream", valid=lambda ctx: rt.create_stream(), bad=lambda ctx: in_thread(rt.create_stream),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=creates(rt.destroy_stream)),
    Case("rt.create_stream_with_config", valid=lambda ctx: rt.create_stream_with_config(3, ACL_STREAM_FAST_SYNC),
         bad=lambda ctx: rt.create_stream_with_config(0, ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_SYNC),
         check=creates(rt.destroy_stream)),
    Case("rt.create_stream_config_handle",
         valid=created_in(rt.destroy_stream_config_handle, lambda ctx: (rt.create_stream_config_handle(), 0)),
         # It has no failure to give (NULL only when memory runs out): without a device too.
         bad=created_in(rt.destroy_stream_config_handle, lambda ctx: (in_thread(rt.create_stream_config_handle), 0)),
         code=lambda r: r[0] != 0, check=lambda r, ctx: r[0] != 0),
    Case("rt.destroy_stream_config_handle",
         valid=lambda ctx: rt.destroy_stream_config_handle(rt.create_stream_config_handle()),
         bad=lambda ctx: rt.destroy_stream_config_handle(BAD_HANDLE), code=ACL_ERROR_INVALID_PARAM),
    Case("rt.set_stream_config_opt", valid=lambda ctx: config_opt(ctx, 7), bad=lambda ctx: config_opt(ctx, 8)),
    Case("rt.create_stream_v2", valid=stream_v2_valid, bad=lambda ctx: rt.create_stream_v2(BAD_HANDLE),
         code=ACL_ERROR_INVALID_PARAM, check=lambda r, ctx: r[0] != 0),
    Case("rt.destroy_stream", valid=lambda ctx: rt.destroy_stream(rt.create_stream()[0]),
         bad=lambda ctx: rt.destroy_stream(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.destroy_stream_force", valid=lambda ctx: rt.destroy_stream_force(rt.create_stream()[0]),
         bad=lambda ctx: rt.destroy_stream_force(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.ctx_get_current_default_stream", valid=lambda ctx: rt.ctx_get_current_default_stream(),
         bad=lambda ctx: in_thread(rt.ctx_get_current_default_stream), code=ACL_ERROR_RT_CONTEXT_NULL,
         check=lambda r, ctx: r[0] != 0),
    Case("rt.synchronize_stream", valid=lambda ctx: rt.synchronize_stream(ctx.stream),
         bad=lambda ctx: rt.synchronize_stream(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.synchronize_stream_with_timeout", valid=lambda ctx: rt.synchronize_stream_with_timeout(ctx.stream, 1000),
         bad=lambda ctx: rt.synchronize_stream_with_timeout(BAD_HANDLE, 1000), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.stream_query", valid=lambda ctx: rt.stream_query(ctx.stream), bad=lambda ctx: rt.stream_query(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE, check=lambda r, ctx: r[0] == 0),  # ACL_STREAM_STATUS_COMPLETE
    Case("rt.stream_get_id", valid=lambda ctx: rt.stream_get_id(ctx.stream),
         bad=lambda ctx: rt.stream_get_id(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE, check=lambda r, ctx: r[0] != rt.stream_get_id(stream_of(ctx))[0]),
    Case("rt.stream_get_flags", valid=lambda ctx: rt.stream_get_flags(stream_of(ctx, 0, ACL_STREAM_FAST_SYNC)),
         bad=lambda ctx: rt.stream_get_flags(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=lambda r, ctx: r[0] == ACL_STREAM_FAST_SYNC),
    Case("rt.stream_get_priority", valid=lambda ctx: rt.stream_get_priority(stream_of(ctx, 6, 0)),
         bad=lambda ctx: rt.stream_get_priority(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=lambda r, ctx: r[0] == 6),
    Case("rt.device_get_stream_priority_range", valid=lambda ctx: rt.device_get_stream_priority_range(),
         # It has no failure to give: the range is the product's, also without a device.
         bad=lambda ctx: in_thread(rt.device_get_stream_priority_range), code=0,
         check=lambda r, ctx: r[:2] == (7, 0)),
    Case("rt.get_stream_available_num", valid=lambda ctx: rt.get_stream_available_num(),
         bad=lambda ctx: in_thread(rt.get_stream_available_num), code=ACL_ERROR_RT_CONTEXT_NULL,
         check=lambda r, ctx: 0 < r[0] <= 1984),
    Case("rt.stream_abort", valid=lambda ctx: rt.stream_abort(stream_of(ctx)),
         bad=lambda ctx: rt.stream_abort(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE),
    # The header and docs/compatibility.md give 107000 for NULL; the library answers 100000
    # (the report says so): the bad call is a bad handle.
    Case("rt.stream_stop", valid=stopped_stream, bad=lambda ctx: rt.stream_stop(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.set_stream_failure_mode", valid=lambda ctx: rt.set_stream_failure_mode(stream_of(ctx), 0),
         bad=lambda ctx: rt.set_stream_failure_mode(stream_of(ctx), 5)),
    Case("rt.set_stream_overflow_switch", valid=lambda ctx: rt.set_stream_overflow_switch(ctx.stream, 1),
         bad=lambda ctx: rt.set_stream_overflow_switch(ctx.stream, 2),
         check=lambda r, ctx: rt.get_stream_overflow_switch(ctx.stream) == (1, 0)),
    Case("rt.get_stream_overflow_switch", valid=lambda ctx: rt.get_stream_overflow_switch(ctx.stream),
         bad=lambda ctx: rt.get_stream_overflow_switch(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=lambda r, ctx: r[0] == 0),
    Case("rt.set_stream_res_limit", valid=lambda ctx: rt.set_stream_res_limit(ctx.stream, ACL_RT_DEV_RES_CUBE_CORE, 2),
         bad=lambda ctx: rt.set_stream_res_limit(ctx.stream, ACL_RT_DEV_RES_CUBE_CORE, 1 << 20),
         check=lambda r, ctx: rt.get_stream_res_limit(ctx.stream, ACL_RT_DEV_RES_CUBE_CORE) == (2, 0)),
    Case("rt.get_stream_res_limit", valid=lambda ctx: rt.get_stream_res_limit(ctx.stream, ACL_RT_DEV_RES_CUBE_CORE),
         bad=lambda ctx: rt.get_stream_res_limit(ctx.stream, 99), check=lambda r, ctx: r[0] > 0),
    Case("rt.reset_stream_res_limit", valid=lambda ctx: rt.reset_stream_res_limit(ctx.stream),
         bad=lambda ctx: rt.reset_stream_res_limit(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.use_stream_res_in_current_thread", valid=lambda ctx: rt.use_stream_res_in_current_thread(ctx.stream),
         bad=lambda ctx: rt.use_stream_res_in_current_thread(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=lambda r, ctx: rt.unuse_stream_res_in_current_thread(ctx.stream) == 0),
    Case("rt.unuse_stream_res_in_current_thread", valid=lambda ctx: rt.unuse_stream_res_in_current_thread(ctx.stream),
         bad=lambda ctx: rt.unuse_stream_res_in_current_thread(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.set_stream_attribute", valid=lambda ctx: stream_attribute_set(ctx, 3),
         bad=lambda ctx: stream_attribute_set(ctx, 8)),  # priorities are 0..7
    Case("rt.get_stream_attribute", valid=lambda ctx: rt.get_stream_attribute(ctx.stream, ACL_STREAM_ATTR_FAILURE_MODE),
         bad=lambda ctx: rt.get_stream_attribute(BAD_HANDLE, ACL_STREAM_ATTR_FAILURE_MODE),
         code=ACL_ERROR_RT_INVALID_HANDLE, check=lambda r, ctx: r[0] == 0),  # ACL_CONTINUE_ON_FAILURE
    # Model-bound streams: not supported here, whatever the arguments.
    Case("rt.active_stream", valid=lambda ctx: rt.active_stream(stream_of(ctx), ctx.stream),
         bad=lambda ctx: rt.active_stream(BAD_HANDLE, BAD_HANDLE), valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
         code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
    Case("rt.switch_stream",
         valid=lambda ctx: rt.switch_stream(ctx.dev, 0, ctx.dev + 8, 0, stream_of(ctx), stream_of(ctx), ctx.stream),
         bad=lambda ctx: rt.switch_stream(ctx.dev, 0, ctx.dev, 0, BAD_HANDLE, BAD_HANDLE, BAD_HANDLE),
         valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT, code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
    # ---- events
    Case("rt.create_event", valid=lambda ctx: rt.create_event(), bad=lambda ctx: in_thread(rt.create_event),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=creates(rt.destroy_event)),
    Case("rt.create_event_with_flag", valid=lambda ctx: rt.create_event_with_flag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE),
         bad=lambda ctx: rt.create_event_with_flag(0x80000), check=creates(rt.destroy_event)),
    Case("rt.create_event_ex_with_flag", valid=lambda ctx: rt.create_event_ex_with_flag(ACL_EVENT_IPC),
         bad=lambda ctx: rt.create_event_ex_with_flag(ACL_EVENT_IPC | ACL_EVENT_SYNC), check=creates(rt.destroy_event)),
    Case("rt.destroy_event", valid=lambda ctx: rt.destroy_event(rt.create_event()[0]),
         bad=lambda ctx: rt.destroy_event(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.record_event", valid=lambda ctx: rt.record_event(ctx.event, ctx.stream),
         bad=lambda ctx: rt.record_event(BAD_HANDLE, ctx.stream), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.record_event_with_flag", valid=lambda ctx: rt.record_event_with_flag(ctx.event, ctx.stream, 0),
         bad=lambda ctx: rt.record_event_with_flag(ctx.event, ctx.stream, ACL_EVENT_RECORD_EXTERNAL)),  # not capturing
    Case("rt.reset_event", valid=lambda ctx: rt.reset_event(recorded(ctx), ctx.stream),
         bad=lambda ctx: rt.reset_event(BAD_HANDLE, ctx.stream), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.query_event", valid=lambda ctx: rt.query_event(recorded(ctx)),
         bad=lambda ctx: rt.query_event(event_of(ctx, ACL_EVENT_SYNC, ex=True)), code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
         check=lambda r, ctx: r[0] == 0),  # ACL_EVENT_STATUS_COMPLETE
    Case("rt.query_event_status", valid=lambda ctx: rt.query_event_status(recorded(ctx)),
         bad=lambda ctx: rt.query_event_status(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=lambda r, ctx: r[0] == 1),  # ACL_EVENT_RECORDED_STATUS_COMPLETE
    Case("rt.query_event_wait_status", valid=lambda ctx: rt.query_event_wait_status(ctx.event),
         bad=lambda ctx: rt.query_event_wait_status(event_of(ctx, ACL_EVENT_SYNC, ex=True)),
         code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT, check=lambda r, ctx: r[0] == 0),  # ACL_EVENT_WAIT_STATUS_COMPLETE
    Case("rt.synchronize_event", valid=lambda ctx: rt.synchronize_event(recorded(ctx)),
         bad=lambda ctx: rt.synchronize_event(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.synchronize_event_with_timeout", valid=lambda ctx: rt.synchronize_event_with_timeout(recorded(ctx), 1000),
         bad=lambda ctx: rt.synchronize_event_with_timeout(BAD_HANDLE, 1000), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.stream_wait_event", valid=lambda ctx: rt.stream_wait_event(stream_of(ctx), recorded(ctx)),
         bad=lambda ctx: rt.stream_wait_event(ctx.stream, BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.stream_wait_event_with_flag",
         valid=lambda ctx: rt.stream_wait_event_with_flag(stream_of(ctx), recorded(ctx), 1000, 0),
         # WAIT_EXTERNAL outside a capture
         bad=lambda ctx: rt.stream_wait_event_with_flag(ctx.stream, ctx.event, 0, ACL_EVENT_WAIT_EXTERNAL)),
    Case("rt.stream_wait_event_with_timeout",
         valid=lambda ctx: rt.stream_wait_event_with_timeout(stream_of(ctx), recorded(ctx), 1000),
         bad=lambda ctx: rt.stream_wait_event_with_timeout(ctx.stream, ctx.event, -1)),
    Case("rt.event_elapsed_time", valid=elapsed_valid, bad=lambda ctx: rt.event_elapsed_time(ctx.event, event_of(ctx)),
         code=ACL_ERROR_RT_EVENT_NOT_COMPLETE, check=lambda r, ctx: r[0] >= 0.0),
    Case("rt.event_get_timestamp", valid=lambda ctx: rt.event_get_timestamp(recorded(ctx)),
         bad=lambda ctx: rt.event_get_timestamp(event_of(ctx)), code=ACL_ERROR_RT_EVENT_NOT_COMPLETE,
         check=lambda r, ctx: r[0] > 0),
    Case("rt.get_event_id", valid=lambda ctx: rt.get_event_id(ctx.event),
         bad=lambda ctx: rt.get_event_id(event_of(ctx, ACL_EVENT_IPC, ex=True)), code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
         check=lambda r, ctx: r[0] != rt.get_event_id(event_of(ctx))[0]),
    Case("rt.get_event_avail_num", valid=lambda ctx: rt.get_event_avail_num(),
         bad=lambda ctx: in_thread(rt.get_event_avail_num), code=ACL_ERROR_RT_CONTEXT_NULL,
         check=lambda r, ctx: 0 < r[0] < 65536),
    # ---- IPC events (two processes: test_ipc_events_two_processes.py)
    Case("rt.ipc_get_event_handle", valid=lambda ctx: rt.ipc_get_event_handle(event_of(ctx, ACL_EVENT_IPC, ex=True)),
         bad=lambda ctx: rt.ipc_get_event_handle(ctx.event),  # not an IPC event
         check=lambda r, ctx: isinstance(r[0], bytes) and len(r[0]) == 64 and r[0] != bytes(64)),
    Case("rt.ipc_open_event_handle",
         valid=created_in(rt.destroy_event, lambda ctx: rt.ipc_open_event_handle(ipc_handle_of(ctx))),
         bad=lambda ctx: rt.ipc_open_event_handle(b"not a handle".ljust(64, b"!")), check=lambda r, ctx: r[0] != 0),
    # ---- notifies
    Case("rt.create_notify", valid=lambda ctx: rt.create_notify(0), bad=lambda ctx: rt.create_notify(5),
         check=creates(rt.destroy_notify)),
    Case("rt.destroy_notify", valid=lambda ctx: rt.destroy_notify(rt.create_notify(0)[0]),
         bad=lambda ctx: rt.destroy_notify(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.record_notify", valid=lambda ctx: rt.record_notify(notify_of(ctx), ctx.stream),
         bad=lambda ctx: rt.record_notify(BAD_HANDLE, ctx.stream), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.wait_and_reset_notify", valid=wait_notify_valid,
         bad=lambda ctx: rt.wait_and_reset_notify(BAD_HANDLE, ctx.stream, 1), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.get_notify_id", valid=lambda ctx: rt.get_notify_id(notify_of(ctx)),
         bad=lambda ctx: rt.get_notify_id(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE, check=is_u32),
    Case("rt.notify_batch_reset", valid=lambda ctx: rt.notify_batch_reset([notify_of(ctx), notify_of(ctx)]),
         bad=lambda ctx: rt.notify_batch_reset([notify_of(ctx), BAD_HANDLE]), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.notify_get_export_key", valid=lambda ctx: rt.notify_get_export_key(notify_of(ctx), 65, 0),
         bad=lambda ctx: rt.notify_get_export_key(notify_of(ctx), 64, 0),  # len at least 65
         check=lambda r, ctx: 0 < len(r[0]) <= 64),
    Case("rt.notify_set_import_pid", valid=lambda ctx: rt.notify_set_import_pid(exported_notify(ctx)[0], [os.getpid()]),
         bad=lambda ctx: rt.notify_set_import_pid(BAD_HANDLE, [os.getpid()]), code=ACL_ERROR_RT_INVALID_HANDLE),
    # Super-node products only (A3, 950): 207000 on the default Atlas A2.
    Case("rt.notify_set_import_pid_inter_server",
         valid=lambda ctx: rt.notify_set_import_pid_inter_server(exported_notify(ctx)[0], [(0, [os.getpid()])]),
         bad=lambda ctx: rt.notify_set_import_pid_inter_server(BAD_HANDLE, [(0, [os.getpid()])]),
         valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT, code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.notify_import_by_key",
         valid=created_in(rt.destroy_notify, lambda ctx: rt.notify_import_by_key(exported_notify(ctx)[1], 0)),
         bad=lambda ctx: rt.notify_import_by_key("no-such-key", 0), check=lambda r, ctx: r[0] != 0),
    # ---- report callbacks and host functions
    Case("rt.subscribe_report", valid=subscribe_valid, bad=subscribe_twice, code=ACL_ERROR_RT_STREAM_SUBSCRIBE),
    Case("rt.unsubscribe_report", valid=unsubscribe_once, bad=unsubscribe_unsubscribed,
         code=ACL_ERROR_RT_STREAM_SUBSCRIBE),
    Case("rt.process_report", valid=process_report_valid, bad=lambda ctx: rt.process_report(0),
         code=ACL_ERROR_INVALID_PARAM),
    Case("rt.launch_callback", valid=launch_callback_valid,
         bad=lambda ctx: rt.launch_callback(print, [], ACL_CALLBACK_BLOCK, stream_of(ctx)),  # no subscribed thread
         code=ACL_ERROR_RT_STREAM_NO_CB_REG),
    Case("rt.launch_host_func", valid=launch_host_func_valid,
         bad=lambda ctx: rt.launch_host_func(ctx.stream, None, None)),
    Case("rt.subscribe_host_func", valid=lambda ctx: subscribe_valid(ctx, host_func=True),
         bad=lambda ctx: rt.subscribe_host_func(threading.get_ident(), 0), code=ACL_ERROR_INVALID_PARAM),
    Case("rt.unsubscribe_host_func", valid=lambda ctx: unsubscribe_once(ctx, host_func=True),
         bad=lambda ctx: unsubscribe_unsubscribed(ctx, host_func=True), code=ACL_ERROR_RT_STREAM_SUBSCRIBE),
    Case("rt.process_host_func", valid=process_host_func_valid, bad=lambda ctx: rt.process_host_func(0)),
    Case("rt.reg_stream_state_callback", valid=reg_stream_state_valid, bad=reg_stream_state_twice),
    Case("rt.get_stream_id_from_exception_info", valid=stream_id_of_a_failed_task,
         bad=lambda ctx: rt.get_stream_id_from_exception_info(0),  # NULL: UINT32_MAX
         valid_code=lambda r: r != UINT32_MAX, code=lambda r: r == UINT32_MAX),
    # ---- value waits and writes (two processes: test_ipc_events_two_processes.py)
    Case("rt.value_write", valid=value_write_valid,
         bad=lambda ctx: rt.value_write(word_of(ctx), 1, 1, ctx.stream)),  # flag is reserved: 0
    Case("rt.value_wait", valid=value_wait_valid,
         bad=lambda ctx: rt.value_wait(word_of(ctx), 0, 4, ctx.stream)),  # no comparison 4
]


if __name__ == "__main__" and "--on-950" in sys.argv[1:]:
    _run_on_950()
