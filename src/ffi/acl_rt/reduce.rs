//! `acl/acl_rt.h`: `aclrtReduceAsync`, reductions of device memory on a stream
//! (`runtime/reduce.rs`).

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ffi::acl_base::{DataTypeArg, aclrtStream};
use crate::ffi::acl_call;
use crate::ffi::acl_rt::device_words;
use crate::ffi::acl_rt::kernel_types::ReduceKindArg;
use crate::ffi::handles::raw;
use crate::runtime::{context, reduce};

/// Queues `dst[i] = op(dst[i], src[i])` over the `count` bytes (a multiple of the element size)
/// of two device ranges of the stream's device: SUM (integers wrap), MAX or MIN of int8, int16,
/// int32, uint32, fp16, fp32 or bf16 (the union of the vendor's products; others 207000).
/// `ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL`, whose result the vendor does not document: 207000.
/// `reserve` must be NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtReduceAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: u64,
    kind: ReduceKindArg,
    r#type: DataTypeArg,
    stream: aclrtStream,
    reserve: *mut c_void,
) -> aclError {
    acl_call("aclrtReduceAsync", || {
        if !reserve.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "reserve must be NULL"));
        }
        if dst.is_null() || src.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "dst and src must not be NULL"));
        }
        let (op, elem) = reduce::parse(kind, r#type)?;
        let len = usize::try_from(count).unwrap_or(usize::MAX);
        if len == 0 || len % elem.size() != 0 {
            return Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("count {count}: a positive multiple of the element size ({} bytes)", elem.size()),
            ));
        }
        let s = context::stream_for_work(raw(stream))?;
        let (dst, src) = (dst.addr(), src.addr());
        device_words::on_device(dst, len, "dst", s.device)?;
        device_words::on_device(src, len, "src", s.device)?;
        s.submit(Box::new(move |_| {
            let from = device_words::read_bytes(src, len, "src")?;
            let mut into = device_words::read_bytes(dst, len, "dst")?;
            reduce::apply(op, elem, &mut into, &from);
            device_words::write_bytes(dst, &into, "dst")
        }))
    })
}
