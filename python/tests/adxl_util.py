"""Helpers shared by the ADXL tests: free loopback ports and a line reader for child processes."""

from __future__ import annotations

import queue
import random
import socket
import subprocess
import threading
from typing import List

import pytest

TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range.

    ``bind(0)`` would hand out a port from that range, where every outgoing connection of the
    tests running alongside takes its local port: one could take it before the engine binds it
    ("Address already in use"). As tests/common/ports.rs does: 20000..32000, from a random start.
    """
    first, span = 20000, 12000
    start = random.randrange(span)
    for n in range(span):
        port = first + (start + n * 7) % span
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free loopback port in %d..%d" % (first, first + span))


class Child:
    """A child process spoken to in lines; no read blocks the test for more than TIMEOUT."""

    def __init__(self, argv: List[str], env: dict) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        self.lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def receive(self) -> List[str]:
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail("the child said nothing for %.0f s" % TIMEOUT)
        if not line:
            pytest.fail("the child ended early (exit code %s)" % self.proc.poll())
        words = line.split()
        assert words and words[0] != "error", line
        return words

    def send(self, *words: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()

    def finish(self) -> int:
        """Closes the child's input and waits for it to exit; its exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("the child did not exit")
            raise

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
