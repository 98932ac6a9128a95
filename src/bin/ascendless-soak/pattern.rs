//! Deterministic data for the soak: a small random generator (the choices of each transfer and
//! the bytes it writes) and a checksum, so every byte read can be checked against what was
//! written and both ends of a transfer can compare their memory at the end.

/// SplitMix64: tiny, fast and good enough to pick sizes and fill buffers (not cryptographic).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Fills `out` with the generator's next bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let word = self.next().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// FNV-1a, 64 bits.
pub fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_another_seed_others() {
        let (mut a, mut b, mut c) = (vec![0u8; 37], vec![0u8; 37], vec![0u8; 37]);
        Rng::new(7).fill(&mut a);
        Rng::new(7).fill(&mut b);
        Rng::new(8).fill(&mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().any(|&x| x != 0));
    }

    #[test]
    fn the_checksum_sees_one_changed_byte() {
        let mut data = vec![0u8; 4096];
        Rng::new(1).fill(&mut data);
        let before = checksum(&data);
        data[4000] ^= 1;
        assert_ne!(before, checksum(&data));
        assert_eq!(checksum(&[]), 0xcbf2_9ce4_8422_2325);
    }
}
