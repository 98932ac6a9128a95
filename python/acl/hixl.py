"""``acl.hixl``: the transfer engine under its current name, ``hixl::Hixl``, in Python.

:class:`Engine` is :class:`acl.adxl.Engine` (the same engine: a HIXL engine and an ADXL engine
talk to each other) plus what HIXL adds:

- asynchronous connects: :meth:`Engine.connect_async`, :meth:`Engine.disconnect_async`,
  :meth:`Engine.async_connect_status` and :meth:`Engine.async_connect_statuses`, with the
  states of :class:`AsyncConnectStatus` (the latest task submitted for a remote decides);
- ``TransferArgs::user_data``: :meth:`Engine.transfer_async` takes an integer `user_data`
  that :meth:`Engine.get_transfer_statuses` hands back with each request's status.

Statuses, errors, memory registration (``register(..., local_only=True)`` is
``MemDesc::local_only``), notifies and the synchronous calls are those of :mod:`acl.adxl`
(``AdxlError``, ``Status``, ``TransferOp``, ``MemType``, ``TransferStatus``, ``FeatureType``,
``FEATURE_SUPPORTED``/``FEATURE_NOT_SUPPORTED`` and :func:`get_capability` are re-exported
here); the ``OPTION_*`` keys are HIXL's spellings (``hixl::OPTION_*``, without ADXL's
``adxl.`` prefix; the engine takes both). docs/python.md has the table of every
``hixl::Hixl`` member and its Python counterpart.
"""

from __future__ import annotations

import enum
from ctypes import POINTER, Structure, byref, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Dict, Iterable, List, NamedTuple, Tuple, Union

from . import adxl
from .adxl import (  # noqa: F401  (re-exported: the HIXL face has the same statuses and types)
    FEATURE_NOT_SUPPORTED,
    FEATURE_SUPPORTED,
    AdxlError,
    FeatureType,
    MemHandle,
    MemType,
    Notify,
    Status,
    TransferDesc,
    TransferOp,
    TransferStatus,
    get_capability,
)

__all__ = [
    "AdxlError",
    "AsyncConnectStatus",
    "Engine",
    "FEATURE_NOT_SUPPORTED",
    "FEATURE_SUPPORTED",
    "FeatureType",
    "MemHandle",
    "MemType",
    "Notify",
    "OPTION_AUTO_CONNECT",
    "OPTION_BUFFER_POOL",
    "OPTION_ENABLE_USE_FABRIC_MEM",
    "OPTION_GLOBAL_RESOURCE_CONFIG",
    "OPTION_LOCAL_COMM_RES",
    "OPTION_RDMA_SERVICE_LEVEL",
    "OPTION_RDMA_TRAFFIC_CLASS",
    "Status",
    "TransferDesc",
    "TransferOp",
    "TransferResult",
    "TransferStatus",
    "get_capability",
]

#: Option keys of :class:`Engine` (``hixl::OPTION_*``); the values are strings.
OPTION_ENABLE_USE_FABRIC_MEM = "EnableUseFabricMem"
OPTION_RDMA_TRAFFIC_CLASS = "RdmaTrafficClass"
OPTION_RDMA_SERVICE_LEVEL = "RdmaServiceLevel"
OPTION_BUFFER_POOL = "BufferPool"
OPTION_GLOBAL_RESOURCE_CONFIG = "GlobalResourceConfig"
OPTION_AUTO_CONNECT = "AutoConnect"
OPTION_LOCAL_COMM_RES = "LocalCommRes"

#: ``GetTransferStatusArgs::max_query_count``'s default: every request.
_ALL = (1 << 32) - 1


class AsyncConnectStatus(enum.IntEnum):
    """``hixl::AsyncConnectStatus``, in the vendor's order."""

    NOT_CONNECT = 0
    CONNECT_PENDING = 1
    CONNECTING = 2
    CONNECTED = 3
    CONNECT_FAILED = 4
    DISCONNECT_PENDING = 5
    DISCONNECTING = 6


class TransferResult(NamedTuple):
    """One request reported by :meth:`Engine.get_transfer_statuses`."""

    req: int
    user_data: int
    status: TransferStatus


class _ConnectStatus(Structure):
    _fields_ = [("remote_engine", c_char_p), ("status", c_int32)]


class _Result(Structure):
    _fields_ = [("req", c_void_p), ("user_data", c_void_p), ("status", c_int32)]


_E = c_void_p
adxl._PROTOTYPES.update(
    {
        "ascendless_engine_connect_async": (c_uint32, [_E, c_char_p, c_int32]),
        "ascendless_engine_disconnect_async": (c_uint32, [_E, c_char_p, c_int32]),
        "ascendless_engine_get_async_connect_status": (c_uint32, [_E, c_char_p, POINTER(c_int32)]),
        "ascendless_engine_get_async_connect_statuses": (
            c_uint32, [_E, POINTER(POINTER(_ConnectStatus)), POINTER(c_size_t)]
        ),
        "ascendless_async_connect_statuses_free": (None, [POINTER(_ConnectStatus), c_size_t]),
        "ascendless_engine_transfer_async_with_user_data": (
            c_uint32, [_E, c_char_p, c_int32, POINTER(adxl._Desc), c_size_t, c_void_p, POINTER(c_void_p)]
        ),
        "ascendless_engine_get_transfer_statuses": (
            c_uint32, [_E, c_uint32, c_int32, POINTER(POINTER(_Result)), POINTER(c_size_t)]
        ),
        "ascendless_transfer_results_free": (None, [POINTER(_Result), c_size_t]),
    }
)
_native = adxl._native
_check = adxl._check


class Engine(adxl.Engine):
    """``hixl::Hixl``: an :class:`acl.adxl.Engine` with asynchronous connects and user data."""

    def connect_async(self, remote: str, timeout_ms: int = 1000) -> None:
        """``Hixl::ConnectAsync``: queues a Connect to `remote` and returns at once; the state
        goes CONNECT_PENDING, CONNECTING, then CONNECTED or CONNECT_FAILED. RESOURCE_EXHAUSTED
        when the queue (``GlobalResourceConfig`` ``connect_pool.task_queue_capacity``) is full."""
        status = _native("ascendless_engine_connect_async")(self._h(), adxl._name(remote), adxl._timeout(timeout_ms))
        _check(status, "connect_async")

    def disconnect_async(self, remote: str, timeout_ms: int = 1000) -> None:
        """``Hixl::DisconnectAsync``: queues a Disconnect; the state goes DISCONNECT_PENDING,
        DISCONNECTING, then NOT_CONNECT."""
        status = _native("ascendless_engine_disconnect_async")(
            self._h(), adxl._name(remote), adxl._timeout(timeout_ms)
        )
        _check(status, "disconnect_async")

    def async_connect_status(self, remote: str) -> AsyncConnectStatus:
        """``Hixl::GetAsyncConnectStatus(remote, status)``: the state of `remote`'s latest task
        (NOT_CONNECT for a remote never asked for)."""
        value = c_int32(0)
        status = _native("ascendless_engine_get_async_connect_status")(self._h(), adxl._name(remote), byref(value))
        _check(status, "async_connect_status")
        return AsyncConnectStatus(value.value)

    def async_connect_statuses(self) -> Dict[str, AsyncConnectStatus]:
        """``Hixl::GetAsyncConnectStatus(statuses)``: every remote whose state is not
        NOT_CONNECT."""
        arr = POINTER(_ConnectStatus)()
        count = c_size_t(0)
        _check(
            _native("ascendless_engine_get_async_connect_statuses")(self._h(), byref(arr), byref(count)),
            "async_connect_statuses",
        )
        try:
            return {
                arr[i].remote_engine.decode("utf-8", errors="replace"): AsyncConnectStatus(arr[i].status)
                for i in range(count.value)
            }
        finally:
            _native("ascendless_async_connect_statuses_free")(arr, count.value)

    def transfer_async(  # type: ignore[override]
        self,
        remote: str,
        op: Union[TransferOp, int],
        descs: Iterable[Union[TransferDesc, Tuple[int, int, int]]],
        user_data: int = 0,
    ) -> int:
        """``Hixl::TransferAsync``: as :meth:`acl.adxl.Engine.transfer_async`, with
        ``TransferArgs::user_data`` (an int the library never reads) that
        :meth:`get_transfer_statuses` reports with the request."""
        arr, items = adxl._descs(descs, "transfer_async")
        req = c_void_p()
        status = _native("ascendless_engine_transfer_async_with_user_data")(
            self._h(), adxl._name(remote), int(op), arr, len(items), c_void_p(int(user_data) or None), byref(req)
        )
        _check(status, "transfer_async")
        return int(req.value or 0)

    def get_transfer_statuses(self, max_query_count: int = _ALL, skip_waiting: bool = False) -> List[TransferResult]:
        """``Hixl::GetTransferStatus(args, results)``: up to `max_query_count` (default: all,
        ``GetTransferStatusArgs``' UINT32_MAX; 0: none) of this engine's requests in
        submission order, each with its user data and status; COMPLETED, TIMEOUT and FAILED
        ones are freed (reported once); with `skip_waiting` the WAITING ones are left out.
        A count outside 0..2**32-1 is PARAM_INVALID (``max_query_count`` is a uint32_t)."""
        if not 0 <= int(max_query_count) <= _ALL:
            raise AdxlError(
                Status.PARAM_INVALID, "max_query_count %d is not a uint32_t" % int(max_query_count),
                "get_transfer_statuses",
            )
        arr = POINTER(_Result)()
        count = c_size_t(0)
        status = _native("ascendless_engine_get_transfer_statuses")(
            self._h(), int(max_query_count), int(bool(skip_waiting)), byref(arr), byref(count)
        )
        _check(status, "get_transfer_statuses")
        try:
            return [
                TransferResult(int(arr[i].req or 0), int(arr[i].user_data or 0), TransferStatus(arr[i].status))
                for i in range(count.value)
            ]
        finally:
            _native("ascendless_transfer_results_free")(arr, count.value)
