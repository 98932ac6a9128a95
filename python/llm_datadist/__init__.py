"""``llm_datadist``: the vendor's LLM-DataDist Python package on ascendless.

Caches registered by one process are pulled or pushed by another over the library's transfer
engine (same host or TCP, as the engine chooses), with the vendor's classes, calls and
statuses: ``LLMDataDist(role, cluster_id)``, ``LLMConfig().generate_options()``, ``init``,
``link_clusters``, ``cache_manager.register_blocks_cache``, ``pull_blocks``, ``push_blocks``,
``pull_cache``, ``push_cache``, ``finalize``. The library is the one ``acl`` loads. What is not
here, and the choices made where the vendor is silent: docs/llm-datadist.md.
"""

from .configs import LLMClusterInfo, LLMConfig, LLMRole, LlmConfig
from .data_type import DataType
from .cache_manager import CacheManager
from .llm_datadist import LLMDataDist
from .llm_types import (
    BlocksCacheKey,
    Cache,
    CacheDesc,
    CacheKey,
    CacheKeyByIdAndIndex,
    Placement,
    RegisterMemStatus,
)
from .status import LLMException, LLMStatusCode, Status

__all__ = [
    "BlocksCacheKey",
    "Cache",
    "CacheDesc",
    "CacheKey",
    "CacheKeyByIdAndIndex",
    "CacheManager",
    "DataType",
    "LLMClusterInfo",
    "LLMConfig",
    "LLMDataDist",
    "LLMException",
    "LLMRole",
    "LLMStatusCode",
    "LlmConfig",
    "Placement",
    "RegisterMemStatus",
    "Status",
]
