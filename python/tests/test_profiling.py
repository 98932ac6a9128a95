"""Profiling from Python, as tests/profiling_api.rs does it in Rust: a session (acl.prof.init ..
start .. stop .. finalize) writes its PROF_* directory with the tasks the stream ran, the
msproftx records (marks, pushes, ranges, a range with tensors, str2id) and the step trace; a
model subscription writes one record per task of a run into a pipe, which the acl.prof.get_op*
functions read back."""

from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from typing import Any, Dict, List

import acl

prof = acl.prof

ACL_PROF_ACL_API = 0x0001
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_MSPROFTX = 0x0080
ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3
ACL_AICORE_NONE = 0xFF
ACL_STEP_START, ACL_STEP_END = 0, 1
H2D = 1


def lines(path: str) -> List[Dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def stamp(message: str) -> int:
    s = prof.create_stamp()
    assert s != 0, acl.get_recent_err_msg()
    assert prof.set_stamp_trace_message(s, message, len(message)) == 0
    return s


def test_a_session_writes_tasks_marks_ranges_and_steps_into_its_directory(  # type: ignore[no-untyped-def]
    tmp_path, stream: int
) -> None:
    root = str(tmp_path / "prof")
    cfg = prof.create_config([0], 0, 0, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX)
    assert cfg != 0, acl.get_recent_err_msg()
    assert prof.start(cfg) == 100043, "before acl.prof.init"
    assert prof.create_stamp() == 0, "no msproftx before a start"

    assert prof.init(root) == 0, acl.get_recent_err_msg()
    try:
        assert prof.init(root) == 100002
        assert prof.set_config(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15") == 0
        assert prof.start(cfg) == 0, acl.get_recent_err_msg()

        mark, outer, rng = stamp("load_mark"), stamp("outer_push"), stamp("pre_range")
        step = prof.create_step_info()
        assert step != 0
        assert prof.get_step_timestamp(step, ACL_STEP_START, stream) == 0
        assert prof.mark(mark) == 0
        assert prof.push(outer) == 0
        range_id, ret = prof.range_start(rng)
        assert ret == 0 and range_id != 0
        # A range stopped from another thread.
        time.sleep(0.02)
        stopped: List[int] = []
        t = threading.Thread(target=lambda: stopped.append(prof.range_stop(range_id)))
        t.start()
        t.join()
        assert stopped == [0]

        size = 4096
        dev, ret = acl.rt.malloc(size, 0)
        assert ret == 0
        host = ctypes.create_string_buffer(b"\x07" * size, size)
        assert acl.rt.memcpy_async(dev, size, ctypes.addressof(host), size, H2D, stream) == 0
        assert prof.mark_ex("copied", 6, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert prof.pop() == 0
        assert prof.get_step_timestamp(step, ACL_STEP_END, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0

        name_id = prof.str2_id("Add")
        assert name_id == prof.str2_id("Add") != prof.str2_id("Mul")
        attr = {
            "version": 1,
            "messageType": 0,
            "tensorInfo": {
                "opNameId": name_id, "opTypeId": name_id, "blockNums": 8, "stream": stream,
                "tensors": [{"type": 0, "format": 2, "dataType": 0, "shape": [4, 2]}],
            },
        }
        assert prof.range_push_ex(attr) == 0, acl.get_recent_err_msg()
        assert prof.range_pop() == 0

        assert prof.stop(cfg) == 0, acl.get_recent_err_msg()
        for s in (mark, outer, rng):
            prof.destroy_stamp(s)
        prof.destroy_step_info(step)
        assert acl.rt.free(dev) == 0
    finally:
        assert prof.finalize() == 0
    assert prof.finalize() == 100043
    assert prof.destroy_config(cfg) == 0

    dirs = os.listdir(root)
    assert len(dirs) == 1 and dirs[0].startswith("PROF_"), dirs
    out = os.path.join(root, dirs[0])
    with open(os.path.join(out, "info.json"), encoding="utf-8") as f:
        info = json.load(f)
    assert info["settings"]["sys_hardware_mem_freq"] == "15"
    assert info["devices"] == [0]
    assert info["stop_ns"] > info["start_ns"]

    tasks = lines(os.path.join(out, "device_0", "task_time.jsonl"))
    assert len(tasks) >= 3, tasks  # the copy, the mark and the steps ran as tasks
    assert all(t["device"] == 0 and t["end_ns"] >= t["start_ns"] for t in tasks)

    tx = lines(os.path.join(out, "host", "msproftx.jsonl"))

    def find(kind: str, message: str) -> Dict[str, Any]:
        found = [r for r in tx if r["type"] == kind and r.get("message") == message]
        assert found, (kind, message, tx)
        return found[0]

    find("mark", "load_mark")
    r = find("range", "pre_range")
    assert r["end_ns"] - r["start_ns"] >= 20_000_000
    push = find("push_pop", "outer_push")
    assert push["start_ns"] <= r["start_ns"], "the push encloses the range"
    find("mark_ex", "copied")
    find("str2id", "Add")
    ex = [r for r in tx if r["type"] == "range_ex"]
    assert ex and ex[0]["tensors"][0]["shape"] == [4, 2], tx

    steps = lines(os.path.join(out, "host", "step_trace.jsonl"))
    assert [s["tag"] for s in steps] == ["start", "end"]


def test_a_subscribed_model_writes_one_record_per_task_into_the_pipe(stream: int) -> None:
    dev, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    assert acl.mdl.ri_capture_begin(stream, 0) == 0
    assert acl.rt.memset_async(dev, 4096, 1, 64, stream) == 0
    assert acl.rt.memset_async(dev, 4096, 2, 64, stream) == 0
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == 0
    model_id, ret = acl.mdl.ri_get_id(model)
    assert ret == 0

    read_fd, write_fd = os.pipe()
    fd = ctypes.c_int(write_fd)
    nothing_asked = prof.create_subscribe_config(0, ACL_AICORE_NONE, ctypes.addressof(fd))
    assert nothing_asked != 0
    assert prof.model_subscribe(model_id, nothing_asked) == 100000, "time info off, no metrics"
    assert prof.destroy_subscribe_config(nothing_asked) == 0
    cfg = prof.create_subscribe_config(1, ACL_AICORE_NONE, ctypes.addressof(fd))
    assert cfg != 0
    assert prof.model_subscribe(model_id, cfg) == 0, acl.get_recent_err_msg()
    assert prof.model_subscribe(model_id, cfg) == 148046
    assert prof.init("/nonexistent-never-written") == 148047, "no session during a subscription"

    assert acl.mdl.ri_execute_async(model, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert prof.model_unsubscribe(model_id) == 0  # closes the write end: the reader sees its end
    assert prof.model_unsubscribe(model_id) == 100011
    data = b""
    while True:
        chunk = os.read(read_fd, 4096)
        if not chunk:
            break
        data += chunk
    os.close(read_fd)

    size, ret = prof.get_op_desc_size()
    assert (size, ret) == (80, 0)
    assert len(data) == 2 * size, "one record per task of the run"
    buf = ctypes.create_string_buffer(data, len(data))
    p, n = ctypes.addressof(buf), len(data)
    assert prof.get_op_num(p, n) == (2, 0)
    for i in range(2):
        assert prof.get_model_id(p, n, i) == model_id
        start, end = prof.get_op_start(p, n, i), prof.get_op_end(p, n, i)
        assert start > 1_600_000_000_000_000 and end >= start
        assert prof.get_op_duration(p, n, i) == end - start
        assert prof.get_op_flag(p, n, i) == 0
        assert prof.get_op_attri_value(p, n, i, 0) is None, "a task record has no thread attribute"
        type_len, ret = prof.get_op_type_len(p, n, i)
        assert ret == 0
        assert prof.get_op_type(p, n, i, type_len) == ("memset", 0)
        assert prof.get_op_type(p, n, i, type_len) == ("", 100000), "read once"
        name_len, ret = prof.get_op_name_len(p, n, i)
        assert ret == 0
        assert prof.get_op_name(p, n, i, name_len) == ("model%d/task%d" % (model_id, i), 0)
    assert prof.get_op_start(p, n, 2) == 0, "no record 2"
    assert prof.get_op_flag(p, n, 2) == 0xFF
    assert prof.get_op_num(p, n - 1) == (0, 100000), "not whole records"
    bad = bytearray(data)
    bad[40] ^= 1
    bad_buf = ctypes.create_string_buffer(bytes(bad), len(bad))
    assert prof.get_op_num(ctypes.addressof(bad_buf), n) == (0, 100000), "signature"

    assert prof.destroy_subscribe_config(cfg) == 0
    assert acl.mdl.ri_destroy(model) == 0
    assert acl.rt.free(dev) == 0


def test_create_config_takes_the_vendor_forms_and_refuses_bad_lists() -> None:
    assert prof.create_config([0, 0], 0, 0, ACL_PROF_TASK_TIME) == 0
    assert "twice" in acl.get_recent_err_msg()
    assert prof.create_config([4096], 0, 0, ACL_PROF_TASK_TIME) == 0, "no such device"
    assert prof.create_config([], 0, 0, ACL_PROF_TASK_TIME) == 0, "no device and no msproftx"
    assert prof.create_config([0], 42, 0, ACL_PROF_TASK_TIME) == 0, "no such metrics"
    only_tx = prof.create_config([], 0, None, ACL_PROF_MSPROFTX)
    assert only_tx != 0
    assert prof.destroy_config(only_tx) == 0
    two = prof.create_config((0, 1), 0, 0, ACL_PROF_TASK_TIME)  # any sequence of ids
    assert two != 0
    assert prof.destroy_config(two) == 0
    assert prof.init("abc", 7) == 100000, "the C length, given, is not the path's"
    assert prof.set_config(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15") == 100043, "before acl.prof.init"
