//! Helpers shared by the multi-process tests (ADXL, IPC): a child process (this test binary run again
//! with a role variable) that obeys one command per line on its standard input and answers one
//! line per command, and the test data both sides compute alike.
//!
//! Each test binary uses part of this module.
#![allow(dead_code)]

pub mod same_host;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub mod engines;
pub mod ports;
pub mod proxy;

#[allow(unused_imports)] // not every test binary picks ports
pub use ports::free_port;

/// A scripted child process. Dropping it kills the child.
pub struct Scripted {
    pub child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Scripted {
    /// Runs this test binary's `child` test with `role=1` and `env` (logging off).
    pub fn spawn(role: &str, env: &[(&str, &str)]) -> Scripted {
        Scripted::spawn_via(&[], role, env)
    }

    /// As [`Scripted::spawn`], started through `prefix` (a program and its arguments that run
    /// the rest of the command line, such as `nsenter -t PID -n`).
    pub fn spawn_via(prefix: &[&str], role: &str, env: &[(&str, &str)]) -> Scripted {
        let exe = std::env::current_exe().unwrap();
        let mut command = match prefix.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(["--exact", "child", "--nocapture", "--test-threads=1", "--quiet"])
            .env(role, "1")
            .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Scripted { child, input, output }
    }

    pub fn send(&mut self, command: &str) {
        writeln!(self.input, "{command}").unwrap();
    }

    /// The words of the next reply (the test harness prints lines of its own; replies start
    /// with a number).
    pub fn reply_words(&mut self, command: &str) -> Vec<String> {
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the child ended during {command:?}");
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            if words.first().is_some_and(|w| w.parse::<i64>().is_ok()) {
                return words;
            }
        }
    }

    /// The leading numbers of the next reply.
    pub fn reply(&mut self, command: &str) -> Vec<u64> {
        self.reply_words(command).iter().map_while(|w| w.parse().ok()).collect()
    }

    pub fn ask(&mut self, command: &str) -> Vec<u64> {
        self.send(command);
        self.reply(command)
    }

    /// Runs a command that must succeed; its first value.
    pub fn value(&mut self, command: &str) -> u64 {
        let r = self.ask(command);
        assert_eq!(r[0], 0, "{command}: {r:?}");
        r[1]
    }

    /// Ends the child with "exit" and checks it succeeded.
    pub fn finish(mut self) {
        self.send("exit");
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends signal `name` (`KILL`, `CONT`...) to process `pid` with kill(1).
pub fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status();
    assert!(ok.is_ok_and(|s| s.success()), "kill -{name} {pid}");
}

/// Stops process `pid` (SIGSTOP) and waits until the kernel reports it stopped, so that what
/// the caller does next meets a process that answers nothing (its kernel still accepts
/// connections for it).
pub fn stop(pid: u32) {
    signal(pid, "STOP");
    let pid = pid.to_string();
    let stat = format!("/proc/{pid}/stat");
    // The state follows the command name, which ends with the last ')'.
    let stopped = || {
        std::fs::read_to_string(&stat)
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('T')))
    };
    let t = std::time::Instant::now();
    while !stopped() {
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "process {pid} did not stop");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether this machine lets an unprivileged test make user and network namespaces with veth
/// pairs (`unshare -rn`, `ip`); if not, says the test is skipped.
pub fn namespaces_allowed() -> bool {
    let can = Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link add name va type veth peer name vb"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !can {
        eprintln!(
            "skipped: this machine allows no user and network namespaces with veth pairs (unshare -rn, ip)"
        );
    }
    can
}

/// Makes two network namespaces inside a new user namespace (no privilege needed where they are
/// allowed), joined by a veth pair: the first, where the driver runs, with `fa` 10.77.0.1/24; the
/// second, held by a sleeping process, with `fb` 10.77.0.2/24. Each has its own mount namespace
/// with a sysfs of its own network namespace (so `/sys/class/net` lists its devices, as UCX reads
/// them). Then runs the test binary's `child` test as the driver, with the variable named `$2`
/// set to the holder's pid (the driver starts processes in the second namespaces with
/// [`SECOND_NAMESPACE`] and that pid).
const TWO_NAMESPACES: &str = r#"
set -eu
exe=$1
mount -t sysfs sysfs /sys
ip link set lo up
unshare -nm sh -c 'while ! mount -t sysfs sysfs /sys 2>/dev/null; do sleep 0.01; done; exec sleep 600' &
holder=$!
trap 'kill $holder' EXIT
while [ "$(readlink /proc/$holder/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
ip link add name fa type veth peer name fb
ip link set fb netns "$holder"
ip addr add 10.77.0.1/24 dev fa
ip link set fa up
nsenter -t "$holder" -n sh -c 'ip link set lo up; ip addr add 10.77.0.2/24 dev fb; ip link set fb up'
env "$2=$holder" "$exe" --exact child --nocapture --quiet
"#;

/// The command that runs the rest of a command line in the second namespaces of
/// [`in_two_namespaces`], before the holder's pid.
pub const SECOND_NAMESPACE: [&str; 4] = ["nsenter", "-n", "-m", "-t"];

/// Runs this test binary's `child` test as a driver in two new network namespaces (see
/// [`TWO_NAMESPACES`]), with `role` set to the pid to `nsenter` for the second; whether it
/// succeeded and printed `done`, and all it printed.
pub fn in_two_namespaces(role: &str, done: &str) -> (bool, String) {
    let out = Command::new("unshare")
        .args(["-rnm", "sh", "-c", TWO_NAMESPACES, "sh"])
        .arg(std::env::current_exe().unwrap())
        .arg(role)
        .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let ok = out.status.success() && stdout.contains(done);
    (ok, stdout + &String::from_utf8_lossy(&out.stderr))
}

/// The pattern of `len` bytes for `seed` (words, so debug builds fill 64 MiB quickly).
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 8);
    let mut i = 0u64;
    while v.len() < len {
        v.extend_from_slice(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed).to_le_bytes());
        i += 1;
    }
    v.truncate(len);
    v
}

pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().unwrap())).wrapping_mul(0x100_0000_01b3).rotate_left(7);
    }
    for &b in words.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The child's side of [`Scripted`]: runs `command` on the words of each line of standard
/// input and prints its reply as one line, until `command` answers `None` or input ends.
pub fn obey(mut command: impl FnMut(&[&str]) -> Option<String>) {
    use std::io::Write as _;
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(reply) = command(&words) else { return };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}
