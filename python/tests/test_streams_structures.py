"""The streams family's structures in their Python forms: stream attributes (the union
aclrtStreamAttrValue as an int, or a dict of its members), counting notify infos (dicts), IPC
event handles (64 bytes)."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

import acl

from conftest import PYTHON, child_env

rt = acl.rt

ACL_STREAM_ATTR_FAILURE_MODE = 1
ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2
ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3
ACL_STREAM_ATTR_CACHE_OP_INFO = 4
ACL_STREAM_ATTR_PRIORITY = 5
ACL_EVENT_SYNC = 0x1
ACL_EVENT_IPC = 0x40


def test_every_stream_attribute_round_trips(stream: int) -> None:
    for attr, value in [
        (ACL_STREAM_ATTR_FAILURE_MODE, 1),  # ACL_STOP_ON_FAILURE
        (ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, 1),
        (ACL_STREAM_ATTR_USER_CUSTOM_TAG, 0xDEADBEEF),
        (ACL_STREAM_ATTR_CACHE_OP_INFO, 1),
        (ACL_STREAM_ATTR_PRIORITY, 7),
    ]:
        assert rt.get_stream_attribute(stream, attr)[1] == 0
        assert rt.set_stream_attribute(stream, attr, value) == 0, attr
        assert rt.get_stream_attribute(stream, attr) == (value, 0), attr
    # The same switches through their own functions.
    assert rt.get_stream_overflow_switch(stream) == (1, 0)
    assert rt.stream_get_priority(stream) == (7, 0)
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, 0) == 0


def test_a_stream_attribute_as_a_dict_of_the_union(stream: int) -> None:
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY, {"streamPriority": 2}) == 0
    assert rt.get_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY) == (2, 0)
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, {"reserve": [9, 0, 0, 0]}) == 0
    assert rt.get_stream_attribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG) == (9, 0)
    with pytest.raises(ValueError):
        rt.set_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY, {"priority": 2})
    with pytest.raises(ValueError):
        rt.set_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY, {"reserve": [0] * 5})


def test_stream_attribute_refusals(stream: int) -> None:
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY, 8) == 107000
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, 2) == 107000
    assert rt.set_stream_attribute(stream, ACL_STREAM_ATTR_PRIORITY, None) == 100000
    assert rt.get_stream_attribute(stream, 99) == (0, 107000)
    assert rt.get_stream_attribute(0x7FFF0000DEAD, ACL_STREAM_ATTR_PRIORITY) == (0, 107017)
    acl.get_recent_err_msg()


def test_an_ipc_event_handle_is_64_plain_bytes(stream: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    event, ret = rt.create_event_ex_with_flag(ACL_EVENT_IPC)
    assert ret == 0
    handle, ret = rt.ipc_get_event_handle(event)
    assert ret == 0 and isinstance(handle, bytes) and len(handle) == 64
    assert rt.ipc_get_event_handle(event) == (handle, 0), "asking again gives the same handle"
    path = tmp_path / "event.handle"
    path.write_bytes(handle)  # the vendor's sample shares it through a file
    for form in (path.read_bytes(), bytearray(handle), memoryview(handle), handle.rstrip(b"\0")):
        opened, ret = rt.ipc_open_event_handle(form)
        assert ret == 0 and opened not in (0, event)
        assert rt.destroy_event(opened) == 0
    opened, ret = rt.ipc_open_event_handle(handle)
    assert ret == 0
    assert rt.ipc_get_event_handle(opened) == (b"", 107000), "an opened event is not exported again"
    assert rt.record_event(opened, stream) == 0
    assert rt.synchronize_event(event) == 0
    assert rt.query_event_status(event) == (1, 0)
    assert rt.destroy_event(opened) == 0
    with pytest.raises(ValueError):
        rt.ipc_open_event_handle(handle + b"\0")
    plain, ret = rt.create_event_ex_with_flag(ACL_EVENT_SYNC)
    assert ret == 0
    assert rt.ipc_get_event_handle(plain) == (b"", 107000)
    assert rt.destroy_event(event) == 0
    assert rt.ipc_open_event_handle(handle) == (0, 107000), "withdrawn by the creator's destroy"
    assert rt.destroy_event(plain) == 0
    acl.get_recent_err_msg()


def test_counting_notifies_are_ascend_950_only(device: int) -> None:
    if (rt.get_soc_name() or "").startswith("Ascend950"):
        pytest.skip("the emulated product is an Ascend 950")
    assert rt.cnt_notify_create(0) == (0, 207000)
    acl.get_recent_err_msg()


CNT_NOTIFY_ON_950 = textwrap.dedent(
    """
    import acl
    rt = acl.rt
    SET, ADD, OR, AND = 0, 1, 2, 4
    LESS, EQUAL, BIGGER, BIGGER_OR_EQUAL, BITMASK = 0, 1, 2, 3, 4
    assert acl.init() == 0 and rt.set_device(0) == 0
    s, ret = rt.create_stream()
    assert ret == 0
    n, ret = rt.cnt_notify_create(0)
    assert ret == 0 and n != 0
    assert rt.cnt_notify_get_id(n)[1] == 0

    def record(mode, value):
        assert rt.cnt_notify_record(n, s, {"mode": mode, "value": value}) == 0

    def passes(mode, value, clear=0):
        info = {"mode": mode, "value": value, "timeout": 1, "is_clear": clear}
        assert rt.cnt_notify_wait_with_timeout(n, s, info) == 0
        return rt.synchronize_stream(s)

    record(SET, 5)
    assert passes(EQUAL, 5) == 0
    record(ADD, 3)
    assert passes(BIGGER_OR_EQUAL, 8) == 0
    assert passes(BIGGER, 7) == 0
    assert passes(LESS, 9) == 0
    record(OR, 0b10000)
    assert passes(BITMASK, 0b11000) == 0
    record(AND, 0b10000)
    assert passes(EQUAL, 0b10000, clear=1) == 0
    assert passes(EQUAL, 0) == 0, "cleared by the wait before"
    record(ADD, 0xFFFFFFFF)
    record(ADD, 1)
    assert passes(EQUAL, 0xFFFFFFFF) == 0, "an add stops at UINT32_MAX"
    assert rt.cnt_notify_reset(n, s) == 0
    assert passes(BIGGER, 0) == 107020, "a wait that times out (1 s) fails the stream"
    assert rt.cnt_notify_destroy(n) == 0
    assert rt.destroy_stream(s) == 0
    assert rt.reset_device(0) == 0
    acl.finalize()
    print("counting notifies correct")
    """
)


def test_counting_notifies_on_ascend_950() -> None:
    env = child_env()
    env["ASCENDLESS_SOC"] = "Ascend950PR_9579"
    out = subprocess.run(
        [PYTHON, "-c", CNT_NOTIFY_ON_950], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "counting notifies correct" in out.stdout


def test_counting_notify_infos_are_checked_in_python(device: int) -> None:
    with pytest.raises(ValueError):
        rt.cnt_notify_record(0, 0, {"mode": 0, "count": 1})
    with pytest.raises(ValueError):
        rt.cnt_notify_wait_with_timeout(0, 0, {"rsv": 1})
    assert rt.cnt_notify_record(0x7FFF0000DEAD, 0, None) == 100000
    assert rt.cnt_notify_wait_with_timeout(0x7FFF0000DEAD, 0, None) == 100000
    acl.get_recent_err_msg()
