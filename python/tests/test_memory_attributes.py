"""What acl.rt tells about memory, through the hand-written functions of acl/_rt_memory.py:
pointer attributes of every kind of memory, memory types, usage by component, allocations with
settings, managed memory's advice and prefetch locations, copies through base addresses held in
device memory, and the snapshot callback shim (never letting a Python exception into C)."""

from __future__ import annotations

import ctypes
import logging
import struct
from typing import List

import acl
from acl import _rt_memory
from acl import constants as c

rt = acl.rt
HOST, DEVICE, UNREGISTERED, MANAGED = 0, 1, 2, 3  # ACL_MEM_LOCATION_TYPE_*
MANAGED_DEVICE, MANAGED_HOST = 1, 2  # ACL_MEM_LOCATIONTYPE_*
MEM_TYPE_DEV = 2  # ACL_RT_MEM_TYPE_DEV
MIB2 = 2 << 20
INNER_D2D = 6


def test_pointer_attributes_of_every_kind_of_memory(device: int) -> None:
    dev, ret = rt.malloc(4096, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    host, ret = rt.malloc_host(4096)
    assert ret == 0
    managed, ret = rt.mem_alloc_managed(MIB2, 1)
    assert ret == 0
    plain = ctypes.create_string_buffer(64)
    try:
        attrs, ret = rt.pointer_get_attributes(dev + 8)
        assert ret == 0 and attrs["location"] == {"id": 0, "type": DEVICE}
        attrs, ret = rt.pointer_get_attributes(host)
        assert ret == 0 and attrs["location"]["type"] == HOST
        attrs, ret = rt.pointer_get_attributes(managed)
        assert ret == 0 and attrs["location"] == {"id": 0, "type": MANAGED}
        attrs, ret = rt.pointer_get_attributes(ctypes.addressof(plain))
        assert ret == 0 and attrs["location"]["type"] == UNREGISTERED and attrs["pageSize"] > 0
        assert rt.check_mem_type([dev, dev + 100], MEM_TYPE_DEV) == (1, 0)
        assert rt.check_mem_type([dev, host], MEM_TYPE_DEV) == (0, 0)
    finally:
        assert rt.free(managed) == 0
        assert rt.free_host(host) == 0
        assert rt.free(dev) == 0


def test_usage_info_follows_allocations(device: int) -> None:
    def app_bytes() -> int:
        infos, ret = rt.get_mem_usage_info(0, 8)
        assert ret == 0
        return sum(i["curMemSize"] for i in infos if i["name"] == "APP")

    before = app_bytes()
    dev, ret = rt.malloc_with_cfg(8 << 20, c.ACL_MEM_MALLOC_HUGE_ONLY, [(1, 42)])  # MODULE_ID 42
    assert ret == 0
    try:
        assert app_bytes() >= before + (8 << 20)
        attrs, ret = rt.pointer_get_attributes(dev)
        assert ret == 0 and attrs["location"] == {"id": 0, "type": DEVICE}
        # The memory works as any device memory.
        assert rt.memset(dev, 8 << 20, 0x33, 4096) == 0
        out = bytearray(16)
        assert rt.memcpy(acl.util.bytes_to_ptr(out), 16, dev, 16, c.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert out == b"\x33" * 16
    finally:
        assert rt.free(dev) == 0
    assert app_bytes() <= before


def test_host_memory_with_settings_is_pinned_host_memory(device: int) -> None:
    ptr, ret = rt.malloc_host_with_cfg(4096, {"attrs": [{"attr": 3, "value": 1}, {"attr": 1, "value": 3}]})
    assert ret == 0 and ptr != 0
    try:
        attrs, ret = rt.pointer_get_attributes(ptr)
        assert ret == 0 and attrs["location"]["type"] == HOST
        ctypes.memmove(ptr, b"pinned", 6)
        assert ctypes.string_at(ptr, 6) == b"pinned"
    finally:
        assert rt.free_host(ptr) == 0


def test_host_mem_map_capabilities_name_the_copy_engines(device: int) -> None:
    reach = {hac: rt.host_mem_map_capabilities(0, hac) for hac in range(10)}
    assert all(ret == 0 for _, ret in reach.values())
    assert {hac for hac, (cap, _) in reach.items() if cap == 1} == {0, 4, 6}  # STARS, PCIe DMA, SDMA


def test_managed_memory_reports_advice_and_prefetches(stream: int) -> None:
    m, ret = rt.mem_alloc_managed(2 * MIB2, 1)
    assert ret == 0
    try:
        out = (ctypes.c_int32 * 4)()
        base = ctypes.addressof(out)
        assert rt.mem_managed_advise(m, 2 * MIB2, 2, (MANAGED_DEVICE, 0)) == 0  # SET_PREFERRED_LOCATION
        assert rt.mem_managed_get_attrs([4, 5], m, 2 * MIB2, [base, base + 4], [4, 4]) == 0
        assert list(out)[:2] == [MANAGED_DEVICE, 0]
        # The two halves go to different places, then the second half alone is asked.
        assert rt.mem_managed_prefetch_batch_async(
            [m, m + MIB2], [MIB2, MIB2], [(MANAGED_DEVICE, 0), {"type": MANAGED_HOST, "id": 0}], [0, 1], 0, stream
        ) == 0
        assert rt.synchronize_stream(stream) == 0
        assert rt.mem_managed_get_attrs([7, 7], m, MIB2, [base, base + 4], [4, 4]) == 0
        assert out[0] == MANAGED_DEVICE
        assert rt.mem_managed_get_attrs([7], m + MIB2, MIB2, [base + 8], [4]) == 0
        assert out[2] == MANAGED_HOST
        assert rt.mem_managed_prefetch_async(m + MIB2, MIB2, (MANAGED_DEVICE, 0), 0, stream) == 0
        assert rt.synchronize_stream(stream) == 0
        assert rt.mem_managed_get_attrs([7], m, 2 * MIB2, [base], [4]) == 0
        assert out[0] == MANAGED_DEVICE
    finally:
        assert rt.free(m) == 0


def test_copy_through_base_addresses_held_in_device_memory(stream: int) -> None:
    dev, ret = rt.malloc(1 << 20, c.ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    try:
        src, dst = dev + 65536, dev + 131072
        slots = dev
        bases = struct.pack("<QQ", src, dst)
        assert rt.memcpy(slots, 16, acl.util.bytes_to_ptr(bases), 16, c.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        data = bytes(range(200))
        assert rt.memcpy(src, 4096, acl.util.bytes_to_ptr(data), 200, c.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert rt.memset(dst, 4096, 0, 4096) == 0
        # 100 bytes from *slots[0] + 50 to *slots[1] + 10.
        assert rt.memcpy_async_with_offset(slots + 8, 4096, 10, slots, 100, 50, INNER_D2D, stream) == 0
        assert rt.synchronize_stream(stream) == 0
        out = bytearray(128)
        assert rt.memcpy(acl.util.bytes_to_ptr(out), 128, dst, 128, c.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert bytes(out) == bytes(10) + data[50:150] + bytes(18)
    finally:
        assert rt.free(dev) == 0


def test_snapshot_callbacks_never_raise_into_c(caplog) -> None:  # type: ignore[no-untyped-def]
    calls: List[object] = []

    def good(device_id: int, args: int) -> int:
        calls.append((device_id, args))
        return 5

    def bad(device_id: int, args: int) -> int:
        raise RuntimeError("boom")

    # Called through the C function pointer, as the runtime would call it.
    assert _rt_memory._snapshot_wrapper(good)(3, 0x1000) == 5
    assert calls == [(3, 0x1000)]
    with caplog.at_level(logging.ERROR, logger="acl"):
        assert _rt_memory._snapshot_wrapper(bad)(0, None) == 1
    assert "boom" in caplog.text
    # Not supported here: nothing is kept.
    assert rt.snap_shot_callback_register(0, good, None) == c.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert _rt_memory._snapshot_callbacks == {}
    acl.get_recent_err_msg()
