"""The devices family's callbacks doing their work through the Python face: exception-info
callbacks told of a failed stream task, device state and task abort callbacks around the calls
that fire them, init and finalize callbacks (in a fresh process, which may initialise and
finalise), and app_log reaching the library's logger. A callback that raises is logged and
never breaks the C call that ran it."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
from typing import Any, Callable, List

import pytest

import acl
from conftest import child_env

rt = acl.rt
WAIT_TIMEOUT = 107019  # ACL_ERROR_RT_WAIT_TIMEOUT
ACL_REG_TYPE_OTHER = 65535


def fail_one_task() -> int:
    """A stream task that fails (an event wait timing out after 20 ms); returns the failing
    stream's id, after its synchronisation reported the failure."""
    blocked, _ = rt.create_stream()
    failing, _ = rt.create_stream()
    event, _ = rt.create_event()
    notify, _ = rt.create_notify(0)
    stream_id, ret = rt.stream_get_id(failing)
    assert ret == 0
    assert rt.wait_and_reset_notify(notify, blocked, 0) == 0
    assert rt.record_event(event, blocked) == 0
    assert rt.stream_wait_event_with_timeout(failing, event, 20) == 0
    assert rt.synchronize_stream(failing) == WAIT_TIMEOUT
    assert rt.record_notify(notify, failing) == 0
    assert rt.synchronize_stream(blocked) == 0
    for release, handle in ((rt.destroy_event, event), (rt.destroy_notify, notify),
                            (rt.destroy_stream, failing), (rt.destroy_stream, blocked)):
        assert release(handle) == 0
    return stream_id


def on_thread(fn: Callable[[], Any]) -> Any:
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_exception_callbacks_are_told_of_a_failed_task(device: int, caplog: pytest.LogCaptureFixture) -> None:
    seen: List[Any] = []
    legacy: List[Any] = []

    def registered(info: int) -> None:
        seen.append((
            rt.get_task_id_from_exception_info(info), rt.get_stream_id_from_exception_info(info),
            rt.get_device_id_from_exception_info(info), rt.get_error_code_from_exception_info(info),
            rt.get_thread_id_from_exception_info(info),
        ))

    def raising(info: int) -> None:
        legacy.append(rt.get_error_code_from_exception_info(info))
        raise RuntimeError("a callback that raises")

    assert rt.exception_info_callback_register(registered) == 0
    assert rt.exception_info_callback_register(registered) == 0  # again: adds nothing
    assert rt.set_exception_info_callback(raising) == 0
    try:
        with caplog.at_level(logging.ERROR, logger="acl"):
            stream_id = fail_one_task()
    finally:
        assert rt.exception_info_callback_unregister(registered) == 0
        assert rt.set_exception_info_callback() == 0
    assert len(seen) == 1, seen  # registered twice, called once
    task_id, got_stream, got_device, code, thread_id = seen[0]
    assert (task_id, got_stream, got_device, code) == (0, stream_id, device, WAIT_TIMEOUT)
    assert thread_id != 0
    assert legacy == [WAIT_TIMEOUT]
    assert "a callback that raises" in caplog.text

    # Unregistered and cleared: neither hears of the next failure.
    fail_one_task()
    assert len(seen) == 1 and legacy == [WAIT_TIMEOUT]


def test_device_state_callback_brackets_the_first_set_and_the_last_reset() -> None:
    calls: List[Any] = []
    args = {"who": "test"}
    device = 5

    def state(device_id: int, st: int, a: Any) -> None:
        calls.append((device_id, st, a))

    assert rt.reg_device_state_callback("test_devices", state, args) == 0
    try:
        assert rt.reg_device_state_callback("test_devices", state, args) == 107000  # name taken
        assert on_thread(lambda: (rt.set_device(device), rt.set_device(device), rt.reset_device(device),
                                  rt.reset_device(device))) == (0, 0, 0, 0)
    finally:
        assert rt.reg_device_state_callback("test_devices", None) == 0
    # Opened once (SET_PRE 0, SET_POST 1), closed once (RESET_PRE 2, RESET_POST 3).
    assert calls == [(device, 0, args), (device, 1, args), (device, 2, args), (device, 3, args)]
    assert on_thread(lambda: (rt.set_device(device), rt.reset_device(device))) == (0, 0)
    assert len(calls) == 4  # unregistered


def test_a_raising_device_state_callback_does_not_break_set_device(caplog: pytest.LogCaptureFixture) -> None:
    def raising(device_id: int, st: int, a: Any) -> None:
        raise ValueError("device state boom")

    assert rt.reg_device_state_callback("test_devices.raising", raising) == 0
    try:
        with caplog.at_level(logging.ERROR, logger="acl"):
            assert on_thread(lambda: (rt.set_device(6), rt.reset_device(6))) == (0, 0)
    finally:
        assert rt.reg_device_state_callback("test_devices.raising", None) == 0
    assert "device state boom" in caplog.text


def test_task_abort_callback_runs_before_and_after_the_abort(device: int) -> None:
    calls: List[Any] = []

    def abort(device_id: int, stage: int, timeout: int, a: Any) -> int:
        calls.append((device_id, stage, timeout, a))
        return 1 if stage == 0 else 0  # a failing PRE is logged; the abort goes on

    assert rt.set_device_task_abort_callback("test_devices", abort, "abort-args") == 0
    try:
        assert rt.device_task_abort(device, 100) == 0
    finally:
        assert rt.set_device_task_abort_callback("test_devices", None) == 0
    assert calls == [(device, 0, 100, "abort-args"), (device, 1, 100, "abort-args")]


def test_primary_context_state_is_pyacls_active_flags_ret(device: int) -> None:
    assert rt.get_primary_ctx_state(device) == (1, 0, 0)
    assert on_thread(lambda: rt.get_primary_ctx_state(7)) == (0, 0, 0)


def test_get_last_error_gives_the_failed_calls_code_once() -> None:
    rt.get_last_error(0)
    assert rt.set_device(9999) == 107001
    assert rt.peek_at_last_error(0) == 107001
    assert rt.get_last_error(0) == 107001
    assert rt.get_last_error(0) == 0


def run_child(code: str, tmp_path: Any, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    environment = child_env()
    environment.update(env)
    return subprocess.run([sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=120)


def test_init_and_finalize_callbacks_run_in_init_and_finalize(tmp_path: Any) -> None:
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"dump": {}}))
    done = run_child(
        """
        import json
        import acl
        calls = []
        def other(text, size, user_data):
            calls.append(["other", text, size, user_data])
        def model(text, size, user_data):
            calls.append(["model", size, user_data])
            return 0
        def gone(text, size, user_data):
            calls.append(["gone"])
        def fin(user_data):
            calls.append(["finalize", user_data])
        assert acl.init_callback_register(65535, other, "u1") == 0
        assert acl.init_callback_register(65535, other, "u2") == 0  # replaces the user data
        assert acl.init_callback_register(0, model, None) == 0      # ACL_REG_TYPE_ACL_MODEL
        assert acl.init_callback_register(65535, gone) == 0
        assert acl.init_callback_unregister(65535, gone) == 0
        assert acl.finalize_callback_register(65535, fin, {"k": 1}) == 0
        calls.append(["init", acl.init(%r)])
        calls.append(["finalize ret", acl.finalize()])
        print(json.dumps(calls))
        """ % str(config),
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout.strip().splitlines()[-1])
    text = config.read_text()
    assert calls == [
        ["model", len(text), None],  # by type, ACL_REG_TYPE_OTHER last
        ["other", text, len(text), "u2"],
        ["init", 0],
        ["finalize", {"k": 1}],
        ["finalize ret", 0],
    ]


def test_a_failing_or_raising_init_callback_fails_init(tmp_path: Any) -> None:
    done = run_child(
        """
        import acl
        def failing(text, size, user_data):
            return 100006
        assert acl.init_callback_register(65535, failing) == 0
        first = acl.init()
        assert acl.init_callback_unregister(65535, failing) == 0
        def raising(text, size, user_data):
            raise RuntimeError("init boom")
        assert acl.init_callback_register(65535, raising) == 0
        second = acl.init()
        print(first, second)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["100006", "500001"]  # the callback's code; ACL_ERROR_FAILURE
    assert "init boom" in done.stderr


def test_app_log_reaches_the_library_logger_with_the_callers_place(tmp_path: Any) -> None:
    done = run_child(
        """
        import acl
        def emit():
            acl.app_log(3, "logged from Python: 100% done, %s kept")
        emit()
        """,
        tmp_path,
        ASCEND_GLOBAL_LOG_LEVEL="0",
    )
    assert done.returncode == 0, done.stderr
    line = [ln for ln in done.stderr.splitlines() if "logged from Python" in ln]
    assert line, done.stderr
    assert "[child.py:4][emit] logged from Python: 100% done, %s kept" in line[0]
