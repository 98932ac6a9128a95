"""Hand-written pyACL functions of the devices family: those whose C prototypes have structures,
arrays, callbacks or character buffers, so acl/_auto.py cannot build them. acl.rt imports every
public name of this module."""

from __future__ import annotations

from typing import List

__all__: List[str] = []
