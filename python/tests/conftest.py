"""Shared fixtures. The tests use the library named by ASCENDLESS_LIBRARY or found through
ASCEND_TOOLKIT_HOME (set by `make test-python`); `acl` is the installed package."""

from __future__ import annotations

import os
import sys
from typing import Iterator

import pytest

import acl

# Each test process initialises AscendCL once; the tests that need a fresh process run one.
_INIT_RET = acl.init()


@pytest.fixture(scope="session", autouse=True)
def acl_session() -> Iterator[None]:
    assert _INIT_RET in (0, 100002)
    yield
    acl.finalize()


@pytest.fixture
def device() -> Iterator[int]:
    """Device 0 set on this thread for the test, reset after it."""
    assert acl.rt.set_device(0) == 0
    yield 0
    assert acl.rt.reset_device(0) == 0


@pytest.fixture
def stream(device: int) -> Iterator[int]:
    s, ret = acl.rt.create_stream()
    assert ret == 0 and s != 0
    yield s
    assert acl.rt.destroy_stream(s) == 0


def child_env() -> dict:
    """The environment for child Python processes (the same library)."""
    env = dict(os.environ)
    env.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")
    return env


PYTHON = sys.executable
