//! The `ascendless-bench` tool, run briefly in each mode with `--json`: every result carries
//! its same-run baselines and the ratios against them.

use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ascendless-bench"))
        .args(args)
        .output()
        .expect("run ascendless-bench");
    assert!(
        out.status.success(),
        "ascendless-bench {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON document")
}

/// Every result has figures, baselines with figures, and a ratio per figure.
fn check(v: &Value, mode: &str, baseline: &str) {
    assert_eq!(v["mode"], mode);
    let results = v["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        for k in ["gbps", "p50_us", "p99_us", "cpu_s_per_gb", "cpu_us_per_op", "ops"] {
            assert!(r.get(k).is_some(), "{mode}: result lacks {k}: {r}");
        }
        assert!(r["p50_us"].as_f64().unwrap() > 0.0, "{mode}: {r}");
        let b = r["baselines"].as_array().expect("baselines");
        assert!(!b.is_empty(), "{mode}: no baseline: {r}");
        for b in b {
            for k in ["gbps", "p50_us", "p99_us", "cpu_s_per_gb", "cpu_us_per_op"] {
                assert!(b["ratio"].get(k).is_some(), "{mode}: ratio lacks {k}: {b}");
            }
            assert!(b["ratio"]["p50_us"].as_f64().unwrap() > 0.0, "{mode}: {b}");
        }
    }
    let names: Vec<&str> = results
        .iter()
        .flat_map(|r| r["baselines"].as_array().unwrap())
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert!(names.contains(&baseline), "{mode}: no '{baseline}' baseline among {names:?}");
}

#[test]
fn adxl_spawn_write_and_read() {
    for op in ["write", "read"] {
        let v = run(&[
            "adxl",
            "--spawn",
            "--op",
            op,
            "--block",
            "64K",
            "--batch",
            "2",
            "--duration",
            "0.2",
            "--json",
        ]);
        check(&v, "adxl", "raw TCP socket pair");
        let r = &v["results"][0];
        assert!(r["gbps"].as_f64().unwrap() > 0.0);
        assert!(r["baselines"][0]["ratio"]["gbps"].as_f64().unwrap() > 0.0);
        assert!(r["note"].as_str().unwrap().contains("ASCENDLESS_TRANSPORT=auto"), "{r}");
    }
}

#[test]
fn adxl_shm_and_async() {
    let v = run(&["adxl", "--transport", "shm", "--block", "4K", "--duration", "0.2", "--json"]);
    check(&v, "adxl", "memcpy");
    assert_eq!(v["results"][0]["baselines"][0]["name"], "memcpy", "shm is compared with memcpy first");
    assert!(v["results"][0]["note"].as_str().unwrap().contains("ASCENDLESS_TRANSPORT=shm"));
    let v = run(&["adxl", "--async", "4", "--block", "4K", "--duration", "0.2", "--json"]);
    check(&v, "adxl", "raw TCP socket pair");
    assert_eq!(v["params"]["in_flight_per_thread"], 4, "{v}");
    let first = &v["results"][0]["baselines"][0];
    assert_eq!(first["name"], "TransferSync, the same calls", "async is compared with TransferSync first");
    assert!(first["ratio"]["gbps"].as_f64().unwrap() > 0.0, "{first}");
    let pairs = &v["results"][0]["baselines"][2];
    assert_eq!(pairs["name"], "raw TCP, 4 pairs at once", "and with as many raw socket pairs as requests");
    assert!(pairs["gbps"].as_f64().unwrap() > 0.0, "{pairs}");
    assert!(v["results"][0]["gbps"].as_f64().unwrap() > 0.0);
    // Any request completing makes room for the next (the batched GetTransferStatus).
    let v = run(&[
        "adxl",
        "--async",
        "4",
        "--poll",
        "any",
        "--transport",
        "tcp",
        "--block",
        "4K",
        "--duration",
        "0.2",
        "--json",
    ]);
    check(&v, "adxl", "raw TCP, 4 pairs at once");
    assert_eq!(v["params"]["poll"], "any", "{v}");
    assert!(v["results"][0]["name"].as_str().unwrap().contains("async4 any"), "{v}");
    assert!(v["results"][0]["gbps"].as_f64().unwrap() > 0.0, "{v}");
    let out =
        Command::new(env!("CARGO_BIN_EXE_ascendless-bench")).args(["adxl", "--async", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "zero requests in flight is refused");
}

#[test]
fn notify_ping_pong() {
    let v = run(&["notify", "--duration", "0.2", "--json"]);
    check(&v, "notify", "spinning futex ping-pong (2 processes)");
    check(&v, "notify", "sleeping futex ping-pong (2 processes)");
    assert!(v["results"][0]["note"].as_str().unwrap().contains("% of one core"), "the CPU share: {v}");
}

#[test]
fn ipc_event_rounds() {
    let v = run(&["ipc-event", "--json"]);
    check(&v, "ipc-event", "spinning futex ping-pong (2 processes)");
    check(&v, "ipc-event", "sleeping futex ping-pong (2 processes)");
    assert_eq!(v["results"].as_array().unwrap().len(), 2, "the IPC event and the value wait/write: {v}");
    assert_eq!(v["params"]["rounds"], 41);
}

#[test]
fn engine_setup_per_transport() {
    for transport in ["auto", "tcp"] {
        let v = run(&["setup", "--transport", transport, "--duration", "0.2", "--json"]);
        check(&v, "setup", "raw TCP listen+connect+accept+close");
        let r = &v["results"][0];
        assert!(r["name"].as_str().unwrap().contains(transport), "{r}");
        assert!(r["note"].as_str().unwrap().contains("Connect"), "the steps' medians: {r}");
    }
}

#[test]
fn memcpy_and_stream_tasks() {
    let v = run(&["memcpy", "--block", "64K", "--duration", "0.3", "--json"]);
    check(&v, "memcpy", "memcpy");
    assert_eq!(v["results"].as_array().unwrap().len(), 4);
}

/// `--help` lists every mode and every flag with its default, and so do `-h`, `help` and no
/// arguments at all; bad arguments exit with status 2.
#[test]
fn help_and_bad_arguments() {
    let bench = || Command::new(env!("CARGO_BIN_EXE_ascendless-bench"));
    let out = bench().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let words = [
        "Usage:",
        "adxl",
        "notify",
        "memcpy",
        "sweep",
        "target",
        "initiator",
        "--spawn",
        "--op",
        "--block",
        "--batch",
        "--threads",
        "--sync",
        "--async",
        "--transport",
        "--duration",
        "--json",
        "--csv",
        "--plot",
        "--remote ",
        "--remote-addr",
        "--listen",
        "--no-baseline",
        "--help",
        "auto|shm|tcp|ucx",
        "raw TCP socket pair",
        "raw futex ping-pong",
        "GetTransferStatus",
        "docs/deploy-rdma.md",
        "ratio ascendless / baseline",
    ];
    for word in words {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    let defaults = [
        "[default: write]",
        "[default: 1M]",
        "[default: 1]",
        "[default: ascendless-sweep.csv]",
        "default auto; sweep: a comma-separated list, default tcp,shm",
        "default 2; sweep: per point, default 0.3",
        "default 127.0.0.1 and a free port",
        "default: the CSV's name with .png",
    ];
    for d in defaults {
        assert!(text.contains(d), "--help lacks {d}:\n{text}");
    }
    for args in [&["-h"][..], &["help"], &[]] {
        let out = bench().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--no-baseline"), "{args:?}");
    }
    for args in [
        &["adxl", "--block", "1Q"][..],
        &["bogus"],
        &["adxl", "--bogus"],
        &["notify", "initiator"],
        &["adxl", "initiator", "--remote", "127.0.0.1:1"],
        &["adxl", "--duration", "0"],
        &["adxl", "--op", "copy"],
    ] {
        let out = bench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"), "{args:?}");
    }
}

/// `--transport` takes ucx (checked before `--help` ends the parse) and refuses other words.
#[test]
fn transport_values() {
    let status = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ascendless-bench")).args(args).output().unwrap().status.code()
    };
    assert_eq!(status(&["adxl", "--transport", "ucx", "--help"]), Some(0));
    assert_eq!(status(&["sweep", "--transport", "tcp,shm,ucx", "--help"]), Some(0));
    assert_eq!(status(&["adxl", "--transport", "rdma", "--help"]), Some(2));
    assert_eq!(status(&["sweep", "--transport", "tcp,", "--help"]), Some(2));
}

/// Transport ucx: without the `ucx` feature the run fails with one clear line (Initialize says
/// UNSUPPORTED), with it the bytes move through UCX.
#[test]
fn adxl_ucx() {
    let args = ["adxl", "--transport", "ucx", "--block", "4K", "--duration", "0.2", "--json"];
    if cfg!(feature = "ucx") {
        let v = run(&args);
        check(&v, "adxl", "raw TCP socket pair");
        let note = v["results"][0]["note"].as_str().unwrap();
        assert!(note.contains("ASCENDLESS_TRANSPORT=ucx") && !note.contains("UCX 0 B"), "{note}");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ascendless-bench")).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("without the ucx feature") && !err.contains("panicked"), "{err}");
}

#[test]
fn sweep_writes_a_csv() {
    let dir = std::env::temp_dir().join(format!("ascendless-bench-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("sweep.csv");
    let v =
        run(&["sweep", "--transport", "tcp", "--duration", "0.02", "--csv", csv.to_str().unwrap(), "--json"]);
    check(&v, "sweep", "raw TCP socket pair");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("size,series,gbps,p50_us,p99_us,cpu_s_per_gb"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 13 * 3, "13 sizes x (memcpy, raw TCP, adxl tcp): {text}");
    assert!(
        rows[0].starts_with("8,memcpy,") && rows.last().unwrap().starts_with("67108864,adxl tcp,"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
