"""Statuses and the exception of ``llm_datadist``: the vendor's names and numbers.

The numbers are those of ``ge/llm_error_codes.h`` (the 0x5010B000 family) and the two runtime
codes the vendor's package adds; a failed call raises :class:`LLMException` whose
``status_code`` is one of :class:`LLMStatusCode` and whose message includes the library's own
(``aclGetRecentErrMsg``).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["LLMStatusCode", "LLMException", "Status", "code_2_status"]


class LLMStatusCode(IntEnum):
    LLM_SUCCESS = 0
    LLM_FAILED = 0xFFFFFFFF
    LLM_WAIT_PROCESS_TIMEOUT = 0x5010B001
    LLM_KV_CACHE_NOT_EXIST = 0x5010B002
    LLM_REPEAT_REQUEST = 0x5010B003
    LLM_REQUEST_ALREADY_COMPLETED = 0x5010B004
    LLM_PARAM_INVALID = 0x5010B005
    LLM_ENGINE_FINALIZED = 0x5010B006
    LLM_NOT_YET_LINK = 0x5010B007
    LLM_ALREADY_LINK = 0x5010B008
    LLM_LINK_FAILED = 0x5010B009
    LLM_UNLINK_FAILED = 0x5010B00A
    LLM_NOTIFY_PROMPT_UNLINK_FAILED = 0x5010B00B
    LLM_CLUSTER_NUM_EXCEED_LIMIT = 0x5010B00C
    LLM_PROCESSING_LINK = 0x5010B00D
    LLM_DEVICE_OUT_OF_MEMORY = 0x5010B00E
    LLM_PREFIX_ALREADY_EXIST = 0x5010B00F
    LLM_PREFIX_NOT_EXIST = 0x5010B010
    LLM_SEQ_LENOVERLIMIT = 0x5010B011
    LLM_NO_FREE_BLOCK = 0x5010B012
    LLM_BLOCKS_OUT_OF_MEMORY = 0x5010B013
    LLM_EXIST_LINK = 0x5010B018
    LLM_FEATURE_NOT_ENABLED = 0x5010B019
    LLM_TIMEOUT = 0x5010B01A
    LLM_LINK_BUSY = 0x5010B01B
    LLM_OUT_OF_MEMORY = 0x5010B01C
    LLM_DEVICE_MEM_ERROR = 507053
    LLM_SUSPECT_REMOTE_ERROR = 507057
    LLM_UNKNOWN_ERROR = -1

    def __str__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"


class LLMException(RuntimeError):
    """A failed call: ``status_code`` says which way it failed."""

    def __init__(self, *args: object, status_code: LLMStatusCode = LLMStatusCode.LLM_SUCCESS) -> None:
        super().__init__(*args)
        self._status_code = status_code

    @property
    def status_code(self) -> LLMStatusCode:
        return self._status_code


class Status:
    def __init__(self, status: LLMStatusCode) -> None:
        self._status_code = status

    def is_ok(self) -> bool:
        return self._status_code == LLMStatusCode.LLM_SUCCESS

    @property
    def status_code(self) -> LLMStatusCode:
        return self._status_code


def code_2_status(code: int) -> LLMStatusCode:
    """The status of a library code; codes it does not know are LLM_FAILED, as the vendor's."""
    try:
        return LLMStatusCode(code)
    except ValueError:
        return LLMStatusCode.LLM_FAILED


def raise_if(pred: bool, message: str, status_code: LLMStatusCode = LLMStatusCode.LLM_PARAM_INVALID) -> None:
    if pred:
        raise LLMException(message, status_code=status_code)


def not_enabled(what: str, why: str) -> LLMException:
    return LLMException(f"{what} is not supported: {why}", status_code=LLMStatusCode.LLM_FEATURE_NOT_ENABLED)
