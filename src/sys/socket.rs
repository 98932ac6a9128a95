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

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::{self, MaybeUninit};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::{self, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{
    self, AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType, sockopt,
};

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
        let addr = abstract_address(name)?;
        let fd = new_socket(SocketFlags::NONBLOCK)?;
        net::bind(&fd, &addr)?;
        net::listen(&fd, i32::try_from(backlog).unwrap_or(i32::MAX))?;
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
        match net::accept_with(&self.fd, SocketFlags::CLOEXEC) {
            Ok(fd) => Ok(Some(Conn { fd })),
            // Nothing pending, a signal, or a client that gave up before we got to it.
            Err(Errno::AGAIN | Errno::INTR | Errno::CONNABORTED) => Ok(None),
            Err(e) => Err(e.into()),
        }
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
        let addr = abstract_address(name)?;
        let conn = Conn { fd: new_socket(SocketFlags::empty())? };
        let deadline = Instant::now() + timeout;
        loop {
            // A Unix-socket connect waits for backlog room for as long as the send timeout.
            conn.set_write_timeout(Some(deadline.saturating_duration_since(Instant::now())))?;
            match net::connect(&conn.fd, &addr) {
                Ok(()) | Err(Errno::ISCONN) => return Ok(conn),
                // A connect interrupted while waiting for room did nothing: try again.
                Err(Errno::INTR) if Instant::now() < deadline => continue,
                Err(Errno::AGAIN | Errno::INTR) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the listener's backlog stayed full until the timeout",
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A connected pair (`socketpair`), for tests and in-process links.
    pub fn pair() -> io::Result<(Conn, Conn)> {
        let (a, b) = net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        Ok((Conn { fd: a }, Conn { fd: b }))
    }

    /// Bounds every blocking receive (`None`: no bound). A receive that runs out of time fails
    /// with `TimedOut`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        set_timeout(self.fd.as_fd(), sockopt::Timeout::Recv, timeout)
    }

    /// Bounds every blocking send (`None`: no bound). A send that runs out of time fails with
    /// `TimedOut`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        set_timeout(self.fd.as_fd(), sockopt::Timeout::Send, timeout)
    }

    /// Sends `data` as one message, with `fds` attached, waiting at most the write timeout.
    /// `data` must not be empty (the receiver could not tell it from a closed connection).
    pub fn send(&self, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        self.send_with(data, fds, SendFlags::empty())
    }

    /// As [`Conn::send`], but fails with `WouldBlock` instead of waiting for buffer space.
    pub fn try_send(&self, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
        self.send_with(data, fds, SendFlags::DONTWAIT)
    }

    /// Receives one message into `buf` with at most `max_fds` descriptors, waiting at most the
    /// read timeout. `None` when the peer has closed the connection. Fails (closing whatever
    /// descriptors came) if the message is longer than `buf`, carries more than `max_fds`
    /// descriptors, or its control data was truncated.
    pub fn recv(&self, buf: &mut [u8], max_fds: usize) -> io::Result<Option<Message>> {
        self.recv_with(buf, max_fds, RecvFlags::empty())
    }

    /// As [`Conn::recv`], but fails with `WouldBlock` instead of waiting for a message.
    pub fn try_recv(&self, buf: &mut [u8], max_fds: usize) -> io::Result<Option<Message>> {
        self.recv_with(buf, max_fds, RecvFlags::DONTWAIT)
    }

    /// Waits up to `timeout` (`None`: forever) until a message, the peer's close or an error is
    /// pending. False on timeout or when a signal interrupted the wait.
    pub fn wait_readable(&self, timeout: Option<Duration>) -> io::Result<bool> {
        poll_one(self.fd.as_fd(), timeout)
    }

    /// Whether the peer has closed its end (checked without waiting).
    pub fn peer_closed(&self) -> bool {
        let mut p = [PollFd::new(&self.fd, PollFlags::RDHUP)];
        matches!(event::poll(&mut p, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })), Ok(n) if n > 0)
            && p[0].revents().intersects(PollFlags::HUP | PollFlags::RDHUP | PollFlags::ERR)
    }

    /// The peer's pid, uid and gid as the kernel recorded them at connect time.
    pub fn peer_credentials(&self) -> io::Result<PeerCredentials> {
        // Not rustix's `socket_peercred`: its `UCred` holds the pid as a non-zero `Pid`, but the
        // kernel answers 0 for a peer outside our pid namespace, which that type cannot hold.
        let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
        let mut len = mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` is a writable ucred and `len` holds its exact size; the kernel writes
        // at most `len` bytes and updates `len`.
        let ret = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&raw mut cred).cast(),
                &mut len,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        if len as usize != mem::size_of::<libc::ucred>() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "short SO_PEERCRED answer"));
        }
        Ok(PeerCredentials { pid: cred.pid, uid: cred.uid, gid: cred.gid })
    }

    fn send_with(&self, data: &[u8], fds: &[BorrowedFd<'_>], flags: SendFlags) -> io::Result<()> {
        if data.is_empty() || fds.len() > MAX_FDS {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty message or too many descriptors"));
        }
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        // Room for MAX_FDS descriptors, so the push always fits.
        if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many descriptors"));
        }
        // MSG_NOSIGNAL: a closed peer gives EPIPE instead of killing the process with SIGPIPE.
        let flags = flags | SendFlags::NOSIGNAL;
        loop {
            match net::sendmsg(&self.fd, &[IoSlice::new(data)], &mut control, flags) {
                // A sequenced packet is sent whole or not at all.
                Ok(_) => return Ok(()),
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) if !flags.contains(SendFlags::DONTWAIT) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "send timed out"));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn recv_with(&self, buf: &mut [u8], max_fds: usize, flags: RecvFlags) -> io::Result<Option<Message>> {
        let max_fds = max_fds.min(MAX_FDS);
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        // Room for `max_fds` descriptors only (none at all for 0), so that more is truncation.
        let room = if max_fds > 0 { rustix::cmsg_space!(ScmRights(max_fds)) } else { 0 };
        let mut control = RecvAncillaryBuffer::new(&mut space[..room]);
        let mut iov = [IoSliceMut::new(buf)];
        // MSG_CMSG_CLOEXEC: received descriptors are never inherited by a child we spawn.
        let flags = flags | RecvFlags::CMSG_CLOEXEC;
        let msg = loop {
            match net::recvmsg(&self.fd, &mut iov, &mut control, flags) {
                Ok(msg) => break msg,
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) if !flags.contains(RecvFlags::DONTWAIT) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "receive timed out"));
                }
                Err(e) => return Err(e.into()),
            }
        };
        // Take ownership of every descriptor first, so that each early return below closes them.
        let mut fds = Vec::new();
        for m in control.drain() {
            if let RecvAncillaryMessage::ScmRights(rights) = m {
                fds.extend(rights);
            }
        }
        if msg.flags.contains(ReturnFlags::CTRUNC) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "control data truncated (too many descriptors)",
            ));
        }
        if msg.flags.contains(ReturnFlags::TRUNC) {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "message longer than the receive buffer"));
        }
        if fds.len() > max_fds {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "more descriptors than expected"));
        }
        if msg.bytes == 0 && fds.is_empty() {
            // Senders never send empty messages (see `send`): this is the peer's close.
            return Ok(None);
        }
        Ok(Some(Message { len: msg.bytes, fds }))
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
    let mut p: Vec<PollFd<'_>> = fds.iter().map(|fd| PollFd::new(fd, PollFlags::IN)).collect();
    // A timeout beyond what a timespec holds is "practically forever": none.
    let ts = timeout.and_then(|t| Timespec::try_from(t).ok());
    match event::poll(&mut p, ts.as_ref()) {
        Ok(_) => Ok(p.iter().map(|p| !p.revents().is_empty()).collect()),
        Err(Errno::INTR) => Ok(vec![false; p.len()]),
        Err(e) => Err(e.into()),
    }
}

fn poll_one(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    Ok(poll_ready(&[fd], timeout)?[0])
}

fn new_socket(extra_flags: SocketFlags) -> io::Result<OwnedFd> {
    Ok(net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC | extra_flags,
        None,
    )?)
}

/// The abstract address `name`: the length, not a terminator, ends it (exactly the bytes given).
fn abstract_address(name: &[u8]) -> io::Result<SocketAddrUnix> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "abstract socket name of 1..=107 bytes"));
    }
    Ok(SocketAddrUnix::new_abstract_name(name)?)
}

fn set_timeout(fd: BorrowedFd<'_>, which: sockopt::Timeout, timeout: Option<Duration>) -> io::Result<()> {
    // A zero timeval means "no timeout" to the kernel: zero or tiny bounds become 1 µs.
    let timeout = timeout.map(|t| t.max(Duration::from_micros(1)));
    Ok(sockopt::set_socket_timeout(fd, which, timeout)?)
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
        let flags = rustix::io::fcntl_getfd(&received).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC), "received descriptors are close-on-exec");
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
        let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
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
    fn poll_waits_as_long_as_asked_even_below_a_millisecond() {
        let (_a, b) = Conn::pair().unwrap();
        let start = Instant::now();
        assert_eq!(poll_ready(&[b.as_fd()], Some(Duration::from_micros(300))).unwrap(), [false]);
        assert!(start.elapsed() >= Duration::from_micros(300));
        // Beyond what a timespec holds: no bound, but something ready still returns at once.
        let (c, d) = Conn::pair().unwrap();
        c.send(b"x", &[]).unwrap();
        assert_eq!(poll_ready(&[d.as_fd()], Some(Duration::MAX)).unwrap(), [true]);
    }
}
