"""acl.tdt at work: a channel carrying datasets between two threads (the bytes, dims, data and
tensor types each item describes arrive exactly; a small capacity makes the sender wait for the
receiver), a stop waking a blocked receiver, a queue carrying bytes and shared buffers between
two threads, a route forwarding a producer's queue to a consumer's, and, since queues and
channels are local to their process here (docs/compatibility.md, "TDT queues"), the answers a
second process gets: a grant to it is 200006, and its own attach of the id and receive on the
channel's name find nothing of the first process's."""

from __future__ import annotations

import ctypes
import os
import subprocess
import threading
import time
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import acl
from conftest import PYTHON, child_env

tdt = acl.tdt

TENSOR, END_OF_SEQUENCE = 0, 1  # acltdtTensorType
ACL_FLOAT, ACL_INT32, ACL_UINT8, ACL_INT64 = 0, 3, 4, 9  # aclDataType
DTYPES = {ACL_FLOAT: np.float32, ACL_INT32: np.int32, ACL_UINT8: np.uint8, ACL_INT64: np.int64}
NAME_PTR, DEPTH_UINT32 = 0, 1
QUEUE_EMPTY, QUEUE_FULL, FAILURE, FEATURE_UNSUPPORTED, PARAM = 207013, 207014, 500001, 200006, 107000


def arrays_of(n: int) -> List[Tuple[int, np.ndarray]]:
    """The tensors of dataset `n`: (aclDataType, array) of various shapes and types."""
    rng = np.random.default_rng(n)
    return [
        (ACL_FLOAT, rng.standard_normal((2, 3)).astype(np.float32)),
        (ACL_INT32, np.arange(n, n + 24, dtype=np.int32).reshape(2, 3, 4)),
        (ACL_UINT8, rng.integers(0, 256, size=(17,), dtype=np.uint8)),
        (ACL_INT64, np.array(n * 1_000_000_007, dtype=np.int64)),  # a scalar: no dims
    ]


def make_dataset(tensors: List[Tuple[int, np.ndarray]]) -> Tuple[int, List[int]]:
    d = tdt.create_dataset()
    assert d != 0
    items = []
    for data_type, a in tensors:
        it = tdt.create_data_item(TENSOR, list(a.shape), a.ndim, data_type, a.ctypes.data, a.nbytes)
        assert it != 0, (data_type, a.shape)
        assert tdt.add_data_item(d, it) == 0
        items.append(it)
    return d, items


def destroy_dataset(d: int, items: List[int]) -> None:
    assert tdt.destroy_dataset(d) == 0
    for it in items:  # the caller's items stay the caller's
        assert tdt.destroy_data_item(it) == 0


def read_item(it: int) -> Dict[str, Any]:
    dims, ret = tdt.get_dims_from_item(it)
    assert ret == 0
    data_type = tdt.get_data_type_from_item(it)
    size = tdt.get_data_size_from_item(it)
    addr = tdt.get_data_addr_from_item(it)
    data = ctypes.string_at(addr, size) if size else b""
    return {
        "tensor_type": tdt.get_tensor_type_from_item(it),
        "data_type": data_type,
        "dims": dims,
        "dim_num": tdt.get_dim_num_from_item(it),
        "bytes": data,
    }


def test_a_channel_carries_datasets_between_two_threads() -> None:
    name = "test-tdt-threads-%d" % os.getpid()
    count = 12
    sender_handle = tdt.create_channel_with_capacity(0, name, 2)
    receiver_handle = tdt.create_channel(0, name)  # the open name: the same channel, capacity 2
    assert sender_handle != 0 and receiver_handle != 0 and sender_handle != receiver_handle
    sent: List[List[Tuple[int, np.ndarray]]] = []
    got: List[List[Dict[str, Any]]] = []
    errors: List[Any] = []
    waits: List[float] = []

    def send() -> None:
        try:
            for n in range(count):
                tensors = arrays_of(n)
                sent.append(tensors)
                d, items = make_dataset(tensors)
                start = time.monotonic()
                ret = tdt.send_tensor(sender_handle, d, -1)
                waits.append(time.monotonic() - start)
                destroy_dataset(d, items)  # the channel holds its own copy
                if ret != 0:
                    errors.append(("send", n, ret))
                    return
            end = tdt.create_data_item(END_OF_SEQUENCE, [], 0, ACL_FLOAT, 0, 0)
            d = tdt.create_dataset()
            assert tdt.add_data_item(d, end) == 0
            errors.extend([("end", r) for r in [tdt.send_tensor(sender_handle, d, -1)] if r != 0])
            destroy_dataset(d, [end])
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def receive() -> None:
        try:
            d = tdt.create_dataset()
            while True:
                time.sleep(0.002)  # slower than the sender: it finds the channel full
                ret = tdt.receive_tensor(receiver_handle, d, -1)
                if ret != 0:
                    errors.append(("receive", ret))
                    break
                items = [read_item(tdt.get_data_item(d, i)) for i in range(tdt.get_dataset_size(d))]
                if items and items[0]["tensor_type"] == END_OF_SEQUENCE:
                    break
                got.append(items)
            assert tdt.get_dataset_name(d) == ""
            assert tdt.destroy_dataset(d) == 0  # the received items go with it
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=send), threading.Thread(target=receive)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert errors == []
    assert len(got) == count
    assert sum(waits) >= 0.005, waits  # capacity 2: the sender waited for the slower receiver
    for tensors, items in zip(sent, got):
        assert len(items) == len(tensors)
        for (data_type, a), item in zip(tensors, items):
            assert item["tensor_type"] == TENSOR
            assert item["data_type"] == data_type
            assert item["dims"] == list(a.shape) and item["dim_num"] == a.ndim
            assert item["bytes"] == a.tobytes()
            back = np.frombuffer(item["bytes"], dtype=DTYPES[data_type]).reshape(a.shape)
            assert np.array_equal(back, a)
    assert tdt.query_channel_size(receiver_handle) == (0, 0)
    assert tdt.destroy_channel(sender_handle) == 0
    assert tdt.destroy_channel(receiver_handle) == 0


def test_a_stop_wakes_a_receiver_blocked_in_another_thread() -> None:
    ch = tdt.create_channel(0, "test-tdt-stop-%d" % os.getpid())
    assert ch != 0
    result: List[int] = []
    d = tdt.create_dataset()
    t = threading.Thread(target=lambda: result.append(tdt.receive_tensor(ch, d, -1)))
    t.start()
    time.sleep(0.05)
    assert t.is_alive(), "the receive did not wait"
    assert tdt.stop_channel(ch) == 0
    t.join(timeout=10)
    assert not t.is_alive() and result == [FAILURE]
    assert tdt.destroy_dataset(d) == 0
    assert tdt.destroy_channel(ch) == 0


def make_queue(name: str, depth: int) -> int:
    attr = tdt.create_queue_attr()
    assert attr != 0
    p = ctypes.c_char_p(name.encode())
    v = ctypes.c_uint32(depth)
    assert tdt.set_queue_attr(attr, NAME_PTR, ctypes.sizeof(p), ctypes.addressof(p)) == 0
    assert tdt.set_queue_attr(attr, DEPTH_UINT32, 4, ctypes.addressof(v)) == 0
    qid, ret = tdt.create_queue(attr)
    assert ret == 0
    assert tdt.destroy_queue_attr(attr) == 0
    return qid


def message(n: int) -> bytes:
    return bytes((n * 7 + i) % 256 for i in range(1 + n * 13))


def test_a_queue_carries_bytes_and_buffers_between_two_threads(device: int) -> None:
    qid = make_queue("test-tdt-queue-%d" % os.getpid(), 2)
    count = 20
    errors: List[Any] = []
    got: List[Tuple[bytes, bytes]] = []

    def produce() -> None:
        try:
            for n in range(count):
                data, user = message(n), b"m%02d" % n
                if n % 2 == 0:  # bytes copied in
                    src = ctypes.create_string_buffer(data, len(data))
                    u = ctypes.create_string_buffer(user, len(user))
                    ret = tdt.enqueue_data(qid, ctypes.addressof(src), len(data), ctypes.addressof(u), len(user), -1, 0)
                else:  # a shared buffer moved in
                    buf, ret = tdt.alloc_buf(256, 0)
                    assert ret == 0
                    addr, size, ret = tdt.get_buf_data(buf)
                    assert ret == 0 and size == 256
                    ctypes.memmove(addr, data, len(data))
                    assert tdt.set_buf_data_len(buf, len(data)) == 0
                    u = ctypes.create_string_buffer(user, len(user))
                    assert tdt.set_buf_user_data(buf, ctypes.addressof(u), len(user), 0) == 0
                    ret = tdt.enqueue(qid, buf, -1)
                    if ret != 0:
                        tdt.free_buf(buf)  # still the producer's on failure
                if ret != 0:
                    errors.append(("enqueue", n, ret))
                    return
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def consume() -> None:
        try:
            room = ctypes.create_string_buffer(512)
            user = ctypes.create_string_buffer(3)
            for n in range(count):
                time.sleep(0.002)
                if n % 3 == 0:  # as a buffer, whichever kind went in
                    buf, ret = tdt.dequeue(qid, -1)
                    if ret != 0:
                        errors.append(("dequeue", n, ret))
                        return
                    addr, _, ret = tdt.get_buf_data(buf)
                    length, ret2 = tdt.get_buf_data_len(buf)
                    assert ret == ret2 == 0
                    assert tdt.get_buf_user_data(buf, ctypes.addressof(user), 3, 0) == 0
                    got.append((ctypes.string_at(addr, length), user.raw))
                    assert tdt.free_buf(buf) == 0
                else:  # as bytes, whichever kind went in
                    size, ret = tdt.dequeue_data(qid, ctypes.addressof(room), 512, ctypes.addressof(user), 3, -1)
                    if ret != 0:
                        errors.append(("dequeue_data", n, ret))
                        return
                    got.append((room.raw[:size], user.raw))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert errors == []
    assert got == [(message(n), b"m%02d" % n) for n in range(count)]
    assert tdt.dequeue(qid, 0) == (0, QUEUE_EMPTY)
    assert tdt.destroy_queue(qid) == 0


def test_a_bound_route_forwards_a_threads_messages_to_another(device: int) -> None:
    src = make_queue("test-tdt-route-src-%d" % os.getpid(), 4)
    dst = make_queue("test-tdt-route-dst-%d" % os.getpid(), 4)
    route = tdt.create_queue_route(src, dst)
    routes = tdt.create_queue_route_list()
    assert tdt.add_queue_route(routes, route) == 0
    assert tdt.bind_queue_routes(routes) == 0
    payloads = [b"route-%d" % i for i in range(10)]

    def produce() -> None:
        for p in payloads:
            b = ctypes.create_string_buffer(p, len(p))
            assert tdt.enqueue_data(src, ctypes.addressof(b), len(p), 0, 0, -1, 0) == 0

    t = threading.Thread(target=produce)
    t.start()
    room = ctypes.create_string_buffer(32)
    out = []
    for _ in payloads:
        size, ret = tdt.dequeue_data(dst, ctypes.addressof(room), 32, 0, 0, 5000)
        assert ret == 0
        out.append(room.raw[:size])
    t.join(timeout=10)
    assert out == payloads
    assert tdt.destroy_queue(src) == FAILURE  # on a bound route: unbind first
    assert tdt.unbind_queue_routes(routes) == 0
    for release, h in ((tdt.destroy_queue_route, route), (tdt.destroy_queue_route_list, routes)):
        assert release(h) == 0
    assert tdt.destroy_queue(dst) == 0 and tdt.destroy_queue(src) == 0


CHILD = r"""
import sys, acl
tdt = acl.tdt
assert acl.init() == 0 and acl.rt.set_device(0) == 0
qid, channel = int(sys.argv[1]), sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # the parent has sent its dataset and message
perm, ret = tdt.attach_queue(qid, 0)
ch = tdt.create_channel(0, channel)
d = tdt.create_dataset()
print(ret, perm, tdt.receive_tensor(ch, d, 0), flush=True)
tdt.destroy_dataset(d)
tdt.destroy_channel(ch)
acl.rt.reset_device(0)
acl.finalize()
"""


def test_queues_and_channels_stay_in_their_process(device: int) -> None:
    """The C side keeps queues and channels in the process (no second process can reach them):
    the parent's grant to the child is 200006, the child's attach of the parent's id 107000 and
    its receive on the parent's channel name finds an empty channel of its own (207013)."""
    qid = make_queue("test-tdt-local-%d" % os.getpid(), 2)
    name = "test-tdt-local-%d" % os.getpid()
    ch = tdt.create_channel(0, name)
    d, items = make_dataset(arrays_of(1))
    assert tdt.send_tensor(ch, d, 0) == 0
    one = ctypes.c_uint32(1)
    assert tdt.enqueue_data(qid, ctypes.addressof(one), 4, 0, 0, 0, 0) == 0
    child = subprocess.Popen(
        [PYTHON, "-c", CHILD, str(qid), name],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(),
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        assert tdt.grant_queue(qid, child.pid, 6, 0) == FEATURE_UNSUPPORTED
        assert tdt.grant_queue(qid, os.getpid(), 6, 0) == 0  # to itself: checked, done
        child.stdin.write("go\n")
        child.stdin.flush()
        answer = child.stdout.readline().split()
        assert child.wait(timeout=60) == 0, child.stderr.read() if child.stderr else ""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert answer == [str(PARAM), "0", str(QUEUE_EMPTY)]
    # Both are still the parent's, whole.
    assert tdt.query_channel_size(ch) == (1, 0)
    word = ctypes.c_uint32(0)
    assert tdt.dequeue_data(qid, ctypes.addressof(word), 4, 0, 0, 0) == (4, 0) and word.value == 1
    destroy_dataset(d, items)
    assert tdt.destroy_channel(ch) == 0
    assert tdt.destroy_queue(qid) == 0


@pytest.mark.parametrize("dims", [[], [5], [2, 3, 4], list(range(1, 129))])
def test_dims_go_in_and_come_out_as_lists(dims: List[int]) -> None:
    it = tdt.create_data_item(TENSOR, dims, len(dims), ACL_FLOAT, 0, 0)
    assert it != 0
    assert tdt.get_dim_num_from_item(it) == len(dims)
    assert tdt.get_dims_from_item(it) == (dims, 0)
    assert tdt.get_dims_from_item(it, 200) == (dims, 0)  # more room than dims: fine
    if dims:
        assert tdt.get_dims_from_item(it, len(dims) - 1) == ([], 100000)
    assert tdt.destroy_data_item(it) == 0
    # dim_num None: the list's length; more than the list holds is refused before C reads past it
    it = tdt.create_data_item(TENSOR, dims, None, ACL_FLOAT, 0, 0)
    assert tdt.get_dims_from_item(it) == (dims, 0)
    assert tdt.destroy_data_item(it) == 0
    with pytest.raises(ValueError):
        tdt.create_data_item(TENSOR, dims or [1], len(dims or [1]) + 1, ACL_FLOAT, 0, 0)


def test_too_many_dims_and_dims_on_an_end_item_give_no_item() -> None:
    assert tdt.create_data_item(TENSOR, list(range(129)), 129, ACL_FLOAT, 0, 0) == 0
    assert tdt.create_data_item(END_OF_SEQUENCE, [2], 1, ACL_FLOAT, 0, 0) == 0
