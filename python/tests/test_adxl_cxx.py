"""The Python engine against a C++ program on adxl::AdxlEngine (tests/c/adxl_peer.cpp), compiled
here with the repository's include/ and the library under test, in both directions: Python
reads and writes the C++ server's buffer, and a C++ client reads and writes a numpy array
served by Python."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import acl
from acl import adxl

from adxl_util import TIMEOUT, Child, free_port
from conftest import child_env

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "c" / "adxl_peer.cpp"
SIZE = 4 << 20


def salted(size: int, salt: int) -> "np.ndarray":
    return ((np.arange(size, dtype=np.uint64) * 7 + salt) & 0xFF).astype(np.uint8)


@pytest.fixture(scope="module")
def cxx_peer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("CXX")
    if wanted:
        cxx = shutil.which(wanted)
        if not cxx:
            pytest.skip("CXX=%s is not an executable: the Python-to-C++ ADXL test needs a C++ compiler" % wanted)
    else:
        cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
        if not cxx:
            pytest.skip("no C++ compiler (c++, g++ or clang++ on PATH, or CXX): the Python-to-C++ ADXL test needs one")
    if not SOURCE.exists() or not (ROOT / "include" / "adxl" / "adxl_engine.h").exists():
        pytest.skip("the repository's tests/c/adxl_peer.cpp and include/ are needed (run from a checkout)")
    library = Path(acl.library_path).resolve()
    if not library.exists():
        pytest.skip("the library was found through the loader path; set ASCENDLESS_LIBRARY to build against it")
    out = tmp_path_factory.mktemp("cxx")
    # Link against the library file under test; at run time find it (by its soname) next to it.
    libdir = out / "lib"
    libdir.mkdir()
    soname = subprocess.run(
        ["sh", "-c", "objdump -p '%s' 2>/dev/null | awk '/SONAME/ {print $2}'" % library],
        capture_output=True, text=True,
    ).stdout.strip() or library.name
    (libdir / soname).symlink_to(library)
    exe = out / "adxl_peer"
    build = subprocess.run(
        [cxx, "-std=c++11", "-O1", "-Wall", "-I", str(ROOT / "include"), str(SOURCE), "-o", str(exe), str(library),
         "-Wl,-rpath," + str(libdir)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    return exe


def test_python_reads_and_writes_a_cxx_server(cxx_peer: Path) -> None:
    name = "127.0.0.1:%d" % free_port()
    server = Child([str(cxx_peer), "server", name, str(SIZE)], child_env())
    try:
        words = server.receive()
        assert words[0] == "ready", words
        remote = int(words[1])
        local = np.zeros(SIZE, dtype=np.uint8)
        with adxl.Engine("127.0.0.1") as client:
            client.register(local)
            client.connect(name, timeout_ms=5000)
            client.read(name, local, remote, timeout_ms=10000)
            assert np.array_equal(local, salted(SIZE, 1))
            local[:] = salted(SIZE, 2)
            client.write(name, local, remote, timeout_ms=10000)
            server.send("check", 2)
            assert server.receive() == ["ok"]
            client.disconnect(name)
        assert server.finish() == 0
    finally:
        server.kill()


def test_cxx_client_reads_and_writes_a_python_server(cxx_peer: Path) -> None:
    name = "127.0.0.1:%d" % free_port()
    data = salted(SIZE, 1)
    with adxl.Engine(name) as server:
        handle = server.register(data)
        result = subprocess.run(
            [str(cxx_peer), "client", "127.0.0.1", name, str(handle.addr), str(SIZE)],
            capture_output=True, text=True, env=child_env(), timeout=TIMEOUT,
        )
        assert result.returncode == 0 and result.stdout.split() == ["ok"], result.stdout + result.stderr
        assert np.array_equal(data, salted(SIZE, 2))
