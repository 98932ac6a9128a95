"""IPC events and value waits/writes between two Python processes: this process is A, a child
Python process running ipc_event_peer.py is B (its protocol is there). A shares a 64-bit word
of device memory with B (ipc_mem_get_export_key, ipc_mem_set_import_pid with B's pid,
ipc_mem_import_by_key in B); the word holds streams with value_wait until the other process's
value_write, which is how each side keeps an event record pending for the other to see.

* A creates an IPC event and sends its handle (bytes, as hex); B opens it. A's pending record
  holds B's wait; then B's pending record holds A's wait, both released by a value write.
* B creates and shares the event, A opens it: the same both ways; A's open fails once B's
  destroy withdrew the handle; an event whose creator is killed ends A's waits with 507022.
* Value waits of each comparison in one process are released by the other process's write.
"""

from __future__ import annotations

import ctypes
import os
import queue
import subprocess
import threading
import time
from typing import Callable, Iterator, List, Tuple

import pytest

import acl

from conftest import PYTHON, child_env

rt = acl.rt

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ipc_event_peer.py")
DEVICE_A = 0
DEVICE_B = 1
TIMEOUT = 30.0
SIZE = 4096  # the shared memory: its first 64-bit word is the one waited on

ACL_EVENT_IPC = 0x40
ACL_STREAM_WAIT_VALUE_GEQ = 0
ACL_STREAM_WAIT_VALUE_EQ = 1
ACL_STREAM_WAIT_VALUE_AND = 2
ACL_STREAM_WAIT_VALUE_NOR = 3
ACL_EVENT_RECORDED_STATUS_NOT_READY = 0
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
ACL_ERROR_RT_IPC_ERROR = 507022
ACL_MEMCPY_DEVICE_TO_HOST = 2


class Peer:
    """Process B, spoken to in lines; no wait on it lasts more than TIMEOUT."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, PEER, str(DEVICE_B)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
            text=True,
        )
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        words = self.receive()
        assert words[0] == "pid", words
        self.pid = int(words[1])

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def receive(self, timeout: float = TIMEOUT) -> List[str]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail("process B said nothing for %.0f s" % timeout)
        if not line:
            pytest.fail("process B ended early (exit code %s)" % self.proc.poll())
        words = line.split()
        assert words[0] != "error", line
        return words

    def silent_for(self, seconds: float) -> bool:
        """Whether B says nothing for `seconds` (its reply is still pending)."""
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        self.lines.put(line)  # not expected: left for receive() to report
        return False

    def send(self, *words: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()

    def call(self, *words: object) -> List[str]:
        """Sends a command and returns B's answer: ``[ret, ...]``."""
        self.send(*words)
        return self.receive()

    def code(self, *words: object) -> int:
        return int(self.call(*words)[0])

    def finish(self) -> None:
        self.send("exit")
        assert self.proc.wait(timeout=TIMEOUT) == 0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)


class Background:
    """A call made on another thread (with A's device set there), to see whether it blocks."""

    def __init__(self, fn: Callable[[], int]) -> None:
        self.result: "queue.Queue[int]" = queue.Queue()

        def run() -> None:
            assert rt.set_device(DEVICE_A) == 0
            try:
                self.result.put(fn())
            finally:
                rt.reset_device(DEVICE_A)

        threading.Thread(target=run, daemon=True).start()

    def pending_for(self, seconds: float) -> bool:
        try:
            value = self.result.get(timeout=seconds)
        except queue.Empty:
            return True
        self.result.put(value)
        return False

    def get(self, timeout: float = 5.0) -> int:
        return self.result.get(timeout=timeout)


@pytest.fixture
def device_a() -> Iterator[int]:
    assert rt.set_device(DEVICE_A) == 0
    yield DEVICE_A
    assert rt.reset_device(DEVICE_A) == 0


@pytest.fixture
def streams(device_a: int) -> Iterator[Tuple[int, int]]:
    made = []
    for _ in range(2):
        s, ret = rt.create_stream()
        assert ret == 0
        made.append(s)
    yield made[0], made[1]
    for s in made:
        assert rt.destroy_stream(s) == 0


@pytest.fixture
def shared(device_a: int) -> Iterator[Tuple[int, str, Peer]]:
    """A's device word shared with a new process B (whitelisted by pid), and B."""
    dev, ret = rt.malloc(SIZE, 0)
    assert ret == 0
    assert rt.memset(dev, SIZE, 0, SIZE) == 0
    key, ret = rt.ipc_mem_get_export_key(dev, SIZE, 65, 0)  # pid validation on
    assert ret == 0 and key
    peer = Peer()
    try:
        assert rt.ipc_mem_set_import_pid(key, [peer.pid]) == 0
        assert peer.code("import_mem", key) == 0
        yield dev, key, peer
        assert peer.code("close_mem") == 0  # importers close first, the vendor's rule
        peer.finish()
    finally:
        peer.kill()
        rt.ipc_mem_close(key)
        rt.free(dev)


def word(dev: int) -> int:
    cell = ctypes.c_uint64(0)
    assert rt.memcpy(ctypes.addressof(cell), 8, dev, 8, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return cell.value


def ipc_event() -> Tuple[int, bytes]:
    event, ret = rt.create_event_ex_with_flag(ACL_EVENT_IPC)
    assert ret == 0
    handle, ret = rt.ipc_get_event_handle(event)
    assert ret == 0 and len(handle) == 64
    return event, handle


def status(event: int) -> int:
    value, ret = rt.query_event_status(event)
    assert ret == 0
    return value


def test_the_creators_record_releases_the_openers_wait_and_back(
    shared: Tuple[int, str, Peer], streams: Tuple[int, int]
) -> None:
    dev, _, peer = shared
    held, other = streams
    event, handle = ipc_event()
    try:
        assert peer.code("open_event", handle.hex()) == 0
        assert peer.call("status") == ["0", str(ACL_EVENT_RECORDED_STATUS_COMPLETE)], "never recorded: complete"

        # A -> B: A's record waits behind the word; B's stream waits for the record.
        assert rt.value_wait(dev, 1, ACL_STREAM_WAIT_VALUE_EQ, held) == 0
        assert rt.record_event(event, held) == 0
        assert peer.call("status") == ["0", str(ACL_EVENT_RECORDED_STATUS_NOT_READY)], "B sees A's pending record"
        peer.send("wait")
        assert peer.silent_for(0.2), "B's stream waits for A's record"
        assert rt.value_write(dev, 1, 0, other) == 0
        assert peer.receive() == ["0"], "released by A's record"
        assert rt.synchronize_stream(held) == 0
        assert rt.synchronize_stream(other) == 0
        assert peer.code("sync_event") == 0

        # B -> A: B's record waits behind the shared word (B's view of it); A's stream waits.
        assert peer.code("block_then_record", 2) == 0
        assert status(event) == ACL_EVENT_RECORDED_STATUS_NOT_READY, "A sees B's pending record"
        assert rt.stream_wait_event(held, event) == 0
        sync = Background(lambda: rt.synchronize_stream_with_timeout(held, int(TIMEOUT * 1000)))
        assert sync.pending_for(0.2), "A's stream waits for B's record"
        assert rt.value_write(dev, 2, 0, other) == 0  # A writes the word B's stream waits on
        assert sync.get() == 0
        assert rt.synchronize_event(event) == 0
        assert status(event) == ACL_EVENT_RECORDED_STATUS_COMPLETE
        assert peer.code("sync_event") == 0
        assert peer.call("status") == ["0", str(ACL_EVENT_RECORDED_STATUS_COMPLETE)]
        assert peer.code("destroy_event") == 0
    finally:
        rt.value_write(dev, 0xFFFF, 0, other)  # nothing left waiting on the word
        rt.synchronize_stream(other)
        assert rt.destroy_event(event) == 0


def test_the_opener_sees_the_handle_withdrawn_by_the_creators_destroy(
    shared: Tuple[int, str, Peer], streams: Tuple[int, int]
) -> None:
    dev, _, peer = shared
    held, other = streams
    words = peer.call("export_event")
    assert words[0] == "0"
    handle = bytes.fromhex(words[1])
    event, ret = rt.ipc_open_event_handle(handle)
    assert ret == 0 and event != 0
    try:
        # The creator (B) records behind the word; the opener (A) synchronises on the event.
        assert peer.code("block_then_record", 3) == 0
        sync = Background(lambda: rt.synchronize_event_with_timeout(event, int(TIMEOUT * 1000)))
        assert sync.pending_for(0.2), "A waits for B's record"
        assert rt.value_write(dev, 3, 0, other) == 0
        assert sync.get() == 0
        # The opener's record reaches the creator.
        assert rt.record_event(event, held) == 0
        assert rt.synchronize_stream(held) == 0
        assert peer.code("wait") == 0
        assert peer.code("destroy_event") == 0
        assert rt.ipc_open_event_handle(handle) == (0, 107000), "withdrawn"
        assert rt.record_event(event, held) == 0, "the open event keeps working"
        assert rt.synchronize_event(event) == 0
    finally:
        assert rt.destroy_event(event) == 0
        acl.get_recent_err_msg()


def test_a_killed_creator_ends_the_openers_waits_quickly(device_a: int, streams: Tuple[int, int]) -> None:
    held, _ = streams
    dev, ret = rt.malloc(SIZE, 0)
    assert ret == 0
    assert rt.memset(dev, SIZE, 0, SIZE) == 0
    key, ret = rt.ipc_mem_get_export_key(dev, SIZE, 65, 0)
    assert ret == 0
    peer = Peer()
    event = 0
    try:
        assert rt.ipc_mem_set_import_pid(key, [peer.pid]) == 0
        assert peer.code("import_mem", key) == 0
        words = peer.call("export_event")
        assert words[0] == "0"
        event, ret = rt.ipc_open_event_handle(bytes.fromhex(words[1]))
        assert ret == 0
        assert peer.code("block_then_record", 1) == 0  # a record that stays pending
        assert rt.stream_wait_event(held, event) == 0
        sync = Background(lambda: rt.synchronize_stream_with_timeout(held, int(TIMEOUT * 1000)))
        assert sync.pending_for(0.3), "the wait blocks while the creator lives"
        peer.kill()
        killed = time.monotonic()
        assert sync.get(timeout=10) == ACL_ERROR_RT_IPC_ERROR
        assert time.monotonic() - killed < 5, "promptly"
        assert rt.synchronize_event_with_timeout(event, 5000) == ACL_ERROR_RT_IPC_ERROR
    finally:
        peer.kill()
        if event:
            assert rt.destroy_event(event) == 0
        rt.ipc_mem_close(key)
        rt.free(dev)
        acl.get_recent_err_msg()


@pytest.mark.parametrize(
    "flag, value, release, not_yet",
    [
        (ACL_STREAM_WAIT_VALUE_GEQ, 10, 12, 9),
        (ACL_STREAM_WAIT_VALUE_EQ, 42, 42, 41),
        (ACL_STREAM_WAIT_VALUE_AND, 0b100, 0b110, 0b011),
        (ACL_STREAM_WAIT_VALUE_NOR, 0b1, 0b10, (1 << 64) - 1),
    ],
    ids=["geq", "eq", "and", "nor"],
)
def test_a_value_wait_is_released_by_the_other_processs_write(
    shared: Tuple[int, str, Peer], streams: Tuple[int, int], flag: int, value: int, release: int, not_yet: int
) -> None:
    dev, _, peer = shared
    held, _ = streams
    assert peer.code("value_write", not_yet) == 0
    assert word(dev) == not_yet, "B's write is in A's memory"
    assert rt.value_wait(dev, value, flag, held) == 0
    sync = Background(lambda: rt.synchronize_stream_with_timeout(held, int(TIMEOUT * 1000)))
    assert sync.pending_for(0.2), "not released by %#x" % not_yet
    written = time.monotonic()
    assert peer.code("value_write", release) == 0
    assert sync.get() == 0
    assert time.monotonic() - written < 2


def test_the_other_processs_value_wait_is_released_by_this_ones_write(
    shared: Tuple[int, str, Peer], streams: Tuple[int, int]
) -> None:
    dev, _, peer = shared
    _, other = streams
    peer.send("value_wait", 7, ACL_STREAM_WAIT_VALUE_EQ)
    assert peer.silent_for(0.2), "B's stream waits on the word"
    assert rt.value_write(dev, 6, 0, other) == 0
    assert rt.synchronize_stream(other) == 0
    assert peer.silent_for(0.2), "not released by 6"
    assert rt.value_write(dev, 7, 0, other) == 0
    assert rt.synchronize_stream(other) == 0
    assert peer.receive() == ["0"]
    assert word(dev) == 7
