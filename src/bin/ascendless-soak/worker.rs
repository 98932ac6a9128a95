//! One soak process: an ADXL engine serving a region of memory to its peers, initiator threads
//! moving mixed transfers into and out of every peer's region and checking every byte read,
//! and a notify thread in a ring of IPC notifies with the other processes.
//!
//! It talks to the coordinator in lines (stdin: commands, stdout: reports); see
//! [`crate::protocol`]. It ends when told to, when its stdin closes (the coordinator died) or
//! at its own deadline, so it never outlives a soak run.

use std::io::{BufRead, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ascendless::engine::Engine;
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};

use crate::initiator;
use crate::protocol::{Peer, Stats};
use crate::region::Region;
use crate::ring::Ring;

/// Bytes of a peer's region that one initiator thread owns (its slot); only that thread
/// writes there, so it knows what every byte must hold.
pub const SLOT: usize = 2 << 20;
/// The time limit of every blocking call (Connect, TransferSync, SendNotify).
pub const TIMEOUT_MS: i32 = 30_000;

/// What one worker was asked to be.
#[derive(Debug, Clone)]
pub struct Role {
    pub index: usize,
    pub procs: usize,
    pub threads: usize,
    /// `adxl.Transport` of its engine: `auto` (shared memory with same-host peers) or `tcp`.
    pub transport: String,
    /// Its region is device memory (`aclrtMalloc`) rather than host memory.
    pub device_region: bool,
    /// Seconds after which it gives up on its own, whatever the coordinator says.
    pub deadline_s: u64,
    /// Seconds between its STAT lines.
    pub stat_interval_s: f64,
}

/// Counters every thread of the worker adds to, reported on each STAT line.
#[derive(Default)]
pub struct Counters {
    pub stop: AtomicBool,
    pub transfers: AtomicU64,
    pub bytes: AtomicU64,
    pub notifies: AtomicU64,
    pub adxl_sent: AtomicU64,
    pub adxl_received: AtomicU64,
    pub errors: AtomicU64,
    pub corrupt: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Counters {
    pub fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        eprintln!("soak worker {}: {what}", std::process::id());
        ascendless::sync::lock(&self.first_error).get_or_insert(what);
    }

    pub fn stats(&self) -> Stats {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            transfers: r(&self.transfers),
            bytes: r(&self.bytes),
            notifies: r(&self.notifies),
            adxl_sent: r(&self.adxl_sent),
            adxl_received: r(&self.adxl_received),
            errors: r(&self.errors),
            corrupt: r(&self.corrupt),
        }
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// The worker's memory is the runtime's (it needs no vouching); anything else is a bug here.
pub fn runtime_only(r: HostRange) -> RawSpan {
    panic!("the soak uses runtime memory only, yet {r:?} needed vouching")
}

/// The runtime's view of `len` bytes at `addr` (memory this worker allocated).
pub fn span(addr: usize, len: usize) -> RawSpan {
    memory::runtime_span(addr, len).expect("runtime memory allocated by this worker")
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    // The coordinator reads every line; if it is gone, stdin's end stops this worker.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Starts an engine on a free loopback port (a port found free may be taken before the
/// engine binds it: try a few).
fn start_engine(transport: &str) -> Result<(Engine, String), String> {
    let mut last = String::new();
    for _ in 0..10 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let name = format!("127.0.0.1:{port}");
        let engine = Engine::new();
        match engine.initialize(&name, &[("adxl.Transport", transport)]) {
            Ok(()) => return Ok((engine, name)),
            Err(e) => last = format!("Initialize({name}): {e}"),
        }
    }
    Err(last)
}

/// Reads stdin on a thread of its own, so a stalled coordinator cannot stall the worker;
/// the channel ends with stdin.
fn commands() -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    ascendless::sync::spawn_named("soak-commands", move || {
        for l in std::io::stdin().lock().lines().map_while(Result::ok) {
            if tx.send(l.trim().to_owned()).is_err() {
                return;
            }
        }
    })
    .expect("cannot start the command reader thread");
    rx
}

/// The next command, waiting at most until `deadline`.
fn command(rx: &Receiver<String>, deadline: Instant) -> Result<String, String> {
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(|e| format!("no command from the coordinator: {e}"))
}

pub fn run(role: Role) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(role.deadline_s);
    let rx = commands();
    let device = (role.index % 2) as i32;
    let counters = Arc::new(Counters::default());
    let (engine, name) = start_engine(&role.transport)?;
    let engine = Arc::new(engine);
    let region = Region::serve(&engine, role.procs * role.threads, role.device_region, device)?;
    let ring = Ring::create(device)?;
    say(&format!("READY {} {name} {:#x} {}", std::process::id(), region.addr, ring.key()));

    let peers = Peer::parse_all(&command(&rx, deadline)?)?;
    ring.allow(&peers.iter().map(|p| p.pid as i32).collect::<Vec<_>>())?;
    say("ALLOWED");
    expect(&rx, deadline, "START")?;
    let ring = Arc::new(ring.join(&peers[(role.index + 1) % role.procs].key)?);
    let others: Vec<Peer> = peers.into_iter().filter(|p| p.index != role.index).collect();
    for p in &others {
        engine.connect(&p.engine, TIMEOUT_MS).map_err(|e| format!("Connect({}): {e}", p.engine))?;
    }

    let notify_thread = {
        let (ring, counters) = (Arc::clone(&ring), Arc::clone(&counters));
        std::thread::spawn(move || ring.run(&counters))
    };
    let initiators: Vec<_> = (0..role.threads)
        .map(|t| {
            let job = initiator::Job {
                engine: Arc::clone(&engine),
                counters: Arc::clone(&counters),
                peers: others.clone(),
                slot: role.index * role.threads + t,
                seed: (role.index as u64) << 32 | t as u64,
            };
            std::thread::spawn(move || initiator::run(job))
        })
        .collect();
    let stopped_by = serve(&rx, deadline, &engine, &counters, Duration::from_secs_f64(role.stat_interval_s));
    counters.stop.store(true, Ordering::Release);
    let shadows: Vec<initiator::Shadows> = initiators
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| initiator::Shadows::lost("an initiator thread panicked")))
        .collect();
    if notify_thread.join().is_err() {
        counters.error("the notify thread panicked".into());
    }
    stopped_by?;
    for s in &shadows {
        if let Some(e) = &s.failure {
            counters.error(e.clone());
        }
        for (peer, sum) in &s.sums {
            let sum = sum.map_or("unknown".to_owned(), |v| format!("{v:016x}"));
            say(&format!("SHADOW {peer} {} {sum}", s.slot));
        }
    }
    say("STOPPED");

    // Every initiator of every process has stopped: what each slot holds is final.
    expect(&rx, deadline, "CHECK")?;
    for (slot, sum) in region.sums().iter().enumerate() {
        say(&format!("HOLD {slot} {sum:016x}"));
    }
    drain_notifies(&engine, &counters);
    let paths = engine.counters();
    say(&format!("PATHS {} {}", paths.direct_bytes + paths.kernel_bytes, paths.tcp_bytes));
    for p in &others {
        let _ = engine.disconnect(&p.engine, TIMEOUT_MS);
    }
    region.release(&engine)?;
    engine.finalize();
    drop(ring);
    say(&format!("DONE {}", counters.stats()));
    match ascendless::sync::lock(&counters.first_error).take() {
        Some(e) => Err(format!("{} error(s), the first: {e}", counters.errors.load(Ordering::Relaxed))),
        None if counters.corrupt.load(Ordering::Relaxed) > 0 => Err("corrupted bytes".into()),
        None => Ok(()),
    }
}

/// Waits for the command `word`.
fn expect(rx: &Receiver<String>, deadline: Instant, word: &str) -> Result<(), String> {
    match command(rx, deadline)? {
        c if c == word => Ok(()),
        c => Err(format!("expected {word}, got {c:?}")),
    }
}

/// While the initiators run: drains ADXL notifies and reports the counters every `interval`
/// until STOP; the end of stdin or the worker's deadline is an error.
fn serve(
    rx: &Receiver<String>,
    deadline: Instant,
    engine: &Engine,
    counters: &Counters,
    interval: Duration,
) -> Result<(), String> {
    let mut last_report = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(c) if c == "STOP" => return Ok(()),
            Ok(c) => return Err(format!("unexpected command {c:?}")),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err("stdin closed".into()),
        }
        if Instant::now() > deadline {
            return Err("the worker's own deadline passed".into());
        }
        drain_notifies(engine, counters);
        if last_report.elapsed() >= interval {
            say(&format!("STAT {}", counters.stats()));
            last_report = Instant::now();
        }
    }
}

fn drain_notifies(engine: &Engine, counters: &Counters) {
    match engine.take_notifies() {
        Ok(got) => {
            for n in &got {
                if n.name != initiator::NOTIFY_NAME {
                    counters.error(format!("a notify named {:?} arrived", n.name));
                }
            }
            counters.adxl_received.fetch_add(got.len() as u64, Ordering::Relaxed);
        }
        Err(e) => counters.error(format!("GetNotifies: {e}")),
    }
}
