//! `ascendless-bench`: ascendless's transfer, notify and copy performance beside the machine's
//! own limits (memcpy, a raw TCP socket pair, a raw futex ping-pong) measured in the same run.
//! See `ascendless-bench --help` and docs/performance.md.

mod args;
mod measure;
mod modes;
mod report;

fn main() {
    // The other halves of the two-process ping-pongs (not for users).
    if modes::ping_pong_child() {
        return;
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // `--help` comes back as an "error" too: exit() prints it to stdout with status 0, and real
    // errors to stderr with status 2.
    let opts = args::parse(&argv).unwrap_or_else(|e| e.exit());
    if let Err(e) = modes::run(&opts) {
        eprintln!("ascendless-bench: {e}");
        std::process::exit(1);
    }
}
