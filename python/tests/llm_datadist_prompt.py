"""The prompt side of test_llm_datadist.py, written as vLLM-Ascend's LLM-DataDist connector
wrote it (LLMConfig -> generate_options -> init, register_blocks_cache with BlocksCacheKey
model ids 0 and 1 for K and V), against `llm_datadist` and `acl` only.

    llm_datadist_prompt.py CLUSTER_ID IP:PORT|- NUM_BLOCKS BLOCK_BYTES

Block b of tensor t of cache m holds bytes (m * 31 + t * 7 + b + i) mod 251. Prints "ready".
Per line on stdin: "dump M T B" prints the sha256 of block B of tensor T of cache M; "link
NAME DECODER_ID TABLE_FILE" links by rank table as the connector's add_remote_agent does (this
cluster rank 0, the decoder rank 1), polls query_register_mem_status until OK and prints
"linked COMM_ID"; "push CLUSTER MODEL SRC DST" pushes block SRC of cache 0 into block DST of
that cluster's BlocksCacheKey model and prints "pushed"; "unlink COMM_ID" prints "unlinked";
"quit" unregisters, finalizes and exits. With "-" for the address the prompt does not listen
until it links by rank table."""

from __future__ import annotations

import hashlib
import sys
import time

import numpy as np

import acl
from llm_datadist import BlocksCacheKey, CacheDesc, DataType, LLMConfig, LLMDataDist, LLMRole, RegisterMemStatus


def pattern(model: int, tensor: int, blocks: int, block_bytes: int) -> "np.ndarray":
    b = np.arange(blocks, dtype=np.int64)[:, None]
    i = np.arange(block_bytes, dtype=np.int64)[None, :]
    return ((model * 31 + tensor * 7 + b + i) % 251).astype(np.uint8)


def main() -> int:
    cluster_id, listen, blocks, block_bytes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    config = LLMConfig()
    config.device_id = 0
    if listen != "-":
        config.listen_ip_info = listen
    config.enable_cache_manager = True
    config.enable_remote_cache_accessible = True
    config.sync_kv_timeout = 5000
    dd = LLMDataDist(LLMRole.PROMPT, cluster_id)
    dd.init(config.generate_options())
    caches, buffers = [], []
    for model in (0, 1):  # K and V, two tensors (layers) each
        addrs = []
        for tensor in range(2):
            host = pattern(model, tensor, blocks, block_bytes)
            dev, ret = acl.rt.malloc(host.nbytes, 0)
            assert ret == 0
            assert acl.rt.memcpy(dev, host.nbytes, host.ctypes.data, host.nbytes, 1) == 0
            addrs.append(dev)
            buffers.append(dev)
        desc = CacheDesc(2, [blocks, block_bytes], DataType.DT_UINT8)
        caches.append(dd.cache_manager.register_blocks_cache(desc, addrs, BlocksCacheKey(cluster_id, model)))
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "dump":
            m, t, b = int(words[1]), int(words[2]), int(words[3])
            out = np.zeros(block_bytes, dtype=np.uint8)
            src = caches[m].tensor_addrs[t] + b * block_bytes
            assert acl.rt.memcpy(out.ctypes.data, block_bytes, src, block_bytes, 2) == 0
            print(hashlib.sha256(out.tobytes()).hexdigest(), flush=True)
        elif words and words[0] == "link":
            name, decoder_id, table = words[1], int(words[2]), open(words[3]).read()
            comm_id = dd.link(name, {cluster_id: 0, decoder_id: 1}, table)
            while dd.query_register_mem_status(comm_id=comm_id) != RegisterMemStatus.OK:
                assert dd.query_register_mem_status(comm_id=comm_id) != RegisterMemStatus.FAILED
                time.sleep(0.1)
            print("linked", comm_id, flush=True)
        elif words and words[0] == "push":
            cluster, model, src, dst = (int(w) for w in words[1:5])
            dd.cache_manager.push_blocks(BlocksCacheKey(cluster, model), caches[0], [src], [dst])
            print("pushed", flush=True)
        elif words and words[0] == "unlink":
            dd.unlink(int(words[1]))
            print("unlinked", flush=True)
        elif words and words[0] == "quit":
            break
    for cache in caches:
        dd.cache_manager.unregister_cache(cache.cache_id)
    dd.finalize()
    for dev in buffers:
        acl.rt.free(dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
