#!/usr/bin/env python3
"""Lists the functions a vendor AscendCL header declares, one name a line, in header order.

    scripts/vendor_acl_rt_functions.py path/to/acl_rt.h > tests/c/vendor_acl_rt_functions.txt
    scripts/vendor_acl_rt_functions.py path/to/acl_base_rt.h > tests/c/vendor_acl_base_rt_functions.txt
    scripts/vendor_acl_rt_functions.py path/to/acl_rt_allocator.h > tests/c/vendor_acl_rt_allocator_functions.txt
    scripts/vendor_acl_rt_functions.py path/to/acl_prof.h > tests/c/vendor_acl_prof_functions.txt
    scripts/vendor_acl_rt_functions.py path/to/acl_dump.h > tests/c/vendor_acl_dump_functions.txt

With --prototypes, prints each declaration instead, normalised to one line
(`ret name(type a, type b);`), which tests/c_abi.rs compares with the generated headers.

The vendor's header is public (hicann/runtime, include/external/acl/acl_rt.h) but is not part
of this repository; only the list of names is. A declaration is a top-level statement (outside
braces, comments and preprocessor lines) that starts with a visibility macro (ACL_FUNC_VISIBILITY;
MSVP_PROF_API in acl_prof.h, ACL_DUMP_API in acl_dump.h) and has a parameter list; its name is the identifier before the first '('. A name declared twice is
listed once. The output starts with a comment naming the header's version macros, so a newer
header shows in the diff.
"""
import os
import re
import sys

VISIBILITY = ("ACL_FUNC_VISIBILITY", "MSVP_PROF_API", "ACL_DUMP_API")
VISIBILITY_RE = "(?:" + "|".join(VISIBILITY) + ")"


def functions(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines, including continued ones.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    # The extern "C" block of C++ compilers is not a scope of its own here; its closing brace
    # then takes the depth below zero, which counts as the top level too.
    text = text.replace('extern "C" {', " ")
    names, depth, statement = [], 0, []
    for c in text:
        if c == "{":
            depth += 1
            statement = []
        elif c == "}":
            depth = max(depth - 1, 0)
            statement = []
        elif c == ";" and depth <= 0:
            st = " ".join("".join(statement).split())
            statement = []
            macro = next((m for m in VISIBILITY if m in st), None)
            if macro and "(" in st:
                head = st[st.index(macro):].split("(", 1)[0]
                name = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)[-1]
                if name not in names:
                    names.append(name)
        elif depth <= 0:
            statement.append(c)
    return names


def prototypes(text):
    """Each declaration as `ret name(type a, type b);`, comments and macros stripped. One with a
    function-pointer parameter (acldumpRegCallback) is left out: its commas are not the
    parameter list's."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out = []
    for m in re.finditer(VISIBILITY_RE + r"\s+([^;{}]*?)\b(\w+)\s*\(([^;{}]*?)\)\s*;", text, flags=re.S):
        ret, name, params = (" ".join(g.split()) for g in m.groups())
        if "(" in params:
            continue
        out.append(f"{ret} {name}({params});")
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--prototypes"]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    if "--prototypes" in sys.argv:
        for line in prototypes(text):
            print(line)
        return
    found = [re.search(rf"#define ACL_{part}_VERSION (\d+)", text) for part in ("MAJOR", "MINOR", "PATCH")]
    version = f" (version {'.'.join(m.group(1) for m in found)})" if all(found) else ""
    header = os.path.basename(args[0])
    names = functions(text)
    print(f"# The {len(names)} functions the vendor's acl/{header}{version} declares, in its order.")
    print("# Made by scripts/vendor_acl_rt_functions.py; docs/compatibility.md lists each with its state")
    print("# and tests/c_abi.rs checks that it does.")
    for n in names:
        print(n)


if __name__ == "__main__":
    main()
