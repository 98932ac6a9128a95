"""Hand-written pyACL functions at the top of ``acl`` (``acl*`` and ``aclsys*`` of ``acl.h``,
``acl_base.h`` and ``acl_rt.h``) whose C prototypes have structures, arrays, callbacks, character
buffers or variadic arguments, so acl/_auto.py cannot build them. ``acl`` imports every public
name of this module. Conventions as in :mod:`acl._rt_devices` (structures as dicts with snake
case keys, empty outputs when ``ret`` is not 0, callbacks kept alive and never raising into C).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import POINTER, Structure, byref, c_char, c_char_p, c_int, c_int32, c_size_t, c_uint32, c_void_p
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._lib import func, lib
from ._rt_devices import _bytes_in, _code

__all__: List[str] = [
    "sys_get_cann_version", "sys_get_version_str", "sys_get_version_num",
    "init_callback_register", "init_callback_unregister",
    "finalize_callback_register", "finalize_callback_unregister",
    "app_log", "get_cann_attribute_list",
]

#: ``ACL_PKG_VERSION_MAX_SIZE`` and ``ACL_PKG_VERSION_PARTS_MAX_SIZE`` of ``acl/acl_rt.h``.
PKG_VERSION_MAX_SIZE = 128
PKG_VERSION_PARTS_MAX_SIZE = 64


class CANNPackageVersion(Structure):
    """``aclCANNPackageVersion``: the version and its parts, as strings."""

    _fields_ = [
        ("version", c_char * PKG_VERSION_MAX_SIZE),
        ("majorVersion", c_char * PKG_VERSION_PARTS_MAX_SIZE),
        ("minorVersion", c_char * PKG_VERSION_PARTS_MAX_SIZE),
        ("releaseVersion", c_char * PKG_VERSION_PARTS_MAX_SIZE),
        ("patchVersion", c_char * PKG_VERSION_PARTS_MAX_SIZE),
        ("reserved", c_char * PKG_VERSION_MAX_SIZE),
    ]


InitCallbackFunc = ctypes.CFUNCTYPE(c_int32, c_void_p, c_size_t, c_void_p)
FinalizeCallbackFunc = ctypes.CFUNCTYPE(c_int32, c_void_p)

_PROTOTYPES = {
    "aclsysGetCANNVersion": (c_int, [c_int, POINTER(CANNPackageVersion)]),
    "aclsysGetVersionStr": (c_int, [c_char_p, POINTER(c_char)]),
    "aclsysGetVersionNum": (c_int, [c_char_p, POINTER(c_int32)]),
    "aclInitCallbackRegister": (c_int, [c_int, InitCallbackFunc, c_void_p]),
    "aclInitCallbackUnRegister": (c_int, [c_int, InitCallbackFunc]),
    "aclFinalizeCallbackRegister": (c_int, [c_int, FinalizeCallbackFunc, c_void_p]),
    "aclFinalizeCallbackUnRegister": (c_int, [c_int, FinalizeCallbackFunc]),
    "aclGetCannAttributeList": (c_int, [POINTER(POINTER(c_int)), POINTER(c_size_t)]),
}

for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name, None)
    if _fn is not None:
        _fn.restype = _restype
        _fn.argtypes = _argtypes

# aclAppLog is variadic: only its fixed parameters are declared; the message always goes
# through a "%s" format, so one string argument follows (ctypes passes it as a char *).
_app_log = getattr(lib, "aclAppLog", None)
if _app_log is not None:
    _app_log.restype = None


# ---- versions ------------------------------------------------------------------------------


def sys_get_cann_version(name: int) -> Tuple[Dict[str, str], int]:
    """``aclsysGetCANNVersion``: ``version, ret`` of package `name` (an ``aclCANNPackageName``:
    ``ACL_PKG_NAME_CANN`` 0 ... ``ACL_PKG_NAME_DRIVER`` 7; another value is 100000).

    `version` is the ``aclCANNPackageVersion`` as a dict of strings: ``version``,
    ``major_version``, ``minor_version``, ``release_version``, ``patch_version``, ``reserved``.
    """
    out = CANNPackageVersion()
    ret = func("aclsysGetCANNVersion")(name, byref(out))
    if ret != 0:
        return {}, ret
    fields = ("version", "majorVersion", "minorVersion", "releaseVersion", "patchVersion", "reserved")
    keys = ("version", "major_version", "minor_version", "release_version", "patch_version", "reserved")
    return {k: getattr(out, f).decode("utf-8", errors="replace") for k, f in zip(keys, fields)}, ret


def sys_get_version_str(pkg_name: str) -> Tuple[str, int]:
    """``aclsysGetVersionStr``: ``version_str, ret`` of package `pkg_name` (``"cann"``,
    ``"runtime"``, ``"driver"``, ...; one not installed is 100003)."""
    buf = ctypes.create_string_buffer(PKG_VERSION_MAX_SIZE)
    ret = func("aclsysGetVersionStr")(_bytes_in(pkg_name), buf)
    return (buf.value.decode("utf-8", errors="replace") if ret == 0 else ""), ret


def sys_get_version_num(pkg_name: str) -> Tuple[int, int]:
    """``aclsysGetVersionNum``: ``version_num, ret`` of package `pkg_name` (as
    ``sys_get_version_str``), a number that orders releases (9.0.0 is 90000000)."""
    value = c_int32(0)
    ret = func("aclsysGetVersionNum")(_bytes_in(pkg_name), byref(value))
    return (value.value if ret == 0 else 0), ret


# ---- init and finalize callbacks -----------------------------------------------------------

_lock = threading.RLock()  # re-entrant: a callback run inside a registration may register
# (type, Python callable) -> [thunk, user data]: C keys the callbacks by type and function
# pointer, so one thunk per pair makes registering the same pair again replace the user data.
_init_callbacks: Dict[Tuple[int, Any], List[Any]] = {}
_finalize_callbacks: Dict[Tuple[int, Any], List[Any]] = {}


def init_callback_register(type: int, cb_func: Optional[Callable[[str, int, Any], Any]], user_data: Any = None) -> int:  # noqa: A002
    """``aclInitCallbackRegister``: ``ret = acl.init_callback_register(type, cb_func, user_data)``.

    ``cb_func(config_str, len, user_data)`` runs in ``acl.init`` with the configuration file's
    text (``""`` without one) and its length in bytes, and returns an int ``ret`` (None is 0; a
    non-zero one, or an exception, fails ``init``); callbacks run by `type`
    (``aclRegisterCallbackType``: 0..7, ``ACL_REG_TYPE_OTHER`` 65535 last; another is 100000).
    Registered after ``init`` it runs at once and its ``ret`` is this call's. The same `type`
    and callable again replaces `user_data`. None is 100000.
    """
    if cb_func is None:
        return func("aclInitCallbackRegister")(type, InitCallbackFunc(), None)
    key = (int(type), cb_func)
    with _lock:
        entry = _init_callbacks.get(key)
        fresh = entry is None
        if entry is None:
            # [thunk, user data, runs]: the thunk reads the user data of the latest registration.
            cell: List[Any] = [None, user_data, 0]

            def call(config: Optional[int], size: int, _user: Optional[int]) -> int:
                cell[2] += 1
                text = ctypes.string_at(config, size).decode("utf-8", errors="replace") if config and size else ""
                return _code("init", cb_func, text, size, cell[1])

            cell[0] = InitCallbackFunc(call)
            entry = cell
            # Stored first: registered after init, the callback runs inside the C call.
            _init_callbacks[key] = entry
        old_user_data, runs = entry[1], entry[2]
        entry[1] = user_data
        ret = func("aclInitCallbackRegister")(type, entry[0], None)
        if ret != 0 and entry[2] == runs:
            # Refused before anything ran (a bad type): C kept nothing new. When the callback
            # ran and failed, C keeps it registered, and so does this module.
            if fresh:
                _init_callbacks.pop(key, None)
            else:
                entry[1] = old_user_data
        return ret


def init_callback_unregister(type: int, cb_func: Optional[Callable[..., Any]]) -> int:  # noqa: A002
    """``aclInitCallbackUnRegister``: removes the init callback of `type` and `cb_func` (one not
    registered: 0; None: 100000). Returns ret."""
    if cb_func is None:
        return func("aclInitCallbackUnRegister")(type, InitCallbackFunc())
    key = (int(type), cb_func)
    with _lock:
        entry = _init_callbacks.get(key)
        thunk = entry[0] if entry is not None else InitCallbackFunc(lambda *_: 0)
        ret = func("aclInitCallbackUnRegister")(type, thunk)
        if ret == 0:
            _init_callbacks.pop(key, None)
        return ret


def finalize_callback_register(type: int, cb_func: Optional[Callable[[Any], Any]], user_data: Any = None) -> int:  # noqa: A002
    """``aclFinalizeCallbackRegister``: ``ret = acl.finalize_callback_register(type, cb_func,
    user_data)``.

    ``cb_func(user_data)`` runs in ``acl.finalize`` (and in the ``finalize_reference`` that
    finalises) before the devices are released, and returns an int (None is 0; a non-zero one
    is logged and finalising goes on). Types, repeated registration and None as for
    ``init_callback_register``.
    """
    if cb_func is None:
        return func("aclFinalizeCallbackRegister")(type, FinalizeCallbackFunc(), None)
    key = (int(type), cb_func)
    with _lock:
        entry = _finalize_callbacks.get(key)
        fresh = entry is None
        if fresh:
            cell: List[Any] = [None, user_data]

            def call(_user: Optional[int]) -> int:
                return _code("finalize", cb_func, cell[1])

            cell[0] = FinalizeCallbackFunc(call)
            entry = cell
        old_user_data = entry[1]
        entry[1] = user_data
        ret = func("aclFinalizeCallbackRegister")(type, entry[0], None)
        if ret == 0:
            _finalize_callbacks[key] = entry
        elif not fresh:
            entry[1] = old_user_data
        return ret


def finalize_callback_unregister(type: int, cb_func: Optional[Callable[..., Any]]) -> int:  # noqa: A002
    """``aclFinalizeCallbackUnRegister``: removes the finalize callback of `type` and `cb_func`
    (one not registered: 0; None: 100000). Returns ret."""
    if cb_func is None:
        return func("aclFinalizeCallbackUnRegister")(type, FinalizeCallbackFunc())
    key = (int(type), cb_func)
    with _lock:
        entry = _finalize_callbacks.get(key)
        thunk = entry[0] if entry is not None else FinalizeCallbackFunc(lambda *_: 0)
        ret = func("aclFinalizeCallbackUnRegister")(type, thunk)
        if ret == 0:
            _finalize_callbacks.pop(key, None)
        return ret


# ---- logging and attributes ----------------------------------------------------------------


def app_log(log_level: int, message: str) -> None:
    """``aclAppLog`` in pyACL's form ``acl.app_log(log_level, message)``: logs the already
    formatted `message` at `log_level` (``ACL_DEBUG`` 0, ``ACL_INFO`` 1, ``ACL_WARNING`` 2,
    ``ACL_ERROR`` 3) through the library's logger, with the caller's function, file and line.

    The C function is variadic (printf-style); Python formats the message itself (``%`` or
    f-strings), so it is passed through a ``"%s"`` format and ``%`` in it is printed as is.
    Returns None. The library cuts a message at 1024 bytes (``...[truncated]``).
    """
    frame = sys._getframe(1)
    code = frame.f_code
    text = message if isinstance(message, bytes) else str(message).encode("utf-8", errors="replace")
    func("aclAppLog")(
        c_int(int(log_level)),
        c_char_p(code.co_name.encode("utf-8", errors="replace")),
        c_char_p(os.path.basename(code.co_filename).encode("utf-8", errors="replace")),
        c_uint32(frame.f_lineno),
        c_char_p(b"%s"),
        c_char_p(text),
    )


def get_cann_attribute_list() -> Tuple[List[int], int, int]:
    """``aclGetCannAttributeList``: ``cann_attr_list, num, ret`` (pyACL's form): the list of the
    ``aclCannAttr`` values this environment has, and its length."""
    array = POINTER(c_int)()
    num = c_size_t(0)
    ret = func("aclGetCannAttributeList")(byref(array), byref(num))
    if ret != 0:
        return [], 0, ret
    count = int(num.value)
    return ([int(array[i]) for i in range(count)] if count and array else []), count, ret
