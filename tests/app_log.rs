//! `aclAppLog`, the variadic log call defined in C++: its arguments are formatted and the
//! message reaches the library's logger with its file, line and function, cut at 1024 bytes.
//! Observed from outside: the test re-runs its own executable as a child and reads its stderr.

// The library (and with it the C++ objects that define aclAppLog) is linked in.
use ascendless as _;
use std::ffi::c_char;
use std::process::Command;

unsafe extern "C" {
    fn aclAppLog(level: i32, func: *const c_char, file: *const c_char, line: u32, fmt: *const c_char, ...);
}

const CHILD: &str = "ASCENDLESS_APP_LOG_TEST_CHILD";

#[test]
fn child_logs() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let long = "y".repeat(2000) + "\0";
    // SAFETY: C strings and arguments that match their formats.
    unsafe {
        aclAppLog(3, c"main".as_ptr(), c"app.c".as_ptr(), 7, c"value %d %s".as_ptr(), 42i32, c"x".as_ptr());
        aclAppLog(0, c"main".as_ptr(), c"app.c".as_ptr(), 8, c"hidden at debug".as_ptr());
        aclAppLog(2, c"main".as_ptr(), c"app.c".as_ptr(), 9, c"%s".as_ptr(), long.as_ptr());
        aclAppLog(3, std::ptr::null(), std::ptr::null(), 0, std::ptr::null());
    }
}

#[test]
fn messages_are_formatted_located_and_cut() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_logs", "--nocapture", "--test-threads=1"])
        .env_remove("RUST_LOG")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT")
        .env("ASCEND_GLOBAL_LOG_LEVEL", "2")
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[app.c:7][main] value 42 x"), "stderr: {err}");
    assert!(!err.contains("hidden at debug"), "below ASCEND_GLOBAL_LOG_LEVEL: {err}");
    let cut = err.lines().find(|l| l.contains("[app.c:9]")).expect("the long message is logged");
    assert!(cut.ends_with("...[truncated]"), "{cut}");
    assert!(cut.matches('y').count() < 1024, "cut at 1024 bytes");
}
