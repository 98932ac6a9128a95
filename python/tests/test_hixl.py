"""acl.hixl in one process: asynchronous connects and their states, and TransferAsync's user
data handed back by the batched GetTransferStatus, between a HIXL engine and an ADXL one (the
same engine underneath)."""

from __future__ import annotations

import ctypes
import time

from acl import adxl, hixl
from acl.hixl import AsyncConnectStatus, Engine, TransferOp, TransferStatus

from adxl_util import TIMEOUT, free_port


def wait_for(engine: Engine, remote: str, want: AsyncConnectStatus) -> None:
    deadline = time.monotonic() + TIMEOUT
    while engine.async_connect_status(remote) is not want:
        assert time.monotonic() < deadline, engine.async_connect_status(remote)
        time.sleep(0.005)


def test_async_connect_user_data_and_batched_status() -> None:
    name = "127.0.0.1:%d" % free_port()
    with adxl.Engine(name) as server, Engine("127.0.0.1") as client:
        remote = bytearray(b"r" * 4096)
        server.register(remote)
        assert client.async_connect_status(name) is AsyncConnectStatus.NOT_CONNECT
        client.connect_async(name, 5000)
        wait_for(client, name, AsyncConnectStatus.CONNECTED)
        assert client.async_connect_statuses() == {name: AsyncConnectStatus.CONNECTED}

        local = bytearray(4096)
        client.register(local)
        local_addr = ctypes.addressof((ctypes.c_char * 4096).from_buffer(local))
        remote_addr = ctypes.addressof((ctypes.c_char * 4096).from_buffer(remote))
        reqs = {
            client.transfer_async(name, TransferOp.READ, [(local_addr + i * 1024, remote_addr + i * 1024, 1024)], i + 7): i
            for i in range(4)
        }
        done = {}
        deadline = time.monotonic() + TIMEOUT
        while len(done) < 4:
            assert time.monotonic() < deadline, done
            for r in client.get_transfer_statuses(16, skip_waiting=True):
                assert r.status is TransferStatus.COMPLETED
                done[r.req] = r.user_data
            time.sleep(0.001)
        assert done == {req: i + 7 for req, i in reqs.items()}, "each request comes back with its user data"
        assert bytes(local) == b"r" * 4096
        assert client.get_transfer_statuses(16) == [], "reported once"
        assert client.get_transfer_statuses(0) == []

        client.disconnect_async(name, 5000)
        wait_for(client, name, AsyncConnectStatus.NOT_CONNECT)
        assert client.async_connect_statuses() == {}


def test_a_remote_nobody_serves_ends_connect_failed() -> None:
    with Engine("127.0.0.1") as client:
        nobody = "127.0.0.1:%d" % free_port()
        client.connect_async(nobody, 200)
        wait_for(client, nobody, AsyncConnectStatus.CONNECT_FAILED)
        assert hixl.AdxlError is adxl.AdxlError
