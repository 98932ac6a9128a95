"""``LLMRole``, ``LLMClusterInfo`` and ``LLMConfig``: what the vendor's package names so, with
its option keys and spellings (``generate_options`` writes ``llm.listenIpInfo`` and
``ge.exec.deviceId``, which the library accepts beside the C++ spellings)."""

from __future__ import annotations

import socket
from enum import IntEnum
from typing import Dict, List, Optional, Tuple, Union

from .status import LLMException, LLMStatusCode

__all__ = ["LLMRole", "LLMClusterInfo", "LLMConfig", "LlmConfig"]


class LLMRole(IntEnum):
    PROMPT = 1
    DECODER = 2
    MIX = 3

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


def _ip_number(ip: Union[str, int]) -> int:
    """An IPv4 address as the vendor's package keeps it: inet_aton's bytes, little-endian."""
    if isinstance(ip, bool) or not isinstance(ip, (str, int)):
        raise LLMException(f"ip ({ip!r}) should be a str or an int", status_code=LLMStatusCode.LLM_PARAM_INVALID)
    if isinstance(ip, str):
        try:
            return int.from_bytes(socket.inet_aton(ip), byteorder="little")
        except OSError:
            raise LLMException(f"Can not parse ip str:{ip}", status_code=LLMStatusCode.LLM_PARAM_INVALID) from None
    if not 0 <= ip <= 0xFFFFFFFF:
        raise LLMException(f"ip ({ip}) is not an IPv4 address", status_code=LLMStatusCode.LLM_PARAM_INVALID)
    return ip


def ip_text(ip: int) -> str:
    return socket.inet_ntoa(ip.to_bytes(4, byteorder="little"))


def _port(port: int) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 0xFFFF:
        raise LLMException(f"port ({port!r}) should be in [0, 65535]", status_code=LLMStatusCode.LLM_PARAM_INVALID)
    return port


class LLMClusterInfo:
    """A cluster to link: its id and the addresses of both ends (the remote's listen address)."""

    def __init__(self) -> None:
        self._remote_cluster_id: Optional[int] = None
        self._remote_role_type: Optional[Union[LLMRole, int]] = None
        self._local_ip_info_list: List[Tuple[int, int]] = []
        self._remote_ip_info_list: List[Tuple[int, int]] = []

    @property
    def remote_cluster_id(self) -> Optional[int]:
        return self._remote_cluster_id

    @remote_cluster_id.setter
    def remote_cluster_id(self, remote_cluster_id: int) -> None:
        if isinstance(remote_cluster_id, bool) or not isinstance(remote_cluster_id, int) or not (
            0 <= remote_cluster_id < 1 << 64
        ):
            raise LLMException(
                f"remote_cluster_id ({remote_cluster_id!r}) should be a uint64",
                status_code=LLMStatusCode.LLM_PARAM_INVALID,
            )
        self._remote_cluster_id = remote_cluster_id

    @property
    def remote_role_type(self) -> Optional[Union[LLMRole, int]]:
        return self._remote_role_type

    @remote_role_type.setter
    def remote_role_type(self, remote_role_type: Union[LLMRole, int]) -> None:
        self._remote_role_type = remote_role_type

    @property
    def local_ip_info_list(self) -> List[Tuple[int, int]]:
        return self._local_ip_info_list

    @property
    def remote_ip_info_list(self) -> List[Tuple[int, int]]:
        return self._remote_ip_info_list

    def append_local_ip_info(self, ip: Union[str, int], port: int) -> None:
        self._local_ip_info_list.append((_ip_number(ip), _port(port)))

    def append_remote_ip_info(self, ip: Union[str, int], port: int) -> None:
        self._remote_ip_info_list.append((_ip_number(ip), _port(port)))


class LLMConfig:
    """The options of ``LLMDataDist.init``, built as the vendor's ``LlmConfig`` builds them."""

    def __init__(self) -> None:
        self._options: Dict[str, str] = {}
        self.device_id: Optional[Union[int, List[int]]] = None
        self.sync_kv_timeout: Optional[int] = None
        self.listen_ip_info: str = ""
        self.deploy_res_path: str = ""
        self.ge_options: Dict[str, str] = {}
        self.enable_switch_role: bool = False
        self.link_total_time: Optional[int] = None
        self.link_retry_count: Optional[int] = None
        self.cluster_info: str = ""
        self.output_max_size: Optional[int] = None
        self.mem_utilization: Optional[float] = 0.95
        self.buf_pool_cfg: str = ""
        self.mem_pool_cfg: str = ""
        self.host_mem_pool_cfg: str = ""
        self.enable_cache_manager: Optional[bool] = None
        self.enable_remote_cache_accessible: Optional[bool] = None
        self.rdma_traffic_class: Optional[int] = None
        self.rdma_service_level: Optional[int] = None
        self.local_comm_res: Optional[str] = None
        self.transfer_backend: Optional[str] = None
        self.global_resource_config: Optional[str] = None

    @property
    def options(self) -> Dict[str, str]:
        return self._options

    def generate_options(self) -> Dict[str, str]:
        o = self._options
        o.update(self.ge_options or {})
        if self.device_id is not None:
            if isinstance(self.device_id, int):
                o["ge.exec.deviceId"] = str(self.device_id)
                o["ge.session_device_id"] = str(self.device_id)
            else:
                o["ge.session_device_id"] = str(self.device_id[0])
                o["ge.exec.deviceId"] = ";".join(str(d) for d in self.device_id)
        if self.sync_kv_timeout is not None:
            o["llm.SyncKvCacheWaitTime"] = str(self.sync_kv_timeout)
        if self.deploy_res_path:
            o["llm.deployResPath"] = str(self.deploy_res_path)
        if self.buf_pool_cfg:
            o["llm.BufPoolCfg"] = str(self.buf_pool_cfg)
        if self.mem_pool_cfg:
            o["llm.MemPoolConfig"] = str(self.mem_pool_cfg)
        if self.host_mem_pool_cfg:
            o["llm.HostMemPoolConfig"] = str(self.host_mem_pool_cfg)
        if self.enable_cache_manager is not None:
            o["llm.EnableCacheManager"] = "1" if self.enable_cache_manager else "0"
        if self.enable_remote_cache_accessible is not None:
            o["llm.EnableRemoteCacheAccessible"] = "1" if self.enable_remote_cache_accessible else "0"
        if self.listen_ip_info:
            o["llm.listenIpInfo"] = str(self.listen_ip_info)
        if self.link_total_time is not None:
            o["llm.LinkTotalTime"] = str(self.link_total_time)
        if self.link_retry_count is not None:
            o["llm.LinkRetryCount"] = str(self.link_retry_count)
        if self.rdma_traffic_class is not None:
            o["llm.RdmaTrafficClass"] = str(self.rdma_traffic_class)
        if self.rdma_service_level is not None:
            o["llm.RdmaServiceLevel"] = str(self.rdma_service_level)
        if self.local_comm_res is not None:
            o["llm.LocalCommRes"] = str(self.local_comm_res)
        if self.transfer_backend is not None:
            o["llm.TransferBackend"] = str(self.transfer_backend)
        if self.global_resource_config is not None:
            o["llm.GlobalResourceConfig"] = str(self.global_resource_config)
        if self.cluster_info:
            o["llm.ClusterInfo"] = str(self.cluster_info)
        if self.output_max_size is not None:
            o["llm.OutputMaxSize"] = str(self.output_max_size)
        if self.enable_switch_role:
            o["llm.EnableSwitchRole"] = "1"
        if self.mem_utilization is not None:
            o["llm.MemoryUtilization"] = str(self.mem_utilization)
        return o

    gen_options = generate_options


LlmConfig = LLMConfig
