"""The ctypes structures of acl/_rt_memory.py are laid out as include/acl/acl_rt.h lays out the C
ones: every size and field offset as a C compiler gives them (the table below was printed by one,
and when a compiler is at hand the test compiles the header again and compares)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import Dict, Tuple

import pytest

from acl import _rt_memory as m

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# C name -> (sizeof, {field: offsetof}), from the C compiler on x86_64 / aarch64 Linux.
LAYOUT: Dict[str, Tuple[int, Dict[str, int]]] = {
    "aclrtMemLocation": (8, {"id": 0, "type": 4}),
    "aclrtMemManagedLocation": (8, {"type": 0, "id": 4}),
    "aclrtMallocAttrValue": (8, {"moduleId": 0, "deviceId": 0, "vaFlag": 0, "rsv": 0}),
    "aclrtMallocAttribute": (12, {"attr": 0, "value": 4}),
    "aclrtMallocConfig": (16, {"attrs": 0, "numAttrs": 8}),
    "aclrtMemcpyBatchAttr": (32, {"dstLoc": 0, "srcLoc": 8, "rsv": 16}),
    "aclrtPtrAttributes": (28, {"location": 0, "pageSize": 8, "rsv": 12}),
    "aclrtMemUsageInfo": (112, {"name": 0, "curMemSize": 32, "memPeakSize": 40, "reserved": 48}),
    "aclrtMemUceInfo": (128, {"addr": 0, "len": 8, "reserved": 16}),
    "aclrtBarrierCmoInfo": (8, {"cmoType": 0, "barrierId": 4}),
    "aclrtBarrierTaskInfo": (56, {"barrierNum": 0, "cmoInfo": 8}),
    "aclrtPhysicalMemProp": (32, {"handleType": 0, "allocationType": 4, "memAttr": 8, "location": 12, "reserve": 24}),
    "aclrtMemAccessDesc": (24, {"flags": 0, "location": 4, "rsv": 12}),
    "aclrtSnapShotBackupArgs": (64, {"backupFlags": 0, "reserved": 4}),
    "aclrtSnapShotRestoreArgs": (64, {"restoreFlags": 0, "reserved": 4}),
    "aclrtServerPid": (24, {"sdid": 0, "pid": 8, "num": 16}),
}


def python_layout(name: str) -> Tuple[int, Dict[str, int]]:
    t = m.STRUCTURES[name]
    return ctypes.sizeof(t), {f[0]: getattr(t, f[0]).offset for f in t._fields_}


def test_every_structure_is_in_the_table() -> None:
    assert sorted(m.STRUCTURES) == sorted(LAYOUT)


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout_matches_the_header(name: str) -> None:
    assert python_layout(name) == LAYOUT[name]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_table_is_what_the_compiler_says(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "acl/acl_rt.h"', "int main(void) {"]
    for name, (_, fields) in sorted(LAYOUT.items()):
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (name, name))
        for field in fields:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (name, field, name, field))
    lines += ["return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    got: Dict[str, Tuple[int, Dict[str, int]]] = {}
    for line in out.splitlines():
        key, value = line.split()
        if "." in key:
            name, field = key.split(".")
            got[name][1][field] = int(value)
        else:
            got[key] = (int(value), {})
    assert got == LAYOUT
