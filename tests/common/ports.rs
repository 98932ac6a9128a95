//! Loopback ports for test servers.
//!
//! `bind(0)` hands out ports from the kernel's ephemeral range, which is also where every
//! outgoing connection of the tests running alongside gets its local port: between asking for
//! a free port and an engine binding it, another test's connection could take it (seen as
//! "Address already in use" in CI). Ports here are taken below that range (20000..32000, the
//! ephemeral range starts at 32768 by default), spread by process and never handed out twice
//! by one process, and checked free before they are returned.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

const FIRST: u32 = 20000;
const SPAN: u32 = 12000;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    // Processes start at scattered places (a multiplicative hash of the pid); steps of 7 visit
    // the whole span (7 and 12000 share no factor).
    let start = std::process::id().wrapping_mul(2_654_435_761) % SPAN;
    for _ in 0..SPAN {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (FIRST + (start + n.wrapping_mul(7)) % SPAN) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {FIRST}..{}", FIRST + SPAN)
}
