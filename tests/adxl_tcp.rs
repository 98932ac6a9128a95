//! ADXL engines in real processes over TCP (engines forced to it with `ASCENDLESS_TRANSPORT=tcp`
//! unless a test says otherwise) and, at the end, on the same-host path with the default
//! transport, through the native C API. Each engine is this
//! test binary re-run with a role variable; it obeys one command per line on standard input
//! and answers one line (the status, then any values), so each test scripts its engines step
//! by step. Engines bind only to 127.0.0.1, on ports the system hands out.

use std::ffi::{CString, c_void};
use std::io::{BufRead, Write};
use std::process::Command;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

mod common;

use ascendless::error::engine_status::*;
use ascendless::ffi::acl_rt::device::aclrtSetDevice;
use ascendless::ffi::acl_rt::memory::{aclrtFree, aclrtFreeHost, aclrtMalloc, aclrtMallocHost, aclrtMemcpy};
use ascendless::ffi::engine::*;
use common::{Scripted, checksum, pattern};

const ROLE: &str = "ASCENDLESS_ADXL_TEST_CHILD";
const MIB: usize = 1 << 20;

// ---- the child: one engine ----

/// Copies between host and any memory (device memory included) with `ACL_MEMCPY_DEFAULT`.
fn memcpy(dst: usize, src: usize, len: usize) {
    // SAFETY: both ranges are memory this child allocated, `len` bytes long.
    let rc = unsafe { aclrtMemcpy(dst as *mut c_void, len, src as *const c_void, len, 4) };
    assert_eq!(rc, 0);
}

fn child_main() {
    assert_eq!(aclrtSetDevice(0), 0);
    let mut engine: AscendlessEngine = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { ascendless_engine_create(&mut engine) }, ADXL_SUCCESS);
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> usize { w[i].parse().unwrap() };
        let reply = match w.as_slice() {
            ["pid"] => format!("0 {}", std::process::id()),
            ["init", name, opts @ ..] => {
                let pairs: Vec<(CString, CString)> = opts
                    .iter()
                    .map(|o| o.split_once('=').unwrap())
                    .map(|(k, v)| (CString::new(k).unwrap(), CString::new(v).unwrap()))
                    .collect();
                let keys: Vec<_> = pairs.iter().map(|p| p.0.as_ptr()).collect();
                let values: Vec<_> = pairs.iter().map(|p| p.1.as_ptr()).collect();
                let name = CString::new(*name).unwrap();
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
            ["finalize"] => format!("{}", ascendless_engine_finalize(engine)),
            ["host", _, _] => {
                let v = Box::leak(pattern(n(1), n(2) as u64).into_boxed_slice());
                format!("0 {}", v.as_mut_ptr() as usize)
            }
            ["device", _, _] => {
                let mut p = null_mut();
                // SAFETY: a valid out-pointer.
                assert_eq!(unsafe { aclrtMalloc(&mut p, n(1), 0) }, 0);
                let data = pattern(n(1), n(2) as u64);
                memcpy(p as usize, data.as_ptr() as usize, data.len());
                format!("0 {}", p as usize)
            }
            ["pinned", _, _] => {
                let mut p = null_mut();
                // SAFETY: a valid out-pointer.
                assert_eq!(unsafe { aclrtMallocHost(&mut p, n(1)) }, 0);
                let data = pattern(n(1), n(2) as u64);
                memcpy(p as usize, data.as_ptr() as usize, data.len());
                format!("0 {}", p as usize)
            }
            // free ADDR DEVICE(0)|PINNED(1)
            ["free", _, _] => {
                let p = n(1) as *mut c_void;
                let rc = if n(2) == 0 { aclrtFree(p) } else { aclrtFreeHost(p) };
                format!("{rc}")
            }
            // Makes the kernel refuse other processes' process_vm_* on this one (EPERM for a
            // caller without CAP_SYS_PTRACE), as ptrace restrictions do.
            ["undumpable"] => {
                // SAFETY: prctl(PR_SET_DUMPABLE) takes integers only.
                let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
                format!("{rc}")
            }
            // Drops CAP_SYS_PTRACE from the effective set (a no-op for a process without it).
            ["noptrace"] => format!("{}", drop_ptrace_capability()),
            ["counters"] => {
                let mut c = AscendlessEngineCounters::default();
                // SAFETY: a valid out-pointer.
                let rc = unsafe { ascendless_engine_get_counters(engine, &mut c) };
                format!(
                    "{rc} {} {} {} {} {} {}",
                    c.direct_calls,
                    c.direct_bytes,
                    c.kernel_copy_calls,
                    c.kernel_copy_bytes,
                    c.tcp_calls,
                    c.tcp_bytes
                )
            }
            ["fill", _, _, _] => {
                let data = pattern(n(2), n(3) as u64);
                memcpy(n(1), data.as_ptr() as usize, data.len());
                "0".into()
            }
            ["sum", _, _] => {
                let mut data = vec![0u8; n(2)];
                memcpy(data.as_mut_ptr() as usize, n(1), data.len());
                format!("0 {}", checksum(&data))
            }
            ["reg", _, _, _] => {
                let mut h = null_mut();
                // SAFETY: the memory was leaked or allocated by this child and stays valid.
                let rc = unsafe { ascendless_engine_register_mem(engine, n(1), n(2), n(3) as i32, &mut h) };
                format!("{rc} {}", h as usize)
            }
            ["dereg", _] => format!("{}", ascendless_engine_deregister_mem(engine, n(1) as *mut c_void)),
            ["connect", name, t] | ["disconnect", name, t] => {
                let name = CString::new(*name).unwrap();
                let t: i32 = t.parse().unwrap();
                // SAFETY: a valid string.
                let rc = unsafe {
                    if w[0] == "connect" {
                        ascendless_engine_connect(engine, name.as_ptr(), t)
                    } else {
                        ascendless_engine_disconnect(engine, name.as_ptr(), t)
                    }
                };
                format!("{rc}")
            }
            // xfer NAME OP LOCAL REMOTE LEN COUNT TIMEOUT [REPEAT]: COUNT descriptors covering
            // LEN bytes; repeated until a failure or REPEAT times. Replies status, milliseconds.
            ["xfer", name, ..] => {
                let name = CString::new(*name).unwrap();
                let (op, local, remote, len, count) = (n(2) as i32, n(3), n(4), n(5), n(6));
                let timeout: i32 = w[7].parse().unwrap();
                let repeat = w.get(8).map_or(1, |r| r.parse().unwrap());
                let piece = len / count;
                let descs: Vec<AscendlessTransferDesc> = (0..count)
                    .map(|i| AscendlessTransferDesc {
                        local_addr: local + i * piece,
                        remote_addr: remote + i * piece,
                        len: piece,
                    })
                    .collect();
                let t = Instant::now();
                let mut rc = 0;
                for _ in 0..repeat {
                    // SAFETY: the local ranges are this child's memory.
                    rc = unsafe {
                        ascendless_engine_transfer_sync(
                            engine,
                            name.as_ptr(),
                            op,
                            descs.as_ptr(),
                            descs.len(),
                            timeout,
                        )
                    };
                    if rc != 0 {
                        break;
                    }
                }
                format!("{rc} {}", t.elapsed().as_millis())
            }
            // list NAME OP TIMEOUT LOCAL,REMOTE,LEN...: one call with these descriptors.
            ["list", name, op, timeout, descs @ ..] => {
                let name = CString::new(*name).unwrap();
                let descs: Vec<AscendlessTransferDesc> = descs
                    .iter()
                    .map(|d| {
                        let v: Vec<usize> = d.split(',').map(|x| x.parse().unwrap()).collect();
                        AscendlessTransferDesc { local_addr: v[0], remote_addr: v[1], len: v[2] }
                    })
                    .collect();
                // SAFETY: the local ranges are this child's memory.
                let rc = unsafe {
                    ascendless_engine_transfer_sync(
                        engine,
                        name.as_ptr(),
                        op.parse().unwrap(),
                        descs.as_ptr(),
                        descs.len(),
                        timeout.parse().unwrap(),
                    )
                };
                format!("{rc}")
            }
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
    assert_eq!(ascendless_engine_destroy(engine), ADXL_SUCCESS);
}

/// `capget`/`capset` (version 3: two 32-bit words per set).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn drop_ptrace_capability() -> i64 {
    const CAP_SYS_PTRACE: u32 = 19;
    let mut header = CapHeader { version: 0x2008_0522, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: a version-3 header and room for its two data words, as the kernel expects.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &raw mut header, data.as_mut_ptr()) };
    if rc != 0 {
        return rc;
    }
    data[0].effective &= !(1 << CAP_SYS_PTRACE);
    // SAFETY: as above; capset only reads them.
    unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) }
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
    if let Ok(role) = std::env::var(NETNS_ROLE) {
        netns_child(&role);
    }
}

// ---- two network namespaces ----

const NETNS_ROLE: &str = "ASCENDLESS_ADXL_NETNS_ROLE";
const NETNS_SERVER: &str = "10.77.0.2:26000";

/// Polls for `path` (written by the other engine) for up to 10 s.
fn wait_for(path: &std::path::Path) -> String {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return text;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never appeared", path.display());
}

/// One engine of the namespace test: "server:DIR" or "client:DIR". They meet through files in
/// DIR, as the vendor's sample publishes the server's address through a file.
fn netns_child(role: &str) {
    let (role, dir) = role.split_once(':').unwrap();
    let dir = std::path::Path::new(dir);
    let mut engine: AscendlessEngine = null_mut();
    let size = 4 * MIB;
    // SAFETY: valid out-pointers and strings; the memory is leaked, so it outlives the engine.
    unsafe {
        assert_eq!(ascendless_engine_create(&mut engine), 0);
        let me = CString::new(if role == "server" { NETNS_SERVER } else { "10.77.0.1" }).unwrap();
        assert_eq!(
            ascendless_engine_initialize(engine, me.as_ptr(), std::ptr::null(), std::ptr::null(), 0),
            0
        );
        let mem = Box::leak(pattern(size, if role == "server" { 1 } else { 0 }).into_boxed_slice());
        let addr = mem.as_mut_ptr() as usize;
        let mut h = null_mut();
        assert_eq!(ascendless_engine_register_mem(engine, addr, size, 1, &mut h), 0);
        if role == "server" {
            std::fs::write(dir.join("addr.tmp"), addr.to_string()).unwrap();
            std::fs::rename(dir.join("addr.tmp"), dir.join("addr")).unwrap();
            wait_for(&dir.join("done"));
            assert_eq!(checksum(mem), checksum(&pattern(size, 2)), "the client's WRITE did not land");
        } else {
            let remote: usize = wait_for(&dir.join("addr")).parse().unwrap();
            let server = CString::new(NETNS_SERVER).unwrap();
            assert_eq!(ascendless_engine_connect(engine, server.as_ptr(), 3000), 0);
            let descs: Vec<AscendlessTransferDesc> = (0..64)
                .map(|i| AscendlessTransferDesc {
                    local_addr: addr + i * (size / 64),
                    remote_addr: remote + i * (size / 64),
                    len: size / 64,
                })
                .collect();
            assert_eq!(
                ascendless_engine_transfer_sync(engine, server.as_ptr(), 0, descs.as_ptr(), 64, 5000),
                0
            );
            assert_eq!(checksum(mem), checksum(&pattern(size, 1)), "READ across namespaces");
            mem.copy_from_slice(&pattern(size, 2));
            assert_eq!(
                ascendless_engine_transfer_sync(engine, server.as_ptr(), 1, descs.as_ptr(), 64, 5000),
                0
            );
            // Another network namespace cannot reach the same-host socket: TCP, whatever the
            // transport (auto or tcp).
            let mut c = AscendlessEngineCounters::default();
            assert_eq!(ascendless_engine_get_counters(engine, &mut c), 0);
            assert_eq!((c.direct_calls, c.kernel_copy_calls, c.tcp_calls), (0, 0, 2), "{c:?}");
            std::fs::write(dir.join("done"), "1").unwrap();
        }
        assert_eq!(ascendless_engine_destroy(engine), 0);
    }
}

/// Builds two network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2) inside a user
/// namespace, runs the server engine in one and the client in the other, and exits with the
/// first failure.
const NETNS_SCRIPT: &str = r#"
set -eu
dir=$1 exe=$2
ip link set lo up
ip link add name va type veth peer name vb
ip addr add 10.77.0.1/24 dev va
ip link set va up
ASCENDLESS_ADXL_NETNS_ROLE="server:$dir" unshare -n sh -c '
    echo $$ > "$0/ns.pid"
    while [ ! -e "$0/go" ]; do sleep 0.01; done
    exec "$1" --exact child --nocapture --quiet' "$dir" "$exe" &
server=$!
while [ ! -s "$dir/ns.pid" ]; do sleep 0.01; done
pid=$(cat "$dir/ns.pid")
ip link set vb netns "$pid"
nsenter -t "$pid" -n sh -c 'ip link set lo up; ip addr add 10.77.0.2/24 dev vb; ip link set vb up'
touch "$dir/go"
ASCENDLESS_ADXL_NETNS_ROLE="client:$dir" "$exe" --exact child --nocapture --quiet
wait "$server"
"#;

// ---- the parent's side ----

/// An engine in a child process (TCP unless the test's environment says otherwise).
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
    fn start(env: &[(&str, &str)]) -> Engine {
        let mut all = vec![("ASCENDLESS_TRANSPORT", "tcp")];
        all.extend_from_slice(env);
        Engine(Scripted::spawn(ROLE, &all))
    }

    /// An engine initialised with `name` and options.
    fn named(name: &str, options: &str, env: &[(&str, &str)]) -> Engine {
        let mut e = Engine::start(env);
        assert_eq!(e.code(&format!("init {name} {options}")), 0);
        e
    }

    fn code(&mut self, command: &str) -> u32 {
        self.ask(command)[0] as u32
    }

    fn finish(self) {
        self.0.finish();
    }
}

use common::free_port;

fn server_name() -> String {
    format!("127.0.0.1:{}", free_port())
}

const READ: u32 = 0;
const WRITE: u32 = 1;
const DEVICE: u32 = 0;
const HOST: u32 = 1;

#[test]
fn device_server_host_client_read_then_write_in_batches_and_64_mib() {
    let name = server_name();
    let mut server = Engine::named(&name, "", &[("ASCENDLESS_STRICT_DEVICE_MEMORY", "1")]);
    let size = 64 * MIB;
    let remote = server.value(&format!("device {size} 1"));
    assert_eq!(server.code(&format!("reg {remote} {size} {DEVICE}")), 0);
    let mut client = Engine::named("127.0.0.1", "", &[]);
    let local = client.value(&format!("host {size} 2"));
    assert_eq!(client.code(&format!("reg {local} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    for (len, count) in [(4096, 1), (4 * MIB, 4096), (size, 1)] {
        let want = server.value(&format!("sum {remote} {len}"));
        let r = client.ask(&format!("xfer {name} {READ} {local} {remote} {len} {count} 10000"));
        assert_eq!(r[0], 0);
        eprintln!("READ of {count} x {} bytes: {} ms", len / count, r[1]);
        assert_eq!(client.value(&format!("sum {local} {len}")), want, "READ {count} x {}", len / count);
        assert_eq!(client.code(&format!("fill {local} {len} {}", count + 10)), 0);
        let want = client.value(&format!("sum {local} {len}"));
        assert_eq!(client.code(&format!("xfer {name} {WRITE} {local} {remote} {len} {count} 10000")), 0);
        assert_eq!(server.value(&format!("sum {remote} {len}")), want, "WRITE {count} x {}", len / count);
    }
    assert_eq!(client.code(&format!("disconnect {name} 1000")), 0);
    client.finish();
    server.finish();
}

#[test]
fn unregistered_memory_is_relayed_and_bad_addresses_fail_without_a_crash() {
    let name = server_name();
    let mut server = Engine::named(&name, "adxl.BufferPool=2:1", &[]);
    let plain = server.value(&format!("host {} 3", 3 * MIB));
    let mut client = Engine::named("127.0.0.1", "", &[]);
    let local = client.value(&format!("host {} 0", 3 * MIB));
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    // 3 MiB through a pool of 1 MiB buffers, both ways.
    let want = server.value(&format!("sum {plain} {}", 3 * MIB));
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {plain} {} 3 5000", 3 * MIB)), 0);
    assert_eq!(client.value(&format!("sum {local} {}", 3 * MIB)), want);
    client.code(&format!("fill {local} {} 9", MIB));
    let want = client.value(&format!("sum {local} {MIB}"));
    assert_eq!(client.code(&format!("xfer {name} {WRITE} {local} {plain} {MIB} 16 5000")), 0);
    assert_eq!(server.value(&format!("sum {plain} {MIB}")), want);
    // Addresses that are not mapped in the server: PARAM_INVALID, and the server lives on.
    for op in [READ, WRITE] {
        assert_eq!(client.code(&format!("xfer {name} {op} {local} 4096 {MIB} 4 5000")), ADXL_PARAM_INVALID);
    }
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {plain} 4096 1 5000")), 0);
    server.value("pid");
    // With the relay pool off, unregistered memory is PARAM_INVALID.
    let off = server_name();
    let mut strict = Engine::named(&off, "adxl.BufferPool=0:0", &[]);
    let plain = strict.value("host 4096 1");
    assert_eq!(client.code(&format!("connect {off} 1000")), 0);
    assert_eq!(client.code(&format!("xfer {off} {READ} {local} {plain} 4096 1 1000")), ADXL_PARAM_INVALID);
    client.finish();
    server.finish();
    strict.finish();
}

#[test]
fn every_error_case_of_the_spec_has_its_number() {
    let mut e = Engine::start(&[]);
    // Before Initialize.
    assert_eq!(e.code("connect 127.0.0.1:1 100"), ADXL_FAILED);
    assert_eq!(e.code("init localhost:1"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("init 127.0.0.1 adxl.Unknown=1"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("init 127.0.0.1 adxl.BufferPool=0:8"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("init 127.0.0.1 adxl.RdmaTrafficClass=3"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("init 127.0.0.1 adxl.RdmaServiceLevel=8"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("init 127.0.0.1 RdmaServiceLevel=7 AutoConnect=0 adxl.LocalCommRes={}"), 0);
    let name = server_name();
    let mut server = Engine::named(&name, "", &[]);
    let remote = server.value("host 4096 1");
    assert_eq!(server.code(&format!("reg {remote} 4096 {HOST}")), 0);
    let local = e.value("host 65536 0");
    assert_eq!(e.code(&format!("reg 0 4096 {HOST}")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("reg {} 4096 {HOST}", usize::MAX - 10)), ADXL_PARAM_INVALID);
    assert_eq!(e.code("dereg 0"), ADXL_PARAM_INVALID);
    assert_eq!(e.code("dereg 12345"), ADXL_SUCCESS);
    assert_eq!(e.code(&format!("connect {name} 0")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("connect 127.0.0.1:{} 500", free_port())), ADXL_FAILED);
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    assert_eq!(e.code(&format!("connect {} 200", mute.local_addr().unwrap())), ADXL_TIMEOUT);
    assert_eq!(e.code(&format!("xfer {name} {READ} {local} {remote} 4096 1 1000")), ADXL_NOT_CONNECTED);
    assert_eq!(e.code(&format!("disconnect {name} 1000")), ADXL_NOT_CONNECTED);
    assert_eq!(e.code(&format!("connect {name} 1000")), 0);
    assert_eq!(e.code(&format!("connect {name} 1000")), ADXL_ALREADY_CONNECTED);
    assert_eq!(e.code(&format!("xfer {name} {READ} {local} {remote} 4096 1 0")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("xfer {name} {READ} {local} 0 4096 1 1000")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("xfer {name} {READ} 0 {remote} 4096 1 1000")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("xfer {name} 7 {local} {remote} 4096 1 1000")), ADXL_PARAM_INVALID);
    // Relay mode: registered and unregistered remote memory (two transfer types) in one call.
    let plain = server.value("host 8192 2");
    let dev = server.value("device 4096 4");
    assert_eq!(server.code(&format!("reg {dev} 4096 {DEVICE}")), 0);
    let mixed = format!("list {name} {READ} 1000 {local},{dev},64 {},{plain},64", local + 4096);
    assert_eq!(e.code(&mixed), ADXL_PARAM_INVALID);
    // Host to host on both descriptors (unregistered counts as host): one type, relayed.
    assert_eq!(
        e.code(&format!("list {name} {READ} 1000 {local},{remote},64 {},{plain},64", local + 4096)),
        0
    );
    assert_eq!(e.code(&format!("disconnect {name} 0")), ADXL_PARAM_INVALID);
    assert_eq!(e.code(&format!("disconnect {name} 1000")), 0);
    // A transfer that cannot finish in 1 ms: TIMEOUT.
    let big = server.value(&format!("host {} 3", 64 * MIB));
    let sink = e.value(&format!("host {} 0", 64 * MIB));
    assert_eq!(e.code(&format!("connect {name} 1000")), 0);
    assert_eq!(e.code(&format!("xfer {name} {READ} {sink} {big} {} 1 1", 64 * MIB)), ADXL_TIMEOUT);
    // After Finalize.
    assert_eq!(e.code("finalize"), 0);
    assert_eq!(e.code("finalize"), 0);
    assert_eq!(e.code(&format!("connect {name} 1000")), ADXL_FAILED);
    assert_eq!(e.code(&format!("xfer {name} {READ} {local} {remote} 4096 1 1000")), ADXL_FAILED);
    assert_eq!(e.code(&format!("reg {local} 4096 {HOST}")), ADXL_FAILED);
    e.finish();
    server.finish();
}

#[test]
fn a_killed_server_fails_the_transfer_at_once_and_a_restarted_one_connects_again() {
    let name = server_name();
    let mut server = Engine::named(&name, "", &[]);
    let size = 16 * MIB;
    let remote = server.value(&format!("host {size} 1"));
    assert_eq!(server.code(&format!("reg {remote} {size} {HOST}")), 0);
    let mut client = Engine::named("127.0.0.1", "", &[]);
    let local = client.value(&format!("host {size} 0"));
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    // Transfers with a 10 s time-out, back to back, while the server is killed.
    client.send(&format!("xfer {name} {READ} {local} {remote} {size} 64 10000 100000"));
    std::thread::sleep(Duration::from_millis(300));
    server.child.kill().unwrap();
    let killed = Instant::now();
    let r = client.reply("xfer");
    let waited = killed.elapsed();
    assert_ne!(r[0], 0, "the transfers to a killed server succeeded");
    assert!(waited < Duration::from_secs(1), "the error came after {waited:?}");
    eprintln!("status {} {waited:?} after the server was killed", r[0]);
    drop(server);
    // The same name served again: Connect makes a new link and transfers work.
    let mut server = Engine::named(&name, "", &[]);
    let remote = server.value(&format!("host {size} 5"));
    assert_eq!(server.code(&format!("reg {remote} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {remote} {size} 1 5000")), 0);
    assert_eq!(client.value(&format!("sum {local} {size}")), server.value(&format!("sum {remote} {size}")));
    client.finish();
    server.finish();
}

#[test]
fn two_clients_with_one_name_transfer_at_the_same_time() {
    let name = server_name();
    let mut server = Engine::named(&name, "", &[]);
    let size = 8 * MIB;
    let remote = server.value(&format!("host {} 1", 2 * size));
    assert_eq!(server.code(&format!("reg {remote} {} {HOST}", 2 * size)), 0);
    let mut clients: Vec<Engine> = (0..2).map(|_| Engine::named("127.0.0.1", "", &[])).collect();
    let mut locals = Vec::new();
    for (i, c) in clients.iter_mut().enumerate() {
        let local = c.value(&format!("host {size} {}", 100 + i));
        assert_eq!(c.code(&format!("connect {name} 1000")), 0);
        locals.push(local);
    }
    for (i, c) in clients.iter_mut().enumerate() {
        c.send(&format!(
            "xfer {name} {WRITE} {} {} {size} 256 10000 5",
            locals[i],
            remote + (i * size) as u64
        ));
    }
    for c in clients.iter_mut() {
        assert_eq!(c.reply("xfer")[0], 0);
    }
    for (i, c) in clients.iter_mut().enumerate() {
        let want = c.value(&format!("sum {} {size}", locals[i]));
        assert_eq!(server.value(&format!("sum {} {size}", remote + (i * size) as u64)), want);
    }
    for c in clients {
        c.finish();
    }
    server.finish();
}

#[test]
fn engines_in_two_network_namespaces() {
    if !common::namespaces_allowed() {
        return;
    }
    for transport in ["tcp", "auto"] {
        let dir = std::env::temp_dir().join(format!("ascendless-netns-{}-{transport}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("unshare")
            .args(["-rn", "sh", "-c", NETNS_SCRIPT, "sh"])
            .arg(&dir)
            .arg(std::env::current_exe().unwrap())
            .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
            .env("ASCENDLESS_TRANSPORT", transport)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            out.status.success(),
            "the namespace run ({transport}) failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---- the same-host path (default transport) ----

const AUTO: &[(&str, &str)] = &[("ASCENDLESS_TRANSPORT", "auto")];

/// The engine's counters: direct calls, direct bytes, kernel-copy calls and bytes, TCP calls
/// and bytes.
fn counters(e: &mut Engine) -> [u64; 6] {
    let r = e.ask("counters");
    assert_eq!(r[0], 0);
    r[1..7].try_into().unwrap()
}

/// READ then WRITE of `len` bytes in `count` descriptors between `local` and `remote`,
/// checked on both sides.
fn read_then_write(
    client: &mut Engine,
    server: &mut Engine,
    name: &str,
    local: u64,
    remote: u64,
    len: usize,
    count: usize,
) {
    let want = server.value(&format!("sum {remote} {len}"));
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {remote} {len} {count} 5000")), 0);
    assert_eq!(client.value(&format!("sum {local} {len}")), want, "READ {count} descriptors");
    assert_eq!(client.code(&format!("fill {local} {len} {}", count + 77)), 0);
    let want = client.value(&format!("sum {local} {len}"));
    assert_eq!(client.code(&format!("xfer {name} {WRITE} {local} {remote} {len} {count} 5000")), 0);
    assert_eq!(server.value(&format!("sum {remote} {len}")), want, "WRITE {count} descriptors");
}

#[test]
fn same_host_device_and_pinned_memory_are_copied_directly() {
    let name = server_name();
    let mut server = Engine::named(
        &name,
        "",
        &[("ASCENDLESS_TRANSPORT", "auto"), ("ASCENDLESS_STRICT_DEVICE_MEMORY", "1")],
    );
    let size = 16 * MIB;
    let device = server.value(&format!("device {size} 1"));
    assert_eq!(server.code(&format!("reg {device} {size} {DEVICE}")), 0);
    let mut client = Engine::named("127.0.0.1", "", AUTO);
    let local = client.value(&format!("pinned {size} 2"));
    assert_eq!(client.code(&format!("reg {local} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    for count in [1, 4096] {
        read_then_write(&mut client, &mut server, &name, local, device, size, count);
    }
    // Pinned memory registered after Connect: recorded by the client before RegisterMem
    // returns, then mapped on first use.
    let pinned = server.value(&format!("pinned {size} 3"));
    assert_eq!(server.code(&format!("reg {pinned} {size} {HOST}")), 0);
    read_then_write(&mut client, &mut server, &name, local, pinned, size, 1);
    let c = counters(&mut client);
    assert_eq!((c[0], c[1], c[2], c[4]), (6, 6 * size as u64, 0, 0), "{c:?}");
    client.finish();
    server.finish();
}

#[test]
fn same_host_malloc_memory_goes_through_the_kernel_or_tcp() {
    let name = server_name();
    let mut server = Engine::named(&name, "", AUTO);
    let size = 4 * MIB;
    let plain = server.value(&format!("host {size} 4"));
    assert_eq!(server.code(&format!("reg {plain} {size} {HOST}")), 0);
    let mut client = Engine::named("127.0.0.1", "", AUTO);
    let local = client.value(&format!("host {size} 0"));
    assert_eq!(client.code(&format!("reg {local} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    for count in [1, 4096] {
        read_then_write(&mut client, &mut server, &name, local, plain, size, count);
    }
    let c = counters(&mut client);
    assert_eq!(c[0], 0, "{c:?}");
    // process_vm_* may be refused (ptrace rules): then every call went over TCP.
    assert!(c[2] == 4 || c[4] == 4, "{c:?}");
    eprintln!("malloc'ed memory: {} kernel-copy calls, {} TCP calls", c[2], c[4]);
    client.finish();
    server.finish();
}

#[test]
fn forced_tcp_never_uses_shared_memory_and_forced_shm_fails_without_it() {
    let name = server_name();
    let mut server = Engine::named(&name, "", AUTO);
    let remote = server.value(&format!("device {MIB} 1"));
    assert_eq!(server.code(&format!("reg {remote} {MIB} {DEVICE}")), 0);
    let mut client = Engine::named("127.0.0.1", "adxl.Transport=tcp", AUTO);
    let local = client.value(&format!("pinned {MIB} 2"));
    assert_eq!(client.code(&format!("reg {local} {MIB} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    read_then_write(&mut client, &mut server, &name, local, remote, MIB, 1);
    assert_eq!(counters(&mut client), [0, 0, 0, 0, 2, 2 * MIB as u64]);
    client.finish();
    // A server forced to TCP offers no shared memory: a client that insists fails at Connect.
    let name = server_name();
    let tcp_server = Engine::named(&name, "", &[("ASCENDLESS_TRANSPORT", "tcp")]);
    let mut shm_client = Engine::named("127.0.0.1", "", &[("ASCENDLESS_TRANSPORT", "shm")]);
    assert_eq!(shm_client.code(&format!("connect {name} 1000")), ADXL_FAILED);
    shm_client.finish();
    tcp_server.finish();
    server.finish();
}

#[test]
fn same_host_memory_deregistered_by_the_server_is_never_written() {
    let name = server_name();
    // Registered-only access, so the server's answer over TCP does not depend on what its
    // address space holds at the freed address (under the default relay rule a later mapping
    // there would be written, as the caller vouched for it).
    let mut server = Engine::named(&name, "adxl.RemoteAccess=registered", AUTO);
    let remote = server.value(&format!("device {MIB} 1"));
    let h = server.value(&format!("reg {remote} {MIB} {DEVICE}"));
    let mut client = Engine::named("127.0.0.1", "", AUTO);
    let local = client.value(&format!("pinned {MIB} 2"));
    assert_eq!(client.code(&format!("reg {local} {MIB} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    read_then_write(&mut client, &mut server, &name, local, remote, MIB, 1);
    assert_eq!(server.code(&format!("dereg {h}")), 0);
    // Still allocated, no longer registered: not written through the peer's mapping either.
    let kept = server.value(&format!("sum {remote} {MIB}"));
    assert_eq!(client.code(&format!("fill {local} {MIB} 99")), 0);
    assert_eq!(
        client.code(&format!("xfer {name} {WRITE} {local} {remote} {MIB} 1 1000")),
        ADXL_PARAM_INVALID
    );
    assert_eq!(server.value(&format!("sum {remote} {MIB}")), kept, "deregistered memory was written");
    assert_eq!(server.code(&format!("free {remote} 0")), 0);
    assert_eq!(
        client.code(&format!("xfer {name} {WRITE} {local} {remote} {MIB} 1 1000")),
        ADXL_PARAM_INVALID
    );
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {remote} {MIB} 1 1000")), ADXL_PARAM_INVALID);
    assert_eq!(counters(&mut client)[0], 2, "only the two transfers before DeregisterMem were direct");
    client.finish();
    server.finish();
}

#[test]
fn a_killed_same_host_server_fails_transfers_without_harming_the_client() {
    let name = server_name();
    let mut server = Engine::named(&name, "", AUTO);
    let size = 16 * MIB;
    let remote = server.value(&format!("pinned {size} 1"));
    assert_eq!(server.code(&format!("reg {remote} {size} {HOST}")), 0);
    let mut client = Engine::named("127.0.0.1", "", AUTO);
    let local = client.value(&format!("pinned {size} 0"));
    assert_eq!(client.code(&format!("reg {local} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    // Direct copies back to back while the server is killed: they end in an error.
    client.send(&format!("xfer {name} {WRITE} {local} {remote} {size} 64 1000 1000000"));
    std::thread::sleep(Duration::from_millis(300));
    server.child.kill().unwrap();
    let killed = Instant::now();
    let r = client.reply("xfer");
    assert!(r[0] == ADXL_FAILED as u64 || r[0] == ADXL_NOT_CONNECTED as u64, "{r:?}");
    assert!(killed.elapsed() < Duration::from_secs(2), "the error came after {:?}", killed.elapsed());
    assert_eq!(client.code(&format!("xfer {name} {READ} {local} {remote} {size} 1 1000")), ADXL_FAILED);
    client.finish();
}

#[test]
fn a_kernel_copy_refused_by_the_kernel_falls_back_to_tcp() {
    let name = server_name();
    let mut server = Engine::named(&name, "", AUTO);
    assert_eq!(server.code("undumpable"), 0);
    let size = MIB;
    let plain = server.value(&format!("host {size} 4"));
    assert_eq!(server.code(&format!("reg {plain} {size} {HOST}")), 0);
    let mut client = Engine::named("127.0.0.1", "", AUTO);
    assert_eq!(client.code("noptrace"), 0);
    let local = client.value(&format!("host {size} 0"));
    assert_eq!(client.code(&format!("reg {local} {size} {HOST}")), 0);
    assert_eq!(client.code(&format!("connect {name} 1000")), 0);
    read_then_write(&mut client, &mut server, &name, local, plain, size, 1);
    let c = counters(&mut client);
    assert_eq!((c[0], c[2], c[4]), (0, 0, 2), "{c:?}");
    client.finish();
    server.finish();
}
