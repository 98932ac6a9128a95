//! HCCL's C API through its entry points: the argument checks that answer before any
//! communicator work (NULL pointers `HCCL_E_PTR`, bad values `HCCL_E_PARA`, HiF8/FP8
//! `HCCL_E_NOT_SUPPORT`), handles that name no communicator, the error texts, the process
//! settings, and the calls without a host meaning, each with its message for
//! `aclGetRecentErrMsg`. None of these needs a communicator; tests/hccl_collectives.rs runs
//! real ones.

use std::ffi::{CStr, c_char, c_void};
use std::ptr::{null, null_mut};

use ascendless::error::hccl_codes::*;
use ascendless::ffi::acl::aclGetRecentErrMsg;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::stream::{aclrtCreateStream, aclrtDestroyStream};
use ascendless::ffi::hccl::hccl::*;
use ascendless::ffi::hccl::hccl_comm::*;
use ascendless::ffi::hccl::hccl_types::*;

#[path = "common/hccl_config.rs"]
mod hccl_config;
use hccl_config::config_init;

const FP32: i32 = 4;
const SUM: i32 = 0;

/// A value no table ever gave out.
fn forged() -> HcclComm {
    std::ptr::without_provenance_mut(0x1234)
}

fn recent() -> String {
    let p = aclGetRecentErrMsg();
    assert!(!p.is_null(), "no message was recorded");
    // SAFETY: the library returns a NUL-terminated string valid until the next call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn root_info() -> HcclRootInfo {
    HcclRootInfo { internal: [0; HCCL_ROOT_INFO_BYTES] }
}

#[test]
fn every_code_has_a_text_and_unknown_numbers_the_vendors_one() {
    let text = |code| {
        // SAFETY: HcclGetErrorString returns a static NUL-terminated text.
        unsafe { CStr::from_ptr(HcclGetErrorString(code)) }.to_str().unwrap().to_owned()
    };
    assert_eq!(text(HCCL_SUCCESS), "no error");
    assert_eq!(text(HCCL_E_PARA), "parameter error");
    assert_eq!(text(HCCL_E_PTR), "empty pointer");
    assert_eq!(text(HCCL_E_NOT_SUPPORT), "not support feature");
    assert_eq!(text(HCCL_E_TIMEOUT), "timeout");
    assert_eq!(text(HCCL_E_REMOTE), "error cqe");
    for code in [-1, 25, HCCL_E_RESERVED, i32::MAX] {
        assert_eq!(text(code), "unknow error", "{code}");
    }
    assert_eq!(HcclGetErrorString(7), HcclGetErrorString(7), "a static text, the same each time");
}

#[test]
fn null_pointers_are_hccl_e_ptr_before_any_work() {
    let mut comm: HcclComm = null_mut();
    let root = root_info();
    let mut buf = [0f32; 4];
    let b = buf.as_mut_ptr().cast::<c_void>();
    // SAFETY: every call below gets NULL where tested, valid pointers elsewhere.
    unsafe {
        assert_eq!(HcclGetRootInfo(null_mut()), HCCL_E_PTR);
        assert!(recent().contains("rootInfo"), "{}", recent());
        assert_eq!(HcclCommInitRootInfo(2, null(), 0, &mut comm), HCCL_E_PTR);
        assert_eq!(HcclCommInitRootInfo(2, &root, 0, null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommInitRootInfoConfig(2, &root, 0, null(), &mut comm), HCCL_E_PTR);
        assert_eq!(HcclCommInitClusterInfo(null(), 0, &mut comm), HCCL_E_PTR);
        assert_eq!(HcclCommInitClusterInfo(c"rank_table.json".as_ptr(), 0, null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommInitAll(2, null_mut(), &mut comm), HCCL_E_PTR);
        assert_eq!(HcclGetRankSize(null_mut(), &mut 0), HCCL_E_PTR);
        assert_eq!(HcclGetRankId(forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclGetCommAsyncError(forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclGetCommName(forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommGetHandleWithName(null(), &mut comm), HCCL_E_PTR);
        assert_eq!(HcclGetConfig(HCCL_DETERMINISTIC, null_mut()), HCCL_E_PTR);
        assert_eq!(HcclGroupStatusGet(null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommDestroy(null_mut()), HCCL_E_PTR);
        assert_eq!(HcclBarrier(null_mut(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAllReduce(null_mut(), b, 4, FP32, SUM, forged(), null_mut()), HCCL_E_PTR);
        assert!(recent().starts_with("HcclAllReduce: sendBuf"), "{}", recent());
        assert_eq!(HcclAllReduce(b, null_mut(), 4, FP32, SUM, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAllReduce(b, b, 4, FP32, SUM, null_mut(), null_mut()), HCCL_E_PTR);
        assert!(recent().contains("comm must not be NULL"), "{}", recent());
        assert_eq!(HcclBroadcast(null_mut(), 4, FP32, 0, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclSend(null_mut(), 4, FP32, 1, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclRecv(null_mut(), 4, FP32, 1, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAllGather(b, null_mut(), 4, FP32, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclReduceScatter(null_mut(), b, 4, FP32, SUM, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclReduce(null_mut(), b, 4, FP32, SUM, 0, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclScatter(b, null_mut(), 4, FP32, 0, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAlltoAll(b, 1, FP32, null(), 1, FP32, forged(), null_mut()), HCCL_E_PTR);
        let counts = [1u64; 2];
        let c = counts.as_ptr().cast::<c_void>();
        assert_eq!(HcclAlltoAllV(b, c, c, FP32, b, null(), c, FP32, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAlltoAllVC(b, null(), FP32, b, FP32, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclAllGatherV(b, 1, b, c, null(), FP32, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclReduceScatterV(b, null(), c, b, 1, FP32, SUM, forged(), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclBatchSendRecv(null_mut(), 1, forged(), null_mut()), HCCL_E_PTR);
        let mut item = HcclSendRecvItem {
            sendRecvType: HCCL_SEND,
            buf: null_mut(),
            count: 1,
            dataType: FP32,
            remoteRank: 1,
        };
        assert_eq!(HcclBatchSendRecv(&mut item, 1, forged(), null_mut()), HCCL_E_PTR);
    }
}

#[test]
fn bad_values_are_hccl_e_para_and_host_less_types_not_supported() {
    let mut comm: HcclComm = null_mut();
    let root = root_info();
    let mut buf = [0f32; 4];
    let b = buf.as_mut_ptr().cast::<c_void>();
    // SAFETY: every call below gets valid pointers.
    unsafe {
        assert_eq!(HcclCommInitRootInfo(0, &root, 0, &mut comm), HCCL_E_PARA);
        assert_eq!(HcclCommInitRootInfo(2, &root, 2, &mut comm), HCCL_E_PARA);
        assert!(recent().contains("rank 2 is not below nRanks 2"), "{}", recent());
        let mut devices = [0i32, 0];
        assert_eq!(HcclCommInitAll(0, devices.as_mut_ptr(), &mut comm), HCCL_E_PARA);
        let mut comms = [null_mut(); 2];
        assert_eq!(HcclCommInitAll(2, devices.as_mut_ptr(), comms.as_mut_ptr()), HCCL_E_PARA);
        assert!(recent().contains("listed twice"), "{}", recent());
        devices = [-1, 0];
        assert_eq!(HcclCommInitAll(2, devices.as_mut_ptr(), comms.as_mut_ptr()), HCCL_E_PARA);
        assert_eq!(comms, [null_mut(); 2], "nothing is written on failure");

        assert_eq!(HcclAllReduce(b, b, 4, 99, SUM, forged(), null_mut()), HCCL_E_PARA);
        assert!(recent().contains("99 is not an HcclDataType"), "{}", recent());
        assert_eq!(HcclAllReduce(b, b, 4, 13, SUM, forged(), null_mut()), HCCL_E_PARA, "13 is no type");
        assert_eq!(HcclAllReduce(b, b, 4, FP32, 4, forged(), null_mut()), HCCL_E_PARA);
        assert_eq!(HcclAllReduce(b, b, 4, FP32, 255, forged(), null_mut()), HCCL_E_PARA);
        for fp8 in 14..=17 {
            assert_eq!(HcclAllReduce(b, b, 4, fp8, SUM, forged(), null_mut()), HCCL_E_NOT_SUPPORT);
            assert_eq!(HcclBroadcast(b, 4, fp8, 0, forged(), null_mut()), HCCL_E_NOT_SUPPORT);
        }
        assert_eq!(HcclAllReduce(b, b, u64::MAX, FP32, SUM, forged(), null_mut()), HCCL_E_PARA);
        assert!(recent().contains("do not fit"), "{}", recent());
        assert_eq!(HcclSend(b, 1, -1, 0, forged(), null_mut()), HCCL_E_PARA);
        assert_eq!(HcclAlltoAll(b, 1, FP32, b, 1, 42, forged(), null_mut()), HCCL_E_PARA);
        assert_eq!(HcclBatchSendRecv(b.cast(), 0, forged(), null_mut()), HCCL_E_PARA);
        let mut item = HcclSendRecvItem { sendRecvType: 2, buf: b, count: 1, dataType: FP32, remoteRank: 1 };
        assert_eq!(HcclBatchSendRecv(&mut item, 1, forged(), null_mut()), HCCL_E_PARA);
        assert!(recent().contains("sendRecvType 2"), "{}", recent());

        let mut info = 0i32;
        let i = (&raw mut info).cast::<c_void>();
        assert_eq!(HcclConfigGetInfo(forged(), 7, 4, i), HCCL_E_PARA);
        assert_eq!(HcclConfigGetInfo(forged(), HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, 2, i), HCCL_E_PARA);
    }
}

#[test]
fn a_config_not_made_by_hccl_comm_config_init_is_refused() {
    let root = root_info();
    let mut comm: HcclComm = null_mut();
    let mut config = config_init();
    config.reserved[8] = 0; // the magic word's first byte
    // SAFETY: valid pointers.
    assert_eq!(unsafe { HcclCommInitRootInfoConfig(2, &root, 0, &config, &mut comm) }, HCCL_E_PARA);
    assert!(recent().contains("HcclCommConfigInit"), "{}", recent());
    let mut config = config_init();
    config.hcclBufferSize = 0;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { HcclCommInitRootInfoConfig(2, &root, 0, &config, &mut comm) }, HCCL_E_PARA);
    let mut config = config_init();
    config.hcclDeterministic = 3;
    // SAFETY: valid pointers.
    assert_eq!(unsafe { HcclCommInitRootInfoConfig(2, &root, 0, &config, &mut comm) }, HCCL_E_PARA);
    let mut config = config_init();
    config.hcclCommName = [b'x' as c_char; COMM_NAME_MAX_LENGTH];
    // SAFETY: valid pointers.
    assert_eq!(unsafe { HcclCommInitRootInfoConfig(2, &root, 0, &config, &mut comm) }, HCCL_E_PARA);
    assert!(recent().contains("no NUL"), "{}", recent());
    let mut config = config_init();
    // SAFETY: valid pointers; the config is checked before the ranks.
    assert_eq!(unsafe { HcclCommInitRootInfoConfig(0, &root, 0, &config, &mut comm) }, HCCL_E_PARA);
    // SAFETY: valid pointers but the NULL out-parameter tested.
    let code = unsafe { HcclCommInitClusterInfoConfig(c"x".as_ptr(), 0, &mut config, null_mut()) };
    assert_eq!(code, HCCL_E_PTR);
    assert!(comm.is_null(), "nothing is written on failure");
}

#[test]
fn handles_that_name_no_communicator_are_hccl_e_para() {
    assert_eq!(aclrtSetDevice(0), 0);
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, 0);
    let mut n = 0u32;
    let mut name = [0 as c_char; COMM_NAME_MAX_LENGTH];
    let mut buf = [0f32; 4];
    let b = buf.as_mut_ptr().cast::<c_void>();
    for (what, h) in [("a forged value", forged()), ("a stream", stream)] {
        // SAFETY: every call below gets valid pointers; the handle is only looked up.
        unsafe {
            assert_eq!(HcclGetRankSize(h, &mut n), HCCL_E_PARA, "{what}");
            assert_eq!(HcclGetRankId(h, &mut n), HCCL_E_PARA, "{what}");
            assert_eq!(HcclGetCommName(h, name.as_mut_ptr()), HCCL_E_PARA, "{what}");
            let mut e = 0;
            assert_eq!(HcclGetCommAsyncError(h, &mut e), HCCL_E_PARA, "{what}");
            assert_eq!(HcclAllReduce(b, b, 4, FP32, SUM, h, null_mut()), HCCL_E_PARA, "{what}");
            assert_eq!(HcclBarrier(h, stream), HCCL_E_PARA, "{what}");
            assert_eq!(HcclCommDestroy(h), HCCL_E_PARA, "{what}");
            assert!(recent().starts_with("HcclCommDestroy: comm: "), "{}", recent());
        }
    }
    // SAFETY: valid out-pointers.
    unsafe {
        let mut comm = null_mut();
        assert_eq!(HcclCommGetHandleWithName(c"no such communicator".as_ptr(), &mut comm), HCCL_E_NOT_FOUND);
        let mut status = -1;
        assert_eq!(HcclCommGetStatus(c"no such communicator".as_ptr(), &mut status), HCCL_E_NOT_FOUND);
        assert!(comm.is_null() && status == -1);
        assert_eq!(aclrtDestroyStream(stream), 0);
    }
}

#[test]
fn process_settings_and_capabilities() {
    let mut v = HcclConfigValue { value: -1 };
    // SAFETY: valid pointers and union reads of its one member.
    unsafe {
        assert_eq!(HcclSetConfig(HCCL_DETERMINISTIC, HcclConfigValue { value: 3 }), HCCL_E_PARA);
        assert_eq!(HcclSetConfig(1, HcclConfigValue { value: 0 }), HCCL_E_PARA);
        assert_eq!(HcclSetConfig(HCCL_DETERMINISTIC, HcclConfigValue { value: 1 }), HCCL_SUCCESS);
        assert_eq!(HcclGetConfig(HCCL_DETERMINISTIC, &mut v), HCCL_SUCCESS);
        assert_eq!(v.value, 1);
        assert_eq!(HcclSetConfig(HCCL_DETERMINISTIC, HcclConfigValue { value: 0 }), HCCL_SUCCESS);
        assert_eq!(HcclGetConfig(5, &mut v), HCCL_E_PARA);
        let mut open = true;
        assert_eq!(HcclGroupStatusGet(&mut open), HCCL_SUCCESS);
        assert!(!open);
    }
    assert_eq!(HcclGetCommConfigCapability(), 3, "buffer size, deterministic and name");
}

#[test]
fn calls_without_a_host_meaning_say_so() {
    let mut win = null_mut();
    let mut off = 0usize;
    let mut args = null_mut();
    // SAFETY: these calls read none of their arguments.
    let answers = unsafe {
        [
            ("HcclCommSuspend", HcclCommSuspend(forged())),
            ("HcclCommResume", HcclCommResume(forged())),
            ("HcclCommSetMemoryRange", HcclCommSetMemoryRange(forged(), null_mut(), 0, 0, 0)),
            ("HcclCommUnsetMemoryRange", HcclCommUnsetMemoryRange(forged(), null_mut())),
            (
                "HcclCommActivateCommMemory",
                HcclCommActivateCommMemory(forged(), null_mut(), 0, 0, null_mut(), 0),
            ),
            ("HcclCommDeactivateCommMemory", HcclCommDeactivateCommMemory(forged(), null_mut())),
            ("HcclCommWorkingDevNicSet", HcclCommWorkingDevNicSet(forged(), null_mut(), null_mut(), 0)),
            ("HcclCommSymWinRegister", HcclCommSymWinRegister(forged(), null_mut(), 0, &mut win, 1)),
            ("HcclCommSymWinDeregister", HcclCommSymWinDeregister(win)),
            ("HcclCommSymWinGet", HcclCommSymWinGet(forged(), null_mut(), 0, &mut win, &mut off)),
            (
                "HcclCreateSubCommConfig",
                HcclCreateSubCommConfig(null_mut(), 0, null_mut(), 0, 0, null_mut(), null_mut()),
            ),
            ("HcclKfcAllocOpArgs", ascendless::ffi::hccl::hccl_mc2::HcclKfcAllocOpArgs(&mut args)),
            (
                "HcclCreateOpResCtx",
                ascendless::ffi::hccl::hccl_mc2::HcclCreateOpResCtx(forged(), 0, null_mut(), &mut args),
            ),
        ]
    };
    for (api, code) in answers {
        assert_eq!(code, HCCL_E_NOT_SUPPORT, "{api}");
    }
    // The last call's message names it.
    let msg = recent();
    assert!(msg.starts_with("HcclCreateOpResCtx: HcclCreateOpResCtx is not supported"), "{msg}");
    assert!(args.is_null() && win.is_null(), "nothing is written");
}

#[test]
fn groups_nest_and_an_end_needs_a_start() {
    let open = || {
        let mut open = false;
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { HcclGroupStatusGet(&mut open) }, HCCL_SUCCESS);
        open
    };
    assert_eq!(HcclGroupEnd(), HCCL_E_PARA);
    assert!(recent().contains("without HcclGroupStart"), "{}", recent());
    assert_eq!(HcclGroupStart(), HCCL_SUCCESS);
    assert_eq!(HcclGroupStart(), HCCL_SUCCESS);
    assert!(open());
    // Checks still answer at once inside a group.
    assert_eq!(HcclAllReduce(null_mut(), null_mut(), 1, FP32, SUM, forged(), null_mut()), HCCL_E_PTR);
    assert_eq!(HcclGroupEnd(), HCCL_SUCCESS);
    assert!(open(), "the inner end leaves the outer group open");
    assert_eq!(HcclGroupEnd(), HCCL_SUCCESS);
    assert!(!open());
    std::thread::spawn(move || assert!(!open(), "a group is the thread's own")).join().unwrap();
}

#[test]
fn a_state_callback_needs_a_name_and_a_function() {
    unsafe extern "C" fn cb(_: HcclComm, _: HcclCommStatePhase, _: *mut c_void) -> HcclResult {
        HCCL_SUCCESS
    }
    // SAFETY: NULL where tested; the callback is a function of this test that reads nothing.
    unsafe {
        assert_eq!(HcclCommRegCommStateCallback(null(), Some(cb), null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommRegCommStateCallback(c"test".as_ptr(), None, null_mut()), HCCL_E_PTR);
        assert_eq!(HcclCommRegCommStateCallback(c"hccl_api".as_ptr(), Some(cb), null_mut()), HCCL_SUCCESS);
    }
}
