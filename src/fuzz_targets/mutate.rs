//! A small deterministic mutator, for running the targets under `cargo test` (and Miri)
//! without libFuzzer: the same seed gives the same inputs on every machine, so a failure
//! found here is found again by the next run.

/// Runs `target` on `rounds` inputs made from `corpus` by random edits (flips, overwrites
/// with boundary values, insertions, deletions, cuts, splices of two inputs) and on random
/// bytes, all drawn from `seed`.
pub fn run(target: fn(&[u8]), corpus: &[Vec<u8>], rounds: usize, seed: u64) {
    let mut rng = Rng(seed | 1);
    for round in 0..rounds {
        let input = if corpus.is_empty() || round % 16 == 0 {
            (0..rng.below(64)).map(|_| rng.next() as u8).collect()
        } else {
            mutate(&mut rng, corpus)
        };
        target(&input);
    }
}

/// One input: a corpus entry with one to four edits.
fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut b = corpus[rng.below(corpus.len())].clone();
    for _ in 0..=rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(7) {
            0 if at < b.len() => b[at] ^= 1 << rng.below(8),
            1 if at < b.len() => b[at] = rng.next() as u8,
            2 => {
                // A boundary value (0, all ones, a 16- or 32-bit length) written over the input.
                let v: &[u8] = match rng.below(4) {
                    0 => &[0; 4],
                    1 => &[0xff; 4],
                    2 => &[0xff, 0xff, 0x0f, 0x00],
                    _ => &[0x01, 0x04],
                };
                let end = (at + v.len()).min(b.len());
                b[at..end].copy_from_slice(&v[..end - at]);
            }
            3 => {
                let n = rng.below(16);
                b.splice(at..at, (0..n).map(|_| rng.next() as u8));
            }
            4 => {
                let end = (at + rng.below(16)).min(b.len());
                b.drain(at..end);
            }
            5 => b.truncate(at),
            _ => {
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len() + 1);
                b.truncate(at);
                b.extend_from_slice(&other[from..]);
            }
        }
    }
    b
}

/// xorshift64: tiny, and all that is needed of random numbers here.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 for `n` = 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}
