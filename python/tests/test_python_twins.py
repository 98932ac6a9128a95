"""One source of truth for the two faces: every C function of docs/compatibility.md's tables of
`acl/acl_rt.h`, `acl/acl_base_rt.h`, the allocators, TDT, profiling and dump (the functions the
library exports, each with its state)
has its pyACL twin under the vendor's naming rule (acl/_auto.py: ``aclrtSynchronizeDevice`` is
``acl.rt.synchronize_device``), calling the same C function. A C function added to the table
without a Python twin fails here; so does a twin written by hand for a function still listed in
``PENDING`` (remove it from the list). PENDING is what is not done yet, each with why it is not
built from its prototype; docs/python.md lists them too."""

from __future__ import annotations

import os
import re
from typing import Dict, List

import pytest

import acl
from acl import _auto
from acl._signatures import SIGNATURES

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SECTIONS = (
    "AscendCL runtime: every function",
    "AscendCL base: every function",
    "AscendCL allocators: every function",
    "TDT channels: every function",
    "TDT queues: every function",
    "Profiling: every function",
    "Dump: every function",
)
MODULES = {"rt": acl.rt, "mdl": acl.mdl, "tdt": acl.tdt, "prof": acl.prof, "dump": acl.dump, "": acl}

# C functions whose Python twin is still to be written by hand, and why the prototype alone
# does not give it.
PENDING: Dict[str, str] = {
}


def table_rows() -> Dict[str, str]:
    """C function -> its state, from docs/compatibility.md."""
    with open(os.path.join(ROOT, "docs", "compatibility.md"), encoding="utf-8") as f:
        text = f.read()
    rows: Dict[str, str] = {}
    for section in re.split(r"\n## ", text):
        if section.startswith(SECTIONS):
            for m in re.finditer(r"^\| `(acl\w+)` \| ([^|]+) \|", section, flags=re.M):
                rows[m.group(1)] = m.group(2).strip()
    return rows


ROWS = table_rows()


def twin(c_name: str):  # type: ignore[no-untyped-def]
    module, name = _auto.python_name(c_name)
    return getattr(MODULES[module], name, None)


def test_the_tables_are_read() -> None:
    assert len(ROWS) > 350
    assert ROWS["aclrtSynchronizeDevice"] == "works"


@pytest.mark.parametrize("c_name", sorted(ROWS))
def test_every_c_function_of_the_table_has_its_python_twin(c_name: str) -> None:
    assert c_name in SIGNATURES, "%s is in docs/compatibility.md but in no header the table reads" % c_name
    if c_name in PENDING:
        assert twin(c_name) is None, "%s has a Python twin now: remove it from PENDING" % c_name
        return
    fn = twin(c_name)
    assert callable(fn), "%s has no Python twin %s" % (c_name, ".".join(filter(None, _auto.python_name(c_name))))


def test_pending_names_are_functions_of_the_table() -> None:
    assert sorted(set(PENDING) - set(ROWS)) == []


def test_at_least_150_runtime_functions_with_vendor_names() -> None:
    public: List[str] = [n for n in acl.rt.__all__ if callable(getattr(acl.rt, n, None))]
    assert len(public) >= 150
    for name in (
        "synchronize_device", "query_event_status", "event_elapsed_time", "subscribe_report",
        "process_report", "unsubscribe_report", "get_run_mode", "memcpy_2d", "get_current_context",
        "set_current_context", "malloc_cached",
    ):
        assert name in public, name


def test_the_naming_rule() -> None:
    assert _auto.python_name("aclrtSynchronizeDevice") == ("rt", "synchronize_device")
    assert _auto.python_name("aclrtUnSubscribeReport") == ("rt", "unsubscribe_report")
    assert _auto.python_name("aclrtMemcpy2dAsync") == ("rt", "memcpy_2d_async")
    assert _auto.python_name("aclrtCreateStreamV2") == ("rt", "create_stream_v2")
    assert _auto.python_name("aclrtDeviceGetByPCIBusId") == ("rt", "device_get_by_pci_bus_id")
    assert _auto.python_name("aclmdlRICaptureBegin") == ("mdl", "ri_capture_begin")
    assert _auto.python_name("aclFloat16ToFloat") == ("", "float16_to_float")
    assert _auto.python_name("aclrtMemP2PMap") == ("rt", "mem_p2p_map")
    assert _auto.python_name("aclrtSetCurrentContext") == ("rt", "set_context")
    assert acl.rt.set_current_context is acl.rt.set_context


def test_docs_list_what_is_pending() -> None:
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    listed = set(re.findall(r"^- `(acl\w+)`:", text.split("## Not yet in Python", 1)[-1], flags=re.M))
    assert listed == set(PENDING), (sorted(listed - set(PENDING)), sorted(set(PENDING) - listed))
