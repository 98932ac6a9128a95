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
    for args in [
        &["--procs", "1"][..],
        &["--procs", "9"],
        &["--threads", "5"],
        &["--duration", "0"],
        &["--bogus", "1"],
        &["--threads"],
    ] {
        let out = soak().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let help = soak().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(help.status.success(), "{text}");
    for word in [
        "Usage:",
        "--duration <SECONDS>",
        "[default: 60]",
        "--interval <SECONDS>",
        "[default: 5]",
        "--procs <N>",
        "2 to 8 [default: 4]",
        "--threads <N>",
        "1 to 4 [default: 2]",
        "Exits 0 when every byte checked out",
    ] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
}

/// Whether process `pid` still runs (gone or a zombie waiting to be reaped: not running).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().and_then(|r| r.split_whitespace().next()) != Some("Z"))
        .unwrap_or(false)
}

#[test]
fn workers_end_when_the_coordinator_is_killed() {
    use std::io::{BufRead, BufReader};
    let mut coordinator = soak()
        .args(["--duration", "60", "--interval", "0.5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first report line: every worker is up and transferring.
    let mut out = BufReader::new(coordinator.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains(" p0 ") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the soak ended before its first report");
    }
    let id = coordinator.id();
    let children = std::fs::read_to_string(format!("/proc/{id}/task/{id}/children")).unwrap();
    let workers: Vec<&str> = children.split_whitespace().collect();
    assert_eq!(workers.len(), 4, "{children:?}");
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while workers.iter().any(|p| running(p)) {
        assert!(Instant::now() < deadline, "workers still running 30 s after the coordinator died");
        std::thread::sleep(Duration::from_millis(100));
    }
}
