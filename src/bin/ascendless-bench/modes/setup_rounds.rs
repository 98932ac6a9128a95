//! One round of engine setup and teardown, and the raw TCP round it is compared with: shared by
//! `ascendless-bench setup` and `cargo bench --bench engine_setup` (which includes this file),
//! so both measure the same thing.
//!
//! The engine round: a serving engine is initialized on a free loopback port, a client engine
//! is initialized, connects, disconnects, and both finalize. The raw round: a listener is
//! bound, a socket connects, the listener accepts, and all three close.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ascendless::engine::Engine;

/// A loopback port free now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The raw round's time.
pub fn raw_round() -> Duration {
    let t = Instant::now();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (b, _) = listener.accept().unwrap();
    drop((a, b, listener));
    t.elapsed()
}

/// The steps of an engine round, in order.
pub const STEPS: [&str; 6] =
    ["server Initialize", "client Initialize", "Connect", "Disconnect", "client Finalize", "server Finalize"];

/// One engine round with `adxl.Transport` = `transport`, the server on `port`: its total time
/// and each step's, or the first step that failed.
pub fn engine_round(transport: &str, port: u16) -> Result<(Duration, [Duration; 6]), String> {
    let options = [("adxl.Transport", transport)];
    let name = format!("127.0.0.1:{port}");
    let mut steps = [Duration::ZERO; 6];
    let start = Instant::now();
    let mut last = start;
    let mut mark = |i: usize| {
        let now = Instant::now();
        steps[i] = now - last;
        last = now;
    };
    let failed =
        |step: usize| move |e: ascendless::error::EngineError| format!("{}: {}", STEPS[step], e.message);
    let server = Engine::new();
    server.initialize(&name, &options).map_err(failed(0))?;
    mark(0);
    let client = Engine::new();
    client.initialize("127.0.0.1", &options).map_err(failed(1))?;
    mark(1);
    client.connect(&name, 5000).map_err(failed(2))?;
    mark(2);
    client.disconnect(&name, 5000).map_err(failed(3))?;
    mark(3);
    client.finalize();
    mark(4);
    server.finalize();
    mark(5);
    Ok((start.elapsed(), steps))
}
