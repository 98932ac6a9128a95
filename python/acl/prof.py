"""``acl.prof``: profiling (`aclprof*` of `acl/acl_prof.h`), in pyACL's form (see :mod:`acl.rt`). Every function is built from its
C prototype (acl/_auto.py) but those written by hand here."""

from __future__ import annotations

from typing import List

from . import _auto
from ._lib import func

__all__: List[str] = []
__all__ += _auto.install(globals(), "prof", func)
