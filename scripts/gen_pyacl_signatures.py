#!/usr/bin/env python3
"""Writes python/acl/_signatures.py: every function of the AscendCL headers pyACL covers
(include/acl/: the runtime, allocators, TDT channels and queues, profiling, dump) with its C
prototype classified for the Python face.

    scripts/gen_pyacl_signatures.py > python/acl/_signatures.py

The Python package declares each C function from this table (its ctypes prototype) and builds
the pyACL function of a function whose parameters all have a plain Python form (``acl/_auto.py``);
the rest (structures, callbacks, arrays, string buffers) are written by hand in ``acl/rt.py``,
``acl/mdl.py``... python/tests/test_signatures.py runs this script and fails when the checked-in
table differs from what the headers give (the same drift check the C headers have).

A parameter's kind:

* ``in``: a scalar, an enum or a handle by value (an ``int`` in Python);
* ``ptr``: ``void *`` / ``const void *``, an address going in (an ``int``, 0 or None for NULL);
* ``str``: ``const char *`` going in (a ``str``);
* ``out``: ``T *`` for a scalar, enum or handle ``T``, a value coming out (returned);
* ``outptr``: ``void **``, an address coming out (returned);
* ``manual``: anything else: a structure, an array, a callback, a character buffer. A function
  with one is written by hand.

A pointer to one value and a pointer to an array look alike in C; a pointer parameter named
like an array (plural, or followed by a count) is ``manual``, and so is every name in
``ARRAYS`` below, read off the vendor's documentation.
"""

from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vendor_acl_rt_functions import prototypes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = [
    "acl/acl_base.h",
    "acl/acl.h",
    "acl/acl_rt.h",
    "acl/acl_rt_allocator.h",
    "acl/acl_tdt.h",
    "acl/acl_tdt_queue.h",
    "acl/acl_prof.h",
    "acl/acl_dump.h",
]
TYPEDEF_HEADERS = HEADERS + ["acl/acl_base_rt.h", "acl/acl_rt_api.h"]

SCALARS = {
    "int": "c_int",
    "int8_t": "c_int8",
    "int16_t": "c_int16",
    "int32_t": "c_int32",
    "int64_t": "c_int64",
    "uint8_t": "c_uint8",
    "uint16_t": "c_uint16",
    "uint32_t": "c_uint32",
    "uint64_t": "c_uint64",
    "size_t": "c_size_t",
    "uintptr_t": "c_size_t",
    "float": "c_float",
    "double": "c_double",
    "bool": "c_bool",
    "char": "c_char",
}

# Pointer parameters that are arrays although their names do not say so (the vendor's docs).
ARRAYS: set = set()

# Pointer parameters that are not plain outputs, so the function is manual: one the C function
# reads and writes (a value going in and coming out), and a reserved one that must be NULL.
IN_OUT = {("aclmdlRICaptureThreadExchangeMode", "mode"), ("aclrtGetPrimaryCtxState", "flags")}

# Names ending in "s" that are one value (milliseconds, flag words, a status).
SINGULAR_ENDINGS = ("ms", "Ms", "flags", "Flags", "ss", "us", "Status", "status", "Attrs")

# Structures the runtime hands out by pointer and takes back: a pointer to one is a handle.
HANDLE_STRUCTS = {"aclrtStreamConfigHandle"}


def strip(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def typedefs(texts: list) -> dict:
    """Type name -> its class: a ctypes scalar name, "enum", "handle", "struct" (defined here,
    so passed by value or pointer it is a structure), "opaque" (a pointer to it is a handle) or
    "callback"."""
    kinds: dict = {}
    text = strip("\n".join(texts))
    for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", text, flags=re.S):
        kinds[m.group(1)] = "enum"
    for m in re.finditer(r"\benum\s+(\w+)\s*\{", text):
        kinds.setdefault(m.group(1), "enum")
    for m in re.finditer(r"typedef\s+(?:struct|union)\s*(\w*)\s*\{.*?\}\s*(\w+)\s*;", text, flags=re.S):
        kinds[m.group(2)] = "struct"
        if m.group(1):
            kinds[m.group(1)] = "struct"
    for m in re.finditer(r"\b(?:struct|union)\s+(\w+)\s*\{", text):
        kinds.setdefault(m.group(1), "struct")
    for m in re.finditer(r"typedef\s+(?:struct|union)\s+(\w+)\s*(\*?)\s*(\w+)\s*;", text):
        tag, star, name = m.groups()
        if star:
            kinds[name] = "handle"
        else:
            kinds.setdefault(name, kinds.get(tag, "opaque"))
            kinds.setdefault(tag, kinds[name])
    for m in re.finditer(r"typedef\s+void\s*\*\s*(\w+)\s*;", text):
        kinds[m.group(1)] = "handle"
    for m in re.finditer(r"typedef\s+[\w\s\*]+?\(\s*\*\s*(\w+)\s*\)\s*\(", text):
        kinds[m.group(1)] = "callback"
    for m in re.finditer(r"typedef\s+((?:unsigned\s+)?\w+)\s+(\w+)\s*;", text):
        base, name = m.groups()
        if base in SCALARS:
            kinds.setdefault(name, SCALARS[base])
        elif base in kinds and kinds[base] not in ("struct", "opaque"):
            kinds.setdefault(name, kinds[base])
    return kinds


def scalar_ctype(base: str, kinds: dict):
    """The ctypes name of a by-value type, or None when it has no plain form."""
    if base in SCALARS:
        return SCALARS[base]
    kind = kinds.get(base)
    if kind == "enum":
        return "c_int"
    if kind == "handle":
        return "c_void_p"
    if kind and kind.startswith("c_"):
        return kind
    return None


def classify(func: str, params: list, kinds: dict) -> list:
    """[(name, ctype, kind)] for each parameter; ctype "" for manual ones."""
    out = []
    names = [p[-1] for p in params]
    for i, (const, base, stars, name) in enumerate(params):
        follow = names[i + 1].lower() if i + 1 < len(names) else ""
        plural = (len(name) > 3 and name.endswith("s") and not name.endswith(SINGULAR_ENDINGS)) or name.endswith(
            ("List", "Array")
        )
        counted = follow in ("num", "count", "len", "length") or follow.startswith("num") or follow.endswith(
            ("num", "count", "cnt")
        )
        arrayish = (func, name) in ARRAYS or plural or (counted and base not in ("void", "char"))
        ctype = scalar_ctype(base, kinds)
        if base == "..." or kinds.get(base) == "callback" or (func, name) in IN_OUT:
            out.append((name, "", "manual"))
        elif stars == 0:
            out.append((name, ctype or "", "in" if ctype else "manual"))
        elif stars == 1 and base == "void":
            out.append((name, "c_void_p", "ptr"))
        elif stars == 1 and base == "char" and const:
            out.append((name, "c_char_p", "str"))
        elif stars == 1 and (kinds.get(base) == "opaque" or base in HANDLE_STRUCTS):
            out.append((name, "c_void_p", "in"))  # a pointer to an opaque structure: a handle
        elif stars == 1 and ctype and not const and base != "char" and not arrayish:
            out.append((name, ctype, "out"))
        elif stars == 2 and base == "void" and not const and not arrayish:
            out.append((name, "c_void_p", "outptr"))
        else:
            out.append((name, "", "manual"))
    return out


def parse_params(text: str) -> list:
    if text.strip() in ("", "void"):
        return []
    params = []
    for raw in text.split(","):
        p = raw.strip()
        if p == "...":
            params.append(("", "...", 0, "..."))
            continue
        m = re.match(r"^(const\s+)?(?:(?:struct|enum|union)\s+)?((?:unsigned\s+)?\w+)\s*((?:\*\s*(?:const\s*)?)*)\s*(\w+)(\[\])?$", p)
        if not m:
            params.append(("", "?", 0, p.split()[-1] if p.split() else "?"))
            continue
        const, base, stars, name, brackets = m.groups()
        params.append((bool(const), base, stars.count("*") + (1 if brackets else 0), name))
    return params


def return_kind(ret: str, kinds: dict) -> str:
    ret = ret.replace("ACL_FUNC_VISIBILITY", "").strip()
    ret = re.sub(r"ACL_DEPRECATED_MESSAGE\([^)]*\)", "", ret).strip()
    ret = re.sub(r"\b(struct|enum)\s+", "", ret)
    if ret == "aclError":
        return "aclError"
    if ret == "void":
        return "void"
    if ret in ("const char *", "const char*", "char *"):
        return "c_char_p"
    if ret.endswith("*"):
        return "c_void_p"
    return scalar_ctype(ret, kinds) or "manual"


def table() -> tuple:
    texts = []
    for h in TYPEDEF_HEADERS:
        with open(os.path.join(ROOT, "include", h), encoding="utf-8") as f:
            texts.append(f.read())
    kinds = typedefs(texts)
    funcs = []
    seen = set()
    for h in HEADERS:
        with open(os.path.join(ROOT, "include", h), encoding="utf-8") as f:
            text = f.read()
        for line in prototypes(text):
            m = re.match(r"^(.*?)\b(\w+)\((.*)\);$", line)
            ret, name, params = m.groups()
            if name in seen:
                continue
            seen.add(name)
            funcs.append((h, name, return_kind(ret, kinds), classify(name, parse_params(params), kinds)))
        # prototypes() leaves out those with a function-pointer parameter: name them manual.
        for m in re.finditer(r"ACL_FUNC_VISIBILITY\s+[^;{}]*?\b(acl\w+)\s*\(([^;{}]*\([^;{}]*)\)\s*;", strip(text)):
            if m.group(1) not in seen:
                seen.add(m.group(1))
                funcs.append((h, m.group(1), "aclError", [("fn", "", "manual")]))
    return funcs


def main() -> None:
    funcs = table()
    print('"""Generated by scripts/gen_pyacl_signatures.py from the headers of include/acl/ it lists:')
    print("do not edit; python/tests/test_signatures.py checks it against the headers.")
    print()
    print("C function -> (header, return type, [(parameter, ctypes type, kind)]); see the script")
    print('for the kinds. A function with a "manual" parameter or return is written by hand."""')
    print()
    print("SIGNATURES = {")
    for header, name, ret, params in funcs:
        inner = ", ".join(f"({p!r}, {t!r}, {k!r})" for p, t, k in params)
        print(f"    {name!r}: ({header!r}, {ret!r}, [{inner}]),")
    print("}")


if __name__ == "__main__":
    main()
