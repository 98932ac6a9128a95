//! HCCL's result numbers (`HcclResult` of the vendor's `hccl/hccl_types.h`, hicann/hcomm), one
//! constant each and nowhere else, and the text `HcclGetErrorString` gives for each.

/// Result of every HCCL call (`HcclResult` in C).
pub type HcclResult = i32;

pub const HCCL_SUCCESS: HcclResult = 0;
pub const HCCL_E_PARA: HcclResult = 1;
pub const HCCL_E_PTR: HcclResult = 2;
pub const HCCL_E_MEMORY: HcclResult = 3;
pub const HCCL_E_INTERNAL: HcclResult = 4;
pub const HCCL_E_NOT_SUPPORT: HcclResult = 5;
pub const HCCL_E_NOT_FOUND: HcclResult = 6;
pub const HCCL_E_UNAVAIL: HcclResult = 7;
pub const HCCL_E_SYSCALL: HcclResult = 8;
pub const HCCL_E_TIMEOUT: HcclResult = 9;
pub const HCCL_E_OPEN_FILE_FAILURE: HcclResult = 10;
pub const HCCL_E_TCP_CONNECT: HcclResult = 11;
pub const HCCL_E_ROCE_CONNECT: HcclResult = 12;
pub const HCCL_E_TCP_TRANSFER: HcclResult = 13;
pub const HCCL_E_ROCE_TRANSFER: HcclResult = 14;
pub const HCCL_E_RUNTIME: HcclResult = 15;
pub const HCCL_E_DRV: HcclResult = 16;
pub const HCCL_E_PROFILING: HcclResult = 17;
pub const HCCL_E_CCE: HcclResult = 18;
pub const HCCL_E_NETWORK: HcclResult = 19;
pub const HCCL_E_AGAIN: HcclResult = 20;
pub const HCCL_E_REMOTE: HcclResult = 21;
pub const HCCL_E_SUSPENDING: HcclResult = 22;
pub const HCCL_E_OPRETRY_FAIL: HcclResult = 23;
pub const HCCL_E_OOM: HcclResult = 24;
pub const HCCL_E_IN_STATUS: HcclResult = 1041;
pub const HCCL_E_RESERVED: HcclResult = 1042;

/// A failed HCCL call: the code the caller gets and the text the log and `aclGetRecentErrMsg`
/// carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (HCCL error {code})")]
pub struct HcclError {
    pub code: HcclResult,
    pub message: String,
}

impl HcclError {
    pub fn new(code: HcclResult, message: impl Into<String>) -> Self {
        HcclError { code, message: message.into() }
    }

    /// A bad argument (`HCCL_E_PARA`), the code of every argument check.
    pub fn para(message: impl Into<String>) -> Self {
        HcclError::new(HCCL_E_PARA, message)
    }
}
