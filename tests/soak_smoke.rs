//! The soak program (`make soak`) stays working: a run of a few seconds with the default shape
//! must pass, and bad arguments must be refused. The long runs are not part of `cargo test`.

use std::process::Command;
use std::time::{Duration, Instant};

fn soak() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ascendless-soak"));
    c.env("ASCEND_GLOBAL_LOG_LEVEL", "4");
    c
}

#[test]
fn a_short_soak_moves_and_checks_data_and_passes() {
    let start = Instant::now();
    let out = soak().args(["--duration", "3", "--interval", "0.5"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("soak passed"), "{stdout}");
    assert!(stdout.contains("0 errors, 0 corrupted bytes"), "{stdout}");
    assert!(stdout.contains("0 differ"), "{stdout}");
    // A report line per process every interval, with RSS and descriptors read from /proc.
    for p in 0..4 {
        assert!(
            stdout.lines().any(|l| l.contains(&format!(" p{p} ")) && l.contains("RSS") && l.contains("fds"))
        );
    }
    assert!(start.elapsed() < Duration::from_secs(120), "took {:?}", start.elapsed());
}

#[test]
fn bad_arguments_are_refused() {
    for args in [&["--procs", "1"][..], &["--duration", "0"], &["--bogus", "1"], &["--threads"]] {
        let out = soak().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let help = soak().arg("--help").output().unwrap();
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("usage:"));
}
