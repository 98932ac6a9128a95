"""The value types of ``llm_datadist``: placements, cache layouts, caches and the keys that
name a peer's cache."""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import Any, List, Optional, Sequence

from .data_type import DataType
from .status import LLMException, LLMStatusCode

__all__ = [
    "Placement",
    "RegisterMemStatus",
    "CacheDesc",
    "Cache",
    "BlocksCacheKey",
    "CacheKey",
    "CacheKeyByIdAndIndex",
]


def _invalid(message: str) -> LLMException:
    return LLMException(message, status_code=LLMStatusCode.LLM_PARAM_INVALID)


def _int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(f"{name} ({value!r}) should be an int in [{low}, {high}]")
    return value


class Placement(IntEnum):
    HOST = 0
    DEVICE = 1

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


class RegisterMemStatus(Enum):
    OK = 0
    PREPARING = 1
    FAILED = 2


class CacheDesc:
    """A cache's layout: `num_tensors` tensors of `shape` and `data_type`; dim 0 (the batch
    dim) counts the batches, or the blocks of a blocks cache."""

    def __init__(
        self,
        num_tensors: int,
        shape: Sequence[int],
        data_type: DataType,
        placement: Placement = Placement.DEVICE,
        batch_dim_index: int = 0,
        seq_len_dim_index: int = -1,
        kv_tensor_format: Optional[str] = None,
    ) -> None:
        _int("num_tensors", num_tensors, 0, 0xFFFFFFFF)
        if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) for d in shape):
            raise _invalid(f"shape ({shape!r}) should be a list of ints")
        if not isinstance(data_type, DataType):
            raise _invalid(f"data_type ({data_type!r}) should be a DataType")
        if not isinstance(placement, Placement):
            raise _invalid(f"placement ({placement!r}) should be a Placement")
        if not 0 <= batch_dim_index < len(shape):
            raise _invalid(f"batch_dim_index {batch_dim_index} out of range, [0, {len(shape)})")
        if batch_dim_index != 0:
            raise LLMException(
                "batch_dim_index must be 0 here: dim 0 of each tensor is its batch or block count",
                status_code=LLMStatusCode.LLM_FEATURE_NOT_ENABLED,
            )
        if not (seq_len_dim_index == -1 or 0 <= seq_len_dim_index < len(shape)):
            raise _invalid(f"seq_len_dim_index {seq_len_dim_index} is invalid, should be -1 or in [0, {len(shape)})")
        self._num_tensors = num_tensors
        self._shape = list(shape)
        self._data_type = data_type
        self._placement = placement
        self._batch_dim = batch_dim_index
        self._seq_len_dim_index = seq_len_dim_index
        self._kv_tensor_format = kv_tensor_format

    num_tensors = property(lambda self: self._num_tensors)
    shape = property(lambda self: list(self._shape))
    data_type = property(lambda self: self._data_type)
    placement = property(lambda self: self._placement)
    batch_dim = property(lambda self: self._batch_dim)
    batch_size = property(lambda self: self._shape[self._batch_dim])
    seq_len_dim_index = property(lambda self: self._seq_len_dim_index)
    kv_tensor_format = property(lambda self: self._kv_tensor_format)

    def __repr__(self) -> str:
        return (
            f"CacheDesc(num_tensors={self._num_tensors}, shape={self._shape}, data_type={self._data_type}, "
            f"placement={self._placement})"
        )


class Cache:
    """A registered cache (made by ``CacheManager.register_cache`` or ``register_blocks_cache``)."""

    def __init__(
        self, cache_id: int, cache_desc: CacheDesc, tensor_addrs: List[int], is_blocks_cache: bool = False
    ) -> None:
        self._cache_id = cache_id
        self._cache_desc = cache_desc
        self._tensor_addrs = list(tensor_addrs)
        self._is_blocks_cache = is_blocks_cache

    cache_id = property(lambda self: self._cache_id)
    cache_desc = property(lambda self: self._cache_desc)
    tensor_addrs = property(lambda self: list(self._tensor_addrs))
    is_blocks_cache = property(lambda self: self._is_blocks_cache)

    @classmethod
    def create_cpu_cache(cls, cache_desc: CacheDesc, addrs: List[int]) -> "Cache":
        if cache_desc.placement != Placement.HOST:
            raise _invalid("cache_desc placement must be HOST")
        if cache_desc.num_tensors != len(addrs):
            raise _invalid(f"cache_desc num_tensors:{cache_desc.num_tensors} not equal addrs num:{len(addrs)}")
        return cls(-1, cache_desc, addrs, True)

    def __repr__(self) -> str:
        return (
            f"Cache(cache_id = {self._cache_id}, device_tensor_addrs = {len(self._tensor_addrs)}, "
            f"is_blocks_cache = {self._is_blocks_cache})"
        )


def _keyword_args(cls: str, args: tuple, kwargs: dict, order: List[str], valid: List[str]) -> dict:
    if len(args) + len(kwargs) > len(order):
        raise _invalid(f"{cls}: too many arguments")
    merged = dict(kwargs)
    for name, value in zip(order, args):
        if name in merged:
            raise _invalid(f"{cls}: {name} given twice")
        merged[name] = value
    for k in merged:
        if k not in valid:
            raise _invalid(f"Unsupported param:{k}")
    if "prompt_cluster_id" in merged:
        merged.setdefault("cluster_id", merged.pop("prompt_cluster_id"))
    if "cluster_id" not in merged:
        raise _invalid("Param prompt_cluster_id or cluster_id is required")
    return merged


class BlocksCacheKey:
    """Names a blocks cache: the cluster that registered it and its model id. A decoder pulls
    from ``BlocksCacheKey(prompt_cluster_id, model_id)``; registering with one (the cluster id
    is then ignored) gives the cache the id a peer derives from the model id."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        k = _keyword_args(
            "BlocksCacheKey", args, kwargs, ["cluster_id", "model_id"], ["prompt_cluster_id", "cluster_id", "model_id"]
        )
        self._cluster_id = _int("cluster_id", k["cluster_id"], 0, (1 << 64) - 1)
        self._model_id = _int("model_id", k.get("model_id", 0), 0, (1 << 64) - 1)

    cluster_id = property(lambda self: self._cluster_id)
    prompt_cluster_id = cluster_id
    model_id = property(lambda self: self._model_id)

    def __repr__(self) -> str:
        return f"BlocksCacheKey(cluster_id={self._cluster_id}, model_id={self._model_id})"


class CacheKey:
    """Names one request's batch of a peer's cache: (cluster, req_id, model_id). Constructible as
    the vendor's; transfers by it answer LLM_FEATURE_NOT_ENABLED here (docs/llm-datadist.md)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        k = _keyword_args(
            "CacheKey",
            args,
            kwargs,
            ["cluster_id", "req_id", "model_id"],
            ["prompt_cluster_id", "cluster_id", "req_id", "model_id", "prefix_id"],
        )
        self._cluster_id = _int("cluster_id", k["cluster_id"], 0, (1 << 64) - 1)
        self._req_id = _int("req_id", k.get("req_id", (1 << 64) - 1), 0, (1 << 64) - 1)
        self._model_id = _int("model_id", k.get("model_id", 0), 0, (1 << 64) - 1)
        self._prefix_id = _int("prefix_id", k.get("prefix_id", (1 << 64) - 1), 0, (1 << 64) - 1)

    cluster_id = property(lambda self: self._cluster_id)
    prompt_cluster_id = cluster_id
    req_id = property(lambda self: self._req_id)
    model_id = property(lambda self: self._model_id)
    prefix_id = property(lambda self: self._prefix_id)

    def __repr__(self) -> str:
        return f"CacheKey(cluster_id={self._cluster_id}, req_id={self._req_id}, model_id={self._model_id})"


class CacheKeyByIdAndIndex:
    """Names batch `batch_index` of the peer cache `cache_id` of cluster `cluster_id`."""

    def __init__(self, cluster_id: int, cache_id: int, batch_index: int = 0) -> None:
        self._cluster_id = _int("cluster_id", cluster_id, 0, (1 << 64) - 1)
        self._cache_id = _int("cache_id", cache_id, -(1 << 63), (1 << 63) - 1)
        self._batch_index = _int("batch_index", batch_index, 0, 0xFFFFFFFF)

    cluster_id = property(lambda self: self._cluster_id)
    cache_id = property(lambda self: self._cache_id)
    batch_index = property(lambda self: self._batch_index)

    def __repr__(self) -> str:
        return (
            f"CacheKeyByIdAndIndex(cluster_id={self._cluster_id}, cache_id={self._cache_id}, "
            f"batch_index={self._batch_index})"
        )
