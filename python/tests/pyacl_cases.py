"""The call cases of test_every_function.py: for each public pyACL function, one call with valid
arguments and one with a bad one, and what each gives. The cases live in the ``calls_*.py``
modules, one per family; test_every_function.py runs them all and fails for a public function
that has none.

A case's ``valid`` and ``bad`` take the :class:`Ctx` of the test (device 0 set, a stream, an
event, device and host memory) and return what the Python function returned. The runner checks
that neither raised, that ``valid`` gave ``valid_code`` (0 unless the function is one the host
answers with the vendor's "not supported" code), that ``bad`` gave ``code`` (for a function
returning ``aclError``: the ``ret``, last in a tuple), and runs ``check`` on the valid result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import acl

# A handle no create call gave out (handles are table entries, never pointers).
BAD_HANDLE = 0x7FFF0000DEAD
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000


@dataclass
class Ctx:
    device: int
    stream: int
    event: int
    dev: int  # 1 MiB of device memory
    host: int  # 1 MiB of host memory (aclrtMallocHost)
    size: int
    # What a case made and the runner releases after it: (release function, handle).
    cleanup: List[Any]


@dataclass(frozen=True)
class Case:
    name: str  # "rt.synchronize_device", "mdl.ri_capture_begin", "data_type_size"
    valid: Callable[[Ctx], Any]
    bad: Callable[[Ctx], Any]
    code: Any = ACL_ERROR_RT_PARAM_INVALID  # the bad call's ret, or a predicate on its result
    valid_code: Any = 0
    check: Optional[Callable[[Any, Ctx], None]] = None


def ret_of(result: Any) -> Any:
    if isinstance(result, tuple):
        return result[-1]
    return result


def function(name: str) -> Callable[..., Any]:
    module, _, fn = name.rpartition(".")
    return getattr(getattr(acl, module) if module else acl, fn)


def by_name(cases: List[Case]) -> Dict[str, Case]:
    out: Dict[str, Case] = {}
    for c in cases:
        assert c.name not in out, "two cases for %s" % c.name
        out[c.name] = c
    return out
