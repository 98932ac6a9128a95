//! What the ABI tests (tests/c_abi.rs, tests/hccl_abi.rs) need of the build tree: the
//! repository, cargo's output directory, the shared library this run built, a scratch
//! directory per test, and commands that must succeed.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's output directory for this build (holds libascendless.so next to `deps/`).
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The shared library cargo built for this test run. `cargo test` alone does not build the
/// cdylib, so `make test` runs `cargo build --lib` first; a library older than the code the
/// tests were built from would make every check meaningless, so that is an error.
pub fn shared_library() -> PathBuf {
    let lib = lib_dir().join("libascendless.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let built = modified(&lib).unwrap_or_else(|| panic!("{} was not built: run `make test`", lib.display()));
    let rlib = lib_dir().join("libascendless.rlib");
    if let Some(code) = modified(&rlib) {
        // One build writes both within moments; a library from an earlier build is older.
        let lag = code.duration_since(built).unwrap_or_default();
        assert!(lag.as_secs() < 5, "{} is older than the code under test: run `make test`", lib.display());
    }
    lib
}

/// A fresh directory `<lib_dir>/<suite>/<name>` for one test's files.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = lib_dir().join(suite).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd`, which must succeed; its standard output.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({:?}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
