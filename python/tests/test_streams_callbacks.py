"""Python callables run by the runtime: report callbacks (launch_callback, run by a Python
thread looping on process_report, as pyACL's documentation lays out), host functions (on the
stream's worker, or in a thread of process_host_func), stream state callbacks. Each is kept
alive while the runtime may call it, released after, and an exception out of one is logged,
never carried into C."""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Iterator, List, Tuple

import pytest

import acl
from acl import _rt_streams

rt = acl.rt

ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1
ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
ACL_ERROR_RT_REPORT_TIMEOUT = 507012
ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2
ACL_MEMCPY_DEVICE_TO_HOST = 2
TIMEOUT = 30.0


class ReportThread:
    """A Python thread that loops on ``process``'s call (``acl.rt.process_report``), as the
    vendor's samples do, from the moment ``start`` is called until its streams are all
    unsubscribed (the call then gives 107012)."""

    def __init__(self, process=rt.process_report) -> None:  # type: ignore[no-untyped-def]
        self.process = process
        self.go = threading.Event()
        self.codes: List[int] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        assert self.thread.ident is not None
        self.ident: int = self.thread.ident

    def _loop(self) -> None:
        self.go.wait(TIMEOUT)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ret = self.process(100)
            self.codes.append(ret)
            if ret == ACL_ERROR_RT_THREAD_SUBSCRIBE:
                return

    def start(self) -> None:
        self.go.set()

    def join(self) -> None:
        self.go.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the report thread did not end"


@pytest.fixture
def report(stream: int) -> Iterator[Tuple[int, ReportThread]]:
    t = ReportThread()
    assert rt.subscribe_report(t.ident, stream) == 0
    yield stream, t
    assert rt.unsubscribe_report(t.ident, stream) == 0
    t.join()
    assert set(t.codes) <= {0, ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_THREAD_SUBSCRIBE}, t.codes


def test_a_python_thread_looping_on_process_report_runs_the_callbacks(report: Tuple[int, ReportThread]) -> None:
    stream, t = report
    t.start()
    ran: List[Tuple[int, object]] = []
    data = [1, "two", {"three": 3}]

    def callback(user_data: object) -> None:
        ran.append((threading.get_ident(), user_data))

    assert rt.launch_callback(callback, data, ACL_CALLBACK_BLOCK, stream) == 0
    assert rt.launch_callback(callback, ["no block"], ACL_CALLBACK_NO_BLOCK, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    deadline = time.monotonic() + TIMEOUT
    while len(ran) < 2 and time.monotonic() < deadline:  # the non-blocking one may still be running
        time.sleep(0.01)
    assert [who for who, _ in ran] == [t.ident, t.ident], "run in the subscribed thread"
    assert ran[0][1] is data, "the user data list itself, as pyACL passes it"
    assert ran[1][1] == ["no block"]


def test_a_blocking_callback_holds_the_stream_until_it_has_run(report: Tuple[int, ReportThread]) -> None:
    stream, t = report
    order: List[str] = []

    def slow(_: object) -> None:
        time.sleep(0.2)
        order.append("callback")

    assert rt.launch_callback(slow, [], ACL_CALLBACK_BLOCK, stream) == 0
    assert rt.launch_host_func(stream, lambda _: order.append("after"), None) == 0
    time.sleep(0.1)
    assert order == [], "nothing runs before the report thread takes the callback"
    t.start()
    assert rt.synchronize_stream(stream) == 0
    assert order == ["callback", "after"]


def test_callbacks_stay_alive_until_they_ran_and_are_released_after(report: Tuple[int, ReportThread]) -> None:
    stream, t = report
    before = len(_rt_streams._queued)
    ran: List[int] = []
    for i in range(20):
        # Closures referenced by nothing but the runtime's queue.
        assert rt.launch_callback((lambda i: lambda _: ran.append(i))(i), [i], ACL_CALLBACK_BLOCK, stream) == 0
    gc.collect()
    t.start()
    assert rt.synchronize_stream(stream) == 0
    assert ran == list(range(20))
    assert len(_rt_streams._queued) == before, "released once run"


def test_an_exception_in_a_callback_is_logged_and_the_stream_goes_on(
    report: Tuple[int, ReportThread], caplog: pytest.LogCaptureFixture
) -> None:
    stream, t = report
    t.start()
    ran: List[str] = []

    def fails(_: object) -> None:
        raise RuntimeError("raised in a report callback")

    with caplog.at_level(logging.ERROR, logger="acl"):
        assert rt.launch_callback(fails, [], ACL_CALLBACK_BLOCK, stream) == 0
        assert rt.launch_callback(lambda _: ran.append("next"), [], ACL_CALLBACK_BLOCK, stream) == 0
        assert rt.synchronize_stream(stream) == 0
    assert ran == ["next"]
    assert any("raised in a report callback" in (r.exc_text or "") for r in caplog.records), caplog.text


def test_launch_callback_refusals(stream: int) -> None:
    before = len(_rt_streams._queued)
    assert rt.launch_callback(print, [], ACL_CALLBACK_BLOCK, stream) == 107015  # no report thread
    assert rt.launch_callback(None, [], ACL_CALLBACK_BLOCK, stream) == 107000
    t = ReportThread()
    assert rt.subscribe_report(t.ident, stream) == 0
    assert rt.launch_callback(print, [], 2, stream) == 100000  # block type 0 or 1
    assert len(_rt_streams._queued) == before, "nothing kept for a refused launch"
    with pytest.raises(TypeError):
        rt.launch_callback("not callable", [], ACL_CALLBACK_BLOCK, stream)
    assert rt.unsubscribe_report(t.ident, stream) == 0
    t.join()
    acl.get_recent_err_msg()


def test_host_functions_run_in_order_on_the_stream_worker(stream: int, caplog: pytest.LogCaptureFixture) -> None:
    size = 4096
    dev, ret = rt.malloc(size, 0)
    assert ret == 0
    host, ret = rt.malloc_host(size)
    assert ret == 0
    seen: List[Tuple[int, bytes]] = []

    def look(tag: int) -> None:
        seen.append((threading.get_ident(), acl.util.ptr_to_bytes(host, 1)))

    def fails(_: object) -> None:
        raise ValueError("raised in a host function")

    with caplog.at_level(logging.ERROR, logger="acl"):
        assert rt.memset_async(dev, size, 1, size, stream) == 0
        assert rt.memcpy_async(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
        assert rt.launch_host_func(stream, look, 1) == 0
        assert rt.launch_host_func(stream, fails, None) == 0
        assert rt.memset_async(dev, size, 2, size, stream) == 0
        assert rt.memcpy_async(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
        assert rt.launch_host_func(stream, look, 2) == 0
        assert rt.synchronize_stream(stream) == 0
    assert [b for _, b in seen] == [b"\x01", b"\x02"], "each after the tasks queued before it"
    assert seen[0][0] == seen[1][0] != threading.get_ident(), "on the stream's worker"
    assert any("raised in a host function" in (r.exc_text or "") for r in caplog.records), caplog.text
    assert rt.free_host(host) == 0
    assert rt.free(dev) == 0


def test_host_functions_run_in_a_thread_of_process_host_func(stream: int) -> None:
    t = ReportThread(rt.process_host_func)
    assert rt.subscribe_host_func(t.ident, stream) == 0
    ran: List[Tuple[int, object]] = []
    assert rt.launch_host_func(stream, lambda a: ran.append((threading.get_ident(), a)), "args") == 0
    t.start()
    assert rt.synchronize_stream(stream) == 0
    assert ran == [(t.ident, "args")]
    assert rt.unsubscribe_host_func(t.ident, stream) == 0
    t.join()


def test_a_host_function_captured_into_a_graph_runs_at_every_replay(stream: int) -> None:
    mdl = acl.mdl
    ran: List[str] = []
    before = len(_rt_streams._queued)
    assert mdl.ri_capture_begin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert rt.launch_host_func(stream, ran.append, "replayed") == 0
    model, ret = mdl.ri_capture_end(stream)
    assert ret == 0 and model != 0
    gc.collect()
    for _ in range(3):
        assert mdl.ri_execute_async(model, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert ran == ["replayed"] * 3
    assert len(_rt_streams._queued) == before + 1, "a captured function stays referenced for good"
    assert mdl.ri_destroy(model) == 0


def test_stream_state_callbacks_until_unregistered(device: int, caplog: pytest.LogCaptureFixture) -> None:
    seen: List[Tuple[int, int, object]] = []
    args = object()
    name = "test_streams_callbacks"
    assert rt.reg_stream_state_callback(name, lambda s, state, a: seen.append((s, state, a)), args) == 0
    assert name.encode() in _rt_streams._state_callbacks
    gc.collect()
    s, ret = rt.create_stream()
    assert ret == 0
    assert rt.destroy_stream(s) == 0
    assert [x for x in seen if x[0] == s] == [(s, 1, args), (s, 2, args)]  # CREATE_POST, DESTROY_PRE
    assert rt.reg_stream_state_callback(name, print) == 107000, "a name already registered"
    assert rt.reg_stream_state_callback(name, None) == 0
    assert name.encode() not in _rt_streams._state_callbacks, "released when unregistered"
    seen.clear()
    s, ret = rt.create_stream()
    assert ret == 0
    assert rt.destroy_stream(s) == 0
    assert [x for x in seen if x[0] == s] == []

    def fails(*_: object) -> None:
        raise KeyError("raised in a stream state callback")

    with caplog.at_level(logging.ERROR, logger="acl"):
        assert rt.reg_stream_state_callback(name, fails) == 0
        s, ret = rt.create_stream()
        assert ret == 0
        assert rt.destroy_stream(s) == 0
        assert rt.reg_stream_state_callback(name, None) == 0
    assert any("raised in a stream state callback" in (r.exc_text or "") for r in caplog.records), caplog.text
    assert rt.reg_stream_state_callback("", print) == 100000
    assert rt.reg_stream_state_callback(None, print) == 100000
    acl.get_recent_err_msg()
