//! Random numbers from the kernel (`getrandom(2)`), for secrets other processes must not guess:
//! IPC keys and broker tokens. No user-space generator is involved, so there is nothing to seed
//! and nothing that a `fork` could duplicate.

use std::io;

/// Fills `buf` with random bytes from the kernel's generator (the one behind `/dev/urandom`).
/// Blocks only during early boot, before the generator is initialised.
pub fn fill(buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::rand::getrandom(&mut buf[done..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// 64 random bits.
pub fn u64() -> io::Result<u64> {
    let mut b = [0u8; 8];
    fill(&mut b)?;
    Ok(u64::from_ne_bytes(b))
}

/// 128 random bits.
pub fn u128() -> io::Result<u128> {
    let mut b = [0u8; 16];
    fill(&mut b)?;
    Ok(u128::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ() {
        // Two equal 128-bit draws would mean the generator is broken (chance 2^-128).
        assert_ne!(super::u128().unwrap(), super::u128().unwrap());
        assert_ne!(super::u64().unwrap(), super::u64().unwrap());
    }

    #[test]
    fn large_buffers_are_filled() {
        let mut buf = vec![0u8; 1 << 16];
        super::fill(&mut buf).unwrap();
        // 64 KiB of random bytes with fewer than 100 non-zero ones cannot happen by chance.
        assert!(buf.iter().filter(|&&b| b != 0).count() > 60_000);
    }
}
