"""Every public member of the C++ engine classes has its Python counterpart.

The members are read from the repository's installed-style headers (include/adxl/adxl_engine.h,
include/hixl/hixl.h), so a member added there later without an entry in the mapping below (and
a Python method) fails this test. For each member the native functions it calls are read from
its definition in src/cxx/ (following the shared helpers of src/cxx/engine_face.h), and the
Python counterpart must call the same ones: its source (with that of the module functions it
delegates to) names each of them, and the loaded library exports them. Static members must be
static methods, and a C++ default value (``timeout_in_millis = 1000``) is the default of a
Python parameter as well. The status numbers, option keys and feature values of each module
are read from its types header too. docs/python.md shows the same table to readers (checked
here as well).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Callable, Dict, List, Set, Tuple

import pytest

from acl import _lib, adxl, hixl

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
CXX = ROOT / "src" / "cxx"

# C++ member (name and parameter names, as declared) -> the Python attribute of Engine.
ADXL_MEMBERS: Dict[str, str] = {
    "AdxlEngine()": "__init__",
    "~AdxlEngine()": "close",
    "Initialize(local_engine, options)": "initialize",
    "Finalize()": "finalize",
    "RegisterMem(mem, type, mem_handle)": "register",
    "DeregisterMem(mem_handle)": "deregister",
    "Connect(remote_engine, timeout_in_millis)": "connect",
    "Disconnect(remote_engine, timeout_in_millis)": "disconnect",
    "TransferSync(remote_engine, operation, op_descs, timeout_in_millis)": "transfer_sync",
    "TransferAsync(remote_engine, operation, op_descs, optional_args, req)": "transfer_async",
    "GetTransferStatus(req, status)": "get_transfer_status",
    "SendNotify(remote_engine, notify, timeout_in_millis)": "send_notify",
    "GetNotifies(notifies)": "get_notifies",
    "MallocMem(type, size, ptr)": "malloc_mem",
    "ExportToShareableHandle(addr, handle)": "export_to_shareable_handle",
    "FreeMem(ptr)": "free_mem",
    "GetCapability(feature_type, value)": "capability",
}

HIXL_MEMBERS: Dict[str, str] = {
    "Hixl()": "__init__",
    "~Hixl()": "close",
    "Initialize(local_engine, options)": "initialize",
    "Finalize()": "finalize",
    "RegisterMem(mem, type, mem_handle)": "register",
    "DeregisterMem(mem_handle)": "deregister",
    "Connect(remote_engine, timeout_in_millis)": "connect",
    "Disconnect(remote_engine, timeout_in_millis)": "disconnect",
    "ConnectAsync(remote_engine, timeout_in_millis)": "connect_async",
    "DisconnectAsync(remote_engine, timeout_in_millis)": "disconnect_async",
    "GetAsyncConnectStatus(remote_engine, status)": "async_connect_status",
    "GetAsyncConnectStatus(statuses)": "async_connect_statuses",
    "TransferSync(remote_engine, operation, op_descs, timeout_in_millis)": "transfer_sync",
    "TransferAsync(remote_engine, operation, op_descs, optional_args, req)": "transfer_async",
    "GetTransferStatus(req, status)": "get_transfer_status",
    "GetTransferStatus(args, results)": "get_transfer_statuses",
    "SendNotify(remote_engine, notify, timeout_in_millis)": "send_notify",
    "GetNotifies(notifies)": "get_notifies",
    "GetCapability(feature_type, value)": "capability",
}

# Static members whose module-level twin is the same function (acl.adxl.malloc_mem ...).
MODULE_TWINS = {
    adxl: ["malloc_mem", "free_mem", "export_to_shareable_handle", "get_capability"],
    hixl: ["get_capability"],
}

pytestmark = pytest.mark.skipif(
    not (INCLUDE / "adxl" / "adxl_engine.h").is_file() or not (CXX / "adxl_engine.cpp").is_file(),
    reason="needs the repository's include/ and src/cxx/ (run from a source tree)",
)


class Member:
    def __init__(self, name: str, params: List[Tuple[str, str, str]], static: bool) -> None:
        self.name = name
        self.params = params  # (type, name, default or "")
        self.static = static

    @property
    def key(self) -> str:
        """Name and parameter names: the key of the mappings above."""
        return "%s(%s)" % (self.name, ", ".join(p[1] for p in self.params))

    @property
    def signature(self) -> str:
        """Name and parameter types: what finds the member's definition (the definition may
        leave a parameter unnamed)."""
        return signature(self.name, self.params)


def signature(name: str, params: List[Tuple[str, str, str]]) -> str:
    return "%s(%s)" % (name, ",".join(re.sub(r"\s*([&*<>,])\s*", r"\1", p[0]) for p in params))


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_top(text: str, sep: str = ",") -> List[str]:
    """`text` split at `sep` outside <>, () and {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<({":
            depth += 1
        elif ch in ">)}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def parse_params(text: str) -> List[Tuple[str, str, str]]:
    """(type, name, default) of each parameter; an unnamed one (a definition's) has name ""."""
    out = []
    for part in split_top(text):
        decl, _, default = part.partition("=")
        decl = " ".join(decl.split())
        m = re.match(r"^(.*[\s&*>])([A-Za-z_]\w*)$", decl)
        if m and m.group(1).strip() not in ("", "const", "unsigned", "signed"):
            out.append((m.group(1).strip(), m.group(2), default.strip()))
        else:
            out.append((decl, "", default.strip()))
    return out


def public_members(header: Path, cls: str) -> List[Member]:
    """The public member functions of class `cls` declared in `header`."""
    text = strip_comments(header.read_text())
    m = re.search(r"class\s+(?:\w+\s+)?%s\s*\{(.*?)\n\};" % cls, text, flags=re.S)
    assert m, "no class %s in %s" % (cls, header)
    body = m.group(1)
    members, public = [], False
    # Split at access specifiers, keeping them.
    for chunk in re.split(r"\b(public|private|protected)\s*:", body):
        if chunk in ("public", "private", "protected"):
            public = chunk == "public"
            continue
        if not public:
            continue
        for stmt in split_top(chunk, ";"):
            stmt = " ".join(stmt.split())
            if not stmt or "(" not in stmt:
                continue
            d = re.match(r"^(static\s+)?(?:[\w:<>,\s\*&]+?\s+)?(~?\w+)\s*\((.*)\)\s*(?:const)?$", stmt)
            assert d, "cannot read the declaration %r in %s" % (stmt, header)
            members.append(Member(d.group(2), parse_params(d.group(3)), bool(d.group(1))))
    return members


def function_bodies(source: Path, prefix: str) -> Dict[str, str]:
    """Signature (as Member.signature) -> body, of every function defined in `source` whose
    name starts with `prefix` (e.g. "AdxlEngine::")."""
    text = strip_comments(source.read_text())
    out = {}
    pattern = re.compile(r"(?:^|\n)[^\n;{}]*?%s(~?\w+)\s*\(" % re.escape(prefix))
    for m in pattern.finditer(text):
        # The parameter list: up to the matching parenthesis.
        i, depth = m.end(), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params = text[m.end(): i - 1]
        brace = text.index("{", i)
        if ";" in text[i:brace]:
            continue  # a declaration or a "= default;" definition
        j, depth = brace + 1, 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out[signature(m.group(1), parse_params(params))] = text[brace:j]
    return out


def face_helpers() -> Dict[str, Set[str]]:
    """engine_face.h's helpers (by name) -> the native functions each calls."""
    text = strip_comments((CXX / "engine_face.h").read_text())
    out: Dict[str, Set[str]] = {}
    for m in re.finditer(r"(?<![\w~])(~?\w+)\s*\(([^;{)]*)\)\s*(?:const\s*)?\{", text):
        name = m.group(1)
        if name in ("if", "for", "while", "switch", "catch"):
            continue
        j, depth = m.end(), 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.setdefault(name, set()).update(re.findall(r"\b(ascendless_\w+)\s*\(", text[m.end():j]))
    return out


def natives_of(body: str, helpers: Dict[str, Set[str]]) -> Set[str]:
    found = set(re.findall(r"\b(ascendless_(?!face)\w+)\s*\(", body))
    for helper in re.findall(r"\bascendless_face::(\w+)", body):
        found |= helpers.get(helper, set())
    return found


def python_source(cls: type, attr: str, module: object) -> str:
    """The source of `cls.attr`, with that of the module functions it calls."""
    fn = inspect.getattr_static(cls, attr)
    fn = getattr(fn, "__func__", fn)
    src = inspect.getsource(fn)
    for name in set(re.findall(r"\b(\w+)\s*\(", src)):
        other = getattr(module, name, None) or getattr(adxl, name, None)
        if inspect.isfunction(other) and other is not fn:
            src += inspect.getsource(other)
    return src


CASES = [
    ("adxl", INCLUDE / "adxl" / "adxl_engine.h", "AdxlEngine", CXX / "adxl_engine.cpp", adxl, ADXL_MEMBERS),
    ("hixl", INCLUDE / "hixl" / "hixl.h", "Hixl", CXX / "hixl.cpp", hixl, HIXL_MEMBERS),
]


@pytest.mark.parametrize("face,header,cls,source,module,mapping", CASES, ids=[c[0] for c in CASES])
def test_every_cxx_member_has_a_python_counterpart(
    face: str, header: Path, cls: str, source: Path, module: object, mapping: Dict[str, str]
) -> None:
    members = public_members(header, cls)
    keys = [m.key for m in members]
    assert len(keys) == len(set(keys)), keys
    missing = [k for k in keys if k not in mapping]
    assert not missing, "%s::%s members without a Python counterpart in the mapping: %s" % (face, cls, missing)
    stale = [k for k in mapping if k not in keys]
    assert not stale, "mapping entries for members %s::%s no longer declares: %s" % (face, cls, stale)
    engine = getattr(module, "Engine")
    for m in members:
        attr = mapping[m.key]
        assert hasattr(engine, attr), "%s.Engine has no %s for %s::%s" % (face, attr, cls, m.key)
        is_static = isinstance(inspect.getattr_static(engine, attr), staticmethod)
        if m.name not in (cls, "~" + cls):
            assert is_static == m.static, "%s.Engine.%s: static %s, %s::%s static %s" % (
                face, attr, is_static, cls, m.name, m.static)
        defaults = {
            p.default for p in inspect.signature(getattr(engine, attr)).parameters.values()
            if p.default is not inspect.Parameter.empty
        }
        for _, pname, default in m.params:
            if default:
                assert int(default) in defaults, "%s.Engine.%s lacks the default %s of %s" % (
                    face, attr, default, pname)


@pytest.mark.parametrize("face,header,cls,source,module,mapping", CASES, ids=[c[0] for c in CASES])
def test_python_calls_the_native_functions_the_cxx_member_calls(
    face: str, header: Path, cls: str, source: Path, module: object, mapping: Dict[str, str]
) -> None:
    helpers = face_helpers()
    bodies = function_bodies(source, cls + "::")
    engine = getattr(module, "Engine")
    for m in public_members(header, cls):
        if m.name == cls:
            natives = helpers["EngineHandle"]  # the impl (an EngineHandle) makes the engine
        elif m.name == "~" + cls:
            natives = helpers["~EngineHandle"]  # "= default": the impl's destructor
        else:
            assert m.signature in bodies, "no definition of %s::%s in %s" % (cls, m.signature, source.name)
            natives = natives_of(bodies[m.signature], helpers)
        assert natives, "%s::%s calls no native function" % (cls, m.key)
        src = python_source(engine, mapping[m.key], module)
        for native in natives:
            assert re.search(r"\b%s\b" % native, src), "%s.Engine.%s does not call %s, which %s::%s calls" % (
                face, mapping[m.key], native, cls, m.key)
            assert hasattr(_lib.lib, native), "the library does not export %s" % native
            assert native in adxl._PROTOTYPES, "%s has no ctypes prototype" % native


def test_static_members_are_module_functions_too() -> None:
    for module, names in MODULE_TWINS.items():
        for name in names:
            assert inspect.isfunction(getattr(module, name)), (module.__name__, name)
            assert name in module.__all__, (module.__name__, name)
    assert hixl.get_capability is adxl.get_capability


def test_the_parser_sees_overloads_and_statics() -> None:
    members = {m.key: m for m in public_members(INCLUDE / "hixl" / "hixl.h", "Hixl")}
    assert "GetTransferStatus(req, status)" in members and "GetTransferStatus(args, results)" in members
    assert members["GetCapability(feature_type, value)"].static
    assert members["Connect(remote_engine, timeout_in_millis)"].params[1][2] == "1000"
    adxl_members = {m.key: m for m in public_members(INCLUDE / "adxl" / "adxl_engine.h", "AdxlEngine")}
    assert adxl_members["MallocMem(type, size, ptr)"].static
    assert not adxl_members["RegisterMem(mem, type, mem_handle)"].static
    bodies = function_bodies(CXX / "hixl.cpp", "Hixl::")
    helpers = face_helpers()
    statuses = members["GetAsyncConnectStatus(statuses)"].signature
    assert statuses == "GetAsyncConnectStatus(std::map<AscendString,AsyncConnectStatus>&)"
    assert natives_of(bodies[statuses], helpers) == {
        "ascendless_engine_get_async_connect_statuses", "ascendless_async_connect_statuses_free"}
    init = members["Initialize(local_engine, options)"].signature
    assert natives_of(bodies[init], helpers) == {"ascendless_engine_initialize"}
    assert helpers["EngineHandle"] == {"ascendless_engine_create"}
    assert helpers["~EngineHandle"] == {"ascendless_engine_destroy"}
    # A definition leaving a parameter unnamed (adxl_engine.cpp's TransferArgs) is still found.
    adxl_bodies = function_bodies(CXX / "adxl_engine.cpp", "AdxlEngine::")
    async_sig = adxl_members["TransferAsync(remote_engine, operation, op_descs, optional_args, req)"].signature
    assert natives_of(adxl_bodies[async_sig], helpers) == {"ascendless_engine_transfer_async"}


def test_docs_table_lists_every_member() -> None:
    doc = (ROOT / "docs" / "python.md").read_text()
    section = doc.split("## Engine classes and the C++ members", 1)
    assert len(section) == 2, "docs/python.md has no section 'Engine classes and the C++ members'"
    text = section[1]
    for face, header, cls, _, _, mapping in CASES:
        for m in public_members(header, cls):
            shown = "%s::%s" % (cls, m.name) if not m.name.startswith("~") else "~" + cls
            assert shown in text, "docs/python.md's table lacks %s" % shown
            attr = mapping[m.key]
            assert attr == "__init__" or re.search(r"`(?:\w+\.)*%s\b" % attr, text), (
                "docs/python.md's table lacks %s's counterpart %s" % (shown, attr))


@pytest.mark.parametrize("module,header", [(adxl, "adxl/adxl_types.h"), (hixl, "hixl/hixl_types.h")])
def test_status_numbers_option_keys_and_enums_are_the_headers(module: object, header: str) -> None:
    """Each face's constants as its types header declares them: every Status, every option key
    (by name and spelling), the FeatureType values and FEATURE_(NOT_)SUPPORTED."""
    text = strip_comments((INCLUDE / header).read_text())
    statuses = dict(re.findall(r"constexpr\s+Status\s+(\w+)\s*=\s*(\d+)U?\s*;", text))
    assert len(statuses) >= 9
    status = getattr(module, "Status")
    assert {k: int(v) for k, v in statuses.items()} == {s.name: int(s) for s in status}
    options = dict(re.findall(r"constexpr\s+const\s+char\s+(OPTION_\w+)\[\]\s*=\s*\"([^\"]*)\"", text))
    assert options
    for key, spelling in options.items():
        assert getattr(module, key) == spelling, (module, key)
    features = dict(re.findall(r"\b([A-Z_]+)\s*=\s*(\d+)\s*,", text.split("enum FeatureType", 1)[1].split("};")[0]))
    assert {k: int(v) for k, v in features.items()} == {f.name: int(f) for f in getattr(module, "FeatureType")}
    for name in ("FEATURE_SUPPORTED", "FEATURE_NOT_SUPPORTED"):
        value = re.search(r"constexpr\s+int32_t\s+%s\s*=\s*(\d+)\s*;" % name, text)
        assert value and getattr(module, name) == int(value.group(1))
