//! The vendor's log variables, observed from outside: this test re-runs its own executable as a
//! child with a given environment, makes one failing call there, and reads what was printed.

use std::process::Command;

const CHILD: &str = "ASCENDLESS_LOG_TEST_CHILD";

fn child_output(env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_makes_one_failing_call", "--nocapture", "--test-threads=1"]);
    cmd.env_remove("RUST_LOG")
        .env_remove("ASCEND_GLOBAL_LOG_LEVEL")
        .env_remove("ASCEND_SLOG_PRINT_TO_STDOUT");
    cmd.env(CHILD, "1").envs(env.iter().copied());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn child_makes_one_failing_call() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    // SAFETY: NULL is allowed. Fails: aclInit was never called.
    let rc = unsafe { ascendless::ffi::acl::aclFinalizeReference(std::ptr::null_mut()) };
    assert_eq!(rc, ascendless::error::acl_codes::ACL_ERROR_UNINITIALIZE);
}

const LINE: &str = "[ERROR] ASCENDLESS(";
const TEXT: &str = "aclFinalizeReference: aclInit has not been called";

#[test]
fn errors_go_to_stderr_by_default() {
    let (out, err) = child_output(&[]);
    assert!(err.contains(LINE) && err.contains(TEXT), "stderr: {err}");
    assert!(!out.contains(LINE), "stdout: {out}");
}

#[test]
fn print_to_stdout_moves_them_to_stdout() {
    let (out, err) = child_output(&[("ASCEND_SLOG_PRINT_TO_STDOUT", "1")]);
    assert!(out.contains(LINE) && out.contains(TEXT), "stdout: {out}");
    assert!(!err.contains(LINE), "stderr: {err}");
}

#[test]
fn level_4_is_silent_and_rust_log_overrides_it() {
    let (out, err) = child_output(&[("ASCEND_GLOBAL_LOG_LEVEL", "4")]);
    assert!(!out.contains(LINE) && !err.contains(LINE), "{out}{err}");
    let (_, err) = child_output(&[("ASCEND_GLOBAL_LOG_LEVEL", "4"), ("RUST_LOG", "ascendless=error")]);
    assert!(err.contains(TEXT), "{err}");
}
