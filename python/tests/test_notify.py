"""Notify record/wait in one process: one record releases one wait, early records are kept,
waits time out in seconds, batch reset forgets pending records."""

from __future__ import annotations

import threading
import time

import acl
from acl import constants as c


def test_record_then_wait(stream: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(c.ACL_NOTIFY_DEFAULT)
    assert ret == 0
    assert rt.record_notify(notify, stream) == 0  # a record before the wait is not lost
    assert rt.wait_and_reset_notify(notify, stream, 5) == 0
    assert rt.synchronize_stream(stream) == 0
    assert rt.destroy_notify(notify) == 0


def test_wait_released_by_another_thread(stream: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(0)
    assert ret == 0
    assert rt.wait_and_reset_notify(notify, stream, 10) == 0
    ctx, ret = rt.get_context()
    assert ret == 0
    results = []

    def recorder() -> None:
        time.sleep(0.2)
        results.append(rt.set_context(ctx))
        s, r = rt.create_stream()
        results.append(r)
        results.append(rt.record_notify(notify, s))
        results.append(rt.synchronize_stream(s))
        results.append(rt.destroy_stream(s))

    t = threading.Thread(target=recorder)
    start = time.monotonic()
    t.start()
    assert rt.synchronize_stream(stream) == 0  # the GIL is released while this blocks
    assert time.monotonic() - start >= 0.15
    t.join(10)
    assert results == [0, 0, 0, 0, 0]
    assert rt.destroy_notify(notify) == 0


def test_one_record_releases_one_wait(stream: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(0)
    assert ret == 0
    assert rt.record_notify(notify, stream) == 0
    assert rt.wait_and_reset_notify(notify, stream, 5) == 0
    assert rt.wait_and_reset_notify(notify, stream, 1) == 0  # no second record: times out
    assert rt.synchronize_stream(stream) == c.ACL_ERROR_RT_TASK_TIMEOUT
    assert rt.synchronize_stream(stream) == 0  # reported once
    assert rt.destroy_notify(notify) == 0
    acl.get_recent_err_msg()


def test_batch_reset_and_ids(stream: int) -> None:
    rt = acl.rt
    n1, ret = rt.create_notify(0)
    assert ret == 0
    n2, ret = rt.create_notify(c.ACL_NOTIFY_DEVICE_USE_ONLY)
    assert ret == 0
    id1, ret = rt.get_notify_id(n1)
    assert ret == 0
    id2, ret = rt.get_notify_id(n2)
    assert ret == 0 and id1 != id2
    assert rt.record_notify(n1, stream) == 0
    assert rt.synchronize_stream(stream) == 0
    assert rt.notify_batch_reset([n1, n2]) == 0
    assert rt.wait_and_reset_notify(n1, stream, 1) == 0  # the record was forgotten
    assert rt.synchronize_stream(stream) == c.ACL_ERROR_RT_TASK_TIMEOUT
    assert rt.notify_batch_reset([n1, 0]) == 100000  # a NULL handle in the list
    assert rt.notify_batch_reset([]) == 100000
    assert rt.destroy_notify(n1) == 0
    assert rt.destroy_notify(n2) == 0
    acl.get_recent_err_msg()
