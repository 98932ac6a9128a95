//! `hccl/hccl_comm.h`: communicators (root info, rank table, one process's devices), their
//! queries and destruction, the process settings, the error texts, and the calls of the
//! vendor's header that have no host meaning (device NICs, virtual memory ranges, symmetric
//! windows, suspend and resume), which answer `HCCL_E_NOT_SUPPORT` with a message naming the
//! call.
//!
//! Every pointer is checked before any work (NULL is `HCCL_E_PTR`), every value too
//! (`HCCL_E_PARA`), so a call that fails has done nothing. A communicator is a handle of
//! [`COMMS`](super::hccl_types::COMMS): a stale, foreign or other kind of handle is
//! `HCCL_E_PARA`, never a dereference.

#![allow(non_snake_case)]

use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::hccl_codes::*;
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::acl_rt::vmm::aclrtDrvMemHandle;
use crate::ffi::handles::{raw, to_c};
use crate::ffi::hccl::group;
use crate::ffi::hccl::hccl_types::*;
use crate::ffi::hccl_call;
use crate::ffi::ptr::{Out, required_str, slice};
use crate::hccl::comm::{self, Comm, Config};
use crate::hccl::ops::Op;

/// Called at the phases of a communicator's life (`HcclCommRegCommStateCallback`).
pub type HcclCommStateCallback =
    Option<unsafe extern "C" fn(comm: HcclComm, state: HcclCommStatePhase, args: *mut c_void) -> HcclResult>;

/// The communicators' names, for `HcclCommGetHandleWithName` and `HcclCommGetStatus`: per
/// name, the handles of the live communicators so named, oldest first (the ranks of one
/// communicator in one process share its name; destroying one leaves the others found).
static NAMES: Mutex<BTreeMap<String, Vec<u64>>> = Mutex::new(BTreeMap::new());

/// `HcclSetConfig(HCCL_DETERMINISTIC, ...)`: every reduction here is deterministic and in rank
/// order whatever it says; it is kept so that `HcclGetConfig` reads it back.
static DETERMINISTIC: AtomicI32 = AtomicI32::new(0);

fn not_supported(api: &str, why: &str) -> HcclError {
    HcclError::new(HCCL_E_NOT_SUPPORT, format!("{api} is not supported by ascendless: {why}"))
}

/// Hands out the handle of a new communicator (its name registered), through `out`.
fn publish(comm: Comm, out: Out<'_, HcclComm>) {
    let name = comm.name();
    let handle = COMMS.insert(comm);
    crate::sync::lock(&NAMES).entry(name).or_default().push(handle);
    out.write(to_c(handle));
}

/// What `HcclCommConfig` at `p` sets that means something here; the struct may be older (and
/// shorter) than this header's, as its size field says.
///
/// # Safety
/// `p` is NULL or points to a config of at least the size its first field gives.
unsafe fn read_config(p: *const HcclCommConfig) -> Result<Config, HcclError> {
    non_null(p, "config")?;
    // SAFETY: non-NULL; the head written by HcclCommConfigInit is readable by the contract.
    let info = unsafe { p.cast::<HcclCommConfigInfo>().read_unaligned() };
    if info.magicWord != HCCL_COMM_CONFIG_MAGIC_WORD {
        return Err(HcclError::para(format!(
            "config: magic word {:#x}, not {HCCL_COMM_CONFIG_MAGIC_WORD:#x}: initialise it with HcclCommConfigInit",
            info.magicWord
        )));
    }
    let full = size_of::<HcclCommConfig>();
    let name_end = std::mem::offset_of!(HcclCommConfig, hcclCommName) + COMM_NAME_MAX_LENGTH;
    let least = std::mem::offset_of!(HcclCommConfig, hcclCommName);
    if info.size < least {
        return Err(HcclError::para(format!("config: size {} is below {least} bytes", info.size)));
    }
    let mut bytes = vec![0u8; full];
    let len = info.size.min(full);
    // SAFETY: `len` bytes of the caller's config are readable (its size field, by the
    // contract); `bytes` is a fresh buffer of `full >= len` bytes.
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), bytes.as_mut_ptr(), len) };
    let word = |at: usize| u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let buffer = word(std::mem::offset_of!(HcclCommConfig, hcclBufferSize));
    let deterministic = word(std::mem::offset_of!(HcclCommConfig, hcclDeterministic));
    if deterministic != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET && deterministic > 2 {
        return Err(HcclError::para(format!("config: hcclDeterministic {deterministic}: 0, 1 or 2")));
    }
    let buffer_mib = match buffer {
        HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET => None,
        0 => return Err(HcclError::para("config: hcclBufferSize 0: at least 1 (MiB)")),
        mib => Some(mib),
    };
    let name = if info.size >= name_end {
        let field = &bytes[name_end - COMM_NAME_MAX_LENGTH..name_end];
        let text = CStr::from_bytes_until_nul(field)
            .map_err(|_| HcclError::para("config: hcclCommName has no NUL in its 128 bytes"))?;
        let text = text.to_str().map_err(|_| HcclError::para("config: hcclCommName is not UTF-8"))?;
        (!text.is_empty()).then(|| text.to_owned())
    } else {
        None
    };
    Ok(Config { buffer_mib, name })
}

/// The root info at `p`, as bytes.
///
/// # Safety
/// `p` is NULL or points to a readable `HcclRootInfo`.
unsafe fn read_root_info(p: *const HcclRootInfo) -> Result<[u8; HCCL_ROOT_INFO_BYTES], HcclError> {
    non_null(p, "rootInfo")?;
    let mut bytes = [0u8; HCCL_ROOT_INFO_BYTES];
    // SAFETY: non-NULL, and HCCL_ROOT_INFO_BYTES readable bytes by the contract; `bytes` is
    // ours.
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), bytes.as_mut_ptr(), HCCL_ROOT_INFO_BYTES) };
    Ok(bytes)
}

fn check_ranks(n_ranks: u32, rank: u32) -> Result<(), HcclError> {
    if n_ranks == 0 {
        return Err(HcclError::para("nRanks is 0: a communicator has at least one rank"));
    }
    if rank >= n_ranks {
        return Err(HcclError::para(format!("rank {rank} is not below nRanks {n_ranks}")));
    }
    Ok(())
}

/// Joins the communicator rank table `clusterInfo` (a file path) describes, as rank `rank`.
/// Blocks until every rank has joined (or `HCCL_CONNECT_TIMEOUT` has passed).
///
/// # Safety
/// `clusterInfo` is NULL or a NUL-terminated string; `comm` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    clusterInfo: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    hccl_call("HcclCommInitClusterInfo", || {
        // SAFETY: the caller's contract.
        let path = unsafe { required_str(clusterInfo, "clusterInfo") }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(comm, "comm") }?;
        publish(Comm::init_cluster_info(path, rank, &Config::default())?, out);
        Ok(())
    })
}

/// `HcclCommInitClusterInfo` with a config (`HcclCommConfigInit`, then the fields to set).
///
/// # Safety
/// As `HcclCommInitClusterInfo`; `config` is NULL or an initialised config.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    clusterInfo: *const c_char,
    rank: u32,
    config: *mut HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    hccl_call("HcclCommInitClusterInfoConfig", || {
        // SAFETY: the caller's contract.
        let path = unsafe { required_str(clusterInfo, "clusterInfo") }?;
        // SAFETY: the caller's contract.
        let config = unsafe { read_config(config) }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(comm, "comm") }?;
        publish(Comm::init_cluster_info(path, rank, &config)?, out);
        Ok(())
    })
}

/// Not supported yet: sub-communicators of a communicator (`HCCL_E_NOT_SUPPORT`).
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCreateSubCommConfig(
    comm: *mut HcclComm,
    rankNum: u32,
    rankIds: *mut u32,
    subCommId: u64,
    subCommRankId: u32,
    config: *mut HcclCommConfig,
    subComm: *mut HcclComm,
) -> HcclResult {
    let _ = (comm, rankNum, rankIds, subCommId, subCommRankId, config, subComm);
    hccl_call("HcclCreateSubCommConfig", || {
        Err(not_supported("HcclCreateSubCommConfig", "sub-communicators are not implemented yet"))
    })
}

/// Writes the root info of a new communicator, which rank 0 hands to the other ranks out of
/// band (a file, a socket, a broadcast of the caller's own).
///
/// # Safety
/// `rootInfo` is NULL or a writable `HcclRootInfo`.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfo(rootInfo: *mut HcclRootInfo) -> HcclResult {
    hccl_call("HcclGetRootInfo", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(rootInfo, "rootInfo") }?;
        let bytes = comm::get_root_info()?;
        out.write(HcclRootInfo { internal: bytes.map(|b| b as c_char) });
        Ok(())
    })
}

/// Joins the communicator of `nRanks` ranks that `rootInfo` (rank 0's `HcclGetRootInfo`)
/// names, as rank `rank`; blocks until every rank has joined (or `HCCL_CONNECT_TIMEOUT`).
///
/// # Safety
/// `rootInfo` is NULL or a readable `HcclRootInfo`; `comm` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    hccl_call("HcclCommInitRootInfo", || {
        // SAFETY: the caller's contract.
        let root = unsafe { read_root_info(rootInfo) }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(comm, "comm") }?;
        check_ranks(nRanks, rank)?;
        publish(Comm::init_root_info(nRanks, &root, rank, &Config::default())?, out);
        Ok(())
    })
}

/// `HcclCommInitRootInfo` with a config: `hcclBufferSize` and `hcclCommName` are used, the
/// other fields are accepted and have no effect (docs/hccl.md).
///
/// # Safety
/// As `HcclCommInitRootInfo`; `config` is NULL or an initialised config.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    hccl_call("HcclCommInitRootInfoConfig", || {
        // SAFETY: the caller's contract.
        let root = unsafe { read_root_info(rootInfo) }?;
        // SAFETY: the caller's contract.
        let config = unsafe { read_config(config) }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(comm, "comm") }?;
        check_ranks(nRanks, rank)?;
        publish(Comm::init_root_info(nRanks, &root, rank, &config)?, out);
        Ok(())
    })
}

/// Sets a process setting: `HCCL_DETERMINISTIC` takes 0, 1 or 2 (every reduction here is
/// deterministic and in rank order already); any other setting is `HCCL_E_PARA`.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclSetConfig(config: HcclConfig, configValue: HcclConfigValue) -> HcclResult {
    hccl_call("HcclSetConfig", || {
        if config != HCCL_DETERMINISTIC {
            return Err(HcclError::para(format!("{config} is not an HcclConfig")));
        }
        // SAFETY: the union has one member, an int32_t.
        let value = unsafe { configValue.value };
        if !(0..=2).contains(&value) {
            return Err(HcclError::para(format!("HCCL_DETERMINISTIC {value}: 0, 1 or 2")));
        }
        DETERMINISTIC.store(value, Ordering::Relaxed);
        Ok(())
    })
}

/// Reads a process setting back (`HCCL_DETERMINISTIC`: 0 until set).
///
/// # Safety
/// `configValue` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetConfig(config: HcclConfig, configValue: *mut HcclConfigValue) -> HcclResult {
    hccl_call("HcclGetConfig", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(configValue, "configValue") }?;
        if config != HCCL_DETERMINISTIC {
            return Err(HcclError::para(format!("{config} is not an HcclConfig")));
        }
        out.write(HcclConfigValue { value: DETERMINISTIC.load(Ordering::Relaxed) });
        Ok(())
    })
}

/// Writes the communicator's name, NUL-terminated, into `commName` (at least
/// `COMM_NAME_MAX_LENGTH` bytes, as the vendor's).
///
/// # Safety
/// `commName` is NULL or `COMM_NAME_MAX_LENGTH` writable bytes.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, commName: *mut c_char) -> HcclResult {
    hccl_call("HcclGetCommName", || {
        non_null(commName, "commName")?;
        let c = comm_of(comm)?;
        let name = c.name();
        let bytes = &name.as_bytes()[..name.len().min(COMM_NAME_MAX_LENGTH - 1)];
        // SAFETY: commName holds COMM_NAME_MAX_LENGTH writable bytes (the contract); at most
        // COMM_NAME_MAX_LENGTH - 1 are copied, then the NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), commName.cast::<u8>(), bytes.len());
            commName.add(bytes.len()).write(0);
        }
        Ok(())
    })
}

/// The communicator of this process named `commName` (`HCCL_E_NOT_FOUND` if none is; of
/// several, as the ranks of one communicator in one process are, the latest made).
///
/// # Safety
/// `commName` is NULL or a NUL-terminated string; `comm` is NULL or writable.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommGetHandleWithName(
    commName: *const c_char,
    comm: *mut HcclComm,
) -> HcclResult {
    hccl_call("HcclCommGetHandleWithName", || {
        // SAFETY: the caller's contract.
        let name = unsafe { required_str(commName, "commName") }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(comm, "comm") }?;
        let handle = crate::sync::lock(&NAMES).get(name).and_then(|h| h.last().copied());
        let handle = handle.ok_or_else(|| {
            HcclError::new(HCCL_E_NOT_FOUND, format!("no communicator is named \"{name}\""))
        })?;
        out.write(to_c(handle));
        Ok(())
    })
}

/// The number of ranks of the communicator.
///
/// # Safety
/// `rankSize` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rankSize: *mut u32) -> HcclResult {
    hccl_call("HcclGetRankSize", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(rankSize, "rankSize") }?;
        out.write(comm_of(comm)?.size());
        Ok(())
    })
}

/// This process's rank in the communicator.
///
/// # Safety
/// `rank` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult {
    hccl_call("HcclGetRankId", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(rank, "rank") }?;
        out.write(comm_of(comm)?.rank());
        Ok(())
    })
}

/// Queues a barrier on `stream` (NULL: the current context's default stream): the stream
/// goes on once every rank's barrier has been reached.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult {
    hccl_call("HcclBarrier", || {
        let c = comm_of(comm)?;
        let s = stream_of(stream)?;
        crate::ffi::hccl::group::submit(c, Op::Barrier, s)
    })
}

/// Destroys the communicator: waits (bounded) for its queued operations, then leaves it; the
/// handle is stale from then on (a second destroy is `HCCL_E_PARA`). The state callbacks are
/// called before and after.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclCommDestroy(comm: HcclComm) -> HcclResult {
    hccl_call("HcclCommDestroy", || {
        comm_of(comm)?;
        state_callbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_PRE);
        let c = crate::ffi::handles::release::<Comm>(comm, "comm")?;
        crate::sync::lock(&NAMES).retain(|_, handles| {
            handles.retain(|h| *h != raw(comm));
            !handles.is_empty()
        });
        let done = c.destroy();
        state_callbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_POST);
        done
    })
}

/// Makes the `ndev` ranks of one communicator in this process, rank i on device
/// `devices[i]`, and writes their handles to `comms[0..ndev]`.
///
/// # Safety
/// `devices` is NULL or `ndev` readable ints; `comms` is NULL or `ndev` writable handles.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitAll(ndev: u32, devices: *mut i32, comms: *mut HcclComm) -> HcclResult {
    hccl_call("HcclCommInitAll", || {
        non_null(devices, "devices")?;
        non_null(comms, "comms")?;
        if ndev == 0 {
            return Err(HcclError::para("ndev is 0"));
        }
        // SAFETY: `ndev` readable ints (the contract); non-NULL checked above.
        let ids = unsafe { slice(devices.cast_const(), ndev as usize, "devices") }?;
        for (i, &d) in ids.iter().enumerate() {
            if d < 0 {
                return Err(HcclError::para(format!("devices[{i}] is {d}: a device id is not negative")));
            }
            if ids[..i].contains(&d) {
                return Err(HcclError::para(format!("devices[{i}]: device {d} is listed twice")));
            }
        }
        if !comms.is_aligned() {
            return Err(HcclError::para("comms is not aligned for HcclComm"));
        }
        let made = Comm::init_all(ndev)?;
        for (i, c) in made.into_iter().enumerate() {
            // SAFETY: `comms` holds `ndev` writable, aligned handles (the contract, and
            // checked above); i < ndev, as init_all makes ndev communicators.
            let out = unsafe { Out::new(comms.add(i), "comms") }?;
            publish(c, out);
        }
        Ok(())
    })
}

/// The first error an operation of the communicator met while it ran (`HCCL_SUCCESS` if
/// none has).
///
/// # Safety
/// `asyncError` is NULL or writable.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommAsyncError(comm: HcclComm, asyncError: *mut HcclResult) -> HcclResult {
    hccl_call("HcclGetCommAsyncError", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(asyncError, "asyncError") }?;
        out.write(comm_of(comm)?.async_error());
        Ok(())
    })
}

/// The vendor's text of each result (the table of `error_text`).
fn error_text(code: HcclResult) -> &'static CStr {
    match code {
        HCCL_SUCCESS => c"no error",
        HCCL_E_PARA => c"parameter error",
        HCCL_E_PTR => c"empty pointer",
        HCCL_E_MEMORY => c"memory error",
        HCCL_E_INTERNAL => c"internal error",
        HCCL_E_NOT_SUPPORT => c"not support feature",
        HCCL_E_NOT_FOUND => c"not found specific resource",
        HCCL_E_UNAVAIL => c"resource unavailable",
        HCCL_E_SYSCALL => c"call system interface error",
        HCCL_E_TIMEOUT => c"timeout",
        HCCL_E_OPEN_FILE_FAILURE => c"open file fail",
        HCCL_E_TCP_CONNECT => c"tcp connect fail",
        HCCL_E_ROCE_CONNECT => c"roce connect fail",
        HCCL_E_TCP_TRANSFER => c"tcp transfer fail",
        HCCL_E_ROCE_TRANSFER => c"roce transfer fail",
        HCCL_E_RUNTIME => c"call runtime api fail",
        HCCL_E_DRV => c"call driver api fail",
        HCCL_E_PROFILING => c"call profiling api fail",
        HCCL_E_CCE => c"call cce api fail",
        HCCL_E_NETWORK => c"call network api fail",
        HCCL_E_AGAIN => c"try again",
        HCCL_E_REMOTE => c"error cqe",
        HCCL_E_SUSPENDING => c"error communicator suspending",
        HCCL_E_OPRETRY_FAIL => c"retry constraint",
        HCCL_E_OOM => c"out of memory",
        HCCL_E_IN_STATUS => c"the error information is in the status",
        _ => c"unknow error",
    }
}

/// A static text for `code` (the vendor's words; "unknow error", spelt as the vendor's, for a
/// number that is no `HcclResult`). Never NULL.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    error_text(code).as_ptr()
}

/// The config items understood, as a bound: every `HcclCommConfigCapability` below the number
/// returned (buffer size, deterministic, name).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetCommConfigCapability() -> u32 {
    HCCL_COMM_CONFIG_OP_EXPANSION_MODE
}

/// Not supported: suspending a communicator is the vendor's recovery from device faults.
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclCommSuspend(comm: HcclComm) -> HcclResult {
    let _ = comm;
    hccl_call("HcclCommSuspend", || {
        Err(not_supported(
            "HcclCommSuspend",
            "it is the recovery from device faults, which a host has none of",
        ))
    })
}

/// Registers `cb` under `regName` (a service of the process, such as "HCCL" or "MC2"; a second
/// registration under one name replaces the first): `HcclCommDestroy` calls it with
/// `HCCL_COMM_STATE_PHASE_DESTROY_PRE` before it destroys a communicator and
/// `HCCL_COMM_STATE_PHASE_DESTROY_POST` after, on the destroying thread, with `args`. (The
/// resume phases never come: `HcclCommResume` is not supported.)
///
/// # Safety
/// `regName` is NULL or a NUL-terminated string; `cb`, when called, may be called with `args`
/// from the thread that destroys a communicator, until the process ends.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommRegCommStateCallback(
    regName: *const c_char,
    cb: HcclCommStateCallback,
    args: *mut c_void,
) -> HcclResult {
    hccl_call("HcclCommRegCommStateCallback", || {
        // SAFETY: the caller's contract.
        let name = unsafe { required_str(regName, "regName") }?;
        let cb = cb.ok_or_else(|| HcclError::new(HCCL_E_PTR, "cb must not be NULL"))?;
        let mut all = crate::sync::lock(&STATE_CALLBACKS);
        all.retain(|r| r.name != name);
        all.push(StateCallback { name: name.to_owned(), cb, args: args.expose_provenance() });
        Ok(())
    })
}

/// One registration of `HcclCommRegCommStateCallback`; `args` is the caller's pointer, kept as
/// a number (it is only handed back).
#[derive(Clone)]
struct StateCallback {
    name: String,
    cb: unsafe extern "C" fn(HcclComm, HcclCommStatePhase, *mut c_void) -> HcclResult,
    args: usize,
}

static STATE_CALLBACKS: Mutex<Vec<StateCallback>> = Mutex::new(Vec::new());

/// Calls every registered callback with `phase` for `comm` (outside the lock, so that a
/// callback may call HCCL); a failing one is logged.
fn state_callbacks(comm: HcclComm, phase: HcclCommStatePhase) {
    let all = crate::sync::lock(&STATE_CALLBACKS).clone();
    for r in all {
        // SAFETY: the registrant's contract (HcclCommRegCommStateCallback): the callback may be
        // called with its args from this thread.
        let code = unsafe { (r.cb)(comm, phase, std::ptr::with_exposed_provenance_mut(r.args)) };
        if code != HCCL_SUCCESS {
            log::warn!(target: crate::logging::TARGET, "HcclCommDestroy: the state callback of {} answered {code}", r.name);
        }
    }
}

/// Not supported: resuming a suspended communicator (see `HcclCommSuspend`).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub extern "C" fn HcclCommResume(comm: HcclComm) -> HcclResult {
    let _ = comm;
    hccl_call("HcclCommResume", || {
        Err(not_supported(
            "HcclCommResume",
            "it is the recovery from device faults, which a host has none of",
        ))
    })
}

/// `HCCL_COMM_STATUS_READY` for a communicator of this process named `commId`
/// (`HCCL_E_NOT_FOUND` if none is).
///
/// # Safety
/// `commId` is NULL or a NUL-terminated string; `status` is NULL or writable.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommGetStatus(commId: *const c_char, status: *mut HcclCommStatus) -> HcclResult {
    hccl_call("HcclCommGetStatus", || {
        // SAFETY: the caller's contract.
        let name = unsafe { required_str(commId, "commId") }?;
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(status, "status") }?;
        if !crate::sync::lock(&NAMES).contains_key(name) {
            return Err(HcclError::new(HCCL_E_NOT_FOUND, format!("no communicator is named \"{name}\"")));
        }
        out.write(HCCL_COMM_STATUS_READY);
        Ok(())
    })
}

const NO_VMM: &str = "communicators reach every runtime allocation without a registered virtual range";

/// Not supported: see docs/hccl.md (a communicator needs no virtual memory range).
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
    size: usize,
    alignment: usize,
    flags: u64,
) -> HcclResult {
    let _ = (comm, baseVirPtr, size, alignment, flags);
    hccl_call("HcclCommSetMemoryRange", || Err(not_supported("HcclCommSetMemoryRange", NO_VMM)))
}

/// Not supported (see `HcclCommSetMemoryRange`).
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(comm: HcclComm, baseVirPtr: *mut c_void) -> HcclResult {
    let _ = (comm, baseVirPtr);
    hccl_call("HcclCommUnsetMemoryRange", || Err(not_supported("HcclCommUnsetMemoryRange", NO_VMM)))
}

/// Not supported (see `HcclCommSetMemoryRange`).
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> HcclResult {
    let _ = (comm, virPtr, size, offset, handle, flags);
    hccl_call("HcclCommActivateCommMemory", || Err(not_supported("HcclCommActivateCommMemory", NO_VMM)))
}

/// Not supported (see `HcclCommSetMemoryRange`).
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(comm: HcclComm, virPtr: *mut c_void) -> HcclResult {
    let _ = (comm, virPtr);
    hccl_call("HcclCommDeactivateCommMemory", || Err(not_supported("HcclCommDeactivateCommMemory", NO_VMM)))
}

/// Not supported: a host has no device NICs to switch between.
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
/// cbindgen:postfix=HCOMM_WEAK_SYMBOL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommWorkingDevNicSet(
    comm: HcclComm,
    ranks: *mut u32,
    useBackup: *mut bool,
    nRanks: u32,
) -> HcclResult {
    let _ = (comm, ranks, useBackup, nRanks);
    hccl_call("HcclCommWorkingDevNicSet", || {
        Err(not_supported("HcclCommWorkingDevNicSet", "a host has no device NICs to switch between"))
    })
}

/// Opens a group on this thread (groups nest): until the matching `HcclGroupEnd`, the
/// operations this thread calls are checked and held, not queued.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupStart() -> HcclResult {
    hccl_call("HcclGroupStart", || {
        group::start();
        Ok(())
    })
}

/// Closes this thread's group; the outermost end queues what the group held, in order, each
/// run of sends and receives of one communicator on one stream as one `HcclBatchSendRecv`.
/// Without a start: `HCCL_E_PARA`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupEnd() -> HcclResult {
    hccl_call("HcclGroupEnd", group::end)
}

/// Whether a group is open on this thread.
///
/// # Safety
/// `isGroupEnabled` is NULL or writable.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGroupStatusGet(isGroupEnabled: *mut bool) -> HcclResult {
    hccl_call("HcclGroupStatusGet", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(isGroupEnabled, "isGroupEnabled") }?;
        out.write(group::is_open());
        Ok(())
    })
}

const NO_SYM: &str = "symmetric windows are device virtual memory shared by the NPUs of a communicator";

/// Not supported: symmetric memory windows.
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSymWinRegister(
    comm: HcclComm,
    addr: *mut c_void,
    size: u64,
    winHandle: *mut HcclCommSymWindow,
    flag: u32,
) -> HcclResult {
    let _ = (comm, addr, size, winHandle, flag);
    hccl_call("HcclCommSymWinRegister", || Err(not_supported("HcclCommSymWinRegister", NO_SYM)))
}

/// Not supported: symmetric memory windows.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclCommSymWinDeregister(winHandle: HcclCommSymWindow) -> HcclResult {
    let _ = winHandle;
    hccl_call("HcclCommSymWinDeregister", || Err(not_supported("HcclCommSymWinDeregister", NO_SYM)))
}

/// Not supported: symmetric memory windows.
///
/// # Safety
/// Any arguments (none is read).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSymWinGet(
    comm: HcclComm,
    ptr: *mut c_void,
    size: usize,
    winHandle: *mut HcclCommSymWindow,
    offset: *mut usize,
) -> HcclResult {
    let _ = (comm, ptr, size, winHandle, offset);
    hccl_call("HcclCommSymWinGet", || Err(not_supported("HcclCommSymWinGet", NO_SYM)))
}

/// A communicator's configuration: `HCCL_CONFIG_TYPE_OP_EXPANSION_MODE` writes an
/// `HcclConfigTypeOpExpansionMode` (4 bytes) into `info`, always `HCCL_OP_EXPANSION_MODE_HOST`.
///
/// # Safety
/// `info` is NULL or `infoLen` writable bytes.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclConfigGetInfo(
    comm: HcclComm,
    cfgType: HcclConfigType,
    infoLen: u32,
    info: *mut c_void,
) -> HcclResult {
    hccl_call("HcclConfigGetInfo", || {
        non_null(info, "info")?;
        if cfgType != HCCL_CONFIG_TYPE_OP_EXPANSION_MODE {
            return Err(HcclError::para(format!("{cfgType} is not an HcclConfigType")));
        }
        if (infoLen as usize) < size_of::<i32>() {
            return Err(HcclError::para(format!("infoLen {infoLen}: an op expansion mode takes 4 bytes")));
        }
        comm_of(comm)?;
        let mode = HCCL_OP_EXPANSION_MODE_HOST.to_ne_bytes();
        // SAFETY: `info` holds infoLen >= 4 writable bytes (the contract, checked above).
        unsafe { std::ptr::copy_nonoverlapping(mode.as_ptr(), info.cast::<u8>(), mode.len()) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_has_the_vendors_text_and_others_the_unknown_one() {
        assert_eq!(error_text(HCCL_SUCCESS), c"no error");
        assert_eq!(error_text(HCCL_E_REMOTE), c"error cqe");
        for code in [-1, 25, 1040, HCCL_E_RESERVED, 99999] {
            assert_eq!(error_text(code), c"unknow error", "{code}");
        }
        for code in (0..=24).chain([HCCL_E_IN_STATUS]) {
            assert_ne!(error_text(code), c"unknow error", "{code}");
        }
    }
}
