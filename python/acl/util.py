"""``acl.util``: addresses of Python buffers and bytes at addresses, as the vendor's ``acl.util``.

``bytes_to_ptr``, ``ptr_to_bytes``, ``numpy_to_ptr`` and ``ptr_to_numpy`` have pyACL's names and
argument order. An address is valid only while the object it came from is alive (and, for
arrays, not resized): keep a reference as long as the runtime may use it, e.g. until the stream
of a ``memcpy_async`` has been synchronised.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence, Union

__all__ = ["bytes_to_ptr", "ptr_to_bytes", "numpy_to_ptr", "ptr_to_numpy", "buffer_to_ptr"]

BufferLike = Union[bytes, bytearray, memoryview, Any]


def buffer_to_ptr(data: BufferLike) -> int:
    """The address of the first byte of any contiguous buffer-protocol object."""
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    view = memoryview(data)
    if not view.contiguous:
        raise ValueError("buffer is not contiguous")
    if view.nbytes == 0:
        return 0
    if view.readonly:
        # Read-only buffers other than bytes (e.g. a read-only numpy array): numpy tells its address.
        iface = getattr(data, "__array_interface__", None)
        if iface is not None:
            return int(iface["data"][0])
        raise TypeError("read-only buffer of type %s has no address that can be taken" % type(data).__name__)
    array = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(array)


def bytes_to_ptr(data: BufferLike) -> int:
    """The address of the bytes of `data` (bytes, bytearray, memoryview...); no copy."""
    return buffer_to_ptr(data)


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """A copy of `size` bytes at host address `ptr`."""
    if size == 0:
        return b""
    return ctypes.string_at(ptr, size)


def numpy_to_ptr(array: Any) -> int:
    """The address of a numpy array's data (``array.ctypes.data``)."""
    return int(array.__array_interface__["data"][0])


def ptr_to_numpy(ptr: int, shape: Sequence[int], npy_type: int) -> Any:
    """A numpy array over the host memory at `ptr` (no copy). `npy_type` is numpy's type number
    (``NPY_FLOAT32`` = 11, ``NPY_UINT8`` = 2, ...), as in the vendor's samples."""
    import numpy as np

    dtype = next((np.dtype(t) for t in set(np.sctypeDict.values()) if np.dtype(t).num == npy_type), None)
    if dtype is None:
        raise ValueError("unknown numpy type number %d" % npy_type)
    count = 1
    for dim in shape:
        count *= int(dim)
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(tuple(shape))
