//! The relay pool (`adxl.BufferPool` = `NUM:SIZE_MB`): at most `NUM` buffers of `SIZE_MB` MiB
//! for memory that is not registered, shared by every connection of the engine, so relaying
//! uses bounded memory however many peers are served. Buffers are made on first use.

use std::sync::{Condvar, Mutex};

use crate::engine::options::BufferPool;
use crate::sync::{lock, wait};

pub struct RelayPool {
    config: BufferPool,
    state: Mutex<(Vec<Vec<u8>>, u32)>,
    freed: Condvar,
}

/// A buffer of the pool, given back when dropped.
pub struct RelayBuf<'a> {
    pool: &'a RelayPool,
    buf: Option<Vec<u8>>,
}

impl RelayBuf<'_> {
    pub fn bytes(&mut self) -> &mut [u8] {
        self.buf.as_mut().expect("held until drop")
    }
}

impl Drop for RelayBuf<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            let mut s = lock(&self.pool.state);
            s.0.push(b);
            self.pool.freed.notify_one();
        }
    }
}

impl RelayPool {
    pub fn new(config: BufferPool) -> RelayPool {
        RelayPool { config, state: Mutex::new((Vec::new(), 0)), freed: Condvar::new() }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled()
    }

    /// A buffer, waiting for one to be given back when all are in use. `None` when the pool is
    /// disabled.
    pub fn take(&self) -> Option<RelayBuf<'_>> {
        if !self.enabled() {
            return None;
        }
        let mut s = lock(&self.state);
        loop {
            if let Some(b) = s.0.pop() {
                return Some(RelayBuf { pool: self, buf: Some(b) });
            }
            if s.1 < self.config.buffers {
                s.1 += 1;
                return Some(RelayBuf { pool: self, buf: Some(vec![0u8; self.config.buffer_bytes()]) });
            }
            s = wait(&self.freed, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_bounded_and_reused() {
        let pool = RelayPool::new(BufferPool { buffers: 1, buffer_mib: 1 });
        let mut a = pool.take().unwrap();
        assert_eq!(a.bytes().len(), 1 << 20);
        std::thread::scope(|s| {
            let t = s.spawn(|| pool.take().unwrap().bytes().len());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!t.is_finished(), "a second buffer was made beyond the limit");
            drop(a);
            assert_eq!(t.join().unwrap(), 1 << 20);
        });
        assert!(RelayPool::new(BufferPool { buffers: 0, buffer_mib: 0 }).take().is_none());
    }
}
