"""``acl.adxl``: a Pythonic ADXL transfer engine over ascendless's native engine API.

The vendor ships ADXL only as the C++ class ``adxl::AdxlEngine`` and has no Python binding, so
this class is ascendless's own. It wraps the C functions of ``ascendless.h``
(``ascendless_engine_create`` ... ``ascendless_engine_transfer_sync``) in the library that
``import acl`` loaded, and talks to any ADXL engine on ascendless: Python, C or C++::

    import numpy as np
    from acl import adxl

    data = np.arange(1 << 20, dtype=np.uint32)
    with adxl.Engine("127.0.0.1:26000") as server:       # listens on the port
        server.register(data)                          # peers may now read/write `data`
        ...

    out = np.zeros(1 << 20, dtype=np.uint32)
    with adxl.Engine("127.0.0.1") as client:          # no port: only connects out
        client.register(out)
        client.connect("127.0.0.1:26000")
        client.read("127.0.0.1:26000", out, remote_addr)   # remote_addr: data's address there
        client.transfer_sync("127.0.0.1:26000", adxl.TransferOp.WRITE,
                             [(adxl.buffer_address(out), remote_addr, out.nbytes)])

Failures raise :class:`AdxlError`, whose ``status`` is the ADXL number (:class:`Status`) and
``message`` the library's text for it (``ascendless_last_error``).

Every public member of ``adxl::AdxlEngine`` has its counterpart here, calling the same native
function as the C++ member (docs/python.md has the table): the static members are
module-level functions (:func:`malloc_mem`, :func:`free_mem`,
:func:`export_to_shareable_handle`, :func:`get_capability`) and static methods of
:class:`Engine` alike; ``MemDesc::local_only`` is ``register(..., local_only=True)``.
:meth:`Engine.counters` is ascendless's own (not a member of the C++ class).

Life cycle: ``Engine(name, options)`` initialises at once; ``Engine()`` makes an engine that
is not initialised yet (every call on it but :meth:`Engine.initialize` raises ``FAILED``, as
the C++ class does). :meth:`Engine.finalize` closes the links and drops the registrations; the
engine may be initialised again. :meth:`Engine.close` (also on leaving a ``with`` block, and
when the object is garbage collected) finalises and frees the native engine for good.
"""

from __future__ import annotations

import ctypes
import enum
import numbers
import threading
from ctypes import POINTER, byref, c_char_p, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple, Union

from . import _lib

__all__ = [
    "Engine", "MemHandle", "TransferDesc", "AdxlError",
    "Status", "TransferOp", "TransferStatus", "MemType", "FeatureType", "Notify",
    "FEATURE_SUPPORTED", "FEATURE_NOT_SUPPORTED",
    "OPTION_RDMA_TRAFFIC_CLASS", "OPTION_RDMA_SERVICE_LEVEL", "OPTION_BUFFER_POOL",
    "OPTION_LOCAL_COMM_RES", "OPTION_AUTO_CONNECT", "OPTION_SECRET", "OPTION_REMOTE_ACCESS",
    "get_capability", "buffer_address", "malloc_mem", "free_mem", "export_to_shareable_handle",
    "SHAREABLE_HANDLE_SIZE", "Counters",
]


class Status(enum.IntEnum):
    """``adxl::Status``: the result numbers of every engine call (``ADXL_*`` in ascendless.h)."""

    SUCCESS = 0
    PARAM_INVALID = 103900
    TIMEOUT = 103901
    NOT_CONNECTED = 103902
    ALREADY_CONNECTED = 103903
    NOTIFY_FAILED = 103904
    UNSUPPORTED = 103905
    RESOURCE_EXHAUSTED = 203900
    FAILED = 503900


class TransferOp(enum.IntEnum):
    """``adxl::TransferOp``: READ copies remote memory into local memory, WRITE the other way."""

    READ = 0
    WRITE = 1


class TransferStatus(enum.IntEnum):
    """``adxl::TransferStatus``: what :meth:`Engine.get_transfer_status` reports."""

    WAITING = 0
    COMPLETED = 1
    TIMEOUT = 2
    FAILED = 3


class Notify(NamedTuple):
    """``adxl::NotifyDesc``: a notify received (:meth:`Engine.get_notifies`)."""

    name: str
    notify_msg: str


class MemType(enum.IntEnum):
    """``adxl::MemType``: where a registered region lives (``MEM_DEVICE``/``MEM_HOST`` alias)."""

    DEVICE = 0
    HOST = 1
    MEM_DEVICE = 0
    MEM_HOST = 1


class FeatureType(enum.IntEnum):
    """``adxl::FeatureType``: the optional features :func:`get_capability` asks about."""

    AUTO_CONNECT = 0
    CLIENT_SERVER_COMM = 1


#: Values of ``adxl::GetCapability`` (``get_capability`` returns them as a bool).
FEATURE_SUPPORTED = 1
FEATURE_NOT_SUPPORTED = 0

#: Option keys of :class:`Engine` (``adxl::OPTION_*``); the values are strings.
OPTION_RDMA_TRAFFIC_CLASS = "adxl.RdmaTrafficClass"
OPTION_RDMA_SERVICE_LEVEL = "adxl.RdmaServiceLevel"
OPTION_BUFFER_POOL = "adxl.BufferPool"
OPTION_LOCAL_COMM_RES = "adxl.LocalCommRes"
OPTION_AUTO_CONNECT = "AutoConnect"
#: ascendless's own options (not the vendor's): a shared secret that every connection must
#: prove (mutual challenge-response), and ``"registered"`` to let peers reach only registered
#: memory (default ``"any"``). See docs/security.md.
OPTION_SECRET = "adxl.Secret"
OPTION_REMOTE_ACCESS = "adxl.RemoteAccess"


class AdxlError(Exception):
    """An engine call that did not return SUCCESS.

    ``status`` is the ADXL number (a :class:`Status` member when it is one of the known
    values, else the plain int the library returned); ``message`` is the library's text for
    the failure (``ascendless_last_error``), or ``""`` when it gave none.
    """

    def __init__(self, status: int, message: str = "", call: str = "") -> None:
        try:
            self.status: Union[Status, int] = Status(status)
        except ValueError:
            self.status = int(status)
        self.message = message or ""
        self.call = call
        name = self.status.name if isinstance(self.status, Status) else str(int(status))
        text = "%s: %s (%d)" % (call, name, int(status)) if call else "%s (%d)" % (name, int(status))
        if self.message:
            text += ": " + self.message
        super().__init__(text)

    def __reduce__(self) -> Tuple[Any, Tuple[int, str, str]]:
        return (type(self), (int(self.status), self.message, self.call))


class _Desc(ctypes.Structure):
    """``AscendlessTransferDesc`` (the layout of ``adxl::TransferOpDesc``)."""

    _fields_ = [("local_addr", c_size_t), ("remote_addr", c_size_t), ("len", c_size_t)]


class _Notify(ctypes.Structure):
    """``AscendlessNotify``."""

    _fields_ = [("name", c_void_p), ("notify_msg", c_void_p)]


class _ShareableHandle(ctypes.Structure):
    """``AscendlessShareableHandle`` (the 128 bytes of ``adxl::ShareableHandle``)."""

    _fields_ = [("data", ctypes.c_uint8 * 128)]


class _Counters(ctypes.Structure):
    """``AscendlessEngineCounters``."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "direct_calls", "direct_bytes", "kernel_copy_calls", "kernel_copy_bytes",
            "tcp_calls", "tcp_bytes", "ucx_calls", "ucx_bytes",
        )
    ]


class Counters(NamedTuple):
    """How an engine's TransferSync calls moved their bytes (:meth:`Engine.counters`; ours):
    calls and bytes per path since the engine was initialised. ``direct``: copied through a
    mapping of the peer's shared memory (same host); ``kernel_copy``: copied by the kernel
    between the two processes (same host); ``tcp``: sent over the engines' TCP connections;
    ``ucx``: UCX one-sided puts and gets (zero unless the library was built with UCX)."""

    direct_calls: int
    direct_bytes: int
    kernel_copy_calls: int
    kernel_copy_bytes: int
    tcp_calls: int
    tcp_bytes: int
    ucx_calls: int
    ucx_bytes: int


#: Bytes of a shareable handle (``adxl::ShareableHandle``, the vendor's ``aclrtMemFabricHandle``).
SHAREABLE_HANDLE_SIZE = 128


class TransferDesc(NamedTuple):
    """One contiguous copy: ``length`` bytes between a local and a remote address.

    Plain ``(local_addr, remote_addr, length)`` tuples are accepted wherever one is.
    """

    local_addr: int
    remote_addr: int
    length: int


_Engine = c_void_p
_PROTOTYPES = {
    "ascendless_last_error": (c_char_p, []),
    "ascendless_get_capability": (c_uint32, [c_int32, POINTER(c_int32)]),
    "ascendless_malloc_mem": (c_uint32, [c_int32, c_size_t, POINTER(c_void_p)]),
    "ascendless_free_mem": (c_uint32, [c_void_p]),
    "ascendless_export_to_shareable_handle": (c_uint32, [c_void_p, POINTER(_ShareableHandle)]),
    "ascendless_engine_create": (c_uint32, [POINTER(_Engine)]),
    "ascendless_engine_destroy": (c_uint32, [_Engine]),
    "ascendless_engine_initialize": (
        c_uint32, [_Engine, c_char_p, POINTER(c_char_p), POINTER(c_char_p), c_size_t]
    ),
    "ascendless_engine_finalize": (c_uint32, [_Engine]),
    "ascendless_engine_register_mem": (c_uint32, [_Engine, c_size_t, c_size_t, c_int32, POINTER(c_void_p)]),
    "ascendless_engine_register_mem_with": (
        c_uint32, [_Engine, c_size_t, c_size_t, c_int32, c_int32, POINTER(c_void_p)]
    ),
    "ascendless_engine_get_counters": (c_uint32, [_Engine, POINTER(_Counters)]),
    "ascendless_engine_deregister_mem": (c_uint32, [_Engine, c_void_p]),
    "ascendless_engine_connect": (c_uint32, [_Engine, c_char_p, c_int32]),
    "ascendless_engine_disconnect": (c_uint32, [_Engine, c_char_p, c_int32]),
    "ascendless_engine_transfer_sync": (
        c_uint32, [_Engine, c_char_p, c_int32, POINTER(_Desc), c_size_t, c_int32]
    ),
    "ascendless_engine_transfer_async": (
        c_uint32, [_Engine, c_char_p, c_int32, POINTER(_Desc), c_size_t, POINTER(c_void_p)]
    ),
    "ascendless_engine_get_transfer_status": (c_uint32, [_Engine, c_void_p, POINTER(c_int32)]),
    "ascendless_engine_send_notify": (c_uint32, [_Engine, c_char_p, c_char_p, c_char_p, c_int32]),
    "ascendless_engine_get_notifies": (c_uint32, [_Engine, POINTER(POINTER(_Notify)), POINTER(c_size_t)]),
    "ascendless_notifies_free": (None, [POINTER(_Notify), c_size_t]),
}


def _native(name: str) -> Any:
    """The declared C function; NotImplementedError when the loaded library lacks ADXL."""
    try:
        fn = getattr(_lib.lib, name)
    except AttributeError:
        raise NotImplementedError(
            "%s is not exported by %s (acl.adxl needs the ascendless library, not the vendor's "
            "libascendcl.so)" % (name, _lib.library_path)
        ) from None
    restype, argtypes = _PROTOTYPES[name]
    if fn.argtypes is None:
        fn.restype = restype
        fn.argtypes = argtypes
    return fn


def _last_error() -> str:
    text = _native("ascendless_last_error")()
    return "" if text is None else text.decode("utf-8", errors="replace")


def _check(status: int, call: str) -> None:
    """Raises AdxlError for a status other than SUCCESS, with this thread's error text."""
    if status != Status.SUCCESS:
        raise AdxlError(status, _last_error(), call)


def _name(value: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError("an engine name is a str such as '127.0.0.1:26000', not %r" % (value,))
    return value.encode("utf-8")


def _descs(descs: Iterable[Any], call: str) -> Tuple[Any, List[Any]]:
    """The C array of `descs` and the list it was made from."""
    items = list(descs)
    arr = (_Desc * max(len(items), 1))()
    for i, desc in enumerate(items):
        local_addr, remote_addr, length = (int(field) for field in desc)
        if local_addr < 0 or remote_addr < 0 or length < 0:
            raise AdxlError(Status.PARAM_INVALID, "descriptor %d has a negative field" % i, call)
        arr[i] = _Desc(local_addr, remote_addr, length)
    return arr, items


def _timeout(value: int) -> int:
    value = int(value)
    # Out of int32 range: clamp so the library (not ctypes) decides; <= 0 is PARAM_INVALID there.
    return max(-(1 << 31), min(value, (1 << 31) - 1))


Buffer = Any  # any object with the writable, C-contiguous buffer protocol
Memory = Union[int, Buffer]


def _pin(obj: Buffer) -> Tuple[ctypes.Array, int]:  # type: ignore[type-arg]
    """A ctypes view of a writable C-contiguous buffer, and its byte size.

    The view holds a buffer export on `obj` for as long as it lives, so a ``bytearray`` cannot
    be resized (and its memory moved) under it, and the object cannot be freed.
    """
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            "expected an address (int) or an object with the buffer protocol (bytearray, "
            "memoryview, numpy array), not %s" % type(obj).__name__
        ) from None
    if view.readonly:
        raise TypeError("the buffer of %s is read-only; ADXL needs writable memory" % type(obj).__name__)
    if not view.c_contiguous:
        raise ValueError("the buffer of %s is not C-contiguous" % type(obj).__name__)
    nbytes = view.nbytes
    if nbytes == 0:
        return (ctypes.c_char * 0)(), 0
    kind = ctypes.c_char * nbytes
    try:
        return kind.from_buffer(obj), nbytes
    except (TypeError, ValueError, BufferError):
        # Some exporters (a multi-dimensional memoryview) only hand out shaped buffers.
        return kind.from_buffer(view.cast("B")), nbytes


def buffer_address(obj: Memory) -> int:
    """The address of a writable C-contiguous buffer's first byte (an int is returned as is).

    Keep `obj` alive (and, for a bytearray, unresized) while anything uses the address.
    """
    if isinstance(obj, numbers.Integral):
        return int(obj)
    arr, nbytes = _pin(obj)
    return ctypes.addressof(arr) if nbytes else 0


def get_capability(feature: Union[FeatureType, int]) -> bool:
    """``AdxlEngine::GetCapability``: whether this build supports `feature`.

    An unknown feature number is False; a negative one raises PARAM_INVALID.
    """
    value = c_int32(0)
    _check(_native("ascendless_get_capability")(int(feature), byref(value)), "get_capability")
    return value.value == FEATURE_SUPPORTED


def malloc_mem(mem_type: Union[MemType, int], size: int) -> int:
    """``AdxlEngine::MallocMem``: `size` bytes of memory suited to transfers, as an address (int).

    ``MemType.HOST`` is pinned host memory, ``MemType.DEVICE`` device memory on the calling
    thread's current device (none: FAILED); both can be shared with engines of other
    processes. Register it with :meth:`Engine.register` (``register(addr, size, mem_type)``),
    export it with :func:`export_to_shareable_handle` and free it with :func:`free_mem`.
    Size 0 (or negative) or another type: PARAM_INVALID; out of memory: RESOURCE_EXHAUSTED.
    """
    size = int(size)
    if size < 0:
        raise AdxlError(Status.PARAM_INVALID, "negative size %d" % size, "malloc_mem")
    out = c_void_p(None)
    _check(_native("ascendless_malloc_mem")(_int32(mem_type), size, byref(out)), "malloc_mem")
    return int(out.value or 0)


def free_mem(ptr: int) -> None:
    """``AdxlEngine::FreeMem``: frees memory from :func:`malloc_mem` (its start address); any
    other address, 0 included, or memory freed already: PARAM_INVALID. An export of it
    (:func:`export_to_shareable_handle`) is withdrawn."""
    _check(_native("ascendless_free_mem")(c_void_p(_address(ptr, "free_mem") or None)), "free_mem")


def export_to_shareable_handle(addr: int) -> bytes:
    """``AdxlEngine::ExportToShareableHandle``: the 128-byte fabric handle (``bytes``) of memory
    from :func:`malloc_mem`, which another process of the same user imports
    (``aclrtMemImportFromShareableHandleV2``). The first call exports, later ones give the same
    bytes; an address that is not the start of a live :func:`malloc_mem` allocation (0, inside
    one, freed): PARAM_INVALID; a product without IPC import: UNSUPPORTED."""
    handle = _ShareableHandle()
    status = _native("ascendless_export_to_shareable_handle")(
        c_void_p(_address(addr, "export_to_shareable_handle") or None), byref(handle)
    )
    _check(status, "export_to_shareable_handle")
    return bytes(handle.data)


def _address(value: int, call: str) -> int:
    """An address argument as an int (None is 0); negative or past 64 bits: PARAM_INVALID."""
    addr = 0 if value is None else int(value)
    if not 0 <= addr < (1 << 64):
        raise AdxlError(Status.PARAM_INVALID, "address %d is out of range" % addr, call)
    return addr


def _int32(value: Union[int, enum.IntEnum]) -> int:
    """An enum argument for a C int32: out of range is PARAM_INVALID in the library (-1)."""
    value = int(value)
    return value if -(1 << 31) <= value < (1 << 31) else -1


class MemHandle:
    """A registration made by :meth:`Engine.register`; pass it to :meth:`Engine.deregister`.

    ``addr``/``length`` give the registered range (any sub-range may be used in transfers),
    ``obj`` the Python object whose memory it is (None for a plain address); the handle keeps
    that object, and a buffer export on it, alive until it is deregistered. ``local_only``
    tells whether it was registered for this engine's own transfers only (``MemDesc::local_only``).
    """

    __slots__ = ("handle", "addr", "length", "mem_type", "obj", "_pin", "local_only", "__weakref__")

    def __init__(
        self, handle: int, addr: int, length: int, mem_type: MemType, obj: Any, pin: Any, local_only: bool = False
    ) -> None:
        self.handle = handle
        self.addr = addr
        self.length = length
        self.mem_type = mem_type
        self.obj = obj
        self._pin = pin
        self.local_only = local_only

    def __repr__(self) -> str:
        extra = ", local_only=True" if self.local_only else ""
        return "MemHandle(addr=%#x, length=%d, mem_type=%s%s)" % (self.addr, self.length, self.mem_type.name, extra)


class Engine:
    """An ADXL engine (``adxl::AdxlEngine``).

    `name` is ``"ip"``, ``"ip:port"``, ``"[ipv6]"`` or ``"[ipv6]:port"``; with a port the engine
    listens there and peers connect to it by exactly that string. `options` maps option keys
    (``OPTION_BUFFER_POOL`` = ``"NUM:SIZE_MB"``, ``OPTION_AUTO_CONNECT`` = ``"0"``/``"1"``,
    ...) to values; values that are not str are converted with ``str`` (bools as "1"/"0").

    With a `name` the engine is initialised at once (a bad name or option raises
    PARAM_INVALID); without one call :meth:`initialize`. Use it as a context manager or call
    :meth:`close` to free it; :meth:`finalize` alone leaves it ready to be initialised again.

    Calls may come from any thread; the GIL is released while the library works.
    """

    def __init__(self, name: Optional[str] = None, options: Optional[Mapping[str, Any]] = None) -> None:
        handle = c_void_p(None)
        _check(_native("ascendless_engine_create")(byref(handle)), "create")
        self._handle: Optional[int] = handle.value
        self._lock = threading.Lock()
        self._regs: Dict[int, MemHandle] = {}
        self.name: Optional[str] = None
        if name is not None:
            try:
                self.initialize(name, options)
            except BaseException:
                self.close()
                raise

    # -- life cycle ---------------------------------------------------------------------------

    def _h(self) -> int:
        handle = self._handle
        if handle is None:
            raise AdxlError(Status.FAILED, "the engine is closed")
        return handle

    def initialize(self, name: str, options: Optional[Mapping[str, Any]] = None) -> None:
        """``AdxlEngine::Initialize``: starts the engine as `name` with `options`.

        PARAM_INVALID for a bad name or option; FAILED when already initialised or when the
        port cannot be bound.
        """
        pairs = list((options or {}).items())
        keys = (c_char_p * max(len(pairs), 1))()
        values = (c_char_p * max(len(pairs), 1))()
        for i, (key, value) in enumerate(pairs):
            if isinstance(value, bool):
                value = "1" if value else "0"
            keys[i] = str(key).encode("utf-8")
            values[i] = str(value).encode("utf-8")
        status = _native("ascendless_engine_initialize")(self._h(), _name(name), keys, values, len(pairs))
        _check(status, "initialize")
        self.name = name

    def finalize(self) -> None:
        """``AdxlEngine::Finalize``: closes every link and drops every registration; idempotent.

        Afterwards every call but :meth:`initialize` raises FAILED.
        """
        if self._handle is None:
            return
        _check(_native("ascendless_engine_finalize")(self._handle), "finalize")
        with self._lock:
            self._regs.clear()
        self.name = None

    def close(self) -> None:
        """Finalises the engine and frees the native one; idempotent. The object is unusable after."""
        handle, self._handle = self._handle, None
        if handle is not None:
            # Destroy finalizes first; the registrations' objects are released only after it.
            _native("ascendless_engine_destroy")(handle)
        with self._lock:
            self._regs.clear()
        self.name = None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._handle is None

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter exit the library may be gone
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else (self.name or "not initialized")
        return "<acl.adxl.Engine %s>" % state

    # -- memory -------------------------------------------------------------------------------

    def register(
        self,
        memory: Memory,
        length: Optional[int] = None,
        mem_type: MemType = MemType.HOST,
        local_only: bool = False,
    ) -> MemHandle:
        """``AdxlEngine::RegisterMem``: makes memory available to peers' transfers.

        `memory` is an address (int; `length` is then required; device memory from
        ``acl.rt.malloc`` with ``MemType.DEVICE``) or an object with the writable, C-contiguous
        buffer protocol (``bytearray``, ``memoryview``, numpy array): its whole buffer, or its
        first `length` bytes. The object is kept alive (and a ``bytearray`` unresizable) until
        :meth:`deregister`, :meth:`finalize` or :meth:`close`. Register before :meth:`connect`
        where possible; later registrations are announced to connected peers.

        With `local_only` (``MemDesc::local_only``) the region serves only this engine's own
        transfers (as their local side): it is never offered to peers, whose transfers into it
        are served as if it were not registered (refused under ``OPTION_REMOTE_ACCESS``
        ``"registered"`` or with the relay pool off). Address 0, length 0 or a range that
        wraps: PARAM_INVALID.
        """
        mem_type = MemType(mem_type)
        if isinstance(memory, numbers.Integral):
            if length is None:
                raise TypeError("register(addr, length): the length is required with an address")
            addr, size, obj, pin = int(memory), int(length), None, None
        else:
            pin, size = _pin(memory)
            addr = ctypes.addressof(pin) if size else 0
            if length is not None:
                if not 0 <= int(length) <= size:
                    raise ValueError("length %d is outside the buffer's %d bytes" % (length, size))
                size = int(length)
            obj = memory
        if addr < 0 or size < 0:
            raise AdxlError(Status.PARAM_INVALID, "negative address or length", "register")
        out = c_void_p(None)
        status = _native("ascendless_engine_register_mem_with")(
            self._h(), addr, size, int(mem_type), int(bool(local_only)), byref(out)
        )
        _check(status, "register")
        handle = MemHandle(out.value or 0, addr, size, mem_type, obj, pin, bool(local_only))
        with self._lock:
            self._regs[handle.handle] = handle
        return handle

    def deregister(self, handle: MemHandle) -> None:
        """``AdxlEngine::DeregisterMem``: withdraws a registration and releases its object."""
        raw = handle.handle if isinstance(handle, MemHandle) else handle
        _check(_native("ascendless_engine_deregister_mem")(self._h(), raw), "deregister")
        with self._lock:
            self._regs.pop(raw or 0, None)

    @property
    def registrations(self) -> List[MemHandle]:
        """The registrations currently held (a copy)."""
        with self._lock:
            return list(self._regs.values())

    # -- links ----------------------------------------------------------------------------------

    def connect(self, remote: str, timeout_ms: int = 1000) -> None:
        """``AdxlEngine::Connect`` to the engine initialised as exactly `remote`.

        PARAM_INVALID for timeout_ms <= 0 or a bad name, ALREADY_CONNECTED, FAILED when nobody
        listens there, TIMEOUT.
        """
        _check(_native("ascendless_engine_connect")(self._h(), _name(remote), _timeout(timeout_ms)), "connect")

    def disconnect(self, remote: str, timeout_ms: int = 1000) -> None:
        """``AdxlEngine::Disconnect``: PARAM_INVALID for timeout_ms <= 0, NOT_CONNECTED."""
        _check(
            _native("ascendless_engine_disconnect")(self._h(), _name(remote), _timeout(timeout_ms)), "disconnect"
        )

    # -- transfers --------------------------------------------------------------------------------

    def transfer_sync(
        self,
        remote: str,
        op: Union[TransferOp, int],
        descs: Iterable[Union[TransferDesc, Tuple[int, int, int]]],
        timeout_ms: int = 1000,
    ) -> None:
        """``AdxlEngine::TransferSync``: runs every copy and returns once all bytes have landed.

        `descs` are ``(local_addr, remote_addr, length)`` tuples (or :class:`TransferDesc`).
        READ copies remote into local, WRITE local into remote. PARAM_INVALID for
        timeout_ms <= 0 or a zero address, NOT_CONNECTED (unless AutoConnect), TIMEOUT, FAILED
        when the peer died. Local memory must stay valid until the call returns.
        """
        arr, items = _descs(descs, "transfer_sync")
        status = _native("ascendless_engine_transfer_sync")(
            self._h(), _name(remote), int(op), arr, len(items), _timeout(timeout_ms)
        )
        _check(status, "transfer_sync")

    def transfer_async(
        self,
        remote: str,
        op: Union[TransferOp, int],
        descs: Iterable[Union[TransferDesc, Tuple[int, int, int]]],
    ) -> int:
        """``AdxlEngine::TransferAsync``: queues the copies and returns a request (an int) at once;
        the engine's worker threads move the data (ADXL's ``TransferArgs`` holds only reserved
        bytes, so there is no argument for it; :class:`acl.hixl.Engine` takes its user data).
        Poll it with :meth:`get_transfer_status`.
        NOT_CONNECTED (unless AutoConnect), RESOURCE_EXHAUSTED when the engine already holds
        4096 requests. Local memory must stay valid until the request is reported done.
        """
        arr, items = _descs(descs, "transfer_async")
        req = c_void_p()
        status = _native("ascendless_engine_transfer_async")(
            self._h(), _name(remote), int(op), arr, len(items), byref(req)
        )
        _check(status, "transfer_async")
        return int(req.value or 0)

    def get_transfer_status(self, req: int) -> TransferStatus:
        """``AdxlEngine::GetTransferStatus``: WAITING, COMPLETED, TIMEOUT (its time limit,
        ``ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS``, passed first) or FAILED; a request reported done
        is freed (asking again: PARAM_INVALID). A request whose link went
        away raises NOT_CONNECTED (it is freed too)."""
        value = c_int32(-1)
        status = _native("ascendless_engine_get_transfer_status")(self._h(), c_void_p(int(req)), byref(value))
        _check(status, "get_transfer_status")
        return TransferStatus(value.value)

    def send_notify(self, remote: str, name: str, msg: str = "", timeout_ms: int = 1000) -> None:
        """``AdxlEngine::SendNotify``: returns once `remote` acknowledged the notify; it lands after
        the data of this engine's earlier :meth:`transfer_async` requests to `remote`.
        PARAM_INVALID (name or msg over 1024 bytes), NOT_CONNECTED, TIMEOUT,
        RESOURCE_EXHAUSTED (4096 queued at the peer), NOTIFY_FAILED."""
        status = _native("ascendless_engine_send_notify")(
            self._h(), _name(remote), str(name).encode("utf-8"), str(msg).encode("utf-8"), _timeout(timeout_ms)
        )
        _check(status, "send_notify")

    def get_notifies(self) -> List[Notify]:
        """``AdxlEngine::GetNotifies``: every notify received from any peer since the last call,
        oldest first."""
        arr = POINTER(_Notify)()
        count = c_size_t(0)
        _check(_native("ascendless_engine_get_notifies")(self._h(), byref(arr), byref(count)), "get_notifies")
        try:
            return [
                Notify(
                    ctypes.string_at(arr[i].name).decode("utf-8", errors="replace"),
                    ctypes.string_at(arr[i].notify_msg).decode("utf-8", errors="replace"),
                )
                for i in range(count.value)
            ]
        finally:
            _native("ascendless_notifies_free")(arr, count.value)

    def _transfer_buffer(
        self,
        op: TransferOp,
        remote: str,
        local: Memory,
        remote_addr: int,
        length: Optional[int],
        timeout_ms: int,
    ) -> int:
        if isinstance(local, numbers.Integral):
            if length is None:
                raise TypeError("the length is required with a local address")
            self.transfer_sync(remote, op, [(int(local), remote_addr, int(length))], timeout_ms)
            return int(length)
        pin, size = _pin(local)  # held until the copy returns
        if length is not None:
            if not 0 <= int(length) <= size:
                raise ValueError("length %d is outside the buffer's %d bytes" % (length, size))
            size = int(length)
        addr = ctypes.addressof(pin) if size else 0
        self.transfer_sync(remote, op, [(addr, remote_addr, size)], timeout_ms)
        del pin
        return size

    def read(
        self,
        remote: str,
        local: Memory,
        remote_addr: int,
        length: Optional[int] = None,
        timeout_ms: int = 1000,
    ) -> int:
        """Copies `length` bytes (default: the whole local buffer) from `remote_addr` on
        `remote` into `local` (a writable buffer or an address); returns the byte count."""
        return self._transfer_buffer(TransferOp.READ, remote, local, remote_addr, length, timeout_ms)

    def write(
        self,
        remote: str,
        local: Memory,
        remote_addr: int,
        length: Optional[int] = None,
        timeout_ms: int = 1000,
    ) -> int:
        """Copies `length` bytes (default: the whole local buffer) of `local` to `remote_addr`
        on `remote`; returns the byte count. `local` must be writable memory as well (the
        buffer protocol's writable flag is what proves it is not a temporary copy)."""
        return self._transfer_buffer(TransferOp.WRITE, remote, local, remote_addr, length, timeout_ms)

    def counters(self) -> Counters:
        """How this engine's :meth:`transfer_sync` calls (and :meth:`read`/:meth:`write`) moved
        their bytes since it was initialised (:class:`Counters`; ascendless's own,
        ``ascendless_engine_get_counters``, not a member of the C++ class); all zeros before
        :meth:`initialize` and after :meth:`finalize`."""
        out = _Counters()
        _check(_native("ascendless_engine_get_counters")(self._h(), byref(out)), "counters")
        return Counters(*(int(getattr(out, name)) for name, _ in _Counters._fields_))

    # -- static members (no engine needed) -----------------------------------------------------

    @staticmethod
    def capability(feature: Union[FeatureType, int]) -> bool:
        """:func:`get_capability` (``AdxlEngine::GetCapability`` is static too)."""
        return get_capability(feature)

    @staticmethod
    def malloc_mem(mem_type: Union[MemType, int], size: int) -> int:
        """:func:`malloc_mem` (``AdxlEngine::MallocMem`` is static)."""
        return malloc_mem(mem_type, size)

    @staticmethod
    def free_mem(ptr: int) -> None:
        """:func:`free_mem` (``AdxlEngine::FreeMem`` is static)."""
        free_mem(ptr)

    @staticmethod
    def export_to_shareable_handle(addr: int) -> bytes:
        """:func:`export_to_shareable_handle` (``AdxlEngine::ExportToShareableHandle`` is static)."""
        return export_to_shareable_handle(addr)
