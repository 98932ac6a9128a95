//! What a device may allocate: passed in by the caller, read from the settings at the FFI edge.

/// Per-device settings the device layer passes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of device memory one device may have allocated at once.
    pub capacity: u64,
    /// Hand out inaccessible user views of device memory (`ASCENDLESS_STRICT_DEVICE_MEMORY=1`).
    pub strict: bool,
}

impl Limits {
    /// The limits of the machine `s` describes (`ASCENDLESS_DEVICE_MEMORY`,
    /// `ASCENDLESS_STRICT_DEVICE_MEMORY`).
    pub fn of(s: &crate::config::Settings) -> Limits {
        Limits { capacity: s.device_memory, strict: s.strict_device_memory }
    }
}
