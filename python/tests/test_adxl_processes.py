"""A numpy array moved between two Python processes with acl.adxl: a child process
(adxl_peer.py) serves an array on 127.0.0.1:<free port> and prints its address and checksum;
this process reads it, checks the checksum, writes new contents, and the child checks those."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from acl import adxl

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
