"""Call cases (pyacl_cases.py) of the model family, for test_every_function.py: acl.mdl (model
run instances, capture and replay, dump) and, in acl.rt, kernel binaries, functions and
argument blocks, labels, groups, random numbers, task updates, reduce, profiling trace,
snapshot lock and last-task information.

The codes are those of docs/compatibility.md and the header's doc comments: a stale or foreign
handle is 107017 (``ACL_ERROR_RT_INVALID_HANDLE``, docs/api-conventions.md), a bad value 107000,
NULL where a value is needed 100000, and the kernel-binary functions, which need an NPU, 207000
for every call. Functions without an argument that can be wrong (``create_label``,
``get_version``...) have a second valid call as their "bad" one, checked by a predicate."""

from __future__ import annotations

import ctypes
import json
import os
import struct
import tempfile
import threading
from typing import Any, Callable, List, Optional, Tuple

import acl
from pyacl_cases import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    BAD_HANDLE,
    Case,
    Ctx,
)

mdl = acl.mdl
rt = acl.rt

INVALID_HANDLE = 107017  # ACL_ERROR_RT_INVALID_HANDLE
CONTEXT_NULL = 107002  # ACL_ERROR_RT_CONTEXT_NULL
INVALID_DEVICE = 107001  # ACL_ERROR_RT_INVALID_DEVICEID
STREAM_MODEL = 107005  # ACL_ERROR_RT_STREAM_MODEL: the stream is not bound to the model
MODEL_CAPTURED = 107026  # ACL_ERROR_RT_MODEL_CAPTURED
NOT_CAPTURED = 107029  # ACL_ERROR_RT_STREAM_NOT_CAPTURED
TASK_GROUP_STATUS = 107033  # ACL_ERROR_STREAM_TASK_GROUP_STATUS
INSUFFICIENT_ARRAY = 107039  # ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
REPEAT_INITIALIZE = 100002  # ACL_ERROR_REPEAT_INITIALIZE
READ_FILE_FAILURE = 100003  # ACL_ERROR_READ_MODEL_FAILURE: the dump file cannot be read
DUMP_NOT_RUN = 100045  # ACL_ERROR_DUMP_NOT_RUN
NOT_SUPPORTED = ACL_ERROR_RT_FEATURE_NOT_SUPPORT

GLOBAL = 0
H2D = 1
SUM, EQUAL = 10, 13  # ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM / _EQUAL
FLOAT = 0  # ACL_FLOAT
TASK_DEFAULT, TASK_EVENT_RECORD, TASK_VALUE_WRITE = 0, 2, 5


# ---- resources a case makes, released by the runner -----------------------------------------


def _stream(ctx: Ctx) -> int:
    s, ret = rt.create_stream()
    assert ret == 0
    ctx.cleanup.append((rt.destroy_stream, s))
    return s


def _end_and_destroy(stream: int) -> None:
    model, ret = mdl.ri_capture_end(stream)
    if ret == 0:
        mdl.ri_destroy(model)


def _capturing(ctx: Ctx, stream: Optional[int] = None) -> Tuple[int, int]:
    """(stream, model): a capture begun on `stream` (a fresh one), ended and destroyed after."""
    s = _stream(ctx) if stream is None else stream
    assert mdl.ri_capture_begin(s, GLOBAL) == 0
    ctx.cleanup.append((_end_and_destroy, s))
    _, model, ret = mdl.ri_capture_get_info(s)
    assert ret == 0 and model != 0
    return s, model


def _model(ctx: Ctx, record: Optional[Callable[[int], None]] = None) -> int:
    """A model captured on a fresh stream: a fill of ctx.dev, then what `record` queues."""
    s = _stream(ctx)
    assert mdl.ri_capture_begin(s, GLOBAL) == 0
    assert rt.memset_async(ctx.dev, 64, 1, 64, s) == 0
    if record is not None:
        record(s)
    model, ret = mdl.ri_capture_end(s)
    assert ret == 0 and model != 0
    ctx.cleanup.append((mdl.ri_destroy, model))
    return model


def _tasks(ctx: Ctx) -> Tuple[int, List[int]]:
    """A model of three tasks (a fill, a value write, an event record) and the tasks."""

    def record(s: int) -> None:
        assert rt.value_write(ctx.dev + 64, 7, 0, s) == 0
        assert rt.record_event(ctx.event, s) == 0

    model = _model(ctx, record)
    streams, ret = mdl.ri_get_streams(model)
    assert ret == 0 and len(streams) == 1
    tasks, ret = mdl.ri_get_tasks_by_stream(streams[0])
    assert ret == 0 and len(tasks) == 3
    return model, tasks


def _group(ctx: Ctx) -> Tuple[int, int]:
    """(model, task group): a captured group of one fill."""
    grp: List[int] = []

    def record(s: int) -> None:
        assert mdl.ri_capture_task_grp_begin(s) == 0
        assert rt.memset_async(ctx.dev, 64, 2, 64, s) == 0
        handle, ret = mdl.ri_capture_task_grp_end(s)
        assert ret == 0
        grp.append(handle)

    return _model(ctx, record), grp[0]


def _built(ctx: Ctx, end: bool = False) -> Tuple[int, int]:
    """(model, stream): a model being built with a fresh stream bound to it."""
    s = _stream(ctx)
    model, ret = mdl.ri_build_begin(0)
    assert ret == 0
    ctx.cleanup.append((mdl.ri_destroy, model))
    assert mdl.ri_bind_stream(model, s, 0) == 0
    ctx.cleanup.append((lambda m: mdl.ri_unbind_stream(m, s), model))
    if end:
        assert mdl.ri_end_task(model, s) == 0
        assert mdl.ri_build_end(model, 0) == 0
    return model, s


def _cond(ctx: Ctx) -> Tuple[int, int, int]:
    """(stream, model, cond handle): a capture with a condition of its model."""
    s, model = _capturing(ctx)
    handle, ret = mdl.ri_cond_handle_create(model, 1, 0)
    assert ret == 0 and handle != 0
    return s, model, handle


def _branch(ctx: Ctx) -> Tuple[int, int]:
    """(side stream, branch model): an IF with one empty branch, added to a capture."""
    s, _, handle = _cond(ctx)
    branches, ret = mdl.ri_add_cond_task({"handle": handle, "type": 0, "size": 1}, s, 0)
    assert ret == 0 and len(branches) == 1
    side = _stream(ctx)
    return side, branches[0]


def _init_dump(ctx: Ctx) -> None:
    assert mdl.init_dump() == 0
    ctx.cleanup.append((lambda _: mdl.finalize_dump(), None))


def _dump_file(ctx: Ctx) -> str:
    fd, path = tempfile.mkstemp(suffix=".json", prefix="ascendless-dump-")
    with os.fdopen(fd, "w") as f:
        json.dump({"dump": {"dump_path": tempfile.gettempdir(), "dump_list": [{}], "dump_op_switch": "on"}}, f)
    ctx.cleanup.append((os.remove, path))
    return path


def _json_path(ctx: Ctx) -> str:
    fd, path = tempfile.mkstemp(suffix=".json", prefix="ascendless-model-")
    os.close(fd)
    ctx.cleanup.append((os.remove, path))
    return path


def _group_info(ctx: Ctx, filled: bool = True) -> int:
    info = rt.create_group_info()
    assert info != 0
    ctx.cleanup.append((rt.destroy_group_info, info))
    if filled:
        assert rt.get_all_group_info(info) == 0
    return info


def _label(ctx: Ctx) -> int:
    label, ret = rt.create_label()
    assert ret == 0 and label != 0
    ctx.cleanup.append((rt.destroy_label, label))
    return label


def _label_list(ctx: Ctx, n: int = 2) -> Tuple[List[int], int]:
    labels = [_label(ctx) for _ in range(n)]
    label_list, ret = rt.create_label_list(labels)
    assert ret == 0 and label_list != 0
    ctx.cleanup.append((rt.destroy_label_list, label_list))
    return labels, label_list


def _args(ctx: Ctx) -> int:
    """A kernel argument block (aclrtKernelArgsInit: it lives until the process ends)."""
    handle, ret = rt.kernel_args_init(0)
    assert ret == 0 and handle != 0
    return handle


def _u64(ctx: Ctx, value: int) -> int:
    """The host address of an 8-byte value in ctx.host (its last 8 bytes)."""
    addr = ctx.host + ctx.size - 8
    ctypes.c_uint64.from_address(addr).value = value
    return addr


def _in_thread(fn: Callable[[], Any]) -> Any:
    """`fn()` run on a new thread (one with no current device or context)."""
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def _random_info(ctx: Ctx, func_type: int = 1) -> dict:
    assert rt.memset(ctx.dev, 16, 0, 16) == 0
    return {
        "data_type": FLOAT, "func_type": func_type,
        "min": struct.pack("<f", 2.0), "max": struct.pack("<f", 5.0),
        "random_result_addr": ctx.dev + 4096, "random_counter_addr": ctx.dev,
        "random_seed": 42, "random_num": 64,
    }


def _that(pred: Callable[[Any, Ctx], bool]) -> Callable[[Any, Ctx], None]:
    """A check that `pred(result, ctx)` holds."""

    def check(result: Any, ctx: Ctx) -> None:
        assert pred(result, ctx), result

    return check


def _nonzero_first(result: Any, ctx: Ctx) -> None:
    assert result[0] != 0, result


def _kept(result: Any, ctx: Ctx, release: Callable[[int], Any]) -> None:
    """A created handle (first in `result`): non-zero, and released after the case."""
    _nonzero_first(result, ctx)
    ctx.cleanup.append((release, result[0]))


def _not_supported(name: str, valid: Callable[[Ctx], Any], bad: Callable[[Ctx], Any]) -> Case:
    """A function the host answers 207000 for any call (kernel binaries need an NPU)."""
    return Case(name, valid, bad, code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)


def _check_random(result: Any, ctx: Ctx) -> None:
    assert rt.synchronize_stream(ctx.stream) == 0
    assert rt.memcpy(ctx.host, 256, ctx.dev + 4096, 256, 2) == 0
    values = struct.unpack("<64f", ctypes.string_at(ctx.host, 256))
    assert all(2.0 <= v < 5.0 for v in values), values


def _check_reduce(result: Any, ctx: Ctx) -> None:
    assert rt.synchronize_stream(ctx.stream) == 0
    assert rt.memcpy(ctx.host, 16, ctx.dev, 16, 2) == 0
    assert struct.unpack("<4f", ctypes.string_at(ctx.host, 16)) == (3.0, 3.0, 3.0, 3.0)


def _reduce_valid(ctx: Ctx) -> int:
    ones = struct.pack("<4f", 1.0, 1.0, 1.0, 1.0)
    twos = struct.pack("<4f", 2.0, 2.0, 2.0, 2.0)
    ctypes.memmove(ctx.host, ones + twos, 32)
    assert rt.memcpy(ctx.dev, 32, ctx.host, 32, H2D) == 0
    return rt.reduce_async(ctx.dev, ctx.dev + 16, 16, SUM, FLOAT, ctx.stream, 0)


def _exchange_valid(ctx: Ctx) -> Any:
    previous, ret = mdl.ri_capture_thread_exchange_mode(1)
    assert ret == 0
    ctx.cleanup.append((mdl.ri_capture_thread_exchange_mode, previous))
    return mdl.ri_capture_thread_exchange_mode(1)


def _execute_async_check(result: Any, ctx: Ctx) -> None:
    assert rt.synchronize_stream(ctx.stream) == 0
    assert rt.memcpy(ctx.host, 64, ctx.dev, 64, 2) == 0
    assert ctypes.string_at(ctx.host, 64) == b"\x01" * 64


def _destroy_registered(ctx: Ctx) -> Any:
    model = _model(ctx)
    seen: List[Any] = []
    ret = mdl.ri_destroy_register_callback(model, seen.append, "data")
    ctx.cleanup.append((mdl.ri_destroy, model))
    return ret


def _unregister_valid(ctx: Ctx) -> Any:
    model = _model(ctx)

    def on_destroy(data: Any) -> None:
        raise AssertionError("unregistered: never called")

    assert mdl.ri_destroy_register_callback(model, on_destroy, None) == 0
    ret = mdl.ri_destroy_unregister_callback(model, on_destroy)
    ctx.cleanup.append((lambda m: mdl.ri_destroy_unregister_callback(m, on_destroy), model))
    return ret


CASES: List[Case] = [
    # ---- dump ----
    Case("mdl.init_dump", lambda c: (_init_dump(c), 0)[1], lambda c: mdl.init_dump(), code=REPEAT_INITIALIZE),
    Case("mdl.set_dump", lambda c: (_init_dump(c), mdl.set_dump(_dump_file(c)))[1],
         lambda c: mdl.set_dump(os.path.join(tempfile.gettempdir(), "ascendless-no-such-dump.json")),
         code=READ_FILE_FAILURE),
    Case("mdl.finalize_dump", lambda c: (mdl.init_dump(), mdl.finalize_dump())[1], lambda c: mdl.finalize_dump(),
         code=DUMP_NOT_RUN),
    # ---- capture ----
    Case("mdl.ri_capture_begin", lambda c: (mdl.ri_capture_begin(c.stream, GLOBAL),
                                            c.cleanup.append((_end_and_destroy, c.stream)))[0],
         lambda c: mdl.ri_capture_begin(_stream(c), 9), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("mdl.ri_capture_end",
         lambda c: (mdl.ri_capture_begin(c.stream, GLOBAL), rt.memset_async(c.dev, 64, 1, 64, c.stream),
                    mdl.ri_capture_end(c.stream))[2],
         lambda c: mdl.ri_capture_end(c.stream), code=NOT_CAPTURED,
         check=lambda r, c: _kept(r, c, mdl.ri_destroy)),
    Case("mdl.ri_capture_get_info", lambda c: mdl.ri_capture_get_info(c.stream),
         lambda c: mdl.ri_capture_get_info(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r == (0, 0, 0))),
    Case("mdl.ri_capture_thread_exchange_mode", _exchange_valid,
         lambda c: mdl.ri_capture_thread_exchange_mode(9), code=ACL_ERROR_RT_PARAM_INVALID,
         check=_that(lambda r, c: r[0] == 1)),
    Case("mdl.ri_capture_task_grp_begin", lambda c: mdl.ri_capture_task_grp_begin(_capturing(c, c.stream)[0]),
         lambda c: mdl.ri_capture_task_grp_begin(c.stream), code=TASK_GROUP_STATUS),
    Case("mdl.ri_capture_task_grp_end",
         lambda c: (mdl.ri_capture_task_grp_begin(_capturing(c, c.stream)[0]),
                    rt.memset_async(c.dev, 64, 1, 64, c.stream),
                    mdl.ri_capture_task_grp_end(c.stream))[2],
         lambda c: mdl.ri_capture_task_grp_end(c.stream), code=TASK_GROUP_STATUS, check=_nonzero_first),
    Case("mdl.ri_capture_task_update_begin",
         lambda c: (lambda s, g: (mdl.ri_capture_task_update_begin(s, g),
                                  c.cleanup.append((mdl.ri_capture_task_update_end, s)))[0])(_stream(c), _group(c)[1]),
         lambda c: mdl.ri_capture_task_update_begin(_stream(c), BAD_HANDLE), code=INVALID_HANDLE),
    Case("mdl.ri_capture_task_update_end",
         lambda c: (lambda s, g: (mdl.ri_capture_task_update_begin(s, g), rt.memset_async(c.dev, 64, 5, 64, s),
                                  mdl.ri_capture_task_update_end(s))[2])(_stream(c), _group(c)[1]),
         lambda c: mdl.ri_capture_task_update_end(c.stream), code=TASK_GROUP_STATUS),
    Case("mdl.ri_capture_to_model_ri_begin",
         lambda c: (lambda side, b: (mdl.ri_capture_to_model_ri_begin(side, b, GLOBAL),
                                     c.cleanup.append((mdl.ri_capture_end, side)))[0])(*_branch(c)),
         lambda c: mdl.ri_capture_to_model_ri_begin(_stream(c), _model(c), GLOBAL), code=MODEL_CAPTURED),
    # ---- running, destroying ----
    Case("mdl.ri_execute_async", lambda c: mdl.ri_execute_async(_model(c), c.stream),
         lambda c: mdl.ri_execute_async(BAD_HANDLE, c.stream), code=INVALID_HANDLE, check=_execute_async_check),
    Case("mdl.ri_execute", lambda c: mdl.ri_execute(_model(c), 10000), lambda c: mdl.ri_execute(_model(c), 0),
         code=ACL_ERROR_RT_PARAM_INVALID),
    Case("mdl.ri_abort", lambda c: mdl.ri_abort(_model(c)), lambda c: mdl.ri_abort(BAD_HANDLE), code=INVALID_HANDLE),
    Case("mdl.ri_destroy", lambda c: mdl.ri_destroy(_model(c)),
         lambda c: (lambda m: (mdl.ri_destroy(m), mdl.ri_destroy(m))[1])(_model(c)), code=INVALID_HANDLE),
    Case("mdl.ri_destroy_register_callback", _destroy_registered,
         lambda c: mdl.ri_destroy_register_callback(BAD_HANDLE, lambda d: None, None), code=INVALID_HANDLE),
    Case("mdl.ri_destroy_unregister_callback", _unregister_valid,
         lambda c: mdl.ri_destroy_unregister_callback(_model(c), lambda d: None), code=ACL_ERROR_RT_PARAM_INVALID),
    # ---- built models ----
    Case("mdl.ri_build_begin",
         lambda c: (lambda r: (c.cleanup.append((mdl.ri_destroy, r[0])), r)[1])(mdl.ri_build_begin(0)),
         lambda c: mdl.ri_build_begin(1), code=ACL_ERROR_RT_PARAM_INVALID, check=_nonzero_first),
    Case("mdl.ri_bind_stream",
         lambda c: (lambda s, m: (mdl.ri_bind_stream(m[0], s, 0),
                                  c.cleanup.append((lambda x: mdl.ri_unbind_stream(x, s), m[0])))[0])(
             _stream(c), (lambda r: (c.cleanup.append((mdl.ri_destroy, r[0])), r)[1])(mdl.ri_build_begin(0))),
         lambda c: mdl.ri_bind_stream(BAD_HANDLE, c.stream, 0), code=INVALID_HANDLE),
    Case("mdl.ri_end_task", lambda c: mdl.ri_end_task(*_built(c)), lambda c: mdl.ri_end_task(_built(c)[0], c.stream),
         code=STREAM_MODEL),
    Case("mdl.ri_build_end", lambda c: mdl.ri_build_end(_built(c)[0], 0),
         lambda c: mdl.ri_build_end(_built(c)[0], c.host), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("mdl.ri_unbind_stream", lambda c: mdl.ri_unbind_stream(*_built(c)),
         lambda c: mdl.ri_unbind_stream(_built(c)[0], c.stream), code=STREAM_MODEL),
    Case("rt.persistent_task_clean", lambda c: rt.persistent_task_clean(_built(c, end=True)[1]),
         lambda c: rt.persistent_task_clean(BAD_HANDLE), code=INVALID_HANDLE),
    # ---- names, ids, prints ----
    Case("mdl.ri_set_name", lambda c: (lambda m: (mdl.ri_set_name(m, "case"), mdl.ri_get_name(m, 8)))(_model(c)),
         lambda c: mdl.ri_set_name(BAD_HANDLE, "case"), code=INVALID_HANDLE,
         valid_code=lambda r: r == (0, ("case", 0))),
    Case("mdl.ri_get_name", lambda c: (lambda m: (mdl.ri_set_name(m, "named"), mdl.ri_get_name(m, 6))[1])(_model(c)),
         lambda c: (lambda m: (mdl.ri_set_name(m, "named"), mdl.ri_get_name(m, 5))[1])(_model(c)),
         code=ACL_ERROR_RT_PARAM_INVALID, check=_that(lambda r, c: r[0] == "named")),
    Case("mdl.ri_get_id", lambda c: mdl.ri_get_id(_model(c)), lambda c: mdl.ri_get_id(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r[0] != mdl.ri_get_id(_model(c))[0])),
    Case("mdl.ri_debug_print", lambda c: mdl.ri_debug_print(_model(c)), lambda c: mdl.ri_debug_print(BAD_HANDLE),
         code=INVALID_HANDLE),
    Case("mdl.ri_debug_json_print", lambda c: mdl.ri_debug_json_print(_tasks(c)[0], _json_path(c), 1),
         lambda c: mdl.ri_debug_json_print(_model(c), _json_path(c), 2), code=ACL_ERROR_RT_PARAM_INVALID),
    # ---- streams and tasks ----
    Case("mdl.ri_get_streams", lambda c: mdl.ri_get_streams(_tasks(c)[0]),
         lambda c: mdl.ri_get_streams(_tasks(c)[0], 0), code=INSUFFICIENT_ARRAY,
         check=_that(lambda r, c: len(r[0]) == 1 and r[0][0] != 0)),
    Case("mdl.ri_get_tasks_by_stream", lambda c: mdl.ri_get_tasks_by_stream(mdl.ri_get_streams(_tasks(c)[0])[0][0]),
         lambda c: mdl.ri_get_tasks_by_stream(mdl.ri_get_streams(_tasks(c)[0])[0][0], 2), code=INSUFFICIENT_ARRAY,
         check=_that(lambda r, c: len(r[0]) == 3)),
    Case("mdl.ri_task_get_type", lambda c: [mdl.ri_task_get_type(t)[0] for t in _tasks(c)[1]] and
         mdl.ri_task_get_type(_tasks(c)[1][2]),
         lambda c: mdl.ri_task_get_type(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r[0] == TASK_EVENT_RECORD)),
    Case("mdl.ri_task_get_seq_id", lambda c: mdl.ri_task_get_seq_id(_tasks(c)[1][1]),
         lambda c: mdl.ri_task_get_seq_id(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r[0] == 1)),
    Case("mdl.ri_task_get_params", lambda c: mdl.ri_task_get_params(_tasks(c)[1][1]),
         lambda c: mdl.ri_task_get_params(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r[0]["type"] == TASK_VALUE_WRITE
                             and r[0]["value_write_task_params"] == {"dev_addr": c.dev + 64, "value": 7})),
    Case("mdl.ri_task_set_params",
         lambda c: mdl.ri_task_set_params(_tasks(c)[1][1], {"type": TASK_VALUE_WRITE,
                                                           "value_write_task_params": {"dev_addr": c.dev, "value": 9}}),
         lambda c: mdl.ri_task_set_params(_tasks(c)[1][1], {"type": 3}), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("mdl.ri_update", lambda c: mdl.ri_update(_model(c)), lambda c: mdl.ri_update(BAD_HANDLE), code=INVALID_HANDLE),
    Case("mdl.ri_task_disable", lambda c: mdl.ri_task_disable(_tasks(c)[1][1]),
         lambda c: mdl.ri_task_disable(_tasks(c)[1][0]), code=ACL_ERROR_RT_PARAM_INVALID),
    _not_supported("mdl.ri_kernel_task_get_attribute", lambda c: mdl.ri_kernel_task_get_attribute(_tasks(c)[1][0], 1),
                   lambda c: mdl.ri_kernel_task_get_attribute(BAD_HANDLE, 1)),
    # ---- conditional tasks ----
    Case("mdl.ri_cond_handle_create", lambda c: mdl.ri_cond_handle_create(_capturing(c)[1], 1, 0),
         lambda c: mdl.ri_cond_handle_create(BAD_HANDLE, 1, 0), code=INVALID_HANDLE, check=_nonzero_first),
    Case("mdl.ri_cond_handle_get_cond_ptr", lambda c: mdl.ri_cond_handle_get_cond_ptr(_cond(c)[2]),
         lambda c: mdl.ri_cond_handle_get_cond_ptr(BAD_HANDLE), code=INVALID_HANDLE,
         check=_that(lambda r, c: r[0] != 0 and r[0] % 8 == 0)),
    Case("mdl.ri_add_cond_task",
         lambda c: (lambda s, m, h: mdl.ri_add_cond_task({"handle": h, "type": 2, "size": 3}, s, 0))(*_cond(c)),
         lambda c: mdl.ri_add_cond_task({"handle": BAD_HANDLE, "type": 0, "size": 1}, _capturing(c)[0], 0),
         code=INVALID_HANDLE,
         check=_that(lambda r, c: len(r[0]) == 3 and all(r[0]))),
    # ---- groups ----
    Case("rt.set_group", lambda c: rt.set_group(0), lambda c: rt.set_group(1), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("rt.get_group_count", lambda c: rt.get_group_count(), lambda c: _in_thread(rt.get_group_count),
         code=CONTEXT_NULL, check=_that(lambda r, c: r[0] == 1)),
    Case("rt.create_group_info", lambda c: (lambda i: (c.cleanup.append((rt.destroy_group_info, i)), i)[1])(
        rt.create_group_info()),
         lambda c: (lambda i: (c.cleanup.append((rt.destroy_group_info, i)), i)[1])(rt.create_group_info()),
         code=lambda r: r != 0, valid_code=lambda r: r != 0),
    Case("rt.destroy_group_info", lambda c: rt.destroy_group_info(rt.create_group_info()),
         lambda c: rt.destroy_group_info(BAD_HANDLE), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("rt.get_all_group_info", lambda c: rt.get_all_group_info(_group_info(c, filled=False)),
         lambda c: rt.get_all_group_info(BAD_HANDLE), code=ACL_ERROR_RT_PARAM_INVALID),
    Case("rt.get_group_info_detail", lambda c: rt.get_group_info_detail(_group_info(c), 0, 0, c.host, 4),
         lambda c: rt.get_group_info_detail(_group_info(c), 0, 0, c.host, 2), code=ACL_ERROR_RT_PARAM_INVALID,
         check=_that(lambda r, c: r[0] == 4)),
    # ---- labels ----
    Case("rt.create_label", lambda c: (lambda r: (c.cleanup.append((rt.destroy_label, r[0])), r)[1])(rt.create_label()),
         lambda c: (lambda r: (c.cleanup.append((rt.destroy_label, r[0])), r)[1])(rt.create_label()),
         code=lambda r: r[1] == 0 and r[0] != 0, check=_nonzero_first),
    Case("rt.destroy_label", lambda c: rt.destroy_label(rt.create_label()[0]),
         lambda c: (lambda x: (rt.destroy_label(x), rt.destroy_label(x))[1])(rt.create_label()[0]),
         code=INVALID_HANDLE),
    Case("rt.create_label_list", lambda c: rt.create_label_list([_label(c), _label(c)]),
         lambda c: rt.create_label_list([_label(c), BAD_HANDLE]), code=INVALID_HANDLE,
         check=lambda r, c: _kept(r, c, rt.destroy_label_list)),
    Case("rt.destroy_label_list", lambda c: rt.destroy_label_list(rt.create_label_list([_label(c)])[0]),
         lambda c: rt.destroy_label_list(BAD_HANDLE), code=INVALID_HANDLE),
    Case("rt.set_label", lambda c: rt.set_label(_label(c), _capturing(c)[0]),
         lambda c: rt.set_label(_label(c), _stream(c)), code=NOT_SUPPORTED),
    Case("rt.switch_label_by_index", lambda c: rt.switch_label_by_index(c.dev, 2, _label_list(c)[1], _capturing(c)[0]),
         lambda c: rt.switch_label_by_index(c.dev, 2, _label_list(c)[1], _stream(c)), code=NOT_SUPPORTED),
    # ---- kernel argument blocks ----
    Case("rt.kernel_args_get_handle_mem_size", lambda c: rt.kernel_args_get_handle_mem_size(0),
         lambda c: rt.kernel_args_get_handle_mem_size(BAD_HANDLE), code=lambda r: r == (64, 0),
         check=lambda r, c: (r[0] == 64)),
    Case("rt.kernel_args_get_mem_size", lambda c: rt.kernel_args_get_mem_size(0, 13),
         lambda c: rt.kernel_args_get_mem_size(BAD_HANDLE, 16), code=lambda r: r == (16, 0),
         check=_that(lambda r, c: r[0] == 16)),
    Case("rt.kernel_args_init", lambda c: rt.kernel_args_init(0), lambda c: rt.kernel_args_init(BAD_HANDLE),
         code=lambda r: r[1] == 0 and r[0] != 0, check=_nonzero_first),
    Case("rt.kernel_args_init_by_user_mem", lambda c: rt.kernel_args_init_by_user_mem(0, c.host, c.host + 4096, 64),
         lambda c: rt.kernel_args_init_by_user_mem(0, 0, c.host + 4096, 64), code=ACL_ERROR_INVALID_PARAM),
    Case("rt.kernel_args_append", lambda c: rt.kernel_args_append(_args(c), _u64(c, 5), 8),
         lambda c: (lambda a: (rt.kernel_args_finalize(a), rt.kernel_args_append(a, _u64(c, 5), 8))[1])(_args(c)),
         code=ACL_ERROR_RT_PARAM_INVALID, check=_nonzero_first),
    Case("rt.kernel_args_append_place_holder", lambda c: rt.kernel_args_append_place_holder(_args(c)),
         lambda c: (lambda a: (rt.kernel_args_finalize(a), rt.kernel_args_append_place_holder(a))[1])(_args(c)),
         code=ACL_ERROR_RT_PARAM_INVALID, check=_nonzero_first),
    Case("rt.kernel_args_get_place_holder_buffer",
         lambda c: (lambda a: rt.kernel_args_get_place_holder_buffer(a, rt.kernel_args_append_place_holder(a)[0], 16))(
             _args(c)),
         lambda c: (lambda a: rt.kernel_args_get_place_holder_buffer(
             a, rt.kernel_args_append(a, _u64(c, 1), 8)[0], 16))(_args(c)),
         code=ACL_ERROR_RT_PARAM_INVALID, check=_nonzero_first),
    Case("rt.kernel_args_para_update",
         lambda c: (lambda a: rt.kernel_args_para_update(a, rt.kernel_args_append(a, _u64(c, 1), 8)[0], _u64(c, 2), 8))(
             _args(c)),
         lambda c: (lambda a: rt.kernel_args_para_update(a, rt.kernel_args_append_place_holder(a)[0], _u64(c, 2), 8))(
             _args(c)),
         code=ACL_ERROR_RT_PARAM_INVALID),
    # argsHandle may name caller memory (aclrtKernelArgsInitByUserMem), so an unknown one is a
    # bad value (107000), not a stale handle.
    Case("rt.kernel_args_finalize", lambda c: rt.kernel_args_finalize(_args(c)),
         lambda c: rt.kernel_args_finalize(BAD_HANDLE), code=ACL_ERROR_RT_PARAM_INVALID),
    # ---- random numbers, reduce, task updates ----
    Case("rt.random_num_async", lambda c: rt.random_num_async(_random_info(c), c.stream),
         lambda c: rt.random_num_async(_random_info(c, func_type=9), c.stream), code=ACL_ERROR_RT_PARAM_INVALID,
         check=_check_random),
    Case("rt.reduce_async", _reduce_valid, lambda c: rt.reduce_async(c.dev, c.dev + 16, 16, EQUAL, FLOAT, c.stream, 0),
         code=NOT_SUPPORTED, check=_check_reduce),
    _not_supported("rt.task_update_async",
                   lambda c: rt.task_update_async(c.stream, 0, {"id": 1, "src_addr": c.dev, "size": 16}, _stream(c)),
                   lambda c: rt.task_update_async(BAD_HANDLE, 0, {"id": 2}, BAD_HANDLE)),
    # ---- devices, versions, last task ----
    Case("rt.device_task_abort", lambda c: rt.device_task_abort(0, 1000), lambda c: rt.device_task_abort(999, 1000),
         code=INVALID_DEVICE),
    Case("rt.get_version", lambda c: rt.get_version(), lambda c: rt.get_version(),
         code=lambda r: r[3] == 0 and r[:3] == rt.get_version()[:3],
         check=_that(lambda r, c: r[0] >= 1)),
    Case("rt.get_thread_last_task_id",
         lambda c: (rt.memset_async(c.dev, 64, 1, 64, c.stream), rt.get_thread_last_task_id())[1],
         lambda c: (rt.memset_async(c.dev, 64, 1, 64, c.stream), rt.get_thread_last_task_id())[1],
         code=lambda r: r[1] == 0, check=_that(lambda r, c: r[0] >= 0)),
    # ---- profiling, snapshots, captured-task information: need an NPU (207000) ----
    _not_supported("rt.prof_trace", lambda c: rt.prof_trace(c.host, 8, c.stream),
                   lambda c: rt.prof_trace(0, -1, c.stream)),
    _not_supported("rt.snap_shot_process_lock", lambda c: rt.snap_shot_process_lock(os.getpid(), 0),
                   lambda c: rt.snap_shot_process_lock(-1, 0)),
    _not_supported("rt.snap_shot_process_unlock", lambda c: rt.snap_shot_process_unlock(os.getpid(), 0),
                   lambda c: rt.snap_shot_process_unlock(-1, 0)),
    _not_supported("rt.cache_last_task_op_info", lambda c: rt.cache_last_task_op_info(c.host, 16),
                   lambda c: rt.cache_last_task_op_info(0, 0)),
    _not_supported("rt.cache_last_task_extend_info", lambda c: rt.cache_last_task_extend_info("info", 4),
                   lambda c: rt.cache_last_task_extend_info(None, 0)),
    # ---- kernel binaries and functions: need an NPU (207000 for every call) ----
    Case("rt.create_binary", lambda c: rt.create_binary(c.host, 16), lambda c: rt.create_binary(0, 0),
         code=lambda r: r == 0, valid_code=lambda r: r == 0,
         check=_that(lambda r, c: "not supported" in (acl.get_recent_err_msg() or ""))),
    _not_supported("rt.destroy_binary", lambda c: rt.destroy_binary(BAD_HANDLE), lambda c: rt.destroy_binary(0)),
    _not_supported("rt.binary_load", lambda c: rt.binary_load(BAD_HANDLE), lambda c: rt.binary_load(0)),
    _not_supported("rt.binary_un_load", lambda c: rt.binary_un_load(BAD_HANDLE), lambda c: rt.binary_un_load(0)),
    _not_supported("rt.binary_load_from_file",
                   lambda c: rt.binary_load_from_file(os.path.join(tempfile.gettempdir(), "kernel.o"),
                                                      [{"type": 1, "value": 0}]),
                   lambda c: rt.binary_load_from_file(None, None)),
    _not_supported("rt.binary_load_from_data", lambda c: rt.binary_load_from_data(c.host, 64, [(1, 0)]),
                   lambda c: rt.binary_load_from_data(0, 0, None)),
    _not_supported("rt.binary_set_exception_callback",
                   lambda c: rt.binary_set_exception_callback(BAD_HANDLE, lambda info, data: None, "data"),
                   lambda c: rt.binary_set_exception_callback(0, None)),
    _not_supported("rt.binary_get_function", lambda c: rt.binary_get_function(BAD_HANDLE, "kernel"),
                   lambda c: rt.binary_get_function(0, None)),
    _not_supported("rt.binary_get_function_by_entry", lambda c: rt.binary_get_function_by_entry(BAD_HANDLE, 0),
                   lambda c: rt.binary_get_function_by_entry(0, 0)),
    _not_supported("rt.binary_get_dev_address", lambda c: rt.binary_get_dev_address(BAD_HANDLE),
                   lambda c: rt.binary_get_dev_address(0)),
    _not_supported("rt.binary_get_global", lambda c: rt.binary_get_global(BAD_HANDLE, "g"),
                   lambda c: rt.binary_get_global(0, None)),
    _not_supported("rt.register_cpu_func", lambda c: rt.register_cpu_func(BAD_HANDLE, "f", "k"),
                   lambda c: rt.register_cpu_func(0, None, None)),
    _not_supported("rt.get_func_by_symbol", lambda c: rt.get_func_by_symbol(c.host),
                   lambda c: rt.get_func_by_symbol(0)),
    _not_supported("rt.get_function_addr", lambda c: rt.get_function_addr(BAD_HANDLE),
                   lambda c: rt.get_function_addr(0)),
    _not_supported("rt.get_function_size", lambda c: rt.get_function_size(BAD_HANDLE),
                   lambda c: rt.get_function_size(0)),
    _not_supported("rt.get_function_name", lambda c: rt.get_function_name(BAD_HANDLE, 64),
                   lambda c: rt.get_function_name(0, 0)),
    _not_supported("rt.get_function_attribute", lambda c: rt.get_function_attribute(BAD_HANDLE, 1),
                   lambda c: rt.get_function_attribute(0, 99)),
    _not_supported("rt.function_get_binary", lambda c: rt.function_get_binary(BAD_HANDLE),
                   lambda c: rt.function_get_binary(0)),
    _not_supported("rt.function_get_param_count", lambda c: rt.function_get_param_count(c.host),
                   lambda c: rt.function_get_param_count(0)),
    _not_supported("rt.function_get_param_info", lambda c: rt.function_get_param_info(c.host, 0),
                   lambda c: rt.function_get_param_info(0, 99)),
    _not_supported("rt.function_get_avail_dyn_ubuf_per_block",
                   lambda c: rt.function_get_avail_dyn_ubuf_per_block(c.host, 0),
                   lambda c: rt.function_get_avail_dyn_ubuf_per_block(0, 1)),
    _not_supported("rt.get_args_from_exception_info", lambda c: rt.get_args_from_exception_info(c.host),
                   lambda c: rt.get_args_from_exception_info(0)),
    _not_supported("rt.get_func_handle_from_exception_info", lambda c: rt.get_func_handle_from_exception_info(c.host),
                   lambda c: rt.get_func_handle_from_exception_info(0)),
    # ---- kernel launches: need an NPU (207000) ----
    _not_supported("rt.launch_kernel", lambda c: rt.launch_kernel(BAD_HANDLE, 1, c.host, 64, c.stream),
                   lambda c: rt.launch_kernel(0, 0, 0, 0, c.stream)),
    _not_supported("rt.launch_kernel_with_config",
                   lambda c: rt.launch_kernel_with_config(BAD_HANDLE, 1, c.stream, [{"id": 1, "value": 1}], _args(c)),
                   lambda c: rt.launch_kernel_with_config(0, 0, c.stream, None, 0)),
    _not_supported("rt.launch_kernel_v2",
                   lambda c: rt.launch_kernel_v2(BAD_HANDLE, 1, c.host, 64, [(6, 100)], c.stream),
                   lambda c: rt.launch_kernel_v2(0, 0, 0, 0, None, c.stream)),
    _not_supported("rt.launch_kernel_with_host_args",
                   lambda c: rt.launch_kernel_with_host_args(BAD_HANDLE, 1, c.stream, None, c.host, 64,
                                                             [{"addr_offset": 0, "data_offset": 16}]),
                   lambda c: rt.launch_kernel_with_host_args(0, 0, c.stream, None, 0, 0, None)),
    _not_supported("rt.launch_kernel_with_args_array",
                   lambda c: rt.launch_kernel_with_args_array(c.host, 1, c.stream, None, [c.dev, c.dev + 64]),
                   lambda c: rt.launch_kernel_with_args_array(0, 0, c.stream, None, None)),
    _not_supported("rt.launch_simt_kernel_with_args_array",
                   lambda c: rt.launch_simt_kernel_with_args_array(c.host, (1, 1, 1), (32, 1, 1), 0, c.stream,
                                                                   None, [c.dev]),
                   lambda c: rt.launch_simt_kernel_with_args_array(0, (0, 0, 0), (0, 0, 0), 0, c.stream, None, None)),
    _not_supported("rt.launch_simt_kernel_with_host_args",
                   lambda c: rt.launch_simt_kernel_with_host_args(c.host, (1, 1, 1), {"x": 32}, 0, c.stream,
                                                                  [{"id": 1, "value": 0}], c.host, 64, [(0, 16)]),
                   lambda c: rt.launch_simt_kernel_with_host_args(0, (0, 0, 0), (0, 0, 0), 0, c.stream, None, 0, 0)),
]
