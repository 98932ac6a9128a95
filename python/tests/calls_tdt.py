"""Call cases (pyacl_cases.py) of the tdt family (acl.tdt: TDT channels, datasets and data items
of acl/acl_tdt.h, TDT queues, queue attributes, routes and buffers of acl/acl_tdt_queue.h), for
test_every_function.py.

Each case makes what it needs (items over ctypes buffers kept alive by ``ctx.cleanup``,
datasets, channels of a name of its own, queues, routes, shared buffers) and registers the
release in ``ctx.cleanup``. The bad calls pass bogus or stale handles (checked table entries:
107017), NULL (100000), unknown queue ids (107000), or real memory with a wrong size, never an
address the library would dereference. Functions whose C result is not an ``aclError`` (handles,
sizes, names, types) are checked by predicates on what they return (NULL is 0 or None)."""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from typing import Any, Callable, List, Optional

import acl  # noqa: F401
from pyacl_cases import ACL_ERROR_INVALID_PARAM, BAD_HANDLE, Case, Ctx

tdt = acl.tdt

INVALID_PARAM = ACL_ERROR_INVALID_PARAM  # 100000: NULL pointers and argument checks
PARAM = 107000  # ACL_ERROR_RT_PARAM_INVALID: an unknown queue id, a buffer length past its size
INVALID_HANDLE = 107017  # ACL_ERROR_RT_INVALID_HANDLE: a bogus or stale item, dataset, channel, ...
CONTEXT_NULL = 107002  # ACL_ERROR_RT_CONTEXT_NULL: no current device
FEATURE_UNSUPPORTED = 200006  # ACL_ERROR_FEATURE_UNSUPPORTED
QUEUE_EMPTY = 207013  # ACL_ERROR_RT_QUEUE_EMPTY
QUEUE_FULL = 207014  # ACL_ERROR_RT_QUEUE_FULL
FAILURE = 500001  # ACL_ERROR_FAILURE

# acltdtTensorType, aclDataType
TENSOR, END_OF_SEQUENCE, UNDEFINED = 0, 1, -1
ACL_FLOAT, ACL_DT_UNDEFINED = 0, -1
# acltdtQueueAttrType, acltdtQueueRouteParamType, acltdtQueueRouteQueryInfoParamType, modes
NAME_PTR, DEPTH_UINT32 = 0, 1
ROUTE_SRC, ROUTE_DST, ROUTE_STATUS = 0, 1, 2
QUERY_MODE, QUERY_SRC_ID, QUERY_DST_ID = 0, 1, 2
MODE_SRC, MODE_DST, MODE_SRC_AND_DST = 0, 1, 2
NORMAL_MEM, DVPP_MEM = 0, 1
UNKNOWN_QID = 60000

CASES: List[Case] = []
_names = itertools.count()


def case(name: str, valid: Callable[[Ctx], Any], bad: Callable[[Ctx], Any], code: Any = INVALID_HANDLE, **kw: Any) -> None:
    CASES.append(Case("tdt." + name, valid, bad, code, **kw))


def expect_that(cond: bool, what: Any) -> None:
    assert cond, what


def nonzero(r: Any) -> bool:
    return isinstance(r, int) and r != 0


def is_zero(r: Any) -> bool:
    return r == 0


def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` on a new thread, which has no current device."""
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn(*args)))
    t.start()
    t.join()
    return out[0]


def keep(ctx: Ctx, value: Any) -> Any:
    ctx.cleanup.append((lambda _: None, value))
    return value


def made(ctx: Ctx, release: Callable[[int], Any], handle: int) -> int:
    """`handle` of a create call (0: none), its release registered."""
    if handle:
        ctx.cleanup.append((release, handle))
    return handle


def forget(ctx: Ctx, handle: Any) -> None:
    """Drops the release of `handle` from the cleanup (the case released it, or C owns it now)."""
    for i in range(len(ctx.cleanup) - 1, -1, -1):
        if ctx.cleanup[i][1] is handle or ctx.cleanup[i][1] == handle:
            del ctx.cleanup[i]
            return
    raise AssertionError("no release of %r registered" % (handle,))


def name_of(what: str) -> str:
    """A channel or queue name no other case uses (channels and queues are per process)."""
    return "calls-tdt-%s-%d-%d" % (what, os.getpid(), next(_names))


# ---- channels, datasets, items ------------------------------------------------------------

FLOATS = [1.5, -2.0, 3.25, 0.0, 8.0, -0.5]


def floats(ctx: Ctx, values: List[float] = FLOATS) -> Any:
    return keep(ctx, (ctypes.c_float * len(values))(*values))


def item(ctx: Ctx, dims: Optional[List[int]] = None) -> int:
    data = floats(ctx)
    it = tdt.create_data_item(TENSOR, [2, 3] if dims is None else dims, None, ACL_FLOAT, ctypes.addressof(data), 24)
    assert it != 0
    return made(ctx, tdt.destroy_data_item, it)


def dataset(ctx: Ctx, items: int = 0) -> int:
    d = tdt.create_dataset()
    assert d != 0
    made(ctx, tdt.destroy_dataset, d)
    for _ in range(items):
        assert tdt.add_data_item(d, item(ctx)) == 0
    return d


def channel(ctx: Ctx, capacity: Optional[int] = None) -> int:
    name = name_of("channel")
    ch = tdt.create_channel(0, name) if capacity is None else tdt.create_channel_with_capacity(0, name, capacity)
    assert ch != 0
    return made(ctx, tdt.destroy_channel, ch)


def sent(ctx: Ctx, capacity: Optional[int] = None, count: int = 1) -> int:
    """A channel holding `count` datasets of one item each."""
    ch = channel(ctx, capacity)
    for _ in range(count):
        assert tdt.send_tensor(ch, dataset(ctx, 1), 0) == 0
    return ch


def received(ctx: Ctx) -> int:
    """A dataset received from a channel: its items are its own."""
    d = dataset(ctx)
    assert tdt.receive_tensor(sent(ctx), d, 0) == 0
    return d


def floats_at(addr: int, count: int) -> List[float]:
    return list((ctypes.c_float * count).from_address(addr))


def destroyed(make: Callable[[Ctx], int], destroy: Callable[[int], int]) -> Callable[[Ctx], int]:
    """A handle `make` gave and `destroy` took back: stale."""

    def stale(ctx: Ctx) -> int:
        h = make(ctx)
        forget(ctx, h)
        assert destroy(h) == 0
        return h

    return stale


case("create_data_item", lambda ctx: made(ctx, tdt.destroy_data_item, tdt.create_data_item(
         TENSOR, [2, 3], 2, ACL_FLOAT, ctypes.addressof(floats(ctx)), 24)),
     # dims NULL with dimNum 2: NULL with a message
     lambda ctx: tdt.create_data_item(TENSOR, None, 2, ACL_FLOAT, ctypes.addressof(floats(ctx)), 24),
     code=is_zero, valid_code=nonzero,
     check=lambda r, ctx: expect_that(tdt.get_dims_from_item(r) == ([2, 3], 0)
                                      and tdt.get_data_size_from_item(r) == 24, r))
case("destroy_data_item", lambda ctx: tdt.destroy_data_item(destroyed(item, lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_data_item(destroyed(item, tdt.destroy_data_item)(ctx)))
case("get_dims_from_item", lambda ctx: tdt.get_dims_from_item(item(ctx, [4, 1, 7]), 3),
     lambda ctx: tdt.get_dims_from_item(item(ctx, [4, 1, 7]), 2),  # fewer places than dims
     code=INVALID_PARAM, check=lambda r, ctx: expect_that(r[0] == [4, 1, 7], r))
case("get_dim_num_from_item", lambda ctx: tdt.get_dim_num_from_item(item(ctx, [4, 1, 7])),
     lambda ctx: tdt.get_dim_num_from_item(BAD_HANDLE), code=is_zero, valid_code=lambda r: r == 3)
case("get_tensor_type_from_item", lambda ctx: tdt.get_tensor_type_from_item(
         made(ctx, tdt.destroy_data_item, tdt.create_data_item(END_OF_SEQUENCE, [], 0, ACL_FLOAT, 0, 0))),
     lambda ctx: tdt.get_tensor_type_from_item(BAD_HANDLE),
     code=lambda r: r == UNDEFINED, valid_code=lambda r: r == END_OF_SEQUENCE)
case("get_data_type_from_item", lambda ctx: tdt.get_data_type_from_item(item(ctx)),
     lambda ctx: tdt.get_data_type_from_item(0),
     code=lambda r: r == ACL_DT_UNDEFINED, valid_code=lambda r: r == ACL_FLOAT)


def _item_address(ctx: Ctx) -> Any:
    data = floats(ctx)
    it = made(ctx, tdt.destroy_data_item, tdt.create_data_item(TENSOR, [6], 1, ACL_FLOAT, ctypes.addressof(data), 24))
    return tdt.get_data_addr_from_item(it), ctypes.addressof(data)


case("get_data_addr_from_item", _item_address, lambda ctx: tdt.get_data_addr_from_item(BAD_HANDLE),
     code=is_zero, valid_code=lambda r: r[0] == r[1] != 0)  # the caller's memory itself
case("get_data_size_from_item", lambda ctx: tdt.get_data_size_from_item(item(ctx)),
     lambda ctx: tdt.get_data_size_from_item(BAD_HANDLE), code=is_zero, valid_code=lambda r: r == 24)
case("get_slice_info_from_item", lambda ctx: tdt.get_slice_info_from_item(item(ctx)),
     lambda ctx: tdt.get_slice_info_from_item(BAD_HANDLE),
     check=lambda r, ctx: expect_that(r == (0, 0, 0), r))  # no device slices tensors here
case("create_dataset", lambda ctx: made(ctx, tdt.destroy_dataset, tdt.create_dataset()),
     # no argument, any thread: a new dataset, empty
     lambda ctx: made(ctx, tdt.destroy_dataset, in_thread(tdt.create_dataset)),
     code=lambda r: nonzero(r) and tdt.get_dataset_size(r) == 0, valid_code=nonzero,
     check=lambda r, ctx: expect_that(tdt.get_dataset_size(r) == 0 and tdt.get_dataset_name(r) == "", r))
case("destroy_dataset", lambda ctx: tdt.destroy_dataset(destroyed(dataset, lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_dataset(destroyed(dataset, tdt.destroy_dataset)(ctx)))
case("add_data_item", lambda ctx: tdt.add_data_item(dataset(ctx), item(ctx)),
     # a dataset received into holds its own items and takes no more
     lambda ctx: tdt.add_data_item(received(ctx), item(ctx)), code=FEATURE_UNSUPPORTED)


def _item_at(ctx: Ctx) -> Any:
    d, it = dataset(ctx), item(ctx)
    assert tdt.add_data_item(d, it) == 0
    return tdt.get_data_item(d, 0), it


case("get_data_item", _item_at, lambda ctx: tdt.get_data_item(dataset(ctx, 1), 1),  # past the end
     code=is_zero, valid_code=lambda r: r[0] == r[1] != 0)
case("get_dataset_size", lambda ctx: tdt.get_dataset_size(dataset(ctx, 3)),
     lambda ctx: tdt.get_dataset_size(BAD_HANDLE), code=is_zero, valid_code=lambda r: r == 3)
case("get_dataset_name", lambda ctx: tdt.get_dataset_name(dataset(ctx, 1)),
     lambda ctx: tdt.get_dataset_name(BAD_HANDLE), code=lambda r: r is None, valid_code=lambda r: r == "")

case("create_channel", lambda ctx: made(ctx, tdt.destroy_channel, tdt.create_channel(0, name_of("create"))),
     lambda ctx: tdt.create_channel(0, "x" * 128),  # a name of more than 127 bytes
     code=is_zero, valid_code=nonzero,
     check=lambda r, ctx: expect_that(tdt.query_channel_size(r) == (0, 0), r))
case("create_channel_with_capacity",
     lambda ctx: made(ctx, tdt.destroy_channel, tdt.create_channel_with_capacity(0, name_of("capacity"), 2)),
     lambda ctx: tdt.create_channel_with_capacity(0, name_of("capacity"), 1),  # capacity 2 to 8192
     code=is_zero, valid_code=nonzero,
     # capacity 2: the third send finds it full
     check=lambda r, ctx: expect_that([tdt.send_tensor(r, dataset(ctx, 1), 0) for _ in range(3)]
                                      == [0, 0, QUEUE_FULL], r))
case("destroy_channel", lambda ctx: tdt.destroy_channel(destroyed(channel, lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_channel(destroyed(channel, tdt.destroy_channel)(ctx)))
def _clean(ctx: Ctx) -> Any:
    ch = sent(ctx, count=2)
    return tdt.clean_channel(ch), tdt.query_channel_size(ch)


case("clean_channel", _clean, lambda ctx: tdt.clean_channel(BAD_HANDLE),
     valid_code=lambda r: r == (0, (0, 0)))  # every dataset dropped


def _stopped(ctx: Ctx) -> Any:
    ch = channel(ctx)
    ret = tdt.stop_channel(ch)
    # every later send or receive: 500001
    return ret, tdt.send_tensor(ch, dataset(ctx, 1), 0), tdt.receive_tensor(ch, dataset(ctx), 0)


case("stop_channel", _stopped, lambda ctx: tdt.stop_channel(0), code=INVALID_PARAM,
     valid_code=lambda r: r == (0, FAILURE, FAILURE))
def _send(ctx: Ctx) -> Any:
    ch = channel(ctx)
    return tdt.send_tensor(ch, dataset(ctx, 2), 0), tdt.query_channel_size(ch)


case("send_tensor", _send,
     lambda ctx: tdt.send_tensor(sent(ctx, capacity=2, count=2), dataset(ctx, 1), 0),  # full, at once
     code=QUEUE_FULL, valid_code=lambda r: r == (0, (1, 0)))  # one dataset (of two items) held


def _receive(ctx: Ctx) -> Any:
    ch = channel(ctx)
    out = dataset(ctx)
    assert tdt.send_tensor(ch, dataset(ctx, 1), 0) == 0
    ret = tdt.receive_tensor(ch, out, 0)
    return out, ret


def _received_floats(r: Any, ctx: Ctx) -> None:
    got = tdt.get_data_item(r[0], 0)
    expect_that(tdt.get_dataset_size(r[0]) == 1 and tdt.get_dims_from_item(got) == ([2, 3], 0)
                and floats_at(tdt.get_data_addr_from_item(got), 6) == FLOATS, r)


case("receive_tensor", _receive, lambda ctx: tdt.receive_tensor(channel(ctx), dataset(ctx), 0),  # empty
     code=QUEUE_EMPTY, check=_received_floats)
case("query_channel_size", lambda ctx: tdt.query_channel_size(sent(ctx, count=3)),
     lambda ctx: tdt.query_channel_size(BAD_HANDLE), check=lambda r, ctx: expect_that(r[0] == 3, r))

# ---- queues, attributes ---------------------------------------------------------------------


def attr(ctx: Ctx, name: Optional[str] = None, depth: Optional[int] = None) -> int:
    a = tdt.create_queue_attr()
    assert a != 0
    made(ctx, tdt.destroy_queue_attr, a)
    if name is not None:
        p = keep(ctx, ctypes.c_char_p(name.encode()))
        assert tdt.set_queue_attr(a, NAME_PTR, ctypes.sizeof(p), ctypes.addressof(p)) == 0
    if depth is not None:
        v = ctypes.c_uint32(depth)
        assert tdt.set_queue_attr(a, DEPTH_UINT32, 4, ctypes.addressof(v)) == 0
    return a


def queue(ctx: Ctx, depth: int = 4) -> int:
    qid, ret = tdt.create_queue(attr(ctx, name_of("queue"), depth))
    assert ret == 0
    ctx.cleanup.append((tdt.destroy_queue, qid))
    return qid


def u32(value: int = 0) -> Any:
    return ctypes.c_uint32(value)


def _created_queue(ctx: Ctx) -> Any:
    qid, ret = tdt.create_queue(attr(ctx, name_of("create"), 2))
    if ret == 0:
        ctx.cleanup.append((tdt.destroy_queue, qid))
    return qid, ret


def _name_in_use(ctx: Ctx) -> Any:
    a = attr(ctx, name_of("twice"), 2)
    qid, ret = tdt.create_queue(a)
    assert ret == 0
    ctx.cleanup.append((tdt.destroy_queue, qid))
    return tdt.create_queue(a)


def _holds_two(r: Any, ctx: Ctx) -> None:
    word = keep(ctx, u32(7))
    rets = [tdt.enqueue_data(r[0], ctypes.addressof(word), 4, 0, 0, 0, 0) for _ in range(3)]
    expect_that(rets == [0, 0, QUEUE_FULL], rets)  # depth 2


case("create_queue", _created_queue, _name_in_use, code=INVALID_PARAM, check=_holds_two)
case("destroy_queue", lambda ctx: tdt.destroy_queue(destroyed(queue, lambda q: 0)(ctx)),
     lambda ctx: tdt.destroy_queue(UNKNOWN_QID), code=PARAM)
case("create_queue_attr", lambda ctx: made(ctx, tdt.destroy_queue_attr, tdt.create_queue_attr()),
     # no argument, any thread: new attributes with the defaults
     lambda ctx: made(ctx, tdt.destroy_queue_attr, in_thread(tdt.create_queue_attr)),
     code=nonzero, valid_code=nonzero, check=lambda r, ctx: expect_that(depth_of(r) == 8, depth_of(r)))
case("destroy_queue_attr", lambda ctx: tdt.destroy_queue_attr(destroyed(attr, lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_queue_attr(destroyed(attr, tdt.destroy_queue_attr)(ctx)))


def depth_of(a: int) -> int:
    got = u32()
    assert tdt.get_queue_attr(a, DEPTH_UINT32, 4, ctypes.addressof(got)) == (4, 0)
    return got.value


def _set_depth(ctx: Ctx) -> Any:
    a = attr(ctx)
    ret = tdt.set_queue_attr(a, DEPTH_UINT32, 4, ctypes.addressof(u32(16)))
    got = u32()
    return ret, tdt.get_queue_attr(a, DEPTH_UINT32, 4, ctypes.addressof(got)), got.value


case("set_queue_attr", _set_depth,
     # 9 bytes for a name pointer: more than the value's 8
     lambda ctx: tdt.set_queue_attr(attr(ctx), NAME_PTR, 9, ctypes.addressof(keep(ctx, ctypes.create_string_buffer(16)))),
     code=INVALID_PARAM, valid_code=lambda r: r == (0, (4, 0), 16))


def _get_name(ctx: Ctx) -> Any:
    name = name_of("attr")
    p = ctypes.c_void_p()
    got = tdt.get_queue_attr(attr(ctx, name), NAME_PTR, 8, ctypes.addressof(p))
    return got + (name, ctypes.string_at(p.value).decode() if p.value else None)


case("get_queue_attr", _get_name,
     lambda ctx: tdt.get_queue_attr(attr(ctx), DEPTH_UINT32, 2, ctypes.addressof(keep(ctx, u32()))),  # 2 < 4
     code=INVALID_PARAM, valid_code=lambda r: r[:2] == (8, 0) and r[2] == r[3])

# ---- messages: bytes and shared buffers -----------------------------------------------------


def buf(ctx: Ctx, size: int = 64) -> int:
    b, ret = tdt.alloc_buf(size, NORMAL_MEM)
    assert ret == 0 and b != 0
    ctx.cleanup.append((tdt.free_buf, b))
    return b


def owned(ctx: Ctx, b: int) -> None:
    """`b` is no longer the case's to free (a queue or a chain took it)."""
    forget(ctx, b)


def _enqueue_data(ctx: Ctx) -> Any:
    q = queue(ctx)
    data = keep(ctx, ctypes.create_string_buffer(b"tdt bytes"))
    user = keep(ctx, ctypes.create_string_buffer(b"ud"))
    ret = tdt.enqueue_data(q, ctypes.addressof(data), 9, ctypes.addressof(user), 2, 0, 0)
    out, out_user = ctypes.create_string_buffer(16), ctypes.create_string_buffer(2)
    return ret, tdt.dequeue_data(q, ctypes.addressof(out), 16, ctypes.addressof(out_user), 2, 0), out.raw[:9], out_user.raw


case("enqueue_data", _enqueue_data,
     lambda ctx: tdt.enqueue_data(UNKNOWN_QID, ctypes.addressof(keep(ctx, u32())), 4, 0, 0, 0, 0), code=PARAM,
     valid_code=lambda r: r == (0, (9, 0), b"tdt bytes", b"ud"))


def _dequeue_data(ctx: Ctx) -> Any:
    q = queue(ctx)
    data = keep(ctx, (ctypes.c_uint8 * 200)(*range(200)))
    assert tdt.enqueue_data(q, ctypes.addressof(data), 200, 0, 0, 0, 0) == 0
    out = keep(ctx, (ctypes.c_uint8 * 256)())
    r = tdt.dequeue_data(q, ctypes.addressof(out), 256, 0, 0, 0)
    return r + (list(out[:200]),)


def _dequeue_short(ctx: Ctx) -> Any:
    q = queue(ctx)
    data = keep(ctx, (ctypes.c_uint8 * 200)())
    assert tdt.enqueue_data(q, ctypes.addressof(data), 200, 0, 0, 0, 0) == 0
    # room for 10 of 200 bytes: the message stays, and the room it needs is said
    return tdt.dequeue_data(q, ctypes.addressof(keep(ctx, (ctypes.c_uint8 * 10)())), 10, 0, 0, 0)


# (C writes the room needed into retDataSize; Python gives 0 outputs when ret is not 0)
case("dequeue_data", _dequeue_data, _dequeue_short, code=INVALID_PARAM,
     valid_code=lambda r: r[:2] == (200, 0) and r[2] == list(range(200)))


def _enqueue(ctx: Ctx) -> Any:
    q, b = queue(ctx), buf(ctx)
    ret = tdt.enqueue(q, b, 0)
    if ret == 0:
        owned(ctx, b)
    out, ret2 = tdt.dequeue(q, 0)
    if ret2 == 0:
        ctx.cleanup.append((tdt.free_buf, out))
    return ret, out == b


case("enqueue", _enqueue, lambda ctx: tdt.enqueue(queue(ctx), BAD_HANDLE, 0), code=INVALID_HANDLE,
     valid_code=lambda r: r == (0, True))  # the same buffer comes out


def _dequeue(ctx: Ctx) -> Any:
    q = queue(ctx)
    data = keep(ctx, ctypes.create_string_buffer(b"hello"))
    assert tdt.enqueue_data(q, ctypes.addressof(data), 5, 0, 0, 0, 0) == 0
    out, ret = tdt.dequeue(q, 0)
    if ret == 0:
        ctx.cleanup.append((tdt.free_buf, out))
    return out, ret


def _dequeued_hello(r: Any, ctx: Ctx) -> None:
    addr, size, ret = tdt.get_buf_data(r[0])
    length, ret2 = tdt.get_buf_data_len(r[0])
    expect_that(ret == ret2 == 0 and ctypes.string_at(addr, length) == b"hello", (addr, size, length))


case("dequeue", _dequeue, lambda ctx: tdt.dequeue(queue(ctx), 0), code=QUEUE_EMPTY, check=_dequeued_hello)
case("grant_queue", lambda ctx: tdt.grant_queue(queue(ctx), os.getpid(), 6, 0),  # to itself: checked, done
     # to another process: queues are local to this one
     lambda ctx: tdt.grant_queue(queue(ctx), os.getppid(), 2, 0), code=FEATURE_UNSUPPORTED)
case("attach_queue", lambda ctx: tdt.attach_queue(queue(ctx), 0), lambda ctx: tdt.attach_queue(UNKNOWN_QID, 0),
     code=PARAM, check=lambda r, ctx: expect_that(r[0] == 7, r))  # manage, dequeue, enqueue

def _alloc(ctx: Ctx) -> Any:
    b, ret = tdt.alloc_buf(128, DVPP_MEM)
    if ret == 0:
        ctx.cleanup.append((tdt.free_buf, b))
    return b, ret


case("alloc_buf", _alloc,
     lambda ctx: tdt.alloc_buf(128, 2), code=INVALID_PARAM,  # type: normal or DVPP memory
     check=lambda r, ctx: expect_that(r[0] != 0 and tdt.get_buf_data(r[0])[1:] == (128, 0), r))
case("free_buf", lambda ctx: tdt.free_buf(destroyed(buf, lambda b: 0)(ctx)),
     lambda ctx: tdt.free_buf(destroyed(buf, tdt.free_buf)(ctx)))
case("get_buf_data", lambda ctx: tdt.get_buf_data(buf(ctx, 64)), lambda ctx: tdt.get_buf_data(BAD_HANDLE),
     check=lambda r, ctx: expect_that(r[0] != 0 and r[1] == 64, r))


def _set_len(ctx: Ctx) -> Any:
    b = buf(ctx, 64)
    return tdt.set_buf_data_len(b, 16), tdt.get_buf_data_len(b)


case("set_buf_data_len", _set_len, lambda ctx: tdt.set_buf_data_len(buf(ctx, 64), 65), code=PARAM,
     valid_code=lambda r: r == (0, (16, 0)))
case("get_buf_data_len", lambda ctx: tdt.get_buf_data_len(buf(ctx, 64)), lambda ctx: tdt.get_buf_data_len(BAD_HANDLE),
     check=lambda r, ctx: expect_that(r[0] == 0, r))  # a new buffer's valid length: 0 (nothing set)


def _chain(ctx: Ctx) -> Any:
    head, tail = buf(ctx), buf(ctx, 8)
    ret = tdt.append_buf_chain(head, tail)
    if ret == 0:
        owned(ctx, tail)  # the chain's now: freed with its head
    return ret, tdt.get_buf_chain_num(head), tdt.get_buf_from_chain(head, 1)[0] == tail


case("append_buf_chain", _chain, lambda ctx: tdt.append_buf_chain(buf(ctx), BAD_HANDLE),
     valid_code=lambda r: r == (0, (2, 0), True))
case("get_buf_chain_num", lambda ctx: tdt.get_buf_chain_num(buf(ctx)), lambda ctx: tdt.get_buf_chain_num(BAD_HANDLE),
     check=lambda r, ctx: expect_that(r[0] == 1, r))
def _from_chain(ctx: Ctx) -> Any:
    b = buf(ctx)
    return tdt.get_buf_from_chain(b, 0), b


case("get_buf_from_chain", _from_chain,
     lambda ctx: tdt.get_buf_from_chain(buf(ctx), 1), code=PARAM,  # past the end of a chain of one
     valid_code=lambda r: r[0] == (r[1], 0))  # a buffer is the head of its own chain


def _user_data(ctx: Ctx, offset: int = 0) -> Any:
    b = buf(ctx)
    tag = keep(ctx, ctypes.create_string_buffer(b"tag"))
    out = keep(ctx, ctypes.create_string_buffer(3))
    ret = tdt.set_buf_user_data(b, ctypes.addressof(tag), 3, offset)
    return ret, tdt.get_buf_user_data(b, ctypes.addressof(out), 3, offset), out.raw


case("set_buf_user_data", lambda ctx: _user_data(ctx, 10),
     # 3 bytes at 95: past the 96-byte area
     lambda ctx: tdt.set_buf_user_data(buf(ctx), ctypes.addressof(keep(ctx, ctypes.create_string_buffer(3))), 3, 95),
     code=PARAM, valid_code=lambda r: r == (0, 0, b"tag"))
case("get_buf_user_data", lambda ctx: _user_data(ctx, 0)[1:],
     lambda ctx: tdt.get_buf_user_data(BAD_HANDLE, ctypes.addressof(keep(ctx, ctypes.create_string_buffer(3))), 3, 0),
     valid_code=lambda r: r == (0, b"tag"))


def _copy_ref(ctx: Ctx) -> Any:
    b = buf(ctx)
    ref, ret = tdt.copy_buf_ref(b)
    if ret == 0:
        ctx.cleanup.append((tdt.free_buf, ref))
    return (ref, ret), tdt.get_buf_data(b)[0]


case("copy_buf_ref", _copy_ref, lambda ctx: tdt.copy_buf_ref(BAD_HANDLE),
     # a new reference to the same data block
     valid_code=lambda r: r[0][1] == 0 and r[0][0] != 0 and tdt.get_buf_data(r[0][0])[0] == r[1])

# ---- routes, route lists, queries -----------------------------------------------------------


def route(ctx: Ctx, src: int, dst: int) -> int:
    r = tdt.create_queue_route(src, dst)
    assert r != 0
    return made(ctx, tdt.destroy_queue_route, r)


def route_list(ctx: Ctx, *pairs: Any) -> int:
    lst = tdt.create_queue_route_list()
    assert lst != 0
    made(ctx, tdt.destroy_queue_route_list, lst)
    for src, dst in pairs:
        assert tdt.add_queue_route(lst, route(ctx, src, dst)) == 0
    return lst


def param(r: int, kind: int) -> int:
    v = ctypes.c_int32()
    n, ret = tdt.get_queue_route_param(r, kind, 4, ctypes.addressof(v))
    assert (n, ret) == (4, 0), (n, ret)
    return v.value


def route_at(lst: int, i: int) -> Any:
    view = tdt.create_queue_route(0, 0)
    try:
        assert tdt.get_queue_route(lst, i, view) == 0
        return param(view, ROUTE_SRC), param(view, ROUTE_DST), param(view, ROUTE_STATUS)
    finally:
        tdt.destroy_queue_route(view)


def bound(ctx: Ctx) -> Any:
    """Two queues and a list holding the route between them, bound (unbound in cleanup, before the
    queues go: a queue on a bound route cannot be destroyed)."""
    src, dst = queue(ctx), queue(ctx)
    lst = route_list(ctx, (src, dst))
    assert tdt.bind_queue_routes(lst) == 0
    ctx.cleanup.append((tdt.unbind_queue_routes, lst))
    return src, dst, lst


def query(ctx: Ctx, **values: int) -> int:
    info = tdt.create_queue_route_query_info()
    assert info != 0
    made(ctx, tdt.destroy_queue_route_query_info, info)
    for kind, key in ((QUERY_MODE, "mode"), (QUERY_SRC_ID, "src"), (QUERY_DST_ID, "dst")):
        if key in values:
            v = ctypes.c_int32(values[key])
            assert tdt.set_queue_route_query_info(info, kind, 4, ctypes.addressof(v)) == 0
    return info


case("create_queue_route", lambda ctx: made(ctx, tdt.destroy_queue_route, tdt.create_queue_route(3, 5)),
     # no failing argument: any ids (checked when bound), any thread
     lambda ctx: made(ctx, tdt.destroy_queue_route, in_thread(tdt.create_queue_route, 5, 3)),
     code=lambda r: nonzero(r) and param(r, ROUTE_SRC) == 5, valid_code=nonzero,
     check=lambda r, ctx: expect_that((param(r, ROUTE_SRC), param(r, ROUTE_DST), param(r, ROUTE_STATUS)) == (3, 5, 0), r))
case("destroy_queue_route", lambda ctx: tdt.destroy_queue_route(destroyed(lambda c: route(c, 1, 2), lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_queue_route(destroyed(lambda c: route(c, 1, 2), tdt.destroy_queue_route)(ctx)))
def _route_param(ctx: Ctx) -> Any:
    dst = u32()
    return tdt.get_queue_route_param(route(ctx, 3, 9), ROUTE_DST, 4, ctypes.addressof(dst)) + (dst.value,)


case("get_queue_route_param", _route_param,
     lambda ctx: tdt.get_queue_route_param(route(ctx, 3, 9), ROUTE_SRC, 2, ctypes.addressof(keep(ctx, u32()))),
     code=INVALID_PARAM, valid_code=lambda r: r == (4, 0, 9))  # `len` must hold 4 bytes
case("create_queue_route_list", lambda ctx: made(ctx, tdt.destroy_queue_route_list, tdt.create_queue_route_list()),
     lambda ctx: made(ctx, tdt.destroy_queue_route_list, in_thread(tdt.create_queue_route_list)),  # any thread
     code=lambda r: nonzero(r) and tdt.get_queue_route_num(r) == 0, valid_code=nonzero,
     check=lambda r, ctx: expect_that(tdt.get_queue_route_num(r) == 0, r))
case("destroy_queue_route_list",
     lambda ctx: tdt.destroy_queue_route_list(destroyed(lambda c: route_list(c, (1, 2)), lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_queue_route_list(destroyed(route_list, tdt.destroy_queue_route_list)(ctx)))


def _add_route(ctx: Ctx) -> Any:
    lst = route_list(ctx)
    r = route(ctx, 4, 6)
    ret = tdt.add_queue_route(lst, r)
    forget(ctx, r)
    assert tdt.destroy_queue_route(r) == 0  # the list holds a copy
    return ret, tdt.get_queue_route_num(lst), route_at(lst, 0)


case("add_queue_route", _add_route, lambda ctx: tdt.add_queue_route(BAD_HANDLE, route(ctx, 1, 2)),
     valid_code=lambda r: r == (0, 1, (4, 6, 0)))


def _get_route(ctx: Ctx) -> Any:
    lst = route_list(ctx, (1, 2), (7, 8))
    view = route(ctx, 0, 0)
    return tdt.get_queue_route(lst, 1, view), param(view, ROUTE_SRC), param(view, ROUTE_DST)


case("get_queue_route", _get_route,
     lambda ctx: tdt.get_queue_route(route_list(ctx, (1, 2)), 1, route(ctx, 0, 0)),  # index past the end
     code=INVALID_PARAM, valid_code=lambda r: r == (0, 7, 8))
case("get_queue_route_num", lambda ctx: tdt.get_queue_route_num(route_list(ctx, (1, 2), (2, 3), (3, 4))),
     lambda ctx: tdt.get_queue_route_num(BAD_HANDLE), code=is_zero, valid_code=lambda r: r == 3)


def _bind(ctx: Ctx) -> Any:
    src, dst = queue(ctx), queue(ctx)
    lst = route_list(ctx, (src, dst))
    ret = tdt.bind_queue_routes(lst)
    if ret == 0:
        ctx.cleanup.append((tdt.unbind_queue_routes, lst))
    # what reaches the source arrives on the destination
    data = keep(ctx, ctypes.create_string_buffer(b"routed"))
    assert tdt.enqueue_data(src, ctypes.addressof(data), 6, 0, 0, 0, 0) == 0
    out = keep(ctx, ctypes.create_string_buffer(8))
    return ret, route_at(lst, 0)[2], tdt.dequeue_data(dst, ctypes.addressof(out), 8, 0, 0, 0), out.raw[:6]


def _bind_to_itself(ctx: Ctx) -> Any:
    q = queue(ctx)
    return tdt.bind_queue_routes(route_list(ctx, (q, q)))


case("bind_queue_routes", _bind, _bind_to_itself, code=INVALID_PARAM,  # a queue to itself
     valid_code=lambda r: r == (0, 1, (6, 0), b"routed"))


def _unbind(ctx: Ctx) -> Any:
    src, dst, lst = bound(ctx)
    forget(ctx, lst)  # the unbind, registered last
    return tdt.unbind_queue_routes(lst), route_at(lst, 0)[2]


case("unbind_queue_routes", _unbind,
     lambda ctx: tdt.unbind_queue_routes(route_list(ctx, (queue(ctx), queue(ctx)))),  # never bound
     code=INVALID_PARAM, valid_code=lambda r: r == (0, 0))


def _query(ctx: Ctx) -> Any:
    src, dst, _ = bound(ctx)
    found = route_list(ctx)
    ret = tdt.query_queue_routes(query(ctx, mode=MODE_SRC_AND_DST, src=src, dst=dst), found)
    return ret, tdt.get_queue_route_num(found), route_at(found, 0), (src, dst, 1)


case("query_queue_routes", _query,
     # the mode looks at the destination, which is not set
     lambda ctx: tdt.query_queue_routes(query(ctx, mode=MODE_DST), route_list(ctx)),
     code=INVALID_PARAM, valid_code=lambda r: r[:2] == (0, 1) and r[2] == r[3])
case("create_queue_route_query_info",
     lambda ctx: made(ctx, tdt.destroy_queue_route_query_info, tdt.create_queue_route_query_info()),
     lambda ctx: made(ctx, tdt.destroy_queue_route_query_info, in_thread(tdt.create_queue_route_query_info)),
     code=nonzero, valid_code=nonzero,  # no argument, any thread
     # nothing set: a query without its mode fails
     check=lambda r, ctx: expect_that(tdt.query_queue_routes(r, route_list(ctx)) == INVALID_PARAM, r))
case("destroy_queue_route_query_info",
     lambda ctx: tdt.destroy_queue_route_query_info(destroyed(query, lambda h: 0)(ctx)),
     lambda ctx: tdt.destroy_queue_route_query_info(destroyed(query, tdt.destroy_queue_route_query_info)(ctx)))


def _set_query(ctx: Ctx) -> Any:
    src, dst, _ = bound(ctx)
    info = query(ctx)
    mode, sid = ctypes.c_int32(MODE_SRC), u32(src)
    rets = (tdt.set_queue_route_query_info(info, QUERY_MODE, 4, ctypes.addressof(mode)),
            tdt.set_queue_route_query_info(info, QUERY_SRC_ID, 4, ctypes.addressof(sid)))
    found = route_list(ctx)
    return rets, tdt.query_queue_routes(info, found), tdt.get_queue_route_num(found)


case("set_queue_route_query_info", _set_query,
     # 8 bytes: more than the 4 a value has
     lambda ctx: tdt.set_queue_route_query_info(query(ctx), QUERY_MODE, 8, ctypes.addressof(keep(ctx, ctypes.c_uint64()))),
     code=INVALID_PARAM, valid_code=lambda r: r == ((0, 0), 0, 1))
