"""Dump from Python, as tests/dump_api.rs does it in Rust: the dump callback registered with
acl.dump.reg_callback receives chunks through its C function pointer, the user's tensors saved
by acl.dump.save_exception_info land in the exception dump's directory with their bytes read
from device memory, and the operator-args dump answers its path.

The runtime itself produces no dump data (that is the aclnn operators', which ascendless does
not have: docs/profiling.md), so it never calls the registered callback; the test calls the
C function it holds, as the vendor's dump library would, with chunks built in C memory."""

from __future__ import annotations

import ctypes
import gc
import json
import logging
import os
from typing import Any, Dict, List, Tuple

import pytest

import acl
from acl import dump

H2D = 1
DATA_DUMP, OVERFLOW_DUMP, AIC_ERR_BRIEF_DUMP = 4, 5, 1


def make_chunk(name: str, data: bytes, offset: int = 0, last: bool = True) -> Any:
    """An acldumpChunk followed by its data, in one C buffer (the flexible array)."""
    size = ctypes.sizeof(dump.DumpChunk) + len(data)
    buf = ctypes.create_string_buffer(size)
    chunk = dump.DumpChunk.from_buffer(buf)
    chunk.fileName = name.encode()
    chunk.bufLen = len(data)
    chunk.isLastChunk = 1 if last else 0
    chunk.offset = offset
    chunk.flag = 0
    ctypes.memmove(ctypes.addressof(buf) + dump.DumpChunk.dataBuf.offset, data, len(data))
    return buf


def registered_function() -> Any:
    """The C function the runtime holds for the registered callback, by its address."""
    wrapper = dump.registered_wrapper()
    assert wrapper is not None
    address = ctypes.cast(wrapper, ctypes.c_void_p).value
    assert address
    return dump.DumpCallback(address)


def test_the_registered_callback_receives_each_chunk() -> None:
    got: List[Tuple[Dict[str, Any], int]] = []

    def on_chunk(chunk: Dict[str, Any], length: int) -> int:
        got.append((chunk, length))
        return 0

    assert dump.reg_callback(on_chunk, 1) == 100000, "flag 0 only"
    assert dump.registered_callback() is None, "a refused callback is not kept"
    assert dump.reg_callback(None) == 100000
    assert dump.reg_callback(on_chunk) == 0
    try:
        assert dump.registered_callback() is on_chunk
        call = registered_function()
        del on_chunk
        gc.collect()  # the module keeps the callable and its wrapper alive
        first = make_chunk("/dump/Add.0.input.0", b"\x01\x02\x03\x04", offset=0, last=False)
        second = make_chunk("/dump/Add.0.input.0", bytes(range(200)), offset=4, last=True)
        for buf in (first, second):
            ptr = ctypes.cast(buf, ctypes.POINTER(dump.DumpChunk))
            assert call(ptr, len(buf)) == 0
        assert len(got) == 2
        a, b = got[0][0], got[1][0]
        assert a["fileName"] == "/dump/Add.0.input.0"
        assert (a["bufLen"], a["isLastChunk"], a["offset"], a["dataBuf"]) == (4, 0, 0, b"\x01\x02\x03\x04")
        assert (b["bufLen"], b["isLastChunk"], b["offset"], b["dataBuf"]) == (200, 1, 4, bytes(range(200)))
        assert got[0][1] == ctypes.sizeof(first)
    finally:
        assert dump.unreg_callback() is None
    assert dump.registered_callback() is None and dump.registered_wrapper() is None
    assert dump.unreg_callback() is None, "nothing registered: a log line"


def test_an_exception_in_the_callback_is_logged_and_answered_minus_one(caplog: pytest.LogCaptureFixture) -> None:
    def broken(chunk: Dict[str, Any], length: int) -> int:
        raise RuntimeError("broken on purpose")

    assert dump.reg_callback(broken) == 0
    try:
        buf = make_chunk("x", b"abc")
        with caplog.at_level(logging.ERROR, logger="acl"):
            assert registered_function()(ctypes.cast(buf, ctypes.POINTER(dump.DumpChunk)), len(buf)) == -1
        assert "broken on purpose" in caplog.text
    finally:
        dump.unreg_callback()


def test_saved_exception_info_holds_the_tensors_bytes(tmp_path, device: int) -> None:  # type: ignore[no-untyped-def]
    for var in ("NPU_COLLECT_PATH", "ASCEND_WORK_PATH"):
        if os.environ.get(var):
            pytest.skip("%s moves the exception dump's root" % var)
    exc = tmp_path / "exc"
    cfg = tmp_path / "dump.json"
    cfg.write_text(json.dumps({"dump": {"dump_path": str(exc), "dump_scene": "aic_err_brief_dump"}}))
    assert dump.get_exception_info_path() == ("", 100045), "not enabled"
    assert acl.mdl.init_dump() == 0, acl.get_recent_err_msg()
    try:
        assert acl.mdl.set_dump(str(cfg)) == 0, acl.get_recent_err_msg()
        assert dump.get_path(AIC_ERR_BRIEF_DUMP) == str(exc)
        path, ret = dump.get_exception_info_path()
        assert ret == 0
        assert path == "%s/extra-info/data-dump/%d/" % (exc, device)
        assert dump.get_exception_info_path(10) == ("", 100000), "no room"

        dev, ret = acl.rt.malloc(32, 0)
        assert ret == 0
        data = bytes(range(32))
        host = ctypes.create_string_buffer(data, 32)
        assert acl.rt.memcpy(dev, 32, ctypes.addressof(host), 32, H2D) == 0
        tensor = {"type": 1, "tensor_size": 32, "format": 2, "data_type": 0, "tensor_addr": dev, "shape": [4, 2]}
        assert dump.save_exception_info("saved", "component=test", [tensor]) == 0, acl.get_recent_err_msg()
        files = os.listdir(path)
        assert len(files) == 1 and files[0].startswith("saved.custom.")
        assert len(files[0]) == len("saved.custom.") + 17, files  # yyyymmddHHMMSSmmm
        with open(os.path.join(path, files[0]), "rb") as f:
            saved = f.read()
        header, _, body = saved.partition(b"\n")
        meta = json.loads(header)
        assert meta["user_tag"] == "component=test"
        assert meta["tensors"][0]["shape"] == [4, 2]
        assert body == data, "the tensor's bytes from device memory"

        assert dump.save_exception_info("../escape", None, [tensor]) == 100000
        assert dump.save_exception_info("saved", None, []) == 100000, "tensorCount 0"
        assert dump.save_exception_info("saved", None, None) == 100000
        assert dump.save_exception_info("saved", None, [dict(tensor, shapeNum=26)]) == 100000
        assert dump.save_exception_info("saved", None, [dict(tensor, addrType=0)]) == 100000
        assert dump.save_exception_info("saved", None, [dict(tensor, tensor_addr=ctypes.addressof(host))]) == 100000, (
            "not device memory"
        )
        with pytest.raises(ValueError):
            dump.save_exception_info("saved", None, [dict(tensor, shape=[1] * 26)])
        assert acl.rt.free(dev) == 0
    finally:
        assert acl.mdl.finalize_dump() == 0
    assert dump.get_path(AIC_ERR_BRIEF_DUMP) is None


def test_the_operator_args_dump_answers_its_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    args = str(tmp_path / "args")
    assert acl.op_start_dump_args(2, args) == 100000, "ACL_OP_DUMP_OP_AICORE_ARGS only"
    assert acl.op_start_dump_args(1, args) == 0, acl.get_recent_err_msg()
    assert os.path.isdir(args), "made"
    assert dump.get_path(DATA_DUMP) == args
    assert dump.get_path(OVERFLOW_DUMP) is None
    assert acl.op_stop_dump_args(1) == 0
    assert acl.op_stop_dump_args(1) == 100045
    assert dump.get_path(DATA_DUMP) is None
