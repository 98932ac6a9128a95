"""One HCCL rank, bound with ctypes as vLLM-Ascend's pyhccl_wrapper.py binds libhccl.so: the same
six functions with the same argtypes (HcclGetErrorString, HcclGetRootInfo, HcclCommInitRootInfo,
HcclAllReduce, HcclBroadcast, HcclCommDestroy); device memory and copies through the vendor's
`acl` module.

Usage: python hccl_rank.py RANK ROOT_INFO_FILE
  rank 0 writes the root info to ROOT_INFO_FILE (atomically) before it joins; rank 1 reads it.
  Each prints "rank R ok" after checking every element, or fails with a message.
The library: HCCL_SO_PATH (as pyhccl's find_hccl_library), else "libhccl.so" (the dynamic
linker's search, as set_env.sh leaves it), else ASCENDLESS_LIBRARY (the one library exports the
same symbols under every vendor name).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, List

import numpy as np

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

hcclResult_t = ctypes.c_int
hcclComm_t = ctypes.c_void_p
buffer_type = ctypes.c_void_p
aclrtStream_t = ctypes.c_void_p
hcclDataType_t = ctypes.c_int
hcclRedOp_t = ctypes.c_int
HCCL_DATA_TYPE_INT32 = 2
HCCL_DATA_TYPE_FP32 = 4
HCCL_REDUCE_SUM = 0


class hcclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 4108)]


@dataclass
class Function:
    name: str
    restype: Any
    argtypes: List[Any]


exported_functions = [
    Function("HcclGetErrorString", ctypes.c_char_p, [hcclResult_t]),
    Function("HcclGetRootInfo", hcclResult_t, [ctypes.POINTER(hcclUniqueId)]),
    Function(
        "HcclCommInitRootInfo",
        hcclResult_t,
        [ctypes.c_int, ctypes.POINTER(hcclUniqueId), ctypes.c_int, ctypes.POINTER(hcclComm_t)],
    ),
    Function(
        "HcclAllReduce",
        hcclResult_t,
        [buffer_type, buffer_type, ctypes.c_size_t, hcclDataType_t, hcclRedOp_t, hcclComm_t, aclrtStream_t],
    ),
    Function(
        "HcclBroadcast",
        hcclResult_t,
        [buffer_type, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, hcclComm_t, aclrtStream_t],
    ),
    Function("HcclCommDestroy", hcclResult_t, [hcclComm_t]),
]


def load() -> ctypes.CDLL:
    for name in (os.environ.get("HCCL_SO_PATH"), "libhccl.so", os.environ.get("ASCENDLESS_LIBRARY")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        for func in exported_functions:
            f = getattr(lib, func.name)
            f.restype = func.restype
            f.argtypes = func.argtypes
        return lib
    raise SystemExit("no libhccl.so: set HCCL_SO_PATH or ASCENDLESS_LIBRARY")


def check(lib: ctypes.CDLL, result: int) -> None:
    if result != 0:
        raise SystemExit("HCCL error %d: %s" % (result, lib.HcclGetErrorString(result).decode()))


def main() -> None:
    rank, path = int(sys.argv[1]), sys.argv[2]
    lib = load()
    assert acl.rt.set_device(rank) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    unique_id = hcclUniqueId()
    if rank == 0:
        check(lib, lib.HcclGetRootInfo(ctypes.byref(unique_id)))
        with open(path + ".tmp", "wb") as f:
            f.write(bytes(unique_id.internal))
        os.replace(path + ".tmp", path)
    else:
        deadline = time.monotonic() + 60
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise SystemExit("no root info from rank 0")
            time.sleep(0.01)
        with open(path, "rb") as f:
            ctypes.memmove(ctypes.byref(unique_id), f.read(), 4108)
    comm = hcclComm_t()
    check(lib, lib.HcclCommInitRootInfo(2, ctypes.byref(unique_id), rank, ctypes.byref(comm)))

    count = 1 << 16
    host = (np.arange(count, dtype=np.float32) * 0.25 + (rank + 1)).astype(np.float32)
    nbytes = host.nbytes
    send, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    recv, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.memcpy(send, nbytes, acl.util.numpy_to_ptr(host), nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    check(lib, lib.HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream))
    assert acl.rt.synchronize_stream(stream) == 0
    out = np.zeros(count, dtype=np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), nbytes, recv, nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    want = np.arange(count, dtype=np.float32) * 0.5 + 3
    assert np.array_equal(out, want), "all-reduce: %r" % out[:8]

    ints = np.arange(count, dtype=np.int32) * 5 if rank == 0 else np.full(count, -1, dtype=np.int32)
    assert acl.rt.memcpy(send, nbytes, acl.util.numpy_to_ptr(ints), nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    check(lib, lib.HcclBroadcast(send, count, HCCL_DATA_TYPE_INT32, 0, comm, stream))
    assert acl.rt.synchronize_stream(stream) == 0
    got = np.zeros(count, dtype=np.int32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(got), nbytes, send, nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert np.array_equal(got, np.arange(count, dtype=np.int32) * 5), "broadcast: %r" % got[:8]

    check(lib, lib.HcclCommDestroy(comm))
    assert acl.rt.free(send) == 0 and acl.rt.free(recv) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.reset_device(rank) == 0
    print("rank %d ok" % rank, flush=True)


if __name__ == "__main__":
    acl.init()
    main()
    acl.finalize()
