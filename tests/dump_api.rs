//! Dump configuration through the C entry points (`acl/acl_dump.h`, `aclmdl*Dump`): the order
//! of `aclmdlInitDump` / `aclmdlSetDump` / `aclmdlFinalizeDump` and its codes, the checks of the
//! configuration file, the paths answered back, the callback and operator-args calls, and the
//! user's tensors saved under the exception dump's path. The dump state is one per process, so
//! the whole story is one test.

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use ascendless::error::acl_codes::*;
use ascendless::error::prof_codes::*;
use ascendless::ffi::acl::{aclFinalize, aclGetRecentErrMsg, aclInit};
use ascendless::ffi::acl_dump::*;
use ascendless::ffi::acl_rt::device::{aclrtResetDevice, aclrtSetDevice};
use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtMalloc, aclrtMemcpy};
use ascendless::ffi::acl_rt::model_dump::*;

fn recent() -> String {
    let p = aclGetRecentErrMsg();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library's NUL-terminated message.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn path_of(kind: u32) -> Option<String> {
    let p = acldumpGetPath(kind);
    // SAFETY: NULL or the library's NUL-terminated text.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

unsafe extern "C" fn on_chunk(_: *const acldumpChunk, _: i32) -> i32 {
    0
}

fn tensor(addr: *mut std::ffi::c_void, size: usize) -> acldumpTensorInfo {
    let mut shape = [0u64; 25];
    shape[0] = 4;
    shape[1] = 2;
    acldumpTensorInfo {
        r#type: 0,
        tensorSize: size,
        format: 2,
        dataType: 0,
        tensorAddr: addr.cast(),
        addrType: 2,
        placement: 0,
        argsOffset: 0,
        shapeNum: 2,
        originShapeNum: 2,
        shape,
        originShape: shape,
    }
}

#[test]
fn dump_configuration_paths_and_exception_data() {
    let dir = std::env::temp_dir().join(format!("ascendless-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        c(p.to_str().unwrap())
    };
    let exc_root = dir.join("exc");
    let init_cfg = write(
        "acl.json",
        &format!(
            r#"{{"dump": {{"dump_path": "{}", "dump_scene": "aic_err_brief_dump"}}}}"#,
            exc_root.display()
        ),
    );
    let data_cfg = write(
        "data.json",
        &format!(
            r#"{{"dump": {{"dump_path": "{}/data", "dump_list": [{{}}], "dump_op_switch": "on", "dump_data": "tensor"}}}}"#,
            dir.display()
        ),
    );
    let bad_mode = write("bad_mode.json", r#"{"dump": {"dump_path": "o", "dump_mode": "sideways"}}"#);
    let no_path = write("no_path.json", r#"{"dump": {"dump_list": [{}]}}"#);
    let both =
        write("both.json", r#"{"dump": {"dump_path": "o", "dump_debug": "on", "dump_op_switch": "on"}}"#);
    let not_json = write("not.json", "{dump");
    let no_section = write("none.json", r#"{"profiler": {}}"#);

    assert_eq!(aclmdlInitDump(), ACL_ERROR_UNINITIALIZE, "before aclInit");
    // SAFETY: NUL-terminated strings; buffers of the sizes given; device pointers from the
    // library.
    unsafe {
        assert_eq!(aclInit(init_cfg.as_ptr()), ACL_SUCCESS, "{}", recent());
        assert_eq!(aclmdlSetDump(data_cfg.as_ptr()), ACL_ERROR_DUMP_NOT_RUN, "before aclmdlInitDump");
        assert_eq!(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);
        assert_eq!(aclmdlInitDump(), ACL_SUCCESS, "{}", recent());
        assert_eq!(aclmdlInitDump(), ACL_ERROR_REPEAT_INITIALIZE);
        assert_eq!(aclmdlSetDump(null()), ACL_ERROR_INVALID_PARAM);
        let missing = c(dir.join("missing.json").to_str().unwrap());
        assert_eq!(aclmdlSetDump(missing.as_ptr()), ACL_ERROR_INVALID_FILE);
        assert_eq!(aclmdlSetDump(not_json.as_ptr()), ACL_ERROR_PARSE_FILE);
        for (f, why) in
            [(&bad_mode, "dump_mode"), (&no_path, "dump_path"), (&both, "overflow"), (&no_section, "dump")]
        {
            assert_eq!(aclmdlSetDump(f.as_ptr()), ACL_ERROR_INVALID_DUMP_CONFIG, "{why}");
            assert!(recent().contains(why), "{}", recent());
        }
        assert_eq!(path_of(4), None, "aclInit configured only the exception dump");
        assert_eq!(aclmdlSetDump(data_cfg.as_ptr()), ACL_SUCCESS, "{}", recent());
        assert_eq!(path_of(4), Some(format!("{}/data", dir.display())));
        assert_eq!(path_of(5), None, "no overflow dump");
        assert_eq!(aclmdlFinalizeDump(), ACL_SUCCESS);
        assert_eq!(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);
        assert_eq!(path_of(4), None, "finalised");
        assert_eq!(path_of(1), Some(exc_root.display().to_string()), "aclInit's exception dump");

        // Callbacks and operator-args dumps.
        assert_eq!(acldumpRegCallback(None, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acldumpRegCallback(Some(on_chunk), 1), ACL_ERROR_INVALID_PARAM, "flag 0 only");
        assert_eq!(acldumpRegCallback(Some(on_chunk), 0), ACL_SUCCESS);
        acldumpUnregCallback();
        let args = c(dir.join("args").to_str().unwrap());
        assert_eq!(aclopStartDumpArgs(2, args.as_ptr()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclopStartDumpArgs(1, null()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclopStartDumpArgs(1, args.as_ptr()), ACL_SUCCESS, "{}", recent());
        assert!(dir.join("args").is_dir(), "made");
        assert_eq!(path_of(4).as_deref(), args.to_str().ok());
        assert_eq!(aclopStopDumpArgs(1), ACL_SUCCESS);
        assert_eq!(aclopStopDumpArgs(1), ACL_ERROR_DUMP_NOT_RUN);

        // Exception data of the current device.
        assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
        let mut buf = [0 as c_char; 4096];
        assert_eq!(acldumpGetExceptionInfoPath(buf.as_mut_ptr(), buf.len()), ACL_SUCCESS, "{}", recent());
        let root = CStr::from_ptr(buf.as_ptr()).to_str().unwrap().to_owned();
        assert_eq!(root, format!("{}/extra-info/data-dump/2/", exc_root.display()));
        assert_eq!(acldumpGetExceptionInfoPath(buf.as_mut_ptr(), 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(acldumpGetExceptionInfoPath(buf.as_mut_ptr(), 10), ACL_ERROR_INVALID_PARAM, "no room");
        assert_eq!(acldumpGetExceptionInfoPath(null_mut(), 4096), ACL_ERROR_INVALID_PARAM);

        let mut dev = null_mut();
        assert_eq!(aclrtMalloc(&mut dev, 32, 0), ACL_SUCCESS);
        let data: Vec<u8> = (0..32).collect();
        assert_eq!(aclrtMemcpy(dev, 32, data.as_ptr().cast(), 32, 1), ACL_SUCCESS);
        let tag = c("component=test");
        let name = c("saved");
        let good = [tensor(dev, 32)];
        assert_eq!(
            acldumpSaveExceptionInfo(name.as_ptr(), tag.as_ptr(), good.as_ptr(), 1),
            ACL_SUCCESS,
            "{}",
            recent()
        );
        let files: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1);
        let fname = files[0].file_name().unwrap().to_str().unwrap().to_owned();
        assert!(fname.starts_with("saved.custom.") && fname.len() == "saved.custom.".len() + 17, "{fname}");
        let bytes = std::fs::read(&files[0]).unwrap();
        let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
        let header: serde_json::Value = serde_json::from_slice(&bytes[..nl]).unwrap();
        assert_eq!(header["user_tag"], "component=test");
        assert_eq!(header["tensors"][0]["shape"], serde_json::json!([4, 2]));
        assert_eq!(&bytes[nl + 1..], &data[..], "the tensor's bytes from device memory");

        let up = c("../escape");
        assert_eq!(acldumpSaveExceptionInfo(up.as_ptr(), null(), good.as_ptr(), 1), ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            acldumpSaveExceptionInfo(name.as_ptr(), null(), good.as_ptr(), 0),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(acldumpSaveExceptionInfo(name.as_ptr(), null(), null(), 1), ACL_ERROR_INVALID_PARAM);
        let mut wide = tensor(dev, 32);
        wide.shapeNum = 26;
        assert_eq!(acldumpSaveExceptionInfo(name.as_ptr(), null(), &wide, 1), ACL_ERROR_INVALID_PARAM);
        let mut indirect = tensor(dev, 32);
        indirect.addrType = 0;
        assert_eq!(acldumpSaveExceptionInfo(name.as_ptr(), null(), &indirect, 1), ACL_ERROR_INVALID_PARAM);
        let host = [tensor(data.as_ptr().cast_mut().cast(), 32)];
        assert_eq!(
            acldumpSaveExceptionInfo(name.as_ptr(), null(), host.as_ptr(), 1),
            ACL_ERROR_INVALID_PARAM,
            "not device memory"
        );
        assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(2), ACL_SUCCESS);

        // aclInit's file configuring a data dump leaves aclmdlInitDump nothing to do.
        assert_eq!(aclFinalize(), ACL_SUCCESS);
        assert_eq!(aclInit(data_cfg.as_ptr()), ACL_SUCCESS);
        assert_eq!(aclmdlInitDump(), ACL_ERROR_DUMP_ALREADY_RUN);
        assert_eq!(path_of(4), Some(format!("{}/data", dir.display())), "aclInit's data dump");
        assert_eq!(
            acldumpGetExceptionInfoPath(buf.as_mut_ptr(), buf.len()),
            ACL_ERROR_DUMP_NOT_RUN,
            "no exception dump now"
        );
        assert_eq!(aclFinalize(), ACL_SUCCESS);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
