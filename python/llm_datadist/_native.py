"""The C API of ``ascendless_llm_datadist.h`` through ctypes, in the library ``acl`` loads.

Each Python call is one C call: the C functions are the C++ ``llm_datadist::LlmDataDist``
members on plain types, on the same instances (src/cxx/llm_datadist_c.cpp), so the Python
package behaves as the C++ class does. ctypes releases the GIL for the call.
"""

from __future__ import annotations

from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_int32,
    c_int64,
    c_size_t,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Optional, Sequence

from acl._lib import lib

from .status import LLMException, LLMStatusCode, code_2_status


class Cluster(Structure):
    _fields_ = [
        ("remote_cluster_id", c_uint64),
        ("remote_ips", POINTER(c_char_p)),
        ("remote_ports", POINTER(c_uint16)),
        ("remote_ip_count", c_size_t),
    ]


class CacheDescC(Structure):
    _fields_ = [
        ("num_tensors", c_uint32),
        ("data_type", c_int32),
        ("placement", c_uint32),
        ("shape", POINTER(c_int64)),
        ("shape_len", c_size_t),
    ]


class Layers(Structure):
    _fields_ = [
        ("src_first", c_int32),
        ("src_last", c_int32),
        ("dst_first", c_int32),
        ("dst_last", c_int32),
        ("tensor_num_per_layer", c_uint32),
    ]


_H = c_void_p
_S = POINTER(c_char_p)
_U64 = POINTER(c_uint64)
_LAYERS = POINTER(Layers)

_PROTOTYPES = {
    "ascendless_llm_create": [c_uint64, c_int32, POINTER(_H)],
    "ascendless_llm_destroy": [_H],
    "ascendless_llm_initialize": [_H, _S, _S, c_size_t],
    "ascendless_llm_finalize": [_H],
    "ascendless_llm_set_role": [_H, c_int32, _S, _S, c_size_t],
    "ascendless_llm_link": [_H, POINTER(Cluster), c_size_t, c_int32, POINTER(c_uint32)],
    "ascendless_llm_unlink": [_H, POINTER(Cluster), c_size_t, c_int32, c_int32, POINTER(c_uint32)],
    "ascendless_llm_link_comm": [_H, c_char_p, _U64, POINTER(c_uint32), c_size_t, c_char_p, _U64],
    "ascendless_llm_unlink_comm": [_H, c_uint64],
    "ascendless_llm_query_register_mem_status": [_H, c_uint64, POINTER(c_int32)],
    "ascendless_llm_register": [_H, POINTER(CacheDescC), _U64, c_size_t, c_int64, POINTER(c_int64)],
    "ascendless_llm_unregister": [_H, c_int64],
    "ascendless_llm_blocks_key_cache_id": [c_int64, POINTER(c_int64)],
    "ascendless_llm_pull_cache": [_H, c_uint64, c_int64, c_uint32, c_int64, c_uint32, c_int64, _LAYERS],
    "ascendless_llm_pull_blocks": [_H, c_uint64, c_int64, _U64, c_size_t, c_int64, _U64, c_size_t, _LAYERS],
    "ascendless_llm_push_cache": [_H, c_int64, c_uint32, c_uint32, c_uint64, c_int64, c_uint32, c_int64, _LAYERS],
    "ascendless_llm_push_blocks": [_H, c_int64, c_uint32, _U64, c_size_t, c_uint64, c_int64, _U64, c_size_t, _LAYERS],
}


def _declare() -> None:
    for name, args in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = None if name in ("ascendless_llm_destroy", "ascendless_llm_finalize") else c_uint32
    lib.aclGetRecentErrMsg.restype = c_char_p
    lib.aclGetRecentErrMsg.argtypes = []


_declare()
c = lib


def recent_message() -> str:
    msg = lib.aclGetRecentErrMsg()
    return msg.decode(errors="replace") if msg else ""


def check(code: int, what: str, detail: str = "") -> None:
    """Raises LLMException unless `code` is LLM_SUCCESS, with the library's message."""
    if code != 0:
        status = code_2_status(code)
        extra = f", {detail}" if detail else ""
        raise LLMException(f"{what} failed, error code is {status}{extra}: {recent_message()}", status_code=status)


def strings(values: Sequence[str]):  # type: ignore[no-untyped-def]
    return (c_char_p * len(values))(*[v.encode() for v in values])


def u64s(values: Sequence[int]):  # type: ignore[no-untyped-def]
    return (c_uint64 * len(values))(*values)


def layers(
    src: Optional[range], dst: Optional[range], tensor_num_per_layer: int, num_tensors: int
) -> Optional[Layers]:
    """Layer ranges as the C API's inclusive pairs; None when every tensor moves."""
    if src is None and dst is None:
        if tensor_num_per_layer <= 0:
            raise LLMException(
                f"tensor_num_per_layer ({tensor_num_per_layer}) is invalid, should be > 0",
                status_code=LLMStatusCode.LLM_PARAM_INVALID,
            )
        return None
    per = tensor_num_per_layer
    whole = range(0, num_tensors // per if per > 0 else 0)
    pair = []
    for name, r in (("src_layer_range", src), ("dst_layer_range", dst)):
        r = whole if r is None else r
        if not isinstance(r, range) or r.step != 1 or len(r) == 0:
            raise LLMException(
                f"{name} ({r!r}) is invalid: a non-empty range with step 1",
                status_code=LLMStatusCode.LLM_PARAM_INVALID,
            )
        pair.append((r.start, r.stop - 1))
    return Layers(pair[0][0], pair[0][1], pair[1][0], pair[1][1], per)
