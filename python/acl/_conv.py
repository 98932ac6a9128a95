"""The conversions every hand-written pyACL function shares: handles and addresses going in and
coming out, strings going in, dict fields by either spelling, and lazily declared prototypes."""

from __future__ import annotations

from ctypes import c_void_p
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from . import _lib


def handle_in(value: Optional[int]) -> Optional[int]:
    """A handle or address going in: 0 and None are NULL."""
    if value is None or value == 0:
        return None
    return int(value)


def handle_out(value: c_void_p, ret: int) -> int:
    """A handle or address coming out (0 when the call failed or gave NULL)."""
    if ret != 0 or value.value is None:
        return 0
    return int(value.value)


def text_in(text: Optional[Any]) -> Optional[bytes]:
    """A ``const char *`` going in: str encoded as UTF-8, bytes as they are, None as NULL."""
    if text is None or isinstance(text, bytes):
        return text
    return str(text).encode("utf-8")


def field(d: Mapping[str, Any], key: str, default: Any = 0) -> Any:
    """`d[key]`, or its snake-case spelling, or `default`."""
    if key in d:
        return d[key]
    snake = "".join("_" + ch.lower() if ch.isupper() else ch for ch in key)
    return d.get(snake, default)


def declared(prototypes: Mapping[str, Tuple[Any, Any]]) -> Callable[[str], Any]:
    """A lookup of the C functions of `prototypes` (name -> (restype, argtypes)), each given its
    prototype the first time; NotImplementedError if the library lacks one."""
    done: Dict[str, Any] = {}

    def lookup(name: str) -> Any:
        fn = done.get(name)
        if fn is None:
            fn = _lib.func(name)
            fn.restype, fn.argtypes = prototypes[name]
            done[name] = fn
        return fn

    return lookup
