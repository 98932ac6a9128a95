"""Finding and loading the AscendCL library, and declaring the C prototypes used by `acl`.

Lookup order (the first that exists is loaded):

1. ``ASCENDLESS_LIBRARY``: an explicit path to ``libascendless.so`` (or any library with the
   AscendCL ABI). If it is set but cannot be loaded, import fails at once rather than quietly
   falling back to another library.
2. ``$ASCEND_TOOLKIT_HOME/lib64/libascendcl.so``: an installed toolkit tree (what
   ``source <prefix>/set_env.sh`` sets up).
3. ``<toolkit>/lib64/libascendcl.so`` when this package is installed in a toolkit tree, as
   ``make install`` puts it (``<toolkit>/python/site-packages/acl``): the library installed with
   it, for a PYTHONPATH set by hand rather than by ``set_env.sh``.
4. A copy shipped inside this package, ``acl/lib/libascendcl.so`` or ``acl/lib/libascendless.so``
   (only present when a wheel was built with one; none is bundled by default).
5. The dynamic loader's search path: ``libascendcl.so`` through ``LD_LIBRARY_PATH``, the
   ld.so cache and the system directories.

When none loads, :class:`ImportError` lists every place that was tried and why it failed.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (
    POINTER,
    c_char,
    c_char_p,
    c_int,
    c_int32,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import List, Optional, Tuple

__all__ = ["lib", "library_path", "load_library", "ServerPid"]

_PACKAGE_LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
_PACKAGE_LIB_NAMES = ("libascendcl.so", "libascendless.so")


def _toolkit_of_package() -> Optional[str]:
    """The toolkit tree holding this package (``<toolkit>/python/site-packages/acl``), or None."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    python = os.path.dirname(site)
    if os.path.basename(site) == "site-packages" and os.path.basename(python) == "python":
        return os.path.dirname(python)
    return None


def _candidates() -> List[Tuple[str, str]]:
    """The places to try, in order, as (description, path-or-name) pairs."""
    places: List[Tuple[str, str]] = []
    toolkit = os.environ.get("ASCEND_TOOLKIT_HOME")
    if toolkit:
        places.append(
            ("$ASCEND_TOOLKIT_HOME/lib64/libascendcl.so", os.path.join(toolkit, "lib64", "libascendcl.so"))
        )
    else:
        places.append(("$ASCEND_TOOLKIT_HOME/lib64/libascendcl.so", ""))
    toolkit_of_package = _toolkit_of_package()
    if toolkit_of_package:
        places.append(
            ("the toolkit this package is installed in", os.path.join(toolkit_of_package, "lib64", "libascendcl.so"))
        )
    for name in _PACKAGE_LIB_NAMES:
        places.append(("the package's own copy", os.path.join(_PACKAGE_LIB_DIR, name)))
    places.append(("the dynamic loader's search path", "libascendcl.so"))
    return places


def load_library() -> Tuple[ctypes.CDLL, str]:
    """Loads the library by the documented lookup order; returns it and where it came from."""
    explicit = os.environ.get("ASCENDLESS_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit), explicit
        except OSError as err:
            raise ImportError(
                "acl: cannot load the AscendCL library named by ASCENDLESS_LIBRARY=%r: %s" % (explicit, err)
            ) from err

    tried: List[str] = ["ASCENDLESS_LIBRARY: not set"]
    for what, path in _candidates():
        if not path:
            tried.append("%s: ASCEND_TOOLKIT_HOME not set" % what)
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append("%s: %s does not exist" % (what, path))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as err:
            tried.append("%s: %s: %s" % (what, path, err))
    raise ImportError(
        "acl: cannot find the AscendCL library (libascendcl.so / libascendless.so). Looked in:\n  - "
        + "\n  - ".join(tried)
        + "\nSet ASCENDLESS_LIBRARY to the library's path, or source <prefix>/set_env.sh of an "
        "ascendless install."
    )


class ServerPid(ctypes.Structure):
    """``aclrtServerPid``: the processes of one server of a super-node."""

    _fields_ = [("sdid", c_uint32), ("pid", POINTER(c_int32)), ("num", c_size_t)]


lib, library_path = load_library()

_P = c_void_p
_PP = POINTER(c_void_p)

# name: (restype, argtypes). aclError is int32.
_PROTOTYPES = {
    # acl.h
    "aclInit": (c_int, [c_char_p]),
    "aclFinalize": (c_int, []),
    "aclFinalizeReference": (c_int, [POINTER(c_uint64)]),
    "aclGetRecentErrMsg": (c_char_p, []),
    # devices, peer access, contexts
    "aclrtSetDevice": (c_int, [c_int32]),
    "aclrtResetDevice": (c_int, [c_int32]),
    "aclrtResetDeviceForce": (c_int, [c_int32]),
    "aclrtGetDevice": (c_int, [POINTER(c_int32)]),
    "aclrtGetDeviceCount": (c_int, [POINTER(c_uint32)]),
    "aclrtGetSocName": (c_char_p, []),
    "aclrtDeviceGetBareTgid": (c_int, [POINTER(c_int32)]),
    "aclrtDeviceCanAccessPeer": (c_int, [POINTER(c_int32), c_int32, c_int32]),
    "aclrtDeviceEnablePeerAccess": (c_int, [c_int32, c_uint32]),
    "aclrtDeviceDisablePeerAccess": (c_int, [c_int32]),
    "aclrtDevicePeerAccessStatus": (c_int, [c_int32, c_int32, POINTER(c_int32)]),
    "aclrtCreateContext": (c_int, [_PP, c_int32]),
    "aclrtDestroyContext": (c_int, [_P]),
    "aclrtSetCurrentContext": (c_int, [_P]),
    "aclrtGetCurrentContext": (c_int, [_PP]),
    # streams and events
    "aclrtCreateStream": (c_int, [_PP]),
    "aclrtCreateStreamWithConfig": (c_int, [_PP, c_uint32, c_uint32]),
    "aclrtDestroyStream": (c_int, [_P]),
    "aclrtDestroyStreamForce": (c_int, [_P]),
    "aclrtSynchronizeStream": (c_int, [_P]),
    "aclrtSynchronizeStreamWithTimeout": (c_int, [_P, c_int32]),
    "aclrtCreateEvent": (c_int, [_PP]),
    "aclrtCreateEventWithFlag": (c_int, [_PP, c_uint32]),
    "aclrtDestroyEvent": (c_int, [_P]),
    "aclrtRecordEvent": (c_int, [_P, _P]),
    "aclrtResetEvent": (c_int, [_P, _P]),
    "aclrtSynchronizeEvent": (c_int, [_P]),
    "aclrtSynchronizeEventWithTimeout": (c_int, [_P, c_int32]),
    "aclrtStreamWaitEvent": (c_int, [_P, _P]),
    # memory
    "aclrtMalloc": (c_int, [_PP, c_size_t, c_int]),
    "aclrtFree": (c_int, [_P]),
    "aclrtMallocHost": (c_int, [_PP, c_size_t]),
    "aclrtFreeHost": (c_int, [_P]),
    "aclrtMemcpy": (c_int, [_P, c_size_t, _P, c_size_t, c_int]),
    "aclrtMemcpyAsync": (c_int, [_P, c_size_t, _P, c_size_t, c_int, _P]),
    "aclrtMemset": (c_int, [_P, c_size_t, c_int32, c_size_t]),
    "aclrtMemsetAsync": (c_int, [_P, c_size_t, c_int32, c_size_t, _P]),
    "aclrtGetMemInfo": (c_int, [c_int, POINTER(c_size_t), POINTER(c_size_t)]),
    # notify
    "aclrtCreateNotify": (c_int, [_PP, c_uint64]),
    "aclrtDestroyNotify": (c_int, [_P]),
    "aclrtRecordNotify": (c_int, [_P, _P]),
    "aclrtWaitAndResetNotify": (c_int, [_P, _P, c_uint32]),
    "aclrtGetNotifyId": (c_int, [_P, POINTER(c_uint32)]),
    "aclrtNotifyBatchReset": (c_int, [_PP, c_size_t]),
    "aclrtNotifyGetExportKey": (c_int, [_P, POINTER(c_char), c_size_t, c_uint64]),
    "aclrtNotifySetImportPid": (c_int, [_P, POINTER(c_int32), c_size_t]),
    "aclrtNotifySetImportPidInterServer": (c_int, [_P, POINTER(ServerPid), c_size_t]),
    "aclrtNotifyImportByKey": (c_int, [_PP, c_char_p, c_uint64]),
    # IPC memory
    "aclrtIpcMemGetExportKey": (c_int, [_P, c_size_t, POINTER(c_char), c_size_t, c_uint64]),
    "aclrtIpcMemSetImportPid": (c_int, [c_char_p, POINTER(c_int32), c_size_t]),
    "aclrtIpcMemImportByKey": (c_int, [_PP, c_char_p, c_uint64]),
    "aclrtIpcMemClose": (c_int, [c_char_p]),
}


def _declare() -> None:
    # Every function of the generated table first, then the hand-written prototypes above for
    # the functions written by hand.
    from . import _auto

    _auto.declare(lib)
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            # A library without this symbol (an older vendor runtime, say): the Python function
            # that needs it raises NotImplementedError when called.
            continue
        fn.restype = restype
        fn.argtypes = argtypes


_declare()


def func(name: str):  # type: ignore[no-untyped-def]
    """The declared C function `name`; NotImplementedError if the library lacks it."""
    try:
        return getattr(lib, name)
    except AttributeError:
        raise NotImplementedError("%s is not exported by %s" % (name, library_path)) from None


def optional_str(value: Optional[bytes]) -> Optional[str]:
    """A C string result as str (None for NULL)."""
    if value is None:
        return None
    return value.decode("utf-8", errors="replace")
