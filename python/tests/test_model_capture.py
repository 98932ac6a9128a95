"""Stream capture and replay through acl.mdl, as tests/capture.rs does in C: a few stream tasks
(copies, a fill, an event record) captured into a model run instance and replayed, checking the
bytes; the model's streams, tasks and task parameters; a task's parameters updated; destroy
callbacks; a conditional task whose branches are captured; labels, random numbers."""

from __future__ import annotations

import ctypes
import struct
import threading
import time

import acl

H2D, D2H, D2D = 1, 2, 3
GLOBAL = 0
SIZE = 4096
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039
TASK_DEFAULT, TASK_EVENT_RECORD, TASK_VALUE_WRITE = 0, 2, 5


def device_buffer(size: int) -> int:
    dev, ret = acl.rt.malloc(size, 0)
    assert ret == 0
    assert acl.rt.memset(dev, size, 0, size) == 0
    return dev


def read(dev: int, size: int) -> bytes:
    buf = ctypes.create_string_buffer(size)
    assert acl.rt.memcpy(ctypes.addressof(buf), size, dev, size, D2H) == 0
    return buf.raw


def write_u64(dev: int, value: int) -> None:
    cell = ctypes.c_uint64(value)
    assert acl.rt.memcpy(dev, 8, ctypes.addressof(cell), 8, H2D) == 0


def event_done(event: int) -> bool:
    status, ret = acl.rt.query_event_status(event)
    assert ret == 0
    return status == 1


def test_captured_copies_fill_and_event_replay_byte_for_byte(stream: int) -> None:
    host, ret = acl.rt.malloc_host(SIZE)
    assert ret == 0
    a, b = device_buffer(SIZE), device_buffer(SIZE)
    event, ret = acl.rt.create_event()
    assert ret == 0
    try:
        assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
        assert acl.rt.memcpy_async(a, SIZE, host, SIZE, H2D, stream) == 0
        assert acl.rt.memcpy_async(b, SIZE, a, SIZE, D2D, stream) == 0
        assert acl.rt.memset_async(a, SIZE, 0x5A, SIZE, stream) == 0
        assert acl.rt.record_event(event, stream) == 0
        status, during, ret = acl.mdl.ri_capture_get_info(stream)
        assert (status, ret) == (1, 0) and during != 0
        model, ret = acl.mdl.ri_capture_end(stream)
        assert ret == 0 and model == during
        assert acl.mdl.ri_capture_get_info(stream) == (0, 0, 0)
        assert read(b, SIZE) == bytes(SIZE), "nothing ran while capturing"

        for i in range(20):
            pattern = (i * 37 + 1) % 251
            ctypes.memset(host, pattern, SIZE)
            assert acl.mdl.ri_execute_async(model, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            assert read(b, SIZE) == bytes([pattern]) * SIZE, "replay %d: the copies" % i
            assert read(a, SIZE) == b"\x5a" * SIZE, "replay %d: the fill" % i
            assert event_done(event), "replay %d: the event record" % i

        # One stream, four tasks in recording order: two copies and a fill (DEFAULT), a record.
        streams, ret = acl.mdl.ri_get_streams(model)
        assert ret == 0 and len(streams) == 1
        tasks, ret = acl.mdl.ri_get_tasks_by_stream(streams[0])
        assert ret == 0 and len(tasks) == 4
        assert acl.mdl.ri_get_tasks_by_stream(streams[0], 3) == ([], ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY)
        assert [acl.mdl.ri_task_get_type(t) for t in tasks] == [
            (TASK_DEFAULT, 0), (TASK_DEFAULT, 0), (TASK_DEFAULT, 0), (TASK_EVENT_RECORD, 0)]
        assert acl.mdl.ri_task_get_seq_id(tasks[3]) == (3, 0)
        params, ret = acl.mdl.ri_task_get_params(tasks[3])
        assert ret == 0 and params["type"] == TASK_EVENT_RECORD
        assert params["event_record_task_params"]["event"] == event

        assert acl.mdl.ri_set_name(model, "replayed") == 0
        assert acl.mdl.ri_get_name(model, 16) == ("replayed", 0)
        assert acl.mdl.ri_get_name(model, 4) == ("", ACL_ERROR_RT_PARAM_INVALID)
        assert acl.mdl.ri_destroy(model) == 0
        assert acl.mdl.ri_execute_async(model, stream) != 0, "the handle is stale"
    finally:
        acl.rt.synchronize_stream(stream)
        assert acl.rt.destroy_event(event) == 0
        assert acl.rt.free(a) == 0 and acl.rt.free(b) == 0
        assert acl.rt.free_host(host) == 0


def test_a_value_write_task_is_updated_through_its_parameters(stream: int) -> None:
    word, other = device_buffer(8), device_buffer(8)
    try:
        assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
        assert acl.rt.value_write(word, 7, 0, stream) == 0
        model, ret = acl.mdl.ri_capture_end(stream)
        assert ret == 0
        (s,), _ = acl.mdl.ri_get_streams(model)
        (task,), _ = acl.mdl.ri_get_tasks_by_stream(s)
        params, ret = acl.mdl.ri_task_get_params(task)
        assert ret == 0
        assert params["type"] == TASK_VALUE_WRITE
        assert params["value_write_task_params"] == {"dev_addr": word, "value": 7}
        new = {"type": TASK_VALUE_WRITE, "value_write_task_params": {"dev_addr": other, "value": 11}}
        assert acl.mdl.ri_task_set_params(task, new) == 0
        assert acl.mdl.ri_task_set_params(task, dict(new, type=3)) == ACL_ERROR_RT_PARAM_INVALID
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert struct.unpack("<Q", read(word, 8))[0] == 7, "not applied before the update"
        assert acl.mdl.ri_update(model) == 0
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert struct.unpack("<Q", read(other, 8))[0] == 11
        assert acl.mdl.ri_destroy(model) == 0
    finally:
        assert acl.rt.free(word) == 0 and acl.rt.free(other) == 0


def test_destroy_callbacks_run_once_and_unregistered_ones_not(stream: int) -> None:
    dev = device_buffer(64)
    calls = []
    done = threading.Event()

    def on_destroy(user_data: object) -> None:
        calls.append(user_data)
        done.set()

    def other(user_data: object) -> None:
        calls.append(("other", user_data))

    def raising(user_data: object) -> None:
        raise RuntimeError("never reaches C")

    try:
        assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
        assert acl.rt.memset_async(dev, 64, 3, 64, stream) == 0
        model, ret = acl.mdl.ri_capture_end(stream)
        assert ret == 0
        assert acl.mdl.ri_destroy_register_callback(model, on_destroy, "first") == 0
        assert acl.mdl.ri_destroy_register_callback(model, on_destroy, {"key": 1}) == 0, "replaces the data"
        assert acl.mdl.ri_destroy_register_callback(model, other, None) == 0
        assert acl.mdl.ri_destroy_register_callback(model, raising) == 0
        assert acl.mdl.ri_destroy_unregister_callback(model, other) == 0
        assert acl.mdl.ri_destroy_unregister_callback(model, other) == ACL_ERROR_RT_PARAM_INVALID
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.mdl.ri_destroy(model) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert done.wait(10)
        deadline = time.monotonic() + 5
        while any(k[0] == model for k in acl.mdl._destroy_callbacks) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not any(k[0] == model for k in acl.mdl._destroy_callbacks), "released once they ran"
        assert calls == [{"key": 1}]
        assert read(dev, 64) == b"\x03" * 64
    finally:
        assert acl.rt.free(dev) == 0


def test_conditional_tasks_run_the_branch_their_word_selects(stream: int) -> None:
    side, ret = acl.rt.create_stream()
    assert ret == 0
    dev = device_buffer(64)
    try:
        assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
        _, model, _ = acl.mdl.ri_capture_get_info(stream)
        cond, ret = acl.mdl.ri_cond_handle_create(model, 1, 0)
        assert ret == 0 and cond != 0
        branches, ret = acl.mdl.ri_add_cond_task({"handle": cond, "type": 0, "size": 2}, stream, 0)
        assert ret == 0 and len(branches) == 2 and all(branches)
        for i, branch in enumerate(branches):
            assert acl.mdl.ri_capture_to_model_ri_begin(side, branch, GLOBAL) == 0
            assert acl.rt.memset_async(dev, 64, i + 1, 64, side) == 0
            assert acl.mdl.ri_capture_end(side) == (branch, 0)
        assert acl.mdl.ri_capture_end(stream) == (model, 0)
        ptr, ret = acl.mdl.ri_cond_handle_get_cond_ptr(cond)
        assert ret == 0 and ptr != 0

        def run() -> int:
            assert acl.mdl.ri_execute_async(model, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            return read(dev, 1)[0]

        assert run() == 1, "IF true runs branch 0"
        write_u64(ptr, 0)
        assert run() == 2, "IF false runs branch 1"
        assert acl.mdl.ri_destroy(model) == 0
    finally:
        assert acl.rt.free(dev) == 0
        assert acl.rt.destroy_stream(side) == 0


def test_a_label_list_switches_a_captured_stream(stream: int) -> None:
    labels = []
    for _ in range(2):
        label, ret = acl.rt.create_label()
        assert ret == 0 and label != 0
        labels.append(label)
    label_list, ret = acl.rt.create_label_list(labels)
    assert ret == 0 and label_list != 0
    index, dev = device_buffer(8), device_buffer(64)
    try:
        # The switch jumps to the label its index selects: label 0 runs both fills, label 1
        # only the second.
        assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
        assert acl.rt.switch_label_by_index(index, 2, label_list, stream) == 0
        assert acl.rt.set_label(labels[0], stream) == 0
        assert acl.rt.memset_async(dev, 64, 1, 64, stream) == 0
        assert acl.rt.set_label(labels[1], stream) == 0
        assert acl.rt.memset_async(dev, 32, 2, 32, stream) == 0
        model, ret = acl.mdl.ri_capture_end(stream)
        assert ret == 0
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert read(dev, 64) == b"\x02" * 32 + b"\x01" * 32, "index 0: both fills"
        assert acl.rt.memset(dev, 64, 0, 64) == 0
        write_u64(index, 1)
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert read(dev, 64) == b"\x02" * 32 + bytes(32), "index 1: the first fill jumped over"
        assert acl.mdl.ri_destroy(model) == 0
    finally:
        assert acl.rt.destroy_label_list(label_list) == 0
        for label in labels:
            assert acl.rt.destroy_label(label) == 0
        assert acl.rt.free(index) == 0 and acl.rt.free(dev) == 0
    assert acl.rt.create_label_list([]) == (0, ACL_ERROR_RT_PARAM_INVALID)


def test_random_numbers_are_uniform_in_range_and_repeatable(stream: int) -> None:
    out, counter = device_buffer(4000), device_buffer(16)
    info = {
        "data_type": 0,  # ACL_FLOAT
        "func_type": 1,  # uniform
        "min": struct.pack("<f", 2.0),
        "max": struct.pack("<f", 5.0),
        "random_result_addr": out,
        "random_counter_addr": counter,
        "random_seed": 42,
        "random_num": 1000,
    }
    try:
        assert acl.rt.random_num_async(info, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        first = read(out, 4000)
        values = struct.unpack("<1000f", first)
        assert all(2.0 <= v < 5.0 for v in values)
        assert int.from_bytes(read(counter, 16), "little") == 250
        assert acl.rt.memset(counter, 16, 0, 16) == 0
        assert acl.rt.random_num_async(info, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert read(out, 4000) == first, "the same seed and counter give the same numbers"
        assert acl.rt.random_num_async(dict(info, func_type=9), stream) == ACL_ERROR_RT_PARAM_INVALID
    finally:
        assert acl.rt.free(out) == 0 and acl.rt.free(counter) == 0


def test_kernel_launches_answer_not_supported(stream: int) -> None:
    cfg = [{"id": 1, "value": 1}, (6, 10)]
    assert acl.rt.launch_kernel_with_config(0, 1, stream, cfg, 0) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.launch_simt_kernel_with_args_array(0, (1, 1, 1), (32, 1, 1), 0, stream, None, []) == (
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.rt.binary_load_from_file("/nonexistent.o", [{"type": 1, "value": 0}]) == (
        0, ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_the_capture_mode_goes_in_and_the_previous_one_comes_out(device: int) -> None:
    def exchange_in_thread() -> list:
        out = [acl.mdl.ri_capture_thread_exchange_mode(1)]  # a new thread starts GLOBAL
        out.append(acl.mdl.ri_capture_thread_exchange_mode(2))
        out.append(acl.mdl.ri_capture_thread_exchange_mode(0))
        return out

    got: list = []
    t = threading.Thread(target=lambda: got.extend(exchange_in_thread()))
    t.start()
    t.join()
    assert got == [(0, 0), (1, 0), (2, 0)]
    assert acl.mdl.ri_capture_thread_exchange_mode(7) == (0, ACL_ERROR_RT_PARAM_INVALID)


def test_a_destroy_callback_is_released_once_unregistered(stream: int) -> None:
    from acl import mdl

    assert acl.mdl.ri_capture_begin(stream, GLOBAL) == 0
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == 0
    kept = dict(mdl._destroy_callbacks)

    def cb(_: object) -> None:
        pass

    assert acl.mdl.ri_destroy_register_callback(model, cb, 1) == 0
    assert len(mdl._destroy_callbacks) == len(kept) + 1
    assert acl.mdl.ri_destroy_unregister_callback(model, cb) == 0
    assert mdl._destroy_callbacks == kept
    assert acl.mdl.ri_destroy(model) == 0
