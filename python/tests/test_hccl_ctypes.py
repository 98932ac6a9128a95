"""HCCL through ctypes as vLLM-Ascend's pyhccl_wrapper.py writes it (hccl_rank.py): two Python
processes, rank 0's root info handed to rank 1 through a file, an all-reduce (sum of float32) and
a broadcast on device memory, every element checked; and the error texts and argument checks
through the same bindings, which need no communicator."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time

from conftest import PYTHON, child_env

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hccl_rank  # noqa: E402

RANK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hccl_rank.py")


def test_error_strings_and_argument_checks_through_the_bindings() -> None:
    lib = hccl_rank.load()
    assert lib.HcclGetErrorString(0) == b"no error"
    assert lib.HcclGetErrorString(1) == b"parameter error"
    assert lib.HcclGetErrorString(5) == b"not support feature"
    assert lib.HcclGetErrorString(12345) == b"unknow error"
    assert lib.HcclGetRootInfo(None) == 2  # HCCL_E_PTR
    comm = hccl_rank.hcclComm_t()
    root = hccl_rank.hcclUniqueId()
    assert lib.HcclCommInitRootInfo(0, ctypes.byref(root), 0, ctypes.byref(comm)) == 1  # nRanks 0
    assert lib.HcclCommInitRootInfo(2, ctypes.byref(root), 2, ctypes.byref(comm)) == 1  # rank >= nRanks
    assert comm.value is None
    assert lib.HcclAllReduce(None, None, 1, 4, 0, None, None) == 2
    assert lib.HcclCommDestroy(0x1234) == 1  # names no communicator


def test_two_ranks_all_reduce_and_broadcast(tmp_path) -> None:
    path = str(tmp_path / "root_info")
    procs = [
        subprocess.Popen([PYTHON, RANK, str(r), path], env=child_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
        for r in (0, 1)
    ]
    # A rank that fails ends the other, which would wait for it until its time-out.
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        if any(p.poll() not in (None, 0) for p in procs):
            break
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            p.kill()
    outs = [p.communicate()[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, "rank %d: %s" % (r, out)
        assert "rank %d ok" % r in out, out
