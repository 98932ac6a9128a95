"""Call cases (pyacl_cases.py) of the devices family, for test_every_function.py: devices,
contexts, device queries, limits, overflow, system parameters, time-outs, exception-info getters
and the top-level ``acl.*`` functions of acl.h / acl_base.h.

Process-wide settings a case changes are put back in ``ctx.cleanup``. ``init``, ``finalize`` and
``finalize_reference``'s bad call run in a child process (finalising this one would end the
session's AscendCL). A function that cannot be called wrongly (no argument, or every value
accepted) has as its bad call the documented edge, checked by a predicate.
"""

from __future__ import annotations

import ast
import ctypes
import os
import subprocess
import sys
import threading
from typing import Any, Callable, Dict, List

import acl
from pyacl_cases import BAD_HANDLE, Case, Ctx

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_INVALID_HANDLE = 107017
ACL_ERROR_RT_SYS_PARAM_NOT_SET = 107021
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000

NO_DEVICE = 9999
ACL_REG_TYPE_OTHER = 65535
ACL_HOST = 1
ACL_RT_THREAD_LEVEL = 0
ACL_DEV_ATTR_AICORE_CORE_NUM = 101
ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21
ACL_DEVICE_INFO_AI_CORE_NUM = 0
ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2
ACL_RT_DEV_RES_CUBE_CORE = 0
ACL_OPT_DETERMINISTIC = 0
ACL_CANN_ATTR_INF_NAN = 0
ACL_RT_NO_ERROR = 0
ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0
ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10
ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30
ACL_MEMCPY_DEVICE_TO_HOST = 2
U32_MAX = 0xFFFFFFFF

rt = acl.rt


def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` on a new thread, which has no current device or context."""
    out: List[Any] = []
    t = threading.Thread(target=lambda: out.append(fn(*args)))
    t.start()
    t.join()
    return out[0]


def in_child(code: str) -> Any:
    """Runs `code` (which sets ``result``) in a fresh Python process with ``acl`` imported and
    returns ``result``: for what cannot run here, finalising AscendCL above all."""
    script = "import acl\n%s\nprint(repr(result))\n" % code
    env = dict(os.environ)
    env.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def restore(ctx: Ctx, fn: Callable[[], Any]) -> None:
    ctx.cleanup.append((lambda _: fn(), None))


def new_context(ctx: Ctx) -> int:
    """A context of device 0, made current; the previous one is current again after the case."""
    prev, ret = rt.get_context()
    assert ret == 0
    c, ret = rt.create_context(ctx.device)
    assert ret == 0 and c != 0
    ctx.cleanup.append((rt.destroy_context, c))
    restore(ctx, lambda: rt.set_context(prev))
    return c


# ---- exception information: the getters only answer inside an exception callback ----------

_failure: Dict[str, Any] = {}


def failure_seen_by_getters(ctx: Ctx) -> Dict[str, Any]:
    """Fails one stream task (an event wait timing out after 20 ms) with an exception callback
    registered that calls every ``get_*_from_exception_info`` on the info it is given; the
    values each returned, by name (computed once per test process)."""
    if _failure:
        return _failure
    getters = ("task_id", "stream_id", "thread_id", "device_id", "error_code")

    def seen(info: int) -> None:
        for g in getters:
            _failure[g] = getattr(rt, "get_%s_from_exception_info" % g)(info)

    assert rt.exception_info_callback_register(seen) == 0
    try:
        blocked, _ = rt.create_stream()
        failing, _ = rt.create_stream()
        event, _ = rt.create_event()
        notify, _ = rt.create_notify(0)
        assert rt.wait_and_reset_notify(notify, blocked, 0) == 0
        assert rt.record_event(event, blocked) == 0
        assert rt.stream_wait_event_with_timeout(failing, event, 20) == 0
        _failure["sync"] = rt.synchronize_stream(failing)
        _failure["stream"], _ = rt.stream_get_id(failing)
        assert rt.record_notify(notify, failing) == 0
        assert rt.synchronize_stream(blocked) == 0
        for release, h in ((rt.destroy_event, event), (rt.destroy_notify, notify),
                           (rt.destroy_stream, failing), (rt.destroy_stream, blocked)):
            assert release(h) == 0
    finally:
        assert rt.exception_info_callback_unregister(seen) == 0
    assert _failure["sync"] == 107019
    return _failure


def getter_case(name: str, check: Callable[[Any, Dict[str, Any]], bool]) -> Case:
    def valid(ctx: Ctx) -> Any:
        return failure_seen_by_getters(ctx)[name]

    return Case(
        "rt.get_%s_from_exception_info" % name,
        valid,
        lambda ctx: getattr(rt, "get_%s_from_exception_info" % name)(0),
        code=lambda r: r == U32_MAX,  # NULL info: 0xFFFFFFFF
        valid_code=lambda r: isinstance(r, int) and r != U32_MAX,
        check=lambda r, ctx: expect_that(check(r, _failure), (name, r, _failure)),
    )


# ---- cases with some set-up ------------------------------------------------------------------


def set_device_valid(ctx: Ctx) -> Any:
    ret = rt.set_device(ctx.device)
    if ret == 0:
        ctx.cleanup.append((rt.reset_device, ctx.device))
    return ret


def reset_device_valid(ctx: Ctx) -> Any:
    assert rt.set_device(ctx.device) == 0
    return rt.reset_device(ctx.device)


def reset_device_force_valid(ctx: Ctx) -> Any:
    assert rt.set_device(1) == 0
    assert rt.set_device(1) == 0
    ret = rt.reset_device_force(1)
    assert rt.set_device(ctx.device) == 0  # device 1 was current: device 0 again
    ctx.cleanup.append((rt.reset_device, ctx.device))
    return ret


def enable_peer_valid(ctx: Ctx) -> Any:
    ret = rt.device_enable_peer_access(1, 0)
    ctx.cleanup.append((rt.device_disable_peer_access, 1))
    return ret


def disable_peer_valid(ctx: Ctx) -> Any:
    assert rt.device_enable_peer_access(1, 0) == 0
    return rt.device_disable_peer_access(1)


def create_context_valid(ctx: Ctx) -> Any:
    prev, _ = rt.get_context()
    c, ret = rt.create_context(ctx.device)
    if ret == 0:
        ctx.cleanup.append((rt.destroy_context, c))
        restore(ctx, lambda: rt.set_context(prev))
    return c, ret


def destroy_context_valid(ctx: Ctx) -> Any:
    prev, _ = rt.get_context()
    c, ret = rt.create_context(ctx.device)
    assert ret == 0
    ret = rt.destroy_context(c)
    restore(ctx, lambda: rt.set_context(prev))
    return ret


def saved(ctx: Ctx, getter: Callable[[], Any], setter: Callable[[Any], Any]) -> None:
    value, ret = getter()
    assert ret == 0
    restore(ctx, lambda: setter(value))


def limit_valid(ctx: Ctx) -> Any:
    saved(ctx, lambda: rt.device_get_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE),
          lambda v: rt.device_set_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, v))
    return rt.device_set_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 65536)


def res_limit_valid(ctx: Ctx) -> Any:
    ctx.cleanup.append((rt.reset_device_res_limit, ctx.device))
    return rt.set_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE, 4)


def reset_res_limit_valid(ctx: Ctx) -> Any:
    assert rt.set_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE, 4) == 0
    return rt.reset_device_res_limit(ctx.device)


def sys_param_valid(ctx: Ctx) -> Any:
    saved(ctx, lambda: rt.get_sys_param_opt(ACL_OPT_DETERMINISTIC), lambda v: rt.set_sys_param_opt(ACL_OPT_DETERMINISTIC, v))
    return rt.set_sys_param_opt(ACL_OPT_DETERMINISTIC, 1)


def ctx_sys_param_set_valid(ctx: Ctx) -> Any:
    new_context(ctx)
    return rt.ctx_set_sys_param_opt(ACL_OPT_DETERMINISTIC, 1)


def ctx_sys_param_get_valid(ctx: Ctx) -> Any:
    new_context(ctx)
    assert rt.ctx_set_sys_param_opt(ACL_OPT_DETERMINISTIC, 1) == 0
    return rt.ctx_get_sys_param_opt(ACL_OPT_DETERMINISTIC)


def ctx_sys_param_never_set(ctx: Ctx) -> Any:
    new_context(ctx)  # a fresh context: never set
    return rt.ctx_get_sys_param_opt(ACL_OPT_DETERMINISTIC)


def keep_timeout(ctx: Ctx) -> None:
    saved(ctx, rt.get_op_execute_timeout, rt.set_op_execute_time_out_with_ms)


def step_ms() -> float:
    return rt.get_op_time_out_interval()[0] / 1000.0


def timeout_case(name: str, value: int, huge: int, ms: float) -> Case:
    """An operator time-out setter: `value` (`ms` milliseconds) is taken, rounded up to the
    product's step; `huge` is capped at the longest, 254 steps, without an error."""
    def call(ctx: Ctx, v: int) -> Any:
        keep_timeout(ctx)
        return getattr(rt, name)(v)

    def ret(r: Any) -> Any:
        return r[-1] if isinstance(r, tuple) else r

    def capped(r: Any) -> bool:
        result, (now, got) = r
        return ret(result) == 0 and got == 0 and abs(now - 254 * step_ms()) <= 1

    def rounded(r: Any, ctx: Ctx) -> None:
        now, _ = rt.get_op_execute_timeout()
        expect_that(ms <= now <= ms + step_ms() + 1, (r, now))

    return Case(
        "rt." + name,
        lambda ctx: call(ctx, value),
        lambda ctx: (call(ctx, huge), rt.get_op_execute_timeout()),
        code=capped,
        valid_code=lambda r: ret(r) == 0,
        check=rounded,
    )


def sat_mode_valid(ctx: Ctx) -> Any:
    saved(ctx, rt.get_device_sat_mode, rt.set_device_sat_mode)
    return rt.set_device_sat_mode(0)


def overflow_status_valid(fn: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
    """The status call writes zeros into a buffer first filled with 0xFF; returns (ret, the
    64 bytes read back after the stream ran)."""
    def valid(ctx: Ctx) -> Any:
        assert rt.memset(ctx.dev, ctx.size, 0xFF, 64) == 0
        ret = fn(ctx)
        assert rt.synchronize_stream(ctx.stream) == 0
        assert rt.memcpy(ctx.host, ctx.size, ctx.dev, 64, ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return ctypes.string_at(ctx.host, 64), ret

    return valid


def zeros(r: Any, ctx: Ctx) -> None:
    assert r[0] == bytes(64), r[0]


def recent_err_msg_valid(ctx: Ctx) -> Any:
    acl.get_recent_err_msg()
    assert rt.set_device(NO_DEVICE) == ACL_ERROR_RT_INVALID_DEVICEID
    return acl.get_recent_err_msg()


def recent_err_msg_consumed(ctx: Ctx) -> Any:
    rt.set_device(NO_DEVICE)
    acl.get_recent_err_msg()
    return acl.get_recent_err_msg()


def finalize_reference_valid(ctx: Ctx) -> Any:
    assert acl.init() == ACL_ERROR_REPEAT_INITIALIZE  # one more count, taken away again
    return acl.finalize_reference()


# ---- callbacks -------------------------------------------------------------------------------

_calls: List[Any] = []


def init_cb(text: str, size: int, user_data: Any) -> int:
    _calls.append(("init", text, size, user_data))
    return 0


def finalize_cb(user_data: Any) -> int:
    _calls.append(("finalize", user_data))
    return 0


def exception_cb(info: int) -> None:
    _calls.append(("exception", rt.get_error_code_from_exception_info(info)))


def init_register_valid(ctx: Ctx) -> Any:
    del _calls[:]
    ret = acl.init_callback_register(ACL_REG_TYPE_OTHER, init_cb, "calls_devices")
    ctx.cleanup.append((lambda _: acl.init_callback_unregister(ACL_REG_TYPE_OTHER, init_cb), None))
    return ret


def init_register_ran(r: Any, ctx: Ctx) -> None:
    # Registered after init, the callback ran at once, with the configuration text (none: "").
    assert _calls == [("init", "", 0, "calls_devices")], _calls


def init_unregister_valid(ctx: Ctx) -> Any:
    assert acl.init_callback_register(ACL_REG_TYPE_OTHER, init_cb) == 0
    return acl.init_callback_unregister(ACL_REG_TYPE_OTHER, init_cb)


def finalize_register_valid(ctx: Ctx) -> Any:
    ret = acl.finalize_callback_register(ACL_REG_TYPE_OTHER, finalize_cb, "calls_devices")
    ctx.cleanup.append((lambda _: acl.finalize_callback_unregister(ACL_REG_TYPE_OTHER, finalize_cb), None))
    return ret


def finalize_unregister_valid(ctx: Ctx) -> Any:
    assert acl.finalize_callback_register(ACL_REG_TYPE_OTHER, finalize_cb) == 0
    return acl.finalize_callback_unregister(ACL_REG_TYPE_OTHER, finalize_cb)


def set_exception_cb_valid(ctx: Ctx) -> Any:
    ret = rt.set_exception_info_callback(exception_cb)
    restore(ctx, lambda: rt.set_exception_info_callback(None))
    return ret


def register_exception_cb_valid(ctx: Ctx) -> Any:
    ret = rt.exception_info_callback_register(exception_cb)
    ctx.cleanup.append((rt.exception_info_callback_unregister, exception_cb))
    return ret


def unregister_exception_cb_valid(ctx: Ctx) -> Any:
    assert rt.exception_info_callback_register(exception_cb) == 0
    return rt.exception_info_callback_unregister(exception_cb)


def named_callback_valid(fn: Callable[..., Any], callback: Callable[..., Any]) -> Callable[[Ctx], Any]:
    def valid(ctx: Ctx) -> Any:
        ret = fn("calls_devices", callback, "args")
        ctx.cleanup.append((lambda _: fn("calls_devices", None), None))
        return ret

    return valid


def named_callback_taken(fn: Callable[..., Any], callback: Callable[..., Any]) -> Callable[[Ctx], Any]:
    def bad(ctx: Ctx) -> Any:
        assert fn("calls_devices.taken", callback) == 0
        ctx.cleanup.append((lambda _: fn("calls_devices.taken", None), None))
        return fn("calls_devices.taken", callback)  # a name already registered

    return bad


def is_none(r: Any) -> bool:
    return r is None


def is_str(r: Any) -> bool:
    return isinstance(r, str) and r != ""


def expect_that(cond: bool, what: Any) -> None:
    assert cond, what


CASES: List[Case] = [
    # ---- acl.h: init and finalize --------------------------------------------------------------
    Case("init", lambda ctx: in_child("result = acl.init()"),
         lambda ctx: in_child("result = acl.init('/nonexistent/acl.json')"), code=ACL_ERROR_INVALID_FILE),
    Case("finalize", lambda ctx: in_child("acl.init()\nresult = acl.finalize()"),
         lambda ctx: in_child("acl.init()\nacl.finalize()\nresult = acl.finalize()"), code=ACL_ERROR_REPEAT_FINALIZE),
    Case("finalize_reference", finalize_reference_valid,
         lambda ctx: in_child("result = acl.finalize_reference()"), code=ACL_ERROR_UNINITIALIZE,
         check=lambda r, ctx: expect_that(r[0] >= 1, r)),
    Case("get_recent_err_msg", recent_err_msg_valid, recent_err_msg_consumed, code=is_none, valid_code=is_str,
         check=lambda r, ctx: expect_that(str(NO_DEVICE) in r, r)),
    # ---- acl_base.h ------------------------------------------------------------------------------
    Case("data_type_size", lambda ctx: acl.data_type_size(0), lambda ctx: acl.data_type_size(999),
         code=lambda r: r == 0, valid_code=lambda r: r == 4),  # ACL_FLOAT: 4 bytes; unknown: 0
    Case("float_to_float16", lambda ctx: acl.float_to_float16(1.0), lambda ctx: acl.float_to_float16(float("nan")),
         code=lambda r: r == 0x7BFF, valid_code=lambda r: r == 0x3C00),  # NaN saturates, as the vendor's
    Case("float16_to_float", lambda ctx: acl.float16_to_float(0x3C00), lambda ctx: acl.float16_to_float(0x7E00),
         code=lambda r: r == 98304.0, valid_code=lambda r: r == 1.0),  # the all-ones exponent is ordinary
    Case("get_cann_attribute", lambda ctx: acl.get_cann_attribute(ACL_CANN_ATTR_INF_NAN),
         lambda ctx: acl.get_cann_attribute(99), code=ACL_ERROR_INVALID_PARAM,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("get_cann_attribute_list", lambda ctx: acl.get_cann_attribute_list(),
         lambda ctx: in_thread(acl.get_cann_attribute_list),  # no argument: the same list on any thread
         code=lambda r: r == acl.get_cann_attribute_list(),
         check=lambda r, ctx: expect_that(r[1] == len(r[0]) >= 1 and all(acl.get_cann_attribute(a) == (1, 0) for a in r[0]), r)),
    Case("get_device_capability", lambda ctx: acl.get_device_capability(ctx.device, ACL_DEVICE_INFO_AI_CORE_NUM),
         lambda ctx: acl.get_device_capability(ctx.device, 999), code=ACL_ERROR_INVALID_PARAM,
         check=lambda r, ctx: expect_that(r[0] == rt.get_device_info(ctx.device, ACL_DEV_ATTR_AICORE_CORE_NUM)[0], r)),
    Case("get_soc_name", lambda ctx: acl.get_soc_name(), lambda ctx: in_thread(acl.get_soc_name),
         code=lambda r: r == acl.get_soc_name(), valid_code=is_str),  # no argument, any thread
    Case("app_log", lambda ctx: acl.app_log(1, "calls_devices: 100% of %s"), lambda ctx: acl.app_log(99, "no level"),
         code=is_none, valid_code=is_none),  # returns nothing, an unknown level included
    Case("sys_get_cann_version", lambda ctx: acl.sys_get_cann_version(0), lambda ctx: acl.sys_get_cann_version(99),
         code=ACL_ERROR_INVALID_PARAM,
         check=lambda r, ctx: expect_that(r[0]["version"] == acl.sys_get_version_str("cann")[0]
                                          and r[0]["major_version"] == r[0]["version"].split(".")[0], r)),
    Case("sys_get_version_str", lambda ctx: acl.sys_get_version_str("cann"),
         lambda ctx: acl.sys_get_version_str("no-such-package"), code=ACL_ERROR_INVALID_FILE,
         check=lambda r, ctx: expect_that(r[0].count(".") >= 2, r)),
    Case("sys_get_version_num", lambda ctx: acl.sys_get_version_num("cann"),
         lambda ctx: acl.sys_get_version_num("no-such-package"), code=ACL_ERROR_INVALID_FILE,
         check=lambda r, ctx: expect_that(r[0] == int(acl.sys_get_version_str("cann")[0].split(".")[0]) * 10**7
                                          + int(acl.sys_get_version_str("cann")[0].split(".")[1]) * 10**5
                                          + int(acl.sys_get_version_str("cann")[0].split(".")[2]) * 10**3, r)),
    Case("init_callback_register", init_register_valid,
         lambda ctx: acl.init_callback_register(9, init_cb), code=ACL_ERROR_INVALID_PARAM, check=init_register_ran),
    Case("init_callback_unregister", init_unregister_valid,
         lambda ctx: acl.init_callback_unregister(ACL_REG_TYPE_OTHER, None), code=ACL_ERROR_INVALID_PARAM),
    Case("finalize_callback_register", finalize_register_valid,
         lambda ctx: acl.finalize_callback_register(9, finalize_cb), code=ACL_ERROR_INVALID_PARAM),
    Case("finalize_callback_unregister", finalize_unregister_valid,
         lambda ctx: acl.finalize_callback_unregister(ACL_REG_TYPE_OTHER, None), code=ACL_ERROR_INVALID_PARAM),
    # ---- devices ---------------------------------------------------------------------------------
    Case("rt.set_device", set_device_valid, lambda ctx: rt.set_device(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.reset_device", reset_device_valid, lambda ctx: rt.reset_device(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.reset_device_force", reset_device_force_valid, lambda ctx: rt.reset_device_force(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(rt.get_primary_ctx_state(1)[0] == 0, "device 1 still active")),
    Case("rt.get_device", lambda ctx: rt.get_device(), lambda ctx: in_thread(rt.get_device),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=lambda r, ctx: expect_that(r[0] == ctx.device, r)),
    Case("rt.get_device_count", lambda ctx: rt.get_device_count(), lambda ctx: in_thread(rt.get_device_count),
         code=lambda r: r == rt.get_device_count(),  # no argument, any thread
         check=lambda r, ctx: expect_that(r[0] >= 2, r)),
    Case("rt.synchronize_device", lambda ctx: rt.synchronize_device(), lambda ctx: in_thread(rt.synchronize_device),
         code=ACL_ERROR_RT_CONTEXT_NULL),
    Case("rt.synchronize_device_with_timeout", lambda ctx: rt.synchronize_device_with_timeout(1000),
         lambda ctx: rt.synchronize_device_with_timeout(-5)),
    Case("rt.get_logic_dev_id_by_user_dev_id", lambda ctx: rt.get_logic_dev_id_by_user_dev_id(1),
         lambda ctx: rt.get_logic_dev_id_by_user_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_user_dev_id_by_logic_dev_id", lambda ctx: rt.get_user_dev_id_by_logic_dev_id(1),
         lambda ctx: rt.get_user_dev_id_by_logic_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_logic_dev_id_by_phy_dev_id", lambda ctx: rt.get_logic_dev_id_by_phy_dev_id(rt.get_phy_dev_id_by_logic_dev_id(1)[0]),
         lambda ctx: rt.get_logic_dev_id_by_phy_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_phy_dev_id_by_logic_dev_id", lambda ctx: rt.get_phy_dev_id_by_logic_dev_id(1),
         lambda ctx: rt.get_phy_dev_id_by_logic_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.get_user_dev_id_by_phy_dev_id", lambda ctx: rt.get_user_dev_id_by_phy_dev_id(rt.get_phy_dev_id_by_user_dev_id(1)[0]),
         lambda ctx: rt.get_user_dev_id_by_phy_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_phy_dev_id_by_user_dev_id", lambda ctx: rt.get_phy_dev_id_by_user_dev_id(1),
         lambda ctx: rt.get_phy_dev_id_by_user_dev_id(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.get_soc_name", lambda ctx: rt.get_soc_name(), lambda ctx: in_thread(rt.get_soc_name),
         code=lambda r: r == rt.get_soc_name(), valid_code=is_str),  # no argument, any thread
    Case("rt.device_get_bare_tgid", lambda ctx: rt.device_get_bare_tgid(), lambda ctx: in_thread(rt.device_get_bare_tgid),
         code=lambda r: r == (os.getpid(), 0),  # no argument: the same pid on any thread
         check=lambda r, ctx: expect_that(r[0] == os.getpid(), r)),
    Case("rt.device_can_access_peer", lambda ctx: rt.device_can_access_peer(ctx.device, 1),
         lambda ctx: rt.device_can_access_peer(ctx.device, NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.device_enable_peer_access", enable_peer_valid, lambda ctx: rt.device_enable_peer_access(1, 5),
         check=lambda r, ctx: expect_that(rt.device_peer_access_status(ctx.device, 1) == (1, 0), "not enabled")),
    Case("rt.device_disable_peer_access", disable_peer_valid, lambda ctx: rt.device_disable_peer_access(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.device_peer_access_status", lambda ctx: rt.device_peer_access_status(ctx.device, 1),
         lambda ctx: rt.device_peer_access_status(ctx.device, NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID),
    Case("rt.get_run_mode", lambda ctx: rt.get_run_mode(), lambda ctx: in_thread(rt.get_run_mode),
         code=lambda r: r == (ACL_HOST, 0),  # no argument: ACL_HOST on any thread
         check=lambda r, ctx: expect_that(r[0] == ACL_HOST, r)),
    Case("rt.set_ts_device", lambda ctx: rt.set_ts_device(0), lambda ctx: rt.set_ts_device(9)),
    Case("rt.get_device_info", lambda ctx: rt.get_device_info(ctx.device, ACL_DEV_ATTR_AICORE_CORE_NUM),
         lambda ctx: rt.get_device_info(ctx.device, 9999), check=lambda r, ctx: expect_that(r[0] > 0, r)),
    Case("rt.get_device_capability", lambda ctx: rt.get_device_capability(ctx.device, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV),
         lambda ctx: rt.get_device_capability(ctx.device, 999), check=lambda r, ctx: expect_that(r[0] in (0, 1), r)),
    Case("rt.get_devices_topo", lambda ctx: rt.get_devices_topo(ctx.device, 1),
         lambda ctx: rt.get_devices_topo(ctx.device, ctx.device)),  # the same device twice
    Case("rt.device_get_by_pci_bus_id", lambda ctx: rt.device_get_by_pci_bus_id(rt.device_get_pci_bus_id(1)[0]),
         lambda ctx: rt.device_get_by_pci_bus_id("not-a-bus-id"), check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_primary_ctx_state", lambda ctx: rt.get_primary_ctx_state(ctx.device),
         lambda ctx: rt.get_primary_ctx_state(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[:2] == (1, 0), r)),
    Case("rt.query_device_status", lambda ctx: rt.query_device_status(ctx.device),
         lambda ctx: rt.query_device_status(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == 0, r)),  # ACL_RT_DEVICE_STATUS_NORMAL
    Case("rt.check_arch_compatibility", lambda ctx: rt.check_arch_compatibility(rt.get_soc_name()),
         lambda ctx: rt.check_arch_compatibility(None), code=ACL_ERROR_INVALID_PARAM,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    Case("rt.get_device_utilization_rate", lambda ctx: rt.get_device_utilization_rate(ctx.device),
         lambda ctx: rt.get_device_utilization_rate(NO_DEVICE), code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0]["memory_utilization"] == -1 and r[0]["cube_utilization"] == 0, r)),
    Case("rt.device_get_uuid", lambda ctx: rt.device_get_uuid(ctx.device), lambda ctx: rt.device_get_uuid(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(len(r[0]["bytes"]) == 16 and r[0] != rt.device_get_uuid(1)[0], r)),
    Case("rt.device_get_pci_bus_id", lambda ctx: rt.device_get_pci_bus_id(1), lambda ctx: rt.device_get_pci_bus_id(1, 12),
         check=lambda r, ctx: expect_that(r[0] == "0000:%02x:00.0" % (rt.get_phy_dev_id_by_logic_dev_id(1)[0] + 1), r)),
    Case("rt.device_get_host_atomic_capabilities",
         lambda ctx: rt.device_get_host_atomic_capabilities(
             [ACL_RT_ATOMIC_OPERATION_INTEGER_ADD, ACL_RT_ATOMIC_OPERATION_FLOAT_ADD, ACL_RT_ATOMIC_OPERATION_DMA_ADD], ctx.device),
         lambda ctx: rt.device_get_host_atomic_capabilities([], ctx.device), code=ACL_ERROR_INVALID_PARAM,
         check=lambda r, ctx: expect_that(len(r[0]) == 3 and r[0][0] != 0 and r[0][1] != 0 and r[0][2] == 0, r)),
    Case("rt.device_get_p2p_atomic_capabilities",
         lambda ctx: rt.device_get_p2p_atomic_capabilities([ACL_RT_ATOMIC_OPERATION_INTEGER_ADD], ctx.device, 1),
         lambda ctx: rt.device_get_p2p_atomic_capabilities([ACL_RT_ATOMIC_OPERATION_INTEGER_ADD], ctx.device, NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0] == rt.device_get_host_atomic_capabilities(
             [ACL_RT_ATOMIC_OPERATION_INTEGER_ADD], ctx.device)[0], r)),
    Case("rt.get_error_verbose", lambda ctx: rt.get_error_verbose(ctx.device), lambda ctx: rt.get_error_verbose(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(r[0]["error_type"] == ACL_RT_NO_ERROR and r[0]["has_detail"] == 0, r)),
    Case("rt.repair_error", lambda ctx: rt.repair_error(ctx.device, rt.get_error_verbose(ctx.device)[0]),
         lambda ctx: rt.repair_error(NO_DEVICE, {}), code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
         valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT),  # needs an NPU's HBM
    # ---- device state callbacks -----------------------------------------------------------------
    Case("rt.reg_device_state_callback", named_callback_valid(rt.reg_device_state_callback, lambda d, s, a: None),
         named_callback_taken(rt.reg_device_state_callback, lambda d, s, a: None)),
    Case("rt.set_device_task_abort_callback", named_callback_valid(rt.set_device_task_abort_callback, lambda d, s, t, a: 0),
         named_callback_taken(rt.set_device_task_abort_callback, lambda d, s, t, a: 0)),
    # ---- contexts --------------------------------------------------------------------------------
    Case("rt.create_context", create_context_valid, lambda ctx: rt.create_context(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID, check=lambda r, ctx: expect_that(r[0] != 0 and rt.get_context()[0] == r[0], r)),
    Case("rt.destroy_context", destroy_context_valid, lambda ctx: rt.destroy_context(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.set_context", lambda ctx: rt.set_context(new_context(ctx)), lambda ctx: rt.set_context(BAD_HANDLE),
         code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.set_current_context", lambda ctx: rt.set_current_context(new_context(ctx)),
         lambda ctx: rt.set_current_context(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.get_context", lambda ctx: rt.get_context(), lambda ctx: in_thread(rt.get_context),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=lambda r, ctx: expect_that(r[0] != 0, r)),
    Case("rt.get_current_context", lambda ctx: rt.get_current_context(), lambda ctx: in_thread(rt.get_current_context),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=lambda r, ctx: expect_that(r[0] == rt.get_context()[0], r)),
    # ---- errors ----------------------------------------------------------------------------------
    Case("rt.peek_at_last_error", lambda ctx: (rt.get_last_error(ACL_RT_THREAD_LEVEL), rt.peek_at_last_error(ACL_RT_THREAD_LEVEL))[1],
         lambda ctx: rt.peek_at_last_error(5)),
    Case("rt.get_last_error", lambda ctx: (rt.get_last_error(ACL_RT_THREAD_LEVEL), rt.get_last_error(ACL_RT_THREAD_LEVEL))[1],
         lambda ctx: rt.get_last_error(5)),
    getter_case("task_id", lambda r, f: r == 0),  # the wait is the stream's first task
    getter_case("thread_id", lambda r, f: r != 0),
    getter_case("device_id", lambda r, f: r == 0),
    getter_case("error_code", lambda r, f: r == 107019),  # ACL_ERROR_RT_WAIT_TIMEOUT
    Case("rt.set_exception_info_callback", set_exception_cb_valid, lambda ctx: rt.set_exception_info_callback(None),
         code=0),  # None clears, which is no error
    Case("rt.exception_info_callback_register", register_exception_cb_valid,
         lambda ctx: rt.exception_info_callback_register(None), code=ACL_ERROR_INVALID_PARAM),
    Case("rt.exception_info_callback_unregister", unregister_exception_cb_valid,
         lambda ctx: rt.exception_info_callback_unregister(None), code=ACL_ERROR_INVALID_PARAM),
    # ---- limits ----------------------------------------------------------------------------------
    Case("rt.device_set_limit", limit_valid, lambda ctx: rt.device_set_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 1 << 40),
         check=lambda r, ctx: expect_that(rt.device_get_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE) == (65536, 0), "not set")),
    Case("rt.device_get_limit", lambda ctx: rt.device_get_limit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE),
         lambda ctx: rt.device_get_limit(99), check=lambda r, ctx: expect_that(r[0] > 0, r)),
    Case("rt.get_device_res_limit", lambda ctx: rt.get_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE),
         lambda ctx: rt.get_device_res_limit(ctx.device, 9), check=lambda r, ctx: expect_that(r[0] > 0, r)),
    Case("rt.set_device_res_limit", res_limit_valid, lambda ctx: rt.set_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE, 9999),
         check=lambda r, ctx: expect_that(rt.get_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE) == (4, 0), "not set")),
    Case("rt.reset_device_res_limit", reset_res_limit_valid, lambda ctx: rt.reset_device_res_limit(NO_DEVICE),
         code=ACL_ERROR_RT_INVALID_DEVICEID,
         check=lambda r, ctx: expect_that(rt.get_device_res_limit(ctx.device, ACL_RT_DEV_RES_CUBE_CORE)[0] > 4, "not reset")),
    Case("rt.get_res_in_current_thread", lambda ctx: rt.get_res_in_current_thread(ACL_RT_DEV_RES_CUBE_CORE),
         lambda ctx: rt.get_res_in_current_thread(9), check=lambda r, ctx: expect_that(r[0] > 0, r)),
    # ---- system parameters -----------------------------------------------------------------------
    Case("rt.set_sys_param_opt", sys_param_valid, lambda ctx: rt.set_sys_param_opt(99, 1),
         check=lambda r, ctx: expect_that(rt.get_sys_param_opt(ACL_OPT_DETERMINISTIC) == (1, 0), "not set")),
    Case("rt.get_sys_param_opt", lambda ctx: rt.get_sys_param_opt(ACL_OPT_DETERMINISTIC), lambda ctx: rt.get_sys_param_opt(99)),
    Case("rt.ctx_set_sys_param_opt", ctx_sys_param_set_valid, lambda ctx: rt.ctx_set_sys_param_opt(99, 1)),
    Case("rt.ctx_get_sys_param_opt", ctx_sys_param_get_valid, ctx_sys_param_never_set, code=ACL_ERROR_RT_SYS_PARAM_NOT_SET,
         check=lambda r, ctx: expect_that(r[0] == 1, r)),
    # ---- time-outs -------------------------------------------------------------------------------
    timeout_case("set_op_execute_time_out", 5, 100000, 5000),
    timeout_case("set_op_execute_time_out_with_ms", 5000, 100000000, 5000),
    timeout_case("set_op_execute_time_out_v2", 5000000, 1 << 50, 5000),
    Case("rt.get_op_time_out_interval", lambda ctx: rt.get_op_time_out_interval(),
         lambda ctx: in_thread(rt.get_op_time_out_interval),
         code=lambda r: r == rt.get_op_time_out_interval(),  # no argument, process-wide
         check=lambda r, ctx: expect_that(r[0] > 0, r)),
    Case("rt.get_op_execute_timeout", lambda ctx: rt.get_op_execute_timeout(), lambda ctx: in_thread(rt.get_op_execute_timeout),
         code=lambda r: r == rt.get_op_execute_timeout(),  # no argument, process-wide
         check=lambda r, ctx: expect_that(r[0] > 0, r)),
    Case("rt.set_op_wait_timeout", lambda ctx: (restore(ctx, lambda: rt.set_op_wait_timeout(0)), rt.set_op_wait_timeout(30))[1],
         lambda ctx: rt.set_op_wait_timeout(0), code=0),  # every value is taken; 0 removes the bound
    # ---- saturation mode and overflow ------------------------------------------------------------
    Case("rt.set_device_sat_mode", sat_mode_valid, lambda ctx: rt.set_device_sat_mode(9),
         check=lambda r, ctx: expect_that(rt.get_device_sat_mode() == (0, 0), "not set")),
    Case("rt.get_device_sat_mode", lambda ctx: rt.get_device_sat_mode(), lambda ctx: in_thread(rt.get_device_sat_mode),
         code=ACL_ERROR_RT_CONTEXT_NULL, check=lambda r, ctx: expect_that(r[0] in (0, 1), r)),
    Case("rt.get_hardware_sync_addr", lambda ctx: rt.get_hardware_sync_addr(), lambda ctx: in_thread(rt.get_hardware_sync_addr),
         code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT, valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
    Case("rt.ctx_get_float_overflow_addr", lambda ctx: rt.ctx_get_float_overflow_addr(),
         lambda ctx: in_thread(rt.ctx_get_float_overflow_addr),
         code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT, valid_code=ACL_ERROR_RT_FEATURE_NOT_SUPPORT),  # no AI Core here
    Case("rt.get_overflow_status", overflow_status_valid(lambda ctx: rt.get_overflow_status(ctx.dev, 64, ctx.stream)),
         lambda ctx: rt.get_overflow_status(ctx.dev, 64, BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE, check=zeros),
    Case("rt.reset_overflow_status", lambda ctx: rt.reset_overflow_status(ctx.stream),
         lambda ctx: rt.reset_overflow_status(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.get_float_overflow_status", overflow_status_valid(lambda ctx: rt.get_float_overflow_status(ctx.dev, 64, ctx.stream)),
         lambda ctx: rt.get_float_overflow_status(0, 64, ctx.stream), check=zeros),
    Case("rt.reset_float_overflow_status", lambda ctx: rt.reset_float_overflow_status(ctx.stream),
         lambda ctx: rt.reset_float_overflow_status(BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
    Case("rt.npu_get_float_over_flow_status",
         overflow_status_valid(lambda ctx: rt.npu_get_float_over_flow_status(ctx.dev, 64, 0, ctx.stream)),
         lambda ctx: rt.npu_get_float_over_flow_status(ctx.dev, 64, 0, BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE,
         check=zeros),
    Case("rt.npu_clear_float_over_flow_status", lambda ctx: rt.npu_clear_float_over_flow_status(0, ctx.stream),
         lambda ctx: rt.npu_clear_float_over_flow_status(0, BAD_HANDLE), code=ACL_ERROR_RT_INVALID_HANDLE),
]
