//! Where an allocation lives, and which free function it takes.

/// Where an allocation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Device memory of this device id (`aclrtMalloc`, or imported IPC memory).
    Device(i32),
    /// Pinned host memory (`aclrtMallocHost`).
    Host,
    /// Managed (unified) memory of `aclrtMemAllocManaged`, made while this device was current:
    /// host code and every runtime copy may use it as host and as device memory alike.
    /// It is freed with `aclrtFree` and counts against no device's capacity.
    Managed(i32),
}

/// Which free function the caller used: `aclrtFree` frees device memory of any device,
/// `aclrtFreeHost` pinned host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    Host,
}
