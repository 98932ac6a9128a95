//! What HIXL adds, measured against the ADXL way of doing the same:
//! - the batched GetTransferStatus over 1024 requests in flight against polling each request
//!   on its own (GetTransferStatus per request, round after round), as microseconds spent in
//!   the polling calls per completed request, and the wall time to drain them;
//! - ConnectAsync to 64 peers at once (polling GetAsyncConnectStatus until all are CONNECTED)
//!   against 64 Connect calls one after the other, as wall time, with the vendor's default pool
//!   (2 workers) and with 16 workers (`connect_pool.thread_num`).
//!
//! Engines in this process over loopback TCP (the transfers through the native C API, which
//! `hixl::Hixl` calls), runtime pinned host memory, small (256-byte) requests so that the
//! polling, not the copying, is what differs. `cargo bench --bench hixl`
//! measures; under `cargo test` a few requests and peers only, to prove it still works.

use std::collections::HashSet;
use std::net::TcpListener;
use std::time::Instant;

use ascendless::engine::{AsyncConnectStatus, Engine};
use ascendless::runtime::memory;

const PIECE: usize = 256;
const OPTIONS: &[(&str, &str)] = &[("adxl.Transport", "tcp")];

fn listening() -> (Engine, String) {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let name = format!("127.0.0.1:{port}");
    let e = Engine::new();
    e.initialize(&name, OPTIONS).unwrap();
    (e, name)
}

/// The native C API (what `hixl::Hixl` calls), so each poll costs what a C++ caller pays.
mod native {
    use std::ffi::{CString, c_void};

    use ascendless::ffi::engine::*;

    pub struct E(pub AscendlessEngine);

    fn ok(what: &str, status: u32) {
        assert_eq!(status, 0, "{what} failed");
    }

    impl E {
        pub fn new(name: &str) -> E {
            let mut e: AscendlessEngine = std::ptr::null_mut();
            let (k, v) = (CString::new("adxl.Transport").unwrap(), CString::new("tcp").unwrap());
            let n = CString::new(name).unwrap();
            // SAFETY: valid pointers to live values, as the functions' contracts ask.
            unsafe {
                ok("create", ascendless_engine_create(&mut e));
                ok("initialize", ascendless_engine_initialize(e, n.as_ptr(), &k.as_ptr(), &v.as_ptr(), 1));
            }
            E(e)
        }

        pub fn register(&self, addr: usize, len: usize) {
            let mut h: *mut c_void = std::ptr::null_mut();
            // SAFETY: runtime memory the engine reaches itself; `h` is a live out-parameter.
            ok("register", unsafe { ascendless_engine_register_mem(self.0, addr, len, 1, &mut h) });
        }

        pub fn connect(&self, remote: &CString) {
            // SAFETY: a NUL-terminated name.
            ok("connect", unsafe { ascendless_engine_connect(self.0, remote.as_ptr(), 5000) });
        }

        pub fn submit(
            &self,
            remote: &CString,
            local: usize,
            far: usize,
            n: usize,
            piece: usize,
        ) -> Vec<*mut c_void> {
            (0..n)
                .map(|i| {
                    let d = AscendlessTransferDesc {
                        local_addr: local + i * piece,
                        remote_addr: far + i * piece,
                        len: piece,
                    };
                    let mut req: *mut c_void = std::ptr::null_mut();
                    // SAFETY: one descriptor of runtime memory; live out-parameter.
                    ok("transfer", unsafe {
                        ascendless_engine_transfer_async_with_user_data(
                            self.0,
                            remote.as_ptr(),
                            1,
                            &d,
                            1,
                            (i + 1) as *const c_void,
                            &mut req,
                        )
                    });
                    req
                })
                .collect()
        }

        /// Returns once every request submitted to `remote` has landed (a notify waits for them).
        pub fn barrier(&self, remote: &CString) {
            let (n, m) = (CString::new("barrier").unwrap(), CString::new("").unwrap());
            // SAFETY: NUL-terminated strings.
            ok("notify", unsafe {
                ascendless_engine_send_notify(self.0, remote.as_ptr(), n.as_ptr(), m.as_ptr(), 30_000)
            });
        }

        /// One GetTransferStatus per request; the ones still waiting.
        pub fn poll_each(&self, pending: &mut Vec<*mut c_void>) {
            pending.retain(|r| {
                let mut s = 0i32;
                // SAFETY: a request of this engine; live out-parameter.
                ok("status", unsafe { ascendless_engine_get_transfer_status(self.0, *r, &mut s) });
                s == 0
            });
        }

        /// One batched GetTransferStatus (WAITING ones skipped); how many were done.
        pub fn poll_batched(&self) -> usize {
            let (mut out, mut n): (*mut AscendlessTransferResult, usize) = (std::ptr::null_mut(), 0);
            // SAFETY: live out-parameters; the array is freed with its own function.
            unsafe {
                ok(
                    "statuses",
                    ascendless_engine_get_transfer_statuses(self.0, u32::MAX, 1, &mut out, &mut n),
                );
                ascendless_transfer_results_free(out, n);
            }
            n
        }
    }

    impl Drop for E {
        fn drop(&mut self) {
            ascendless_engine_destroy(self.0);
        }
    }
}

/// 1024 (or `requests`) requests in flight: the cost of collecting them, one GetTransferStatus
/// per request against the batched call, (a) once they have all landed (pure polling cost per
/// completed request) and (b) polled while they land (every pass re-polls the ones still
/// waiting: time inside the polls per completed request, and the wall time to drain).
fn batched_status(requests: usize, rounds: usize) {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let name = format!("127.0.0.1:{port}");
    let server = native::E::new(&name);
    let remote = memory::alloc_host(requests * PIECE).unwrap();
    server.register(remote, requests * PIECE);
    let client = native::E::new("127.0.0.1");
    let local = memory::alloc_host(requests * PIECE).unwrap();
    client.register(local, requests * PIECE);
    let cname = std::ffi::CString::new(name).unwrap();
    client.connect(&cname);
    let (mut each, mut batched, mut each_wall, mut batched_wall) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    let (mut each_live, mut batched_live) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        // (a) landed first, then collected.
        let mut hs = client.submit(&cname, local, remote, requests, PIECE);
        client.barrier(&cname);
        let t = Instant::now();
        client.poll_each(&mut hs);
        each = each.min(t.elapsed().as_secs_f64());
        assert!(hs.is_empty());
        client.submit(&cname, local, remote, requests, PIECE);
        client.barrier(&cname);
        let t = Instant::now();
        assert_eq!(client.poll_batched(), requests);
        batched = batched.min(t.elapsed().as_secs_f64());
        // (b) collected while they land, a polling pass every 20 us (as an application polls
        // between other work): the time inside the passes, and the wall time to drain.
        let pause = std::time::Duration::from_micros(20);
        let t = Instant::now();
        let mut inside = 0.0;
        let mut hs = client.submit(&cname, local, remote, requests, PIECE);
        while !hs.is_empty() {
            let p = Instant::now();
            client.poll_each(&mut hs);
            inside += p.elapsed().as_secs_f64();
            std::thread::sleep(pause);
        }
        each_wall = each_wall.min(t.elapsed().as_secs_f64());
        each_live = each_live.min(inside);
        let t = Instant::now();
        let mut inside = 0.0;
        client.submit(&cname, local, remote, requests, PIECE);
        let mut done = 0;
        while done < requests {
            let p = Instant::now();
            done += client.poll_batched();
            inside += p.elapsed().as_secs_f64();
            std::thread::sleep(pause);
        }
        batched_wall = batched_wall.min(t.elapsed().as_secs_f64());
        batched_live = batched_live.min(inside);
    }
    let us = |s: f64| s * 1e6 / requests as f64;
    println!("GetTransferStatus (native C API), {requests} x {PIECE} B WRITE over TCP, best of {rounds}:");
    println!(
        "  all landed, collected: one by one {:7.3} us/request, batched {:7.3} us/request, ratio {:.1}x",
        us(each),
        us(batched),
        each / batched
    );
    println!(
        "  polled while landing: one by one {:7.3} us/request in polls, batched {:7.3} us/request, ratio {:.1}x",
        us(each_live),
        us(batched_live),
        each_live / batched_live
    );
    println!(
        "  drained while landing (wall): one by one {:7.2} ms, batched {:7.2} ms, ratio {:.2}x",
        each_wall * 1e3,
        batched_wall * 1e3,
        each_wall / batched_wall
    );
}

/// CPU time this process has used (all threads, user and system), in seconds.
fn cpu_time() -> f64 {
    // SAFETY: an all-zero rusage is a valid value, and getrusage writes one into it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a live rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn connect_fanout(peers: usize, rounds: usize) {
    let servers: Vec<(Engine, String)> = (0..peers).map(|_| listening()).collect();
    println!("Connect to {peers} peers over TCP, best of {rounds}:");
    let (mut sequential, mut sequential_cpu) = (f64::MAX, 0.0);
    let client = Engine::new();
    client.initialize("127.0.0.1", OPTIONS).unwrap();
    // Warm-up: every server has served once.
    for (_, name) in &servers {
        client.connect(name, 5000).unwrap();
        client.disconnect(name, 1000).unwrap();
    }
    for _ in 0..rounds {
        let t = Instant::now();
        let c = cpu_time();
        for (_, name) in &servers {
            client.connect(name, 5000).unwrap();
        }
        let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_time() - c);
        if wall < sequential {
            (sequential, sequential_cpu) = (wall, cpu);
        }
        for (_, name) in &servers {
            client.disconnect(name, 1000).unwrap();
        }
    }
    client.finalize();
    println!("  {peers} Connect calls one after the other: {:7.2} ms", sequential * 1e3);
    // Both ends run here: a loopback Connect that keeps a core busy all along cannot overlap
    // with others by more than the cores allow.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "    (the process used {:.2} ms of CPU meanwhile, {:.0}% of one core: with {cores} cores, overlapping them can at best take {:.2}x)",
        sequential_cpu * 1e3,
        100.0 * sequential_cpu / sequential,
        (sequential_cpu / sequential / cores as f64).min(1.0)
    );
    for threads in [2, 16] {
        let client = Engine::new();
        let pool =
            format!(r#"{{"connect_pool.thread_num":{threads},"connect_pool.task_queue_capacity":128}}"#);
        let options = [OPTIONS[0], ("GlobalResourceConfig", pool.as_str())];
        client.initialize("127.0.0.1", &options).unwrap();
        let mut best = f64::MAX;
        for _ in 0..rounds {
            let t = Instant::now();
            for (_, name) in &servers {
                client.connect_async(name, 5000).unwrap();
            }
            let mut left: HashSet<&str> = servers.iter().map(|(_, n)| n.as_str()).collect();
            while !left.is_empty() {
                left.retain(|n| match client.async_connect_status(n).unwrap() {
                    AsyncConnectStatus::Connected => false,
                    AsyncConnectStatus::ConnectFailed => panic!("connect to {n} failed"),
                    _ => true,
                });
                std::thread::yield_now();
            }
            best = best.min(t.elapsed().as_secs_f64());
            for (_, name) in &servers {
                client.disconnect(name, 1000).unwrap();
            }
            // Disconnect (not DisconnectAsync) leaves the async states: start the next round clean,
            // with the same pool.
            client.finalize();
            client.initialize("127.0.0.1", &options).unwrap();
        }
        client.finalize();
        println!(
            "  ConnectAsync to all at once, {threads:>2} workers: {:7.2} ms  ratio {:.2}x the sequential time",
            best * 1e3,
            best / sequential
        );
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (requests, peers, rounds) = if full { (1024, 64, 5) } else { (32, 4, 1) };
    if std::env::var_os("SKIP_BATCH").is_none() {
        batched_status(requests, rounds);
    }
    if std::env::var_os("SKIP_CONNECT").is_none() {
        connect_fanout(peers, rounds);
    }
}
