//! Copies to and from addresses nobody vouches for, without risking a crash.
//!
//! The ADXL relay path receives addresses from a remote engine that only *claim* to be valid
//! host memory of this process (the seed: "users must ensure that the addresses are valid").
//! Touching them directly would turn a peer's mistake into a segmentation fault. Instead the
//! kernel copies with `process_vm_readv`/`process_vm_writev` on our own pid: an address that is
//! not mapped, or not writable, comes back as `EFAULT`.
//!
//! `process_vm_readv`/`process_vm_writev` are called through `libc`: rustix does not wrap them.

use std::io;

fn own_pid() -> libc::pid_t {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// Copies `out.len()` bytes from address `addr` of this process into `out`; an unmapped or
/// unreadable range is an error (`EFAULT`), never a fault.
pub fn read(addr: usize, out: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < out.len() {
        let local = libc::iovec { iov_base: out[done..].as_mut_ptr().cast(), iov_len: out.len() - done };
        let remote = libc::iovec { iov_base: (addr + done) as *mut libc::c_void, iov_len: out.len() - done };
        // SAFETY: `local` describes the exclusively borrowed slice `out[done..]`; the remote
        // iovec is only an address the kernel checks (it is never dereferenced by us), and the
        // kernel reports a bad one as EFAULT instead of faulting.
        let n = unsafe { libc::process_vm_readv(own_pid(), &local, 1, &remote, 1, 0) };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(io::Error::from_raw_os_error(libc::EFAULT)),
            _ => return Err(io::Error::last_os_error()),
        }
    }
    Ok(())
}

/// Copies `data` to address `addr` of this process; an unmapped or read-only range is an
/// error (`EFAULT`), never a fault.
pub fn write(addr: usize, data: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        let local =
            libc::iovec { iov_base: data[done..].as_ptr() as *mut libc::c_void, iov_len: data.len() - done };
        let remote = libc::iovec { iov_base: (addr + done) as *mut libc::c_void, iov_len: data.len() - done };
        // SAFETY: `local` describes the borrowed slice `data[done..]`, which the kernel only
        // reads; the remote address is checked by the kernel (EFAULT when not writable).
        let n = unsafe { libc::process_vm_writev(own_pid(), &local, 1, &remote, 1, 0) };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(io::Error::from_raw_os_error(libc::EFAULT)),
            _ => return Err(io::Error::last_os_error()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_memory_is_copied_both_ways() {
        let src = vec![7u8; 10000];
        let mut out = vec![0u8; 10000];
        read(src.as_ptr() as usize, &mut out).unwrap();
        assert_eq!(out, src);
        let mut dst = vec![0u8; 5];
        write(dst.as_mut_ptr() as usize, &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(dst, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn bad_addresses_are_efault_not_a_crash() {
        let mut out = [0u8; 16];
        for addr in [8usize, 0xdead_0000, usize::MAX - 64] {
            assert_eq!(read(addr, &mut out).unwrap_err().raw_os_error(), Some(libc::EFAULT), "{addr:#x}");
            assert_eq!(write(addr, &out).unwrap_err().raw_os_error(), Some(libc::EFAULT), "{addr:#x}");
        }
        // Read-only memory (a string literal in .rodata) cannot be written.
        let ro = b"constant".as_ptr() as usize;
        assert!(write(ro, b"x").is_err());
    }
}

/// Which way [`peer_copy`] moves bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerDirection {
    /// From the peer's address into the local span (`process_vm_readv`).
    Read,
    /// From the local span to the peer's address (`process_vm_writev`).
    Write,
}

/// Copies between `local` (memory of this process) and `[remote, remote + local.len())` of
/// process `pid`, with the kernel's cross-process copy. Errors are the kernel's: `EPERM` when
/// ptrace rules forbid it, `ESRCH` when the process is gone, `EFAULT` for a bad address.
pub fn peer_copy(
    pid: i32,
    dir: PeerDirection,
    local: &super::span::RawSpan,
    remote: usize,
) -> io::Result<()> {
    assert!(dir == PeerDirection::Write || local.is_writable(), "a read into a read-only span");
    let len = local.len();
    let mut done = 0;
    while done < len {
        let l = libc::iovec { iov_base: (local.addr() + done) as *mut libc::c_void, iov_len: len - done };
        let r = libc::iovec { iov_base: (remote + done) as *mut libc::c_void, iov_len: len - done };
        // SAFETY: `l` describes the span's own bytes, valid (and, for a read, writable) for
        // `len` bytes while the span exists (its constructors' contract); the remote iovec is
        // an address of another process that only the kernel uses, reporting bad ones as
        // EFAULT.
        let n = unsafe {
            match dir {
                PeerDirection::Read => libc::process_vm_readv(pid, &l, 1, &r, 1, 0),
                PeerDirection::Write => libc::process_vm_writev(pid, &l, 1, &r, 1, 0),
            }
        };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(io::Error::from_raw_os_error(libc::EFAULT)),
            _ => return Err(io::Error::last_os_error()),
        }
    }
    Ok(())
}
