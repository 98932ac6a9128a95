"""``acl``: the vendor's pyACL module, in pure Python over the ascendless library.

Programs written for the vendor's ``acl`` module run unchanged::

    import acl
    ret = acl.init()
    ret = acl.rt.set_device(0)
    stream, ret = acl.rt.create_stream()
    notify, ret = acl.rt.create_notify(0)
    key, ret = acl.rt.notify_get_export_key(notify, 65, 0)

Handles and pointers are plain ints; outputs come first in the returned tuple and ``ret`` (the
``aclError`` number, 0 on success) last; functions without outputs return ``ret``.

Submodules: :mod:`acl.rt` (runtime, notify, IPC memory), :mod:`acl.util` (pointers of Python
buffers, as the vendor's ``acl.util``) and :mod:`acl.constants` (the C header's enum and macro
values; an ascendless addition: the vendor module has no such submodule, its samples define
these numbers themselves).
:mod:`acl.adxl` is ascendless's own Pythonic ADXL transfer engine (``acl.adxl.Engine``), and
:mod:`acl.hixl` the same engine under its HIXL name, with asynchronous connects and user data
handed back by the batched transfer status (``acl.hixl.Engine``); the vendor has no Python
binding for either.

The library is found as described in :mod:`acl._lib` (``ASCENDLESS_LIBRARY``, then
``$ASCEND_TOOLKIT_HOME/lib64/libascendcl.so``, then the toolkit this package is installed in,
then a copy inside the package, then the loader path); importing fails with an ImportError listing every place tried when none is found.
"""

from __future__ import annotations

from ctypes import byref, c_uint64
from typing import Optional, Tuple

from . import _lib
from ._lib import func, optional_str
from . import adxl, constants, dump, mdl, prof, rt, tdt, util  # noqa: F401  (submodules: acl.rt.*, acl.mdl.*, ...)
from . import _auto, _base

__all__ = [
    "init", "finalize", "finalize_reference", "get_recent_err_msg", "get_soc_name",
    "rt", "mdl", "tdt", "prof", "dump", "util", "constants", "adxl", "library_path", "__version__",
]

__version__ = "0.1.0"

#: Where the AscendCL library was loaded from.
library_path: str = _lib.library_path


def init(config_path: Optional[str] = None) -> int:
    """``aclInit``: initialises AscendCL. `config_path` may be None or "" (no file).

    Returns ret: 0, or 100002 when already initialised (which callers treat as success).
    """
    path = None if config_path is None else str(config_path).encode("utf-8")
    return func("aclInit")(path)


def finalize() -> int:
    """``aclFinalize``: finalises whatever the count. Returns ret (100037 the second time)."""
    return func("aclFinalize")()


def finalize_reference() -> Tuple[int, int]:
    """``aclFinalizeReference``: ``count, ret``; one ``init`` count away, finalising at zero."""
    count = c_uint64(0)
    ret = func("aclFinalizeReference")(byref(count))
    return count.value, ret


def get_recent_err_msg() -> Optional[str]:
    """``aclGetRecentErrMsg``: this thread's most recent error text, or None.

    Reading consumes the message (a second call gives None).
    """
    return optional_str(func("aclGetRecentErrMsg")())


def get_soc_name() -> Optional[str]:
    """``aclrtGetSocName`` under pyACL's name ``acl.get_soc_name``: e.g. ``"Ascend910B1"``."""
    return rt.get_soc_name()


# The hand-written ones with structures, arrays, callbacks or variadic arguments (acl/_base.py).
for _name in _base.__all__:
    globals()[_name] = getattr(_base, _name)
__all__ += _base.__all__

# Every other function of acl.h and acl_base.h, built from its C prototype (acl/_auto.py).
__all__ += _auto.install(globals(), "", func)
