"""Call cases (pyacl_cases.py) of the profiling family, for test_every_function.py: acl.prof
(`aclprof*`), acl.dump (`acldump*`), ``acl.op_start_dump_args`` / ``op_stop_dump_args`` and the
allocators (``acl.rt.allocator_*``).

The profiling session, the dump configuration and the msproftx stack are per process, so each
case that needs one makes it (``acl.prof.init`` into a fresh directory, ``acl.mdl.init_dump``
with a file of its own) and registers its end in ``ctx.cleanup``. Subscription records come
from a real run: a model of two memsets captured on the context's stream, subscribed, run, and
its pipe read to the end. Codes are docs/compatibility.md's ("Profiling", "Dump", "AscendCL
allocators") and docs/profiling.md's.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Callable, List

import acl
from pyacl_cases import ACL_ERROR_INVALID_PARAM, BAD_HANDLE, Case, Ctx

prof = acl.prof
dump = acl.dump
rt = acl.rt

INVALID_PARAM = ACL_ERROR_INVALID_PARAM  # 100000
REPEAT_INITIALIZE = 100002  # ACL_ERROR_REPEAT_INITIALIZE
INVALID_PROFILING_CONFIG = 100010  # ACL_ERROR_INVALID_PROFILING_CONFIG
INVALID_MODEL_ID = 100011  # ACL_ERROR_INVALID_MODEL_ID
PROF_ALREADY_RUN = 100042  # ACL_ERROR_PROF_ALREADY_RUN
PROF_NOT_RUN = 100043  # ACL_ERROR_PROF_NOT_RUN
DUMP_NOT_RUN = 100045  # ACL_ERROR_DUMP_NOT_RUN
REPEAT_SUBSCRIBE = 148046  # ACL_ERROR_PROF_REPEAT_SUBSCRIBE
INVALID_HANDLE = 107017  # ACL_ERROR_RT_INVALID_HANDLE: a handle no create call gave out

ACL_PROF_ACL_API = 0x0001
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_MSPROFTX = 0x0080
ACL_AICORE_NONE = 0xFF
ACL_SUBSCRIBE_OP = 0
ACL_SUBSCRIBE_NONE = 0xFF
ACL_SUBSCRIBE_ATTRI_THREADID = 0
ACL_STEP_START, ACL_STEP_END = 0, 1
OP_DESC_SIZE = 80  # the vendor's ProfOpDesc
ACL_OP_DUMP_OP_AICORE_ARGS = 1
AIC_ERR_BRIEF_DUMP, DATA_DUMP, OVERFLOW_DUMP = 1, 4, 5

CASES: List[Case] = []


def case(
    name: str, valid: Callable[[Ctx], Any], bad: Callable[[Ctx], Any], code: Any = INVALID_PARAM, **kw: Any
) -> None:
    CASES.append(Case(name, valid, bad, code, **kw))


def is_none(result: Any) -> bool:
    return result is None


def nonzero(result: Any) -> bool:
    return isinstance(result, int) and result != 0


def zero(result: Any) -> bool:
    return result == 0


def holds(predicate: Callable[[Any, Ctx], bool]) -> Callable[[Any, Ctx], None]:
    def check(result: Any, ctx: Ctx) -> None:
        assert predicate(result, ctx), result

    return check


def in_thread(fn: Callable[[], Any]) -> Any:
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def later(ctx: Ctx, fn: Callable[[], Any]) -> None:
    """`fn()` among the case's releases."""
    ctx.cleanup.append((lambda _: fn(), None))


def scratch(ctx: Ctx) -> str:
    path = tempfile.mkdtemp(prefix="acl-prof-case-")
    later(ctx, lambda: shutil.rmtree(path, ignore_errors=True))
    return path


# ---- profiling sessions ---------------------------------------------------------------------


def session(ctx: Ctx) -> str:
    """``acl.prof.init`` into a fresh directory, finalized after the case."""
    path = scratch(ctx)
    assert prof.init(path) == 0, acl.get_recent_err_msg()
    later(ctx, prof.finalize)  # 100043 if the case finalized already
    return path


ALL_TYPES = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX


def config(ctx: Ctx, types: int = ALL_TYPES) -> int:
    cfg = prof.create_config([ctx.device], 0, 0, types)
    assert cfg != 0, acl.get_recent_err_msg()
    ctx.cleanup.append((prof.destroy_config, cfg))
    return cfg


def started(ctx: Ctx) -> int:
    """A started session recording task time and msproftx; its configuration."""
    session(ctx)
    cfg = config(ctx)
    assert prof.start(cfg) == 0, acl.get_recent_err_msg()
    return cfg


def stamp(ctx: Ctx, message: str = "calls_profiling") -> int:
    """A stamp with `message`, in a started msproftx session."""
    started(ctx)
    s = prof.create_stamp()
    assert s != 0, acl.get_recent_err_msg()
    ctx.cleanup.append((prof.destroy_stamp, s))
    assert prof.set_stamp_trace_message(s, message, len(message)) == 0
    _stamps[:] = [s]
    return s


_stamps: List[int] = []  # the valid call's stamp, for its bad call


def pushed(ctx: Ctx) -> int:
    s = stamp(ctx)
    assert prof.push(s) == 0
    return s


def range_started(ctx: Ctx) -> int:
    range_id, ret = prof.range_start(stamp(ctx))
    assert ret == 0 and range_id != 0
    return range_id


def tensor_attr(ctx: Ctx, version: int = 1) -> Any:
    name = prof.str2_id("calls_profiling.Add")
    return {
        "version": version,
        "messageType": 0,
        "tensorInfo": {
            "opNameId": name, "opTypeId": name, "kernelType": 0, "blockNums": 8, "stream": ctx.stream,
            "tensors": [{"type": 0, "format": 2, "dataType": 0, "shape": [4, 2]}],
        },
    }


def step(ctx: Ctx) -> int:
    s = prof.create_step_info()
    assert s != 0
    ctx.cleanup.append((prof.destroy_step_info, s))
    return s


# ---- model subscriptions and their records --------------------------------------------------


@dataclass
class Model:
    handle: int
    id: int


def model(ctx: Ctx) -> Model:
    """A model of two memsets, captured on the context's stream."""
    assert acl.mdl.ri_capture_begin(ctx.stream, 0) == 0, acl.get_recent_err_msg()
    assert rt.memset_async(ctx.dev, ctx.size, 1, 64, ctx.stream) == 0
    assert rt.memset_async(ctx.dev, ctx.size, 2, 64, ctx.stream) == 0
    handle, ret = acl.mdl.ri_capture_end(ctx.stream)
    assert ret == 0 and handle != 0, acl.get_recent_err_msg()
    ctx.cleanup.append((acl.mdl.ri_destroy, handle))
    model_id, ret = acl.mdl.ri_get_id(handle)
    assert ret == 0
    return Model(handle, model_id)


class Pipe:
    """A pipe whose write end a subscription configuration takes (the runtime closes it at the
    unsubscribe; Python closes it only if no subscription took it)."""

    def __init__(self, ctx: Ctx) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.cell = ctypes.c_int(self.write_fd)
        self.taken = False
        ctx.cleanup.append((lambda _: self.close(), None))

    @property
    def fd(self) -> int:
        """The address of the write end's descriptor, the C ``fd`` argument."""
        return ctypes.addressof(self.cell)

    def read_all(self) -> bytes:
        data = b""
        while True:
            chunk = os.read(self.read_fd, 4096)
            if not chunk:
                return data
            data += chunk

    def close(self) -> None:
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1
        if not self.taken and self.write_fd >= 0:
            os.close(self.write_fd)
        self.write_fd = -1


def subscribe_config(ctx: Ctx, pipe: Pipe) -> int:
    cfg = prof.create_subscribe_config(1, ACL_AICORE_NONE, pipe.fd)
    assert cfg != 0, acl.get_recent_err_msg()
    ctx.cleanup.append((prof.destroy_subscribe_config, cfg))
    return cfg


def subscribed(ctx: Ctx) -> Any:
    """A model subscribed into a pipe: (model, pipe, config)."""
    m = model(ctx)
    pipe = Pipe(ctx)
    cfg = subscribe_config(ctx, pipe)
    assert prof.model_subscribe(m.id, cfg) == 0, acl.get_recent_err_msg()
    pipe.taken = True
    later(ctx, lambda: prof.model_unsubscribe(m.id))  # 100011 once unsubscribed
    return m, pipe, cfg


@dataclass
class Records:
    buffer: Any  # keeps the bytes alive
    address: int
    length: int
    model_id: int


def records(ctx: Ctx) -> Records:
    """The records of one run of a subscribed model (two tasks), read from its pipe."""
    m, pipe, _ = subscribed(ctx)
    assert acl.mdl.ri_execute_async(m.handle, ctx.stream) == 0
    assert rt.synchronize_stream(ctx.stream) == 0
    assert prof.model_unsubscribe(m.id) == 0
    data = pipe.read_all()
    assert len(data) == 2 * OP_DESC_SIZE, len(data)
    buf = ctypes.create_string_buffer(data, len(data))
    return Records(buf, ctypes.addressof(buf), len(data), m.id)


def op_type_len(r: Records, index: int = 0) -> int:
    n, ret = prof.get_op_type_len(r.address, r.length, index)
    assert ret == 0
    return n


def op_name_len(r: Records, index: int = 0) -> int:
    n, ret = prof.get_op_name_len(r.address, r.length, index)
    assert ret == 0
    return n


def _type_twice(ctx: Ctx) -> Any:
    r = records(ctx)
    n = op_type_len(r)
    first = prof.get_op_type(r.address, r.length, 0, n)
    assert first == ("memset", 0), first
    return r, n


def _name_twice(ctx: Ctx) -> Any:
    r = records(ctx)
    n = op_name_len(r)
    first = prof.get_op_name(r.address, r.length, 0, n)
    assert first == ("model%d/task0" % r.model_id, 0), first
    return r, n


def _valid_times(ctx: Ctx) -> Any:
    r = records(ctx)
    start = prof.get_op_start(r.address, r.length, 0)
    end = prof.get_op_end(r.address, r.length, 0)
    assert start > 1_600_000_000_000_000 and end >= start, (start, end)
    assert prof.get_op_duration(r.address, r.length, 0) == end - start
    return r


_records: List[Records] = []  # the records of the valid call, for its bad call


def _keep(r: Records) -> Records:
    _records[:] = [r]
    return r


# ---- prof: the session ------------------------------------------------------------------------

def _init(ctx: Ctx) -> int:
    path = scratch(ctx)
    later(ctx, prof.finalize)
    return prof.init(path)


case("prof.init", _init, lambda ctx: prof.init(scratch(ctx)), code=REPEAT_INITIALIZE)  # twice
case("prof.finalize", lambda ctx: (session(ctx), prof.finalize())[1], lambda ctx: prof.finalize(),
     code=PROF_NOT_RUN)  # before (another) aclprofInit
case("prof.create_config", lambda ctx: _made(ctx, prof.create_config([ctx.device], 0, 0, ACL_PROF_TASK_TIME)),
     lambda ctx: prof.create_config([ctx.device, ctx.device], 0, 0, ACL_PROF_TASK_TIME),  # a device twice
     code=zero, valid_code=nonzero)
case("prof.destroy_config", lambda ctx: prof.destroy_config(prof.create_config([ctx.device], 0, 0, ACL_PROF_TASK_TIME)),
     lambda ctx: prof.destroy_config(BAD_HANDLE))  # stale: 100000
case("prof.start", lambda ctx: (session(ctx), prof.start(config(ctx)))[1],
     lambda ctx: prof.start(config(ctx)), code=PROF_ALREADY_RUN)  # the device is started
case("prof.stop", lambda ctx: prof.stop(started(ctx)),
     lambda ctx: prof.stop(config(ctx, ACL_PROF_TASK_TIME)),  # never started
     code=INVALID_PROFILING_CONFIG)
case("prof.set_config", lambda ctx: (session(ctx), prof.set_config(3, "15"))[1],  # ACL_PROF_SYS_HARDWARE_MEM_FREQ
     lambda ctx: prof.set_config(3, "fast"))  # a frequency is a number


def _made(ctx: Ctx, cfg: int) -> int:
    if cfg:
        ctx.cleanup.append((prof.destroy_config, cfg))
    return cfg


# ---- prof: steps --------------------------------------------------------------------------------

_steps: List[int] = []
case("prof.create_step_info", lambda ctx: _step_made(ctx, prof.create_step_info()),
     lambda ctx: in_thread(lambda: _step_made(ctx, prof.create_step_info())),  # no argument: any thread
     code=nonzero, valid_code=nonzero)
case("prof.destroy_step_info", lambda ctx: prof.destroy_step_info(prof.create_step_info()),
     lambda ctx: prof.destroy_step_info(BAD_HANDLE), code=is_none, valid_code=is_none)  # a message only
case("prof.get_step_timestamp",
     lambda ctx: prof.get_step_timestamp(_remember_step(step(ctx)), ACL_STEP_START, ctx.stream),
     lambda ctx: prof.get_step_timestamp(_steps[-1], ACL_STEP_START, ctx.stream))  # a step starts once


def _step_made(ctx: Ctx, s: int) -> int:
    if s:
        ctx.cleanup.append((prof.destroy_step_info, s))
    return s


def _remember_step(s: int) -> int:
    _steps[:] = [s]
    return s


# ---- prof: msproftx -----------------------------------------------------------------------------


def _stamp_made(ctx: Ctx) -> int:
    started(ctx)
    s = prof.create_stamp()
    if s:
        ctx.cleanup.append((prof.destroy_stamp, s))
    return s


case("prof.create_stamp", _stamp_made, lambda ctx: (prof.finalize(), prof.create_stamp())[1],  # msproftx ends
     code=zero, valid_code=nonzero)
case("prof.destroy_stamp", lambda ctx: prof.destroy_stamp(_stamp_made(ctx)), lambda ctx: prof.destroy_stamp(BAD_HANDLE),
     code=is_none, valid_code=is_none)  # stale: a message only
case("prof.set_stamp_trace_message", lambda ctx: prof.set_stamp_trace_message(stamp(ctx), "message", 7),
     lambda ctx: prof.set_stamp_trace_message(_stamps[0], "m" * 128, 128))  # fewer than 128 bytes
case("prof.mark", lambda ctx: prof.mark(stamp(ctx)), lambda ctx: prof.mark(0))  # NULL stamp
case("prof.mark_ex", lambda ctx: (started(ctx), prof.mark_ex("copied", 6, ctx.stream))[1],
     lambda ctx: prof.mark_ex("copied", 6, None))  # stream must not be NULL
case("prof.push", lambda ctx: (prof.push(stamp(ctx)), later(ctx, prof.pop))[0], lambda ctx: prof.push(0))
case("prof.pop", lambda ctx: (pushed(ctx), prof.pop())[1], lambda ctx: prof.pop())  # nothing pushed
case("prof.range_start", lambda ctx: prof.range_start(stamp(ctx)), lambda ctx: prof.range_start(0),
     check=holds(lambda r, ctx: r[0] != 0))
case("prof.range_stop", lambda ctx: prof.range_stop(_remember_range(range_started(ctx))),
     lambda ctx: prof.range_stop(_ranges[-1]))  # stopped already
case("prof.str2_id", lambda ctx: prof.str2_id("Add"), lambda ctx: prof.str2_id(None), code=zero,
     valid_code=lambda r: r == prof.str2_id("Add") and r not in (0, prof.str2_id("Mul")))  # NULL: 0
case("prof.range_push_ex",
     lambda ctx: (started(ctx), prof.range_push_ex(tensor_attr(ctx)), later(ctx, prof.range_pop))[1],
     lambda ctx: prof.range_push_ex(tensor_attr(ctx, version=0)))  # version 1 or later
case("prof.range_pop", lambda ctx: (started(ctx), prof.range_push_ex(tensor_attr(ctx)), prof.range_pop())[2],
     lambda ctx: prof.range_pop())  # nothing pushed

_ranges: List[int] = []


def _remember_range(range_id: int) -> int:
    _ranges[:] = [range_id]
    return range_id


# ---- prof: model subscriptions and their records ----------------------------------------------

case("prof.create_subscribe_config",
     lambda ctx: _sub_made(ctx, prof.create_subscribe_config(1, ACL_AICORE_NONE, Pipe(ctx).fd)),
     lambda ctx: prof.create_subscribe_config(1, ACL_AICORE_NONE, None),  # no fd
     code=zero, valid_code=nonzero)
case("prof.destroy_subscribe_config",
     lambda ctx: prof.destroy_subscribe_config(prof.create_subscribe_config(1, ACL_AICORE_NONE, Pipe(ctx).fd)),
     lambda ctx: prof.destroy_subscribe_config(BAD_HANDLE))  # stale: 100000
case("prof.model_subscribe", lambda ctx: _subscribe_once(ctx), lambda ctx: prof.model_subscribe(*_subscription),
     code=REPEAT_SUBSCRIBE)  # twice
case("prof.model_unsubscribe", lambda ctx: prof.model_unsubscribe(subscribed(ctx)[0].id),
     lambda ctx: prof.model_unsubscribe(987_654_321), code=INVALID_MODEL_ID)  # not subscribed
case("prof.get_op_desc_size", lambda ctx: prof.get_op_desc_size(), lambda ctx: in_thread(prof.get_op_desc_size),
     code=lambda r: r == (OP_DESC_SIZE, 0),  # no argument: 80 on any thread
     check=holds(lambda r, ctx: r[0] == OP_DESC_SIZE))
case("prof.get_op_num", lambda ctx: prof.get_op_num(_keep(records(ctx)).address, _records[0].length),
     lambda ctx: prof.get_op_num(_records[0].address, _records[0].length - 1),  # not whole records
     check=holds(lambda r, ctx: r[0] == 2))
case("prof.get_op_type_len", lambda ctx: prof.get_op_type_len(_keep(records(ctx)).address, _records[0].length, 0),
     lambda ctx: prof.get_op_type_len(_records[0].address, _records[0].length, 2),  # no record 2
     check=holds(lambda r, ctx: r[0] == len("memset") + 1))
case("prof.get_op_type",
     lambda ctx: prof.get_op_type(_keep(records(ctx)).address, _records[0].length, 0, op_type_len(_records[0])),
     lambda ctx: (lambda r, n: prof.get_op_type(r.address, r.length, 0, n))(*_type_twice(ctx)),  # read once
     check=holds(lambda r, ctx: r[0] == "memset"))
case("prof.get_op_name_len", lambda ctx: prof.get_op_name_len(_keep(records(ctx)).address, _records[0].length, 1),
     lambda ctx: prof.get_op_name_len(_records[0].address, _records[0].length, 2),
     check=holds(lambda r, ctx: r[0] == len("model%d/task1" % _records[0].model_id) + 1))
case("prof.get_op_name",
     lambda ctx: prof.get_op_name(_keep(records(ctx)).address, _records[0].length, 1, op_name_len(_records[0], 1)),
     lambda ctx: (lambda r, n: prof.get_op_name(r.address, r.length, 0, n))(*_name_twice(ctx)),  # read once
     check=holds(lambda r, ctx: r[0] == "model%d/task1" % _records[0].model_id))
case("prof.get_op_start", lambda ctx: prof.get_op_start(_keep(_valid_times(ctx)).address, _records[0].length, 0),
     lambda ctx: prof.get_op_start(_records[0].address, _records[0].length, 2), code=zero,  # 0 on failure
     valid_code=lambda r: r > 1_600_000_000_000_000)  # microseconds since the epoch
case("prof.get_op_end", lambda ctx: prof.get_op_end(_keep(_valid_times(ctx)).address, _records[0].length, 1),
     lambda ctx: prof.get_op_end(_records[0].address, _records[0].length - 1, 1), code=zero,
     valid_code=lambda r: r > 1_600_000_000_000_000)
case("prof.get_op_duration", lambda ctx: prof.get_op_duration(_keep(_valid_times(ctx)).address, _records[0].length, 0),
     lambda ctx: prof.get_op_duration(_records[0].address, _records[0].length, 2), code=zero,
     valid_code=lambda r: isinstance(r, int) and 0 <= r < 60_000_000)  # checked against end - start
case("prof.get_model_id", lambda ctx: _model_id_matches(_keep(records(ctx))),
     lambda ctx: prof.get_model_id(_records[0].address, _records[0].length, 2), code=zero,
     valid_code=lambda r: r is True)
case("prof.get_op_flag", lambda ctx: prof.get_op_flag(_keep(records(ctx)).address, _records[0].length, 0),
     lambda ctx: prof.get_op_flag(_records[0].address, _records[0].length, 2),
     code=ACL_SUBSCRIBE_NONE, valid_code=ACL_SUBSCRIBE_OP)
case("prof.get_op_attri_value",  # a task record is ACL_SUBSCRIBE_OP: no thread attribute (the vendor's rule)
     lambda ctx: prof.get_op_attri_value(
         _keep(records(ctx)).address, _records[0].length, 0, ACL_SUBSCRIBE_ATTRI_THREADID),
     lambda ctx: prof.get_op_attri_value(_records[0].address, _records[0].length, 2, ACL_SUBSCRIBE_ATTRI_THREADID),
     code=is_none, valid_code=is_none)

_subscription: List[int] = []


def _sub_made(ctx: Ctx, cfg: int) -> int:
    if cfg:
        ctx.cleanup.append((prof.destroy_subscribe_config, cfg))
    return cfg


def _subscribe_once(ctx: Ctx) -> int:
    m = model(ctx)
    pipe = Pipe(ctx)
    cfg = subscribe_config(ctx, pipe)
    ret = prof.model_subscribe(m.id, cfg)
    if ret == 0:
        pipe.taken = True
        later(ctx, lambda: prof.model_unsubscribe(m.id))
    _subscription[:] = [m.id, cfg]
    return ret


def _model_id_matches(r: Records) -> bool:
    return all(prof.get_model_id(r.address, r.length, i) == r.model_id for i in (0, 1))


# ---- dump ---------------------------------------------------------------------------------------


def _on_chunk(chunk: Any, length: int) -> int:
    return 0


def exception_dump(ctx: Ctx) -> str:
    """The exception dump enabled by ``acl.mdl.set_dump``; its root (``dump_path``)."""
    root = scratch(ctx)
    cfg = os.path.join(root, "dump.json")
    with open(cfg, "w", encoding="utf-8") as f:
        json.dump({"dump": {"dump_path": os.path.join(root, "exc"), "dump_scene": "aic_err_brief_dump"}}, f)
    assert acl.mdl.init_dump() == 0, acl.get_recent_err_msg()
    later(ctx, acl.mdl.finalize_dump)
    assert acl.mdl.set_dump(cfg) == 0, acl.get_recent_err_msg()
    return os.path.join(root, "exc")


def dump_tensor(ctx: Ctx, size: int = 32) -> Any:
    return {"type": 1, "tensorSize": size, "format": 2, "dataType": 0, "tensorAddr": ctx.dev, "shape": [4, 2]}


def _args_started(ctx: Ctx) -> str:
    path = os.path.join(scratch(ctx), "args")
    assert acl.op_start_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS, path) == 0, acl.get_recent_err_msg()
    later(ctx, lambda: acl.op_stop_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS))  # 100045 once stopped
    return path


case("dump.reg_callback", lambda ctx: (dump.reg_callback(_on_chunk, 0), later(ctx, dump.unreg_callback))[0],
     lambda ctx: dump.reg_callback(_on_chunk, 1))  # flag 0 only
case("dump.unreg_callback", lambda ctx: (dump.reg_callback(_on_chunk, 0), dump.unreg_callback())[1],
     lambda ctx: dump.unreg_callback(), code=is_none, valid_code=is_none)  # nothing registered: a log line
case("dump.get_path", lambda ctx: (_keep_root(_args_started(ctx)), dump.get_path(DATA_DUMP))[1],
     lambda ctx: dump.get_path(OVERFLOW_DUMP), code=is_none,  # no overflow dump configured
     valid_code=lambda r: isinstance(r, str), check=holds(lambda r, ctx: r == _roots[0]))
case("dump.save_exception_info",
     lambda ctx: (exception_dump(ctx),
                  dump.save_exception_info("calls_profiling", "case=valid", [dump_tensor(ctx)]))[1],
     lambda ctx: dump.save_exception_info("calls_profiling", None, []))  # tensorCount 0
case("dump.get_exception_info_path", lambda ctx: (_keep_root(exception_dump(ctx)), dump.get_exception_info_path())[1],
     lambda ctx: dump.get_exception_info_path(1),  # maxLen must be more than 1
     check=holds(lambda r, ctx: r[0] == os.path.join(_roots[0], "extra-info", "data-dump", str(ctx.device)) + "/"))
def _start_args(ctx: Ctx) -> int:
    path = _keep_root(os.path.join(scratch(ctx), "args"))
    later(ctx, lambda: acl.op_stop_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS))
    return acl.op_start_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS, path)


case("op_start_dump_args", _start_args,
     lambda ctx: acl.op_start_dump_args(2, scratch(ctx)),  # ACL_OP_DUMP_OP_AICORE_ARGS only
     check=holds(lambda r, ctx: os.path.isdir(_roots[0])))  # made
case("op_stop_dump_args", lambda ctx: (_args_started(ctx), acl.op_stop_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS))[1],
     lambda ctx: acl.op_stop_dump_args(ACL_OP_DUMP_OP_AICORE_ARGS), code=DUMP_NOT_RUN)  # not started

_roots: List[str] = []


def _keep_root(root: str) -> str:
    _roots[:] = [root]
    return root


# ---- allocators ---------------------------------------------------------------------------------


def _alloc(allocator: int, size: int) -> int:
    return 0x5000


def _free(allocator: int, block: int) -> None:
    return None


def _advise(allocator: int, size: int, addr: int) -> int:
    return addr


def _addr(block: int) -> int:
    return block


def desc(ctx: Ctx) -> int:
    d = rt.allocator_create_desc()
    assert d != 0
    ctx.cleanup.append((rt.allocator_destroy_desc, d))
    return d


def full_desc(ctx: Ctx) -> int:
    d = desc(ctx)
    assert rt.allocator_set_obj_to_desc(d, 0x1234) == 0
    assert rt.allocator_set_alloc_func_to_desc(d, _alloc) == 0
    assert rt.allocator_set_free_func_to_desc(d, _free) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(d, _addr) == 0
    return d


def registered(ctx: Ctx) -> int:
    assert rt.allocator_register(ctx.stream, full_desc(ctx)) == 0
    later(ctx, lambda: rt.allocator_unregister(ctx.stream))
    return ctx.stream


def _desc_made(ctx: Ctx, d: int) -> int:
    if d:
        ctx.cleanup.append((rt.allocator_destroy_desc, d))
    return d


def _calls_back(r: Any, ctx: Ctx) -> bool:
    from acl import _rt_allocator as a

    d, obj, alloc, free, advise, addr, _ = r
    return (
        d != 0 and obj == 0x1234 and advise == 0
        and a.AllocatorAllocFunc(alloc)(obj, 64) == 0x5000
        and a.AllocatorGetAddrFromBlockFunc(addr)(0x5000) == 0x5000
        and free != 0
    )


case("rt.allocator_create_desc", lambda ctx: _desc_made(ctx, rt.allocator_create_desc()),
     lambda ctx: in_thread(lambda: _desc_made(ctx, rt.allocator_create_desc())),  # no argument: any thread
     code=nonzero, valid_code=nonzero)
case("rt.allocator_destroy_desc", lambda ctx: rt.allocator_destroy_desc(rt.allocator_create_desc()),
     lambda ctx: rt.allocator_destroy_desc(BAD_HANDLE), code=INVALID_HANDLE)  # a stale handle
case("rt.allocator_set_obj_to_desc", lambda ctx: rt.allocator_set_obj_to_desc(desc(ctx), 0x1234),
     lambda ctx: rt.allocator_set_obj_to_desc(desc(ctx), 0))  # NULL: 100000
case("rt.allocator_set_alloc_func_to_desc", lambda ctx: rt.allocator_set_alloc_func_to_desc(desc(ctx), _alloc),
     lambda ctx: rt.allocator_set_alloc_func_to_desc(desc(ctx), None))
case("rt.allocator_set_free_func_to_desc", lambda ctx: rt.allocator_set_free_func_to_desc(desc(ctx), _free),
     lambda ctx: rt.allocator_set_free_func_to_desc(desc(ctx), None))
case("rt.allocator_set_alloc_advise_func_to_desc",
     lambda ctx: rt.allocator_set_alloc_advise_func_to_desc(desc(ctx), _advise),
     lambda ctx: rt.allocator_set_alloc_advise_func_to_desc(desc(ctx), None))
case("rt.allocator_set_get_addr_from_block_func_to_desc",
     lambda ctx: rt.allocator_set_get_addr_from_block_func_to_desc(desc(ctx), _addr),
     lambda ctx: rt.allocator_set_get_addr_from_block_func_to_desc(desc(ctx), None))
def _register(ctx: Ctx) -> int:
    later(ctx, lambda: rt.allocator_unregister(ctx.stream))
    return rt.allocator_register(ctx.stream, full_desc(ctx))


case("rt.allocator_register", _register,
     lambda ctx: rt.allocator_register(ctx.stream, desc(ctx)))  # an empty description
case("rt.allocator_get_by_stream", lambda ctx: rt.allocator_get_by_stream(registered(ctx)),
     lambda ctx: rt.allocator_get_by_stream(BAD_HANDLE), code=INVALID_HANDLE,  # not a stream
     check=holds(_calls_back))
case("rt.allocator_unregister", lambda ctx: rt.allocator_unregister(registered(ctx)),
     lambda ctx: rt.allocator_unregister(ctx.stream), code=0)  # nothing registered (twice): success
