//! Access control of ADXL engines (our extensions, `docs/security.md`): the shared secret
//! (`adxl.Secret`, `ASCENDLESS_ADXL_SECRET`) and registered-memory-only serving
//! (`adxl.RemoteAccess`, `ASCENDLESS_ADXL_REMOTE_ACCESS`).
//!
//! Most tests run engines of this process over loopback (runtime memory, so no `unsafe`);
//! the environment variables and the same-host path between processes are tested with a child
//! engine (this binary re-run with a role variable, scripted one command per line). Raw
//! sockets play hostile peers: a replayed handshake, fake servers, a same-host socket client
//! without a ticket.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

mod common;

use ascendless::engine::name::EngineName;
use ascendless::engine::wire::{Desc, MAC_LEN, MemKind, Message, NONCE_LEN, WireError};
use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp};
use ascendless::error::engine_status::*;
use ascendless::runtime::memory;
use ascendless::sys::span::{HostRange, RawSpan};
use common::same_host::ticket_packet;
use common::{Scripted, checksum, pattern};

const ROLE: &str = "ASCENDLESS_ADXL_AUTH_CHILD";
const SECRET: &str = "7f3c9a1e5b2d8c4f6a0e1b3d5c7e9f21";
/// Time-out of every call: generous, as the machine may be loaded (only a failure would wait it out).
const T: i32 = 20_000;
/// The same bound for raw sockets.
const WAIT: Duration = Duration::from_millis(T as u64);

fn no_vouch(r: HostRange) -> RawSpan {
    panic!("runtime memory only, yet {r:?} needed vouching")
}

/// Runtime host memory holding `pattern(len, seed)`.
fn alloc(len: usize, seed: u64) -> usize {
    let a = memory::alloc_host(len).unwrap();
    memory::runtime_span(a, len).unwrap().write_slice(&pattern(len, seed));
    a
}

fn sum(addr: usize, len: usize) -> u64 {
    let mut out = vec![0; len];
    memory::runtime_span(addr, len).unwrap().read_into(&mut out);
    checksum(&out)
}

use common::free_port;

fn engine(name: &str, options: &[(&str, &str)]) -> Engine {
    let e = Engine::new();
    e.initialize(name, options).unwrap();
    e
}

/// A listening engine with `len` bytes of registered memory (pattern seed 1); its name and
/// the memory's address.
fn server(options: &[(&str, &str)], len: usize) -> (Engine, String, usize) {
    // A port found free can be taken before the engine binds it (seen in CI, with nothing
    // listening there a moment later): another port is tried then.
    let (e, name) = (0..5)
        .find_map(|_| {
            let name = format!("127.0.0.1:{}", free_port());
            let e = Engine::new();
            match e.initialize(&name, options) {
                Err(err) if err.message.contains("Address already in use") => None,
                r => Some((r.map(|()| e).unwrap(), name)),
            }
        })
        .expect("a free port within five tries");
    let mem = alloc(len, 1);
    e.register_mem(mem, len, MemType::Host, no_vouch).unwrap();
    (e, name, mem)
}

fn addr_of(name: &str) -> SocketAddr {
    EngineName::parse(name).unwrap().listen_addr().unwrap()
}

fn xfer(c: &Engine, remote: &str, op: TransferOp, local: usize, remote_addr: usize, len: usize) -> u32 {
    let d = [TransferDesc { local_addr: local, remote_addr, len }];
    c.transfer_sync(remote, op, &d, T, no_vouch).err().map_or(ADXL_SUCCESS, |e| e.status)
}

/// Connects a client with `options`, reads all of the server's memory and checks it.
fn reads_everything(options: &[(&str, &str)], name: &str, mem: usize, len: usize) -> Engine {
    let c = engine("127.0.0.1", options);
    c.connect(name, T).unwrap();
    let local = alloc(len, 9);
    c.register_mem(local, len, MemType::Host, no_vouch).unwrap();
    assert_eq!(xfer(&c, name, TransferOp::Read, local, mem, len), ADXL_SUCCESS);
    assert_eq!(sum(local, len), sum(mem, len));
    c
}

/// Every warning logged in this process (a logger of our own is installed on first use).
fn warnings() -> &'static std::sync::Mutex<Vec<String>> {
    static SEEN: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    struct Capture;
    impl log::Log for Capture {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            m.level() <= log::Level::Warn
        }
        fn log(&self, r: &log::Record<'_>) {
            if self.enabled(r.metadata()) {
                warnings().lock().unwrap().push(r.args().to_string());
            }
        }
        fn flush(&self) {}
    }
    SEEN.get_or_init(|| {
        let _ = log::set_logger(&Capture);
        log::set_max_level(log::LevelFilter::Warn);
        std::sync::Mutex::new(Vec::new())
    })
}

fn refused(options: &[(&str, &str)], name: &str) -> String {
    let c = engine("127.0.0.1", options);
    let e = c.connect(name, T).unwrap_err();
    assert_eq!(e.status, ADXL_FAILED, "{e:?}");
    e.message
}

// ---- the shared secret ----

#[test]
fn the_same_secret_on_both_sides_connects_over_tcp_and_on_the_same_host() {
    let len = 16 << 20; // large enough to be striped over two connections of the link
    let (_s, name, mem) = server(&[("adxl.Secret", SECRET)], len);
    let tcp = reads_everything(&[("Secret", SECRET), ("adxl.Transport", "tcp")], &name, mem, len);
    let n = tcp.counters();
    assert_eq!((n.tcp_calls, n.direct_calls), (1, 0));
    // Writes too, from several threads (each opens its own authenticated connection).
    std::thread::scope(|scope| {
        for k in 0..4 {
            let (tcp, name) = (&tcp, &name);
            scope.spawn(move || {
                let piece = alloc(4096, 100 + k as u64);
                tcp.register_mem(piece, 4096, MemType::Host, no_vouch).unwrap();
                let at = mem + k * 4096;
                assert_eq!(xfer(tcp, name, TransferOp::Write, piece, at, 4096), ADXL_SUCCESS);
                assert_eq!(sum(at, 4096), sum(piece, 4096));
            });
        }
    });
    let same_host = reads_everything(&[("adxl.Secret", SECRET), ("adxl.Transport", "shm")], &name, mem, len);
    assert_eq!(same_host.counters().direct_calls, 1);
}

#[test]
fn a_server_with_a_secret_refuses_clients_without_it_and_keeps_serving() {
    let len = 1 << 20;
    warnings();
    let (_s, name, mem) = server(&[("adxl.Secret", SECRET)], len);
    for _ in 0..3 {
        let why = refused(&[], &name);
        assert!(why.contains("authentication failed") && why.contains("requires the shared secret"), "{why}");
        let why = refused(&[("adxl.Secret", "a different secret, long enough")], &name);
        assert!(why.contains("adxl.Secret differs"), "{why}");
        let why = refused(&[("adxl.Secret", "a different secret, long enough"), ("Transport", "shm")], &name);
        assert!(why.contains("adxl.Secret differs"), "{why}");
    }
    // The server warned about each, naming the peer's address.
    let mine: Vec<String> = warnings()
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.starts_with(&format!("{name}: connection from 127.0.0.1:")))
        .cloned()
        .collect();
    assert_eq!(mine.len(), 9, "{mine:?}");
    assert!(mine.iter().all(|w| w.contains("refused")), "{mine:?}");
    reads_everything(&[("adxl.Secret", SECRET)], &name, mem, len);
}

#[test]
fn a_client_with_a_secret_refuses_a_server_without_one() {
    let (_s, name, _) = server(&[], 4096);
    let why = refused(&[("adxl.Secret", SECRET)], &name);
    assert!(why.contains("has no shared secret"), "{why}");
    // The server serves clients without a secret as before.
    let (_s, name, mem) = server(&[], 4096);
    reads_everything(&[], &name, mem, 4096);
}

/// A fake server on a thread: accepts one connection and runs `script` on it.
fn fake_server(script: impl FnOnce(TcpStream) + Send + 'static) -> (String, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let name = l.local_addr().unwrap().to_string();
    let t = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(WAIT)).unwrap();
        script(s)
    });
    (name, t)
}

fn frame(s: &mut TcpStream) -> Option<Message> {
    Message::read_from(s).ok()
}

#[test]
fn a_server_that_cannot_prove_the_secret_is_refused_before_hello() {
    let accept_without_proof = |mut s: TcpStream| {
        assert!(matches!(frame(&mut s), Some(Message::Auth { .. })));
        let ack = Message::HelloAck {
            status: 0,
            name: "fake".into(),
            regions: vec![],
            message: String::new(),
            host: None,
        };
        s.write_all(&ack.encode()).unwrap();
        assert!(frame(&mut s).is_none(), "the client went on after an unproven HELLO_ACK");
    };
    let wrong_proof = |mut s: TcpStream| {
        assert!(matches!(frame(&mut s), Some(Message::Auth { .. })));
        let challenge = Message::AuthChallenge { name: "fake".into(), nonce: [5; NONCE_LEN] };
        s.write_all(&challenge.encode()).unwrap();
        assert!(matches!(frame(&mut s), Some(Message::AuthProof { .. })));
        s.write_all(&Message::AuthProof { mac: [0; MAC_LEN] }.encode()).unwrap();
        // The client closes without saying HELLO (so without revealing its memory).
        assert!(frame(&mut s).is_none(), "the client sent HELLO to an unproven server");
    };
    let scripts: [Box<dyn FnOnce(TcpStream) + Send>; 2] =
        [Box::new(accept_without_proof), Box::new(wrong_proof)];
    for script in scripts {
        let (name, fake) = fake_server(script);
        let c = engine("127.0.0.1", &[("adxl.Secret", SECRET)]);
        let mem = alloc(4096, 3);
        c.register_mem(mem, 4096, MemType::Host, no_vouch).unwrap();
        let e = c.connect(&name, T).unwrap_err();
        assert_eq!(e.status, ADXL_FAILED, "{e:?}");
        c.finalize();
        fake.join().unwrap();
    }
}

/// A relay between an engine and `target` that records what the engine sent.
fn recorder(target: SocketAddr) -> (String, JoinHandle<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let name = l.local_addr().unwrap().to_string();
    let t = std::thread::spawn(move || {
        let (mut client, _) = l.accept().unwrap();
        let mut server = TcpStream::connect(target).unwrap();
        let (mut back_from, mut back_to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
        let back = std::thread::spawn(move || {
            let _ = std::io::copy(&mut back_from, &mut back_to);
            let _ = back_to.shutdown(Shutdown::Write);
        });
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = client.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
            server.write_all(&buf[..n]).unwrap();
        }
        let _ = server.shutdown(Shutdown::Write);
        back.join().unwrap();
        seen
    });
    (name, t)
}

#[test]
fn a_replayed_handshake_is_refused() {
    let (_s, name, mem) = server(&[("adxl.Secret", SECRET)], 4096);
    let (via, recorded) = recorder(addr_of(&name));
    let c = engine("127.0.0.1", &[("adxl.Secret", SECRET), ("adxl.Transport", "tcp")]);
    c.connect(&via, T).unwrap();
    let local = alloc(4096, 0);
    assert_eq!(xfer(&c, &via, TransferOp::Read, local, mem, 4096), ADXL_SUCCESS);
    c.disconnect(&via, T).unwrap();
    let captured = recorded.join().unwrap();
    assert!(!captured.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()), "the secret went on the wire");
    // The same bytes again, on a new connection: the server's nonce is new, so the recorded
    // proof is wrong; the server says nothing of its memory.
    let mut raw = TcpStream::connect(addr_of(&name)).unwrap();
    raw.set_read_timeout(Some(WAIT)).unwrap();
    raw.write_all(&captured).unwrap();
    assert!(matches!(frame(&mut raw), Some(Message::AuthChallenge { .. })));
    match frame(&mut raw) {
        Some(Message::HelloAck { status, regions, host, .. }) => {
            assert_eq!((status, regions.len(), host), (ADXL_FAILED, 0, None));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(frame(&mut raw).is_none(), "the connection stayed open");
    // A proof before any challenge, or requests without a handshake (alone, after a HELLO, in
    // place of the proof): never a byte of memory, never a COMPLETE.
    let read = Message::Read {
        id: 1,
        descs: vec![Desc { remote_addr: mem as u64, len: 8, local_kind: MemKind::Host }],
    };
    let notify = Message::Notify { id: 2, name: "n".into(), msg: "m".into() };
    let hello = Message::Hello { name: "127.0.0.1".into(), regions: vec![], host: None };
    let auth = Message::Auth { name: "127.0.0.1".into(), nonce: [1; NONCE_LEN] };
    let attempts = [
        vec![Message::AuthProof { mac: [7; MAC_LEN] }],
        vec![read.clone()],
        vec![notify.clone()],
        vec![hello, read.clone(), notify],
        vec![auth, read],
    ];
    for attempt in attempts {
        let mut raw = TcpStream::connect(addr_of(&name)).unwrap();
        raw.set_read_timeout(Some(WAIT)).unwrap();
        let bytes: Vec<u8> = attempt.iter().flat_map(Message::encode).collect();
        raw.write_all(&bytes).unwrap();
        loop {
            match Message::read_from(&mut raw) {
                Ok(m) => assert!(
                    matches!(
                        m,
                        Message::AuthChallenge { .. } | Message::HelloAck { status: ADXL_FAILED, .. }
                    ),
                    "{attempt:?} got {m:?}"
                ),
                Err(WireError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    panic!("{attempt:?}: the connection was left open")
                }
                Err(_) => break,
            }
        }
    }
    reads_everything(&[("adxl.Secret", SECRET)], &name, mem, 4096);
}

/// What the same-host socket of this process's engine on `port` answers to `first`: the kinds
/// of the packets it sends until it closes (or DONE).
fn same_host_answer(port: u16, first: &[u8; 40]) -> Vec<u32> {
    use ascendless::sys::socket::Conn;
    let socket = format!("ascendless-adxl/{}/{port}", std::process::id());
    let conn = Conn::connect(socket.as_bytes(), WAIT).unwrap();
    conn.send(first, &[]).unwrap();
    conn.set_read_timeout(Some(WAIT)).unwrap();
    let mut kinds = Vec::new();
    let mut buf = [0u8; 40];
    while let Ok(Some(_)) = conn.recv(&mut buf, 4) {
        kinds.push(u32::from_le_bytes(buf[..4].try_into().unwrap()));
        if kinds.last() == Some(&3) {
            break;
        }
    }
    kinds
}

#[test]
fn same_host_tickets_are_one_time_and_bound_to_the_announced_pid() {
    let (_s, name, _) = server(&[], 4096);
    let (addr, port) = (addr_of(&name), addr_of(&name).port());
    // A ticket issued to another pid is refused here.
    assert_eq!(same_host_answer(port, &ticket_packet(addr, std::process::id() + 1)), Vec::<u32>::new());
    // Ours works once: the registration (ADD), then DONE; a second use is refused.
    let mine = ticket_packet(addr, std::process::id());
    assert_eq!(same_host_answer(port, &mine), [1, 3]);
    assert_eq!(same_host_answer(port, &mine), Vec::<u32>::new());
}

// ---- registered memory only ----

#[test]
fn registered_remote_access_refuses_what_the_server_did_not_register() {
    for transport in ["tcp", "shm"] {
        let len = 8192;
        let (s, name, mem) = server(&[("adxl.RemoteAccess", "registered")], len);
        let outside = alloc(len, 2); // the server's memory, not registered
        let before = sum(outside, len);
        let c = engine("127.0.0.1", &[("adxl.Transport", transport)]);
        c.connect(&name, T).unwrap();
        let local = alloc(len, 5);
        c.register_mem(local, len, MemType::Host, no_vouch).unwrap();
        for op in [TransferOp::Read, TransferOp::Write] {
            assert_eq!(xfer(&c, &name, op, local, outside, 4096), ADXL_PARAM_INVALID, "{transport} {op:?}");
            // Straddling the end of the registration.
            assert_eq!(xfer(&c, &name, op, local, mem + len - 100, 200), ADXL_PARAM_INVALID, "{transport}");
        }
        assert_eq!(sum(outside, len), before, "an unregistered range was written");
        // Registered ranges work; so does the client's own unregistered memory as the source.
        assert_eq!(xfer(&c, &name, TransferOp::Read, local, mem, len), ADXL_SUCCESS);
        assert_eq!(sum(local, len), sum(mem, len));
        let own = alloc(4096, 6);
        assert_eq!(xfer(&c, &name, TransferOp::Write, own, mem, 4096), ADXL_SUCCESS);
        assert_eq!(sum(mem, 4096), sum(own, 4096));
        let e = c
            .transfer_sync(
                &name,
                TransferOp::Read,
                &[TransferDesc { local_addr: local, remote_addr: outside, len: 8 }],
                T,
                no_vouch,
            )
            .unwrap_err();
        assert!(e.message.contains("adxl.RemoteAccess=registered"), "{e:?}");
        drop(s);
    }
}

#[test]
fn the_default_still_relays_to_unregistered_memory() {
    let (_s, name, _) = server(&[], 4096);
    let outside = alloc(4096, 2);
    let c = engine("127.0.0.1", &[("adxl.Transport", "tcp")]);
    c.connect(&name, T).unwrap();
    let local = alloc(4096, 0);
    assert_eq!(xfer(&c, &name, TransferOp::Read, local, outside, 4096), ADXL_SUCCESS);
    assert_eq!(sum(local, 4096), sum(outside, 4096));
}

#[test]
fn bad_values_are_param_invalid() {
    for (k, v) in [("adxl.Secret", ""), ("adxl.RemoteAccess", "none"), ("RemoteAccess", "")] {
        let e = Engine::new().initialize("127.0.0.1", &[(k, v)]).unwrap_err();
        assert_eq!(e.status, ADXL_PARAM_INVALID, "{k}={v}");
        assert!(e.message.contains(k), "{e:?}");
    }
}

// ---- another process, configured by the environment ----

/// The child: one engine, driven by commands (replies start with a status).
fn child_main() {
    let e = Engine::new();
    let out = std::io::stdout();
    for line in std::io::stdin().lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> usize { w[i].parse().unwrap() };
        let status = |r: Result<(), ascendless::error::EngineError>| r.err().map_or(0, |e| e.status);
        let reply = match w.as_slice() {
            ["pid"] => format!("0 {}", std::process::id()),
            ["init", name, opts @ ..] => {
                let pairs: Vec<(&str, &str)> = opts.iter().map(|o| o.split_once('=').unwrap()).collect();
                format!("{}", status(e.initialize(name, &pairs)))
            }
            ["alloc", _, _] => format!("0 {}", alloc(n(1), n(2) as u64)),
            ["reg", _, _] => match e.register_mem(n(1), n(2), MemType::Host, no_vouch) {
                Ok(h) => format!("0 {h}"),
                Err(err) => format!("{}", err.status),
            },
            ["connect", name] => format!("{}", status(e.connect(name, T))),
            ["read", name, _, _, _] => format!("{}", xfer(&e, name, TransferOp::Read, n(2), n(3), n(4))),
            ["sum", _, _] => format!("0 {}", sum(n(1), n(2))),
            ["exit"] => break,
            _ => panic!("unknown command {line:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

#[test]
fn the_environment_sets_the_secret_and_registered_access_for_another_process() {
    let len = 1 << 20;
    let port = free_port();
    let name = format!("127.0.0.1:{port}");
    let env = [("ASCENDLESS_ADXL_SECRET", SECRET), ("ASCENDLESS_ADXL_REMOTE_ACCESS", "registered")];
    let mut child = Scripted::spawn(ROLE, &env);
    assert_eq!(child.ask(&format!("init {name}")), [0]);
    let mem = child.value(&format!("alloc {len} 1"));
    let outside = child.value(&format!("alloc {len} 2")) as usize;
    child.value(&format!("reg {mem} {len}"));
    let mem = mem as usize;
    let remote_sum = child.value(&format!("sum {mem} {len}"));

    // Without the secret, or with another: refused. With it: served, over TCP and through
    // shared memory with the child (which hands its memfds only to a ticket holder).
    refused(&[], &name);
    refused(&[("adxl.Secret", "not the secret of the child engine")], &name);
    for transport in ["tcp", "shm"] {
        let c = engine("127.0.0.1", &[("adxl.Secret", SECRET), ("adxl.Transport", transport)]);
        c.connect(&name, T).unwrap();
        let local = alloc(len, 0);
        c.register_mem(local, len, MemType::Host, no_vouch).unwrap();
        assert_eq!(xfer(&c, &name, TransferOp::Read, local, mem, len), ADXL_SUCCESS);
        assert_eq!(sum(local, len), remote_sum);
        let n = c.counters();
        let moved = if transport == "tcp" { n.tcp_calls } else { n.direct_calls };
        assert_eq!(moved, 1, "{transport}: {n:?}");
        assert_eq!(xfer(&c, &name, TransferOp::Read, local, outside, 4096), ADXL_PARAM_INVALID);
    }

    // The child's same-host socket gives nothing to a process without a ticket.
    let pid = child.value("pid");
    let socket = format!("ascendless-adxl/{pid}/{port}");
    use ascendless::sys::socket::Conn;
    for first in [None, Some([0u8; 40])] {
        let conn = Conn::connect(socket.as_bytes(), WAIT).unwrap();
        if let Some(packet) = first {
            conn.send(&packet, &[]).unwrap();
        }
        conn.set_read_timeout(Some(WAIT)).unwrap();
        let mut buf = [0u8; 64];
        match conn.recv(&mut buf, 4) {
            Ok(None) => {}
            Ok(Some(m)) => panic!("the same-host socket sent {} bytes to a peer without a ticket", m.len),
            Err(e) => assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock, "the socket was not closed"),
        }
    }

    // The child as a client: its secret comes from the environment too.
    let (_s, mine, here) = server(&[("adxl.Secret", SECRET)], 4096);
    assert_eq!(child.ask(&format!("connect {mine}")), [0]);
    let into = child.value("alloc 4096 0");
    child.value(&format!("reg {into} 4096"));
    assert_eq!(child.ask(&format!("read {mine} {into} {here} 4096")), [0]);
    assert_eq!(child.value(&format!("sum {into} 4096")), sum(here, 4096));
    let (_s, open, _) = server(&[], 4096);
    assert_eq!(child.ask(&format!("connect {open}")), [ADXL_FAILED as u64]);
    child.finish();
}

#[test]
fn a_bad_variable_fails_initialize_in_another_process() {
    for env in [("ASCENDLESS_ADXL_SECRET", ""), ("ASCENDLESS_ADXL_REMOTE_ACCESS", "everything")] {
        let mut child = Scripted::spawn(ROLE, &[env]);
        assert_eq!(child.ask("init 127.0.0.1"), [ADXL_PARAM_INVALID as u64], "{env:?}");
        child.finish();
    }
    // Bytes that are not UTF-8 are refused too, not taken as unset (the harness passes text
    // only, so this child is started by hand).
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1", "--quiet"])
        .env(ROLE, "1")
        .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
        .env("ASCENDLESS_ADXL_SECRET", std::ffi::OsStr::from_bytes(b"secret-\xff-bytes-of-some-length"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(b"init 127.0.0.1\nexit\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let reply = text.lines().find(|l| l.parse::<u32>().is_ok());
    assert_eq!(reply, Some(ADXL_PARAM_INVALID.to_string().as_str()), "{text}");
}
