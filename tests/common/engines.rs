//! ADXL engines for the fault tests, through the safe Rust API and pinned host memory of the
//! runtime (so no caller has to vouch for memory): helpers for an engine in this process, and
//! the same helpers as a scripted child ([`child_main`], driven through [`Peer`]) for engines
//! a test kills. Every engine is forced to TCP (`adxl.Transport=tcp`): on one host the engines
//! would otherwise share memory directly and never touch the network the tests disturb. A child
//! started with [`TRANSPORT`] set uses that transport instead (the UCX tests).

use std::time::{Duration, Instant};

use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp};
use ascendless::error::engine_status::ADXL_FAILED;
use ascendless::runtime::memory::runtime_span;
use ascendless::sys::span::{HostRange, RawSpan};

use super::{Scripted, checksum, pattern};

/// The role variable of the scripted child.
pub const ROLE: &str = "ASCENDLESS_FAULTS_TEST_CHILD";
/// Options of every engine of these tests.
pub const TCP: &[(&str, &str)] = &[("adxl.Transport", "tcp")];
/// A child's engine transport when set (`ucx`, `tcp`...); else TCP.
pub const TRANSPORT: &str = "ASCENDLESS_TEST_ENGINE_TRANSPORT";
/// Reported by [`transfer`] for an asynchronous request still waiting well past its time limit.
pub const HUNG: u32 = u32::MAX;

/// Every range these tests transfer is runtime memory, which the engine reaches by itself.
pub fn no_vouch(r: HostRange) -> RawSpan {
    panic!("the engine asked to vouch for {:#x}: the tests use runtime memory only", r.addr)
}

/// Pinned host memory from the runtime, `len` bytes of the pattern of `seed`.
pub fn host_mem(len: usize, seed: u64) -> usize {
    let addr = ascendless::engine::memory::malloc(
        MemType::Host,
        len,
        &ascendless::runtime::memory::Limits::of(ascendless::config::settings()),
    )
    .expect("pinned host memory");
    fill(addr, len, seed);
    addr
}

pub fn fill(addr: usize, len: usize, seed: u64) {
    runtime_span(addr, len).expect("runtime memory").write_slice(&pattern(len, seed));
}

pub fn sum(addr: usize, len: usize) -> u64 {
    let mut out = vec![0u8; len];
    runtime_span(addr, len).expect("runtime memory").read_into(&mut out);
    checksum(&out)
}

/// A free loopback port (another process may take it before it is used: callers retry).
pub use super::ports::free_port;

/// The engine options of this process: [`TCP`], or the transport [`TRANSPORT`] names.
fn options() -> Vec<(&'static str, String)> {
    let t = std::env::var(TRANSPORT).unwrap_or_else(|_| "tcp".into());
    vec![("adxl.Transport", t)]
}

fn initialize(e: &Engine, name: &str) -> Result<(), ascendless::error::EngineError> {
    let o = options();
    let o: Vec<(&str, &str)> = o.iter().map(|(k, v)| (*k, v.as_str())).collect();
    e.initialize(name, &o)
}

/// An engine listening as `name`, or on a free loopback port (TCP only); its name.
pub fn serving_engine(name: Option<&str>) -> (Engine, String) {
    for _ in 0..20 {
        let e = Engine::new();
        let name = name.map_or_else(|| format!("127.0.0.1:{}", free_port()), str::to_owned);
        match initialize(&e, &name) {
            Ok(()) => return (e, name),
            // A restarted engine's port may be held a moment longer by the one it replaces.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    panic!("no port for an engine");
}

/// An engine that only connects (TCP only).
pub fn client_engine() -> Engine {
    let e = Engine::new();
    initialize(&e, "127.0.0.1").expect("a client engine");
    e
}

pub fn register(e: &Engine, addr: usize, len: usize) -> u64 {
    e.register_mem(addr, len, MemType::Host, no_vouch).expect("RegisterMem")
}

/// How a transfer is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Sync,
    Async,
}

/// One transfer of `len` bytes in `pieces` descriptors between `local` and `remote`: 0 or the
/// status, and how long it took. An asynchronous request is submitted, then polled until it
/// is done; one still waiting `async_limit` plus 10 s after submission is reported [`HUNG`].
#[allow(clippy::too_many_arguments)]
pub fn transfer(
    e: &Engine,
    peer: &str,
    op: TransferOp,
    call: Call,
    local: usize,
    remote: usize,
    len: usize,
    pieces: usize,
    timeout_ms: i32,
) -> (u32, Duration) {
    let piece = len / pieces;
    let descs: Vec<TransferDesc> = (0..pieces)
        .map(|i| TransferDesc {
            local_addr: local + i * piece,
            remote_addr: remote + i * piece,
            len: if i + 1 == pieces { len - i * piece } else { piece },
        })
        .collect();
    let t = Instant::now();
    let code = |r: Result<(), ascendless::error::EngineError>| r.map_or_else(|e| e.status, |()| 0);
    if call == Call::Sync {
        let r = e.transfer_sync(peer, op, &descs, timeout_ms, no_vouch);
        return (code(r), t.elapsed());
    }
    let h = match e.transfer_async(peer, op, &descs, no_vouch) {
        Ok(h) => h,
        Err(err) => return (err.status, t.elapsed()),
    };
    let limit = async_limit() + Duration::from_secs(10);
    loop {
        match e.transfer_status(h) {
            (Some(0), Ok(())) if t.elapsed() < limit => std::thread::sleep(Duration::from_millis(1)),
            (Some(0), _) => return (HUNG, t.elapsed()),
            (Some(1), Ok(())) => return (0, t.elapsed()),
            (_, Err(err)) => return (err.status, t.elapsed()),
            (_, Ok(())) => return (ADXL_FAILED, t.elapsed()),
        }
    }
}

/// The time limit of this process's asynchronous transfers (the engine's default unless
/// `ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS` says otherwise).
pub fn async_limit() -> Duration {
    std::env::var("ASCENDLESS_ADXL_ASYNC_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(60), Duration::from_millis)
}

pub fn op(word: &str) -> TransferOp {
    match word {
        "read" => TransferOp::Read,
        "write" => TransferOp::Write,
        other => panic!("no operation {other:?}"),
    }
}

fn call(word: &str) -> Call {
    match word {
        "sync" => Call::Sync,
        "async" => Call::Async,
        other => panic!("no call {other:?}"),
    }
}

/// This engine's memory: `2 * SIZE` bytes registered at once, the first half the pattern of
/// its seed (a source, never written by transfers), the second half a destination.
fn two_halves(e: &Engine, size: usize, seed: u64) -> usize {
    let addr = host_mem(2 * size, seed);
    fill(addr, size, seed);
    register(e, addr, 2 * size);
    addr
}

/// For `check` and `await-notify` (words `_ ADDR LEN SEED OFFSET`): whether the memory holds
/// bytes OFFSET.. of the pattern of SEED (made once per seed, as long as a source).
fn holds(patterns: &mut std::collections::HashMap<usize, Vec<u8>>, size: usize, w: &[&str]) -> bool {
    let n = |i: usize| -> usize { w[i].parse().unwrap() };
    let want = patterns.entry(n(3)).or_insert_with(|| pattern(size, n(3) as u64));
    let mut got = vec![0u8; n(2)];
    runtime_span(n(1), n(2)).expect("runtime memory").read_into(&mut got);
    got[..] == want[n(4)..n(4) + n(2)]
}

/// The child: one engine (made by `serve` or `client`), commands on standard input, one reply
/// line each (0 or a status first, then values).
pub fn child_main() {
    use std::io::{BufRead, Write};
    let mut engine: Option<(Engine, String)> = None;
    let mut size = 0;
    // Patterns of the sources (this engine's and its peer's), made once: comparing memory
    // with them is quick even in a debug build.
    let mut patterns = std::collections::HashMap::new();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> usize { w[i].parse().unwrap() };
        let e = || &engine.as_ref().expect("serve or client first").0;
        let reply = match w.as_slice() {
            ["pid"] => format!("0 {}", std::process::id()),
            // serve SIZE SEED [NAME]: a listening engine (as NAME, else on a free loopback
            // port) with a source of SIZE bytes of pattern SEED and a destination after it.
            ["serve", _, _, name @ ..] => {
                let (en, name) = serving_engine(name.first().copied());
                size = n(1);
                let addr = two_halves(&en, size, n(2) as u64);
                engine = Some((en, name.clone()));
                format!("0 {name} {addr}")
            }
            // client SIZE SEED: an engine that connects, with memory as `serve`'s.
            ["client", _, _] => {
                let en = client_engine();
                size = n(1);
                let addr = two_halves(&en, size, n(2) as u64);
                engine = Some((en, "127.0.0.1".into()));
                format!("0 {addr}")
            }
            ["connect", name, t] => {
                format!("{}", e().connect(name, t.parse().unwrap()).map_or_else(|e| e.status, |()| 0))
            }
            ["disconnect", name] => {
                format!("{}", e().disconnect(name, 1000).map_or_else(|e| e.status, |()| 0))
            }
            // xfer sync|async NAME read|write LOCAL REMOTE LEN PIECES TIMEOUT: status, ms.
            ["xfer", c, name, o, _, _, _, _, t] => {
                let (code, took) =
                    transfer(e(), name, op(o), call(c), n(4), n(5), n(6), n(7), t.parse().unwrap());
                format!("{code} {}", took.as_millis())
            }
            ["sum", _, _] => format!("0 {}", sum(n(1), n(2))),
            ["clear", _, _] => {
                runtime_span(n(1), n(2)).expect("runtime memory").fill(0xa5);
                "0".into()
            }
            // check ADDR LEN SEED OFFSET: 1 when the memory holds bytes OFFSET.. of the pattern
            // of SEED (as long as a source), else 0.
            ["check", _, _, _, _] => format!("0 {}", u8::from(holds(&mut patterns, size, &w))),
            // plain LEN SEED: pinned host memory the engine does not register (relayed).
            ["plain", _, _] => format!("0 {}", host_mem(n(1), n(2) as u64)),
            // more LEN SEED: memory registered now (after Connect): address and handle.
            ["more", _, _] => {
                let addr = host_mem(n(1), n(2) as u64);
                format!("0 {addr} {}", register(e(), addr, n(1)))
            }
            ["deregister", _] => {
                format!("{}", e().deregister_mem(n(1) as u64).map_or_else(|e| e.status, |()| 0))
            }
            // counters: bytes moved directly, by kernel copy, over TCP and over UCX.
            ["counters"] => {
                let c = e().counters();
                format!("0 {} {} {} {}", c.direct_bytes, c.kernel_bytes, c.tcp_bytes, c.ucx_bytes)
            }
            // write-notify NAME LOCAL REMOTE LEN: TransferAsync WRITE, then at once SendNotify;
            // the notify's status, then the transfer's.
            ["write-notify", name, _, _, _] => {
                let d = [TransferDesc { local_addr: n(2), remote_addr: n(3), len: n(4) }];
                match e().transfer_async(name, TransferOp::Write, &d, no_vouch) {
                    Err(err) => format!("{}", err.status),
                    Ok(h) => {
                        let sent =
                            e().send_notify(name, "written", "", 10_000).map_or_else(|e| e.status, |()| 0);
                        let done = loop {
                            match e().transfer_status(h) {
                                (Some(0), Ok(())) => std::thread::sleep(Duration::from_millis(1)),
                                (Some(1), Ok(())) => break 0,
                                (_, r) => break r.map_or_else(|e| e.status, |()| ADXL_FAILED),
                            }
                        };
                        format!("{sent} {done}")
                    }
                }
            }
            // await-notify ADDR LEN SEED OFFSET: waits (10 s at most) for a notify, then at once
            // checks the memory as `check` does: 0 and 1 when it held the data.
            ["await-notify", _, _, _, _] => {
                let until = Instant::now() + Duration::from_secs(10);
                let notified = loop {
                    if e().take_notifies().is_ok_and(|v| !v.is_empty()) {
                        break true;
                    }
                    if Instant::now() >= until {
                        break false;
                    }
                    std::thread::sleep(Duration::from_micros(200));
                };
                format!("0 {}", u8::from(notified && holds(&mut patterns, size, &w)))
            }
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}

/// An engine in a child process, scripted. Dropping it kills the child.
pub struct Peer(pub Scripted);

impl Peer {
    /// A child with `env` added (logging off).
    pub fn start(env: &[(&str, &str)]) -> Peer {
        Peer(Scripted::spawn(ROLE, env))
    }

    /// A serving child: itself, its engine name and the address of its memory (a source of
    /// `size` bytes of pattern `seed`, then a destination of `size` bytes).
    pub fn serve(size: usize, seed: u64) -> (Peer, String, usize) {
        Peer::serve_as(Peer::start(&[]), size, seed, "")
    }

    /// As [`Peer::serve`] with the child `p`, listening as `name` (empty: a free port).
    pub fn serve_as(mut p: Peer, size: usize, seed: u64, name: &str) -> (Peer, String, usize) {
        let w = p.words(&format!("serve {size} {seed} {name}"));
        assert_eq!(w[0], "0", "serve: {w:?}");
        let addr = w[2].parse().unwrap();
        (p, w[1].clone(), addr)
    }

    /// A connecting child with `env` (say, an asynchronous time limit): itself and the address
    /// of its memory (as [`Peer::serve`]'s).
    pub fn client(size: usize, seed: u64, env: &[(&str, &str)]) -> (Peer, usize) {
        let mut p = Peer::start(env);
        let addr = p.value(&format!("client {size} {seed}"));
        (p, addr)
    }

    pub fn words(&mut self, command: &str) -> Vec<String> {
        self.0.send(command);
        self.0.reply_words(command)
    }

    /// The status of a command.
    pub fn code(&mut self, command: &str) -> u32 {
        self.0.ask(command)[0] as u32
    }

    /// The value of a command that must succeed.
    pub fn value(&mut self, command: &str) -> usize {
        self.0.value(command) as usize
    }

    pub fn sum(&mut self, addr: usize, len: usize) -> u64 {
        self.0.value(&format!("sum {addr} {len}"))
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.0.child.kill();
        let _ = self.0.child.wait();
    }

    pub fn finish(self) {
        self.0.finish();
    }
}
