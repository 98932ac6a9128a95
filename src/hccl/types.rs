//! HCCL's element types and reduction operations (`HcclDataType`, `HcclReduceOp` of
//! `hccl/hccl_types.h`), as the core computes with them. Reductions are `runtime::reduce`'s
//! arithmetic, which `aclrtReduceAsync` uses too.

use crate::error::hccl_codes::HcclError;
use crate::runtime::reduce::{Elem, Op};

/// `HcclDataType`, for the types that have a meaning on a host (every one but HiF8 and the FP8
/// formats, which only the vendor's cube units define).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    Int8,
    Int16,
    Int32,
    Fp16,
    Fp32,
    Int64,
    Uint64,
    Uint8,
    Uint16,
    Uint32,
    Fp64,
    Bfp16,
    Int128,
}

impl DataType {
    /// The C value: `HCCL_DATA_TYPE_*`. The FP8 and HiF8 values, 14 to 17, are `HCCL_E_NOT_SUPPORT`
    /// (a host has no such arithmetic); any other unknown value is `HCCL_E_PARA`.
    pub fn from_raw(raw: i32) -> Result<DataType, HcclError> {
        use DataType::*;
        Ok(match raw {
            0 => Int8,
            1 => Int16,
            2 => Int32,
            3 => Fp16,
            4 => Fp32,
            5 => Int64,
            6 => Uint64,
            7 => Uint8,
            8 => Uint16,
            9 => Uint32,
            10 => Fp64,
            11 => Bfp16,
            12 => Int128,
            14..=17 => {
                return Err(HcclError::new(
                    crate::error::hccl_codes::HCCL_E_NOT_SUPPORT,
                    format!("HcclDataType {raw} (HiF8 or FP8) has no arithmetic on a host"),
                ));
            }
            _ => return Err(HcclError::para(format!("{raw} is not an HcclDataType"))),
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        use DataType::*;
        match self {
            Int8 | Uint8 => 1,
            Int16 | Uint16 | Fp16 | Bfp16 => 2,
            Int32 | Uint32 | Fp32 => 4,
            Int64 | Uint64 | Fp64 => 8,
            Int128 => 16,
        }
    }

    /// The element of `runtime::reduce` this type reduces as.
    pub fn elem(self) -> Elem {
        use DataType::*;
        match self {
            Int8 => Elem::I8,
            Int16 => Elem::I16,
            Int32 => Elem::I32,
            Fp16 => Elem::F16,
            Fp32 => Elem::F32,
            Int64 => Elem::I64,
            Uint64 => Elem::U64,
            Uint8 => Elem::U8,
            Uint16 => Elem::U16,
            Uint32 => Elem::U32,
            Fp64 => Elem::F64,
            Bfp16 => Elem::Bf16,
            Int128 => Elem::I128,
        }
    }

    /// `count` elements in bytes, or `HCCL_E_PARA` when that does not fit the address space.
    pub fn bytes(self, count: u64) -> Result<usize, HcclError> {
        usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(self.size()))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| HcclError::para(format!("{count} elements of {self:?} do not fit in memory")))
    }
}

/// `HcclReduceOp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    pub fn from_raw(raw: i32) -> Result<ReduceOp, HcclError> {
        Ok(match raw {
            0 => ReduceOp::Sum,
            1 => ReduceOp::Prod,
            2 => ReduceOp::Max,
            3 => ReduceOp::Min,
            _ => return Err(HcclError::para(format!("{raw} is not an HcclReduceOp"))),
        })
    }

    pub fn op(self) -> Op {
        match self {
            ReduceOp::Sum => Op::Sum,
            ReduceOp::Prod => Op::Prod,
            ReduceOp::Max => Op::Max,
            ReduceOp::Min => Op::Min,
        }
    }
}
