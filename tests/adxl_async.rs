//! TransferAsync, GetTransferStatus, SendNotify/GetNotifies and AutoConnect between engines in
//! real processes, through the native C API. As in `tests/adxl_tcp.rs`, each engine is this
//! test binary re-run with a role variable, obeying one command per line on standard input and
//! answering one line of numbers (the status first). Engines bind only to 127.0.0.1.

use std::ffi::{CString, c_void};
use std::io::{BufRead, Write};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

mod common;

use ascendless::error::engine_status::*;
use ascendless::ffi::engine::*;
use common::{Scripted, checksum, pattern};

const ROLE: &str = "ASCENDLESS_ADXL_ASYNC_CHILD";
const MIB: usize = 1 << 20;

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Polls `req` until it is done: (return code, status value).
fn poll(engine: AscendlessEngine, req: *mut c_void) -> (u32, i32) {
    let t = Instant::now();
    loop {
        let mut st = -1;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { ascendless_engine_get_transfer_status(engine, req, &mut st) };
        if rc != 0 || st != 0 || t.elapsed() > Duration::from_secs(30) {
            return (rc, st);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn child_main() {
    let mut engine: AscendlessEngine = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { ascendless_engine_create(&mut engine) }, ADXL_SUCCESS);
    let out = std::io::stdout();
    let mut pending: Vec<*mut c_void> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> usize { w[i].parse().unwrap() };
        let reply = match w.as_slice() {
            ["init", name, opts @ ..] => {
                let pairs: Vec<(CString, CString)> = opts
                    .iter()
                    .map(|o| o.split_once('=').unwrap())
                    .map(|(k, v)| (cstr(k), cstr(v)))
                    .collect();
                let keys: Vec<_> = pairs.iter().map(|p| p.0.as_ptr()).collect();
                let values: Vec<_> = pairs.iter().map(|p| p.1.as_ptr()).collect();
                let name = cstr(name);
                // SAFETY: valid strings and arrays of `len` strings.
                let rc = unsafe {
                    ascendless_engine_initialize(
                        engine,
                        name.as_ptr(),
                        keys.as_ptr(),
                        values.as_ptr(),
                        keys.len(),
                    )
                };
                format!("{rc}")
            }
            // host LEN SEED: leaked host memory holding the pattern, registered (MEM_HOST).
            ["host", _, _] => {
                let v = Box::leak(pattern(n(1), n(2) as u64).into_boxed_slice());
                let mut h = null_mut();
                // SAFETY: leaked memory stays valid.
                let rc = unsafe {
                    ascendless_engine_register_mem(engine, v.as_mut_ptr() as usize, n(1), 1, &mut h)
                };
                format!("{rc} {}", v.as_mut_ptr() as usize)
            }
            // sum ADDR LEN
            ["sum", _, _] => {
                // SAFETY: a range of memory this child leaked.
                let s = unsafe { std::slice::from_raw_parts(n(1) as *const u8, n(2)) };
                format!("0 {}", checksum(s))
            }
            ["connect", name] => {
                let name = cstr(name);
                // SAFETY: a valid string.
                format!("{}", unsafe { ascendless_engine_connect(engine, name.as_ptr(), 3000) })
            }
            // async NAME OP LOCAL REMOTE LEN COUNT: COUNT requests in flight at once, each of
            // LEN/COUNT bytes; replies status, completed, failed, not-connected, milliseconds.
            ["async", name, ..] => {
                let name = cstr(name);
                let (op, local, remote, len, count) = (n(2) as i32, n(3), n(4), n(5), n(6));
                let piece = len / count;
                let t = Instant::now();
                let mut reqs = Vec::new();
                let mut rc = 0;
                for i in 0..count {
                    let d = AscendlessTransferDesc {
                        local_addr: local + i * piece,
                        remote_addr: remote + i * piece,
                        len: piece,
                    };
                    let mut req = null_mut();
                    // SAFETY: the local range is this child's leaked memory.
                    rc = unsafe {
                        ascendless_engine_transfer_async(engine, name.as_ptr(), op, &d, 1, &mut req)
                    };
                    if rc != 0 {
                        break;
                    }
                    reqs.push(req);
                }
                let (mut done, mut failed, mut gone) = (0, 0, 0);
                for r in reqs {
                    match poll(engine, r) {
                        (0, 1) => done += 1,
                        (ADXL_NOT_CONNECTED, 3) => gone += 1,
                        _ => failed += 1,
                    }
                }
                format!("{rc} {done} {failed} {gone} {}", t.elapsed().as_millis())
            }
            // submit NAME OP LOCAL REMOTE LEN COUNT: as async, without waiting (see "wait").
            ["submit", name, ..] => {
                let name = cstr(name);
                let (op, local, remote, len, count) = (n(2) as i32, n(3), n(4), n(5), n(6));
                let piece = len / count;
                let mut rc = 0;
                for i in 0..count {
                    let d = AscendlessTransferDesc {
                        local_addr: local + i * piece,
                        remote_addr: remote + i * piece,
                        len: piece,
                    };
                    let mut req = null_mut();
                    // SAFETY: the local range is this child's leaked memory.
                    rc = unsafe {
                        ascendless_engine_transfer_async(engine, name.as_ptr(), op, &d, 1, &mut req)
                    };
                    if rc != 0 {
                        break;
                    }
                    pending.push(req);
                }
                format!("{rc}")
            }
            // wait: polls every submitted request; status, completed, others (FAILED, either
            // status code).
            ["wait"] => {
                let all = std::mem::take(&mut pending);
                let results: Vec<(u32, i32)> = all.iter().map(|&r| poll(engine, r)).collect();
                let done = results.iter().filter(|&&x| x == (0, 1)).count();
                let failed = results
                    .iter()
                    .filter(|&&(rc, st)| st == 3 && (rc == 0 || rc == ADXL_NOT_CONNECTED))
                    .count();
                format!("0 {done} {failed}")
            }
            // notify NAME ID TIMEOUT: a notify named ID (a number), message "m".
            ["notify", name, id, t] => {
                let (name, id) = (cstr(name), cstr(id));
                let msg = cstr("m");
                // SAFETY: valid strings.
                let rc = unsafe {
                    ascendless_engine_send_notify(
                        engine,
                        name.as_ptr(),
                        id.as_ptr(),
                        msg.as_ptr(),
                        t.parse().unwrap(),
                    )
                };
                format!("{rc}")
            }
            // notifies: status, count, then the names (numbers).
            ["notifies"] => {
                let mut p = null_mut();
                let mut count = 0;
                // SAFETY: valid out-pointers; the array is freed below as documented.
                unsafe {
                    let rc = ascendless_engine_get_notifies(engine, &mut p, &mut count);
                    let names: Vec<String> = (0..count)
                        .map(|i| std::ffi::CStr::from_ptr((*p.add(i)).name).to_str().unwrap().to_owned())
                        .collect();
                    ascendless_notifies_free(p, count);
                    format!("{rc} {count} {}", names.join(" "))
                }
            }
            ["cap", _] => {
                let mut v = -1;
                // SAFETY: a valid out-pointer.
                let rc = unsafe { ascendless_get_capability(n(1) as i32, &mut v) };
                format!("{rc} {v}")
            }
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
    assert_eq!(ascendless_engine_destroy(engine), ADXL_SUCCESS);
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

/// An engine in a child process.
struct Engine(Scripted);

impl std::ops::Deref for Engine {
    type Target = Scripted;
    fn deref(&self) -> &Scripted {
        &self.0
    }
}

impl std::ops::DerefMut for Engine {
    fn deref_mut(&mut self) -> &mut Scripted {
        &mut self.0
    }
}

impl Engine {
    fn named(name: &str, options: &str, env: &[(&str, &str)]) -> Engine {
        let mut e = Engine(Scripted::spawn(ROLE, env));
        assert_eq!(e.ask(&format!("init {name} {options}"))[0], 0);
        e
    }
}

fn server_name() -> String {
    format!("127.0.0.1:{}", common::free_port())
}

const READ: u32 = 0;
const WRITE: u32 = 1;

#[test]
fn hundreds_of_requests_to_several_peers_each_verified() {
    for transport in ["tcp", "auto"] {
        let env = [("ASCENDLESS_TRANSPORT", transport)];
        let len = 4 * MIB;
        let mut client = Engine::named("127.0.0.1", "", &env);
        let local = client.value(&format!("host {len} 0"));
        let mut peers = Vec::new();
        for seed in 1..=3u64 {
            let name = server_name();
            let mut p = Engine::named(&name, "", &env);
            let remote = p.value(&format!("host {len} {seed}"));
            peers.push((name, p, remote, seed));
        }
        for (name, _, remote, seed) in &peers {
            assert_eq!(client.ask(&format!("connect {name}"))[0], 0);
            let r = client.ask(&format!("async {name} {READ} {local} {remote} {len} 256"));
            assert_eq!(&r[..4], &[0, 256, 0, 0], "{transport}: {r:?}");
            assert_eq!(client.value(&format!("sum {local} {len}")), checksum(&pattern(len, *seed)));
        }
        // WRITE back to every peer, all in flight together per peer.
        for (name, p, remote, _) in &mut peers {
            let r = client.ask(&format!("async {name} {WRITE} {local} {remote} {len} 64"));
            assert_eq!(&r[..4], &[0, 64, 0, 0], "{transport}: {r:?}");
            assert_eq!(p.value(&format!("sum {remote} {len}")), checksum(&pattern(len, 3)));
        }
    }
}

#[test]
fn a_notify_after_a_transfer_arrives_after_its_data() {
    let name = server_name();
    let len = 16 * MIB;
    let mut decode = Engine::named(&name, "", &[]);
    let remote = decode.value(&format!("host {len} 0"));
    let mut prefill = Engine::named("127.0.0.1", "", &[("ASCENDLESS_TRANSPORT", "tcp")]);
    let local = prefill.value(&format!("host {len} 7"));
    assert_eq!(prefill.ask(&format!("notify {name} 1 1000"))[0], ADXL_NOT_CONNECTED as u64);
    assert_eq!(prefill.ask(&format!("connect {name}"))[0], 0);
    // The requests are submitted and not polled; the notify follows at once. Once the decode
    // side sees the notify, every byte must be there.
    assert_eq!(prefill.ask(&format!("submit {name} {WRITE} {local} {remote} {len} 16"))[0], 0);
    assert_eq!(prefill.ask(&format!("notify {name} 42 10000"))[0], 0);
    let got = decode.ask("notifies");
    assert_eq!(&got[..3], &[0, 1, 42]);
    assert_eq!(decode.value(&format!("sum {remote} {len}")), checksum(&pattern(len, 7)));
    assert_eq!(decode.ask("notifies")[..2], [0, 0]);
    assert_eq!(prefill.ask("wait")[..3], [0, 16, 0]);
}

#[test]
fn a_peer_killed_mid_request_fails_it_promptly() {
    let name = server_name();
    let len = 64 * MIB;
    let env = [("ASCENDLESS_TRANSPORT", "tcp")];
    let mut server = Engine::named(&name, "", &env);
    let remote = server.value(&format!("host {len} 1"));
    let mut client = Engine::named("127.0.0.1", "", &env);
    let local = client.value(&format!("host {len} 0"));
    assert_eq!(client.ask(&format!("connect {name}"))[0], 0);
    assert_eq!(client.ask(&format!("submit {name} {READ} {local} {remote} {len} 64"))[0], 0);
    let _ = server.child.kill();
    // Requests submitted just after the death, before anyone noticed it, fail as well.
    assert_eq!(client.ask(&format!("submit {name} {READ} {local} {remote} {len} 64"))[0], 0);
    let t = Instant::now();
    let r = client.ask("wait");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(r[0], 0);
    // Each request is COMPLETED or FAILED (with SUCCESS or NOT_CONNECTED), none hangs.
    assert_eq!(r[1] + r[2], 128, "{r:?}");
    assert!(r[2] > 0, "no request failed: {r:?}");
}

#[test]
fn auto_connect_reaches_a_restarted_peer() {
    let name = server_name();
    let len = MIB;
    let env = [("ASCENDLESS_TRANSPORT", "tcp")];
    let mut client = Engine::named("127.0.0.1", "AutoConnect=1", &env);
    assert_eq!(client.ask("cap 0")[..2], [0, 1]);
    let local = client.value(&format!("host {len} 0"));
    let mut server = Engine::named(&name, "", &env);
    let remote = server.value(&format!("host {len} 5"));
    let r = client.ask(&format!("async {name} {READ} {local} {remote} {len} 8"));
    assert_eq!(&r[..4], &[0, 8, 0, 0]);
    assert_eq!(client.ask(&format!("notify {name} 1 1000"))[0], 0);
    drop(server);
    // The heartbeat drops the dead peer's link; a new engine under the same name is reached.
    std::thread::sleep(Duration::from_millis(1500));
    let mut server = Engine::named(&name, "", &env);
    let remote = server.value(&format!("host {len} 6"));
    let r = client.ask(&format!("async {name} {READ} {local} {remote} {len} 8"));
    assert_eq!(&r[..4], &[0, 8, 0, 0], "{r:?}");
    assert_eq!(client.value(&format!("sum {local} {len}")), checksum(&pattern(len, 6)));
    assert_eq!(client.ask(&format!("notify {name} 2 1000"))[0], 0);
    assert_eq!(server.ask("notifies")[..3], [0, 1, 2]);
}
