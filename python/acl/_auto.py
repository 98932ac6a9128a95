"""pyACL functions built from the C prototypes of ``_signatures.py``, for every runtime function
whose parameters all have a plain Python form: one line of the table, one Python function, no
hand-written copy of the C behaviour.

Names follow pyACL's rule: the C name without its family prefix, in snake case, in the family's
module (``aclrtSynchronizeDevice`` is ``acl.rt.synchronize_device``, ``aclmdlRICaptureBegin``
``acl.mdl.ri_capture_begin``, ``acltdtCreateChannel`` ``acl.tdt.create_channel``,
``aclprofStart`` ``acl.prof.start``, ``aclDataTypeSize`` ``acl.data_type_size``); ``UnSubscribe`` and
``UnRegister`` read as one word (``acl.rt.unsubscribe_report``), and the few names pyACL spells
otherwise are in ``PYACL_NAMES``.

Calls follow pyACL's convention: inputs in the C order (handles and addresses as ``int``, 0 or
None for NULL; ``const char *`` as ``str``); outputs (``T *`` and ``void **``) come back first in
the returned tuple, ``ret`` last; 0 for each output when ``ret`` is not 0. A function whose C
return is not ``aclError`` returns that value (a ``str`` for a C string).
"""

from __future__ import annotations

import ctypes
import inspect
import re
from typing import Callable, Dict, List, Optional, Tuple

from ._signatures import SIGNATURES

# pyACL's own spellings where the rule gives another name (C name -> Python name).
PYACL_NAMES = {
    "aclrtSetCurrentContext": "set_context",
    "aclrtGetCurrentContext": "get_context",
}

# Other names pyACL code uses for the same C function (module, alias) -> C name.
ALIASES = {
    ("rt", "set_current_context"): "aclrtSetCurrentContext",
    ("rt", "get_current_context"): "aclrtGetCurrentContext",
}

_PREFIXES = (
    ("aclmdl", "mdl"),
    ("aclrt", "rt"),
    ("acltdt", "tdt"),
    ("aclprof", "prof"),
    ("acldump", "dump"),
    ("acl", ""),
)


def snake(name: str) -> str:
    name = name.replace("UnSubscribe", "Unsubscribe").replace("UnRegister", "Unregister").replace("P2P", "P2p")
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([a-z])(\d+[a-z])", r"\1_\2", name)  # Memcpy2d -> memcpy_2d, V2 stays v2
    name = re.sub(r"(\d)([A-Z])", r"\1_\2", name)
    return name.lower()


def python_name(c_name: str) -> Tuple[str, str]:
    """(module, name): module "rt", "mdl", "tdt", "prof", "dump" or "" (the top of ``acl``)."""
    for prefix, module in _PREFIXES:
        if c_name.startswith(prefix):
            if c_name in PYACL_NAMES:
                return module, PYACL_NAMES[c_name]
            return module, snake(c_name[len(prefix) :])
    raise ValueError(c_name)


def is_manual(c_name: str) -> bool:
    _, ret, params = SIGNATURES[c_name]
    return ret == "manual" or any(kind == "manual" for _, _, kind in params)


def _ctype(name: str):  # type: ignore[no-untyped-def]
    return getattr(ctypes, name)


def declare(lib: ctypes.CDLL) -> None:
    """Gives every function of the table that is not manual its ctypes prototype."""
    for c_name, (_, ret, params) in SIGNATURES.items():
        if is_manual(c_name):
            continue
        try:
            fn = getattr(lib, c_name)
        except AttributeError:
            continue
        fn.restype = ctypes.c_int if ret == "aclError" else (None if ret == "void" else _ctype(ret))
        types = []
        for _, ctype, kind in params:
            if kind in ("out", "outptr"):
                types.append(ctypes.POINTER(_ctype(ctype)))
            else:
                types.append(_ctype(ctype))
        fn.argtypes = types


def _arg(kind: str, value: object) -> object:
    if kind == "ptr" or (kind == "in" and value is None):
        return None if value is None or value == 0 else int(value)  # type: ignore[call-overload]
    if kind == "str":
        if value is None or isinstance(value, bytes):
            return value
        return str(value).encode("utf-8")
    return value


def _out_value(cell: object) -> object:
    value = cell.value  # type: ignore[attr-defined]
    if value is None:
        return 0
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def make(c_name: str, lookup: Callable[[str], object]) -> Callable[..., object]:
    """The pyACL function of `c_name` (not manual), calling ``lookup(c_name)``."""
    _, ret, params = SIGNATURES[c_name]
    inputs = [(snake(p), kind) for p, _, kind in params if kind not in ("out", "outptr")]
    outputs = [p for p, _, kind in params if kind in ("out", "outptr")]

    def call(*args: object, **kwargs: object) -> object:
        bound = call.__signature__.bind(*args, **kwargs)  # type: ignore[attr-defined]
        given = iter(bound.args)
        c_args: List[object] = []
        cells: List[object] = []
        for _, ctype, kind in params:
            if kind in ("out", "outptr"):
                cell = _ctype(ctype)()
                cells.append(cell)
                c_args.append(ctypes.byref(cell))
            else:
                c_args.append(_arg(kind, next(given)))
        result = lookup(c_name)(*c_args)  # type: ignore[operator]
        if ret != "aclError":
            if ret == "c_char_p":
                return None if result is None else result.decode("utf-8", errors="replace")
            if ret == "c_void_p":
                return 0 if result is None else result
            return result
        if not cells:
            return result
        values = [(_out_value(c) if result == 0 else 0) for c in cells]
        return (*values, result)

    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name, _ in inputs]
    )
    module, py = python_name(c_name)
    call.__name__ = call.__qualname__ = py
    shape = ", ".join([snake(o) for o in outputs] + ["ret"]) if ret == "aclError" and outputs else (
        "ret" if ret == "aclError" else "the C result"
    )
    call.__doc__ = "``%s``: returns %s (built from the C prototype, acl/_auto.py)." % (c_name, shape)
    return call


def install(namespace: Dict[str, object], module: str, lookup: Callable[[str], object]) -> List[str]:
    """Defines in `namespace` the built function of every table entry of `module` that has no
    hand-written one there; returns the names it defined."""
    added = []
    for c_name in SIGNATURES:
        mod, py = python_name(c_name)
        if mod != module or is_manual(c_name) or py in namespace:
            continue
        namespace[py] = make(c_name, lookup)
        added.append(py)
    for (mod, alias), c_name in ALIASES.items():
        if mod == module and alias not in namespace:
            target = python_name(c_name)[1]
            if target in namespace:
                namespace[alias] = namespace[target]
                added.append(alias)
    return added


def twin_of(c_name: str) -> Optional[Tuple[str, str]]:
    """Where the Python twin of `c_name` lives by the naming rule: (module, name)."""
    try:
        return python_name(c_name)
    except ValueError:
        return None
