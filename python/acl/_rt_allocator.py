"""Hand-written pyACL functions of the allocators (`aclrtAllocator*` of
`acl/acl_rt_allocator.h`): those whose C prototypes take or give callbacks, so acl/_auto.py
cannot build them, and the description and registration calls that decide how long those
callbacks must live. acl.rt imports every public name of this module.

The conventions are acl.rt's (pyACL's, which has no allocator functions: these forms are ours):
handles, the user's allocator object, blocks and addresses are ``int`` (0 or None for NULL);
outputs first in the returned tuple, ``ret`` last, 0 for each output when ``ret`` is not 0.

The four callbacks are Python callables, called from C through ctypes wrappers:

* ``alloc(allocator, size) -> block`` (``aclrtAllocatorAllocFunc``),
* ``free(allocator, block)`` (``aclrtAllocatorFreeFunc``),
* ``alloc_advise(allocator, size, addr) -> block`` (``aclrtAllocatorAllocAdviseFunc``),
* ``get_addr_from_block(block) -> addr`` (``aclrtAllocatorGetAddrFromBlockFunc``),

each argument an ``int`` (0 for NULL), each result an ``int`` or None (NULL). An exception in
one is logged and answered NULL (nothing for ``free``), never passed into C. A wrapper lives as
long as the C side may call it: while the description holds it, and while a registration made
from that description does (``allocator_register`` copies the description, so a registration
outlives ``allocator_destroy_desc``; ``allocator_unregister``, or registering another allocator
on the stream, releases it). A registration on a stream destroyed without
``allocator_unregister`` keeps its wrappers for the rest of the process.

The runtime keeps what is registered and hands it back (``allocator_get_by_stream``, what
libraries built on the runtime read); it runs no operator that would call the functions
itself. The function addresses it gives back can be called with the prototypes below, e.g.
``acl._rt_allocator.AllocatorAllocFunc(alloc_func)(allocator, size)``.
"""

from __future__ import annotations

import logging
import threading
from ctypes import CFUNCTYPE, POINTER, byref, c_int, c_size_t, c_void_p
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._conv import declared, handle_in as _in

__all__: List[str] = [
    "allocator_create_desc", "allocator_destroy_desc", "allocator_set_obj_to_desc",
    "allocator_set_alloc_func_to_desc", "allocator_set_free_func_to_desc",
    "allocator_set_alloc_advise_func_to_desc", "allocator_set_get_addr_from_block_func_to_desc",
    "allocator_register", "allocator_get_by_stream", "allocator_unregister",
]

_log = logging.getLogger("acl")

#: ``void *(*)(aclrtAllocator allocator, size_t size)``.
AllocatorAllocFunc = CFUNCTYPE(c_void_p, c_void_p, c_size_t)
#: ``void (*)(aclrtAllocator allocator, aclrtAllocatorBlock block)``.
AllocatorFreeFunc = CFUNCTYPE(None, c_void_p, c_void_p)
#: ``void *(*)(aclrtAllocator allocator, size_t size, aclrtAllocatorAddr addr)``.
AllocatorAllocAdviseFunc = CFUNCTYPE(c_void_p, c_void_p, c_size_t, c_void_p)
#: ``void *(*)(aclrtAllocatorBlock block)``.
AllocatorGetAddrFromBlockFunc = CFUNCTYPE(c_void_p, c_void_p)

_P = c_void_p
_PP = POINTER(c_void_p)

_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "aclrtAllocatorCreateDesc": (c_void_p, []),
    "aclrtAllocatorDestroyDesc": (c_int, [_P]),
    "aclrtAllocatorSetObjToDesc": (c_int, [_P, _P]),
    "aclrtAllocatorSetAllocFuncToDesc": (c_int, [_P, AllocatorAllocFunc]),
    "aclrtAllocatorSetFreeFuncToDesc": (c_int, [_P, AllocatorFreeFunc]),
    "aclrtAllocatorSetAllocAdviseFuncToDesc": (c_int, [_P, AllocatorAllocAdviseFunc]),
    "aclrtAllocatorSetGetAddrFromBlockFuncToDesc": (c_int, [_P, AllocatorGetAddrFromBlockFunc]),
    "aclrtAllocatorRegister": (c_int, [_P, _P]),
    # The function pointers come back as addresses (void *), the form they have in Python.
    "aclrtAllocatorGetByStream": (c_int, [_P, _PP, _PP, _PP, _PP, _PP, _PP]),
    "aclrtAllocatorUnregister": (c_int, [_P]),
}

_c = declared(_PROTOTYPES)


def _ptr_result(result: Any) -> Optional[int]:
    """A callback's result as a C pointer: None (NULL) or an int."""
    if result is None:
        return None
    value = int(result)
    return value if value != 0 else None


def _arg(value: Optional[int]) -> int:
    return 0 if value is None else int(value)


# ---- the wrappers, and who keeps them ---------------------------------------------------------

# The slots of a description: its callbacks' C wrappers by slot name.
Slots = Dict[str, Any]
# Description handle -> its wrappers; stream handle -> the wrappers its registration copied.
_desc_slots: Dict[int, Slots] = {}
_stream_slots: Dict[int, Slots] = {}
_lock = threading.Lock()


def _alloc_wrapper(callback: Callable[[int, int], Any]) -> Any:
    def call(allocator: Optional[int], size: int) -> Optional[int]:
        try:
            return _ptr_result(callback(_arg(allocator), size))
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.rt allocator alloc function %r raised", callback)
            return None

    return AllocatorAllocFunc(call)


def _free_wrapper(callback: Callable[[int, int], Any]) -> Any:
    def call(allocator: Optional[int], block: Optional[int]) -> None:
        try:
            callback(_arg(allocator), _arg(block))
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.rt allocator free function %r raised", callback)

    return AllocatorFreeFunc(call)


def _advise_wrapper(callback: Callable[[int, int, int], Any]) -> Any:
    def call(allocator: Optional[int], size: int, addr: Optional[int]) -> Optional[int]:
        try:
            return _ptr_result(callback(_arg(allocator), size, _arg(addr)))
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.rt allocator alloc-advise function %r raised", callback)
            return None

    return AllocatorAllocAdviseFunc(call)


def _addr_wrapper(callback: Callable[[int], Any]) -> Any:
    def call(block: Optional[int]) -> Optional[int]:
        try:
            return _ptr_result(callback(_arg(block)))
        except BaseException:  # noqa: B902 - nothing may unwind into C
            _log.exception("acl.rt allocator get-address function %r raised", callback)
            return None

    return AllocatorGetAddrFromBlockFunc(call)


def _set(c_name: str, slot: str, make: Callable[[Any], Any], prototype: Any, desc: int, func: Any) -> int:
    with _lock:
        if func is None:
            # NULL: refused by the C side (100000); nothing to keep.
            return _c(c_name)(_in(desc), prototype())
        wrapper = make(func)
        ret = _c(c_name)(_in(desc), wrapper)
        if ret == 0:
            _desc_slots.setdefault(int(desc), {})[slot] = wrapper
    return ret


# ---- descriptions -----------------------------------------------------------------------------


def allocator_create_desc() -> int:
    """``aclrtAllocatorCreateDesc``: an empty description (0 when that fails)."""
    result = _c("aclrtAllocatorCreateDesc")()
    return 0 if result is None else int(result)


def allocator_destroy_desc(allocator_desc: int) -> int:
    """``aclrtAllocatorDestroyDesc``: registrations made from it stay (with their callbacks).
    Returns ret."""
    with _lock:
        ret = _c("aclrtAllocatorDestroyDesc")(_in(allocator_desc))
        if ret == 0:
            _desc_slots.pop(int(allocator_desc), None)
    return ret


def allocator_set_obj_to_desc(allocator_desc: int, allocator: int) -> int:
    """``aclrtAllocatorSetObjToDesc``: the user's allocator object (an ``int``, not 0), handed
    to the alloc, free and advise functions. Returns ret."""
    return _c("aclrtAllocatorSetObjToDesc")(_in(allocator_desc), _in(allocator))


def allocator_set_alloc_func_to_desc(allocator_desc: int, func: Callable[[int, int], Any]) -> int:
    """``aclrtAllocatorSetAllocFuncToDesc``: `func(allocator, size) -> block` (None: NULL,
    100000). Returns ret."""
    return _set("aclrtAllocatorSetAllocFuncToDesc", "alloc", _alloc_wrapper, AllocatorAllocFunc, allocator_desc, func)


def allocator_set_free_func_to_desc(allocator_desc: int, func: Callable[[int, int], Any]) -> int:
    """``aclrtAllocatorSetFreeFuncToDesc``: `func(allocator, block)` (None: NULL, 100000).
    Returns ret."""
    return _set("aclrtAllocatorSetFreeFuncToDesc", "free", _free_wrapper, AllocatorFreeFunc, allocator_desc, func)


def allocator_set_alloc_advise_func_to_desc(allocator_desc: int, func: Callable[[int, int, int], Any]) -> int:
    """``aclrtAllocatorSetAllocAdviseFuncToDesc``: `func(allocator, size, addr) -> block`
    (optional for registering; None: NULL, 100000). Returns ret."""
    return _set(
        "aclrtAllocatorSetAllocAdviseFuncToDesc", "advise", _advise_wrapper, AllocatorAllocAdviseFunc,
        allocator_desc, func,
    )


def allocator_set_get_addr_from_block_func_to_desc(allocator_desc: int, func: Callable[[int], Any]) -> int:
    """``aclrtAllocatorSetGetAddrFromBlockFuncToDesc``: `func(block) -> addr` (None: NULL,
    100000). Returns ret."""
    return _set(
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc", "addr", _addr_wrapper, AllocatorGetAddrFromBlockFunc,
        allocator_desc, func,
    )


# ---- registrations ----------------------------------------------------------------------------


def allocator_register(stream: int, allocator_desc: int) -> int:
    """``aclrtAllocatorRegister``: registers the allocator `allocator_desc` describes on
    `stream` (not 0), replacing an earlier one; the description's callbacks are kept with the
    registration. Returns ret."""
    with _lock:
        ret = _c("aclrtAllocatorRegister")(_in(stream), _in(allocator_desc))
        if ret == 0:
            _stream_slots[int(stream)] = dict(_desc_slots.get(int(allocator_desc), {}))
    return ret


def allocator_get_by_stream(stream: int) -> Tuple[int, int, int, int, int, int, int]:
    """``aclrtAllocatorGetByStream``: ``allocator_desc, allocator, alloc_func, free_func,
    alloc_advise_func, get_addr_from_block_func, ret`` registered on `stream` (each 0 when
    nothing is). The functions are C function addresses (``int``); call one through its
    prototype, e.g. ``acl._rt_allocator.AllocatorAllocFunc(alloc_func)(allocator, size)``: for an
    allocator registered from Python that calls the Python callable."""
    cells = [c_void_p() for _ in range(6)]
    ret = _c("aclrtAllocatorGetByStream")(_in(stream), *[byref(c) for c in cells])
    if ret != 0:
        return 0, 0, 0, 0, 0, 0, ret
    values = [0 if c.value is None else int(c.value) for c in cells]
    return values[0], values[1], values[2], values[3], values[4], values[5], ret


def allocator_unregister(stream: int) -> int:
    """``aclrtAllocatorUnregister``: removes the registration on `stream` (and releases its
    callbacks); nothing registered, or twice: 0. Returns ret."""
    with _lock:
        ret = _c("aclrtAllocatorUnregister")(_in(stream))
        if ret == 0 and stream:
            _stream_slots.pop(int(stream), None)
    return ret
