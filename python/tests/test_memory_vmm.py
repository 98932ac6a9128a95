"""Virtual memory management through acl.rt: one physical allocation mapped at two reserved
ranges is the same pages (bytes written through one are read through the other), the access
rights set are the ones reported, the properties a handle was made with come back, and a
physical allocation exported as a shareable handle is the same pages in another process, which
may import it only once whitelisted.

The other process is this file run as a script (``python test_memory_vmm.py``), speaking one
line each way:
  child -> parent  "pid <pid>"
  parent -> child  "handle <shareable handle> <size>"
  child -> parent  "read <hex of the first 64 bytes>" after importing and mapping the handle,
                   or "import <ret>" when the import was refused (then the child ends)
  parent -> child  "write"
  child -> parent  "written" (the child wrote its bytes into the mapping)
  parent -> child  "done"
  child -> parent  "closed"
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from typing import Iterator, List, Tuple

import pytest

import acl

rt = acl.rt
MIB2 = 2 << 20
DEVICE = 1  # ACL_MEM_LOCATION_TYPE_DEVICE
PROP = {"handleType": 0, "allocationType": 0, "memAttr": 1, "location": {"id": 0, "type": DEVICE}}
LOC = {"id": 0, "type": DEVICE}
H2D, D2H = 1, 2
NO_PERMISSION = 207006
ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE = 0, 1, 3
CHILD_BYTES = bytes(range(64, 128))


def write(ptr: int, data: bytes) -> None:
    assert rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), H2D) == 0


def read(ptr: int, size: int) -> bytes:
    out = bytearray(size)
    assert rt.memcpy(acl.util.bytes_to_ptr(out), size, ptr, size, D2H) == 0
    return bytes(out)


class Vmm:
    """Physical allocations and reservations made by a test, released after it."""

    def __init__(self) -> None:
        self.handles: List[int] = []
        self.reservations: List[int] = []
        self.mappings: List[int] = []

    def physical(self, size: int = MIB2) -> int:
        handle, ret = rt.malloc_physical(size, PROP, 0)
        assert ret == 0 and handle != 0
        self.handles.append(handle)
        return handle

    def reserve(self, size: int = MIB2) -> int:
        va, ret = rt.reserve_mem_address(size, 0, 0, 0)
        assert ret == 0 and va != 0
        self.reservations.append(va)
        return va

    def map(self, handle: int, size: int = MIB2, no_access: bool = False) -> int:
        va = self.reserve(size)
        assert (rt.mem_map_no_access if no_access else rt.map_mem)(va, size, 0, handle, 0) == 0
        self.mappings.append(va)
        return va

    def release(self) -> None:
        for va in self.mappings:
            assert rt.unmap_mem(va) == 0
        for va in self.reservations:
            assert rt.release_mem_address(va) == 0
        for h in self.handles:
            assert rt.free_physical(h) == 0


@pytest.fixture
def vmm(device: int) -> Iterator[Vmm]:
    v = Vmm()
    yield v
    v.release()


def test_two_mappings_of_one_allocation_share_pages(vmm: Vmm) -> None:
    granularity, ret = rt.mem_get_allocation_granularity(PROP, 0)
    assert (granularity, ret) == (MIB2, 0)
    handle = vmm.physical()
    a, b = vmm.map(handle), vmm.map(handle)
    assert a != b
    data = bytes((i * 13) & 0xFF for i in range(MIB2))
    write(a, data)
    assert read(b, MIB2) == data
    write(b + 12345, b"through b")
    assert read(a + 12345, 9) == b"through b"
    # A mapping is device memory of the handle's device for every runtime function.
    attrs, ret = rt.pointer_get_attributes(b + 100)
    assert ret == 0 and attrs["location"] == LOC
    base, size, ret = rt.mem_get_address_range(b + 100)
    assert (base, size, ret) == (b, MIB2, 0)
    if os.environ.get("ASCENDLESS_STRICT_DEVICE_MEMORY") != "1":
        # ... and readable by host code too.
        assert ctypes.string_at(a + 12345, 9) == b"through b"


def test_properties_and_retained_handles(vmm: Vmm) -> None:
    handle = vmm.physical()
    prop, ret = rt.mem_get_allocation_properties_from_handle(handle)
    assert ret == 0 and prop == dict(PROP, reserve=0)
    va = vmm.map(handle)
    retained, ret = rt.mem_retain_allocation_handle(va)
    assert ret == 0 and retained != 0
    vmm.handles.append(retained)  # one more free_physical owed
    prop2, ret = rt.mem_get_allocation_properties_from_handle(retained)
    assert ret == 0 and prop2 == prop


def test_access_rights_are_the_ones_set(vmm: Vmm) -> None:
    va = vmm.map(vmm.physical(), no_access=True)
    assert rt.mem_get_access(va, LOC) == (ACCESS_NONE, 0)
    assert rt.mem_set_access(va, MIB2, [{"flags": ACCESS_READ, "location": LOC}]) == 0
    assert rt.mem_get_access(va, LOC) == (ACCESS_READ, 0)
    assert rt.mem_set_access(va, MIB2, [(ACCESS_READWRITE, (0, DEVICE))]) == 0
    assert rt.mem_get_access(va, (0, DEVICE)) == (ACCESS_READWRITE, 0)
    # Runtime copies are not affected by the rights; host code may now write too.
    write(va, b"rw")
    assert read(va, 2) == b"rw"


# ---- two processes --------------------------------------------------------------------------


class Child:
    def __init__(self) -> None:
        from conftest import PYTHON, child_env

        self.proc = subprocess.Popen(
            [PYTHON, os.path.abspath(__file__)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=child_env(), text=True,
        )

    def receive(self) -> List[str]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the child ended early (exit code %s)" % self.proc.wait(timeout=30)
        words = line.split()
        assert words[0] != "error", line
        return words

    def send(self, *words: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()

    def end(self) -> int:
        return self.proc.wait(timeout=30)


def _exported(vmm: Vmm) -> Tuple[int, int]:
    handle = vmm.physical()
    va = vmm.map(handle)
    write(va, bytes(range(64)))
    shareable, ret = rt.mem_export_to_shareable_handle(handle, 0, 0)
    assert ret == 0 and shareable != 0
    return va, shareable


def test_another_process_maps_the_same_pages_once_whitelisted(vmm: Vmm) -> None:
    va, shareable = _exported(vmm)
    child = Child()
    try:
        words = child.receive()
        assert words[0] == "pid"
        assert rt.mem_set_pid_to_shareable_handle(shareable, [int(words[1])]) == 0
        child.send("handle", shareable, MIB2)
        words = child.receive()
        assert words[0] == "read" and bytes.fromhex(words[1]) == bytes(range(64))
        child.send("write")
        assert child.receive() == ["written"]
        assert read(va, 64) == CHILD_BYTES
        child.send("done")
        assert child.receive() == ["closed"]
    finally:
        assert child.end() == 0


def test_a_process_not_whitelisted_is_refused(vmm: Vmm) -> None:
    _, shareable = _exported(vmm)
    child = Child()
    try:
        assert child.receive()[0] == "pid"
        child.send("handle", shareable, MIB2)
        assert child.receive() == ["import", str(NO_PERMISSION)]
    finally:
        assert child.end() == 0


def _child() -> None:
    def send(*words: object) -> None:
        print(*words, flush=True)

    def receive() -> List[str]:
        line = sys.stdin.readline()
        if not line:
            sys.exit("child: the parent went away")
        return line.split()

    def check(ret: int, what: str) -> None:
        if ret != 0:
            send("error", what, ret, acl.get_recent_err_msg())
            sys.exit(1)

    acl.init()
    check(rt.set_device(0), "set_device")
    send("pid", os.getpid())
    _, shareable, size = receive()
    handle, ret = rt.mem_import_from_shareable_handle(int(shareable), 0)
    if ret != 0:
        send("import", ret)
        acl.get_recent_err_msg()
        rt.reset_device(0)
        return
    va, ret = rt.reserve_mem_address(int(size), 0, 0, 0)
    check(ret, "reserve_mem_address")
    check(rt.map_mem(va, int(size), 0, handle, 0), "map_mem")
    send("read", read(va, 64).hex())
    receive()  # write
    write(va, CHILD_BYTES)
    send("written")
    receive()  # done
    check(rt.unmap_mem(va), "unmap_mem")
    check(rt.release_mem_address(va), "release_mem_address")
    check(rt.free_physical(handle), "free_physical")
    check(rt.reset_device(0), "reset_device")
    send("closed")


if __name__ == "__main__":
    _child()
