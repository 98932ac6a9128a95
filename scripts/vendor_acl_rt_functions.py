#!/usr/bin/env python3
"""Lists the functions a vendor AscendCL header declares, one name a line, in header order.

    scripts/vendor_acl_rt_functions.py path/to/acl_rt.h > tests/c/vendor_acl_rt_functions.txt

The vendor's header is public (hicann/runtime, include/external/acl/acl_rt.h) but is not part
of this repository; only the list of names is. A declaration is a top-level statement (outside
braces, comments and preprocessor lines) that starts with ACL_FUNC_VISIBILITY and has a
parameter list; its name is the identifier before the first '('. A name declared twice is
listed once. The output starts with a comment naming the header's version macros, so a newer
header shows in the diff.
"""
import re
import sys


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
            if "ACL_FUNC_VISIBILITY" in st and "(" in st:
                head = st[st.index("ACL_FUNC_VISIBILITY"):].split("(", 1)[0]
                name = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)[-1]
                if name not in names:
                    names.append(name)
        elif depth <= 0:
            statement.append(c)
    return names


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    version = ".".join(
        re.search(rf"#define ACL_{part}_VERSION (\d+)", text).group(1) for part in ("MAJOR", "MINOR", "PATCH")
    )
    names = functions(text)
    print(f"# The {len(names)} functions the vendor's acl/acl_rt.h (version {version}) declares, in its order.")
    print("# Made by scripts/vendor_acl_rt_functions.py; docs/compatibility.md lists each with its state")
    print("# and tests/c_abi.rs checks that it does.")
    for n in names:
        print(n)


if __name__ == "__main__":
    main()
