"""acl.adxl in one process: statuses raised as AdxlError, registration of Python buffers and
addresses, and transfers between two engines over loopback."""

from __future__ import annotations

import ctypes
import gc
import weakref
from typing import Iterator, Tuple

import numpy as np
import pytest

import acl
from acl import adxl
from acl.adxl import AdxlError, Engine, MemType, Status, TransferOp

from adxl_util import free_port


def status_of(info: "pytest.ExceptionInfo[AdxlError]") -> int:
    return int(info.value.status)


@pytest.fixture
def pair() -> Iterator[Tuple[Engine, Engine, str]]:
    """A listening server engine and a client engine (not connected yet)."""
    name = "127.0.0.1:%d" % free_port()
    with Engine(name) as server, Engine("127.0.0.1") as client:
        yield server, client, name


# -- statuses ---------------------------------------------------------------------------------


def test_status_numbers_are_the_headers() -> None:
    assert Status.SUCCESS == 0 and Status.PARAM_INVALID == 103900 and Status.TIMEOUT == 103901
    assert Status.NOT_CONNECTED == 103902 and Status.ALREADY_CONNECTED == 103903
    assert Status.NOTIFY_FAILED == 103904 and Status.UNSUPPORTED == 103905
    assert Status.RESOURCE_EXHAUSTED == 203900 and Status.FAILED == 503900
    assert (TransferOp.READ, TransferOp.WRITE) == (0, 1)
    assert (MemType.DEVICE, MemType.HOST) == (0, 1) and MemType.MEM_HOST is MemType.HOST
    assert (adxl.FeatureType.AUTO_CONNECT, adxl.FeatureType.CLIENT_SERVER_COMM) == (0, 1)


def test_calls_before_initialize_fail() -> None:
    with Engine() as engine:
        for call in (
            lambda: engine.connect("127.0.0.1:1"),
            lambda: engine.disconnect("127.0.0.1:1"),
            lambda: engine.register(bytearray(16)),
            lambda: engine.transfer_sync("127.0.0.1:1", TransferOp.READ, [(1, 1, 1)]),
        ):
            with pytest.raises(AdxlError) as info:
                call()
            assert info.value.status is Status.FAILED
            assert info.value.message  # the library's text
            assert "FAILED (503900)" in str(info.value)
        engine.initialize("127.0.0.1")
        assert engine.name == "127.0.0.1"


def test_after_finalize_fails_and_initialize_again_works() -> None:
    engine = Engine("127.0.0.1")
    engine.register(bytearray(64))
    engine.finalize()
    engine.finalize()  # idempotent
    assert engine.registrations == []
    with pytest.raises(AdxlError) as info:
        engine.connect("127.0.0.1:1")
    assert info.value.status is Status.FAILED
    engine.initialize("127.0.0.1")
    engine.close()
    engine.close()
    assert engine.closed
    with pytest.raises(AdxlError) as info:
        engine.initialize("127.0.0.1")
    assert info.value.status is Status.FAILED and "closed" in info.value.message


@pytest.mark.parametrize("name", ["", "not-an-ip", "127.0.0.1:99999", "300.1.1.1", "[::1"])
def test_bad_name_is_param_invalid(name: str) -> None:
    with pytest.raises(AdxlError) as info:
        Engine(name)
    assert info.value.status is Status.PARAM_INVALID
    assert info.value.message


@pytest.mark.parametrize(
    "options",
    [
        {"adxl.NoSuchOption": "1"},
        {adxl.OPTION_BUFFER_POOL: "0:8"},
        {adxl.OPTION_RDMA_SERVICE_LEVEL: "9"},
        {adxl.OPTION_SECRET: ""},
        {adxl.OPTION_REMOTE_ACCESS: "everything"},
    ],
)
def test_bad_option_is_param_invalid(options: dict) -> None:
    with pytest.raises(AdxlError) as info:
        Engine("127.0.0.1", options)
    assert info.value.status is Status.PARAM_INVALID
    assert info.value.message


def test_good_options() -> None:
    options = {adxl.OPTION_BUFFER_POOL: "2:4", adxl.OPTION_AUTO_CONNECT: True, adxl.OPTION_RDMA_SERVICE_LEVEL: 3}
    with Engine("127.0.0.1", options) as engine:
        assert engine.name == "127.0.0.1"


@pytest.mark.parametrize("timeout", [0, -1])
def test_timeout_not_positive_is_param_invalid(pair: Tuple[Engine, Engine, str], timeout: int) -> None:
    server, client, name = pair
    buf = bytearray(32)
    client.register(buf)
    for call in (
        lambda: client.connect(name, timeout),
        lambda: client.disconnect(name, timeout),
        lambda: client.transfer_sync(name, TransferOp.READ, [(adxl.buffer_address(buf), 1, 1)], timeout),
    ):
        with pytest.raises(AdxlError) as info:
            call()
        assert info.value.status is Status.PARAM_INVALID


def test_not_connected_and_already_connected(pair: Tuple[Engine, Engine, str]) -> None:
    server, client, name = pair
    remote = bytearray(64)
    local = bytearray(64)
    server.register(remote)
    client.register(local)
    with pytest.raises(AdxlError) as info:
        client.disconnect(name)
    assert info.value.status is Status.NOT_CONNECTED
    with pytest.raises(AdxlError) as info:
        client.read(name, local, adxl.buffer_address(remote))
    assert info.value.status is Status.NOT_CONNECTED
    client.connect(name)
    with pytest.raises(AdxlError) as info:
        client.connect(name)
    assert info.value.status is Status.ALREADY_CONNECTED
    assert info.value.message
    client.disconnect(name)
    with pytest.raises(AdxlError) as info:
        client.disconnect(name)
    assert info.value.status is Status.NOT_CONNECTED


def test_nobody_listening_is_failed() -> None:
    with Engine("127.0.0.1") as client:
        with pytest.raises(AdxlError) as info:
            client.connect("127.0.0.1:%d" % free_port(), 2000)
        assert info.value.status is Status.FAILED


def test_zero_address_is_param_invalid(pair: Tuple[Engine, Engine, str]) -> None:
    server, client, name = pair
    with pytest.raises(AdxlError) as info:
        client.register(0, 16)
    assert info.value.status is Status.PARAM_INVALID
    client.connect(name)
    with pytest.raises(AdxlError) as info:
        client.transfer_sync(name, TransferOp.WRITE, [(0, 4096, 16)])
    assert info.value.status is Status.PARAM_INVALID


def test_error_carries_status_and_message_and_pickles() -> None:
    import pickle

    with pytest.raises(AdxlError) as info:
        Engine("127.0.0.1", {"adxl.NoSuchOption": "1"})
    err = info.value
    assert isinstance(err.status, Status) and err.status == 103900
    assert "NoSuchOption" in err.message and err.message in str(err)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.status, copy.message, str(copy)) == (err.status, err.message, str(err))
    odd = AdxlError(100000, "a raw aclError passed through")
    assert odd.status == 100000 and not isinstance(odd.status, Status)


def test_capability() -> None:
    assert isinstance(adxl.get_capability(adxl.FeatureType.AUTO_CONNECT), bool)
    assert Engine.capability(adxl.FeatureType.CLIENT_SERVER_COMM) is True
    assert adxl.get_capability(adxl.FeatureType.AUTO_CONNECT) is True
    assert adxl.get_capability(7) is False
    with pytest.raises(AdxlError) as info:
        adxl.get_capability(-3)
    assert info.value.status is Status.PARAM_INVALID


# -- registration -----------------------------------------------------------------------------


def test_register_bytearray_memoryview_numpy_and_address() -> None:
    with Engine("127.0.0.1") as engine:
        ba = bytearray(4096)
        h1 = engine.register(ba)
        assert h1.length == 4096 and h1.addr == adxl.buffer_address(ba) and h1.obj is ba
        assert h1.mem_type is MemType.HOST
        mv = memoryview(bytearray(1000))
        h2 = engine.register(mv, 100)  # the first 100 bytes
        assert h2.length == 100
        arr = np.zeros((64, 32), dtype=np.float64)
        h3 = engine.register(arr)
        assert h3.length == arr.nbytes and h3.addr == arr.ctypes.data
        mv2 = memoryview(np.zeros((8, 8), dtype=np.int16))  # a shaped memoryview
        h4 = engine.register(mv2)
        assert h4.length == 128
        raw = ctypes.create_string_buffer(256)
        h5 = engine.register(np.int64(ctypes.addressof(raw)), 256, MemType.HOST)  # any integer
        assert h5.obj is None and h5.length == 256 and h5.addr == ctypes.addressof(raw)
        assert len(engine.registrations) == 5
        for h in (h1, h2, h3, h4, h5):
            engine.deregister(h)
        assert engine.registrations == []
        engine.deregister(h1)  # unknown now: SUCCESS, as the vendor does


def test_register_rejects_what_it_cannot_pin() -> None:
    with Engine("127.0.0.1") as engine:
        with pytest.raises(TypeError):
            engine.register(b"read-only bytes")
        with pytest.raises(TypeError):
            engine.register("text")  # type: ignore[arg-type]
        ro = np.zeros(16)
        ro.flags.writeable = False
        with pytest.raises(TypeError):
            engine.register(ro)
        with pytest.raises(ValueError):
            engine.register(np.zeros((16, 16))[:, ::2])  # not contiguous
        with pytest.raises(TypeError):
            engine.register(4096)  # an address needs a length
        with pytest.raises(ValueError):
            engine.register(bytearray(8), 9)
        with pytest.raises(AdxlError) as info:
            engine.register(bytearray())  # nothing to register
        assert info.value.status is Status.PARAM_INVALID
        with pytest.raises(AdxlError) as info:
            engine.deregister(None)  # type: ignore[arg-type]
        assert info.value.status is Status.PARAM_INVALID


def test_registration_keeps_the_object_alive_and_unresizable() -> None:
    with Engine("127.0.0.1") as engine:
        arr = np.ones(1024, dtype=np.uint8)
        ref = weakref.ref(arr)
        handle = engine.register(arr)
        del arr
        gc.collect()
        assert ref() is not None  # held by the registration
        engine.deregister(handle)
        del handle
        gc.collect()
        assert ref() is None

        ba = bytearray(64)
        handle = engine.register(ba)
        with pytest.raises(BufferError):
            ba.extend(b"x" * 4096)  # would move the memory under the engine
        engine.deregister(handle)
        del handle
        gc.collect()
        ba.extend(b"x")

        arr = np.ones(16)
        ref = weakref.ref(arr)
        engine.register(arr)
        del arr
        engine.finalize()  # drops every registration
        gc.collect()
        assert ref() is None


# -- transfers --------------------------------------------------------------------------------


def test_transfer_between_two_engines(pair: Tuple[Engine, Engine, str]) -> None:
    server, client, name = pair
    size = 1 << 20
    remote = np.arange(size // 4, dtype=np.uint32)
    local = np.zeros(size // 4, dtype=np.uint32)
    rh = server.register(remote)
    client.register(local)
    client.connect(name, timeout_ms=5000)

    assert client.read(name, local, rh.addr, timeout_ms=5000) == size
    assert np.array_equal(local, remote)

    local[:] = np.arange(size // 4, dtype=np.uint32)[::-1]
    client.write(name, local, rh.addr, timeout_ms=5000)
    assert np.array_equal(remote, local)

    # Many descriptors in one call: swap the two halves of the remote array into `local`.
    half, chunk = size // 2, 1 << 16
    base = adxl.buffer_address(local)
    descs = [adxl.TransferDesc(base + off, rh.addr + (off + half) % size, chunk) for off in range(0, size, chunk)]
    client.transfer_sync(name, TransferOp.READ, descs, 5000)
    assert np.array_equal(local, np.concatenate([remote[size // 8:], remote[: size // 8]]))

    # A bytearray and plain tuples, a sub-range of a registered region, and an address.
    ba = bytearray(b"hello, adxl!")
    client.register(ba)
    client.transfer_sync(name, TransferOp.WRITE, [(adxl.buffer_address(ba), rh.addr + 8, len(ba))])
    assert remote.view(np.uint8)[8:20].tobytes() == b"hello, adxl!"
    out = bytearray(5)
    client.read(name, out, rh.addr + 8)
    assert out == b"hello"
    client.read(name, adxl.buffer_address(local), rh.addr + 8, 12)
    assert local.view(np.uint8)[:12].tobytes() == b"hello, adxl!"

    client.transfer_sync(name, TransferOp.READ, [])  # nothing to do
    client.disconnect(name)


def test_secret_and_registered_access() -> None:
    secret = "a shared secret of 32 characters"
    name = "127.0.0.1:%d" % free_port()
    guarded = {adxl.OPTION_SECRET: secret, adxl.OPTION_REMOTE_ACCESS: "registered"}
    with Engine(name, guarded) as server, Engine("127.0.0.1", {adxl.OPTION_SECRET: secret}) as client:
        remote, outside = bytearray(b"registered" * 100), bytearray(b"unregistered" * 100)
        rh = server.register(remote)
        local = bytearray(len(remote))
        client.register(local)
        client.connect(name, timeout_ms=5000)
        assert client.read(name, local, rh.addr, timeout_ms=5000) == len(remote)
        assert local == remote
        with pytest.raises(AdxlError) as info:
            client.read(name, local, adxl.buffer_address(outside), 16, timeout_ms=5000)
        assert info.value.status is Status.PARAM_INVALID and "registered" in info.value.message
        for options in ({}, {adxl.OPTION_SECRET: "another secret, 32 characters.."}):
            with Engine("127.0.0.1", options) as stranger:
                with pytest.raises(AdxlError) as info:
                    stranger.connect(name, 5000)
                assert info.value.status is Status.FAILED and "authentication" in info.value.message


def test_transfer_async_and_notifies(pair: Tuple[Engine, Engine, str]) -> None:
    server, client, name = pair
    size = 1 << 20
    remote = np.arange(size // 4, dtype=np.uint32)
    local = np.zeros(size // 4, dtype=np.uint32)
    rh = server.register(remote)
    client.register(local)
    with pytest.raises(AdxlError) as err:
        client.transfer_async(name, TransferOp.READ, [(adxl.buffer_address(local), rh.addr, 16)])
    assert err.value.status == Status.NOT_CONNECTED
    client.connect(name, timeout_ms=5000)
    base, chunk = adxl.buffer_address(local), 1 << 16
    reqs = [client.transfer_async(name, TransferOp.READ, [(base + off, rh.addr + off, chunk)]) for off in range(0, size, chunk)]
    for req in reqs:
        while True:
            st = client.get_transfer_status(req)
            if st != adxl.TransferStatus.WAITING:
                break
        assert st == adxl.TransferStatus.COMPLETED
        with pytest.raises(AdxlError) as err:
            client.get_transfer_status(req)
        assert err.value.status == Status.PARAM_INVALID
    assert np.array_equal(local, remote)
    client.send_notify(name, "kv_ready", "layer 0", timeout_ms=5000)
    with pytest.raises(AdxlError) as err:
        client.send_notify(name, "x" * 1025)
    assert err.value.status == Status.PARAM_INVALID
    assert server.get_notifies() == [adxl.Notify("kv_ready", "layer 0")]
    assert server.get_notifies() == []


def test_device_memory_transfer(pair: Tuple[Engine, Engine, str], device: int) -> None:
    """Device memory from acl.rt.malloc registered as MemType.DEVICE on the server side."""
    server, client, name = pair
    size = 1 << 16
    dev, ret = acl.rt.malloc(size, 0)
    assert ret == 0
    try:
        src = np.frombuffer(np.random.default_rng(5).bytes(size), dtype=np.uint8).copy()
        assert acl.rt.memcpy(dev, size, src.ctypes.data, size, 1) == 0  # host to device
        handle = server.register(dev, size, MemType.DEVICE)
        assert handle.mem_type is MemType.DEVICE
        local = np.zeros(size, dtype=np.uint8)
        client.register(local)
        client.connect(name)
        client.read(name, local, dev)
        assert np.array_equal(local, src)
        client.write(name, np.full(size, 7, dtype=np.uint8), dev)
        back = np.zeros(size, dtype=np.uint8)
        assert acl.rt.memcpy(back.ctypes.data, size, dev, size, 2) == 0  # device to host
        assert (back == 7).all()
        client.disconnect(name)
        server.deregister(handle)
    finally:
        assert acl.rt.free(dev) == 0


# -- static members: MallocMem, FreeMem, ExportToShareableHandle --------------------------------


def test_malloc_mem_and_free_mem() -> None:
    addr = adxl.malloc_mem(MemType.HOST, 4096)
    assert addr != 0 and addr % 4096 == 0
    ctypes.memset(addr, 0x5A, 4096)  # ordinary host memory, writable here
    assert ctypes.string_at(addr, 4) == b"ZZZZ"
    with Engine("127.0.0.1") as engine:
        handle = engine.register(addr, 4096, MemType.HOST)
        assert handle.addr == addr and handle.obj is None
        engine.deregister(handle)
    adxl.free_mem(addr)
    for bad in (addr, 0, None):  # freed already, NULL
        with pytest.raises(AdxlError) as info:
            adxl.free_mem(bad)  # type: ignore[arg-type]
        assert info.value.status is Status.PARAM_INVALID and info.value.call == "free_mem"
    other = Engine.malloc_mem(MemType.MEM_HOST, 100)  # the static member, as AdxlEngine::MallocMem
    with pytest.raises(AdxlError) as info:
        Engine.free_mem(other + 1)  # not the start of an allocation
    assert info.value.status is Status.PARAM_INVALID
    Engine.free_mem(other)


@pytest.mark.parametrize("mem_type,size", [(MemType.HOST, 0), (MemType.HOST, -1), (7, 4096), (-1, 4096), (1 << 40, 16)])
def test_malloc_mem_bad_arguments_are_param_invalid(mem_type: int, size: int) -> None:
    with pytest.raises(AdxlError) as info:
        adxl.malloc_mem(mem_type, size)
    assert info.value.status is Status.PARAM_INVALID and info.value.call == "malloc_mem"


def test_malloc_mem_device(device: int) -> None:
    addr = adxl.malloc_mem(MemType.DEVICE, 1 << 16)
    try:
        src = bytes(range(256)) * 256
        assert acl.rt.memcpy(addr, len(src), acl.util.bytes_to_ptr(src), len(src), 1) == 0  # host to device
        back = bytearray(len(src))
        assert acl.rt.memcpy(acl.util.bytes_to_ptr(back), len(back), addr, len(src), 2) == 0
        assert bytes(back) == src
    finally:
        adxl.free_mem(addr)


def test_malloc_mem_device_without_a_current_device_is_failed() -> None:
    """As tests/c/cxx_api.cpp: device memory needs the calling thread's current device."""
    seen = []

    def run() -> None:
        try:
            adxl.free_mem(adxl.malloc_mem(MemType.DEVICE, 4096))
            seen.append(0)
        except AdxlError as err:
            seen.append(int(err.status))

    import threading

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [Status.FAILED]


def test_export_to_shareable_handle() -> None:
    addr = adxl.malloc_mem(MemType.HOST, 1 << 20)
    try:
        for bad in (0, addr + 1):
            with pytest.raises(AdxlError) as info:
                adxl.export_to_shareable_handle(bad)
            assert info.value.status is Status.PARAM_INVALID, info.value
        try:
            handle = Engine.export_to_shareable_handle(addr)
        except AdxlError as err:
            if err.status is Status.UNSUPPORTED:  # a product without IPC import
                pytest.skip(str(err))
            raise
        assert isinstance(handle, bytes) and len(handle) == adxl.SHAREABLE_HANDLE_SIZE == 128
        assert handle != bytes(128)
        assert adxl.export_to_shareable_handle(addr) == handle, "later calls give the same handle"
    finally:
        adxl.free_mem(addr)
    with pytest.raises(AdxlError) as info:
        adxl.export_to_shareable_handle(addr)  # freed: the export is withdrawn
    assert info.value.status is Status.PARAM_INVALID


def test_register_local_only() -> None:
    with Engine("127.0.0.1") as engine:
        buf = bytearray(256)
        handle = engine.register(buf, local_only=True)
        assert handle.local_only and "local_only=True" in repr(handle)
        assert not engine.register(bytearray(16)).local_only
        engine.deregister(handle)
        with pytest.raises(AdxlError) as info:
            engine.register(0, 16, local_only=True)
        assert info.value.status is Status.PARAM_INVALID


def test_local_only_region_serves_own_transfers_but_not_peers() -> None:
    name = "127.0.0.1:%d" % free_port()
    with Engine(name, {adxl.OPTION_REMOTE_ACCESS: "registered"}) as server, Engine("127.0.0.1") as client:
        remote = bytearray(b"s" * 1024)
        hidden = bytearray(b"h" * 1024)
        rh = server.register(remote)
        server.register(hidden, local_only=True)
        local = bytearray(1024)
        client.register(local, local_only=True)
        client.connect(name)
        client.read(name, local, rh.addr)  # a local_only region is a transfer's local side
        assert local == remote
        # The peer reaches the server's local_only region only as unregistered memory, which
        # this server refuses.
        with pytest.raises(AdxlError) as info:
            client.read(name, local, adxl.buffer_address(hidden), 64)
        assert info.value.status is Status.PARAM_INVALID
        assert local == remote


def test_counters() -> None:
    with Engine() as engine:
        assert engine.counters() == adxl.Counters(*[0] * 8), "zeros before initialize"
        engine.initialize("127.0.0.1")
        assert sum(engine.counters()) == 0
    with pytest.raises(AdxlError) as info:
        engine.counters()
    assert info.value.status is Status.FAILED  # closed
