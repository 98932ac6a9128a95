//! Profiling through the C entry points (`acl/acl_prof.h`): the session's order and codes, the
//! files a start and stop write (task times, msproftx marks, push/pop, ranges, step times), and
//! model subscriptions whose records come through a pipe and parse back. The session is one per
//! process, so the tests take turns.

use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use ascendless::error::acl_codes::*;
use ascendless::error::prof_codes::*;
use ascendless::ffi::acl::aclGetRecentErrMsg;
use ascendless::ffi::acl_prof::*;
use ascendless::ffi::acl_rt::callback::aclrtLaunchHostFunc;
use ascendless::ffi::acl_rt::capture::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtMalloc, aclrtMemcpyAsync};
use ascendless::ffi::acl_rt::stream::*;
use ascendless::ffi::aprof_pub::MsprofSetDeviceIdByGeModelIdx;
use serde_json::Value;

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn recent() -> String {
    let p = aclGetRecentErrMsg();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library's NUL-terminated message.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ascendless-prof-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn init(path: &str) -> aclError {
    // SAFETY: a NUL-terminated string of `path.len()` bytes.
    unsafe { aclprofInit(format!("{path}\0").as_ptr().cast(), path.len()) }
}

fn stamp(msg: &str) -> *mut c_void {
    let s = aclprofCreateStamp();
    assert!(!s.is_null(), "{}", recent());
    // SAFETY: `msg` is readable for its length.
    assert_eq!(unsafe { aclprofSetStampTraceMessage(s, msg.as_ptr().cast(), msg.len() as u32) }, ACL_SUCCESS);
    s
}

fn config(devices: &mut [u32], types: u64) -> *mut aclprofConfig {
    // SAFETY: `devices` holds `len` ids.
    unsafe { aclprofCreateConfig(devices.as_mut_ptr(), devices.len() as u32, 0, null(), types) }
}

const TASK_TIME: u64 = 0x0002;
const MSPROFTX: u64 = 0x0080;
const ACL_API: u64 = 0x0001;

#[test]
fn a_session_records_tasks_marks_ranges_and_steps_into_its_directory() {
    let _t = turn();
    let root = scratch("session");
    let mut dev0 = [0u32];
    let cfg = config(&mut dev0, ACL_API | TASK_TIME | MSPROFTX);
    assert!(!cfg.is_null(), "{}", recent());

    // Before aclprofInit.
    assert_eq!(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN);
    assert_eq!(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);
    assert_eq!(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    // SAFETY: NUL-terminated literals.
    unsafe {
        assert_eq!(aclprofSetConfig(3, c"15".as_ptr(), 2), ACL_ERROR_PROF_NOT_RUN);
        assert_eq!(aclprofInit(null(), 4), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclprofInit(c"abc".as_ptr(), 7), ACL_ERROR_INVALID_PARAM, "length is not the path's");
    }
    assert!(aclprofCreateStamp().is_null(), "no msproftx before a start");

    let path = root.to_str().unwrap();
    assert_eq!(init(path), ACL_SUCCESS, "{}", recent());
    assert_eq!(init(path), ACL_ERROR_REPEAT_INITIALIZE);
    // SAFETY: NUL-terminated literals of the lengths given.
    unsafe {
        assert_eq!(aclprofSetConfig(3, c"15".as_ptr(), 2), ACL_SUCCESS, "{}", recent());
        assert_eq!(
            aclprofSetConfig(3, c"fast".as_ptr(), 4),
            ACL_ERROR_INVALID_PARAM,
            "a frequency is a number"
        );
        assert_eq!(
            aclprofSetConfig(2, c"1".as_ptr(), 1),
            ACL_ERROR_INVALID_PARAM,
            "2 is no aclprofConfigType"
        );
        assert_eq!(aclprofSetConfig(3, null(), 2), ACL_ERROR_INVALID_PARAM);
    }

    let cfg_addr = cfg.addr();
    std::thread::spawn(move || {
        let cfg = std::ptr::with_exposed_provenance_mut::<aclprofConfig>(cfg_addr);
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        let mut s = null_mut();
        // SAFETY: valid out-pointers, buffers of the sizes given, handles from the library.
        unsafe {
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            assert_eq!(aclprofStart(cfg), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN, "device 0 is started");

            let (mark, outer, range) = (stamp("load_mark"), stamp("outer_push"), stamp("pre_range"));
            let step = aclprofCreateStepInfo();
            assert_eq!(aclprofGetStepTimestamp(step, 0, s), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclprofGetStepTimestamp(step, 0, s), ACL_ERROR_INVALID_PARAM, "a step starts once");
            assert_eq!(aclprofGetStepTimestamp(step, 7, s), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclprofMark(mark), ACL_SUCCESS);
            assert_eq!(aclprofPush(outer), ACL_SUCCESS);
            let mut id = 0;
            assert_eq!(aclprofRangeStart(range, &mut id), ACL_SUCCESS);
            assert_ne!(id, 0);
            assert_eq!(aclprofRangeStart(range, null_mut()), ACL_ERROR_INVALID_PARAM);
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(aclprofRangeStop(id), ACL_SUCCESS);
            assert_eq!(aclprofRangeStop(id), ACL_ERROR_INVALID_PARAM, "stopped already");

            let mut dev = null_mut();
            assert_eq!(aclrtMalloc(&mut dev, 4096, 0), ACL_SUCCESS);
            let host = vec![7u8; 4096];
            assert_eq!(aclrtMemcpyAsync(dev, 4096, host.as_ptr().cast(), 4096, 1, s), ACL_SUCCESS);
            assert_eq!(aclprofMarkEx(c"copied".as_ptr(), 6, s), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclprofMarkEx(c"copied".as_ptr(), 5, s), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclprofMarkEx(c"copied".as_ptr(), 6, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(aclprofPop(), ACL_SUCCESS);
            assert_eq!(aclprofPop(), ACL_ERROR_INVALID_PARAM, "nothing pushed");
            assert_eq!(aclprofMark(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclprofGetStepTimestamp(step, 1, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            let name_id = aclprofStr2Id(c"Add".as_ptr());
            assert_eq!(name_id, aclprofStr2Id(c"Add".as_ptr()));
            assert_ne!(name_id, aclprofStr2Id(c"Mul".as_ptr()));
            assert_eq!(aclprofStr2Id(null()), 0);
            let mut tensor = aclprofTensor {
                r#type: 0,
                format: 2,
                dataType: 0,
                shapeDim: 2,
                shape: [4, 2, 0, 0, 0, 0, 0, 0],
            };
            let mut info = aclprofTensorInfo {
                opNameId: name_id,
                opTypeId: name_id,
                resv: 0,
                tensorNum: 1,
                kernelType: 0,
                blockNums: 8,
                stream: s,
                tensors: &mut tensor,
            };
            let mut attr = aclprofEventAttributes {
                version: 1,
                size: std::mem::size_of::<aclprofEventAttributes>() as u16,
                messageType: 0,
                tensorInfo: &mut info,
            };
            assert_eq!(aclprofRangePushEx(&mut attr), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclprofRangePop(), ACL_SUCCESS);
            assert_eq!(aclprofRangePop(), ACL_ERROR_INVALID_PARAM);
            attr.version = 0;
            assert_eq!(aclprofRangePushEx(&mut attr), ACL_ERROR_INVALID_PARAM);

            let mut dev1 = [1u32];
            let other = config(&mut dev1, TASK_TIME);
            assert_eq!(aclprofStop(other), ACL_ERROR_INVALID_PROFILING_CONFIG, "never started");
            assert_eq!(aclprofDestroyConfig(other), ACL_SUCCESS);
            assert_eq!(aclprofStop(cfg), ACL_SUCCESS, "{}", recent());
            for st in [mark, outer, range] {
                aclprofDestroyStamp(st);
            }
            aclprofDestroyStepInfo(step);
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        }
    })
    .join()
    .unwrap();
    assert_eq!(aclprofFinalize(), ACL_SUCCESS, "{}", recent());
    assert_eq!(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    assert!(aclprofCreateStamp().is_null(), "msproftx ends with the session");
    assert_eq!(aclprofDestroyConfig(cfg), ACL_SUCCESS);
    assert_eq!(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM, "destroyed already");

    let dirs: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let dir = &dirs[0];
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("PROF_"));
    let info: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("info.json")).unwrap()).unwrap();
    assert_eq!(info["settings"]["sys_hardware_mem_freq"], "15");
    assert_eq!(info["devices"], serde_json::json!([0]));
    assert!(info["stop_ns"].as_u64().unwrap() > info["start_ns"].as_u64().unwrap());

    let tasks = lines(&dir.join("device_0/task_time.jsonl"));
    assert!(tasks.len() >= 3, "the copy, the mark and the steps ran as tasks: {tasks:?}");
    assert!(tasks.iter().all(|t| t["device"] == 0 && t["end_ns"].as_u64() >= t["start_ns"].as_u64()));

    let tx = lines(&dir.join("host/msproftx.jsonl"));
    let find = |kind: &str, msg: &str| {
        tx.iter()
            .find(|r| r["type"] == kind && r["message"] == msg)
            .unwrap_or_else(|| panic!("no {kind} {msg}: {tx:?}"))
    };
    find("mark", "load_mark");
    let range = find("range", "pre_range");
    assert!(range["end_ns"].as_u64().unwrap() - range["start_ns"].as_u64().unwrap() >= 20_000_000);
    let push = find("push_pop", "outer_push");
    assert!(push["start_ns"].as_u64() <= range["start_ns"].as_u64(), "the push encloses the range");
    find("mark_ex", "copied");
    find("str2id", "Add");
    let ex = tx.iter().find(|r| r["type"] == "range_ex").expect("the tensor range");
    assert_eq!(ex["tensors"][0]["shape"], serde_json::json!([4, 2]));

    let steps = lines(&dir.join("host/step_trace.jsonl"));
    assert_eq!(steps.iter().map(|s| s["tag"].as_str().unwrap()).collect::<Vec<_>>(), ["start", "end"]);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn configurations_are_checked() {
    let _t = turn();
    let mut ids = [0u32, 0];
    assert!(config(&mut ids, TASK_TIME).is_null(), "a device twice");
    assert!(recent().contains("twice"), "{}", recent());
    let mut ids = [4096u32];
    assert!(config(&mut ids, TASK_TIME).is_null(), "no such device");
    assert!(config(&mut [], TASK_TIME).is_null(), "no device and no msproftx");
    let only_tx = config(&mut [], MSPROFTX);
    assert!(!only_tx.is_null());
    let mut ids = [0u32];
    // SAFETY: one id; a non-NULL events pointer is refused before use.
    unsafe {
        assert!(
            aclprofCreateConfig(ids.as_mut_ptr(), 1, 0, 8 as *const aclprofAicoreEvents, TASK_TIME).is_null()
        );
        assert!(aclprofCreateConfig(ids.as_mut_ptr(), 1, 42, null(), TASK_TIME).is_null(), "no such metrics");
        assert!(aclprofCreateConfig(null_mut(), 1, 0, null(), TASK_TIME).is_null());
    }
    assert_eq!(aclprofDestroyConfig(only_tx), ACL_SUCCESS);
    assert_eq!(aclprofDestroyConfig(null()), ACL_ERROR_INVALID_PARAM);
}

unsafe extern "C-unwind" fn nothing(_: *mut c_void) {}

fn read_all(fd: i32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

#[test]
fn a_subscribed_model_writes_one_record_per_task_into_the_pipe() {
    let _t = turn();
    std::thread::spawn(|| {
        let mut fds = [0i32; 2];
        // SAFETY: valid out-pointers, handles from the library, buffers of the sizes given.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            let mut s = null_mut();
            assert_eq!(aclrtCreateStream(&mut s), ACL_SUCCESS);
            assert_eq!(aclmdlRICaptureBegin(s, 0), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclrtLaunchHostFunc(s, Some(nothing), null_mut()), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclrtLaunchHostFunc(s, Some(nothing), null_mut()), ACL_SUCCESS);
            let mut model = null_mut();
            assert_eq!(aclmdlRICaptureEnd(s, &mut model), ACL_SUCCESS, "{}", recent());
            let mut id = 0;
            assert_eq!(aclmdlRIGetId(model, &mut id), ACL_SUCCESS);

            let nothing_asked = aclprofCreateSubscribeConfig(0, 0xFF, fds[1..].as_mut_ptr().cast());
            assert!(!nothing_asked.is_null());
            assert_eq!(aclprofModelSubscribe(id, nothing_asked), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclprofDestroySubscribeConfig(nothing_asked), ACL_SUCCESS);
            assert!(aclprofCreateSubscribeConfig(1, 0xFF, null_mut()).is_null());

            let cfg = aclprofCreateSubscribeConfig(1, 0xFF, fds[1..].as_mut_ptr().cast());
            assert!(!cfg.is_null(), "{}", recent());
            assert_eq!(aclprofModelSubscribe(987_654, cfg), ACL_ERROR_INVALID_MODEL_ID);
            assert_eq!(MsprofSetDeviceIdByGeModelIdx(987_654, 1), 0);
            assert_eq!(aclprofModelSubscribe(987_654, cfg), ACL_SUCCESS, "a model named by its loader");
            assert_eq!(aclprofModelSubscribe(id, cfg), ACL_SUCCESS, "{}", recent());
            assert_eq!(aclprofModelSubscribe(id, cfg), ACL_ERROR_PROF_REPEAT_SUBSCRIBE);
            assert_eq!(init("/nonexistent-never-written"), ACL_ERROR_PROF_API_CONFLICT);

            assert_eq!(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStream(s), ACL_SUCCESS);
            assert_eq!(
                aclprofModelUnSubscribe(987_654),
                ACL_SUCCESS,
                "the pipe stays open: the model still uses it"
            );
            assert_eq!(aclprofModelUnSubscribe(id), ACL_SUCCESS);
            assert_eq!(aclprofModelUnSubscribe(id), ACL_ERROR_INVALID_MODEL_ID);
            let data = read_all(fds[0]);
            libc::close(fds[0]);

            let mut size = 0usize;
            assert_eq!(aclprofGetOpDescSize(&mut size), ACL_SUCCESS);
            assert_eq!(size, 80);
            assert_eq!(data.len(), 2 * size, "one record per task of the run");
            let (p, len) = (data.as_ptr().cast::<c_void>(), data.len());
            let mut n = 0;
            assert_eq!(aclprofGetOpNum(p, len, &mut n), ACL_SUCCESS);
            assert_eq!(n, 2);
            for i in 0..n {
                assert_eq!(aclprofGetModelId(p, len, i), id as usize);
                let (start, end) = (aclprofGetOpStart(p, len, i), aclprofGetOpEnd(p, len, i));
                assert!(start > 1_600_000_000_000_000 && end >= start, "{start} {end}");
                assert_eq!(aclprofGetOpDuration(p, len, i), end - start);
                assert_eq!(aclprofGetOpFlag(p, len, i), 0);
                assert!(
                    aclprofGetOpAttriValue(p, len, i, 0).is_null(),
                    "a task record has no thread attribute"
                );
                let mut tl = 0;
                assert_eq!(aclprofGetOpTypeLen(p, len, i, &mut tl), ACL_SUCCESS);
                let mut ty = vec![0u8; tl];
                assert_eq!(aclprofGetOpType(p, len, i, ty.as_mut_ptr().cast(), tl), ACL_SUCCESS);
                assert_eq!(CStr::from_bytes_until_nul(&ty).unwrap().to_str().unwrap(), "host function");
                assert_eq!(
                    aclprofGetOpType(p, len, i, ty.as_mut_ptr().cast(), tl),
                    ACL_ERROR_INVALID_PARAM,
                    "read once"
                );
                let mut nl = 0;
                assert_eq!(aclprofGetOpNameLen(p, len, i, &mut nl), ACL_SUCCESS);
                let mut name = vec![0u8; nl];
                assert_eq!(aclprofGetOpName(p, len, i, name.as_mut_ptr().cast(), nl), ACL_SUCCESS);
                assert_eq!(
                    CStr::from_bytes_until_nul(&name).unwrap().to_str().unwrap(),
                    format!("model{id}/task{i}")
                );
            }
            assert_eq!(aclprofGetOpStart(p, len, 2), 0, "index out of range");
            assert_eq!(aclprofGetOpFlag(p, len, 2), 0xFF);
            assert_eq!(aclprofGetOpNum(p, len - 1, &mut n), ACL_ERROR_INVALID_PARAM, "not whole records");
            assert_eq!(aclprofGetOpNum(null(), len, &mut n), ACL_ERROR_INVALID_PARAM);
            let mut bad = data.clone();
            bad[40] ^= 1;
            assert_eq!(
                aclprofGetOpNum(bad.as_ptr().cast(), len, &mut n),
                ACL_ERROR_INVALID_PARAM,
                "signature"
            );

            assert_eq!(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);
            assert_eq!(aclmdlRIDestroy(model), ACL_SUCCESS);
            assert_eq!(aclrtDestroyStream(s), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
        }
    })
    .join()
    .unwrap();
}
