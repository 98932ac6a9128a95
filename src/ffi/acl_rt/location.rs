//! `acl/acl_rt.h`: where memory lives (`aclrtMemLocation`), shared by the pointer attributes
//! and the virtual-memory family.
//!
//! The `type` field is stored as a plain integer (`MemLocationTypeArg`, shown in the header as
//! `aclrtMemLocationType`): a C caller may write any value into a struct it passes in, and a
//! Rust enum holding an undeclared value would be undefined behaviour.

/// An `aclrtMemLocationType` value as stored in a struct (any integer).
pub type MemLocationTypeArg = u32;

/// Where memory lives.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum aclrtMemLocationType {
    /// Host memory the runtime knows: `aclrtMallocHost`, or host memory registered with
    /// `aclrtHostRegister`.
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    /// Device memory: `aclrtMalloc`, or imported IPC memory.
    ACL_MEM_LOCATION_TYPE_DEVICE = 1,
    /// Memory the runtime does not know (`malloc`, the stack...).
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2,
    /// Unified (managed) memory.
    ACL_MEM_LOCATION_TYPE_MANAGED = 3,
    /// Host memory of a NUMA node (`aclrtMallocPhysical`).
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4,
}

/// A place memory lives: a device id or NUMA id, and the kind of place.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemLocation {
    /// Device id for device memory, NUMA id for NUMA host memory; 0 otherwise.
    pub id: u32,
    pub r#type: MemLocationTypeArg,
}

impl aclrtMemLocation {
    pub fn new(r#type: aclrtMemLocationType, id: u32) -> aclrtMemLocation {
        aclrtMemLocation { id, r#type: r#type as MemLocationTypeArg }
    }
}
