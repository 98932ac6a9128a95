//! aclInit / aclFinalize / aclFinalizeReference / aclGetRecentErrMsg through the C entry
//! points. The initialisation count is process-wide, so the whole life cycle is one test.

use std::ffi::{CStr, CString};

use ascendless::error::acl_codes::*;
use ascendless::ffi::acl::{aclFinalize, aclFinalizeReference, aclGetRecentErrMsg, aclInit};

fn recent() -> Option<String> {
    let p = aclGetRecentErrMsg();
    // SAFETY: NULL or a string that stays valid until this thread's next call.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn init(path: Option<&str>) -> aclError {
    let c = path.map(|p| CString::new(p).unwrap());
    // SAFETY: NULL or a NUL-terminated string.
    unsafe { aclInit(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) }
}

fn finalize_reference() -> (aclError, u64) {
    let mut left = u64::MAX;
    // SAFETY: a valid out-pointer.
    let rc = unsafe { aclFinalizeReference(&mut left) };
    (rc, left)
}

#[test]
fn life_cycle_counts_and_errors() {
    // SAFETY: every call below gets NULL or valid pointers, as the functions require.
    unsafe {
        // Before any aclInit.
        assert_eq!(aclFinalize(), ACL_ERROR_UNINITIALIZE);
        assert!(recent().unwrap().contains("aclInit has not been called"));
        assert_eq!(aclFinalizeReference(std::ptr::null_mut()), ACL_ERROR_UNINITIALIZE);
        assert!(recent().is_some());
        assert_eq!(recent(), None, "reading consumes the message");

        // Bad configuration files are refused without initialising.
        let dir = std::env::temp_dir().join(format!("ascendless-init-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        assert_eq!(init(Some(missing.to_str().unwrap())), ACL_ERROR_INVALID_FILE);
        assert!(recent().unwrap().contains("missing.json"));
        assert_eq!(init(Some(dir.to_str().unwrap())), ACL_ERROR_INVALID_FILE, "a directory");
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        assert_eq!(init(Some(bad.to_str().unwrap())), ACL_ERROR_PARSE_FILE);
        std::fs::write(&bad, "[1, 2]").unwrap();
        assert_eq!(init(Some(bad.to_str().unwrap())), ACL_ERROR_PARSE_FILE, "not an object");
        let deep = format!("{}{}", "{\"a\":".repeat(11) + "1", "}".repeat(11));
        std::fs::write(&bad, deep).unwrap();
        assert_eq!(init(Some(bad.to_str().unwrap())), ACL_ERROR_PARSE_FILE, "nested too deep");
        let bytes = [0xffu8, 0];
        assert_eq!(aclInit(bytes.as_ptr().cast()), ACL_ERROR_INVALID_PARAM, "not UTF-8");
        assert_eq!(aclFinalize(), ACL_ERROR_UNINITIALIZE, "failed inits do not initialise");
        assert!(recent().is_some());

        // Messages stay on the thread that failed.
        std::thread::spawn(|| {
            assert_ne!(aclFinalizeReference(std::ptr::null_mut()), ACL_SUCCESS);
            assert!(recent().unwrap().starts_with("aclFinalizeReference: "));
        })
        .join()
        .unwrap();
        assert_eq!(aclFinalize(), ACL_ERROR_UNINITIALIZE);
        std::thread::spawn(|| assert_eq!(recent(), None)).join().unwrap();
        assert_eq!(recent().as_deref(), Some("aclFinalize: aclInit has not been called"));

        // A good file, then counted repeats.
        let good = dir.join("acl.json");
        std::fs::write(&good, r#"{"dump": {"dump_list": []}, "err_msg_mode": "1"}"#).unwrap();
        assert_eq!(init(Some(good.to_str().unwrap())), ACL_SUCCESS);
        assert_eq!(recent(), None, "success leaves no message");
        assert_eq!(init(None), ACL_ERROR_REPEAT_INITIALIZE);
        assert!(recent().unwrap().contains("already initialised"));
        assert_eq!(init(Some("")), ACL_ERROR_REPEAT_INITIALIZE, "empty path is no path");
        let mut words = [0u64; 2];
        let misaligned = words.as_mut_ptr().cast::<u8>().wrapping_add(1).cast::<u64>();
        assert_eq!(aclFinalizeReference(misaligned), ACL_ERROR_INVALID_PARAM);
        assert_eq!(finalize_reference(), (ACL_SUCCESS, 2), "a refused call does not count");
        assert_eq!(finalize_reference(), (ACL_SUCCESS, 1));
        assert_eq!(finalize_reference(), (ACL_SUCCESS, 0));
        assert_eq!(finalize_reference(), (ACL_ERROR_REPEAT_FINALIZE, u64::MAX), "count untouched on error");
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);

        // Initialise again after finalising; aclFinalize ignores the count and releases the
        // devices still in use.
        assert_eq!(init(Some("")), ACL_SUCCESS);
        use ascendless::ffi::acl_rt::device::{aclrtGetDevice, aclrtSetDevice};
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(init(None), ACL_ERROR_REPEAT_INITIALIZE);
        assert_eq!(aclFinalize(), ACL_SUCCESS);
        assert_eq!(aclrtGetDevice(&mut 0), ascendless::error::rt_codes::ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
