"""The generated table of C prototypes (acl/_signatures.py) is what the headers give: the same
drift check the generated C headers have. Regenerate with
``scripts/gen_pyacl_signatures.py > python/acl/_signatures.py``."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_the_checked_in_table_is_what_the_headers_give() -> None:
    script = os.path.join(ROOT, "scripts", "gen_pyacl_signatures.py")
    made = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True).stdout
    with open(os.path.join(ROOT, "python", "acl", "_signatures.py"), encoding="utf-8") as f:
        kept = f.read()
    assert made == kept, "python/acl/_signatures.py is stale: run scripts/gen_pyacl_signatures.py > it"
