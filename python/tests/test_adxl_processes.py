"""A numpy array moved between two Python processes with acl.adxl: a child process
(adxl_peer.py) serves an array on 127.0.0.1:<free port> and prints its address and checksum;
this process reads it, checks the checksum, writes new contents, and the child checks those.
Then the members that concern a peer (malloc_mem memory served to it, local_only
registrations it cannot reach, the counters of the transfers) with adxl_member_peer.py."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from acl import adxl, hixl

from adxl_util import Child, free_port
from conftest import PYTHON, child_env

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adxl_peer.py")
COUNT = 1 << 20  # 4 MiB of uint32


def test_numpy_array_between_two_processes() -> None:
    name = "127.0.0.1:%d" % free_port()
    server = Child([PYTHON, PEER, name, str(COUNT)], child_env())
    try:
        words = server.receive()
        assert words[0] == "ready", words
        remote_addr, nbytes, digest = int(words[1]), int(words[2]), words[3]
        assert nbytes == COUNT * 4

        local = np.zeros(COUNT, dtype=np.uint32)
        with adxl.Engine("127.0.0.1") as client:
            client.register(local)
            client.connect(name, timeout_ms=5000)
            # READ in 1 MiB pieces, then check what arrived against the server's checksum.
            chunk = 1 << 20
            base = local.ctypes.data
            client.transfer_sync(
                name,
                adxl.TransferOp.READ,
                [(base + off, remote_addr + off, chunk) for off in range(0, nbytes, chunk)],
                timeout_ms=10000,
            )
            assert hashlib.sha256(local.tobytes()).hexdigest() == digest
            i = np.arange(COUNT, dtype=np.uint64)
            assert np.array_equal(local, ((i * 2654435761 + 12345) % (1 << 32)).astype(np.uint32))

            # WRITE new contents; the server hashes its array and compares.
            new = (local ^ np.uint32(0xA5A5A5A5))[::-1].copy()
            client.write(name, new, remote_addr, timeout_ms=10000)
            expected = hashlib.sha256(new.tobytes()).hexdigest()
            server.send("verify", expected)
            assert server.receive() == ["ok"]

            # And read it back here as well.
            local[:] = 0
            client.read(name, local, remote_addr, timeout_ms=10000)
            assert hashlib.sha256(local.tobytes()).hexdigest() == expected
            client.disconnect(name)
        assert server.finish() == 0
    finally:
        server.kill()


MEMBER_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adxl_member_peer.py")


@pytest.mark.parametrize("face", ["adxl", "hixl"])
def test_malloc_mem_local_only_and_counters_between_two_processes(face: str) -> None:
    """A peer (adxl_member_peer.py, its engine reachable only through registered memory) serves
    memory from malloc_mem and a region registered local_only: this process reads and writes
    the first, is refused the second (PARAM_INVALID, as unregistered memory), sees its own
    counters count the transfers, and after the peer's free_mem (a second free: PARAM_INVALID)
    is refused the freed memory too."""
    size = 1 << 16
    name = "127.0.0.1:%d" % free_port()
    server = Child([PYTHON, MEMBER_PEER, name, str(size), face], child_env())
    module = hixl if face == "hixl" else adxl
    try:
        words = server.receive()
        assert words[0] == "ready", words
        shared, private, digest = int(words[1]), int(words[2]), words[3]
        local = bytearray(size)
        with module.Engine("127.0.0.1") as client:
            assert client.counters() == adxl.Counters(0, 0, 0, 0, 0, 0, 0, 0)
            handle = client.register(local, local_only=True)  # serves this engine's own transfers
            assert handle.local_only
            client.connect(name, timeout_ms=5000)
            assert client.read(name, local, shared, timeout_ms=5000) == size
            assert hashlib.sha256(bytes(local)).hexdigest() == digest
            counters = client.counters()
            calls = counters.direct_calls + counters.kernel_copy_calls + counters.tcp_calls + counters.ucx_calls
            moved = counters.direct_bytes + counters.kernel_copy_bytes + counters.tcp_bytes + counters.ucx_bytes
            assert (calls, moved) == (1, size), counters

            with pytest.raises(adxl.AdxlError) as info:
                client.read(name, local, private, 64, timeout_ms=5000)
            assert info.value.status is adxl.Status.PARAM_INVALID, info.value

            new = bytearray(reversed(local))
            before = sum(client.counters()[1::2])  # bytes, whichever path (the refusal's too)
            client.write(name, new, shared, timeout_ms=5000)
            server.send("verify", hashlib.sha256(bytes(new)).hexdigest())
            assert server.receive() == ["ok"]
            assert sum(client.counters()[1::2]) == before + size, "the write's bytes counted"

            server.send("free")
            assert server.receive() == ["freed", str(int(adxl.Status.PARAM_INVALID))]
            with pytest.raises(adxl.AdxlError) as info:
                client.read(name, local, shared, 64, timeout_ms=5000)
            assert info.value.status is adxl.Status.PARAM_INVALID, info.value
            client.disconnect(name)
            client.finalize()
            assert client.counters() == adxl.Counters(*[0] * 8), "zeros after finalize"
        assert server.finish() == 0
    finally:
        server.kill()
