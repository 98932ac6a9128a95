//! Moving bytes between a TCP stream and a [`RawSpan`] with no intermediate buffer: the
//! engine receives a WRITE's payload straight into the destination memory and sends a READ's
//! data straight from the source.
//!
//! `std::io::Read` needs a `&mut [u8]`, and making one over user memory would create a Rust
//! reference into memory that C code owns; `recv`/`send` on the raw descriptor take the
//! span's address instead.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

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
    let mut done = 0;
    while done < len {
        // SAFETY: the range lies inside the span (asserted above), which its maker vouched is
        // readable memory.
        let n = unsafe {
            libc::send(
                stream.as_raw_fd(),
                (span.addr() + offset + done) as *const libc::c_void,
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
pub fn send_all(stream: &TcpStream, data: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: `data[done..]` is a valid borrowed slice the kernel only reads.
        let n = unsafe {
            libc::send(
                stream.as_raw_fd(),
                data[done..].as_ptr().cast(),
                data.len() - done,
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
        let mut hdr = [0u8; 3];
        std::io::Read::read_exact(&mut &b, &mut hdr).unwrap();
        recv_into(&b, &d, 10, 100_000).unwrap();
        t.join().unwrap();
        // The peer closed: end of file is an error, not a short read.
        assert_eq!(recv_into(&b, &d, 0, 1).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        drop(d);
        assert_eq!(&hdr, b"hdr");
        assert_eq!(&dst[10..], &src[..]);
    }
}
