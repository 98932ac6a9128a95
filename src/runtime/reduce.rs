//! The arithmetic of `aclrtReduceAsync`: `dst[i] = op(dst[i], src[i])` over elements of one
//! type, and the half-precision conversions it (and `aclFloat16ToFloat`) needs.
//!
//! The vendor's DMA engine reduces as it copies; here the stream's worker does it on the bytes
//! the runtime's copies read. Integer sums wrap (the vendor does not say; a DMA adder keeps the
//! low bits); half-precision values are computed in `f32` and rounded to nearest, ties to even.

use crate::error::rt_codes::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Sum,
    /// HCCL's `HCCL_REDUCE_PROD`; `aclrtReduceAsync` has no product.
    Prod,
    Max,
    Min,
}

/// The element types reductions know: `aclrtReduceAsync`'s seven and the rest of HCCL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    I128,
    F16,
    Bf16,
    F32,
    F64,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 | Elem::F16 | Elem::Bf16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
            Elem::I128 => 16,
        }
    }
}

/// The operation and element type of an `aclrtReduceKind` and `aclDataType`, or why not.
pub fn parse(kind: i32, data_type: i32) -> AclResult<(Op, Elem)> {
    let op = match kind {
        10 => Op::Sum,
        11 => Op::Max,
        12 => Op::Min,
        13 => {
            return Err(AclError::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL: the vendor does not document what it computes",
            ));
        }
        k => {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("kind {k} is not an aclrtReduceKind (10..=13)"),
            ));
        }
    };
    let elem = match data_type {
        2 => Elem::I8,
        6 => Elem::I16,
        3 => Elem::I32,
        8 => Elem::U32,
        1 => Elem::F16,
        27 => Elem::Bf16,
        0 => Elem::F32,
        t => {
            return Err(AclError::new(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!("type {t}: a reduction takes int8, int16, int32, uint32, fp16, fp32 or bf16"),
            ));
        }
    };
    Ok((op, elem))
}

/// The arithmetic of one element type: integers wrap, floats are IEEE.
trait Arith: Copy + PartialOrd {
    fn add(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
}

macro_rules! int_arith {
    ($($t:ty)*) => {$(
        impl Arith for $t {
            fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
        }
    )*};
}
int_arith!(i8 u8 i16 u16 i32 u32 i64 u64 i128);

impl Arith for f32 {
    fn add(self, b: Self) -> Self {
        self + b
    }
    fn mul(self, b: Self) -> Self {
        self * b
    }
}

impl Arith for f64 {
    fn add(self, b: Self) -> Self {
        self + b
    }
    fn mul(self, b: Self) -> Self {
        self * b
    }
}

/// `op(a, b)`; max and min keep `a` unless `b` is strictly beyond it.
fn pick<T: Arith>(op: Op, a: T, b: T) -> T {
    match op {
        Op::Sum => a.add(b),
        Op::Prod => a.mul(b),
        Op::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        Op::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
    }
}

/// `dst[i] = op(dst[i], src[i])` over elements of `N` bytes, read with `load` and written back
/// with `store`. The operation is chosen once, outside the loop, so each loop is one operation
/// on one type, which the compiler vectorises.
fn each<const N: usize, T: Arith>(
    op: Op,
    dst: &mut [u8],
    src: &[u8],
    load: impl Fn([u8; N]) -> T + Copy,
    store: impl Fn(T) -> [u8; N] + Copy,
) {
    fn run<const N: usize, T: Copy>(
        dst: &mut [u8],
        src: &[u8],
        load: impl Fn([u8; N]) -> T + Copy,
        store: impl Fn(T) -> [u8; N] + Copy,
        f: impl Fn(T, T) -> T + Copy,
    ) {
        let one = |d: &mut [u8], s: &[u8]| {
            let (Ok(a), Ok(b)) = (<[u8; N]>::try_from(&*d), <[u8; N]>::try_from(s)) else { return };
            d.copy_from_slice(&store(f(load(a), load(b))));
        };
        // Blocks of LANES elements, each loaded, combined and stored as fixed-size arrays, which
        // the compiler turns into vector instructions (element by element it did not: f32 sums
        // ran 2.7x slower than a plain loop over f32 slices; now the same); then the rest one
        // by one.
        const LANES: usize = 16;
        let mut blocks_d = dst.chunks_exact_mut(N * LANES);
        let mut blocks_s = src.chunks_exact(N * LANES);
        let at = |b: &[u8], i: usize| -> [u8; N] {
            let mut e = [0u8; N];
            e.copy_from_slice(&b[i * N..(i + 1) * N]);
            e
        };
        for (d, s) in (&mut blocks_d).zip(&mut blocks_s) {
            let r: [T; LANES] = std::array::from_fn(|i| f(load(at(d, i)), load(at(s, i))));
            for (i, v) in r.into_iter().enumerate() {
                d[i * N..(i + 1) * N].copy_from_slice(&store(v));
            }
        }
        let (rest_d, rest_s) = (blocks_d.into_remainder(), blocks_s.remainder());
        for (d, s) in rest_d.chunks_exact_mut(N).zip(rest_s.chunks_exact(N)) {
            one(d, s);
        }
    }
    match op {
        Op::Sum => run(dst, src, load, store, |a: T, b: T| pick(Op::Sum, a, b)),
        Op::Prod => run(dst, src, load, store, |a: T, b: T| pick(Op::Prod, a, b)),
        Op::Max => run(dst, src, load, store, |a: T, b: T| pick(Op::Max, a, b)),
        Op::Min => run(dst, src, load, store, |a: T, b: T| pick(Op::Min, a, b)),
    }
}

/// Reduces `src` into `dst` (same length, a multiple of the element size).
pub fn apply(op: Op, elem: Elem, dst: &mut [u8], src: &[u8]) {
    match elem {
        Elem::I8 => each(op, dst, src, i8::from_ne_bytes, i8::to_ne_bytes),
        Elem::U8 => each(op, dst, src, u8::from_ne_bytes, u8::to_ne_bytes),
        Elem::I16 => each(op, dst, src, i16::from_ne_bytes, i16::to_ne_bytes),
        Elem::U16 => each(op, dst, src, u16::from_ne_bytes, u16::to_ne_bytes),
        Elem::I32 => each(op, dst, src, i32::from_ne_bytes, i32::to_ne_bytes),
        Elem::U32 => each(op, dst, src, u32::from_ne_bytes, u32::to_ne_bytes),
        Elem::I64 => each(op, dst, src, i64::from_ne_bytes, i64::to_ne_bytes),
        Elem::U64 => each(op, dst, src, u64::from_ne_bytes, u64::to_ne_bytes),
        Elem::I128 => each(op, dst, src, i128::from_ne_bytes, i128::to_ne_bytes),
        Elem::F32 => each(op, dst, src, f32::from_ne_bytes, f32::to_ne_bytes),
        Elem::F64 => each(op, dst, src, f64::from_ne_bytes, f64::to_ne_bytes),
        Elem::F16 => {
            each(op, dst, src, |b| f16_to_f32(u16::from_ne_bytes(b)), |v| f32_to_f16(v).to_ne_bytes())
        }
        Elem::Bf16 => {
            each(op, dst, src, |b| bf16_to_f32(u16::from_ne_bytes(b)), |v| f32_to_bf16(v).to_ne_bytes())
        }
    }
}

/// An IEEE half-precision value as `f32` (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: normalise.
            let shift = f.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((f << shift) & 0x3ff) << 13)
        }
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 112) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

/// `f32` to IEEE half precision, rounded to nearest, ties to even; out of range: infinity.
pub fn f32_to_f16(v: f32) -> u16 {
    let bits = v.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if frac != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: shift the full significand down, rounding.
        let m = frac | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (frac >> 13);
    let rest = frac & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 == 1) {
        r += 1; // may carry into the exponent, up to infinity: right.
    }
    sign | r as u16
}

/// A bfloat16 value as `f32` (exact).
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `f32` to bfloat16, rounded to nearest, ties to even (NaN stays NaN).
pub fn f32_to_bf16(v: f32) -> u16 {
    let bits = v.to_bits();
    if v.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_round_trips_and_rounds_to_even() {
        for h in [0u16, 0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x8000] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
        }
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        // Powers of two as bits: Miri makes powi inexact on purpose.
        let two_to = |e: i32| f32::from_bits(((127 + e) as u32) << 23);
        assert_eq!(f16_to_f32(0x0001), two_to(-24));
        assert_eq!(f32_to_f16(65520.0), 0x7c00, "rounds up to infinity");
        assert_eq!(f32_to_f16(1.0 + two_to(-11)), 0x3c00, "a tie goes to even");
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        assert_eq!(bf16_to_f32(f32_to_bf16(1.5)), 1.5);
    }

    #[test]
    fn reductions_combine_elementwise() {
        let mut d = [1i32, 5, -3].map(i32::to_ne_bytes).concat();
        let s = [2i32, 4, i32::MAX].map(i32::to_ne_bytes).concat();
        apply(Op::Max, Elem::I32, &mut d, &s);
        assert_eq!(d, [2i32, 5, i32::MAX].map(i32::to_ne_bytes).concat());
        let mut h = f32_to_f16(1.5).to_ne_bytes().to_vec();
        apply(Op::Sum, Elem::F16, &mut h, &f32_to_f16(2.0).to_ne_bytes());
        assert_eq!(f16_to_f32(u16::from_ne_bytes([h[0], h[1]])), 3.5);
        assert!(parse(13, 0).is_err() && parse(10, 9).is_err());
    }
}
