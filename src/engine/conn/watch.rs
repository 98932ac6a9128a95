//! Watching a connection for the peer's reply instead of sleeping on it, for the one
//! conversation in progress in the process.
//!
//! A reader asleep on a socket is woken by the peer's send, which costs both sides: on a
//! 2-vCPU VM the sender spends 10-17 µs in the kernel waking it and the reader waits as long
//! again for a CPU (`cargo bench --bench engine_setup`, `--bench adxl`). A reader that watches
//! the socket (`poll` with no wait, in a loop) sees the reply as it lands, and the sender wakes
//! nobody. Watching takes a CPU, so only the process's one conversation in progress watches
//! (a handshake, or a transfer's request and reply), on a machine of more than one CPU, for at
//! most [`WATCH`]; conversations side by side sleep (their waits overlap, and the CPUs are
//! theirs and their peers').

use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::sys::stream_io::readable;

/// How long a reply is watched for before the reader sleeps: longer than a loopback round trip
/// with a sleeping server (about 50 µs here), short against a round trip between hosts.
const WATCH: Duration = Duration::from_micros(100);

/// Conversations of this process waiting for replies now.
static TALKING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set while this thread's conversations sleep on their replies (see [`sleeping`]).
    static SLEEPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's conversations sleeping on their replies: a TransferAsync
/// worker's, whose caller often polls the request on another CPU meanwhile; a watch beside that
/// poll takes the CPU the peer needs to answer. One request in flight over TCP, the worker
/// sleeping against watching (`ascendless-bench adxl --spawn --async 1 --transport tcp`, six
/// runs each, ratio to TransferSync): 1 MiB WRITEs 1.06x-1.81x (median 1.61x) against
/// 1.03x-1.56x (1.15x); 4 KiB READs 2.24x-2.58x against 1.96x-2.20x.
pub fn sleeping<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the thread's setting, also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SLEEPS.set(self.0);
        }
    }
    let _restore = Restore(SLEEPS.replace(true));
    f()
}

/// Counts a conversation (a handshake, a transfer's exchange) while it lives.
pub struct Conversation(());

impl Conversation {
    pub fn start() -> Conversation {
        TALKING.fetch_add(1, Ordering::Relaxed);
        Conversation(())
    }

    /// Waits for the peer's reply on `stream` without sleeping, for at most [`WATCH`], when
    /// this is the process's only conversation (a read follows, which sleeps if nothing came).
    pub fn watch_for_reply(&self, stream: &TcpStream) {
        static CPUS: OnceLock<usize> = OnceLock::new();
        let cpus = *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if !may_watch(TALKING.load(Ordering::Relaxed), cpus, SLEEPS.get()) {
            return;
        }
        let start = Instant::now();
        while !readable(stream) && start.elapsed() < WATCH {
            std::hint::spin_loop();
        }
    }
}

/// Whether a conversation may watch: its thread does not sleep on replies ([`sleeping`]), it
/// is the only one (of `talking`) and a CPU is left for the peer (of `cpus`).
fn may_watch(talking: usize, cpus: usize, sleeps: bool) -> bool {
    !sleeps && talking <= 1 && cpus >= 2
}

impl Drop for Conversation {
    fn drop(&mut self) {
        TALKING.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Instant;

    #[test]
    fn only_the_one_conversation_watches_and_only_with_a_cpu_to_spare() {
        assert!(may_watch(1, 2, false));
        assert!(!may_watch(2, 2, false), "side by side, conversations sleep");
        assert!(!may_watch(1, 1, false), "on one CPU the peer needs it");
        assert!(!may_watch(1, 2, true), "an asynchronous worker's conversation sleeps");
    }

    #[test]
    fn a_worker_sleeps_on_replies_while_it_runs_a_request_and_only_then() {
        assert!(!SLEEPS.get());
        let inner = sleeping(|| (SLEEPS.get(), sleeping(|| SLEEPS.get()), SLEEPS.get()));
        assert_eq!(inner, (true, true, true), "nested, the thread still sleeps");
        assert!(!SLEEPS.get(), "after the request the thread watches again");
    }

    #[test]
    fn a_watch_ends_with_the_reply_or_after_its_bound() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let c = Conversation::start();
        // Nothing comes: bounded (a loaded machine may stretch the bound, never by seconds).
        let t = Instant::now();
        c.watch_for_reply(&a);
        assert!(t.elapsed() < Duration::from_secs(1));
        crate::sys::stream_io::send_all(&b, b"x").unwrap();
        c.watch_for_reply(&a);
        assert!(readable(&a), "the watch returned with the reply there");
    }
}
