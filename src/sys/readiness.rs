//! Waiting for any of many descriptors to become readable (`epoll`, level-triggered): how one
//! thread waits for connections to every listening socket of the process.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use rustix::event::{Timespec, epoll};

/// An epoll instance; each watched descriptor is known by a token the caller chose.
#[derive(Debug)]
pub struct Readiness {
    fd: OwnedFd,
}

impl Readiness {
    pub fn new() -> io::Result<Readiness> {
        Ok(Readiness { fd: epoll::create(epoll::CreateFlags::CLOEXEC)? })
    }

    /// Reports `fd` under `token` while it has something to read (for a listening socket: a
    /// connection to accept). Adding a descriptor wakes no waiter unless it is ready already.
    pub fn watch(&self, fd: impl AsFd, token: u64) -> io::Result<()> {
        Ok(epoll::add(&self.fd, fd, epoll::EventData::new_u64(token), epoll::EventFlags::IN)?)
    }

    /// Stops reporting `fd` (a waiter may still return the token once, from before).
    pub fn unwatch(&self, fd: impl AsFd) -> io::Result<()> {
        Ok(epoll::delete(&self.fd, fd)?)
    }

    /// Waits until a watched descriptor is ready or `timeout` passes (`None`: no limit) and
    /// puts the tokens of the ready ones in `ready` (cleared first; none on time-out or a
    /// signal). At most `ready`'s capacity (at least one) are reported per call.
    pub fn wait(&self, ready: &mut Vec<u64>, timeout: Option<Duration>) -> io::Result<()> {
        ready.clear();
        let mut events: Vec<epoll::Event> = Vec::with_capacity(ready.capacity().max(1));
        let timeout = timeout.map(|t| Timespec {
            tv_sec: t.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: t.subsec_nanos().into(),
        });
        match epoll::wait(&self.fd, rustix::buffer::spare_capacity(&mut events), timeout.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        ready.extend(events.iter().map(|e| e.data.u64()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_listener_is_reported_under_its_token_while_a_connection_waits() {
        let r = Readiness::new().unwrap();
        let (a, b) = (TcpListener::bind("127.0.0.1:0").unwrap(), TcpListener::bind("127.0.0.1:0").unwrap());
        r.watch(&a, 7).unwrap();
        r.watch(&b, 9).unwrap();
        let mut ready = Vec::with_capacity(4);
        r.wait(&mut ready, Some(Duration::from_millis(10))).unwrap();
        assert!(ready.is_empty());
        let _c = TcpStream::connect(b.local_addr().unwrap()).unwrap();
        r.wait(&mut ready, Some(Duration::from_secs(5))).unwrap();
        assert_eq!(ready, [9]);
        // Level-triggered: still there until accepted.
        r.wait(&mut ready, Some(Duration::from_secs(5))).unwrap();
        assert_eq!(ready, [9]);
        b.accept().unwrap();
        r.wait(&mut ready, Some(Duration::from_millis(10))).unwrap();
        assert!(ready.is_empty());
        r.unwatch(&b).unwrap();
        let _d = TcpStream::connect(b.local_addr().unwrap()).unwrap();
        r.wait(&mut ready, Some(Duration::from_millis(10))).unwrap();
        assert!(ready.is_empty());
    }
}
