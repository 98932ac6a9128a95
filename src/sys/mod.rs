//! The system-call layer: the only core code that talks to the kernel.
//!
//! Everything above this layer is safe Rust. Each type here owns one kernel resource and
//! releases it on drop, so the safe core cannot leak or double-release it:
//! - [`memfd::MemFd`]: an anonymous shareable file (the backing of every allocation, so a later
//!   IPC layer can hand the descriptor to another process);
//! - [`mapping::Mapping`]: a shared mapping of such a file at a chosen alignment;
//! - [`reservation::Reservation`]: inaccessible address space into which files are mapped at
//!   chosen places (virtual memory management);
//! - [`span::RawSpan`]: a byte range some owner promises is valid, the one way the safe core
//!   moves bytes between mappings and user memory;
//! - [`socket::Listener`] / [`socket::Conn`]: abstract-namespace Unix sockets that carry IPC
//!   requests, descriptors and the kernel's word on who the peer is;
//! - [`futex`]: cross-process wait and wake on a word of shared memory;
//! - [`random`]: the kernel's random numbers, for secrets;
//! - [`readiness::Readiness`]: waiting for any of many descriptors (`epoll`), for the one
//!   thread that waits for connections to every listening engine;
//! - [`safe_copy`]: copies at addresses nobody vouches for, where a bad one is `EFAULT`;
//! - [`stream_copy`]: large copies that write around the cache (non-temporal stores);
//! - [`word`]: a 64-bit word of shared memory that stream tasks write and sleep on;
//! - [`stream_io`]: TCP send and receive straight from and into a [`span::RawSpan`], and the
//!   few other socket calls `std` lacks (peeking for a closed peer, a listener's backlog);
//! - `ucx` (feature `ucx`): UCX one-sided get and put, through a C shim over the system's UCX.
//!
//! # rustix, and the few calls left on `libc`
//! System calls go through [rustix](https://docs.rs/rustix): typed flags, `Errno` results and
//! owned descriptors, so most of this layer needs no `unsafe` at all (mmap and friends still
//! do: they change what addresses mean). `libc` remains only where rustix does not fit:
//! - `process_vm_readv` / `process_vm_writev` (`safe_copy`): rustix has no wrapper for them;
//! - `getsockopt(SO_PEERCRED)` ([`socket::Conn::peer_credentials`]): rustix's `UCred` keeps
//!   the pid as a non-zero `Pid`, but the kernel answers 0 for a peer outside our pid
//!   namespace, which that type cannot hold;
//! - `send`, `recv`, `sendmsg` and `recvmsg` over a [`span::RawSpan`] ([`stream_io`]): rustix
//!   takes Rust slices (`&[u8]`, `IoSlice`), and a slice over user memory is exactly the
//!   reference the spans exist to avoid; these calls take the span's address instead.

pub mod futex;
pub mod mapping;
pub mod memfd;
pub(crate) mod random;
pub mod readiness;
pub mod reservation;
pub(crate) mod safe_copy;
pub mod sleepers;
pub mod socket;
pub mod span;
pub(crate) mod stream_copy;
pub mod stream_io;
#[cfg(feature = "ucx")]
pub mod ucx;
pub mod user_fd;
pub mod word;

/// The system page size (what every mapping is rounded to).
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// This process's effective user id (whom the kernel checks our access as).
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// CPU time (user and system, every thread) this process has used so far (`getrusage`); zero
/// if the kernel refuses to say.
pub fn cpu_time() -> std::time::Duration {
    // SAFETY: `rusage` is plain integers, for which all zeroes is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a `rusage` for the call to fill.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return std::time::Duration::ZERO;
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    std::time::Duration::from_micros(us(u.ru_utime) + us(u.ru_stime))
}

/// The kernel's id of the calling thread (what `ps -L` and the vendor's exception info show).
pub fn thread_id() -> u32 {
    thread_local! {
        static TID: u32 = u32::try_from(rustix::thread::gettid().as_raw_nonzero().get()).unwrap_or(0);
    }
    TID.try_with(|t| *t).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_size_is_a_power_of_two_of_at_least_4_kib() {
        let p = super::page_size();
        assert!(p.is_power_of_two() && p >= 4096, "{p}");
    }
}
