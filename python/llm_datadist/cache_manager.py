"""``CacheManager``: registering caches and moving them between clusters, as the vendor's
package does, each call one C call of the library's LLM-DataDist (``_native``).

Where a cache is named (docs/llm-datadist.md): ``CacheKeyByIdAndIndex(cluster, cache_id,
batch)`` is the C++ ``CacheIndex``; ``BlocksCacheKey(cluster, model_id)`` names the blocks cache
that cluster registered under that model id. ``CacheKey`` (by request id) and the deprecated
allocation calls answer ``LLM_FEATURE_NOT_ENABLED``.
"""

from __future__ import annotations

from ctypes import byref, c_int64
from typing import Any, List, Optional, Sequence, Union

from . import _native
from ._native import c, check
from .llm_types import BlocksCacheKey, Cache, CacheDesc, CacheKey, CacheKeyByIdAndIndex
from .status import LLMException, LLMStatusCode, not_enabled, raise_if

__all__ = ["CacheManager"]

_NUM_TENSORS_PER_LAYER = 2


def _blocks(name: str, blocks: Any) -> List[int]:
    raise_if(
        not isinstance(blocks, (list, tuple)) or not all(isinstance(b, int) and b >= 0 for b in blocks),
        f"{name} ({blocks!r}) should be a list of block indexes",
    )
    return list(blocks)


def _addrs(addrs: Any, num_tensors: int) -> List[int]:
    raise_if(not isinstance(addrs, list) or not all(isinstance(a, int) for a in addrs), "addrs should be a list of int")
    raise_if(len(addrs) == 0, "addrs can not be empty.")
    raise_if(len(addrs) != num_tensors, "addrs length should be equal to num_tensors.")
    raise_if(any(a == 0 for a in addrs), "addr can not be zero.")
    return addrs


class CacheManager:
    """The caches of one ``LLMDataDist`` (its ``cache_manager``)."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    def _handle(self) -> Any:
        return self._owner._checked_handle()

    def _register(self, desc: CacheDesc, addrs: List[int], model_id: int, what: str) -> int:
        raise_if(not isinstance(desc, CacheDesc), f"cache_desc ({desc!r}) should be a CacheDesc")
        shape = (c_int64 * len(desc.shape))(*desc.shape)
        cd = _native.CacheDescC(desc.num_tensors, desc.data_type.value, int(desc.placement), shape, len(desc.shape))
        cache_id = c_int64(0)
        a = _native.u64s(addrs)
        check(c.ascendless_llm_register(self._handle(), byref(cd), a, len(addrs), model_id, byref(cache_id)),
              f"[{what}]", f"cache_desc = {desc}")
        return cache_id.value

    def register_cache(
        self,
        cache_desc: CacheDesc,
        addrs: List[int],
        cache_keys: Sequence[CacheKey] = (),
        remote_accessible: Optional[bool] = None,
    ) -> Cache:
        """Registers a cache whose batches peers name by ``CacheKeyByIdAndIndex(cluster, cache.cache_id, batch)``."""
        if cache_keys:
            raise not_enabled("register_cache with cache_keys", "name the cache by CacheKeyByIdAndIndex")
        addrs = _addrs(addrs, cache_desc.num_tensors if isinstance(cache_desc, CacheDesc) else 0)
        return Cache(self._register(cache_desc, addrs, -1, "register_cache"), cache_desc, addrs, False)

    def register_blocks_cache(
        self,
        cache_desc: CacheDesc,
        addrs: List[int],
        blocks_cache_key: Optional[BlocksCacheKey] = None,
        remote_accessible: Optional[bool] = None,
    ) -> Cache:
        """Registers a blocks cache (dim 0 counts blocks); with a key, peers name it by
        ``BlocksCacheKey(this cluster, key.model_id)``."""
        raise_if(
            blocks_cache_key is not None and not isinstance(blocks_cache_key, BlocksCacheKey),
            f"blocks_cache_key ({blocks_cache_key!r}) should be a BlocksCacheKey",
        )
        addrs = _addrs(addrs, cache_desc.num_tensors if isinstance(cache_desc, CacheDesc) else 0)
        model_id = -1 if blocks_cache_key is None else blocks_cache_key.model_id
        if model_id >= 1 << 63:
            raise LLMException(f"model_id {model_id} is too large", status_code=LLMStatusCode.LLM_PARAM_INVALID)
        cache_id = self._register(cache_desc, addrs, model_id, "register_blocks_cache")
        return Cache(cache_id, cache_desc, addrs, True)

    def unregister_cache(self, cache_id: int) -> None:
        raise_if(isinstance(cache_id, bool) or not isinstance(cache_id, int), "cache_id should be an int")
        check(c.ascendless_llm_unregister(self._handle(), cache_id), "[unregister_cache]", f"cache_id = {cache_id}")

    @staticmethod
    def _remote_id(key: Union[BlocksCacheKey, CacheKeyByIdAndIndex]) -> int:
        if isinstance(key, CacheKeyByIdAndIndex):
            return key.cache_id
        cache_id = c_int64(0)
        model_id = key.model_id if key.model_id < 1 << 63 else -1  # too large: the library says so
        check(c.ascendless_llm_blocks_key_cache_id(model_id, byref(cache_id)), "[cache key]", f"{key}")
        return cache_id.value

    def pull_cache(
        self,
        cache_key: Union[CacheKey, CacheKeyByIdAndIndex],
        cache: Cache,
        batch_index: int = 0,
        size: int = -1,
        **kwargs: Any,
    ) -> None:
        """Pulls the peer batch `cache_key` names into batch `batch_index` of `cache`
        (`size` bytes of each tensor's batch, -1 for all)."""
        if isinstance(cache_key, CacheKey):
            raise not_enabled("pull_cache by CacheKey", "name the peer cache by CacheKeyByIdAndIndex")
        raise_if(not isinstance(cache_key, CacheKeyByIdAndIndex), f"cache_key ({cache_key!r}) should be a CacheKeyByIdAndIndex")
        raise_if(not isinstance(cache, Cache), "cache should be a Cache")
        raise_if(cache.is_blocks_cache, "param check failed, cache can not be blocks cache.")
        raise_if(not (size == -1 or size > 0), f"[pull_cache] param check failed, size ({size}) is invalid, should be = -1 or > 0")
        layers = self._layers(kwargs, cache)
        check(
            c.ascendless_llm_pull_cache(
                self._handle(), cache_key.cluster_id, cache_key.cache_id, cache_key.batch_index, cache.cache_id,
                batch_index, size, layers,
            ),
            "[pull_cache]",
            f"cache_key = {cache_key}",
        )

    def pull_blocks(
        self,
        src_cache_key: Union[CacheKey, CacheKeyByIdAndIndex, BlocksCacheKey],
        dst_cache: Cache,
        src_blocks: Sequence[int] = (),
        dst_blocks: Sequence[int] = (),
        **kwargs: Any,
    ) -> None:
        """Pulls blocks `src_blocks` of the peer blocks cache into blocks `dst_blocks` of `dst_cache`."""
        raise_if(not isinstance(dst_cache, Cache), "dst_cache should be a Cache")
        raise_if(not dst_cache.is_blocks_cache, "param check failed, dst_cache should be blocks cache.")
        dst = _blocks("dst_blocks", dst_blocks)
        src = _blocks("src_blocks", src_blocks)
        raise_if(len(dst) == 0, "dst_blocks can not be empty.")
        if not isinstance(src_cache_key, BlocksCacheKey):
            raise_if(
                not isinstance(src_cache_key, (CacheKey, CacheKeyByIdAndIndex)),
                f"src_cache_key ({src_cache_key!r}) should be a BlocksCacheKey",
            )
            raise not_enabled("pull_blocks from a cache that is not a blocks cache", "pull from a BlocksCacheKey")
        raise_if(len(src) == 0, "src_blocks can not be empty.")
        layers = self._layers(kwargs, dst_cache)
        rs, ls = _native.u64s(src), _native.u64s(dst)
        check(
            c.ascendless_llm_pull_blocks(
                self._handle(), src_cache_key.cluster_id, self._remote_id(src_cache_key), rs, len(src),
                dst_cache.cache_id, ls, len(dst), layers,
            ),
            "[pull_blocks]",
            f"src_cache_key = {src_cache_key}",
        )

    def push_cache(
        self,
        dst_cache_key: CacheKeyByIdAndIndex,
        src_cache: Cache,
        src_batch_index: int = 0,
        src_layer_range: Optional[range] = None,
        dst_layer_range: Optional[range] = None,
        size: int = -1,
        tensor_num_per_layer: int = _NUM_TENSORS_PER_LAYER,
    ) -> None:
        """Pushes batch `src_batch_index` of `src_cache` into the peer batch `dst_cache_key` names."""
        self._check_push("push_cache")
        raise_if(not isinstance(dst_cache_key, CacheKeyByIdAndIndex), "dst_cache_key should be a CacheKeyByIdAndIndex")
        raise_if(not isinstance(src_cache, Cache), "src_cache should be a Cache")
        raise_if(src_cache.is_blocks_cache, "param check failed, cache can not be blocks cache.")
        raise_if(size != -1, f"[push_cache] param check failed, size ({size}) is invalid, should be = -1.")
        layers = _native.layers(src_layer_range, dst_layer_range, tensor_num_per_layer, src_cache.cache_desc.num_tensors)
        check(
            c.ascendless_llm_push_cache(
                self._handle(), src_cache.cache_id, int(src_cache.cache_desc.placement), src_batch_index,
                dst_cache_key.cluster_id, dst_cache_key.cache_id, dst_cache_key.batch_index, size, layers,
            ),
            "[push_cache]",
            f"dst_cache_key = {dst_cache_key}",
        )

    def push_blocks(
        self,
        dst_cache_key: BlocksCacheKey,
        src_cache: Cache,
        src_blocks: Sequence[int] = (),
        dst_blocks: Sequence[int] = (),
        src_layer_range: Optional[range] = None,
        dst_layer_range: Optional[range] = None,
        tensor_num_per_layer: int = _NUM_TENSORS_PER_LAYER,
    ) -> None:
        """Pushes blocks `src_blocks` of `src_cache` into blocks `dst_blocks` of the peer blocks cache."""
        self._check_push("push_blocks")
        raise_if(not isinstance(dst_cache_key, BlocksCacheKey), "dst_cache_key should be a BlocksCacheKey")
        raise_if(not isinstance(src_cache, Cache), "src_cache should be a Cache")
        raise_if(not src_cache.is_blocks_cache, "param check failed, cache should be blocks cache.")
        src = _blocks("src_blocks", src_blocks)
        dst = _blocks("dst_blocks", dst_blocks)
        raise_if(len(dst) == 0, "dst_blocks can not be empty.")
        layers = _native.layers(src_layer_range, dst_layer_range, tensor_num_per_layer, src_cache.cache_desc.num_tensors)
        ls, rs = _native.u64s(src), _native.u64s(dst)
        check(
            c.ascendless_llm_push_blocks(
                self._handle(), src_cache.cache_id, int(src_cache.cache_desc.placement), ls, len(src),
                dst_cache_key.cluster_id, self._remote_id(dst_cache_key), rs, len(dst), layers,
            ),
            "[push_blocks]",
            f"dst_cache_key = {dst_cache_key}",
        )

    def _check_push(self, what: str) -> None:
        raise_if(
            not self._owner._remote_cache_accessible,
            f"{what} is only supported while enable_remote_cache_accessible is True",
        )

    @staticmethod
    def _layers(kwargs: dict, cache: Cache) -> Optional[_native.Layers]:
        for k in kwargs:
            raise_if(k not in ("src_layer_range", "dst_layer_range", "tensor_num_per_layer"), f"Unsupported param:{k}")
        return _native.layers(
            kwargs.get("src_layer_range"),
            kwargs.get("dst_layer_range"),
            kwargs.get("tensor_num_per_layer", _NUM_TENSORS_PER_LAYER),
            cache.cache_desc.num_tensors,
        )

    # What the vendor keeps for its own memory pools, or deprecated (the KvCacheManager era).
    def _unsupported(self, what: str) -> LLMException:
        return not_enabled(what, "allocate the memory yourself and register it (register_cache, register_blocks_cache)")

    def allocate_cache(self, *args: Any, **kwargs: Any) -> Cache:
        raise self._unsupported("allocate_cache")

    def allocate_blocks_cache(self, *args: Any, **kwargs: Any) -> Cache:
        raise self._unsupported("allocate_blocks_cache")

    def deallocate_cache(self, *args: Any, **kwargs: Any) -> None:
        raise self._unsupported("deallocate_cache")

    def deallocate_blocks_cache(self, *args: Any, **kwargs: Any) -> None:
        raise self._unsupported("deallocate_blocks_cache")

    def remove_cache_key(self, *args: Any, **kwargs: Any) -> None:
        raise not_enabled("remove_cache_key", "caches are not named by CacheKey here")

    def copy_cache(self, *args: Any, **kwargs: Any) -> None:
        raise not_enabled("copy_cache", "as on the vendor's library; copy with acl.rt.memcpy")

    def copy_blocks(self, *args: Any, **kwargs: Any) -> None:
        raise not_enabled("copy_blocks", "as on the vendor's library; copy with acl.rt.memcpy")

    def swap_blocks(self, *args: Any, **kwargs: Any) -> None:
        raise not_enabled("swap_blocks", "copy with acl.rt.memcpy")

    def transfer_cache_async(self, *args: Any, **kwargs: Any) -> Any:
        raise not_enabled("transfer_cache_async", "use push_cache or push_blocks")

    def remap_registered_memory(self, *args: Any, **kwargs: Any) -> None:
        raise not_enabled("remap_registered_memory", "registered memory stays mapped here")

