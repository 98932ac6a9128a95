"""Device memory: copies through it, fills, and the acl.util address helpers."""

from __future__ import annotations

import numpy as np

import acl
from acl import constants as c

SIZE = 1 << 20


def test_memcpy_round_trip_through_device_memory(device: int) -> None:
    rt = acl.rt
    data = bytes((i * 7 + 3) & 0xFF for i in range(SIZE))
    dev, ret = rt.malloc(SIZE, c.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and dev != 0
    back = bytearray(SIZE)
    try:
        assert rt.memcpy(dev, SIZE, acl.util.bytes_to_ptr(data), SIZE, c.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert rt.memcpy(acl.util.bytes_to_ptr(back), SIZE, dev, SIZE, c.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert bytes(back) == data
        # Device to device, then ACL_MEMCPY_DEFAULT (the runtime tells the direction).
        dev2, ret = rt.malloc(SIZE, c.ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0
        assert rt.memcpy(dev2, SIZE, dev, SIZE, c.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
        back2 = bytearray(SIZE)
        assert rt.memcpy(acl.util.bytes_to_ptr(back2), SIZE, dev2, SIZE, c.ACL_MEMCPY_DEFAULT) == 0
        assert back2 == back
        assert rt.free(dev2) == 0
    finally:
        assert rt.free(dev) == 0


def test_memcpy_bad_input(device: int) -> None:
    rt = acl.rt
    dev, ret = rt.malloc(4096, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    host = bytearray(8192)
    ptr = acl.util.bytes_to_ptr(host)
    assert rt.memcpy(dev, 4096, ptr, 8192, c.ACL_MEMCPY_HOST_TO_DEVICE) == 107000  # count > dest_max
    assert rt.memcpy(0, 4096, ptr, 16, c.ACL_MEMCPY_HOST_TO_DEVICE) == 100000  # NULL dst
    assert rt.free(dev) == 0
    assert rt.memcpy(dev, 4096, ptr, 16, c.ACL_MEMCPY_HOST_TO_DEVICE) == 107000  # freed
    acl.get_recent_err_msg()


def test_memset_and_async_copies_with_numpy(stream: int) -> None:
    rt = acl.rt
    src = np.arange(SIZE // 4, dtype=np.uint32)
    dst = np.zeros_like(src)
    dev, ret = rt.malloc(SIZE, c.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    host, ret = rt.malloc_host(SIZE)
    assert ret == 0
    try:
        assert rt.memset(dev, SIZE, 0x5A, SIZE) == 0
        assert rt.memcpy(host, SIZE, dev, SIZE, c.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert acl.util.ptr_to_bytes(host, SIZE) == b"\x5a" * SIZE
        assert rt.memcpy_async(dev, SIZE, acl.util.numpy_to_ptr(src), SIZE, c.ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
        assert rt.memset_async(dev, SIZE, 0xFF, 4, stream) == 0
        assert rt.memcpy_async(acl.util.numpy_to_ptr(dst), SIZE, dev, SIZE, c.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
        assert rt.synchronize_stream(stream) == 0
        expected = src.copy()
        expected[0] = 0xFFFFFFFF
        assert np.array_equal(dst, expected)
        view = acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(dst), (SIZE // 4,), np.dtype(np.uint32).num)
        assert np.array_equal(view, expected)
    finally:
        assert rt.free_host(host) == 0
        assert rt.free(dev) == 0


def test_get_mem_info_tracks_allocations(device: int) -> None:
    free0, total, ret = acl.rt.get_mem_info(c.ACL_HBM_MEM)
    assert ret == 0 and total > 0 and free0 <= total
    dev, ret = acl.rt.malloc(1 << 24, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    free1, _total, ret = acl.rt.get_mem_info(c.ACL_HBM_MEM)
    assert ret == 0 and free1 <= free0 - (1 << 24)
    assert acl.rt.free(dev) == 0


def test_util_addresses() -> None:
    data = bytearray(b"hello")
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.util.ptr_to_bytes(ptr, 5) == b"hello"
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(b"abc"), 3) == b"abc"
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(memoryview(data)[1:]), 4) == b"ello"
