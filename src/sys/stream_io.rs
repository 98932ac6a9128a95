//! Moving bytes between a TCP stream and a [`RawSpan`] with no intermediate buffer: the
//! engine receives a WRITE's payload straight into the destination memory and sends a READ's
//! data straight from the source.
//!
//! `std::io::Read` needs a `&mut [u8]`, and making one over user memory would create a Rust
//! reference into memory that C code owns; `recv`/`send` on the raw descriptor take the
//! span's address instead. That is also why the span calls here stay on `libc`: rustix's
//! `recv`, `send` and `IoSlice`s take Rust slices. Calls on plain buffers go through rustix.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use rustix::event::{self, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{self, RecvFlags, SendFlags};

use super::span::RawSpan;

/// Fills `span[offset..offset + len]` from the stream (exactly `len` bytes). End of file
/// before that is `UnexpectedEof`; a read time-out set on the stream is `WouldBlock`.
/// Panics if the range is outside the span or the span is read-only.
pub fn recv_into(stream: &TcpStream, span: &RawSpan, offset: usize, len: usize) -> io::Result<()> {
    assert!(offset.checked_add(len).is_some_and(|e| e <= span.len()), "range outside the span");
    assert!(span.is_writable(), "receive into a read-only span");
    let mut done = 0;
    while done < len {
        // SAFETY: [addr + offset + done, +len - done) lies inside the span (asserted above),
        // which its maker vouched is writable memory with no Rust reference into it.
        let n = unsafe {
            libc::recv(stream.as_raw_fd(), (span.addr() + offset + done) as *mut libc::c_void, len - done, 0)
        };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Sends `span[offset..offset + len]` on the stream (all of it). Never raises SIGPIPE: a
/// closed peer is an error. Panics if the range is outside the span.
pub fn send_from(stream: &TcpStream, span: &RawSpan, offset: usize, len: usize) -> io::Result<()> {
    assert!(offset.checked_add(len).is_some_and(|e| e <= span.len()), "range outside the span");
    let addr = span.addr() + offset;
    let mut done = 0;
    while done < len {
        // SAFETY: `[addr + done, addr + len)` lies inside the span (asserted above), which its
        // maker vouched is readable memory for as long as the span lives (it outlives this
        // call); the kernel only reads it. MSG_NOSIGNAL: a closed peer is EPIPE, not SIGPIPE.
        let n = unsafe {
            libc::send(
                stream.as_raw_fd(),
                (addr + done) as *const libc::c_void,
                len - done,
                libc::MSG_NOSIGNAL,
            )
        };
        match n {
            n if n >= 0 => done += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Sends all of `data`, never raising SIGPIPE (`std`'s `write_all` on a `TcpStream` does not
/// set `MSG_NOSIGNAL`; Rust programs ignore SIGPIPE, but a C host may not).
pub fn send_all(stream: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match net::send(stream, data, SendFlags::NOSIGNAL) {
            Ok(n) => data = &data[n..],
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Sets the length of `listener`'s queue of connections the kernel has completed but the
/// program not yet accepted (`listen` again on a listening socket changes just that; the
/// kernel caps it at `net.core.somaxconn`). `std` listens with 128: a burst of connections
/// beyond that makes the kernel drop new SYNs, and a client whose SYN is dropped waits a whole
/// second for its retransmission.
pub fn set_backlog(listener: &TcpListener, backlog: u32) -> io::Result<()> {
    Ok(net::listen(listener, i32::try_from(backlog).unwrap_or(i32::MAX))?)
}

/// Whether the peer has closed or reset the connection, without waiting or consuming
/// anything (`recv` with `MSG_PEEK | MSG_DONTWAIT`). Data waiting to be read counts as open.
pub fn peer_closed(stream: &TcpStream) -> bool {
    match net::recv(stream, &mut [0u8; 1], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
        Ok((n, _)) => n == 0,
        Err(e) => !matches!(e, Errno::AGAIN | Errno::INTR),
    }
}

/// Copies into `buf` what has arrived on the stream and not been read, without consuming it
/// or waiting (`recv` with `MSG_PEEK | MSG_DONTWAIT`); how many bytes (0: none, or an error).
pub fn peek(stream: &TcpStream, buf: &mut [u8]) -> usize {
    net::recv(stream, buf, RecvFlags::PEEK | RecvFlags::DONTWAIT).map_or(0, |(n, _)| n)
}

/// What of `events` (plus hang-up and error) is pending on the stream now (`poll` with a zero
/// timeout, never waiting); nothing if the poll failed.
fn pending(stream: &TcpStream, events: PollFlags) -> PollFlags {
    let mut p = [PollFd::new(stream, events)];
    match event::poll(&mut p, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })) {
        Ok(n) if n > 0 => p[0].revents(),
        _ => PollFlags::empty(),
    }
}

/// Whether bytes (or the end of the stream) wait to be read now (`poll` for `POLLIN`, no
/// waiting).
pub fn readable(stream: &TcpStream) -> bool {
    pending(stream, PollFlags::IN).intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
}

/// Whether a send of a small frame would not wait now (`poll` for `POLLOUT`, no waiting): a
/// peer that has left its receive window full answers `false`.
pub fn writable(stream: &TcpStream) -> bool {
    pending(stream, PollFlags::OUT).contains(PollFlags::OUT)
}

/// One piece of a gathered send.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    Bytes(&'a [u8]),
    /// `len` bytes of the span from `offset`.
    Span(&'a RawSpan, usize, usize),
}

/// Most pieces one `sendmsg` takes (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;

/// Sends every part in order with as few system calls as the kernel allows (`sendmsg` with
/// up to 1024 pieces each): a frame, the payload of many descriptors and the next frame go out
/// together, straight from their memory. Never raises SIGPIPE. The first system call waits
/// at most the stream's send time-out (the caller's bound); no later one waits past `deadline`
/// (by more than a tenth of what was left), and the whole is `TimedOut` once it has passed. Panics if a span range is
/// outside its span.
pub fn send_gather(stream: &TcpStream, parts: &[Part<'_>], deadline: Option<Instant>) -> io::Result<()> {
    // (address, length) of every non-empty piece, checked against its span.
    let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(parts.len());
    for p in parts {
        let (addr, len) = match *p {
            Part::Bytes(b) => (b.as_ptr() as usize, b.len()),
            Part::Span(span, offset, len) => {
                assert!(offset.checked_add(len).is_some_and(|e| e <= span.len()), "range outside the span");
                (span.addr() + offset, len)
            }
        };
        if len > 0 {
            pieces.push((addr, len));
        }
    }
    let mut first = 0;
    // The first system call runs under the time-out the caller set (callers bound it by the
    // deadline before each conversation), so a transfer that needs one call costs no extra
    // system calls; later calls get what is left of the deadline.
    let mut first_call = true;
    while first < pieces.len() {
        let saved = if first_call { None } else { within(stream, false, deadline)? };
        first_call = false;
        let batch = &pieces[first..(first + IOV_MAX).min(pieces.len())];
        let mut iov = iovecs(batch);
        let msg = msghdr(&mut iov);
        // SAFETY: every iovec names readable memory: borrowed slices (alive for this call) or
        // ranges inside spans (checked above), which their makers vouched are readable; the
        // kernel only reads them.
        let n = unsafe { libc::sendmsg(stream.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        restore(stream, false, saved);
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        advance(&mut pieces, &mut first, n as usize);
    }
    Ok(())
}

/// The iovecs of `(address, length)` pieces, for one `sendmsg` or `recvmsg`.
fn iovecs(pieces: &[(usize, usize)]) -> Vec<libc::iovec> {
    pieces.iter().map(|&(a, l)| libc::iovec { iov_base: a as *mut libc::c_void, iov_len: l }).collect()
}

/// A message header over `iov`, with no address and no control data; valid while `iov` is.
fn msghdr(iov: &mut [libc::iovec]) -> libc::msghdr {
    // SAFETY: an all-zero msghdr is valid (no name, no control data); zeroing also clears the
    // padding fields some C libraries have.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_mut_ptr();
    msg.msg_iovlen = iov.len() as _;
    msg
}

/// Moves past `n` bytes moved by one system call, possibly into the middle of a piece.
fn advance(pieces: &mut [(usize, usize)], first: &mut usize, mut n: usize) {
    while n > 0 {
        let (a, l) = pieces[*first];
        if n >= l {
            n -= l;
            *first += 1;
        } else {
            pieces[*first] = (a + n, l - n);
            n = 0;
        }
    }
}

/// For one system call bounded by `deadline`: shortens the stream's receive (`read`) or send
/// time-out to what is left when it would outlast the deadline by more than a tenth (a wait
/// begun late would otherwise run the whole time-out again); the time-out to put back after
/// the call (`None`: unchanged). `TimedOut` once the deadline has passed.
fn within(stream: &TcpStream, read: bool, deadline: Option<Instant>) -> io::Result<Option<Option<Duration>>> {
    let Some(deadline) = deadline else { return Ok(None) };
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|l| !l.is_zero())
        .ok_or(io::ErrorKind::TimedOut)?;
    let current = if read { stream.read_timeout()? } else { stream.write_timeout()? };
    if current.is_some_and(|t| t <= left + left / 10 + Duration::from_millis(1)) {
        return Ok(None);
    }
    if read {
        stream.set_read_timeout(Some(left))?;
    } else {
        stream.set_write_timeout(Some(left))?;
    }
    Ok(Some(current))
}

/// Puts back a time-out [`within`] shortened.
fn restore(stream: &TcpStream, read: bool, saved: Option<Option<Duration>>) {
    if let Some(t) = saved {
        let _ = if read { stream.set_read_timeout(t) } else { stream.set_write_timeout(t) };
    }
}

/// Fills every `(span, offset, len)` range in order from the stream, with as few system calls
/// as the kernel allows (`recvmsg` with up to 1024 pieces each): a batch of descriptors lands
/// straight in its destinations. End of file first is `UnexpectedEof`; a read time-out set on
/// the stream is `WouldBlock`, and `deadline` passing between system calls `TimedOut` (with
/// `MSG_WAITALL` the kernel returns what arrived when the socket time-out expires, so a slow
/// stream would otherwise go on for ever). Panics if a range is outside its span or a span is
/// read-only.
pub fn recv_scatter(
    stream: &TcpStream,
    ranges: &[(&RawSpan, usize, usize)],
    deadline: Option<Instant>,
) -> io::Result<()> {
    let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for &(span, offset, len) in ranges {
        assert!(offset.checked_add(len).is_some_and(|e| e <= span.len()), "range outside the span");
        assert!(span.is_writable(), "receive into a read-only span");
        if len > 0 {
            pieces.push((span.addr() + offset, len));
        }
    }
    let mut first = 0;
    // The first system call runs under the time-out the caller set (callers bound it by the
    // deadline before each conversation), so a transfer that needs one call costs no extra
    // system calls; later calls get what is left of the deadline.
    let mut first_call = true;
    while first < pieces.len() {
        let saved = if first_call { None } else { within(stream, true, deadline)? };
        first_call = false;
        let batch = &pieces[first..(first + IOV_MAX).min(pieces.len())];
        let mut iov = iovecs(batch);
        let mut msg = msghdr(&mut iov);
        // SAFETY: every iovec names a range inside a writable span (checked above), which its
        // maker vouched is writable memory with no Rust reference into it.
        let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_WAITALL) };
        restore(stream, true, saved);
        match n {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            n => advance(&mut pieces, &mut first, n as usize),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn bytes_go_from_span_to_span_over_tcp() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let mut src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; 100_010];
        // SAFETY: both vectors outlive the spans and are not borrowed while they are used.
        let (s, d) = unsafe {
            (
                RawSpan::new(src.as_mut_ptr() as usize, src.len()),
                RawSpan::new(dst.as_mut_ptr() as usize, dst.len()),
            )
        };
        let t = std::thread::spawn(move || {
            send_all(&a, b"hdr").unwrap();
            send_from(&a, &s, 0, 100_000).unwrap();
            drop(s);
        });
        assert!(!peer_closed(&b));
        let mut hdr = [0u8; 3];
        std::io::Read::read_exact(&mut &b, &mut hdr).unwrap();
        recv_into(&b, &d, 10, 100_000).unwrap();
        t.join().unwrap();
        // The peer closed: end of file is an error, not a short read.
        assert!(peer_closed(&b));
        assert_eq!(recv_into(&b, &d, 0, 1).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        drop(d);
        assert_eq!(&hdr, b"hdr");
        assert_eq!(&dst[10..], &src[..]);
    }

    #[test]
    fn gathered_sends_keep_order_across_many_pieces_and_partial_writes() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let mut src: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let expected = src.clone();
        // SAFETY: `src` outlives the span and is not borrowed while it is used.
        let span = unsafe { RawSpan::new(src.as_mut_ptr() as usize, src.len()) };
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut &b, &mut got).unwrap();
            got
        });
        // 3000 pieces of 1000 bytes (three sendmsg batches), framed by byte slices; the
        // 3 MB total is more than a socket buffer, so sends are partial.
        let mut parts = vec![Part::Bytes(b"head")];
        parts.extend((0..3000).map(|i| Part::Span(&span, i * 1000, 1000)));
        parts.push(Part::Bytes(b""));
        parts.push(Part::Bytes(b"tail"));
        send_gather(&a, &parts, None).unwrap();
        drop(a);
        let got = reader.join().unwrap();
        drop(span);
        assert_eq!(&got[..4], b"head");
        assert_eq!(&got[4..got.len() - 4], &expected[..]);
        assert_eq!(&got[got.len() - 4..], b"tail");
    }

    #[test]
    fn scattered_receives_fill_every_range_in_order() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let data: Vec<u8> = (0..2_500_000u32).map(|i| (i % 253) as u8).collect();
        let sent = data.clone();
        let writer = std::thread::spawn(move || send_all(&a, &sent).unwrap());
        let mut dst = vec![0u8; 2_500_000];
        // SAFETY: `dst` outlives the span and is not borrowed while it is used.
        let span = unsafe { RawSpan::new(dst.as_mut_ptr() as usize, dst.len()) };
        // 2500 ranges of 1000 bytes, filled back to front so order is by argument, not address.
        let ranges: Vec<(&RawSpan, usize, usize)> =
            (0..2500).rev().map(|i| (&span, i * 1000, 1000)).collect();
        recv_scatter(&b, &ranges, None).unwrap();
        writer.join().unwrap();
        assert_eq!(
            recv_scatter(&b, &[(&span, 0, 1)], None).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        drop(span);
        for i in 0..2500 {
            assert_eq!(
                &dst[(2499 - i) * 1000..(2500 - i) * 1000],
                &data[i * 1000..(i + 1) * 1000],
                "range {i}"
            );
        }
    }
}
