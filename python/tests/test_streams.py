"""Streams and events: ordering, waits across streams, time-outs."""

from __future__ import annotations

import time

import acl
from acl import constants as c


def test_stream_lifecycle(device: int) -> None:
    rt = acl.rt
    s, ret = rt.create_stream_with_config(3, 0)
    assert ret == 0
    assert rt.synchronize_stream(s) == 0
    assert rt.synchronize_stream_with_timeout(s, 1000) == 0
    assert rt.synchronize_stream(0) == 0  # the default stream
    assert rt.destroy_stream_force(s) == 0
    assert rt.destroy_stream(s) == c.ACL_ERROR_RT_INVALID_HANDLE
    acl.get_recent_err_msg()


def test_event_orders_two_streams(device: int) -> None:
    rt = acl.rt
    size = 1 << 16
    s1, ret = rt.create_stream()
    assert ret == 0
    s2, ret = rt.create_stream()
    assert ret == 0
    event, ret = rt.create_event()
    assert ret == 0
    dev, ret = rt.malloc(size, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    out = bytearray(size)
    assert rt.memset_async(dev, size, 7, size, s1) == 0
    assert rt.record_event(event, s1) == 0
    assert rt.stream_wait_event(s2, event) == 0
    assert rt.memcpy_async(acl.util.bytes_to_ptr(out), size, dev, size, c.ACL_MEMCPY_DEVICE_TO_HOST, s2) == 0
    assert rt.synchronize_stream(s2) == 0
    assert out == b"\x07" * size
    assert rt.synchronize_event(event) == 0
    assert rt.synchronize_event_with_timeout(event, 1000) == 0
    assert rt.reset_event(event, s1) == 0
    assert rt.synchronize_stream(s1) == 0
    for ret in (rt.free(dev), rt.destroy_event(event), rt.destroy_stream(s1), rt.destroy_stream(s2)):
        assert ret == 0


def test_event_with_flag(device: int) -> None:
    event, ret = acl.rt.create_event_with_flag(c.ACL_EVENT_SYNC | c.ACL_EVENT_TIME_LINE)
    assert ret == 0 and event != 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.create_event_with_flag(0x80000) == (0, 107000)
    acl.get_recent_err_msg()


def test_stream_sync_timeout_on_a_blocked_stream(stream: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(0)
    assert ret == 0
    assert rt.wait_and_reset_notify(notify, stream, 0) == 0  # blocks the stream until a record
    start = time.monotonic()
    assert rt.synchronize_stream_with_timeout(stream, 100) == c.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert time.monotonic() - start < 5
    other, ret = rt.create_stream()
    assert ret == 0
    assert rt.record_notify(notify, other) == 0
    assert rt.synchronize_stream(other) == 0
    assert rt.synchronize_stream(stream) == 0
    assert rt.destroy_stream(other) == 0
    assert rt.destroy_notify(notify) == 0
    acl.get_recent_err_msg()
