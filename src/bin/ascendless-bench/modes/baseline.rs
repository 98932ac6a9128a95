//! The machine's own limits, measured in the same run: memcpy, and a raw TCP socket pair doing
//! the same request/response exchange as a transfer. (The raw futex ping-pong of the `notify`
//! and `ipc-event` modes is the benches' own, `benches/common/futex_pingpong.rs`.)

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use crate::args::Op;
use crate::measure::{Figures, timed};

/// memcpy of `len` bytes per call, in each of `threads` threads.
pub fn memcpy(len: usize, threads: usize, duration: f64) -> Figures {
    timed("memcpy", threads, duration, |_| {
        let src = vec![7u8; len];
        let mut dst = vec![0u8; len];
        move || {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
            len as u64
        }
    })
}

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback socket");
    let a = TcpStream::connect(l.local_addr().expect("local address")).expect("connect over loopback");
    let (b, _) = l.accept().expect("accept over loopback");
    a.set_nodelay(true).expect("TCP_NODELAY");
    b.set_nodelay(true).expect("TCP_NODELAY");
    (a, b)
}

/// One loopback socket pair per thread doing what a transfer does: WRITE sends a 32-byte
/// header followed by `len` bytes (one write) and waits for a 1-byte acknowledgement; READ
/// sends a 32-byte request and reads `len` bytes back.
pub fn tcp(op: Op, len: usize, threads: usize, duration: f64) -> Figures {
    timed("raw TCP socket pair", threads, duration, |_| {
        let (mut a, mut b) = pair();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 32 + len];
            loop {
                let ok = match op {
                    Op::Write => b.read_exact(&mut buf).and_then(|_| b.write_all(&[1])),
                    Op::Read => b.read_exact(&mut buf[..32]).and_then(|_| b.write_all(&buf[32..])),
                };
                if ok.is_err() {
                    break;
                }
            }
        });
        let mut buf = vec![5u8; 32 + len];
        move || {
            match op {
                Op::Write => {
                    a.write_all(&buf).expect("raw TCP send");
                    a.read_exact(&mut [0u8; 1]).expect("raw TCP receive");
                }
                Op::Read => {
                    a.write_all(&buf[..32]).expect("raw TCP send");
                    a.read_exact(&mut buf[32..]).expect("raw TCP receive");
                }
            }
            len as u64
        }
    })
}
