//! Reading one side of a connection with few system calls: frames come out of a read-ahead
//! buffer (a small response, header, data and COMPLETE, arrives in one `recv`), and payloads
//! go straight into their destination, first from whatever the buffer already holds, then
//! from the socket with scattered receives.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::Instant;

use crate::engine::wire::{HEADER_LEN, Message, WireError, parse_header};
use crate::sys::span::RawSpan;
use crate::sys::stream_io::recv_scatter;

/// Read-ahead size: larger than any common small response, small against a payload.
const AHEAD: usize = 64 * 1024;

/// Whether a whole frame of at most 4 KiB has arrived on `stream` and waits to be read
/// (looked at, not consumed, without waiting): reading it then cannot block.
pub fn small_frame_arrived(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let n = crate::sys::stream_io::peek(stream, &mut buf);
    let Some(header) = buf.first_chunk::<HEADER_LEN>().filter(|_| n >= HEADER_LEN) else { return false };
    parse_header(header).is_ok_and(|(_, body)| n >= HEADER_LEN + body)
}

pub struct FrameReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for FrameReader {
    fn default() -> Self {
        FrameReader { buf: vec![0; AHEAD], start: 0, end: 0 }
    }
}

impl FrameReader {
    fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Whether bytes read ahead wait here (a frame may be ready without a system call).
    pub fn has_buffered(&self) -> bool {
        self.buffered() > 0
    }

    /// Makes at least `n` bytes available, reading as much as the socket has.
    fn want(&mut self, s: &TcpStream, n: usize) -> io::Result<()> {
        if self.buffered() >= n {
            return Ok(());
        }
        if self.start + n > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if n > self.buf.len() {
                self.buf.resize(n, 0);
            }
        }
        while self.buffered() < n {
            match (&mut &*s).read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(got) => self.end += got,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next frame (header and body; a payload stays unread).
    pub fn frame(&mut self, s: &TcpStream) -> Result<Message, WireError> {
        self.want(s, HEADER_LEN)?;
        let header: [u8; HEADER_LEN] =
            self.buf[self.start..self.start + HEADER_LEN].try_into().expect("12 bytes");
        let (kind, len) = parse_header(&header)?;
        self.want(s, HEADER_LEN + len)?;
        let body = &self.buf[self.start + HEADER_LEN..self.start + HEADER_LEN + len];
        let m = Message::decode(kind, body);
        self.start += HEADER_LEN + len;
        self.shrink();
        m
    }

    /// Gives back the room a large frame (up to 1 MiB) needed once it is read, so each of
    /// hundreds of connections keeps only [`AHEAD`] between large frames.
    fn shrink(&mut self) {
        if self.buf.len() > AHEAD && self.buffered() <= AHEAD {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            self.buf.truncate(AHEAD);
            self.buf.shrink_to_fit();
        }
    }

    /// Fills `out` from the connection.
    pub fn read_exact(&mut self, s: &TcpStream, out: &mut [u8]) -> io::Result<()> {
        let from_buf = out.len().min(self.buffered());
        out[..from_buf].copy_from_slice(&self.buf[self.start..self.start + from_buf]);
        self.start += from_buf;
        (&mut &*s).read_exact(&mut out[from_buf..])
    }

    /// Fills every `(span, offset, len)` range in order from the connection.
    pub fn payload(
        &mut self,
        s: &TcpStream,
        ranges: &[(&RawSpan, usize, usize)],
        deadline: Option<Instant>,
    ) -> io::Result<()> {
        let mut rest = Vec::new();
        for (i, &(span, offset, len)) in ranges.iter().enumerate() {
            if self.buffered() == 0 {
                rest.extend_from_slice(&ranges[i..]);
                break;
            }
            let n = len.min(self.buffered());
            span.write_at(offset, &self.buf[self.start..self.start + n]);
            self.start += n;
            if n < len {
                rest.push((span, offset + n, len - n));
                rest.extend_from_slice(&ranges[i + 1..]);
                break;
            }
        }
        recv_scatter(s, &rest, deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::memory;
    use crate::sys::stream_io::send_all;
    use std::net::TcpListener;

    #[test]
    fn frames_payloads_and_bytes_come_out_in_order() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 249) as u8).collect();
        let mut stream = Message::ReadData { id: 1, len: 200_000 }.encode();
        stream.extend_from_slice(&payload);
        stream.extend(Message::Bye.encode());
        stream.extend_from_slice(b"xyz");
        send_all(&a, &stream).unwrap();
        drop(a);
        let mut r = FrameReader::default();
        assert_eq!(r.frame(&b).unwrap(), Message::ReadData { id: 1, len: 200_000 });
        let dst = memory::alloc_host(200_000).unwrap();
        let span = memory::runtime_span(dst, 200_000).unwrap();
        r.payload(&b, &[(&span, 0, 10), (&span, 10, 199_990)], None).unwrap();
        let mut got = vec![0u8; 200_000];
        span.read_into(&mut got);
        assert_eq!(got, payload);
        assert_eq!(r.frame(&b).unwrap(), Message::Bye);
        let mut tail = [0u8; 3];
        r.read_exact(&b, &mut tail).unwrap();
        assert_eq!(&tail, b"xyz");
        assert!(matches!(r.frame(&b), Err(WireError::Io(_))));
    }

    #[test]
    fn a_small_frame_has_arrived_only_when_all_of_it_has() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let hello = Message::Hello { name: "127.0.0.1".into(), regions: vec![], host: None }.encode();
        let arrived = |expected: bool| {
            // Loopback delivers within the send; a little room for a loaded machine.
            let start = Instant::now();
            while small_frame_arrived(&b) != expected && start.elapsed().as_secs() < 2 {
                std::thread::yield_now();
            }
            assert_eq!(small_frame_arrived(&b), expected);
        };
        arrived(false);
        send_all(&a, &hello[..hello.len() - 1]).unwrap();
        arrived(false);
        send_all(&a, &hello[hello.len() - 1..]).unwrap();
        arrived(true);
        // Looked at, not consumed.
        assert!(matches!(FrameReader::default().frame(&b).unwrap(), Message::Hello { .. }));
        arrived(false);
        send_all(&a, b"not a frame at all").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        arrived(false);
    }

    #[test]
    fn the_room_of_a_large_frame_is_given_back() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let big = Message::Complete { id: 1, status: 0, failed: 0, message: "x".repeat(1000) };
        let regions = (0..10_000u64)
            .map(|i| crate::engine::wire::Region {
                addr: (i + 1) << 20,
                len: 4096,
                kind: crate::engine::wire::MemKind::Host,
                tag: i as u32,
            })
            .collect();
        let large = Message::MemAdd { regions };
        send_all(&a, &[large.encode(), big.encode()].concat()).unwrap();
        let mut r = FrameReader::default();
        assert!(matches!(r.frame(&b).unwrap(), Message::MemAdd { .. }));
        assert_eq!(r.buf.len(), AHEAD);
        assert_eq!(r.frame(&b).unwrap(), big);
    }
}
