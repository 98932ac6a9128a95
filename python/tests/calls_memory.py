"""Call cases (pyacl_cases.py) of the memory family, for test_every_function.py.

Each case makes what it needs (device memory, buffers, physical allocations, reservations)
inside its functions and registers the release in ``ctx.cleanup``; the bad calls pass bogus
handles (checked table entries) or real memory with a wrong size, flag or kind, never an
address the library would dereference."""

from __future__ import annotations

import ctypes
import os
import struct
from typing import Any, Callable, List

import acl  # noqa: F401
from pyacl_cases import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, BAD_HANDLE, Case, Ctx

rt = acl.rt

PARAM = 107000  # ACL_ERROR_RT_PARAM_INVALID
INVALID_PARAM = ACL_ERROR_INVALID_PARAM  # 100000: NULL pointers and the acl* functions' checks
NOT_SUPPORTED = ACL_ERROR_RT_FEATURE_NOT_SUPPORT  # 207000
INVALID_DEVICE = 107001
INVALID_HANDLE = 107017
HOST_MEMORY_ALREADY_REGISTERED = 507910  # ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
HOST_MEMORY_NOT_REGISTERED = 507911  # ACL_ERROR_HOST_MEMORY_NOT_REGISTERED
INVALID_MEMORY_TYPE = 107016  # ACL_ERROR_RT_INVALID_MEMORY_TYPE
SIZE_MAX = (1 << 64) - 1

H2D, D2H, D2D, INNER_D2D = 1, 2, 3, 6
HOST, DEVICE = 0, 1  # ACL_MEM_LOCATION_TYPE_*
MANAGED_DEVICE, MANAGED_HOST = 1, 2  # ACL_MEM_LOCATIONTYPE_*
MIB2 = 2 << 20
PROP = {"handleType": 0, "allocationType": 0, "memAttr": 1, "location": {"id": 0, "type": DEVICE}}
LOC = {"id": 0, "type": DEVICE}
BATCH_H2D = {"dstLoc": {"id": 0, "type": DEVICE}, "srcLoc": {"id": 0, "type": HOST}}
BATCH_D2H = {"dstLoc": {"id": 0, "type": HOST}, "srcLoc": {"id": 0, "type": DEVICE}}

CASES: List[Case] = []


def case(name: str, valid: Callable[[Ctx], Any], bad: Callable[[Ctx], Any], code: Any = PARAM, **kw: Any) -> None:
    CASES.append(Case(name, valid, bad, code, **kw))


def ok_ptr(result: Any, ctx: Ctx) -> None:
    assert result[0] != 0, result


def out_is(wanted: Any, index: int = 0) -> Callable[[Any, Ctx], None]:
    def check(result: Any, ctx: Ctx) -> None:
        assert result[index] == wanted, result

    return check


def holds(predicate: Callable[[Any, Ctx], bool]) -> Callable[[Any, Ctx], None]:
    """A check that `predicate(result, ctx)` is true."""

    def check(result: Any, ctx: Ctx) -> None:
        assert predicate(result, ctx), result

    return check


def made(ctx: Ctx, release: Callable[[int], int], result: Any) -> Any:
    """`result` (``handle, ret``) of a create call, its release registered when ret is 0."""
    if result[-1] == 0:
        ctx.cleanup.append((release, result[0]))
    return result


# ---- helpers: what cases make, released after them ------------------------------------------


def dev(ctx: Ctx, size: int = 1 << 20) -> int:
    p, ret = rt.malloc(size, 0)
    assert ret == 0
    ctx.cleanup.append((rt.free, p))
    return p


def host_buffer(ctx: Ctx, size: int) -> int:
    """Page-aligned plain host memory (not the runtime's), alive until the case's cleanup."""
    raw = ctypes.create_string_buffer(size + 4096)
    addr = (ctypes.addressof(raw) + 4095) & ~4095
    ctx.cleanup.append((lambda _: None, raw))
    return addr


def keep(ctx: Ctx, value: Any) -> Any:
    ctx.cleanup.append((lambda _: None, value))
    return value


def physical(ctx: Ctx, size: int = MIB2) -> int:
    handle, ret = rt.malloc_physical(size, PROP, 0)
    assert ret == 0 and handle != 0
    ctx.cleanup.append((rt.free_physical, handle))
    return handle


def reserved(ctx: Ctx, size: int = MIB2) -> int:
    va, ret = rt.reserve_mem_address(size, 0, 0, 0)
    assert ret == 0 and va != 0
    ctx.cleanup.append((rt.release_mem_address, va))
    return va


def mapped(ctx: Ctx, size: int = MIB2) -> int:
    """A reservation with a fresh physical allocation mapped at it (unmapped in cleanup)."""
    handle = physical(ctx, size)
    va = reserved(ctx, size)
    assert rt.map_mem(va, size, 0, handle, 0) == 0
    ctx.cleanup.append((rt.unmap_mem, va))
    return va


def exported(ctx: Ctx) -> int:
    sh, ret = rt.mem_export_to_shareable_handle(physical(ctx), 0, 0)
    assert ret == 0 and sh != 0
    return sh


def managed(ctx: Ctx, size: int = MIB2) -> int:
    p, ret = rt.mem_alloc_managed(size, 1)  # ACL_RT_MEM_ATTACH_GLOBAL
    assert ret == 0 and p != 0
    ctx.cleanup.append((rt.free, p))
    return p


def mbuf(ctx: Ctx, size: int = 4096) -> int:
    buf, ret = rt.alloc_buf(size)
    assert ret == 0 and buf != 0
    ctx.cleanup.append((rt.free_buf, buf))
    return buf


def export_key(ctx: Ctx, flags: int = 0) -> str:
    key, ret = rt.ipc_mem_get_export_key(dev(ctx), 1 << 20, 65, flags)
    assert ret == 0 and key
    ctx.cleanup.append((rt.ipc_mem_close, key))
    return key


def data_buffer(ctx: Ctx) -> int:
    buf = acl.create_data_buffer(ctx.dev, 64)
    assert buf != 0
    ctx.cleanup.append((acl.destroy_data_buffer, buf))
    return buf


def freed_ptr(free: Callable[[int], int], result: Any) -> int:
    ptr, ret = result
    if ret == 0:
        assert free(ptr) == 0
    return ret


# ---- allocation and freeing -----------------------------------------------------------------


case("rt.malloc", lambda c: made(c, rt.free, rt.malloc(4096, 0)),
     lambda c: rt.malloc(0, 0), code=INVALID_PARAM, check=ok_ptr)
case("rt.malloc_align32", lambda c: made(c, rt.free, rt.malloc_align32(100, 2)),
     lambda c: rt.malloc_align32(0, 2), code=INVALID_PARAM, check=ok_ptr)
case("rt.malloc_cached", lambda c: made(c, rt.free, rt.malloc_cached(4096, 0)),
     lambda c: rt.malloc_cached(0, 0), code=INVALID_PARAM, check=ok_ptr)
case("rt.malloc_host", lambda c: made(c, rt.free_host, rt.malloc_host(4096)),
     lambda c: rt.malloc_host(0), code=INVALID_PARAM, check=ok_ptr)
case("rt.malloc_with_cfg",
     lambda c: made(c, rt.free,
         rt.malloc_with_cfg(4096, 0, {"attrs": [{"attr": 1, "value": 7}, {"attr": 2, "value": 0}]})),
     # ACL_RT_MEM_ATTR_VA_FLAG is for host memory only.
     lambda c: rt.malloc_with_cfg(4096, 0, [(3, 1)]), check=ok_ptr)
case("rt.malloc_for_task_scheduler",
     lambda c: made(c, rt.free, rt.malloc_for_task_scheduler(4096, 0, None)),
     # ACL_RT_MEM_ATTR_DEVICE_ID must be the current device.
     lambda c: rt.malloc_for_task_scheduler(4096, 0, [(2, 5)]), check=ok_ptr)
case("rt.malloc_host_with_cfg",
     lambda c: made(c, rt.free_host, rt.malloc_host_with_cfg(4096, [(3, 1)])),
     lambda c: rt.malloc_host_with_cfg(4096, {"attrs": None, "numAttrs": 1}), check=ok_ptr)
case("rt.mem_alloc_managed",
     lambda c: made(c, rt.free, rt.mem_alloc_managed(4096, 1)),
     lambda c: rt.mem_alloc_managed(4096, 0), code=INVALID_PARAM, check=ok_ptr)
case("rt.free", lambda c: rt.free(rt.malloc(4096, 0)[0]), lambda c: rt.free(c.host))
case("rt.free_host", lambda c: rt.free_host(rt.malloc_host(4096)[0]), lambda c: rt.free_host(c.dev))
case("rt.free_with_dev_sync", lambda c: rt.free_with_dev_sync(rt.malloc(4096, 0)[0]),
     lambda c: rt.free_with_dev_sync(c.host))
case("rt.free_host_with_dev_sync", lambda c: rt.free_host_with_dev_sync(rt.malloc_host(4096)[0]),
     lambda c: rt.free_host_with_dev_sync(c.dev))


def _get_mem_info_check(result: Any, ctx: Ctx) -> None:
    free, total, _ = result
    assert 0 < free <= total


case("rt.get_mem_info", lambda c: rt.get_mem_info(1), lambda c: rt.get_mem_info(99), code=INVALID_MEMORY_TYPE,
     check=_get_mem_info_check)


def _usage_check(result: Any, ctx: Ctx) -> None:
    infos, _ = result
    assert infos and infos[0]["name"] == "APP" and infos[0]["curMemSize"] >= ctx.size
    assert infos[0]["memPeakSize"] >= infos[0]["curMemSize"]


case("rt.get_mem_usage_info", lambda c: rt.get_mem_usage_info(0, 4), lambda c: rt.get_mem_usage_info(0, 0),
     check=_usage_check)


# ---- what memory is -------------------------------------------------------------------------


def _attributes_check(result: Any, ctx: Ctx) -> None:
    attrs, _ = result
    assert attrs["location"] == {"id": 0, "type": DEVICE} and attrs["pageSize"] > 0


case("rt.pointer_get_attributes", lambda c: rt.pointer_get_attributes(c.dev), lambda c: rt.pointer_get_attributes(0),
     code=INVALID_PARAM, check=_attributes_check)
case("rt.check_mem_type", lambda c: rt.check_mem_type([c.dev, c.dev + 64], 2),
     lambda c: rt.check_mem_type([c.dev], 2, 1), check=out_is(1))
case("rt.mem_get_address_range", lambda c: rt.mem_get_address_range(c.dev + 100),
     lambda c: rt.mem_get_address_range(host_buffer(c, 64)),
     check=holds(lambda r, c: r[0] == c.dev and r[1] >= c.size))
case("rt.host_mem_map_capabilities", lambda c: rt.host_mem_map_capabilities(0, 0),
     lambda c: rt.host_mem_map_capabilities(0, 99),
     check=out_is(1))


# ---- copies and fills -----------------------------------------------------------------------

case("rt.memcpy", lambda c: rt.memcpy(c.dev, c.size, c.host, 4096, H2D),
     lambda c: rt.memcpy(c.dev, 16, c.host, 4096, H2D))
case("rt.memcpy_async", lambda c: rt.memcpy_async(c.dev, c.size, c.host, 4096, H2D, c.stream),
     lambda c: rt.memcpy_async(c.dev, 16, c.host, 4096, H2D, c.stream))
case("rt.memcpy_async_with_condition",
     lambda c: rt.memcpy_async_with_condition(c.host, c.size, c.dev, 4096, D2H, c.stream),
     lambda c: rt.memcpy_async_with_condition(c.host, 16, c.dev, 4096, D2H, c.stream))
case("rt.memcpy_2d", lambda c: rt.memcpy_2d(c.dev, 128, c.host, 64, 64, 4, H2D),
     lambda c: rt.memcpy_2d(c.dev, 128, c.host, 64, 65, 4, H2D), code=INVALID_PARAM)
case("rt.memcpy_2d_async", lambda c: rt.memcpy_2d_async(c.dev, 128, c.dev + 4096, 64, 64, 4, D2D, c.stream),
     lambda c: rt.memcpy_2d_async(c.dev, 128, c.host, 64, 64, 0, H2D, c.stream))
case("rt.memset", lambda c: rt.memset(c.dev, c.size, 0x5A, 4096), lambda c: rt.memset(c.dev, 16, 0, 4096))
case("rt.memset_async", lambda c: rt.memset_async(c.dev, c.size, 1, 4096, c.stream),
     lambda c: rt.memset_async(c.dev, 16, 0, 4096, c.stream))
case("rt.memset_d32", lambda c: rt.memset_d32(c.dev, c.size, 0xDEADBEEF, 16),
     lambda c: rt.memset_d32(c.dev + 1, c.size, 0, 16), code=INVALID_PARAM)
case("rt.memset_d32_async", lambda c: rt.memset_d32_async(c.dev, c.size, 7, 16, c.stream),
     lambda c: rt.memset_d32_async(c.dev, 8, 7, 16, c.stream), code=INVALID_PARAM)


def _memcpy_desc(c: Ctx) -> int:
    """Device memory for a copy descriptor (32 bytes)."""
    return dev(c, 4096)


case("rt.get_memcpy_desc_size", lambda c: rt.get_memcpy_desc_size(INNER_D2D), lambda c: rt.get_memcpy_desc_size(H2D),
     check=out_is(32))
case("rt.set_memcpy_desc", lambda c: rt.set_memcpy_desc(_memcpy_desc(c), INNER_D2D, c.dev, c.dev + 4096, 64, 0),
     lambda c: rt.set_memcpy_desc(_memcpy_desc(c), INNER_D2D, c.dev, c.dev + 4096, 64, c.host),
     code=INVALID_PARAM)


def _memcpy_with_desc(c: Ctx) -> int:
    desc = _memcpy_desc(c)
    assert rt.set_memcpy_desc(desc, INNER_D2D, c.dev, c.dev + 4096, 64, 0) == 0
    return rt.memcpy_async_with_desc(desc, INNER_D2D, c.stream)


case("rt.memcpy_async_with_desc", _memcpy_with_desc,
     lambda c: rt.memcpy_async_with_desc(_memcpy_desc(c), H2D, c.stream))


def _with_offset(c: Ctx, kind: int) -> int:
    # Two base addresses in device memory: the copy reads them when it runs.
    slots = dev(c, 4096)
    bases = keep(c, ctypes.create_string_buffer(struct.pack("<QQ", c.dev, c.dev + 65536), 16))
    assert rt.memcpy(slots, 4096, ctypes.addressof(bases), 16, H2D) == 0
    ret = rt.memcpy_async_with_offset(slots + 8, 4096, 16, slots, 64, 32, kind, c.stream)
    if ret == 0:
        assert rt.synchronize_stream(c.stream) == 0
    return ret


case("rt.memcpy_async_with_offset", lambda c: _with_offset(c, INNER_D2D), lambda c: _with_offset(c, D2D))


def _batch(c: Ctx, fn: Callable[..., Any], async_: bool, bad: bool) -> Any:
    src = keep(c, ctypes.create_string_buffer(b"0123456789abcdef" * 4, 64))
    attrs = [BATCH_D2H] if bad else [BATCH_H2D]  # D2H attributes for a host-to-device copy: wrong
    args = [[c.dev, c.dev + 4096], [64, 64], [ctypes.addressof(src), ctypes.addressof(src) + 32], [32, 32], attrs, [0]]
    if async_:
        args.append(c.stream)
    return fn(*args)


def _fail_index(wanted: int) -> Callable[[Any, Ctx], None]:
    def check(result: Any, ctx: Ctx) -> None:
        assert result[0] == wanted, result

    return check


case("rt.memcpy_batch", lambda c: _batch(c, rt.memcpy_batch, False, False),
     lambda c: _batch(c, rt.memcpy_batch, False, True),
     check=_fail_index(SIZE_MAX))
case("rt.memcpy_batch_v2", lambda c: _batch(c, rt.memcpy_batch_v2, False, False),
     lambda c: _batch(c, rt.memcpy_batch_v2, False, True))
case("rt.memcpy_batch_async", lambda c: _batch(c, rt.memcpy_batch_async, True, False),
     lambda c: _batch(c, rt.memcpy_batch_async, True, True), check=_fail_index(SIZE_MAX))
case("rt.memcpy_batch_async_v2", lambda c: _batch(c, rt.memcpy_batch_async_v2, True, False),
     lambda c: _batch(c, rt.memcpy_batch_async_v2, True, True))

# Device symbols need an NPU: 207000 whatever the arguments.
case("rt.get_symbol_address", lambda c: rt.get_symbol_address(c.host), lambda c: rt.get_symbol_address(0),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.get_symbol_size", lambda c: rt.get_symbol_size(c.host), lambda c: rt.get_symbol_size(0),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.memcpy_from_symbol", lambda c: rt.memcpy_from_symbol(c.host, 64, c.host + 4096, 64, 0, D2H),
     lambda c: rt.memcpy_from_symbol(c.host, 16, 0, 64, 0, D2H), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.memcpy_from_symbol_async",
     lambda c: rt.memcpy_from_symbol_async(c.host, 64, c.host + 4096, 64, 0, D2H, c.stream),
     lambda c: rt.memcpy_from_symbol_async(c.host, 16, 0, 64, 0, D2H, c.stream),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.memcpy_to_symbol", lambda c: rt.memcpy_to_symbol(c.host + 4096, c.host, 64, 0, H2D),
     lambda c: rt.memcpy_to_symbol(0, c.host, 64, 0, H2D), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.memcpy_to_symbol_async", lambda c: rt.memcpy_to_symbol_async(c.host + 4096, c.host, 64, 0, H2D, c.stream),
     lambda c: rt.memcpy_to_symbol_async(0, c.host, 64, 0, H2D, c.stream), code=NOT_SUPPORTED,
     valid_code=NOT_SUPPORTED)


# ---- cache maintenance ----------------------------------------------------------------------

case("rt.mem_flush", lambda c: rt.mem_flush(c.dev, 4096), lambda c: rt.mem_flush(c.dev, 4 * c.size))
case("rt.mem_invalidate", lambda c: rt.mem_invalidate(c.dev, 4096), lambda c: rt.mem_invalidate(c.dev, 4 * c.size))
case("rt.device_l2_cache_flush", lambda c: rt.device_l2_cache_flush(0), lambda c: rt.device_l2_cache_flush(c.host),
     code=INVALID_PARAM)
case("rt.cmo_async", lambda c: rt.cmo_async(c.dev, 4096, 0, c.stream), lambda c: rt.cmo_async(c.dev, 4096, 3, c.stream),
     code=NOT_SUPPORTED)
case("rt.cmo_async_with_barrier", lambda c: rt.cmo_async_with_barrier(c.dev, 4096, 0, 1, c.stream),
     lambda c: rt.cmo_async_with_barrier(c.dev, 4096, 0, 1, BAD_HANDLE), code=NOT_SUPPORTED,
     valid_code=NOT_SUPPORTED)
case("rt.cmo_wait_barrier", lambda c: rt.cmo_wait_barrier({"cmoInfo": [{"cmoType": 0, "barrierId": 1}]}, c.stream, 0),
     lambda c: rt.cmo_wait_barrier(None, c.stream, 0), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.cmo_get_desc_size", lambda c: rt.cmo_get_desc_size(), lambda c: rt.cmo_get_desc_size(),
     code=lambda r: r == (16, 0), check=out_is(16))
case("rt.cmo_set_desc", lambda c: rt.cmo_set_desc(dev(c, 4096), c.dev, 4096),
     lambda c: rt.cmo_set_desc(dev(c, 4096), c.host, 4096))


def _cmo_with_desc(c: Ctx, cmo_type: int) -> int:
    desc = dev(c, 4096)
    assert rt.cmo_set_desc(desc, c.dev, 4096) == 0
    return rt.cmo_async_with_desc(desc, cmo_type, c.stream, 0)


case("rt.cmo_async_with_desc", lambda c: _cmo_with_desc(c, 0), lambda c: _cmo_with_desc(c, 3), code=NOT_SUPPORTED)


# ---- host registration ----------------------------------------------------------------------


def _registered(c: Ctx, size: int = 8192) -> int:
    ptr = host_buffer(c, size)
    _, ret = rt.host_register(ptr, size, 0)  # ACL_HOST_REGISTER_MAPPED
    assert ret == 0
    c.cleanup.append((rt.host_unregister, ptr))
    return ptr


def _register(c: Ctx, v2: bool) -> Any:
    ptr = host_buffer(c, 8192)
    result = rt.host_register_v2(ptr, 8192, 2) if v2 else rt.host_register(ptr, 8192, 0)
    if (result if v2 else result[-1]) == 0:
        c.cleanup.append((rt.host_unregister, ptr))
    return result


def _unregister(c: Ctx) -> int:
    ptr = host_buffer(c, 8192)
    assert rt.host_register(ptr, 8192, 0)[-1] == 0
    return rt.host_unregister(ptr)


def _device_pointer(c: Ctx) -> Any:
    ptr = _registered(c)
    dev_ptr, ret = rt.host_get_device_pointer(ptr + 100, 0)
    return (dev_ptr, ptr, ret)


case("rt.host_register", lambda c: _register(c, False),
     lambda c: rt.host_register(_registered(c), 8192, 0), code=HOST_MEMORY_ALREADY_REGISTERED, check=ok_ptr)
case("rt.host_register_v2", lambda c: _register(c, True), lambda c: rt.host_register_v2(host_buffer(c, 8192), 8192, 0))
case("rt.host_unregister", _unregister, lambda c: rt.host_unregister(host_buffer(c, 64)),
     code=HOST_MEMORY_NOT_REGISTERED)
# The device address of registered memory is the host address itself.
case("rt.host_get_device_pointer", _device_pointer, lambda c: rt.host_get_device_pointer(host_buffer(c, 64), 0),
     check=lambda r, c: out_is(r[1] + 100)(r, c))


# ---- managed memory -------------------------------------------------------------------------


def _managed_attr(c: Ctx, data_size: int) -> Any:
    m = managed(c)
    out = keep(c, (ctypes.c_int32 * 4)())
    return rt.mem_managed_get_attr(5, m, MIB2, ctypes.addressof(out), data_size)


def _managed_attrs(c: Ctx, sizes: List[int]) -> Any:
    m = managed(c)
    assert rt.mem_managed_advise(m, MIB2, 2, {"type": MANAGED_DEVICE, "id": 0}) == 0  # SET_PREFERRED_LOCATION
    out = keep(c, (ctypes.c_int32 * 2)())
    base = ctypes.addressof(out)
    ret = rt.mem_managed_get_attrs([4, 5], m, MIB2, [base, base + 4], sizes)  # PREFERRED_LOCATION_TYPE, _ID
    return ret if ret != 0 else (list(out), ret)


case("rt.mem_managed_get_attr", lambda c: _managed_attr(c, 4), lambda c: _managed_attr(c, 3))
case("rt.mem_managed_get_attrs", lambda c: _managed_attrs(c, [4, 4]), lambda c: _managed_attrs(c, [4, 3]),
     check=out_is([MANAGED_DEVICE, 0]))
case("rt.mem_managed_advise", lambda c: rt.mem_managed_advise(managed(c), MIB2, 0, (MANAGED_DEVICE, 0)),
     lambda c: rt.mem_managed_advise(managed(c), 4096, 0, (MANAGED_DEVICE, 0)))
case("rt.mem_managed_prefetch_async",
     lambda c: rt.mem_managed_prefetch_async(managed(c), MIB2, {"type": MANAGED_DEVICE, "id": 0}, 0, c.stream),
     lambda c: rt.mem_managed_prefetch_async(managed(c), MIB2, {"type": MANAGED_DEVICE, "id": 0}, 1, c.stream),
     code=INVALID_PARAM)
case("rt.mem_managed_prefetch_batch_async",
     lambda c: rt.mem_managed_prefetch_batch_async([managed(c), managed(c)], [MIB2, MIB2],
                                                   [(MANAGED_DEVICE, 0), (MANAGED_HOST, 0)], [0, 1], 0, c.stream),
     lambda c: rt.mem_managed_prefetch_batch_async([managed(c)], [MIB2], [(MANAGED_DEVICE, 0)], [1], 0, c.stream))


# ---- virtual memory management --------------------------------------------------------------

case("rt.mem_get_allocation_granularity", lambda c: rt.mem_get_allocation_granularity(PROP, 0),
     lambda c: rt.mem_get_allocation_granularity(None, 0), code=INVALID_PARAM,
     check=out_is(MIB2))
case("rt.malloc_physical",
     lambda c: made(c, rt.free_physical, rt.malloc_physical(MIB2, PROP, 0)),
     lambda c: rt.malloc_physical(MIB2, PROP, 1), check=ok_ptr)
case("rt.free_physical", lambda c: rt.free_physical(rt.malloc_physical(MIB2, PROP, 0)[0]),
     lambda c: rt.free_physical(BAD_HANDLE), code=INVALID_HANDLE)
case("rt.mem_get_allocation_properties_from_handle",
     lambda c: rt.mem_get_allocation_properties_from_handle(physical(c)),
     lambda c: rt.mem_get_allocation_properties_from_handle(BAD_HANDLE), code=INVALID_HANDLE,
     check=out_is(dict(PROP, reserve=0)))
case("rt.reserve_mem_address",
     lambda c: made(c, rt.release_mem_address, rt.reserve_mem_address(MIB2, 0, 0, 0)),
     lambda c: rt.reserve_mem_address(MIB2, 3, 0, 0), check=ok_ptr)
case("rt.reserve_mem_address_no_uc_memory", lambda c: rt.reserve_mem_address_no_uc_memory(1 << 30, 0, 0, 0),
     lambda c: rt.reserve_mem_address_no_uc_memory(1 << 30, 0, 0, 0), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.release_mem_address", lambda c: rt.release_mem_address(rt.reserve_mem_address(MIB2, 0, 0, 0)[0]),
     lambda c: rt.release_mem_address(mapped(c)))


def _map(c: Ctx, fn: Callable[..., int], flags: int) -> int:
    handle, va = physical(c), reserved(c)
    ret = fn(va, MIB2, 0, handle, flags)
    if ret == 0:
        c.cleanup.append((rt.unmap_mem, va))
    return ret


case("rt.map_mem", lambda c: _map(c, rt.map_mem, 0), lambda c: _map(c, rt.map_mem, 1))
case("rt.mem_map_no_access", lambda c: _map(c, rt.mem_map_no_access, 0), lambda c: _map(c, rt.mem_map_no_access, 1))


def _unmap(c: Ctx) -> int:
    handle, va = physical(c), reserved(c)
    assert rt.map_mem(va, MIB2, 0, handle, 0) == 0
    return rt.unmap_mem(va)


case("rt.unmap_mem", _unmap, lambda c: rt.unmap_mem(reserved(c)))
case("rt.mem_retain_allocation_handle",
     lambda c: made(c, rt.free_physical,
         rt.mem_retain_allocation_handle(mapped(c))),
     lambda c: rt.mem_retain_allocation_handle(reserved(c)), check=ok_ptr)
case("rt.mem_set_access",
     lambda c: rt.mem_set_access(mapped(c), MIB2, [{"flags": 1, "location": LOC}]),
     lambda c: rt.mem_set_access(mapped(c), MIB2, [{"flags": 2, "location": LOC}]))


def _access_after_set(c: Ctx) -> Any:
    va = mapped(c)
    assert rt.mem_set_access(va, MIB2, [(1, LOC)]) == 0
    return rt.mem_get_access(va, LOC)


case("rt.mem_get_access", _access_after_set, lambda c: rt.mem_get_access(mapped(c), None), code=INVALID_PARAM,
     check=out_is(1))
case("rt.mem_export_to_shareable_handle", lambda c: rt.mem_export_to_shareable_handle(physical(c), 0, 0),
     lambda c: rt.mem_export_to_shareable_handle(BAD_HANDLE, 0, 0), code=INVALID_HANDLE, check=ok_ptr)


def _export_v2(c: Ctx, handle: int) -> Any:
    out = keep(c, ctypes.c_uint64(0))
    ret = rt.mem_export_to_shareable_handle_v2(handle, 0, 1, ctypes.addressof(out))
    return (out.value, ret)


case("rt.mem_export_to_shareable_handle_v2", lambda c: _export_v2(c, physical(c)), lambda c: _export_v2(c, BAD_HANDLE),
     code=INVALID_HANDLE, check=ok_ptr)
case("rt.mem_set_pid_to_shareable_handle", lambda c: rt.mem_set_pid_to_shareable_handle(exported(c), [os.getpid()]),
     lambda c: rt.mem_set_pid_to_shareable_handle(12345, [os.getpid()]))
case("rt.mem_set_pid_to_shareable_handle_v2",
     lambda c: rt.mem_set_pid_to_shareable_handle_v2(exported(c).to_bytes(8, "little"), 1, [os.getpid()]),
     lambda c: rt.mem_set_pid_to_shareable_handle_v2(None, 1, [os.getpid()]), code=INVALID_PARAM)
# Importing a handle this process exported: 207000 (the header); the cross-process import is
# test_memory_vmm.py's.
case("rt.mem_import_from_shareable_handle", lambda c: rt.mem_import_from_shareable_handle(exported(c), 0),
     lambda c: rt.mem_import_from_shareable_handle(12345, 0), valid_code=NOT_SUPPORTED)


def _import_v2(c: Ctx, value: int) -> Any:
    sh = keep(c, ctypes.c_uint64(value))
    return rt.mem_import_from_shareable_handle_v2(ctypes.addressof(sh), 1, 0)


case("rt.mem_import_from_shareable_handle_v2", lambda c: _import_v2(c, exported(c)), lambda c: _import_v2(c, 12345),
     valid_code=NOT_SUPPORTED)
# Links between NPUs need NPUs: 207000.
case("rt.mem_map_set_link", lambda c: rt.mem_map_set_link(physical(c), 0), lambda c: rt.mem_map_set_link(BAD_HANDLE, 0),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.mem_map_selected_link", lambda c: rt.mem_map_selected_link(mapped(c), MIB2, mapped(c), 0),
     lambda c: rt.mem_map_selected_link(0, MIB2, 0, 0), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.mem_p2p_map", lambda c: rt.mem_p2p_map(c.dev, c.size, 1, 0), lambda c: rt.mem_p2p_map(c.dev, c.size, 99, 0),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)


# ---- IPC memory -----------------------------------------------------------------------------

case("rt.ipc_mem_get_export_key",
     lambda c: made(c, rt.ipc_mem_close,
         rt.ipc_mem_get_export_key(dev(c), 1 << 20, 65, 0)),
     lambda c: rt.ipc_mem_get_export_key(dev(c), 1 << 20, 64, 0),
     check=holds(lambda r, c: len(r[0]) > 0))
case("rt.ipc_mem_set_import_pid", lambda c: rt.ipc_mem_set_import_pid(export_key(c), [os.getpid()]),
     lambda c: rt.ipc_mem_set_import_pid(export_key(c), [], 0),
     code=INVALID_PARAM)
case("rt.ipc_mem_set_attr", lambda c: rt.ipc_mem_set_attr(export_key(c), 0, 0),
     lambda c: rt.ipc_mem_set_attr(export_key(c), 99, 0))
case("rt.ipc_mem_import_pid_inter_server",
     lambda c: rt.ipc_mem_import_pid_inter_server(export_key(c), [{"sdid": 0, "pid": [os.getpid()]}]),
     lambda c: rt.ipc_mem_import_pid_inter_server(None, [(0, [os.getpid()])]),
     code=INVALID_PARAM, valid_code=NOT_SUPPORTED)
def _import_key(c: Ctx) -> Any:
    # The exporting process may import its own key (without pid validation): a second mapping,
    # closed before the export is withdrawn.
    key = export_key(c, 1)
    return made(c, lambda _: rt.ipc_mem_close(key), rt.ipc_mem_import_by_key(key, 0))


case("rt.ipc_mem_import_by_key", _import_key, lambda c: rt.ipc_mem_import_by_key("no such key", 0), check=ok_ptr)
def _close_export(c: Ctx) -> int:
    key = export_key(c)
    c.cleanup.pop()  # the close export_key registered: this is it
    return rt.ipc_mem_close(key)


case("rt.ipc_mem_close", _close_export,
     lambda c: rt.ipc_mem_close("no such key"))


# ---- shared buffers (aclrtMbuf) -------------------------------------------------------------

case("rt.alloc_buf", lambda c: made(c, rt.free_buf, rt.alloc_buf(4096)),
     lambda c: rt.alloc_buf(0), check=ok_ptr)
case("rt.free_buf", lambda c: rt.free_buf(rt.alloc_buf(64)[0]), lambda c: rt.free_buf(BAD_HANDLE), code=INVALID_HANDLE)
case("rt.get_buf_data", lambda c: rt.get_buf_data(mbuf(c)), lambda c: rt.get_buf_data(BAD_HANDLE), code=INVALID_HANDLE,
     check=holds(lambda r, c: r[0] != 0 and r[1] == 4096))
case("rt.set_buf_data_len", lambda c: rt.set_buf_data_len(mbuf(c), 100), lambda c: rt.set_buf_data_len(mbuf(c), 4097))


def _data_len(c: Ctx) -> Any:
    b = mbuf(c)
    assert rt.set_buf_data_len(b, 123) == 0
    return rt.get_buf_data_len(b)


case("rt.get_buf_data_len", _data_len, lambda c: rt.get_buf_data_len(BAD_HANDLE), code=INVALID_HANDLE,
     check=out_is(123))


def _user_data(c: Ctx, fn: Callable[..., int], size: int, offset: int) -> Any:
    b = mbuf(c)
    data = keep(c, ctypes.create_string_buffer(b"user-data-here", 96))
    if fn is rt.get_buf_user_data:
        assert rt.set_buf_user_data(b, ctypes.addressof(data), 14, 0) == 0
        back = keep(c, ctypes.create_string_buffer(96))
        ret = fn(b, ctypes.addressof(back), size, offset)
        return (back.raw[:14], ret)
    return fn(b, ctypes.addressof(data), size, offset)


case("rt.set_buf_user_data", lambda c: _user_data(c, rt.set_buf_user_data, 14, 0),
     lambda c: _user_data(c, rt.set_buf_user_data, 14, 90))
case("rt.get_buf_user_data", lambda c: _user_data(c, rt.get_buf_user_data, 14, 0),
     lambda c: _user_data(c, rt.get_buf_user_data, 14, 90),
     check=out_is(b"user-data-here"))
case("rt.copy_buf_ref", lambda c: made(c, rt.free_buf,
    rt.copy_buf_ref(mbuf(c))), lambda c: rt.copy_buf_ref(BAD_HANDLE), code=INVALID_HANDLE, check=ok_ptr)


def _chain(c: Ctx) -> int:
    head = mbuf(c)
    member, ret = rt.alloc_buf(64)
    assert ret == 0
    ret = rt.append_buf_chain(head, member)
    if ret != 0:
        rt.free_buf(member)
    return ret


def _chained(c: Ctx) -> int:
    head = mbuf(c)
    member, _ = rt.alloc_buf(64)
    assert rt.append_buf_chain(head, member) == 0
    return head


case("rt.append_buf_chain", _chain, lambda c: rt.append_buf_chain(mbuf(c), BAD_HANDLE), code=INVALID_HANDLE)
case("rt.get_buf_chain_num", lambda c: rt.get_buf_chain_num(_chained(c)),
     lambda c: rt.get_buf_chain_num(BAD_HANDLE), code=INVALID_HANDLE,
     check=out_is(2))
case("rt.get_buf_from_chain", lambda c: rt.get_buf_from_chain(_chained(c), 1),
     lambda c: rt.get_buf_from_chain(_chained(c), 2), check=ok_ptr)


# ---- data buffers (aclDataBuffer) -----------------------------------------------------------

case("create_data_buffer", lambda c: (lambda b: (c.cleanup.append((acl.destroy_data_buffer, b)), b)[1])(
    acl.create_data_buffer(c.dev, 64)),
    # The vendor lets a description hold NULL and 0 bytes: the "bad" call succeeds too.
    lambda c: (lambda b: (c.cleanup.append((acl.destroy_data_buffer, b)), b)[1])(acl.create_data_buffer(0, 0)),
    valid_code=lambda r: r != 0, code=lambda r: r != 0)
case("destroy_data_buffer", lambda c: acl.destroy_data_buffer(acl.create_data_buffer(c.dev, 64)),
     lambda c: acl.destroy_data_buffer(BAD_HANDLE), code=INVALID_PARAM)
case("get_data_buffer_addr", lambda c: acl.get_data_buffer_addr(data_buffer(c)),
     lambda c: acl.get_data_buffer_addr(BAD_HANDLE), valid_code=lambda r: r != 0, code=lambda r: r == 0,
     check=holds(lambda r, c: r == c.dev))
case("get_data_buffer_size", lambda c: acl.get_data_buffer_size(data_buffer(c)),
     lambda c: acl.get_data_buffer_size(BAD_HANDLE), valid_code=64, code=0)
case("get_data_buffer_size_v2", lambda c: acl.get_data_buffer_size_v2(data_buffer(c)),
     lambda c: acl.get_data_buffer_size_v2(BAD_HANDLE), valid_code=64, code=0)


def _update(c: Ctx) -> Any:
    b = data_buffer(c)
    ret = acl.update_data_buffer(b, c.dev + 64, 32)
    return (acl.get_data_buffer_addr(b), acl.get_data_buffer_size_v2(b), ret)


case("update_data_buffer", _update, lambda c: acl.update_data_buffer(BAD_HANDLE, c.dev, 32), code=INVALID_PARAM,
     check=holds(lambda r, c: r[:2] == (c.dev + 64, 32)))


# ---- HBM errors and snapshots: need an NPU, 207000 ------------------------------------------

case("rt.get_mem_uce_info", lambda c: rt.get_mem_uce_info(0, 4), lambda c: rt.get_mem_uce_info(0, 0),
     code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.mem_uce_repair", lambda c: rt.mem_uce_repair(0, [{"addr": c.dev, "len": 4096}]),
     lambda c: rt.mem_uce_repair(0, []), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.snap_shot_process_backup", lambda c: rt.snap_shot_process_backup(os.getpid(), {"backupFlags": 0}),
     lambda c: rt.snap_shot_process_backup(-1, None), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)
case("rt.snap_shot_process_restore", lambda c: rt.snap_shot_process_restore(os.getpid(), {"restoreFlags": 0}),
     lambda c: rt.snap_shot_process_restore(-1, None), code=NOT_SUPPORTED, valid_code=NOT_SUPPORTED)


def _snapshot_callback(device_id: int, args: int) -> int:
    return 0


case("rt.snap_shot_callback_register", lambda c: rt.snap_shot_callback_register(0, _snapshot_callback, None),
     lambda c: rt.snap_shot_callback_register(99, _snapshot_callback, None), code=NOT_SUPPORTED,
     valid_code=NOT_SUPPORTED)
case("rt.snap_shot_callback_unregister", lambda c: rt.snap_shot_callback_unregister(0, _snapshot_callback),
     lambda c: rt.snap_shot_callback_unregister(99, _snapshot_callback), code=NOT_SUPPORTED,
     valid_code=NOT_SUPPORTED)
