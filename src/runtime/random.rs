//! The arithmetic of `aclrtRandomNumAsync`: counter-based random numbers (Philox4x32-10, the
//! generator of the NPU's random-number tasks and of cuRAND and PyTorch), shaped into uniform,
//! normal, truncated normal values or a dropout bitmask.
//!
//! The vendor documents the task's inputs (seed, a 16-byte counter in device memory, the count)
//! but not its bit stream, so the figures here are this generator's, not the NPU's. What a user
//! relies on holds: the same seed and counter give the same numbers, and each task advances the
//! counter by what it consumed, so consecutive tasks sharing a counter give fresh numbers.

use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::runtime::reduce::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// The element type of the results (`aclDataType`), of the types the vendor lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F32,
    F16,
    Bf16,
    I32,
    I64,
    U32,
    U64,
}

impl Elem {
    /// The element type of an `aclDataType` value, or 107000.
    pub fn parse(data_type: i32) -> AclResult<Elem> {
        Ok(match data_type {
            0 => Elem::F32,
            1 => Elem::F16,
            27 => Elem::Bf16,
            3 => Elem::I32,
            9 => Elem::I64,
            8 => Elem::U32,
            10 => Elem::U64,
            t => {
                return Err(AclError::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "data type {t}: a random-number task makes ACL_FLOAT, ACL_FLOAT16, ACL_BF16, \
                         ACL_INT32, ACL_INT64, ACL_UINT32 or ACL_UINT64"
                    ),
                ));
            }
        })
    }

    pub fn size(self) -> usize {
        match self {
            Elem::F16 | Elem::Bf16 => 2,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::I64 | Elem::U64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F16 | Elem::Bf16)
    }

    /// The value of `bytes` (native order, `self.size()` long) as a number.
    pub fn value(self, bytes: &[u8]) -> Number {
        let mut b = [0u8; 8];
        b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
        match self {
            Elem::F32 => Number::Float(f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::F16 => Number::Float(f64::from(f16_to_f32(u16::from_ne_bytes([b[0], b[1]])))),
            Elem::Bf16 => Number::Float(f64::from(bf16_to_f32(u16::from_ne_bytes([b[0], b[1]])))),
            Elem::I32 => Number::Int(i128::from(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::U32 => Number::Int(i128::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::I64 => Number::Int(i128::from(i64::from_ne_bytes(b))),
            Elem::U64 => Number::Int(i128::from(u64::from_ne_bytes(b))),
        }
    }
}

/// A task parameter read in the element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Float(f64),
    Int(i128),
}

impl Number {
    /// The value as a float (integers converted).
    pub fn float(self) -> f64 {
        match self {
            Number::Float(v) => v,
            Number::Int(v) => v as f64,
        }
    }
}

/// What a task makes, with its parameters already read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Func {
    /// One bit per element, 1 = kept, each dropped with probability `ratio`.
    DropoutBitmask { ratio: f64 },
    /// Floats in `[min, max)`; integers in `[min, max)` too (the vendor does not say whether
    /// `max` is included; half-open is what its uniform operators and cuRAND do).
    Uniform { min: Number, max: Number },
    /// `mean + stddev * z`; truncated: `|z| <= 2`, redrawing the others (TensorFlow's and the
    /// vendor's `TruncatedNormal` rule).
    Normal { mean: f64, stddev: f64, truncated: bool },
}

/// The bytes a task writes for `count` elements.
pub fn result_len(func: &Func, elem: Elem, count: u64) -> AclResult<usize> {
    let len = match func {
        Func::DropoutBitmask { .. } => count.div_ceil(8),
        _ => count.saturating_mul(elem.size() as u64),
    };
    usize::try_from(len).map_err(|_| {
        AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("{count} random numbers do not fit in memory"))
    })
}

/// Checks what the parameters say before the task runs (107000 with the reason).
pub fn check(func: &Func, elem: Elem) -> AclResult<()> {
    let bad = |why: String| Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, why));
    match *func {
        Func::DropoutBitmask { ratio } if !(0.0..=1.0).contains(&ratio) => {
            bad(format!("dropout ratio {ratio}: a probability in [0, 1]"))
        }
        Func::DropoutBitmask { .. } if !elem.is_float() => {
            bad("a dropout ratio is ACL_FLOAT, ACL_FLOAT16 or ACL_BF16".to_owned())
        }
        Func::Uniform { min, max } => {
            let ordered = match (min, max) {
                (Number::Int(a), Number::Int(b)) => a < b,
                (a, b) => a.float() < b.float(),
            };
            if ordered {
                Ok(())
            } else {
                bad(format!("uniform range: min {min:?} must be below max {max:?}"))
            }
        }
        Func::Normal { .. } if !elem.is_float() => {
            bad("normal distributions are made as ACL_FLOAT, ACL_FLOAT16 or ACL_BF16".to_owned())
        }
        Func::Normal { mean, stddev, .. } if !(stddev >= 0.0 && stddev.is_finite() && mean.is_finite()) => {
            bad(format!("normal distribution: mean {mean} and stddev {stddev} must be finite, stddev >= 0"))
        }
        _ => Ok(()),
    }
}

/// The Philox4x32-10 stream at a 128-bit counter (four little-endian words) and a 64-bit key.
pub struct Philox {
    counter: [u32; 4],
    key: [u32; 2],
    block: [u32; 4],
    used: usize,
}

const M0: u64 = 0xD251_1F53;
const M1: u64 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// One Philox4x32-10 block: ten rounds over the counter with the key bumped each round.
pub fn philox_block(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = M0 * u64::from(c[0]);
        let p1 = M1 * u64::from(c[2]);
        c = [((p1 >> 32) as u32) ^ c[1] ^ k[0], p1 as u32, ((p0 >> 32) as u32) ^ c[3] ^ k[1], p0 as u32];
    }
    c
}

impl Philox {
    pub fn new(seed: u64, counter: [u8; 16]) -> Philox {
        let word =
            |i: usize| u32::from_le_bytes([counter[i], counter[i + 1], counter[i + 2], counter[i + 3]]);
        Philox {
            counter: [word(0), word(4), word(8), word(12)],
            key: [seed as u32, (seed >> 32) as u32],
            block: [0; 4],
            used: 4,
        }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.block = philox_block(self.counter, self.key);
            self.used = 0;
            self.bump();
        }
        self.used += 1;
        self.block[self.used - 1]
    }

    fn next_u64(&mut self) -> u64 {
        u64::from(self.next_u32()) | (u64::from(self.next_u32()) << 32)
    }

    /// A float in `[0, 1)` with 24 random bits (every f32 of that grid).
    fn unit(&mut self) -> f64 {
        f64::from(self.next_u32() >> 8) * (1.0 / 16_777_216.0)
    }

    fn bump(&mut self) {
        for w in &mut self.counter {
            *w = w.wrapping_add(1);
            if *w != 0 {
                break;
            }
        }
    }

    /// The counter after the blocks used so far: what the task writes back.
    pub fn counter_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        for (i, w) in self.counter.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// A standard normal value (Box-Muller on two 32-bit uniforms; `u1` in `(0, 1]`).
    fn normal(&mut self) -> f64 {
        let u1 = (f64::from(self.next_u32()) + 1.0) / 4_294_967_296.0;
        let u2 = f64::from(self.next_u32()) / 4_294_967_296.0;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Writes `count` results of `func` into `out` (`result_len` bytes) from `rng`.
pub fn generate(func: &Func, elem: Elem, count: u64, rng: &mut Philox, out: &mut [u8]) {
    match *func {
        Func::DropoutBitmask { ratio } => {
            out.fill(0);
            for i in 0..count as usize {
                if rng.unit() >= ratio {
                    out[i / 8] |= 1 << (i % 8);
                }
            }
        }
        Func::Uniform { min, max } => {
            for chunk in out.chunks_exact_mut(elem.size()) {
                match (min, max) {
                    (Number::Int(lo), Number::Int(hi)) => {
                        let span = (hi - lo) as u128;
                        let r = if span <= 1 << 32 {
                            u128::from(rng.next_u32()) % span
                        } else {
                            u128::from(rng.next_u64()) % span
                        };
                        put_int(elem, lo + r as i128, chunk);
                    }
                    (lo, hi) => {
                        let (lo, hi) = (lo.float(), hi.float());
                        put_float_below(elem, lo + rng.unit() * (hi - lo), hi, chunk);
                    }
                }
            }
        }
        Func::Normal { mean, stddev, truncated } => {
            for chunk in out.chunks_exact_mut(elem.size()) {
                let mut z = rng.normal();
                while truncated && z.abs() > 2.0 {
                    z = rng.normal();
                }
                put_float(elem, mean + stddev * z, chunk);
            }
        }
    }
}

fn put_int(elem: Elem, v: i128, out: &mut [u8]) {
    match elem {
        Elem::I32 => out.copy_from_slice(&(v as i32).to_ne_bytes()),
        Elem::U32 => out.copy_from_slice(&(v as u32).to_ne_bytes()),
        Elem::I64 => out.copy_from_slice(&(v as i64).to_ne_bytes()),
        _ => out.copy_from_slice(&(v as u64).to_ne_bytes()),
    }
}

fn put_float(elem: Elem, v: f64, out: &mut [u8]) {
    match elem {
        Elem::F16 => out.copy_from_slice(&f32_to_f16(v as f32).to_ne_bytes()),
        Elem::Bf16 => out.copy_from_slice(&f32_to_bf16(v as f32).to_ne_bytes()),
        _ => out.copy_from_slice(&(v as f32).to_ne_bytes()),
    }
}

/// Writes `v` (below `max`) in the element type, keeping it below `max` where rounding to the
/// narrower type would reach it: the next representable value down instead.
fn put_float_below(elem: Elem, v: f64, max: f64, out: &mut [u8]) {
    put_float(elem, v, out);
    if elem.value(out).float() < max {
        return;
    }
    let down = |bits: u64, zero_neg: u64| -> u64 {
        if bits & !zero_neg == 0 {
            zero_neg | 1 // +-0 -> the smallest negative subnormal
        } else if bits & zero_neg == 0 {
            bits - 1
        } else {
            bits + 1
        }
    };
    match elem {
        Elem::F16 | Elem::Bf16 => {
            let bits = u64::from(u16::from_ne_bytes([out[0], out[1]]));
            out.copy_from_slice(&(down(bits, 0x8000) as u16).to_ne_bytes());
        }
        _ => {
            let bits = u64::from(u32::from_ne_bytes([out[0], out[1], out[2], out[3]]));
            out.copy_from_slice(&(down(bits, 0x8000_0000) as u32).to_ne_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Random123 known-answer vectors of Philox4x32-10.
    #[test]
    fn philox_matches_random123() {
        assert_eq!(philox_block([0; 4], [0; 2]), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
        assert_eq!(
            philox_block([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox_block([0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344], [0xa409_3822, 0x299f_31d0]),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn the_counter_advances_by_the_blocks_used() {
        let mut rng = Philox::new(7, [0; 16]);
        for _ in 0..9 {
            rng.next_u32();
        }
        assert_eq!(rng.counter_bytes()[0], 3);
        let mut carry = [0xff; 16];
        carry[4] = 0;
        let mut rng = Philox::new(0, carry);
        rng.next_u32();
        assert_eq!(&rng.counter_bytes()[..5], &[0, 0, 0, 0, 1]);
    }

    #[test]
    fn uniform_halves_stay_below_max() {
        let (lo, hi) = (Number::Float(1.0), Number::Float(2.0));
        let mut rng = Philox::new(1, [0; 16]);
        let mut out = vec![0u8; 2 * 4096];
        generate(&Func::Uniform { min: lo, max: hi }, Elem::F16, 4096, &mut rng, &mut out);
        for c in out.chunks_exact(2) {
            let v = Elem::F16.value(c).float();
            assert!((1.0..2.0).contains(&v), "{v}");
        }
    }

    #[test]
    fn truncated_normals_lie_within_two_stddev() {
        let mut rng = Philox::new(3, [0; 16]);
        let mut out = vec![0u8; 4 * 10_000];
        let f = Func::Normal { mean: 1.0, stddev: 2.0, truncated: true };
        generate(&f, Elem::F32, 10_000, &mut rng, &mut out);
        let vals: Vec<f64> = out.chunks_exact(4).map(|c| Elem::F32.value(c).float()).collect();
        assert!(vals.iter().all(|v| (-3.0..=5.0).contains(v)));
        let mean = vals.iter().sum::<f64>() / vals.len() as f64;
        assert!((mean - 1.0).abs() < 0.05, "mean {mean}");
    }
}
