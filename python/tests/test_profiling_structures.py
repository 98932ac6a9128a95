"""The ctypes structures of acl/prof.py and acl/dump.py are laid out as include/acl/acl_prof.h and
include/acl/acl_dump.h lay out the C ones: every size and field offset as a C compiler gives them
(the table was printed by one; when a compiler is at hand the test compiles the headers again
and compares)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from typing import Dict, Tuple

import pytest

from acl import dump, prof

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

STRUCTURES = {**prof.STRUCTURES, **dump.STRUCTURES}

# C name -> (sizeof, {field: offsetof}), from the C compiler on x86_64 / aarch64 Linux.
LAYOUT: Dict[str, Tuple[int, Dict[str, int]]] = {
    "aclprofTensor": (48, {"type": 0, "format": 4, "dataType": 8, "shapeDim": 12, "shape": 16}),
    "aclprofTensorInfo": (48, {
        "opNameId": 0, "opTypeId": 8, "resv": 16, "tensorNum": 20, "kernelType": 24, "blockNums": 28,
        "stream": 32, "tensors": 40,
    }),
    "aclprofEventAttributes": (16, {"version": 0, "size": 2, "messageType": 4, "message": 8}),
    "acldumpChunk": (4120, {
        "fileName": 0, "bufLen": 4096, "isLastChunk": 4100, "offset": 4104, "flag": 4112, "dataBuf": 4116,
    }),
    "acldumpTensorInfo": (456, {
        "type": 0, "tensorSize": 8, "format": 16, "dataType": 20, "tensorAddr": 24, "addrType": 32,
        "placement": 36, "argsOffset": 40, "shapeNum": 44, "originShapeNum": 48, "shape": 56, "originShape": 256,
    }),
}


def python_layout(name: str) -> Tuple[int, Dict[str, int]]:
    t = STRUCTURES[name]
    return ctypes.sizeof(t), {f[0]: getattr(t, f[0]).offset for f in t._fields_}


def test_every_structure_is_in_the_table() -> None:
    assert sorted(STRUCTURES) == sorted(LAYOUT)


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout_matches_the_header(name: str) -> None:
    assert python_layout(name) == LAYOUT[name]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_table_is_what_the_compiler_says(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        "#include <stdio.h>", "#include <stddef.h>", '#include "acl/acl_prof.h"', '#include "acl/acl_dump.h"',
        "int main(void) {",
    ]
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
