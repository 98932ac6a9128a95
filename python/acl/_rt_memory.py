"""Hand-written pyACL functions of the memory family: those whose C prototypes have structures,
arrays, callbacks or character buffers, so acl/_auto.py cannot build them. acl.rt imports every
public name of this module.

The conventions are acl.rt's (pyACL's): inputs in the C order, addresses and handles as ``int``
(0 or None for NULL), outputs first in the returned tuple and ``ret`` last, 0 for each output
when ``ret`` is not 0 (the one exception, a batch copy's ``fail_index``, is said where it
applies). C arrays are Python lists, whose length is the C count (lists of one call must have
equal lengths, else ``ValueError``). A structure going in is a ``dict`` keyed by the C field
names (missing keys are 0; the snake-case spelling of a key is accepted too); a structure coming
out is a ``dict`` of its fields, keyed the same way. A location (``aclrtMemLocation``,
``aclrtMemManagedLocation``) is ``{"id": int, "type": int}``; an ``(id, type)`` pair is accepted
for ``aclrtMemLocation`` and a ``(type, id)`` pair for ``aclrtMemManagedLocation`` (the order of
the C fields).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    byref,
    c_char,
    c_int,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _lib
from ._conv import declared, field as _get, handle_in as _in

__all__: List[str] = [
    "malloc_with_cfg", "malloc_for_task_scheduler", "malloc_host_with_cfg",
    "pointer_get_attributes", "check_mem_type", "get_mem_usage_info",
    "host_mem_map_capabilities",
    "mem_managed_get_attrs", "mem_managed_advise", "mem_managed_prefetch_async",
    "mem_managed_prefetch_batch_async",
    "malloc_physical", "mem_get_allocation_granularity", "mem_get_allocation_properties_from_handle",
    "mem_set_access", "mem_get_access",
    "mem_set_pid_to_shareable_handle", "mem_set_pid_to_shareable_handle_v2",
    "ipc_mem_import_pid_inter_server",
    "memcpy_async_with_offset",
    "memcpy_batch", "memcpy_batch_v2", "memcpy_batch_async", "memcpy_batch_async_v2",
    "cmo_wait_barrier",
    "get_mem_uce_info", "mem_uce_repair",
    "snap_shot_process_backup", "snap_shot_process_restore",
    "snap_shot_callback_register", "snap_shot_callback_unregister",
]

_log = logging.getLogger("acl")

# ---- the C structures (acl/acl_rt.h), sizes checked by python/tests/test_memory_structures.py --

ACL_RT_CMO_MAX_BARRIER_NUM = 6
UCE_INFO_RESERVED_SIZE = 14
ACL_RT_MEM_UCE_INFO_MAX_NUM = 20
ACL_RT_MEM_ATTR_RSV = 0
ACL_RT_MEM_ATTR_MODULE_ID = 1
ACL_RT_MEM_ATTR_DEVICE_ID = 2
ACL_RT_MEM_ATTR_VA_FLAG = 3


class MemLocation(Structure):
    """``aclrtMemLocation``."""

    _fields_ = [("id", c_uint32), ("type", c_int)]


class MemManagedLocation(Structure):
    """``aclrtMemManagedLocation``."""

    _fields_ = [("type", c_int), ("id", c_int32)]


class MallocAttrValue(Union):
    """``aclrtMallocAttrValue``."""

    _fields_ = [("moduleId", c_uint16), ("deviceId", c_uint32), ("vaFlag", c_uint32), ("rsv", c_uint8 * 8)]


class MallocAttribute(Structure):
    """``aclrtMallocAttribute``."""

    _fields_ = [("attr", c_int), ("value", MallocAttrValue)]


class MallocConfig(Structure):
    """``aclrtMallocConfig``."""

    _fields_ = [("attrs", POINTER(MallocAttribute)), ("numAttrs", c_size_t)]


class MemcpyBatchAttr(Structure):
    """``aclrtMemcpyBatchAttr``."""

    _fields_ = [("dstLoc", MemLocation), ("srcLoc", MemLocation), ("rsv", c_uint8 * 16)]


class PtrAttributes(Structure):
    """``aclrtPtrAttributes``."""

    _fields_ = [("location", MemLocation), ("pageSize", c_uint32), ("rsv", c_uint32 * 4)]


class MemUsageInfo(Structure):
    """``aclrtMemUsageInfo``."""

    _fields_ = [
        ("name", c_char * 32),
        ("curMemSize", c_uint64),
        ("memPeakSize", c_uint64),
        ("reserved", c_size_t * 8),
    ]


class MemUceInfo(Structure):
    """``aclrtMemUceInfo``."""

    _fields_ = [("addr", c_void_p), ("len", c_size_t), ("reserved", c_size_t * UCE_INFO_RESERVED_SIZE)]


class BarrierCmoInfo(Structure):
    """``aclrtBarrierCmoInfo``."""

    _fields_ = [("cmoType", c_int), ("barrierId", c_uint32)]


class BarrierTaskInfo(Structure):
    """``aclrtBarrierTaskInfo``."""

    _fields_ = [("barrierNum", c_size_t), ("cmoInfo", BarrierCmoInfo * ACL_RT_CMO_MAX_BARRIER_NUM)]


class PhysicalMemProp(Structure):
    """``aclrtPhysicalMemProp``."""

    _fields_ = [
        ("handleType", c_int),
        ("allocationType", c_int),
        ("memAttr", c_int),
        ("location", MemLocation),
        ("reserve", c_uint64),
    ]


class MemAccessDesc(Structure):
    """``aclrtMemAccessDesc``."""

    _fields_ = [("flags", c_int), ("location", MemLocation), ("rsv", c_uint8 * 12)]


class SnapShotBackupArgs(Structure):
    """``aclrtSnapShotBackupArgs``."""

    _fields_ = [("backupFlags", c_uint32), ("reserved", c_char * 60)]


class SnapShotRestoreArgs(Structure):
    """``aclrtSnapShotRestoreArgs``."""

    _fields_ = [("restoreFlags", c_uint32), ("reserved", c_char * 60)]


#: ``aclrtSnapShotCallBack``: ``uint32_t (*)(int32_t deviceId, void *args)``.
SnapShotCallBack = CFUNCTYPE(c_uint32, c_int32, c_void_p)

#: The structures of this module by C name, for the layout test.
STRUCTURES = {
    "aclrtMemLocation": MemLocation,
    "aclrtMemManagedLocation": MemManagedLocation,
    "aclrtMallocAttrValue": MallocAttrValue,
    "aclrtMallocAttribute": MallocAttribute,
    "aclrtMallocConfig": MallocConfig,
    "aclrtMemcpyBatchAttr": MemcpyBatchAttr,
    "aclrtPtrAttributes": PtrAttributes,
    "aclrtMemUsageInfo": MemUsageInfo,
    "aclrtMemUceInfo": MemUceInfo,
    "aclrtBarrierCmoInfo": BarrierCmoInfo,
    "aclrtBarrierTaskInfo": BarrierTaskInfo,
    "aclrtPhysicalMemProp": PhysicalMemProp,
    "aclrtMemAccessDesc": MemAccessDesc,
    "aclrtSnapShotBackupArgs": SnapShotBackupArgs,
    "aclrtSnapShotRestoreArgs": SnapShotRestoreArgs,
    "aclrtServerPid": _lib.ServerPid,
}

# ---- prototypes -----------------------------------------------------------------------------

_P = c_void_p
_PP = POINTER(c_void_p)
_PSZ = POINTER(c_size_t)

_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "aclrtMallocWithCfg": (c_int, [_PP, c_size_t, c_int, POINTER(MallocConfig)]),
    "aclrtMallocForTaskScheduler": (c_int, [_PP, c_size_t, c_int, POINTER(MallocConfig)]),
    "aclrtMallocHostWithCfg": (c_int, [_PP, c_uint64, POINTER(MallocConfig)]),
    "aclrtPointerGetAttributes": (c_int, [_P, POINTER(PtrAttributes)]),
    "aclrtCheckMemType": (c_int, [_PP, c_uint32, c_uint32, POINTER(c_uint32), c_uint32]),
    "aclrtGetMemUsageInfo": (c_int, [c_int32, POINTER(MemUsageInfo), c_size_t, _PSZ]),
    "aclrtHostMemMapCapabilities": (c_int, [c_uint32, c_int, POINTER(c_int)]),
    "aclrtMemManagedGetAttrs": (c_int, [POINTER(c_int), c_size_t, _P, c_size_t, _PP, _PSZ]),
    "aclrtMemManagedAdvise": (c_int, [_P, c_uint64, c_int, MemManagedLocation]),
    "aclrtMemManagedPrefetchAsync": (c_int, [_P, c_size_t, MemManagedLocation, c_uint32, _P]),
    "aclrtMemManagedPrefetchBatchAsync": (
        c_int,
        [_PP, _PSZ, c_size_t, POINTER(MemManagedLocation), _PSZ, c_size_t, c_uint64, _P],
    ),
    "aclrtMallocPhysical": (c_int, [_PP, c_size_t, POINTER(PhysicalMemProp), c_uint64]),
    "aclrtMemGetAllocationGranularity": (c_int, [POINTER(PhysicalMemProp), c_int, _PSZ]),
    "aclrtMemGetAllocationPropertiesFromHandle": (c_int, [_P, POINTER(PhysicalMemProp)]),
    "aclrtMemSetAccess": (c_int, [_P, c_size_t, POINTER(MemAccessDesc), c_size_t]),
    "aclrtMemGetAccess": (c_int, [_P, POINTER(MemLocation), POINTER(c_uint64)]),
    "aclrtMemSetPidToShareableHandle": (c_int, [c_uint64, POINTER(c_int32), c_size_t]),
    "aclrtMemSetPidToShareableHandleV2": (c_int, [_P, c_int, POINTER(c_int32), c_size_t]),
    "aclrtIpcMemImportPidInterServer": (c_int, [ctypes.c_char_p, POINTER(_lib.ServerPid), c_size_t]),
    "aclrtMemcpyAsyncWithOffset": (c_int, [_P, c_size_t, c_size_t, _P, c_size_t, c_size_t, c_int, _P]),
    "aclrtMemcpyBatch": (
        c_int,
        [_PP, _PSZ, _PP, _PSZ, c_size_t, POINTER(MemcpyBatchAttr), _PSZ, c_size_t, _PSZ],
    ),
    "aclrtMemcpyBatchV2": (c_int, [_PP, _PSZ, _PP, _PSZ, c_size_t, POINTER(MemcpyBatchAttr), _PSZ, c_size_t]),
    "aclrtMemcpyBatchAsync": (
        c_int,
        [_PP, _PSZ, _PP, _PSZ, c_size_t, POINTER(MemcpyBatchAttr), _PSZ, c_size_t, _PSZ, _P],
    ),
    "aclrtMemcpyBatchAsyncV2": (
        c_int,
        [_PP, _PSZ, _PP, _PSZ, c_size_t, POINTER(MemcpyBatchAttr), _PSZ, c_size_t, _P],
    ),
    "aclrtCmoWaitBarrier": (c_int, [POINTER(BarrierTaskInfo), _P, c_uint32]),
    "aclrtGetMemUceInfo": (c_int, [c_int32, POINTER(MemUceInfo), c_size_t, _PSZ]),
    "aclrtMemUceRepair": (c_int, [c_int32, POINTER(MemUceInfo), c_size_t]),
    "aclrtSnapShotProcessBackup": (c_int, [c_int, POINTER(SnapShotBackupArgs)]),
    "aclrtSnapShotProcessRestore": (c_int, [c_int, POINTER(SnapShotRestoreArgs)]),
    "aclrtSnapShotCallbackRegister": (c_int, [c_int, SnapShotCallBack, _P]),
    "aclrtSnapShotCallbackUnregister": (c_int, [c_int, SnapShotCallBack]),
}

_c = declared(_PROTOTYPES)


# ---- Python values to and from the structures -----------------------------------------------


def _addr(value: Optional[int]) -> int:
    return 0 if value is None else int(value)


def _location(value: Any) -> MemLocation:
    if isinstance(value, MemLocation):
        return value
    if value is None:
        return MemLocation()
    if isinstance(value, Mapping):
        return MemLocation(int(_get(value, "id")), int(_get(value, "type")))
    loc_id, loc_type = value
    return MemLocation(int(loc_id), int(loc_type))


def _location_dict(loc: MemLocation) -> Dict[str, int]:
    return {"id": int(loc.id), "type": int(loc.type)}


def _managed_location(value: Any) -> MemManagedLocation:
    if isinstance(value, MemManagedLocation):
        return value
    if value is None:
        return MemManagedLocation()
    if isinstance(value, Mapping):
        return MemManagedLocation(int(_get(value, "type")), int(_get(value, "id")))
    loc_type, loc_id = value
    return MemManagedLocation(int(loc_type), int(loc_id))


def _bytes_into(field: Any, value: Any) -> None:
    """Fills a ``uint8_t``/``char`` array field from bytes or a list of ints (the rest 0)."""
    data = bytes(value) if not isinstance(value, int) else int(value).to_bytes(len(field), "little")
    if len(data) > len(field):
        raise ValueError("%d bytes do not fit a field of %d" % (len(data), len(field)))
    for i, b in enumerate(data):
        field[i] = b


def _malloc_config(cfg: Any) -> Tuple[Optional[MallocConfig], List[Any]]:
    """An ``aclrtMallocConfig`` from `cfg` (None: NULL), and what must stay alive for the call.

    `cfg` is ``{"attrs": [attribute, ...], "numAttrs": n}`` (``numAttrs`` defaults to the list's
    length; ``"attrs": None`` is a NULL array), or just the list of attributes. An attribute is
    ``{"attr": ACL_RT_MEM_ATTR_*, "value": v}`` (or an ``(attr, value)`` pair); `v` is written
    to the union member the attribute names (``moduleId``, ``deviceId``, ``vaFlag``; for
    ``ACL_RT_MEM_ATTR_RSV`` the 8 ``rsv`` bytes, from bytes or an int). `v` may also be a dict
    naming the member: ``{"moduleId": 7}``.
    """
    if cfg is None:
        return None, []
    if isinstance(cfg, Mapping):
        attrs = cfg.get("attrs")
        num = _get(cfg, "numAttrs", None)
    else:
        attrs, num = list(cfg), None
    if attrs is None:
        return MallocConfig(None, int(num or 0)), []
    attrs = list(attrs)
    array = (MallocAttribute * max(len(attrs), 1))()
    for i, a in enumerate(attrs):
        if isinstance(a, Mapping):
            kind, value = int(a.get("attr", 0)), a.get("value", 0)
        else:
            kind, value = int(a[0]), a[1]
        array[i].attr = kind
        v = array[i].value
        if isinstance(value, Mapping):
            for member, member_value in value.items():
                if member == "rsv":
                    _bytes_into(v.rsv, member_value)
                else:
                    setattr(v, member, int(member_value))
        elif kind == ACL_RT_MEM_ATTR_MODULE_ID:
            v.moduleId = int(value)
        elif kind == ACL_RT_MEM_ATTR_DEVICE_ID:
            v.deviceId = int(value)
        elif kind == ACL_RT_MEM_ATTR_VA_FLAG:
            v.vaFlag = int(value)
        else:
            _bytes_into(v.rsv, value)
    count = len(attrs) if num is None else int(num)
    return MallocConfig(ctypes.cast(array, POINTER(MallocAttribute)), count), [array]


def _physical_prop(prop: Any) -> Optional[PhysicalMemProp]:
    """An ``aclrtPhysicalMemProp`` from the dict `prop` (None: NULL): keys ``handleType``,
    ``allocationType``, ``memAttr``, ``location`` (``{"id", "type"}``) and ``reserve``."""
    if prop is None:
        return None
    if isinstance(prop, PhysicalMemProp):
        return prop
    return PhysicalMemProp(
        int(_get(prop, "handleType")),
        int(_get(prop, "allocationType")),
        int(_get(prop, "memAttr")),
        _location(_get(prop, "location", None)),
        int(_get(prop, "reserve")),
    )


def _physical_prop_dict(p: PhysicalMemProp) -> Dict[str, Any]:
    return {
        "handleType": int(p.handleType),
        "allocationType": int(p.allocationType),
        "memAttr": int(p.memAttr),
        "location": _location_dict(p.location),
        "reserve": int(p.reserve),
    }


def _ref(struct: Optional[Structure]) -> Any:
    return None if struct is None else byref(struct)


def _same_length(**lists: Sequence[Any]) -> int:
    lengths = {name: len(v) for name, v in lists.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("the lists must have equal lengths: %s" % lengths)
    return next(iter(lengths.values()), 0)


def _ptr_array(values: Sequence[Optional[int]]) -> Any:
    return (c_void_p * max(len(values), 1))(*[_in(v) for v in values])


def _size_array(values: Sequence[int]) -> Any:
    return (c_size_t * max(len(values), 1))(*[int(v) for v in values])


def _pids(pid: Any) -> Tuple[Any, int]:
    pids = [int(pid)] if isinstance(pid, int) else [int(p) for p in pid]
    return (c_int32 * max(len(pids), 1))(*pids), len(pids)


# ---- allocation with settings ---------------------------------------------------------------


def malloc_with_cfg(size: int, policy: int, cfg: Any = None) -> Tuple[int, int]:
    """``aclrtMallocWithCfg``: ``dev_ptr, ret`` for `size` bytes on the current device.

    `cfg` (``aclrtMallocConfig``) is None (NULL), a list of attributes, or
    ``{"attrs": [...], "numAttrs": n}``; an attribute is ``{"attr": ACL_RT_MEM_ATTR_*,
    "value": v}`` or an ``(attr, value)`` pair, `v` going to the union member the attribute
    names (``MODULE_ID`` 1: ``moduleId``, ``DEVICE_ID`` 2: ``deviceId``, ``VA_FLAG`` 3:
    ``vaFlag``, ``RSV`` 0: the 8 ``rsv`` bytes). Free with ``free``.
    """
    config, keep = _malloc_config(cfg)
    value = c_void_p()
    ret = _c("aclrtMallocWithCfg")(byref(value), size, policy, _ref(config))
    del keep
    return (_addr(value.value) if ret == 0 else 0), ret


def malloc_for_task_scheduler(size: int, policy: int, cfg: Any = None) -> Tuple[int, int]:
    """``aclrtMallocForTaskScheduler``: ``dev_ptr, ret``; `cfg` as for ``malloc_with_cfg``."""
    config, keep = _malloc_config(cfg)
    value = c_void_p()
    ret = _c("aclrtMallocForTaskScheduler")(byref(value), size, policy, _ref(config))
    del keep
    return (_addr(value.value) if ret == 0 else 0), ret


def malloc_host_with_cfg(size: int, cfg: Any = None) -> Tuple[int, int]:
    """``aclrtMallocHostWithCfg``: ``ptr, ret``, pinned host memory (free with ``free_host``).

    `cfg` as for ``malloc_with_cfg`` (``MODULE_ID`` and ``VA_FLAG`` 0 or 1 are taken here);
    ``{"attrs": None}`` is a configuration with NULL attributes (107000).
    """
    config, keep = _malloc_config(cfg)
    value = c_void_p()
    ret = _c("aclrtMallocHostWithCfg")(byref(value), size, _ref(config))
    del keep
    return (_addr(value.value) if ret == 0 else 0), ret


# ---- what memory is -------------------------------------------------------------------------


def pointer_get_attributes(ptr: int) -> Tuple[Any, int]:
    """``aclrtPointerGetAttributes``: ``attributes, ret``; `attributes` is
    ``{"location": {"id": int, "type": ACL_MEM_LOCATION_TYPE_*}, "pageSize": int}``
    (0 when ret is not 0)."""
    attrs = PtrAttributes()
    ret = _c("aclrtPointerGetAttributes")(_in(ptr), byref(attrs))
    if ret != 0:
        return 0, ret
    return {"location": _location_dict(attrs.location), "pageSize": int(attrs.pageSize)}, ret


def check_mem_type(addr_list: Sequence[int], mem_type: int, reserve: int = 0) -> Tuple[int, int]:
    """``aclrtCheckMemType``: ``check_result, ret``; 1 if every address of the list `addr_list`
    is memory of a type in `mem_type` (an OR of ``ACL_RT_MEM_TYPE_*``), else 0. The C `size`
    is ``len(addr_list)``."""
    addrs = list(addr_list)
    result = c_uint32(0)
    ret = _c("aclrtCheckMemType")(_ptr_array(addrs), len(addrs), mem_type, byref(result), reserve)
    return (int(result.value) if ret == 0 else 0), ret


def get_mem_usage_info(device_id: int, input_num: int) -> Tuple[Any, int]:
    """``aclrtGetMemUsageInfo``: ``mem_usage_info, ret``; a list of at most `input_num`
    ``{"name": str, "curMemSize": int, "memPeakSize": int}``, largest first (its length is
    the C ``outputNum``; 0 when ret is not 0)."""
    n = int(input_num)
    array = (MemUsageInfo * max(n, 1))()
    count = c_size_t(0)
    ret = _c("aclrtGetMemUsageInfo")(device_id, array, n, byref(count))
    if ret != 0:
        return 0, ret
    return [
        {
            "name": array[i].name.decode("utf-8", errors="replace"),
            "curMemSize": int(array[i].curMemSize),
            "memPeakSize": int(array[i].memPeakSize),
        }
        for i in range(min(count.value, n))
    ], ret


def host_mem_map_capabilities(device_id: int, hac_type: int) -> Tuple[int, int]:
    """``aclrtHostMemMapCapabilities``: ``capabilities, ret``; ``ACL_RT_HOST_MEM_MAP_SUPPORTED``
    (1) if engine `hac_type` (``ACL_RT_HAC_TYPE_*``) reaches registered host memory, else 0."""
    value = c_int(0)
    ret = _c("aclrtHostMemMapCapabilities")(device_id, hac_type, byref(value))
    return (int(value.value) if ret == 0 else 0), ret


# ---- managed memory -------------------------------------------------------------------------


def mem_managed_get_attrs(
    attributes: Sequence[int], ptr: int, size: int, data: Sequence[int], data_sizes: Sequence[int]
) -> int:
    """``aclrtMemManagedGetAttrs``: as ``mem_managed_get_attr`` for several attributes at once;
    ``data[i]`` is the host address receiving ``attributes[i]`` (``data_sizes[i]`` bytes). The
    three lists have equal lengths (the C ``numAttributes``). Returns ret."""
    n = _same_length(attributes=attributes, data=data, data_sizes=data_sizes)
    kinds = (c_int * max(n, 1))(*[int(a) for a in attributes])
    ret = _c("aclrtMemManagedGetAttrs")(kinds, n, _in(ptr), size, _ptr_array(list(data)), _size_array(list(data_sizes)))
    return ret


def mem_managed_advise(ptr: int, size: int, advise: int, location: Any) -> int:
    """``aclrtMemManagedAdvise``: `location` is ``{"type": ACL_MEM_LOCATIONTYPE_*, "id": int}``
    (``aclrtMemManagedLocation``, passed by value) or a ``(type, id)`` pair. Returns ret."""
    return _c("aclrtMemManagedAdvise")(_in(ptr), size, advise, _managed_location(location))


def mem_managed_prefetch_async(ptr: int, size: int, location: Any, flags: int, stream: Optional[int]) -> int:
    """``aclrtMemManagedPrefetchAsync``: `location` as for ``mem_managed_advise``. Returns ret."""
    return _c("aclrtMemManagedPrefetchAsync")(_in(ptr), size, _managed_location(location), flags, _in(stream))


def mem_managed_prefetch_batch_async(
    ptrs: Sequence[int],
    sizes: Sequence[int],
    prefetch_locs: Sequence[Any],
    prefetch_loc_idxs: Sequence[int],
    flags: int,
    stream: Optional[int],
) -> int:
    """``aclrtMemManagedPrefetchBatchAsync``: the ranges ``ptrs[i]``/``sizes[i]`` (equal
    lengths: the C ``count``) go to ``prefetch_locs[k]`` from index ``prefetch_loc_idxs[k]`` on
    (equal lengths: ``numPrefetchLocs``); locations as for ``mem_managed_advise``. Returns ret."""
    count = _same_length(ptrs=ptrs, sizes=sizes)
    m = _same_length(prefetch_locs=prefetch_locs, prefetch_loc_idxs=prefetch_loc_idxs)
    locs = (MemManagedLocation * max(m, 1))(*[_managed_location(v) for v in prefetch_locs])
    return _c("aclrtMemManagedPrefetchBatchAsync")(
        _ptr_array(list(ptrs)), _size_array(list(sizes)), count, locs,
        _size_array(list(prefetch_loc_idxs)), m, flags, _in(stream),
    )


# ---- virtual memory management --------------------------------------------------------------


def malloc_physical(size: int, prop: Any, flags: int) -> Tuple[int, int]:
    """``aclrtMallocPhysical`` (pyACL: ``handle, ret = acl.rt.malloc_physical(size, prop,
    flags)``): `prop` is the dict of ``aclrtPhysicalMemProp``: ``handleType``,
    ``allocationType``, ``memAttr``, ``location`` (``{"id": device, "type":
    ACL_MEM_LOCATION_TYPE_DEVICE}``) and ``reserve`` (None: NULL)."""
    value = c_void_p()
    ret = _c("aclrtMallocPhysical")(byref(value), size, _ref(_physical_prop(prop)), flags)
    return (_addr(value.value) if ret == 0 else 0), ret


def mem_get_allocation_granularity(prop: Any, option: int) -> Tuple[int, int]:
    """``aclrtMemGetAllocationGranularity``: ``granularity, ret`` for allocations with `prop`
    (as for ``malloc_physical``); `option` an ``ACL_RT_MEM_ALLOC_GRANULARITY_*``."""
    value = c_size_t(0)
    ret = _c("aclrtMemGetAllocationGranularity")(_ref(_physical_prop(prop)), option, byref(value))
    return (int(value.value) if ret == 0 else 0), ret


def mem_get_allocation_properties_from_handle(handle: int) -> Tuple[Any, int]:
    """``aclrtMemGetAllocationPropertiesFromHandle``: ``prop, ret``; `prop` the dict
    ``malloc_physical`` takes (0 when ret is not 0)."""
    prop = PhysicalMemProp()
    ret = _c("aclrtMemGetAllocationPropertiesFromHandle")(_in(handle), byref(prop))
    return (_physical_prop_dict(prop) if ret == 0 else 0), ret


def mem_set_access(vir_ptr: int, size: int, desc: Sequence[Any]) -> int:
    """``aclrtMemSetAccess``: `desc` is a list of ``aclrtMemAccessDesc`` dicts,
    ``{"flags": ACL_RT_MEM_ACCESS_FLAGS_*, "location": {"id": int, "type": int}}`` (or
    ``(flags, location)`` pairs); the C ``count`` is ``len(desc)``. Returns ret."""
    items = list(desc)
    array = (MemAccessDesc * max(len(items), 1))()
    for i, d in enumerate(items):
        if isinstance(d, Mapping):
            flags, loc, rsv = _get(d, "flags"), _get(d, "location", None), d.get("rsv")
        else:
            (flags, loc), rsv = d, None
        array[i].flags = int(flags)
        array[i].location = _location(loc)
        if rsv is not None:
            _bytes_into(array[i].rsv, rsv)
    return _c("aclrtMemSetAccess")(_in(vir_ptr), size, array, len(items))


def mem_get_access(vir_ptr: int, location: Any) -> Tuple[int, int]:
    """``aclrtMemGetAccess``: ``flag, ret``, the access rights of `location` (``{"id", "type"}``
    or an ``(id, type)`` pair; None: NULL) for the mapping at `vir_ptr`."""
    loc = None if location is None else _location(location)
    value = c_uint64(0)
    ret = _c("aclrtMemGetAccess")(_in(vir_ptr), _ref(loc), byref(value))
    return (int(value.value) if ret == 0 else 0), ret


def mem_set_pid_to_shareable_handle(shareable_handle: int, pid: Sequence[int]) -> int:
    """``aclrtMemSetPidToShareableHandle``: whitelists the processes of the list `pid` (a single
    int is a list of one) for `shareable_handle`. Returns ret."""
    array, n = _pids(pid)
    return _c("aclrtMemSetPidToShareableHandle")(int(shareable_handle), array, n)


def mem_set_pid_to_shareable_handle_v2(shareable_handle: Any, share_type: int, pid: Sequence[int]) -> int:
    """``aclrtMemSetPidToShareableHandleV2``: as ``mem_set_pid_to_shareable_handle`` for a handle
    of `share_type`. `shareable_handle` is the address of the handle (as
    ``mem_export_to_shareable_handle_v2`` and ``mem_import_from_shareable_handle_v2`` take it),
    or the handle's bytes (8 for ``ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT``, 128 for ``_FABRIC``).
    Returns ret."""
    keep = None
    if isinstance(shareable_handle, (bytes, bytearray, memoryview)):
        keep = ctypes.create_string_buffer(bytes(shareable_handle), max(len(shareable_handle), 1))
        address: Optional[int] = ctypes.addressof(keep)
    else:
        address = _in(shareable_handle)
    array, n = _pids(pid)
    ret = _c("aclrtMemSetPidToShareableHandleV2")(address, share_type, array, n)
    del keep
    return ret


def ipc_mem_import_pid_inter_server(key: str, server_pids: Sequence[Any]) -> int:
    """``aclrtIpcMemImportPidInterServer``: `server_pids` is a list of ``(sdid, [pid, ...])``
    pairs or ``{"sdid": int, "pid": [pid, ...]}`` dicts (``aclrtServerPid``); the C ``num`` is
    its length. Super-node products only (elsewhere 207000). Returns ret."""
    entries = list(server_pids)
    keep = []
    structs = (_lib.ServerPid * max(len(entries), 1))()
    for i, e in enumerate(entries):
        if isinstance(e, Mapping):
            sdid, pids = _get(e, "sdid"), e.get("pid", [])
        else:
            sdid, pids = e
        arr, n = _pids(pids)
        keep.append(arr)
        structs[i].sdid = int(sdid)
        structs[i].pid = ctypes.cast(arr, POINTER(c_int32))
        structs[i].num = n
    k = None if key is None else (key if isinstance(key, bytes) else str(key).encode("utf-8"))
    return _c("aclrtIpcMemImportPidInterServer")(k, structs, len(entries))


# ---- copies ---------------------------------------------------------------------------------


def memcpy_async_with_offset(
    dst: int, dest_max: int, dst_data_offset: int, src: int, count: int, src_data_offset: int,
    kind: int, stream: Optional[int],
) -> int:
    """``aclrtMemcpyAsyncWithOffset``: `dst` and `src` are device addresses holding the base
    addresses (the C ``void **``), read when the copy runs; the copy is `count` bytes from
    ``*src + src_data_offset`` to ``*dst + dst_data_offset``. Returns ret."""
    return _c("aclrtMemcpyAsyncWithOffset")(
        _in(dst), dest_max, dst_data_offset, _in(src), count, src_data_offset, kind, _in(stream)
    )


def _batch_attrs(attrs: Sequence[Any]) -> Any:
    items = list(attrs)
    array = (MemcpyBatchAttr * max(len(items), 1))()
    for i, a in enumerate(items):
        if isinstance(a, Mapping):
            array[i].dstLoc = _location(_get(a, "dstLoc", None))
            array[i].srcLoc = _location(_get(a, "srcLoc", None))
            if a.get("rsv") is not None:
                _bytes_into(array[i].rsv, a["rsv"])
        else:
            dst_loc, src_loc = a
            array[i].dstLoc = _location(dst_loc)
            array[i].srcLoc = _location(src_loc)
    return array


def _batch_args(
    dsts: Sequence[int], dest_maxs: Sequence[int], srcs: Sequence[int], sizes: Sequence[int],
    attrs: Sequence[Any], attrs_indexes: Sequence[int],
) -> List[Any]:
    n = _same_length(dsts=dsts, dest_maxs=dest_maxs, srcs=srcs, sizes=sizes)
    m = _same_length(attrs=attrs, attrs_indexes=attrs_indexes)
    return [
        _ptr_array(list(dsts)), _size_array(list(dest_maxs)), _ptr_array(list(srcs)),
        _size_array(list(sizes)), n, _batch_attrs(attrs), _size_array(list(attrs_indexes)), m,
    ]


_BATCH_DOC = """

    The copies are ``sizes[i]`` bytes from ``srcs[i]`` to ``dsts[i]`` (room ``dest_maxs[i]``):
    four lists of equal length, the C ``numBatches``. `attrs` is a list of
    ``aclrtMemcpyBatchAttr`` dicts, ``{"dstLoc": {"id": int, "type": ACL_MEM_LOCATION_TYPE_*},
    "srcLoc": {...}}`` (or ``(dst_loc, src_loc)`` pairs), ``attrs[k]`` covering the copies from
    ``attrs_indexes[k]`` to the next index: two lists of equal length, the C ``numAttrs``."""


def memcpy_batch(
    dsts: Sequence[int], dest_maxs: Sequence[int], srcs: Sequence[int], sizes: Sequence[int],
    attrs: Sequence[Any], attrs_indexes: Sequence[int],
) -> Tuple[int, int]:
    fail = c_size_t(0)
    ret = _c("aclrtMemcpyBatch")(*_batch_args(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes), byref(fail))
    return int(fail.value), ret


memcpy_batch.__doc__ = (
    """``aclrtMemcpyBatch``: ``fail_index, ret``. `fail_index` is the C ``*failIndex`` whatever
    ret is (it names the bad copy when ret is not 0; ``SIZE_MAX`` when no copy is to blame, and
    on success)."""
    + _BATCH_DOC
)


def memcpy_batch_v2(
    dsts: Sequence[int], dest_maxs: Sequence[int], srcs: Sequence[int], sizes: Sequence[int],
    attrs: Sequence[Any], attrs_indexes: Sequence[int],
) -> int:
    return _c("aclrtMemcpyBatchV2")(*_batch_args(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes))


memcpy_batch_v2.__doc__ = (
    "``aclrtMemcpyBatchV2``: ``memcpy_batch`` without the failure index; returns ret." + _BATCH_DOC
)


def memcpy_batch_async(
    dsts: Sequence[int], dest_maxs: Sequence[int], srcs: Sequence[int], sizes: Sequence[int],
    attrs: Sequence[Any], attrs_indexes: Sequence[int], stream: Optional[int],
) -> Tuple[int, int]:
    fail = c_size_t(0)
    args = _batch_args(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes)
    ret = _c("aclrtMemcpyBatchAsync")(*args, byref(fail), _in(stream))
    return int(fail.value), ret


memcpy_batch_async.__doc__ = (
    """``aclrtMemcpyBatchAsync``: ``fail_index, ret`` as for ``memcpy_batch``; the copies are one
    task of `stream` (host ranges must stay alive until the stream has run it)."""
    + _BATCH_DOC
)


def memcpy_batch_async_v2(
    dsts: Sequence[int], dest_maxs: Sequence[int], srcs: Sequence[int], sizes: Sequence[int],
    attrs: Sequence[Any], attrs_indexes: Sequence[int], stream: Optional[int],
) -> int:
    args = _batch_args(dsts, dest_maxs, srcs, sizes, attrs, attrs_indexes)
    return _c("aclrtMemcpyBatchAsyncV2")(*args, _in(stream))


memcpy_batch_async_v2.__doc__ = (
    "``aclrtMemcpyBatchAsyncV2``: ``memcpy_batch_async`` without the failure index; returns ret."
    + _BATCH_DOC
)


# ---- cache maintenance ----------------------------------------------------------------------


def cmo_wait_barrier(task_info: Any, stream: Optional[int], flag: int) -> int:
    """``aclrtCmoWaitBarrier``: `task_info` (``aclrtBarrierTaskInfo``) is
    ``{"cmoInfo": [{"cmoType": ACL_RT_CMO_TYPE_*, "barrierId": int}, ...], "barrierNum": n}``
    (``barrierNum`` defaults to the list's length, at most 6 entries) or just the list (of dicts
    or ``(cmo_type, barrier_id)`` pairs); None is NULL. Returns ret (207000 here: only streams
    bound to a model run instance take it)."""
    info = None
    if task_info is not None:
        if isinstance(task_info, Mapping):
            entries, num = list(_get(task_info, "cmoInfo", [])), _get(task_info, "barrierNum", None)
        else:
            entries, num = list(task_info), None
        if len(entries) > ACL_RT_CMO_MAX_BARRIER_NUM:
            raise ValueError("at most %d barriers" % ACL_RT_CMO_MAX_BARRIER_NUM)
        info = BarrierTaskInfo()
        for i, e in enumerate(entries):
            if isinstance(e, Mapping):
                info.cmoInfo[i].cmoType = int(_get(e, "cmoType"))
                info.cmoInfo[i].barrierId = int(_get(e, "barrierId"))
            else:
                info.cmoInfo[i].cmoType, info.cmoInfo[i].barrierId = int(e[0]), int(e[1])
        info.barrierNum = len(entries) if num is None else int(num)
    return _c("aclrtCmoWaitBarrier")(_ref(info), _in(stream), flag)


# ---- HBM errors (need an NPU) ---------------------------------------------------------------


def get_mem_uce_info(device_id: int, array_size: int) -> Tuple[Any, int]:
    """``aclrtGetMemUceInfo``: ``mem_uce_info_array, ret``; a list of at most `array_size`
    ``{"addr": int, "len": int}`` (its length the C ``retSize``; 0 when ret is not 0). Needs an
    NPU: 207000 here."""
    n = int(array_size)
    array = (MemUceInfo * max(n, 1))()
    count = c_size_t(0)
    ret = _c("aclrtGetMemUceInfo")(device_id, array, n, byref(count))
    if ret != 0:
        return 0, ret
    return [{"addr": _addr(array[i].addr), "len": int(array[i].len)} for i in range(min(count.value, n))], ret


def mem_uce_repair(device_id: int, mem_uce_info_array: Sequence[Any]) -> int:
    """``aclrtMemUceRepair``: repairs the ranges of the list `mem_uce_info_array` (dicts
    ``{"addr", "len"}`` as ``get_mem_uce_info`` gives, or ``(addr, len)`` pairs); the C
    ``arraySize`` is its length. Needs an NPU: 207000 here. Returns ret."""
    items = list(mem_uce_info_array)
    array = (MemUceInfo * max(len(items), 1))()
    for i, e in enumerate(items):
        addr, length = (_get(e, "addr"), _get(e, "len")) if isinstance(e, Mapping) else e
        array[i].addr = _in(addr)
        array[i].len = int(length)
    return _c("aclrtMemUceRepair")(device_id, array, len(items))


# ---- snapshots (not supported here) ---------------------------------------------------------


def snap_shot_process_backup(pid: int, args: Any = None) -> int:
    """``aclrtSnapShotProcessBackup``: `args` is ``{"backupFlags": int}``
    (``aclrtSnapShotBackupArgs``) or None (NULL). Not supported here: 207000. Returns ret."""
    a = None if args is None else SnapShotBackupArgs(int(_get(args, "backupFlags")))
    return _c("aclrtSnapShotProcessBackup")(pid, _ref(a))


def snap_shot_process_restore(pid: int, args: Any = None) -> int:
    """``aclrtSnapShotProcessRestore``: `args` is ``{"restoreFlags": int}``
    (``aclrtSnapShotRestoreArgs``) or None (NULL). Not supported here: 207000. Returns ret."""
    a = None if args is None else SnapShotRestoreArgs(int(_get(args, "restoreFlags")))
    return _c("aclrtSnapShotProcessRestore")(pid, _ref(a))


# (stage, Python callable) -> its C wrapper, alive while the C side may call it.
_snapshot_callbacks: Dict[Tuple[int, Any], Any] = {}
_snapshot_lock = threading.Lock()


def _snapshot_wrapper(callback: Callable[[int, int], Any]) -> Any:
    def call(device_id: int, args: Optional[int]) -> int:
        try:
            result = callback(device_id, 0 if args is None else args)
            return 0 if result is None else int(result) & 0xFFFFFFFF
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.rt snapshot callback %r raised", callback)
            return 1

    return SnapShotCallBack(call)


def snap_shot_callback_register(stage: int, callback: Callable[[int, int], Any], args: Optional[int] = None) -> int:
    """``aclrtSnapShotCallbackRegister``: `callback` is a Python callable
    ``callback(device_id, args) -> int`` (None counts as 0; an exception is logged and answered
    1, never passed into C), called at `stage` (``ACL_RT_SNAPSHOT_*``) with the address `args`.
    The module keeps it alive until ``snap_shot_callback_unregister(stage, callback)``. Not
    supported here: 207000 (then nothing is kept). Returns ret."""
    wrapper = _snapshot_wrapper(callback)
    with _snapshot_lock:
        ret = _c("aclrtSnapShotCallbackRegister")(stage, wrapper, _in(args))
        if ret == 0:
            _snapshot_callbacks[(int(stage), callback)] = wrapper
    return ret


def snap_shot_callback_unregister(stage: int, callback: Callable[[int, int], Any]) -> int:
    """``aclrtSnapShotCallbackUnregister``: `callback` is the callable given to
    ``snap_shot_callback_register`` (its C wrapper is passed, then released). Not supported
    here: 207000. Returns ret."""
    key = (int(stage), callback)
    with _snapshot_lock:
        wrapper = _snapshot_callbacks.get(key)
        if wrapper is None:
            # Never registered: a wrapper the C side has never seen (it cannot call it).
            wrapper = _snapshot_wrapper(callback)
        ret = _c("aclrtSnapShotCallbackUnregister")(stage, wrapper)
        if ret == 0:
            _snapshot_callbacks.pop(key, None)
    return ret
