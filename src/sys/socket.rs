//! Unix-domain sockets in Linux's abstract namespace: the transport between an exporting and an
//! importing process.
//!
//! # Why `SOCK_SEQPACKET`
//! A sequenced-packet socket is connection-oriented like a stream (so the kernel records the
//! peer's credentials at `connect`, and closing one end is seen by the other: the "lifeline" an
//! import keeps open) but delivers whole messages like a datagram socket. Every request and
//! reply is one `recvmsg`: no framing code, no partial reads, and a descriptor passed with
//! `SCM_RIGHTS` arrives with exactly the message it was sent with. A hostile peer cannot stall a
//! reader by sending half a message, so the broker can serve many connections from one thread.
//!
//! # Why the abstract namespace
//! A name starting with NUL lives in the kernel only: nothing is created in the file system, so
//! nothing is left behind when a process is killed, and the name disappears with the last
//! descriptor of the listening socket.
//!
//! # Bounds
//! Nothing here blocks without a bound the caller chose: [`Conn::connect`] takes a timeout,
//! reads and writes honour [`Conn::set_read_timeout`] / [`Conn::set_write_timeout`], and the
//! `try_` variants never block. Every descriptor, including received ones, is an [`OwnedFd`]
//! from the moment the kernel hands it over, so no error path leaks one.

use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Longest abstract name: `sun_path` holds 108 bytes and the first is the NUL.
pub const MAX_NAME: usize = 107;

/// Most descriptors one message may carry (the protocol sends at most one; the kernel's own
/// limit is 253).
pub const MAX_FDS: usize = 8;

/// Who is at the other end of a connection, as the kernel recorded it when the connection was
/// made (`SO_PEERCRED`): not something the peer claims. The pid is as seen from this process's
/// pid namespace (0 if the peer is not visible in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCredentials {
    pub pid: i32,
    pub uid: u32,
    pub gid: u32,
}

/// One received message: `len` bytes at the start of the caller's buffer, and the descriptors
/// that came with it (already close-on-exec).
#[derive(Debug)]
pub struct Message {
    pub len: usize,
    pub fds: Vec<OwnedFd>,
}

/// A listening socket bound to an abstract name. Non-blocking: [`Listener::accept`] waits with
/// `poll`, so a serving thread can time out and do other work (or stop).
#[derive(Debug)]
pub struct Listener {
    fd: OwnedFd,
}

/// A connected sequenced-packet socket.
#[derive(Debug)]
pub struct Conn {
    fd: OwnedFd,
}

impl Listener {
    /// Binds `name` (without the leading NUL) in the abstract namespace and listens with room
    /// for `backlog` connections not yet accepted. `AddrInUse` if another socket holds the name.
    pub fn bind(name: &[u8], backlog: u32) -> io::Result<Listener> {
        let (addr, addr_len) = abstract_address(name)?;
        let fd = new_socket(libc::SOCK_NONBLOCK)?;
        // SAFETY: `addr` is a properly initialised sockaddr_un and `addr_len` does not exceed
        // its size; the descriptor is open (owned by `fd`).
        cvt(unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), addr_len) })?;
        let backlog = libc::c_int::try_from(backlog).unwrap_or(libc::c_int::MAX);
        // SAFETY: listen on an open, bound socket has no memory-safety preconditions.
        cvt(unsafe { libc::listen(fd.as_raw_fd(), backlog) })?;
        Ok(Listener { fd })
    }

    /// Waits up to `timeout` (`None`: forever) for a connection and accepts it; `None` if none
    /// came (or a signal interrupted the wait).
    pub fn accept(&self, timeout: Option<Duration>) -> io::Result<Option<Conn>> {
        if !poll_one(self.fd.as_fd(), timeout)? {
            return Ok(None);
        }
        self.try_accept()
    }

    /// Accepts a pending connection without waiting; `None` if there is none.
    pub fn try_accept(&self) -> io::Result<Option<Conn>> {
        // SAFETY: accept4 on an open listening socket, with NULL address outputs (allowed).
        let fd = unsafe {
            libc::accept4(self.fd.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC)
        };
        if fd < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                // Nothing pending, a signal, or a client that gave up before we got to it.
                Some(libc::EAGAIN | libc::EINTR | libc::ECONNABORTED) => Ok(None),
                _ => Err(err),
            };
        }
        // SAFETY: accept4 just returned this descriptor; nothing else owns it.
        Ok(Some(Conn { fd: unsafe { OwnedFd::from_raw_fd(fd) } }))
    }
}

impl AsFd for Listener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Conn {
    /// Connects to the abstract `name`, waiting at most `timeout` for room in the listener's
    /// backlog. `ConnectionRefused` if nothing listens there (e.g. the process exited),
    /// `TimedOut` if the listener did not make room in time.
    pub fn connect(name: &[u8], timeout: Duration) -> io::Result<Conn> {
        let (addr, addr_len) = abstract_address(name)?;
        let conn = Conn { fd: new_socket(0)? };
        let deadline = Instant::now() + timeout;
        loop {
            // A Unix-socket connect waits for backlog room for as long as the send timeout.
            conn.set_write_timeout(Some(deadline.saturating_duration_since(Instant::now())))?;
            // SAFETY: `addr` is a properly initialised sockaddr_un of at least `addr_len`
            // bytes; the descriptor is open.
            let ret = unsafe { libc::connect(conn.fd.as_raw_fd(), (&raw const addr).cast(), addr_len) };
            if ret == 0 {
                return Ok(conn);
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                // A connect interrupted while waiting for room did nothing: try again.
                Some(libc::EINTR) if Instant::now() < deadline => continue,
                Some(libc::EISCONN) => return Ok(conn),
                Some(libc::EAGAIN | libc::EINTR) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the listener's backlog stayed full until the timeout",
                    ));
                }
                _ => return Err(err),
            }
        }
    }

    /// A connected pair (`socketpair`), for tests and in-process links.
    pub fn pair() -> io::Result<(Conn, Conn)> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
        cvt(unsafe {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
        })?;
        // SAFETY: socketpair succeeded, so both descriptors are open and owned by nobody else.
        Ok(unsafe { (Conn { fd: OwnedFd::from_raw_fd(fds[0]) }, Conn { fd: OwnedFd::from_raw_fd(fds[1]) }) })
    }

    /// Bounds every blocking receive (`None`: no bound). A receive that runs out of time fails
    /// with `TimedOut`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        set_timeout(self.fd.as_fd(), libc::SO_RCVTIMEO, timeout)
    }

    /// Bounds every blocking send (`None`: no bound). A send that runs out of time fails with
    /// `TimedOut`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        set_timeout(self.fd.as_fd(), libc::SO_SNDTIMEO, timeout)
    }

    /// Sends `data` as one message, with `fds` attached, waiting at most the write timeout.
    /// `data` must not be empty (the receiver could not tell it from a closed connection).
    pub fn send(&self, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        self.send_with(data, fds, 0)
    }

    /// As [`Conn::send`], but fails with `WouldBlock` instead of waiting for buffer space.
    pub fn try_send(&self, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        self.send_with(data, fds, libc::MSG_DONTWAIT)
    }

    /// Receives one message into `buf` with at most `max_fds` descriptors, waiting at most the
    /// read timeout. `None` when the peer has closed the connection. Fails (closing whatever
    /// descriptors came) if the message is longer than `buf`, carries more than `max_fds`
    /// descriptors, or its control data was truncated.
    pub fn recv(&self, buf: &mut [u8], max_fds: usize) -> io::Result<Option<Message>> {
        self.recv_with(buf, max_fds, 0)
    }

    /// As [`Conn::recv`], but fails with `WouldBlock` instead of waiting for a message.
    pub fn try_recv(&self, buf: &mut [u8], max_fds: usize) -> io::Result<Option<Message>> {
        self.recv_with(buf, max_fds, libc::MSG_DONTWAIT)
    }

    /// Waits up to `timeout` (`None`: forever) until a message, the peer's close or an error is
    /// pending. False on timeout or when a signal interrupted the wait.
    pub fn wait_readable(&self, timeout: Option<Duration>) -> io::Result<bool> {
        poll_one(self.fd.as_fd(), timeout)
    }

    /// Whether the peer has closed its end (checked without waiting).
    pub fn peer_closed(&self) -> bool {
        let mut p = [libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLRDHUP, revents: 0 }];
        // SAFETY: `p` is a valid array of one pollfd; a zero timeout never blocks.
        let n = unsafe { libc::poll(p.as_mut_ptr(), 1, 0) };
        n > 0 && p[0].revents & (libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR) != 0
    }

    /// The peer's pid, uid and gid as the kernel recorded them at connect time.
    pub fn peer_credentials(&self) -> io::Result<PeerCredentials> {
        let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
        let mut len = mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` is a writable ucred and `len` holds its exact size; the kernel writes
        // at most `len` bytes and updates `len`.
        cvt(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&raw mut cred).cast(),
                &mut len,
            )
        })?;
        if len as usize != mem::size_of::<libc::ucred>() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "short SO_PEERCRED answer"));
        }
        Ok(PeerCredentials { pid: cred.pid, uid: cred.uid, gid: cred.gid })
    }

    fn send_with(&self, data: &[u8], fds: &[BorrowedFd<'_>], flags: libc::c_int) -> io::Result<()> {
        if data.is_empty() || fds.len() > MAX_FDS {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty message or too many descriptors"));
        }
        let raw: Vec<RawFd> = fds.iter().map(|fd| fd.as_raw_fd()).collect();
        let mut control = ControlBuffer::new(raw.len());
        let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
        // SAFETY: msghdr is plain data; all-zero is a valid empty header, completed below.
        let mut msg: libc::msghdr = unsafe { mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !raw.is_empty() {
            msg.msg_control = control.as_mut_ptr();
            msg.msg_controllen = control.len() as _;
            // SAFETY: the control buffer is aligned for cmsghdr (u64 storage) and CMSG_SPACE
            // big for `raw.len()` descriptors, so CMSG_FIRSTHDR is non-NULL and the header plus
            // CMSG_LEN(4 * n) bytes of data lie inside it; the data may be unaligned for ints,
            // hence the byte copy.
            unsafe {
                let cmsg = libc::CMSG_FIRSTHDR(&msg);
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN(fd_bytes(raw.len())) as _;
                std::ptr::copy_nonoverlapping(
                    raw.as_ptr().cast::<u8>(),
                    libc::CMSG_DATA(cmsg),
                    raw.len() * mem::size_of::<RawFd>(),
                );
            }
        }
        loop {
            // SAFETY: `msg` points at `iov` (over `data`, only read) and at `control`, all alive
            // for the call; the descriptors it names are borrowed, hence open. MSG_NOSIGNAL: a
            // closed peer gives EPIPE instead of killing the process with SIGPIPE.
            let n = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &msg, flags | libc::MSG_NOSIGNAL) };
            if n >= 0 {
                // A sequenced packet is sent whole or not at all.
                return Ok(());
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) if flags & libc::MSG_DONTWAIT == 0 => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "send timed out"));
                }
                _ => return Err(err),
            }
        }
    }

    fn recv_with(&self, buf: &mut [u8], max_fds: usize, flags: libc::c_int) -> io::Result<Option<Message>> {
        let max_fds = max_fds.min(MAX_FDS);
        let mut control = ControlBuffer::new(max_fds);
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        // SAFETY: msghdr is plain data; all-zero is a valid empty header, completed below.
        let mut msg: libc::msghdr = unsafe { mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if max_fds > 0 {
            msg.msg_control = control.as_mut_ptr();
            msg.msg_controllen = control.len() as _;
        }
        let n = loop {
            // SAFETY: `msg` points at `iov` (over `buf`, exclusively borrowed) and at `control`,
            // both writable for their stated lengths and alive for the call.
            // MSG_CMSG_CLOEXEC: received descriptors are never inherited by a child we spawn.
            let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, flags | libc::MSG_CMSG_CLOEXEC) };
            if n >= 0 {
                break n as usize;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) if flags & libc::MSG_DONTWAIT == 0 => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "receive timed out"));
                }
                _ => return Err(err),
            }
        };
        // Take ownership of every descriptor first, so that each early return below closes them.
        let fds = if max_fds > 0 { take_fds(&msg) } else { Vec::new() };
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "control data truncated (too many descriptors)",
            ));
        }
        if msg.msg_flags & libc::MSG_TRUNC != 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "message longer than the receive buffer"));
        }
        if fds.len() > max_fds {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "more descriptors than expected"));
        }
        if n == 0 && fds.is_empty() {
            // Senders never send empty messages (see `send`): this is the peer's close.
            return Ok(None);
        }
        Ok(Some(Message { len: n, fds }))
    }
}

impl AsFd for Conn {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Waits up to `timeout` (`None`: forever) for any of `fds` to have something to do: a
/// message, a pending connection, the peer's close, or an error. Returns one flag per
/// descriptor; all false on timeout or when a signal interrupted the wait.
pub fn poll_ready(fds: &[BorrowedFd<'_>], timeout: Option<Duration>) -> io::Result<Vec<bool>> {
    let mut p: Vec<libc::pollfd> =
        fds.iter().map(|fd| libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
    let nfds = libc::nfds_t::try_from(p.len()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `p` is a valid array of `nfds` pollfds that the kernel may write revents into;
    // every descriptor is borrowed, hence open.
    let n = unsafe { libc::poll(p.as_mut_ptr(), nfds, poll_timeout(timeout)) };
    if n < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; p.len()]);
        }
        return Err(err);
    }
    Ok(p.iter().map(|p| p.revents != 0).collect())
}

fn poll_one(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    Ok(poll_ready(&[fd], timeout)?[0])
}

/// Milliseconds for poll, rounded up so a short wait never becomes a busy loop.
fn poll_timeout(timeout: Option<Duration>) -> libc::c_int {
    match timeout {
        None => -1,
        Some(t) => {
            let ms = t.as_nanos().div_ceil(1_000_000);
            libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
        }
    }
}

fn new_socket(extra_flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket takes no pointers.
    let fd =
        unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | extra_flags, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socket just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn abstract_address(name: &[u8]) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "abstract socket name of 1..=107 bytes"));
    }
    let mut addr = libc::sockaddr_un { sun_family: libc::AF_UNIX as libc::sa_family_t, sun_path: [0; 108] };
    // sun_path[0] stays NUL: that is what makes the name abstract.
    for (dst, &src) in addr.sun_path[1..].iter_mut().zip(name) {
        *dst = src as libc::c_char;
    }
    // The length, not a terminator, ends an abstract name: exactly the bytes given.
    let len = mem::offset_of!(libc::sockaddr_un, sun_path) + 1 + name.len();
    Ok((addr, len as libc::socklen_t))
}

fn set_timeout(fd: BorrowedFd<'_>, option: libc::c_int, timeout: Option<Duration>) -> io::Result<()> {
    let tv = match timeout {
        // A zero timeval means "no timeout" to the kernel: zero or tiny bounds become 1 µs.
        Some(t) => libc::timeval {
            tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_usec: t.subsec_micros().max(u32::from(t.as_secs() == 0)) as libc::suseconds_t,
        },
        None => libc::timeval { tv_sec: 0, tv_usec: 0 },
    };
    // SAFETY: `tv` is a valid timeval and the length passed is its size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&raw const tv).cast(),
            mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    })
    .map(drop)
}

fn fd_bytes(n: usize) -> libc::c_uint {
    (n * mem::size_of::<RawFd>()) as libc::c_uint
}

/// Takes ownership of every descriptor in the `SCM_RIGHTS` messages of `msg`.
fn take_fds(msg: &libc::msghdr) -> Vec<OwnedFd> {
    let mut fds = Vec::new();
    // SAFETY: `msg` was just filled by recvmsg; its control pointer and (kernel-updated)
    // length describe our ControlBuffer, which the CMSG_* walk never leaves. Each SCM_RIGHTS
    // payload holds `(cmsg_len - CMSG_LEN(0)) / 4` descriptors the kernel installed for this
    // process, which nothing else owns; they are read unaligned.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let bytes = ((*cmsg).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize);
                for i in 0..bytes / mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    fds
}

/// Control-message space for `n` descriptors, aligned for `cmsghdr`.
struct ControlBuffer(Vec<u64>);

impl ControlBuffer {
    fn new(n: usize) -> Self {
        // SAFETY: CMSG_SPACE is pure arithmetic on its argument.
        let bytes = unsafe { libc::CMSG_SPACE(fd_bytes(n)) } as usize;
        ControlBuffer(vec![0u64; bytes.div_ceil(8)])
    }

    fn as_mut_ptr(&mut self) -> *mut libc::c_void {
        self.0.as_mut_ptr().cast()
    }

    fn len(&self) -> usize {
        self.0.len() * 8
    }
}

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 { Err(io::Error::last_os_error()) } else { Ok(ret) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::memfd::MemFd;

    fn unique_name(tag: &str) -> Vec<u8> {
        format!("ascendless-test-{tag}-{}-{:x}", std::process::id(), crate::sys::random::u64().unwrap())
            .into_bytes()
    }

    #[test]
    fn messages_arrive_whole_with_their_descriptors() {
        let (a, b) = Conn::pair().unwrap();
        let file = MemFd::create("ascendless-test", 4096).unwrap();
        a.send(b"hello", &[file.as_fd()]).unwrap();
        a.send(b"second", &[]).unwrap();
        let mut buf = [0u8; 64];
        let m = b.recv(&mut buf, 1).unwrap().unwrap();
        assert_eq!(&buf[..m.len], b"hello");
        assert_eq!(m.fds.len(), 1);
        let received = MemFd::from(m.fds.into_iter().next().unwrap());
        assert_eq!(received.size().unwrap(), 4096);
        // SAFETY: F_GETFD on an open descriptor only reads its flags.
        let flags = unsafe { libc::fcntl(received.as_fd().as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC, "received descriptors are close-on-exec");
        let m = b.recv(&mut buf, 1).unwrap().unwrap();
        assert_eq!(&buf[..m.len], b"second");
        assert!(m.fds.is_empty());
    }

    #[test]
    fn a_close_is_none_and_empty_messages_are_refused() {
        let (a, b) = Conn::pair().unwrap();
        assert_eq!(a.send(b"", &[]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert!(!b.peer_closed());
        drop(a);
        assert!(b.peer_closed());
        assert!(b.recv(&mut [0u8; 8], 0).unwrap().is_none());
    }

    #[test]
    fn oversized_messages_and_unexpected_descriptors_are_refused() {
        let (a, b) = Conn::pair().unwrap();
        a.send(&[1u8; 32], &[]).unwrap();
        assert_eq!(b.recv(&mut [0u8; 16], 0).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // Descriptors where none are expected: the kernel drops them, we report truncation.
        let file = MemFd::create("ascendless-test", 4096).unwrap();
        a.send(b"x", &[file.as_fd()]).unwrap();
        assert_eq!(b.recv(&mut [0u8; 16], 0).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // More descriptors than asked for (but fitting the padded control buffer): refused.
        a.send(b"y", &[file.as_fd(), file.as_fd()]).unwrap();
        assert_eq!(b.recv(&mut [0u8; 16], 1).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // Far more than fit: truncated control data, refused.
        a.send(b"z", &[file.as_fd(); 6]).unwrap();
        assert_eq!(b.recv(&mut [0u8; 16], 1).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // The connection still works afterwards.
        a.send(b"ok", &[]).unwrap();
        assert_eq!(b.recv(&mut [0u8; 16], 1).unwrap().unwrap().len, 2);
    }

    #[test]
    fn reads_time_out_and_try_recv_never_blocks() {
        let (_a, b) = Conn::pair().unwrap();
        b.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let start = Instant::now();
        assert_eq!(b.recv(&mut [0u8; 8], 0).unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(15));
        assert_eq!(b.try_recv(&mut [0u8; 8], 0).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert!(!b.wait_readable(Some(Duration::from_millis(1))).unwrap());
    }

    #[test]
    fn listeners_accept_connections_by_abstract_name_and_report_credentials() {
        let name = unique_name("listen");
        let listener = Listener::bind(&name, 8).unwrap();
        assert!(listener.accept(Some(Duration::from_millis(5))).unwrap().is_none(), "nobody connected yet");
        let client = Conn::connect(&name, Duration::from_secs(1)).unwrap();
        let server = listener.accept(Some(Duration::from_secs(1))).unwrap().unwrap();
        let me = std::process::id() as i32;
        assert_eq!(server.peer_credentials().unwrap().pid, me);
        assert_eq!(client.peer_credentials().unwrap().pid, me);
        // SAFETY: getuid/getgid only read the process's credentials.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        assert_eq!(server.peer_credentials().unwrap(), PeerCredentials { pid: me, uid, gid });
        client.send(b"ping", &[]).unwrap();
        let mut buf = [0u8; 8];
        let m = server.recv(&mut buf, 0).unwrap().unwrap();
        assert_eq!(&buf[..m.len], b"ping");
        // The name is taken while the listener lives and free again after.
        assert_eq!(Listener::bind(&name, 8).unwrap_err().kind(), io::ErrorKind::AddrInUse);
        drop(listener);
        Listener::bind(&name, 8).unwrap();
    }

    #[test]
    fn connecting_to_a_name_nobody_holds_is_refused() {
        let err = Conn::connect(&unique_name("nobody"), Duration::from_millis(100)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn names_must_fit_sun_path() {
        assert_eq!(Listener::bind(b"", 1).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(Listener::bind(&[b'a'; MAX_NAME + 1], 1).unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn poll_reports_which_descriptors_are_ready() {
        let (a, b) = Conn::pair().unwrap();
        let (c, d) = Conn::pair().unwrap();
        a.send(b"x", &[]).unwrap();
        drop(c);
        let ready = poll_ready(&[b.as_fd(), d.as_fd(), a.as_fd()], Some(Duration::ZERO)).unwrap();
        assert_eq!(ready, [true, true, false]);
    }

    #[test]
    fn poll_timeouts_round_up() {
        assert_eq!(poll_timeout(None), -1);
        assert_eq!(poll_timeout(Some(Duration::ZERO)), 0);
        assert_eq!(poll_timeout(Some(Duration::from_micros(1))), 1);
        assert_eq!(poll_timeout(Some(Duration::from_secs(u64::MAX))), libc::c_int::MAX);
    }
}
