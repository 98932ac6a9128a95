"""How `import acl` finds the library: ASCENDLESS_LIBRARY, then ASCEND_TOOLKIT_HOME, then the
toolkit the package is installed in, then the package's own copy, then the loader path; an
ImportError listing every place when none."""

from __future__ import annotations

import ctypes.util
import os
import subprocess

import pytest

import acl

from conftest import PYTHON

PROBE = "import acl; print(acl.library_path); print(acl.init()); print(acl.finalize())"


def run(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)


def base_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ASCENDLESS_LIBRARY", "ASCEND_TOOLKIT_HOME")}
    env["LD_LIBRARY_PATH"] = ""
    env["ASCEND_GLOBAL_LOG_LEVEL"] = "4"
    return env


def test_explicit_library() -> None:
    env = base_env()
    env["ASCENDLESS_LIBRARY"] = acl.library_path
    out = run(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [acl.library_path, "0", "0"]


def test_toolkit_home(tmp_path) -> None:
    lib64 = tmp_path / "lib64"
    lib64.mkdir()
    (lib64 / "libascendcl.so").symlink_to(os.path.realpath(acl.library_path))
    env = base_env()
    env["ASCEND_TOOLKIT_HOME"] = str(tmp_path)
    out = run(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(lib64 / "libascendcl.so")


def test_loader_path(tmp_path) -> None:
    (tmp_path / "libascendcl.so").symlink_to(os.path.realpath(acl.library_path))
    env = base_env()
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    out = run(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "libascendcl.so"


def test_explicit_library_that_does_not_load_fails_at_once(tmp_path) -> None:
    env = base_env()
    env["ASCENDLESS_LIBRARY"] = str(tmp_path / "missing.so")
    out = run(env)
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "ASCENDLESS_LIBRARY" in out.stderr
    assert str(tmp_path / "missing.so") in out.stderr


@pytest.mark.skipif(ctypes.util.find_library("ascendcl") is not None, reason="a libascendcl.so is installed system-wide")
def test_nothing_found_lists_every_place(tmp_path) -> None:
    env = base_env()
    env["ASCEND_TOOLKIT_HOME"] = str(tmp_path / "no-toolkit")
    out = run(env)
    assert out.returncode != 0
    err = out.stderr
    assert "ImportError" in err
    assert "ASCENDLESS_LIBRARY: not set" in err
    assert str(tmp_path / "no-toolkit" / "lib64" / "libascendcl.so") in err
    assert "the package's own copy" in err
    assert "the dynamic loader's search path" in err


def test_finalize_twice_in_a_fresh_process() -> None:
    env = base_env()
    env["ASCENDLESS_LIBRARY"] = acl.library_path
    code = "import acl; print(acl.finalize(), acl.init(), acl.init(), acl.finalize(), acl.finalize())"
    out = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["100001", "0", "100002", "0", "100037"]


def test_package_copy(tmp_path) -> None:
    # A copy of the installed package with a library inside it, as a wheel that bundles one.
    import shutil

    package = os.path.dirname(os.path.abspath(acl.__file__))
    copy = tmp_path / "acl"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "lib").mkdir(exist_ok=True)
    (copy / "lib" / "libascendcl.so").symlink_to(os.path.realpath(acl.library_path))
    env = base_env()
    env["PYTHONPATH"] = str(tmp_path)
    out = run(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(copy / "lib" / "libascendcl.so")


def test_toolkit_the_package_is_installed_in(tmp_path) -> None:
    # The package where `make install` puts it, <prefix>/python/site-packages/acl, found through a
    # PYTHONPATH set by hand (no ASCEND_TOOLKIT_HOME): it loads <prefix>/lib64/libascendcl.so.
    import shutil

    package = os.path.dirname(os.path.abspath(acl.__file__))
    site = tmp_path / "python" / "site-packages"
    shutil.copytree(package, site / "acl", ignore=shutil.ignore_patterns("__pycache__", "lib"))
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libascendcl.so").symlink_to(os.path.realpath(acl.library_path))
    env = base_env()
    env["PYTHONPATH"] = str(site)
    out = run(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path / "lib64" / "libascendcl.so"), "0", "0"]
