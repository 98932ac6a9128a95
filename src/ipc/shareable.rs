//! Shareable ids: the 64-bit value `aclrtMemExportToShareableHandle` hands out.
//!
//! The vendor's shareable handle is a `uint64_t`, plain data the user passes to another process
//! any way they like (a file, a pipe). An IPC key (pid, 64-bit broker token, 128-bit secret) does
//! not fit in it, so the exporter's broker *publishes* an export under an id and keeps the table
//! from id to export:
//!
//! ```text
//! bit 63 ........ 42 41 ..................... 0
//!     exporter pid     42 random bits (kernel CSPRNG)
//! ```
//!
//! Linux pids are below 2^22 (`PID_MAX_LIMIT`), so the pid always fits. The importer learns
//! from the pid where to ask: every broker also listens on a *directory* socket named after its
//! pid alone ([`directory_name`]), and the importer checks with the kernel (`SO_PEERCRED`) that
//! the process answering there is that pid, so another process squatting the name gets
//! nothing. The random bits are drawn per export and never reused within a process; a dead
//! exporter's ids die with its broker (a later process with the same pid does not know them).
//!
//! How much the 42 bits are worth is in `docs/security.md`: with pid validation (the default)
//! the kernel's word on the importer's pid decides and the id is only a name; without it, the
//! id is the only secret between processes of the same user, which could read each other's
//! memory anyway.

/// Bits of the id that hold the exporter's pid (the rest are random).
pub const PID_BITS: u32 = 22;
/// Bits of the id that are random.
pub const RANDOM_BITS: u32 = 64 - PID_BITS;
const RANDOM_MASK: u64 = (1 << RANDOM_BITS) - 1;

/// The id for an export of process `pid` with random bits `random` (only the low
/// [`RANDOM_BITS`] are used); `None` if the pid does not fit.
pub fn make_id(pid: u32, random: u64) -> Option<u64> {
    (pid != 0 && pid < 1 << PID_BITS).then(|| (u64::from(pid) << RANDOM_BITS) | (random & RANDOM_MASK))
}

/// The exporting process's pid an id names; `None` for a value no exporter made (pid 0).
pub fn exporter_of(id: u64) -> Option<u32> {
    let pid = (id >> RANDOM_BITS) as u32;
    (pid != 0).then_some(pid)
}

/// The abstract socket name on which the broker of process `pid` takes id requests.
pub fn directory_name(pid: u32) -> Vec<u8> {
    format!("ascendless-ipc-id/{pid:x}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_the_pid_and_42_random_bits() {
        let id = make_id(4_194_303, u64::MAX).unwrap();
        assert_eq!(exporter_of(id), Some(4_194_303));
        assert_eq!(id & RANDOM_MASK, RANDOM_MASK);
        assert_eq!(exporter_of(make_id(1, 0).unwrap()), Some(1));
        assert!(make_id(1 << 22, 0).is_none() && make_id(0, 5).is_none());
        assert_eq!(exporter_of(12345), None, "a small number names no exporter");
        assert_ne!(directory_name(0x10), directory_name(0x11));
        assert!(directory_name(u32::MAX).len() <= crate::sys::socket::MAX_NAME);
    }
}
