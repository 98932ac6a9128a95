//! `acl/acl_rt.h`: `aclrtRandomNumAsync`, random-number tasks on a stream
//! (`runtime/random.rs`).

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_call;
use crate::ffi::acl_rt::device_words;
use crate::ffi::acl_rt::kernel_types::{aclrtRandomNumTaskInfo, aclrtRandomParaInfo};
use crate::ffi::handles::raw;
use crate::ffi::ptr;
use crate::runtime::context;
use crate::runtime::random::{self, Elem, Func, Philox};

/// The bytes of the counter a task reads and advances.
const COUNTER_LEN: usize = 16;

/// A parameter as the task info holds it: its value, or the device address where the task
/// reads it when it runs.
#[derive(Clone, Copy)]
enum Param {
    Value([u8; 8]),
    At(usize),
}

impl Param {
    /// Reads `p` (named `what`) holding a `width`-byte value.
    fn of(p: &aclrtRandomParaInfo, width: usize, what: &str) -> AclResult<Param> {
        match (p.isAddr, usize::from(p.size)) {
            (0, size) if size == width => Ok(Param::Value(p.valueOrAddr)),
            (1, 8) => match u64::from_ne_bytes(p.valueOrAddr) {
                0 => Err(AclError::new(
                    ACL_ERROR_INVALID_PARAM,
                    format!("{what}: isAddr = 1 with a NULL address"),
                )),
                addr => Ok(Param::At(addr as usize)),
            },
            (0 | 1, size) => Err(AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "{what}.size is {size}: a value here is {width} bytes (isAddr = 0), an address 8 (isAddr = 1)"
                ),
            )),
            (flag, _) => {
                Err(AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("{what}.isAddr is {flag}: 0 or 1")))
            }
        }
    }

    fn bytes(self, width: usize, what: &str) -> AclResult<Vec<u8>> {
        match self {
            Param::Value(v) => Ok(v[..width].to_vec()),
            Param::At(addr) => device_words::read_bytes(addr, width, what),
        }
    }
}

/// The function of a task, with parameters still to read when it runs.
#[derive(Clone, Copy)]
enum Plan {
    Dropout(Param),
    Uniform(Param, Param),
    Normal(Param, Param, bool),
}

impl Plan {
    fn of(info: &aclrtRandomNumTaskInfo, elem: Elem) -> AclResult<Plan> {
        let w = elem.size();
        let f = &info.randomNumFuncParaInfo;
        Ok(match f.funcType {
            0 => {
                // SAFETY: every member of the union is plain bytes (`aclrtRandomParaInfo`s), so
                // any of them may be read whatever the caller wrote.
                let d = unsafe { f.paramInfo.dropoutBitmaskInfo };
                Plan::Dropout(Param::of(&d.dropoutRation, w, "dropoutRation")?)
            }
            1 => {
                // SAFETY: as above.
                let u = unsafe { f.paramInfo.uniformDisInfo };
                Plan::Uniform(Param::of(&u.min, w, "min")?, Param::of(&u.max, w, "max")?)
            }
            t @ (2 | 3) => {
                // SAFETY: as above.
                let n = unsafe { f.paramInfo.normalDisInfo };
                Plan::Normal(Param::of(&n.mean, w, "mean")?, Param::of(&n.stddev, w, "stddev")?, t == 3)
            }
            t => {
                return Err(AclError::new(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("funcType {t} is not an aclrtRandomNumFuncType (0..=3)"),
                ));
            }
        })
    }

    /// Whether every parameter is a value (none is read from device memory).
    fn by_value(self) -> bool {
        let v = |p: Param| matches!(p, Param::Value(_));
        match self {
            Plan::Dropout(r) => v(r),
            Plan::Uniform(a, b) | Plan::Normal(a, b, _) => v(a) && v(b),
        }
    }

    /// The function with its parameters read (at run time, for those given by address).
    fn read(self, elem: Elem) -> AclResult<Func> {
        let w = elem.size();
        let num = |p: Param, what| p.bytes(w, what).map(|b| elem.value(&b));
        Ok(match self {
            Plan::Dropout(r) => Func::DropoutBitmask { ratio: num(r, "dropoutRation")?.float() },
            Plan::Uniform(lo, hi) => Func::Uniform { min: num(lo, "min")?, max: num(hi, "max")? },
            Plan::Normal(m, s, truncated) => {
                Func::Normal { mean: num(m, "mean")?.float(), stddev: num(s, "stddev")?.float(), truncated }
            }
        })
    }
}

fn count_of(p: &aclrtRandomParaInfo, what: &str) -> AclResult<Param> {
    Param::of(p, 8, what)
}

fn u64_of(p: Param, what: &str) -> AclResult<u64> {
    let b = p.bytes(8, what)?;
    Ok(u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
}

/// Queues a random-number task: `randomNum` values of `dataType` into `randomResultAddr`
/// (for a dropout bitmask, `ceil(randomNum / 8)` bytes, bit `i % 8` of byte `i / 8` is element
/// `i`, 1 = kept), from the Philox4x32-10 stream of `randomSeed` at the 16-byte counter at
/// `randomCounterAddr`, which the task advances by the blocks it used. Parameters given by
/// address (`isAddr = 1`) are read from device memory when the task runs, as on the device.
/// `randomParaAddr` is where the NPU stages the parameters; here it is checked to be device
/// memory and left untouched. `reserve` must be NULL.
///
/// # Safety
/// `taskInfo` is NULL or points to an `aclrtRandomNumTaskInfo` readable during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRandomNumAsync(
    taskInfo: *const aclrtRandomNumTaskInfo,
    stream: aclrtStream,
    reserve: *mut c_void,
) -> aclError {
    acl_call("aclrtRandomNumAsync", || {
        if !reserve.is_null() {
            return Err(AclError::new(ACL_ERROR_INVALID_PARAM, "reserve must be NULL"));
        }
        // SAFETY: forwarded from this function's contract.
        let info = unsafe { ptr::slice(taskInfo, 1, "taskInfo") }?
            .first()
            .ok_or_else(|| ptr::null_argument("taskInfo"))?;
        let elem = Elem::parse(info.dataType)?;
        let plan = Plan::of(info, elem)?;
        let (seed, count) =
            (count_of(&info.randomSeed, "randomSeed")?, count_of(&info.randomNum, "randomNum")?);
        let (result, counter) = (info.randomResultAddr.addr(), info.randomCounterAddr.addr());
        if result == 0 || counter == 0 {
            return Err(AclError::new(
                ACL_ERROR_INVALID_PARAM,
                "randomResultAddr and randomCounterAddr must not be NULL",
            ));
        }
        let s = context::stream_for_work(raw(stream))?;
        let on_stream_device = |addr, len, what| device_words::on_device(addr, len, what, s.device);
        on_stream_device(counter, COUNTER_LEN, "randomCounterAddr")?;
        if !info.randomParaAddr.is_null() {
            on_stream_device(info.randomParaAddr.addr(), 1, "randomParaAddr")?;
        }
        // Parameters given by value are checked now; those in device memory when the task
        // reads them, as the device does.
        if plan.by_value() {
            let func = plan.read(elem)?;
            random::check(&func, elem)?;
            if let Param::Value(_) = count {
                let len = random::result_len(&func, elem, u64_of(count, "randomNum")?)?;
                on_stream_device(result, len.max(1), "randomResultAddr")?;
            }
        }
        s.submit(Box::new(move |_| {
            let func = plan.read(elem)?;
            random::check(&func, elem)?;
            let (seed, n) = (u64_of(seed, "randomSeed")?, u64_of(count, "randomNum")?);
            let len = random::result_len(&func, elem, n)?;
            device_words::device_of(result, len.max(1), "randomResultAddr")?;
            let start: [u8; COUNTER_LEN] =
                device_words::read_bytes(counter, COUNTER_LEN, "randomCounterAddr")?
                    .try_into()
                    .unwrap_or([0; 16]);
            let mut rng = Philox::new(seed, start);
            let mut out = vec![0u8; len];
            random::generate(&func, elem, n, &mut rng, &mut out);
            device_words::write_bytes(result, &out, "randomResultAddr")?;
            device_words::write_bytes(counter, &rng.counter_bytes(), "randomCounterAddr")
        }))
    })
}
