"""acl.hixl in one process: asynchronous connects and their states, and TransferAsync's user
data handed back by the batched GetTransferStatus (with its default, every request), between
a HIXL engine and an ADXL one (the same engine underneath), and the names acl.hixl gives the
members it shares with acl.adxl."""

from __future__ import annotations

import ctypes
import time

import pytest

from acl import adxl, hixl
from acl.hixl import AdxlError, AsyncConnectStatus, Engine, Status, TransferOp, TransferStatus

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


def test_batched_status_defaults_to_every_request_and_checks_its_count() -> None:
    name = "127.0.0.1:%d" % free_port()
    with Engine(name) as server, Engine("127.0.0.1") as client:
        remote = bytearray(b"q" * 4096)
        server.register(remote)
        local = bytearray(4096)
        client.register(local)
        client.connect(name, 5000)
        base, rbase = adxl.buffer_address(local), adxl.buffer_address(remote)
        reqs = {
            client.transfer_async(name, TransferOp.READ, [(base + i * 512, rbase + i * 512, 512)], 100 + i)
            for i in range(8)
        }
        seen = {}
        deadline = time.monotonic() + TIMEOUT
        while len(seen) < 8:
            assert time.monotonic() < deadline, seen
            for r in client.get_transfer_statuses():  # GetTransferStatusArgs' defaults: all, WAITING too
                if r.status is not TransferStatus.WAITING:
                    assert r.status is TransferStatus.COMPLETED
                    seen[r.req] = r.user_data
        assert set(seen) == reqs and sorted(seen.values()) == list(range(100, 108))
        assert bytes(local) == b"q" * 4096
        for bad in (-1, 1 << 32):
            with pytest.raises(AdxlError) as info:
                client.get_transfer_statuses(bad)
            assert info.value.status is Status.PARAM_INVALID
    with Engine() as idle:
        with pytest.raises(AdxlError) as info:
            idle.get_transfer_statuses()
        assert info.value.status is Status.FAILED  # not initialised, as every call


def test_hixl_names_of_the_adxl_members() -> None:
    """What acl.hixl takes from acl.adxl (Hixl's RegisterMem with local_only, GetCapability,
    FeatureType) and HIXL's spellings of the option keys, accepted as the engine's."""
    assert hixl.get_capability(hixl.FeatureType.AUTO_CONNECT) is True
    assert Engine.capability(hixl.FeatureType.CLIENT_SERVER_COMM) is True
    with pytest.raises(AdxlError) as info:
        hixl.get_capability(-1)
    assert info.value.status is Status.PARAM_INVALID
    assert (hixl.FEATURE_SUPPORTED, hixl.FEATURE_NOT_SUPPORTED) == (1, 0)
    options = {hixl.OPTION_BUFFER_POOL: "2:4", hixl.OPTION_AUTO_CONNECT: "1", hixl.OPTION_RDMA_SERVICE_LEVEL: 3}
    with Engine("127.0.0.1", options) as engine:
        handle = engine.register(bytearray(64), local_only=True)
        assert isinstance(handle, hixl.MemHandle) and handle.local_only
        engine.deregister(handle)
    for bad in ({hixl.OPTION_BUFFER_POOL: "0:8"}, {hixl.OPTION_RDMA_SERVICE_LEVEL: "9"},
                {hixl.OPTION_RDMA_TRAFFIC_CLASS: "3"}):
        with pytest.raises(AdxlError) as info:
            Engine("127.0.0.1", bad)
        assert info.value.status is Status.PARAM_INVALID, bad
