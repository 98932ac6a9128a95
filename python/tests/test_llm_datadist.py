"""LLM-DataDist from Python across two processes, as vLLM-Ascend's connector used it: a prompt
process (llm_datadist_prompt.py) registers K and V blocks caches under BlocksCacheKey model ids;
this process, the decoder, links to it with LLMClusterInfo, pulls scattered blocks and layer
ranges, pushes blocks back, and checks every byte against what the prompt reports. Then the
prompt is killed: a pull fails promptly with a status, and a forced unlink succeeds."""

from __future__ import annotations

import hashlib
import os
import re
import time

import numpy as np
import pytest

import acl
from llm_datadist import (
    BlocksCacheKey,
    CacheDesc,
    CacheKey,
    CacheKeyByIdAndIndex,
    DataType,
    LLMClusterInfo,
    LLMConfig,
    LLMDataDist,
    LLMException,
    LLMRole,
    LLMStatusCode,
    Placement,
)

from adxl_util import Child, free_port
from conftest import PYTHON, child_env

PROMPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llm_datadist_prompt.py")
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "ge", "llm_error_codes.h")
BLOCKS, BLOCK = 32, 4096
PROMPT_ID, DECODER_ID = 1, 2


def pattern(model: int, tensor: int, block: int) -> bytes:
    i = np.arange(BLOCK, dtype=np.int64)
    return ((model * 31 + tensor * 7 + block + i) % 251).astype(np.uint8).tobytes()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DeviceCache:
    """A decoder blocks cache in device memory, read back through acl.rt.memcpy."""

    def __init__(self, dd: LLMDataDist, tensors: int = 2) -> None:
        self.addrs = []
        for _ in range(tensors):
            dev, ret = acl.rt.malloc(BLOCKS * BLOCK, 0)
            assert ret == 0
            assert acl.rt.memset(dev, BLOCKS * BLOCK, 0, BLOCKS * BLOCK) == 0
            self.addrs.append(dev)
        desc = CacheDesc(tensors, [BLOCKS, BLOCK], DataType.DT_UINT8)
        self.cache = dd.cache_manager.register_blocks_cache(desc, self.addrs)

    def block(self, tensor: int, block: int) -> bytes:
        out = np.zeros(BLOCK, dtype=np.uint8)
        assert acl.rt.memcpy(out.ctypes.data, BLOCK, self.addrs[tensor] + block * BLOCK, BLOCK, 2) == 0
        return out.tobytes()

    def fill(self, tensor: int, block: int, data: bytes) -> None:
        buf = np.frombuffer(data, dtype=np.uint8).copy()
        assert acl.rt.memcpy(self.addrs[tensor] + block * BLOCK, BLOCK, buf.ctypes.data, BLOCK, 1) == 0

    def free(self) -> None:
        for a in self.addrs:
            acl.rt.free(a)


def decoder(listen: str = "") -> LLMDataDist:
    config = LLMConfig()
    config.device_id = 0
    config.enable_cache_manager = True
    config.enable_remote_cache_accessible = True
    config.sync_kv_timeout = 3000
    if listen:
        config.listen_ip_info = listen
    dd = LLMDataDist(LLMRole.DECODER, DECODER_ID)
    dd.init(config.generate_options())
    return dd


def cluster(port: int) -> LLMClusterInfo:
    info = LLMClusterInfo()
    info.remote_cluster_id = PROMPT_ID
    info.append_local_ip_info("127.0.0.1", 0)
    info.append_remote_ip_info("127.0.0.1", port)
    return info


def test_status_codes_are_the_headers() -> None:
    text = open(HEADER).read()
    spelled = {"LLM_WAIT_PROCESS_TIMEOUT": "LLM_WAIT_PROC_TIMEOUT", "LLM_SEQ_LENOVERLIMIT": "LLM_SEQ_LEN_OVER_LIMIT"}
    numbers = {m[1]: 0x5010B000 + int(m[2]) for m in re.finditer(r"GE_ERRORNO_DEFINE\(1, 1, 0, 8, 11, (\w+), (\d+)\)", text)}
    for code in LLMStatusCode:
        if code.name in ("LLM_SUCCESS", "LLM_FAILED", "LLM_UNKNOWN_ERROR", "LLM_DEVICE_MEM_ERROR", "LLM_SUSPECT_REMOTE_ERROR"):
            continue
        assert numbers[spelled.get(code.name, code.name)] == code.value, code


def test_config_generates_the_vendors_keys() -> None:
    config = LLMConfig()
    config.device_id = 3
    config.listen_ip_info = "10.0.0.1:26000"
    config.sync_kv_timeout = 1000
    config.enable_cache_manager = True
    config.enable_remote_cache_accessible = False
    config.enable_switch_role = True
    assert config.generate_options() == {
        "ge.exec.deviceId": "3",
        "ge.session_device_id": "3",
        "llm.listenIpInfo": "10.0.0.1:26000",
        "llm.SyncKvCacheWaitTime": "1000",
        "llm.EnableCacheManager": "1",
        "llm.EnableRemoteCacheAccessible": "0",
        "llm.EnableSwitchRole": "1",
        "llm.MemoryUtilization": "0.95",
    }


def test_bad_input_raises_with_the_status() -> None:
    assert acl.rt.set_device(0) == 0
    dd = decoder()
    try:
        with pytest.raises(LLMException) as e:
            LLMDataDist(LLMRole.PROMPT, 1).cache_manager.register_blocks_cache(
                CacheDesc(1, [4, 16], DataType.DT_UINT8), [1 << 20]
            )
        assert e.value.status_code == LLMStatusCode.LLM_FAILED  # not initialized
        local = DeviceCache(dd)
        remote = BlocksCacheKey(PROMPT_ID, 0)
        for call, code in [
            (lambda: dd.cache_manager.pull_blocks(remote, local.cache, [0], [0]), LLMStatusCode.LLM_NOT_YET_LINK),
            (lambda: dd.cache_manager.pull_blocks(remote, local.cache, [0, 1], [0]), LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.cache_manager.pull_blocks(remote, local.cache, [0], []), LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.cache_manager.pull_cache(CacheKey(PROMPT_ID, 7), local.cache), LLMStatusCode.LLM_FEATURE_NOT_ENABLED),
            (lambda: dd.cache_manager.allocate_cache(None, []), LLMStatusCode.LLM_FEATURE_NOT_ENABLED),
            (lambda: dd.cache_manager.register_blocks_cache(CacheDesc(1, [4, 16], DataType.DT_UINT8), [0]),
             LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.cache_manager.register_blocks_cache(CacheDesc(2, [4, 16], DataType.DT_UINT8), [1]),
             LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.link("comm", {PROMPT_ID: 0, DECODER_ID: 1}, "{}"), LLMStatusCode.LLM_LINK_FAILED),
        ]:
            with pytest.raises(LLMException) as e:
                call()
            assert e.value.status_code == code, (e.value, code)
        # A key registered twice is refused; the first registration stays.
        again = CacheDesc(2, [BLOCKS, BLOCK], DataType.DT_UINT8)
        first = dd.cache_manager.register_blocks_cache(again, local.addrs, BlocksCacheKey(DECODER_ID, 5))
        with pytest.raises(LLMException) as e:
            dd.cache_manager.register_blocks_cache(again, local.addrs, BlocksCacheKey(DECODER_ID, 5))
        assert e.value.status_code == LLMStatusCode.LLM_PARAM_INVALID and "model_id 5" in str(e.value)
        dd.cache_manager.unregister_cache(first.cache_id)
        ret, rets = dd.unlink_clusters([cluster(1)], 1000)
        assert ret == LLMStatusCode.LLM_NOT_YET_LINK and rets == [LLMStatusCode.LLM_NOT_YET_LINK]
        local.free()
    finally:
        dd.finalize()
        assert acl.rt.reset_device(0) == 0


def test_decoder_pulls_and_pushes_blocks_of_a_prompt_process() -> None:
    port = free_port()
    prompt = Child([PYTHON, PROMPT, str(PROMPT_ID), "127.0.0.1:%d" % port, str(BLOCKS), str(BLOCK)], child_env())
    assert acl.rt.set_device(0) == 0
    dd = decoder()
    k = v = None
    try:
        assert prompt.receive() == ["ready"]
        ret, rets = dd.link_clusters([cluster(port)], 5000)
        assert ret == LLMStatusCode.LLM_SUCCESS and rets == [LLMStatusCode.LLM_SUCCESS]
        ret, rets = dd.link_clusters([cluster(port)], 5000)
        assert rets == [LLMStatusCode.LLM_ALREADY_LINK]
        k, v = DeviceCache(dd), DeviceCache(dd)

        # Scattered blocks of both tensors (layers), K from model 0 and V from model 1.
        src, dst = [3, 17, 4, 31, 0], [9, 2, 10, 30, 1]
        dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, src, dst)
        dd.cache_manager.pull_blocks(BlocksCacheKey(cluster_id=PROMPT_ID, model_id=1), v.cache, src, dst)
        for s, d in zip(src, dst):
            for t in range(2):
                assert k.block(t, d) == pattern(0, t, s)
                assert v.block(t, d) == pattern(1, t, s)
        assert k.block(0, 5) == bytes(BLOCK)  # nothing else was written

        # A layer range: layer 1 of the prompt into layer 0 here, one tensor per layer.
        dd.cache_manager.pull_blocks(
            BlocksCacheKey(PROMPT_ID, 0), k.cache, [7], [7],
            src_layer_range=range(1, 2), dst_layer_range=range(0, 1), tensor_num_per_layer=1,
        )
        assert k.block(0, 7) == pattern(0, 1, 7) and k.block(1, 7) == bytes(BLOCK)

        # Many blocks in one call: every block, reversed.
        every = list(range(BLOCKS))
        dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 1), v.cache, every, every[::-1])
        assert all(v.block(1, BLOCKS - 1 - b) == pattern(1, 1, b) for b in every)

        # Out of range on either side, and an unknown model id.
        for call, code in [
            (lambda: dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, [BLOCKS], [0]),
             LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, [0], [BLOCKS]),
             LLMStatusCode.LLM_PARAM_INVALID),
            (lambda: dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 9), k.cache, [0], [0]),
             LLMStatusCode.LLM_KV_CACHE_NOT_EXIST),
        ]:
            with pytest.raises(LLMException) as e:
                call()
            assert e.value.status_code == code

        # Push: new bytes into prompt block 12 of model 0, both tensors; the prompt hashes them.
        new = [bytes([0xA5 ^ t]) * BLOCK for t in range(2)]
        for t in range(2):
            k.fill(t, 20, new[t])
        dd.cache_manager.push_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, [20], [12])
        for t in range(2):
            prompt.send("dump", 0, t, 12)
            assert prompt.receive() == [digest(new[t])]
        # The cache by id: a blocks cache's whole-cache transfers are refused as the vendor's.
        with pytest.raises(LLMException):
            dd.cache_manager.pull_cache(CacheKeyByIdAndIndex(PROMPT_ID, 1), k.cache)

        # The prompt dies: a pull fails promptly, a forced unlink succeeds.
        prompt.kill()
        start = time.monotonic()
        with pytest.raises(LLMException) as e:
            dd.cache_manager.pull_blocks(BlocksCacheKey(PROMPT_ID, 0), k.cache, [1], [1])
        assert time.monotonic() - start < 5
        assert e.value.status_code != LLMStatusCode.LLM_SUCCESS
        ret, rets = dd.unlink_clusters([cluster(port)], 1000, force=True)
        assert ret == LLMStatusCode.LLM_SUCCESS and rets == [LLMStatusCode.LLM_SUCCESS]
    finally:
        prompt.kill()
        for c in (k, v):
            if c is not None:
                c.free()
        dd.finalize()
        assert acl.rt.reset_device(0) == 0


def test_pull_cache_by_id_and_index_and_host_placement() -> None:
    """Two instances in one process: a mix-role server with a (non-blocks) cache of 4 batches,
    and a decoder that pulls batch 2 into its batch 0 by CacheKeyByIdAndIndex, and part of one."""
    assert acl.rt.set_device(0) == 0
    port = free_port()
    server = decoder("127.0.0.1:%d" % port)
    client = decoder()
    try:
        rows = [np.full(256, r + 1, dtype=np.uint8) for r in range(4)]
        host = np.concatenate(rows)
        cache = server.cache_manager.register_cache(
            CacheDesc(1, [4, 256], DataType.DT_UINT8, Placement.HOST), [host.ctypes.data]
        )
        mine = np.zeros(4 * 256, dtype=np.uint8)
        local = client.cache_manager.register_cache(
            CacheDesc(1, [4, 256], DataType.DT_UINT8, Placement.HOST), [mine.ctypes.data]
        )
        info = LLMClusterInfo()
        info.remote_cluster_id = DECODER_ID
        info.append_remote_ip_info("127.0.0.1", port)
        assert client.link_clusters([info], 3000)[0] == LLMStatusCode.LLM_SUCCESS
        client.cache_manager.pull_cache(CacheKeyByIdAndIndex(DECODER_ID, cache.cache_id, 2), local, 0)
        assert (mine[:256] == 3).all() and (mine[256:] == 0).all()
        client.cache_manager.pull_cache(CacheKeyByIdAndIndex(DECODER_ID, cache.cache_id, 3), local, 1, size=100)
        assert (mine[256:356] == 4).all() and (mine[356:512] == 0).all()
        with pytest.raises(LLMException) as e:  # a push needs a device cache, as the vendor's
            client.cache_manager.push_cache(CacheKeyByIdAndIndex(DECODER_ID, cache.cache_id, 0), local)
        assert e.value.status_code == LLMStatusCode.LLM_PARAM_INVALID
        assert client.unlink_clusters([info], 1000)[0] == LLMStatusCode.LLM_SUCCESS
    finally:
        client.finalize()
        server.finalize()
        assert acl.rt.reset_device(0) == 0
