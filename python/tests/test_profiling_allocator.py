"""User allocators from Python, as tests/buffers_api.rs registers them in Rust: a description
filled with Python callables, registered on a stream, read back with
acl.rt.allocator_get_by_stream, and its functions called through the C function pointers the
runtime hands back (what the vendor's executors and the libraries built on the runtime do):
blocks of real device memory come and go through the Python callables. The callables stay alive
with the registration after the description is destroyed; an exception in one is logged and
answered NULL."""

from __future__ import annotations

import ctypes
import gc
import logging
from typing import Dict, List, Tuple

import pytest

import acl
from acl import _rt_allocator as a

rt = acl.rt
H2D, D2H = 1, 2


class DeviceAllocator:
    """A Python allocator handing out device memory as blocks (the block is its own handle,
    its address 0 bytes further: a block id distinct from the address would do as well)."""

    def __init__(self) -> None:
        self.blocks: Dict[int, Tuple[int, int]] = {}  # block -> (address, size)
        self.calls: List[Tuple[str, int, int]] = []
        self.next_block = 0x1000

    def alloc(self, allocator: int, size: int) -> int:
        addr, ret = rt.malloc(size, 0)
        assert ret == 0
        block = self.next_block
        self.next_block += 0x10
        self.blocks[block] = (addr, size)
        self.calls.append(("alloc", allocator, size))
        return block

    def advise(self, allocator: int, size: int, addr: int) -> int:
        self.calls.append(("advise", allocator, size))
        return self.alloc(allocator, size)

    def free(self, allocator: int, block: int) -> None:
        addr, _ = self.blocks.pop(block)
        assert rt.free(addr) == 0
        self.calls.append(("free", allocator, block))

    def addr_of(self, block: int) -> int:
        return self.blocks[block][0]


OBJ = 0xA110C


def test_the_registered_python_allocator_is_called_through_the_runtimes_pointers(stream: int) -> None:
    user = DeviceAllocator()
    desc = rt.allocator_create_desc()
    assert desc != 0
    assert rt.allocator_register(stream, desc) == 100000, "an empty description"
    assert "aclrtAllocatorSetObjToDesc" in acl.get_recent_err_msg(), "names what is missing"
    assert rt.allocator_set_obj_to_desc(desc, OBJ) == 0
    assert rt.allocator_set_alloc_func_to_desc(desc, user.alloc) == 0
    assert rt.allocator_set_free_func_to_desc(desc, user.free) == 0
    assert rt.allocator_set_alloc_advise_func_to_desc(desc, user.advise) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(desc, user.addr_of) == 0
    assert rt.allocator_set_alloc_func_to_desc(desc, None) == 100000
    assert rt.allocator_register(0, desc) == 100000, "a stream is needed"
    assert rt.allocator_register(stream, desc) == 0
    assert rt.allocator_destroy_desc(desc) == 0, "the registration keeps a copy"
    gc.collect()  # nothing of the description may go with it

    d, obj, alloc, free, advise, addr_of, ret = rt.allocator_get_by_stream(stream)
    assert ret == 0
    assert (d, obj) == (desc, OBJ)
    assert alloc and free and advise and addr_of

    # What an executor does with the registration: blocks through the C pointers.
    block = a.AllocatorAllocFunc(alloc)(obj, 4096)
    assert block in user.blocks
    addr = a.AllocatorGetAddrFromBlockFunc(addr_of)(block)
    assert addr == user.blocks[block][0]
    data = bytes(range(256)) * 16
    src = ctypes.create_string_buffer(data, len(data))
    dst = ctypes.create_string_buffer(len(data))
    assert rt.memcpy(addr, 4096, ctypes.addressof(src), 4096, H2D) == 0, "the block is device memory"
    assert rt.memcpy(ctypes.addressof(dst), 4096, addr, 4096, D2H) == 0
    assert dst.raw == data
    advised = a.AllocatorAllocAdviseFunc(advise)(obj, 512, addr)
    assert advised in user.blocks
    for b in (block, advised):
        a.AllocatorFreeFunc(free)(obj, b)
    assert user.blocks == {}
    assert [c[0] for c in user.calls] == ["alloc", "advise", "alloc", "free", "free"]
    assert all(c[1] == OBJ for c in user.calls), "each call gets the allocator object"

    assert rt.allocator_unregister(stream) == 0
    assert rt.allocator_unregister(stream) == 0, "twice is fine"
    assert rt.allocator_get_by_stream(stream) == (0, 0, 0, 0, 0, 0, 0), "nothing registered"
    assert stream not in a._stream_slots, "the callbacks go with the registration"


def test_a_later_registration_replaces_the_earlier_one(stream: int) -> None:
    def desc_of(obj: int) -> int:
        d = rt.allocator_create_desc()
        assert rt.allocator_set_obj_to_desc(d, obj) == 0
        assert rt.allocator_set_alloc_func_to_desc(d, lambda o, n: o + n) == 0
        assert rt.allocator_set_free_func_to_desc(d, lambda o, b: None) == 0
        assert rt.allocator_set_get_addr_from_block_func_to_desc(d, lambda b: b) == 0
        return d

    first, second = desc_of(0x100), desc_of(0x200)
    assert rt.allocator_register(stream, first) == 0
    assert rt.allocator_register(stream, second) == 0
    d, obj, alloc, _, advise, _, ret = rt.allocator_get_by_stream(stream)
    assert (d, obj, advise, ret) == (second, 0x200, 0, 0), "the last one wins; no advise function set"
    assert a.AllocatorAllocFunc(alloc)(obj, 8) == 0x208
    assert rt.allocator_unregister(stream) == 0
    for dd in (first, second):
        assert rt.allocator_destroy_desc(dd) == 0
    assert rt.allocator_destroy_desc(first) == 107017, "destroyed already"


def test_an_exception_in_a_callback_is_logged_and_answered_null(stream: int, caplog: pytest.LogCaptureFixture) -> None:
    def broken_alloc(allocator: int, size: int) -> int:
        raise MemoryError("no block on purpose")

    def broken_addr(block: int) -> int:
        raise KeyError(block)

    def broken_free(allocator: int, block: int) -> None:
        raise RuntimeError("free failed on purpose")

    desc = rt.allocator_create_desc()
    assert rt.allocator_set_obj_to_desc(desc, OBJ) == 0
    assert rt.allocator_set_alloc_func_to_desc(desc, broken_alloc) == 0
    assert rt.allocator_set_free_func_to_desc(desc, broken_free) == 0
    assert rt.allocator_set_get_addr_from_block_func_to_desc(desc, broken_addr) == 0
    assert rt.allocator_register(stream, desc) == 0
    try:
        _, obj, alloc, free, _, addr_of, ret = rt.allocator_get_by_stream(stream)
        assert ret == 0
        with caplog.at_level(logging.ERROR, logger="acl"):
            assert a.AllocatorAllocFunc(alloc)(obj, 64) is None, "NULL"
            assert a.AllocatorGetAddrFromBlockFunc(addr_of)(0x1000) is None
            a.AllocatorFreeFunc(free)(obj, 0x1000)  # returns normally
        assert "no block on purpose" in caplog.text
        assert "free failed on purpose" in caplog.text
    finally:
        assert rt.allocator_unregister(stream) == 0
        assert rt.allocator_destroy_desc(desc) == 0
