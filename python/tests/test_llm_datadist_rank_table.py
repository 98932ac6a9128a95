"""LLM-DataDist's link by HCCL rank table from Python across two processes, as vLLM-Ascend's
LLM-DataDist connector (llmdatadist_c_mgr_connector.py) used it: neither side listens at init;
each calls ``link(comm_name, {prefill: 0, decode: 1}, json.dumps(rank_table))`` with the table
the connector builds (version 1.2, one server, a device_ip per device, no device_port), polls
``query_register_mem_status`` until OK, then the decoder pulls blocks by BlocksCacheKey, the
prompt pushes into the decoder, and both unlink. Then what the vendor's checks refuse, a table
HCCL would refuse, and a peer that never links."""

from __future__ import annotations

import json
import os
import random
import tempfile
import time

import pytest

import acl
from llm_datadist import (
    BlocksCacheKey,
    CacheDesc,
    DataType,
    LLMConfig,
    LLMDataDist,
    LLMException,
    LLMRole,
    LLMStatusCode,
    RegisterMemStatus,
)

from adxl_util import Child
from conftest import PYTHON, child_env
from test_llm_datadist import BLOCK, BLOCKS, PROMPT, DeviceCache, digest, pattern

PROMPT_ID, DECODER_ID = 11, 12


def device_ips() -> tuple:
    """Two loopback addresses of their own (the whole of 127/8 is loopback), so the default
    device port 16666 is free whatever else runs."""
    a, b = random.randrange(1, 255), random.randrange(1, 255)
    return "127.%d.%d.1" % (a, b), "127.%d.%d.2" % (a, b)


def connector_rank_table(prefill_ip: str, decode_ip: str) -> dict:
    """The table add_remote_agent builds for a prefill and a decode device of one server."""
    return {
        "version": "1.2",
        "server_count": "1",
        "status": "completed",
        "server_list": [
            {
                "device": [
                    {"device_id": "0", "device_ip": prefill_ip, "rank_id": "0"},
                    {"device_id": "1", "device_ip": decode_ip, "rank_id": "1"},
                ],
                "server_id": "127.0.0.1",
            }
        ],
    }


def init(role: LLMRole, cluster_id: int, cache_manager: bool = True) -> LLMDataDist:
    config = LLMConfig()
    config.device_id = 0
    config.sync_kv_timeout = 3000
    config.enable_switch_role = True
    config.enable_cache_manager = cache_manager
    config.enable_remote_cache_accessible = True
    dd = LLMDataDist(role, cluster_id)
    dd.init(config.generate_options())
    return dd


def test_both_sides_link_by_the_connectors_rank_table_then_pull_push_and_unlink() -> None:
    prefill_ip, decode_ip = device_ips()
    table = json.dumps(connector_rank_table(prefill_ip, decode_ip))
    comm_name = "pd_comm_%s_%s" % (prefill_ip, decode_ip)
    prompt = Child([PYTHON, PROMPT, str(PROMPT_ID), "-", str(BLOCKS), str(BLOCK)], child_env())
    assert acl.rt.set_device(0) == 0
    dd = init(LLMRole.DECODER, DECODER_ID)
    k = None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(table)
    try:
        assert prompt.receive() == ["ready"]
        # A cache the prompt pushes into, under a key the prompt names.
        k = DeviceCache(dd)
        landing = dd.cache_manager.register_blocks_cache(
            CacheDesc(2, [BLOCKS, BLOCK], DataType.DT_UINT8), k.addrs[:], BlocksCacheKey(DECODER_ID, 5)
        )
        # Both sides link at once, as the connector's two add_remote_agent calls do.
        prompt.send("link", comm_name, DECODER_ID, f.name)
        comm_id = dd.link(comm_name, {PROMPT_ID: 0, DECODER_ID: 1}, table)
        assert isinstance(comm_id, int) and comm_id >= 1
        assert dd.query_register_mem_status(comm_id=comm_id) == RegisterMemStatus.OK
        words = prompt.receive()
        assert words[0] == "linked"
        prompt_comm = int(words[1])

        # The decoder pulls scattered blocks of K by the prompt's BlocksCacheKey.
        src, dst = [5, 0, 31, 6], [1, 2, 3, 4]
        dd.cache_manager.pull_blocks(BlocksCacheKey(cluster_id=PROMPT_ID, model_id=0), k.cache, src, dst)
        for s, d in zip(src, dst):
            for t in range(2):
                assert k.block(t, d) == pattern(0, t, s)
        # The other direction: the prompt pushes its block 9 into the decoder's block 20.
        prompt.send("push", DECODER_ID, 5, 9, 20)
        assert prompt.receive() == ["pushed"]
        for t in range(2):
            assert digest(k.block(t, 20)) == digest(pattern(0, t, 9))
        # The same cluster again: already linked.
        with pytest.raises(LLMException) as e:
            dd.link("again", {PROMPT_ID: 0, DECODER_ID: 1}, table)
        assert e.value.status_code == LLMStatusCode.LLM_ALREADY_LINK

        dd.unlink(comm_id)
        for call in (lambda: dd.unlink(comm_id), lambda: dd.query_register_mem_status(comm_id)):
            with pytest.raises(LLMException) as e:
                call()
            assert e.value.status_code == LLMStatusCode.LLM_NOT_YET_LINK
        with pytest.raises(LLMException) as e:
            dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, [0], [0])
        assert e.value.status_code == LLMStatusCode.LLM_NOT_YET_LINK
        prompt.send("unlink", prompt_comm)
        assert prompt.receive() == ["unlinked"]
        dd.cache_manager.unregister_cache(landing.cache_id)
        prompt.send("quit")
        assert prompt.finish() == 0
    finally:
        prompt.kill()
        os.unlink(f.name)
        if k is not None:
            k.free()
        dd.finalize()
        assert acl.rt.reset_device(0) == 0


def test_what_link_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    prefill_ip, decode_ip = device_ips()
    table = json.dumps(connector_rank_table(prefill_ip, decode_ip))
    both = {PROMPT_ID: 0, DECODER_ID: 1}
    assert acl.rt.set_device(0) == 0
    plain = init(LLMRole.DECODER, DECODER_ID, cache_manager=False)
    dd = init(LLMRole.DECODER, DECODER_ID)
    try:
        # The vendor package's own checks.
        with pytest.raises(LLMException) as e:
            plain.link("c", both, table)
        assert e.value.status_code == LLMStatusCode.LLM_PARAM_INVALID
        for args, error in [
            (("", both, table), LLMException),
            (("c" * 128, both, table), LLMException),
            (("c", {PROMPT_ID: 0}, table), LLMException),
            (("c", {PROMPT_ID: 1, DECODER_ID: 0}, table), LLMException),
            (("c", {1: 0, 2: 1, 3: 2, 4: 3, DECODER_ID: 4}, table), LLMException),
            (("c", {PROMPT_ID: -1, DECODER_ID: 1}, table), ValueError),
            (("c", {"1": 0, DECODER_ID: 1}, table), TypeError),
            ((1, both, table), TypeError),
            (("c", both, None), TypeError),
        ]:
            with pytest.raises(error):
                dd.link(*args)
        # What the library refuses: this cluster absent, and tables HCCL would refuse.
        with pytest.raises(LLMException) as e:
            dd.link("c", {PROMPT_ID: 0, 99: 1}, table)
        assert e.value.status_code == LLMStatusCode.LLM_PARAM_INVALID
        bad = connector_rank_table(prefill_ip, decode_ip)
        bad["server_list"][0]["device"][1]["rank_id"] = "0"
        for text, field in [
            ("{", "not JSON"),
            (json.dumps({**connector_rank_table(prefill_ip, decode_ip), "status": "initializing"}), "status"),
            (json.dumps(bad), "rank_id 0 is given twice"),
            (json.dumps(connector_rank_table("eth0", decode_ip)), "device_ip"),
            (json.dumps({**connector_rank_table(prefill_ip, decode_ip), "server_count": "2"}), "server_count"),
        ]:
            with pytest.raises(LLMException) as e:
                dd.link("c", both, text)
            assert e.value.status_code == LLMStatusCode.LLM_LINK_FAILED
            assert field in str(e.value), str(e.value)
        # A device_ip of no interface here: the engine cannot listen there.
        with pytest.raises(LLMException) as e:
            dd.link("c", both, json.dumps(connector_rank_table(prefill_ip, "192.0.2.1")))
        assert e.value.status_code == LLMStatusCode.LLM_LINK_FAILED
        # A peer that never links: LLM_LINK_FAILED after HCCL_CONNECT_TIMEOUT, not a hang.
        monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "1")
        start = time.monotonic()
        with pytest.raises(LLMException) as e:
            dd.link("c", both, table)
        assert e.value.status_code == LLMStatusCode.LLM_LINK_FAILED
        assert 0.9 < time.monotonic() - start < 5
        assert "HCCL_CONNECT_TIMEOUT" in str(e.value)
        monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "soon")
        with pytest.raises(LLMException) as e:
            dd.link("c", both, table)
        assert e.value.status_code == LLMStatusCode.LLM_PARAM_INVALID
        for call in (lambda: dd.unlink(7), lambda: dd.query_register_mem_status(7)):
            with pytest.raises(LLMException) as e:
                call()
            assert e.value.status_code == LLMStatusCode.LLM_NOT_YET_LINK
    finally:
        plain.finalize()
        dd.finalize()
        assert acl.rt.reset_device(0) == 0
