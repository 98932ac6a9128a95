"""``LLMDataDist``: one LLM-DataDist instance of the library (the C++ ``llm_datadist::LlmDataDist``
through ``ascendless_llm_datadist.h``): init with the options of ``LLMConfig``, link clusters,
and its ``cache_manager``."""

from __future__ import annotations

from ctypes import byref, c_int32, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Dict, List, Optional, Sequence, Tuple

from . import _native
from ._native import c, check
from .cache_manager import CacheManager
from .configs import LLMClusterInfo, LLMRole, ip_text
from .llm_types import RegisterMemStatus
from .status import LLMException, LLMStatusCode, code_2_status, not_enabled, raise_if

__all__ = ["LLMDataDist"]

_MAX_COMM_NAME = 128  # the vendor's: names of 1 to 127 characters
_MAX_NODE_NUM = 4  # the vendor's: at most 4 clusters in a communicator


def _options(options: Dict[str, str]) -> Tuple[object, object, int]:
    raise_if(not isinstance(options, dict), "options should be a dict of str to str")
    keys = [str(k) for k in options]
    values = [str(options[k]) for k in options]
    return _native.strings(keys), _native.strings(values), len(keys)


class LLMDataDist:
    """An instance of `role` in cluster `cluster_id`: the engine it runs listens on
    ``llm.listenIpInfo`` when given (a prompt, or any role a peer links to)."""

    def __init__(self, role: LLMRole, cluster_id: int) -> None:
        raise_if(not isinstance(role, LLMRole), f"role ({role!r}) should be an LLMRole")
        raise_if(
            isinstance(cluster_id, bool) or not isinstance(cluster_id, int) or not 0 <= cluster_id < 1 << 64,
            f"cluster_id ({cluster_id!r}) should be a uint64",
        )
        self._role = role
        self._cluster_id = cluster_id
        self._handle: Optional[c_void_p] = None
        self._remote_cache_accessible = False
        self._enable_cache_mgr = False
        self._cache_manager = CacheManager(self)

    def init(self, options: Dict[str, str]) -> None:
        """Initializes with `options` (``LLMConfig().generate_options()``); a second call changes nothing."""
        if self._handle is not None:
            return
        k, v, n = _options(options)
        handle = c_void_p()
        check(c.ascendless_llm_create(self._cluster_id, int(self._role), byref(handle)), "[init]")
        code = c.ascendless_llm_initialize(handle, k, v, n)
        if code != 0:
            c.ascendless_llm_destroy(handle)
            check(code, "[init]", f"options = {options}")
        self._handle = handle
        self._remote_cache_accessible = options.get("llm.EnableRemoteCacheAccessible") == "1"
        self._enable_cache_mgr = options.get("llm.EnableCacheManager") == "1"

    def finalize(self) -> None:
        """Closes every link and drops every cache; the instance may be initialized again."""
        if self._handle is not None:
            c.ascendless_llm_destroy(self._handle)
            self._handle = None

    def __del__(self) -> None:
        try:
            self.finalize()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def _checked_handle(self) -> c_void_p:
        if self._handle is None:
            raise LLMException("llm datadist is not initialized (call init)", status_code=LLMStatusCode.LLM_FAILED)
        return self._handle

    @property
    def cache_manager(self) -> CacheManager:
        return self._cache_manager

    @property
    def kv_cache_manager(self) -> CacheManager:
        raise not_enabled("kv_cache_manager (the deprecated KvCacheManager)", "use cache_manager")

    @property
    def cluster_id(self) -> int:
        return self._cluster_id

    def _clusters(self, clusters: Sequence[LLMClusterInfo]) -> Tuple[object, list]:
        raise_if(
            not isinstance(clusters, (list, tuple)) or not all(isinstance(x, LLMClusterInfo) for x in clusters),
            "clusters should be a list of LLMClusterInfo",
        )
        keep: list = []
        array = (_native.Cluster * max(len(clusters), 1))()
        for i, info in enumerate(clusters):
            raise_if(info.remote_cluster_id is None, "remote_cluster_id of a cluster is not set")
            ips = _native.strings([ip_text(ip) for ip, _ in info.remote_ip_info_list])
            ports = (c_uint16 * max(len(info.remote_ip_info_list), 1))(*[p for _, p in info.remote_ip_info_list])
            keep += [ips, ports]
            array[i] = _native.Cluster(info.remote_cluster_id, ips, ports, len(info.remote_ip_info_list))
        return array, keep

    def link_clusters(
        self, clusters: Sequence[LLMClusterInfo], timeout: int = 3000
    ) -> Tuple[LLMStatusCode, List[LLMStatusCode]]:
        """Links to each cluster's remote address: the overall status and one per cluster."""
        handle = self._checked_handle()
        raise_if(not isinstance(timeout, int) or timeout <= 0, "Param timeout should be greater than 0.")
        array, _keep = self._clusters(clusters)
        rets = (c_uint32 * max(len(clusters), 1))()
        ret = c.ascendless_llm_link(handle, array, len(clusters), timeout, rets)
        return code_2_status(ret), [code_2_status(rets[i]) for i in range(len(clusters))]

    def unlink_clusters(
        self, clusters: Sequence[LLMClusterInfo], timeout: int = 3000, force: bool = False
    ) -> Tuple[LLMStatusCode, List[LLMStatusCode]]:
        """Unlinks the clusters this side linked; `force` succeeds when the peer is gone."""
        handle = self._checked_handle()
        raise_if(not isinstance(timeout, int) or timeout <= 0, "Param timeout should be greater than 0.")
        raise_if(not isinstance(force, bool), "force should be a bool")
        array, _keep = self._clusters(clusters)
        rets = (c_uint32 * max(len(clusters), 1))()
        ret = c.ascendless_llm_unlink(handle, array, len(clusters), timeout, 1 if force else 0, rets)
        return code_2_status(ret), [code_2_status(rets[i]) for i in range(len(clusters))]

    def switch_role(self, role: LLMRole, switch_options: Optional[Dict[str, str]] = None) -> None:
        """Changes the role, with no links; ``llm.listenIpInfo`` in `switch_options` moves the listener."""
        handle = self._checked_handle()
        raise_if(not isinstance(role, LLMRole), f"role ({role!r}) should be an LLMRole")
        k, v, n = _options(switch_options or {})
        check(c.ascendless_llm_set_role(handle, int(role), k, v, n), "[switch_role]", f"role = {role}")
        self._role = role

    def _check_cache_mgr_mode(self, what: str) -> c_void_p:
        handle = self._checked_handle()
        raise_if(
            not self._enable_cache_mgr, f"{what} is not supported when llm.EnableCacheManager is not configured."
        )
        return handle

    @staticmethod
    def _check_uint(name: str, value: object, bits: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} only support {int}, but got {type(value)}.")
        if not 0 <= value < 1 << bits:
            raise ValueError(f"{name}'s value is out of range,{value} is not a uint{bits} value.")

    def link(self, comm_name: str, cluster_rank_info: Dict[int, int], rank_table: str) -> int:
        """Links the clusters of `cluster_rank_info` (cluster id: its rank in `rank_table`, an
        HCCL rank table as JSON text) as one communicator named `comm_name`; every cluster calls
        it, and it returns once each has (within HCCL_CONNECT_TIMEOUT seconds). Returns the
        comm id that ``unlink`` and ``query_register_mem_status`` take."""
        handle = self._check_cache_mgr_mode("link")
        if not isinstance(comm_name, str):
            raise TypeError(f"comm_name only support {str}, but got {type(comm_name)}.")
        raise_if(len(comm_name) == 0, "comm_name can not be empty")
        raise_if(len(comm_name) >= _MAX_COMM_NAME, "comm_name length should be smaller than 128.")
        if not isinstance(cluster_rank_info, dict):
            raise TypeError(f"cluster_rank_info only support {dict}, but got {type(cluster_rank_info)}.")
        raise_if(len(cluster_rank_info) > _MAX_NODE_NUM, "cluster_rank_info size can not be greater than 4.")
        for k, v in cluster_rank_info.items():
            self._check_uint("cluster_rank_info key", k, 64)
            self._check_uint("cluster_rank_info value", v, 32)
        if not isinstance(rank_table, str):
            raise TypeError(f"rank_table only support {str}, but got {type(rank_table)}.")
        ranks = list(cluster_rank_info.values())
        raise_if(len(ranks) <= 1, "cluster num must be bigger than 1.")
        raise_if(ranks != sorted(ranks), "rank in cluster_rank_info must be ordered")
        clusters = list(cluster_rank_info.keys())
        comm_id = c_uint64()
        check(
            c.ascendless_llm_link_comm(
                handle,
                comm_name.encode(),
                _native.u64s(clusters),
                (c_uint32 * len(ranks))(*ranks),
                len(ranks),
                rank_table.encode(),
                byref(comm_id),
            ),
            "[link]",
            f"cluster_rank_info = {cluster_rank_info}",
        )
        return comm_id.value

    def unlink(self, comm_id: int) -> None:
        """Unlinks every cluster of communicator `comm_id`, also when a peer is gone."""
        handle = self._check_cache_mgr_mode("unlink")
        self._check_uint("comm_id", comm_id, 64)
        check(c.ascendless_llm_unlink_comm(handle, comm_id), "[unlink]", f"comm_id = {comm_id}")

    def query_register_mem_status(self, comm_id: int) -> RegisterMemStatus:
        """OK once ``link`` returned: each transfer finds the peer's caches, so nothing is
        left to prepare."""
        handle = self._check_cache_mgr_mode("query_register_mem_status")
        self._check_uint("comm_id", comm_id, 64)
        status = c_int32()
        check(
            c.ascendless_llm_query_register_mem_status(handle, comm_id, byref(status)),
            "[query_register_mem_status]",
            f"comm_id = {comm_id}",
        )
        try:
            return RegisterMemStatus(status.value)
        except ValueError:
            return RegisterMemStatus.FAILED
