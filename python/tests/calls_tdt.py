"""Call cases (pyacl_cases.py) of the tdt family, for test_every_function.py."""

from __future__ import annotations

from typing import List

import acl  # noqa: F401
from pyacl_cases import BAD_HANDLE, Case, Ctx  # noqa: F401

CASES: List[Case] = []
