"""Every public pyACL function (acl.*, acl.rt.*, acl.mdl.*) called once with valid arguments
and once with a bad one, through the cases of the calls_*.py modules (pyacl_cases.py says how a
case is checked): the documented code comes back, and the binding itself never raises. A public
function without a case fails test_every_public_function_has_a_case."""

from __future__ import annotations

import types
from typing import Iterator, List

import pytest

import acl
from pyacl_cases import Case, Ctx, by_name, function, ret_of

import calls_devices
import calls_memory
import calls_model
import calls_profiling
import calls_streams
import calls_tdt

CASES = by_name(
    calls_devices.CASES
    + calls_streams.CASES
    + calls_memory.CASES
    + calls_model.CASES
    + calls_tdt.CASES
    + calls_profiling.CASES
)

# Public names that are not functions of the C API: submodules, constants, the package's own.
NOT_C_FUNCTIONS = {
    "rt", "mdl", "tdt", "prof", "dump", "util", "constants", "adxl", "hixl", "library_path", "__version__",
}


def public_functions() -> List[str]:
    names = []
    for prefix, module in (
        ("", acl), ("rt.", acl.rt), ("mdl.", acl.mdl), ("tdt.", acl.tdt), ("prof.", acl.prof), ("dump.", acl.dump),
    ):
        for n in module.__all__:
            obj = getattr(module, n, None)
            if n in NOT_C_FUNCTIONS or isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            names.append(prefix + n)
    return sorted(names)


@pytest.fixture
def ctx() -> Iterator[Ctx]:
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    event, ret = acl.rt.create_event()
    assert ret == 0
    size = 1 << 20
    dev, ret = acl.rt.malloc(size, 0)
    assert ret == 0
    host, ret = acl.rt.malloc_host(size)
    assert ret == 0
    c = Ctx(device=0, stream=stream, event=event, dev=dev, host=host, size=size, cleanup=[])
    yield c
    for release, handle in reversed(c.cleanup):
        release(handle)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.free_host(host) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.reset_device(0) == 0


def expect(what: str, result: object, wanted: object) -> None:
    got = ret_of(result)
    if callable(wanted):
        assert wanted(result), "%s gave %r" % (what, result)
    else:
        assert got == wanted, "%s gave %r, not %r" % (what, result, wanted)


@pytest.mark.parametrize("name", sorted(CASES))
def test_valid_then_bad(name: str, ctx: Ctx) -> None:
    case: Case = CASES[name]
    assert callable(function(name)), name
    result = case.valid(ctx)
    expect("the valid call of " + name, result, case.valid_code)
    if case.check is not None:
        case.check(result, ctx)
    expect("the bad call of " + name, case.bad(ctx), case.code)


def test_every_public_function_has_a_case() -> None:
    missing = [n for n in public_functions() if n not in CASES]
    assert missing == [], "public functions without a case in a calls_*.py module: %s" % missing


def test_cases_name_public_functions() -> None:
    assert sorted(set(CASES) - set(public_functions())) == []
