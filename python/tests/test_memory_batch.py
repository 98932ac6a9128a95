"""Batch copies through acl.rt.memcpy_batch*: the bytes really move, each range where its list
entries say, directions mixed in one batch by the attribute indexes; a bad copy is named by
fail_index and nothing moves; the asynchronous forms run on the stream."""

from __future__ import annotations

import ctypes
from typing import Iterator, List

import pytest

import acl
from acl import constants as c

rt = acl.rt
HOST, DEVICE = 0, 1
H2D = {"dstLoc": {"id": 0, "type": DEVICE}, "srcLoc": {"id": 0, "type": HOST}}
D2H = {"dstLoc": {"id": 0, "type": HOST}, "srcLoc": {"id": 0, "type": DEVICE}}
SIZE_MAX = (1 << 64) - 1
CHUNK = 4096
N = 8


@pytest.fixture
def dev(device: int) -> Iterator[int]:
    p, ret = rt.malloc(N * CHUNK * 2, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    yield p
    assert rt.free(p) == 0


def pattern(i: int) -> bytes:
    return bytes(((i * 31 + k) * 7) & 0xFF for k in range(CHUNK))


def host_chunks(count: int, fill: bytes = b"") -> List[ctypes.Array]:
    return [ctypes.create_string_buffer(fill or pattern(i), CHUNK) for i in range(count)]


def addrs(bufs: List[ctypes.Array]) -> List[int]:
    return [ctypes.addressof(b) for b in bufs]


def read_back(dev_ptr: int, size: int) -> bytes:
    out = ctypes.create_string_buffer(size)
    assert rt.memcpy(ctypes.addressof(out), size, dev_ptr, size, c.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return out.raw


def test_bytes_go_to_device_and_back(dev: int) -> None:
    src = host_chunks(N)
    # Scatter the chunks to device memory in reverse order.
    dsts = [dev + (N - 1 - i) * CHUNK for i in range(N)]
    fail, ret = rt.memcpy_batch(dsts, [CHUNK] * N, addrs(src), [CHUNK] * N, [H2D], [0])
    assert (fail, ret) == (SIZE_MAX, 0)
    assert read_back(dev, N * CHUNK) == b"".join(pattern(i) for i in reversed(range(N)))
    back = host_chunks(N, b"\0" * CHUNK)
    assert rt.memcpy_batch_v2(addrs(back), [CHUNK] * N, dsts, [CHUNK] * N, [D2H], [0]) == 0
    assert [b.raw for b in back] == [pattern(i) for i in range(N)]


def test_attribute_indexes_mix_directions_in_one_batch(dev: int) -> None:
    # Seed the second half of device memory, then one batch: copies 0..3 host to device (first
    # half), copies 4..7 device to host (from the second half).
    seed = b"".join(pattern(100 + i) for i in range(4))
    seed_ptr = acl.util.bytes_to_ptr(seed)
    assert rt.memcpy(dev + 4 * CHUNK, 4 * CHUNK, seed_ptr, 4 * CHUNK, c.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    src = host_chunks(4)
    out = host_chunks(4, b"\0" * CHUNK)
    dsts = [dev + i * CHUNK for i in range(4)] + addrs(out)
    srcs = addrs(src) + [dev + (4 + i) * CHUNK for i in range(4)]
    fail, ret = rt.memcpy_batch(dsts, [CHUNK] * 8, srcs, [CHUNK] * 8, [H2D, D2H], [0, 4])
    assert (fail, ret) == (SIZE_MAX, 0)
    assert read_back(dev, 4 * CHUNK) == b"".join(pattern(i) for i in range(4))
    assert [b.raw for b in out] == [pattern(100 + i) for i in range(4)]


def test_a_bad_copy_is_named_and_nothing_moves(dev: int) -> None:
    assert rt.memset(dev, N * CHUNK, 0, N * CHUNK) == 0
    src = host_chunks(4)
    # Copy 2 says device to host, but its destination is device memory.
    dsts = [dev + i * CHUNK for i in range(4)]
    fail, ret = rt.memcpy_batch(dsts, [CHUNK] * 4, addrs(src), [CHUNK] * 4, [H2D, D2H, H2D], [0, 2, 3])
    assert ret == c.ACL_ERROR_RT_PARAM_INVALID and fail == 2
    assert read_back(dev, 4 * CHUNK) == bytes(4 * CHUNK)
    acl.get_recent_err_msg()


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned host memory", "plain host memory"])
def test_async_batches_run_on_the_stream(dev: int, stream: int, pinned: bool) -> None:
    size = N * CHUNK
    data = b"".join(pattern(50 + i) for i in range(N))
    keep: List[object] = []
    if pinned:
        src, ret = rt.malloc_host(size)
        assert ret == 0
        dst, ret = rt.malloc_host(size)
        assert ret == 0
        ctypes.memmove(src, data, size)
        ctypes.memset(dst, 0, size)
    else:
        sbuf, dbuf = ctypes.create_string_buffer(data, size), ctypes.create_string_buffer(size)
        keep += [sbuf, dbuf]
        src, dst = ctypes.addressof(sbuf), ctypes.addressof(dbuf)
    try:
        offsets = [i * CHUNK for i in range(N)]
        fail, ret = rt.memcpy_batch_async(
            [dev + o for o in offsets], [CHUNK] * N, [src + o for o in offsets], [CHUNK] * N, [H2D], [0], stream
        )
        assert (fail, ret) == (SIZE_MAX, 0)
        assert rt.memcpy_batch_async_v2(
            [dst + o for o in offsets], [CHUNK] * N, [dev + o for o in offsets], [CHUNK] * N, [D2H], [0], stream
        ) == 0
        assert rt.synchronize_stream(stream) == 0
        assert ctypes.string_at(dst, size) == data
    finally:
        if pinned:
            assert rt.free_host(src) == 0
            assert rt.free_host(dst) == 0


def test_lists_of_unequal_length_are_refused_before_c(dev: int) -> None:
    with pytest.raises(ValueError):
        rt.memcpy_batch([dev], [CHUNK, CHUNK], [dev], [CHUNK], [H2D], [0])
    with pytest.raises(ValueError):
        rt.memcpy_batch_v2([dev], [CHUNK], [dev], [CHUNK], [H2D, D2H], [0])

