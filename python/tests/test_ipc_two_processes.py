"""The vendor's IPC flow between two Python processes: this process is A (the owner), a child
Python process running ipc_peer.py is B. A creates a notify and device memory and exports both,
learns B's pid (B sends what acl.rt.device_get_bare_tgid gave it), whitelists it, sends the keys;
B imports both, writes into the shared memory with memcpy_async and records the notify; A waits
on its stream, synchronises and checks the bytes."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from typing import Iterator, List

import pytest

import acl
from acl import constants as c

from conftest import PYTHON, child_env

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ipc_peer.py")
SIZE = 1 << 20
DEVICE = 2
TIMEOUT = 30.0


class Peer:
    """Process B, with a line reader that never blocks the test for more than TIMEOUT."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, PEER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
            text=True,
        )
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def receive(self) -> List[str]:
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail("process B said nothing for %.0f s" % TIMEOUT)
        if not line:
            pytest.fail("process B ended early (exit code %s)" % self.proc.poll())
        words = line.split()
        assert words[0] != "error", line
        return words

    def send(self, *words: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()

    def finish(self) -> int:
        return self.proc.wait(timeout=TIMEOUT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)


@pytest.fixture
def owner_device() -> Iterator[int]:
    assert acl.rt.set_device(DEVICE) == 0
    yield DEVICE
    assert acl.rt.reset_device(DEVICE) == 0


def expected_bytes(size: int) -> bytes:
    period = bytes((i * 13 + 5) & 0xFF for i in range(256))
    return period * (size // 256)


@pytest.mark.parametrize("validate", [True, False], ids=["pid-validation", "no-pid-validation"])
def test_notify_and_ipc_memory_handshake(owner_device: int, validate: bool) -> None:
    rt = acl.rt
    stream, ret = rt.create_stream()
    assert ret == 0
    notify, ret = rt.create_notify(c.ACL_NOTIFY_DEFAULT)
    assert ret == 0
    dev, ret = rt.malloc(SIZE, c.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert rt.memset(dev, SIZE, 0, SIZE) == 0
    host, ret = rt.malloc_host(SIZE)
    assert ret == 0

    notify_flags = 0 if validate else c.ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION
    mem_flags = 0 if validate else c.ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION
    notify_key, ret = rt.notify_get_export_key(notify, 65, notify_flags)
    assert ret == 0 and notify_key
    mem_key, ret = rt.ipc_mem_get_export_key(dev, SIZE, 65, mem_flags)
    assert ret == 0 and mem_key

    peer = Peer()
    try:
        words = peer.receive()
        assert words[0] == "pid"
        peer_pid = int(words[1])
        assert peer_pid == peer.proc.pid
        if validate:
            assert rt.notify_set_import_pid(notify, [peer_pid]) == 0
            assert rt.ipc_mem_set_import_pid(mem_key, [peer_pid]) == 0
        peer.send("keys", notify_key, mem_key, SIZE)

        # Wait for B's record on our stream, then read what B wrote (queued behind the wait).
        assert rt.wait_and_reset_notify(notify, stream, int(TIMEOUT)) == 0
        assert rt.memcpy_async(host, SIZE, dev, SIZE, c.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
        assert rt.synchronize_stream(stream) == 0
        assert acl.util.ptr_to_bytes(host, SIZE) == expected_bytes(SIZE)
        assert peer.receive() == ["written"]

        peer.send("done")
        assert peer.receive() == ["closed"]  # importers close first, the vendor's rule
        assert peer.finish() == 0
    finally:
        peer.kill()
        rt.free_host(host)
        rt.ipc_mem_close(mem_key)
        rt.free(dev)
        rt.destroy_notify(notify)
        rt.destroy_stream(stream)


def test_import_refused_without_whitelist(owner_device: int) -> None:
    rt = acl.rt
    notify, ret = rt.create_notify(0)
    assert ret == 0
    notify_key, ret = rt.notify_get_export_key(notify, 65, c.ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT)
    assert ret == 0
    peer = Peer("--expect-refused")
    try:
        assert peer.receive()[0] == "pid"
        peer.send("keys", notify_key, "unused", SIZE)  # B's pid was never whitelisted
        assert peer.receive() == ["import", str(c.ACL_ERROR_RT_NO_PERMISSION)]
        assert peer.finish() == 0
    finally:
        peer.kill()
        assert rt.destroy_notify(notify) == 0


@pytest.mark.parametrize("args", [[], ["--no-pid-validation"]], ids=["pid-validation", "no-pid-validation"])
def test_standalone_vendor_style_scripts(args: List[str]) -> None:
    """ipc_owner.py and ipc_peer.py use nothing but the vendor's `acl` API: they run as is."""
    owner = os.path.join(os.path.dirname(PEER), "ipc_owner.py")
    out = subprocess.run([PYTHON, owner, *args], env=child_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all correct" in out.stdout
