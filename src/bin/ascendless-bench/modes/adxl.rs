//! ADXL: a target serving registered memory, an initiator calling TransferSync on it, and both
//! spawned as two local processes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp, Transport};
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};

use crate::args::{Op, Opts, PollMode};
use crate::measure::{Cpu, Figures, timed};
use crate::report::human;

const TIMEOUT_MS: i32 = 60_000;

fn runtime_only(r: HostRange) -> RawSpan {
    panic!("the benchmark uses runtime memory only, yet {r:?} needed vouching")
}

/// Registered host memory for every thread's batch.
fn region(o: &Opts) -> usize {
    o.block * o.batch * o.threads
}

fn engine_with_memory(name: &str, len: usize) -> Result<(Engine, usize), String> {
    let engine = Engine::new();
    engine.initialize(name, &[]).map_err(|e| format!("Initialize({name}): {e}"))?;
    let mem = memory::alloc_host(len).map_err(|e| format!("allocating {len} bytes of host memory: {e:?}"))?;
    // SAFETY: `mem` is a fresh allocation of `len` bytes; touching it now keeps page faults out
    // of the measurement.
    unsafe { std::ptr::write_bytes(mem as *mut u8, 0x5a, len) };
    engine.register_mem(mem, len, MemType::Host, runtime_only).map_err(|e| format!("RegisterMem: {e}"))?;
    Ok((engine, mem))
}

/// What the engine does with ASCENDLESS_TRANSPORT in this process.
pub fn transport_note() -> String {
    let asked = std::env::var("ASCENDLESS_TRANSPORT").unwrap_or_else(|_| "(unset)".into());
    // The engines are initialised without `adxl.Transport`, so the variable decides.
    let used = match Transport::from_env(None) {
        Transport::Auto if cfg!(feature = "ucx") => {
            "auto (shared memory with an engine on this host, else UCX when the peer offers it, else TCP)"
        }
        Transport::Auto => "auto (shared memory with an engine on this host, else TCP)",
        Transport::Shm => "shm (shared memory only)",
        Transport::Tcp => "tcp",
        Transport::Ucx => "ucx (UCX one-sided puts and gets; UCX_TLS picks the wire)",
    };
    format!("ASCENDLESS_TRANSPORT={asked}: the engine uses {used}")
}

/// Which path moved the bytes, from the engine's counters: the transport setting says what
/// may be used, this says what was (a call the fast path cannot take falls back to TCP).
fn paths_note(c: &ascendless::engine::CounterValues) -> String {
    let amount = |b: u64| match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b => format!("{b} B"),
    };
    format!(
        "bytes by path: direct copy {}, kernel copy {}, TCP {}, UCX {}",
        amount(c.direct_bytes),
        amount(c.kernel_bytes),
        amount(c.tcp_bytes),
        amount(c.ucx_bytes)
    )
}

fn cpu_now() -> f64 {
    let c = Cpu::now();
    c.since_zero()
}

/// Serves until stdin closes. Prints `READY <engine name> <address> <bytes> <cpu s>` on stdout,
/// then `DONE <cpu s>` when it stops.
pub fn target(o: &Opts) -> Result<(), String> {
    let listen = match &o.listen {
        Some(l) => l.clone(),
        None => {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("finding a free port: {e}"))?
                .port();
            format!("127.0.0.1:{port}")
        }
    };
    let len = region(o);
    // The spawning process reads stdout only: say why on it, on one line (Initialize fails
    // UNSUPPORTED for transport ucx in a build without the ucx feature).
    let (engine, mem) = engine_with_memory(&listen, len).inspect_err(|e| println!("FAILED {e}"))?;
    eprintln!(
        "ascendless-bench adxl target: {listen}, {} registered at {mem:#x}; {}\n  initiator: \
         ascendless-bench adxl initiator --remote {listen} --remote-addr {mem:#x} --block {} --batch {} --threads {}\n  \
         close stdin (Ctrl-D) to stop",
        human(len),
        transport_note(),
        o.block,
        o.batch,
        o.threads
    );
    println!("READY {listen} {mem:#x} {len} {}", cpu_now());
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    println!("DONE {}", cpu_now());
    engine.finalize();
    Ok(())
}

/// Transfers for `o.duration` seconds: per thread one TransferSync at a time, or with
/// `--async N` N TransferAsync requests kept in flight (one submitted as the oldest completes;
/// each figure is then per completed request).
pub fn initiator(o: &Opts) -> Result<Figures, String> {
    let remote = o.remote.clone().ok_or("no --remote")?;
    let remote_base = o.remote_addr.ok_or("no --remote-addr")?;
    let (engine, local) = engine_with_memory("127.0.0.1", region(o))?;
    engine.connect(&remote, 10_000).map_err(|e| format!("Connect({remote}): {e}"))?;
    let op = match o.op {
        Op::Read => TransferOp::Read,
        Op::Write => TransferOp::Write,
    };
    let per_thread = o.block * o.batch;
    let mode = match (o.in_flight, o.poll) {
        (0, _) => String::new(),
        (n, PollMode::Oldest) => format!(" async{n}"),
        (n, PollMode::Any) => format!(" async{n} any"),
    };
    let name = format!("adxl {} {} x{} x{}thr{mode}", o.op.name(), human(o.block), o.batch, o.threads);
    let (in_flight, poll) = (o.in_flight, o.poll);
    let failure = std::sync::Mutex::new(None);
    let mut f = timed(&name, o.threads, o.duration, |t| {
        let descs: Vec<TransferDesc> = (0..o.batch)
            .map(|i| {
                let at = t * per_thread + i * o.block;
                TransferDesc { local_addr: local + at, remote_addr: remote_base + at, len: o.block }
            })
            .collect();
        let (engine, remote, failure) = (&engine, &remote, &failure);
        let mut window = VecDeque::with_capacity(in_flight);
        let mut reaped = 0;
        move || {
            let result = match (in_flight, poll) {
                (0, _) => engine.transfer_sync(remote, op, &descs, TIMEOUT_MS, runtime_only).map(|()| 1),
                (n, PollMode::Oldest) => keep_in_flight(engine, remote, op, &descs, &mut window, n),
                (n, PollMode::Any) => {
                    keep_any_in_flight(engine, remote, op, &descs, &mut window, &mut reaped, n)
                }
            };
            match result {
                Ok(calls) => (per_thread * calls) as u64,
                Err(e) => {
                    failure.lock().unwrap().get_or_insert(format!("transfer: {e}"));
                    0
                }
            }
        }
    });
    let paths = paths_note(&engine.counters());
    let _ = engine.disconnect(&remote, 1000);
    engine.finalize();
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    f.note = format!("{}; {paths}", transport_note());
    Ok(f)
}

/// The error of a request that ended otherwise than COMPLETED (`status` as reported).
fn ended_badly(status: impl std::fmt::Debug) -> ascendless::error::EngineError {
    ascendless::error::EngineError::new(
        ascendless::error::engine_status::ADXL_FAILED,
        format!("request ended with status {status:?}"),
    )
}

/// Submits one TransferAsync request of `descs`, first waiting (polling GetTransferStatus)
/// for the oldest of `window` when `n` are in flight; returns how many completed (0 or 1).
fn keep_in_flight(
    engine: &Engine,
    remote: &str,
    op: TransferOp,
    descs: &[TransferDesc],
    window: &mut VecDeque<u64>,
    n: usize,
) -> ascendless::error::EngineResult<usize> {
    let mut completed = 0;
    if window.len() >= n {
        let req = window.pop_front().expect("a full window");
        loop {
            match engine.transfer_status(req) {
                (Some(0), Ok(())) => std::hint::spin_loop(),
                (Some(1), Ok(())) => break,
                (_, Err(e)) => return Err(e),
                (status, Ok(())) => return Err(ended_badly(status)),
            }
        }
        completed = 1;
    }
    window.push_back(engine.transfer_async(remote, op, descs, runtime_only)?);
    Ok(completed)
}

/// Submits one TransferAsync request of `descs`, first, when `n` are in flight, waiting for
/// any one to complete (polling the batched GetTransferStatus, waiting requests left out);
/// returns how many completed (0 or 1). A poll may report several: the others are kept in
/// `reaped` and counted by the next calls, which do not wait (one request per call, as
/// [`keep_in_flight`]).
fn keep_any_in_flight(
    engine: &Engine,
    remote: &str,
    op: TransferOp,
    descs: &[TransferDesc],
    window: &mut VecDeque<u64>,
    reaped: &mut usize,
    n: usize,
) -> ascendless::error::EngineResult<usize> {
    let mut completed = 0;
    if window.len() + *reaped >= n {
        while *reaped == 0 {
            for done in engine.transfer_statuses(n as u32, true)? {
                if done.status != 1 {
                    return Err(ended_badly(done.status));
                }
                window.retain(|&h| h != done.handle);
                *reaped += 1;
            }
            std::hint::spin_loop();
        }
        *reaped -= 1;
        completed = 1;
    }
    window.push_back(engine.transfer_async(remote, op, descs, runtime_only)?);
    Ok(completed)
}

fn me() -> Command {
    Command::new(std::env::current_exe().expect("this program's path"))
}

fn shape(o: &Opts) -> Vec<String> {
    let mut v: Vec<String> = ["--block", &o.block.to_string(), "--batch", &o.batch.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(["--threads".into(), o.threads.to_string(), "--op".into(), o.op.name().into()]);
    if o.in_flight == 0 {
        v.push("--sync".into());
    } else {
        v.extend(["--async".into(), o.in_flight.to_string(), "--poll".into(), o.poll.name().into()]);
    }
    v
}

/// A target and an initiator as two processes with `ASCENDLESS_TRANSPORT=transport`; CPU time
/// is the initiator's measured window plus the target's while it served.
pub fn spawned(o: &Opts, transport: &str) -> Result<Figures, String> {
    let mut target = me()
        .arg("adxl")
        .arg("target")
        .args(shape(o))
        .env("ASCENDLESS_TRANSPORT", transport)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the target: {e}"))?;
    let mut out = BufReader::new(target.stdout.take().ok_or("no target stdout")?);
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.len() != 5 || w[0] != "READY" {
        let _ = target.kill();
        let _ = target.wait();
        return Err(match line.trim().strip_prefix("FAILED ") {
            Some(why) => format!("ASCENDLESS_TRANSPORT={transport}: the target failed: {why}"),
            None => format!("the target did not start (said '{}')", line.trim()),
        });
    }
    let (name, addr, cpu_ready) = (w[1].to_owned(), w[2].to_owned(), w[4].parse::<f64>().unwrap_or(0.0));
    let result = me()
        .arg("adxl")
        .arg("initiator")
        .args(shape(o))
        .args(["--remote", &name, "--remote-addr", &addr, "--duration", &o.duration.to_string()])
        .args(["--json", "--no-baseline"])
        .env("ASCENDLESS_TRANSPORT", transport)
        .stderr(Stdio::inherit())
        .output();
    drop(target.stdin.take());
    line.clear();
    let _ = out.read_line(&mut line);
    let cpu_done = line.strip_prefix("DONE ").and_then(|v| v.trim().parse::<f64>().ok()).unwrap_or(cpu_ready);
    let _ = target.wait();
    let result = result.map_err(|e| format!("starting the initiator: {e}"))?;
    if !result.status.success() {
        return Err(format!("the initiator failed ({})", result.status));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&result.stdout).map_err(|e| format!("initiator output: {e}"))?;
    let r = &v["results"][0];
    let num = |k: &str| r[k].as_f64();
    Ok(Figures {
        name: format!("{} [{transport}]", r["name"].as_str().unwrap_or("adxl")),
        ops: r["ops"].as_u64().unwrap_or(0),
        bytes: r["bytes"].as_u64().unwrap_or(0),
        seconds: num("seconds").unwrap_or(0.0),
        p50_us: num("p50_us"),
        p99_us: num("p99_us"),
        cpu_s: num("cpu_s").unwrap_or(0.0) + (cpu_done - cpu_ready).max(0.0),
        note: r["note"].as_str().unwrap_or("").to_owned(),
    })
}
