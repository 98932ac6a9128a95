//! Export and import between real processes.
//!
//! The test binary re-runs itself as a child (the `child` test, with a role chosen by an
//! environment variable). Keys go to the child on its standard input (so the parent can
//! whitelist the child's pid before the child imports) and the child reports on its standard
//! output, one `WORD detail` line per step. Children are killed and reaped when a test ends,
//! whatever happens.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use ascendless::error::rt_codes::{
    ACL_ERROR_RT_IPC_ERROR, ACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_PARAM_INVALID,
};
use ascendless::ipc::wire::{Reply, Status};
use ascendless::ipc::{self, ExportKind, Importers, Key, Offer};
use ascendless::sys::futex;
use ascendless::sys::mapping::Mapping;
use ascendless::sys::memfd::MemFd;
use ascendless::sys::socket::Conn;
use ascendless::sys::span::RawSpan;

const ROLE: &str = "ASCENDLESS_IPC_TEST_ROLE";
const T: Duration = Duration::from_secs(5);
const PAGE: usize = 4096;
/// Where in the exported page the tests put things.
const WORD: usize = 0;
const PARENT_TEXT: usize = 16;
const CHILD_TEXT: usize = 64;

// ---------------------------------------------------------------------------------------------
// The child side.

/// Entry point of every child; does nothing in the parent.
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else { return };
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    match role.as_str() {
        "import-report" => {
            stdin.read_line(&mut line).unwrap();
            match ipc::import(line.trim(), T) {
                Ok(imported) => say(&format!("OK {}", imported.exporter_pid)),
                Err(e) => say(&format!("ERR {} {}", e.code, e.message)),
            }
        }
        "import-share" => {
            stdin.read_line(&mut line).unwrap();
            let imported = ipc::import(line.trim(), T).unwrap();
            assert_eq!(
                (imported.kind, imported.offset, imported.len),
                (ExportKind::Memory, PAGE as u64, PAGE as u64)
            );
            let map = Arc::new(Mapping::shared_rw(&imported.fd, 2 * PAGE, 0).unwrap());
            let mut seen = [0u8; 12];
            RawSpan::of_mapping(&map, PAGE + PARENT_TEXT, 12).unwrap().read_into(&mut seen);
            say(&format!("SAW {}", String::from_utf8_lossy(&seen)));
            RawSpan::of_mapping(&map, PAGE + CHILD_TEXT, 11).unwrap().write_slice(b"child bytes");
            say("WROTE");
            let word = map.atomic_u32(PAGE + WORD).unwrap();
            let deadline = Instant::now() + T;
            while word.load(Ordering::Acquire) == 0 && Instant::now() < deadline {
                futex::wait(word, 0, Some(T));
            }
            say(&format!("WOKE {}", word.load(Ordering::Acquire)));
            drop(imported);
            say("RELEASED");
        }
        "import-hold" => {
            stdin.read_line(&mut line).unwrap();
            let _imported = ipc::import(line.trim(), T).unwrap();
            say("IMPORTED");
            // Until the parent kills us (or closes our input).
            stdin.read_line(&mut line).unwrap();
        }
        "export-wait" => {
            let fd = Arc::new(MemFd::create("ascendless-ipc-test", 2 * PAGE).unwrap());
            let key = ipc::export(offer(fd, false, Arc::default())).unwrap();
            say(&format!("KEY {key}"));
            stdin.read_line(&mut line).unwrap();
        }
        other => panic!("unknown role {other}"),
    }
    std::process::exit(0);
}

/// Marks the child's own lines: the harness may have printed "test child ... " on the same line.
const MARK: &str = "@@ ";

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{MARK}{line}").unwrap();
    out.flush().unwrap();
}

// ---------------------------------------------------------------------------------------------
// The parent side.

/// A child process, killed and reaped on drop.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The child's own lines, read by a thread so that waiting for one has a bound.
    said: mpsc::Receiver<String>,
}

impl Proc {
    fn spawn(role: &str) -> Proc {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, said) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, tx));
        Proc { child, stdin, said }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the child said; panics (and so kills the child) if none comes in time.
    fn said(&mut self) -> String {
        match self.said.recv_timeout(T) {
            Ok(line) => line,
            Err(e) => panic!("child {} said nothing more ({e:?})", self.pid()),
        }
    }

    /// The rest of the next line the child said, which must start with `word`.
    fn expect(&mut self, word: &str) -> String {
        let said = self.said();
        match said.strip_prefix(word) {
            Some(rest) => rest.trim_start().to_owned(),
            None => panic!("child {} said {said:?}, expected {word}", self.pid()),
        }
    }

    /// Closes the child's input and waits for it to exit.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

/// Forwards the lines the child marked as its own (the test harness prints lines too).
fn read_lines(mut stdout: BufReader<ChildStdout>, tx: mpsc::Sender<String>) {
    let mut line = String::new();
    while stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
        if let Some(at) = line.find(MARK) {
            if tx.send(line[at + MARK.len()..].trim_end().to_owned()).is_err() {
                return;
            }
        }
        line.clear();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn offer(fd: Arc<MemFd>, validate_pid: bool, importers: Arc<Importers>) -> Offer {
    Offer {
        kind: ExportKind::Memory,
        fd,
        offset: PAGE as u64,
        len: PAGE as u64,
        device: 1,
        notify_id: 0,
        validate_pid,
        importers,
    }
}

fn exported(validate_pid: bool) -> (Key, Arc<MemFd>, Arc<Importers>) {
    let fd = Arc::new(MemFd::create("ascendless-ipc-test", 2 * PAGE).unwrap());
    let importers = Arc::new(Importers::default());
    let key = ipc::export(offer(Arc::clone(&fd), validate_pid, Arc::clone(&importers))).unwrap();
    (key, fd, importers)
}

fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while !cond() {
        assert!(Instant::now() < deadline, "not within a second: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// What `import-report` says about importing `key` when spawned, given a chance to whitelist it.
fn import_in_child(key: &Key, before: impl FnOnce(u32)) -> String {
    let mut child = Proc::spawn("import-report");
    before(child.pid());
    child.send(&key.to_string());
    let said = child.said();
    assert!(child.finish().success());
    said
}

#[test]
fn a_child_sees_the_exported_pages_and_its_writes_and_wakes_cross_back() {
    let (key, fd, importers) = exported(true);
    let map = Arc::new(Mapping::shared_rw(&fd, 2 * PAGE, 0).unwrap());
    RawSpan::of_mapping(&map, PAGE + PARENT_TEXT, 12).unwrap().write_slice(b"parent bytes");
    let mut child = Proc::spawn("import-share");
    ipc::allow_pids(&key, &[child.pid() as i32]).unwrap();
    child.send(&key.to_string());

    assert_eq!(child.expect("SAW"), "parent bytes");
    child.expect("WROTE");
    let mut seen = [0u8; 11];
    RawSpan::of_mapping(&map, PAGE + CHILD_TEXT, 11).unwrap().read_into(&mut seen);
    assert_eq!(&seen, b"child bytes", "the child wrote into the very same pages");
    assert_eq!(ipc::importers(&key), 1);

    // A shared futex in the exported page wakes the child's wait.
    let word = map.atomic_u32(PAGE + WORD).unwrap();
    word.store(1, Ordering::Release);
    futex::wake(word, 1);
    assert_eq!(child.expect("WOKE"), "1");

    // A normal release: the count drops and no loss is reported.
    child.expect("RELEASED");
    eventually("the release is seen", || ipc::importers(&key) == 0);
    assert!(child.finish().success());
    assert!(!importers.orphaned(), "a release is not a death");
}

#[test]
fn only_whitelisted_pids_may_import_a_validated_export() {
    let (key, _fd, _lost) = exported(true);
    let refused = import_in_child(&key, |_| {});
    let code = ACL_ERROR_RT_NO_PERMISSION.to_string();
    assert!(refused.starts_with(&format!("ERR {code} process ")), "{refused}");
    assert!(refused.contains("aclrtIpcMemSetImportPid"), "{refused}");

    let me = std::process::id();
    let allowed = import_in_child(&key, |pid| ipc::allow_pids(&key, &[pid as i32]).unwrap());
    assert_eq!(allowed, format!("OK {me}"), "exporter_pid is the exporter's");
}

#[test]
fn without_pid_validation_any_process_of_the_user_may_import() {
    let (key, _fd, _lost) = exported(false);
    assert!(import_in_child(&key, |_| {}).starts_with("OK"));
}

#[test]
fn made_up_malformed_and_revoked_keys_are_refused_with_107000() {
    let (key, _fd, _lost) = exported(false);
    let param_invalid = format!("ERR {ACL_ERROR_RT_PARAM_INVALID} ");
    // The right exporter and format, a wrong secret.
    let mut made_up = key.to_string();
    let last = made_up.pop().unwrap();
    made_up.push(if last == '0' { '1' } else { '0' });
    let said = import_in_child(&made_up.parse().unwrap(), |_| {});
    assert!(said.starts_with(&param_invalid) && said.contains("does not know"), "{said}");

    let malformed = ipc::import("1234-not-a-key", T).unwrap_err();
    assert_eq!(malformed.code, ACL_ERROR_RT_PARAM_INVALID);

    ipc::revoke(&key).unwrap();
    let said = import_in_child(&key, |_| {});
    assert!(said.starts_with(&param_invalid) && said.contains("revoked"), "{said}");
}

#[test]
fn keys_of_an_exporter_that_exited_are_ipc_errors_and_links_see_it_go() {
    let mut exporter = Proc::spawn("export-wait");
    let key = exporter.expect("KEY");
    let imported = ipc::import(&key, T).unwrap();
    assert_eq!(imported.exporter_pid, exporter.pid());
    assert!(!imported.link.exporter_gone());
    assert!(exporter.finish().success());
    eventually("the link sees the exporter's exit", || imported.link.exporter_gone());
    let err = ipc::import(&key, T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_IPC_ERROR, "{}", err.message);
    assert!(err.message.contains("is gone"), "{}", err.message);
    // The mapping outlives the exporter.
    let map = Mapping::shared_rw(&imported.fd, 2 * PAGE, 0).unwrap();
    map.atomic_u32(PAGE).unwrap().store(3, Ordering::Relaxed);
}

#[test]
fn an_importer_killed_with_sigkill_is_reported_within_a_second() {
    let (key, _fd, importers) = exported(false);
    let mut child = Proc::spawn("import-hold");
    child.send(&key.to_string());
    child.expect("IMPORTED");
    assert_eq!(ipc::importers(&key), 1);
    child.child.kill().unwrap(); // SIGKILL: no destructor runs, no release is sent
    eventually("the death is seen", || importers.orphaned());
    assert_eq!((ipc::importers(&key), importers.live()), (0, 0));
    // A new importer re-arms the export.
    let again = ipc::import(&key.to_string(), T).unwrap();
    assert!(!importers.orphaned() && importers.live() == 1);
    drop(again);
    eventually("the release is seen", || importers.live() == 0);
    assert!(!importers.orphaned(), "the death was forgotten by the new import");
}

#[test]
fn silent_and_garbage_clients_do_not_stop_imports() {
    let (key, _fd, _lost) = exported(false);
    let name = key.broker_name();
    // More silent clients than the broker keeps waiting, and some that send garbage.
    let silent: Vec<Conn> = (0..300).map(|_| Conn::connect(&name, T).unwrap()).collect();
    let garbage = Conn::connect(&name, T).unwrap();
    garbage.send(b"GET / HTTP/1.0\r\n\r\n", &[]).unwrap();
    let bad_version = Conn::connect(&name, T).unwrap();
    bad_version.send(b"AsIP\x09\x00\x01\x00 and the rest of a future request", &[]).unwrap();

    let start = Instant::now();
    assert!(import_in_child(&key, |_| {}).starts_with("OK"));
    assert!(ipc::import(&key.to_string(), T).is_ok());
    assert!(start.elapsed() < Duration::from_secs(1), "imports took {:?}", start.elapsed());

    for (conn, status) in [(&garbage, Status::BadRequest), (&bad_version, Status::BadVersion)] {
        conn.set_read_timeout(Some(T)).unwrap();
        let mut buf = [0u8; 64];
        let m = conn.recv(&mut buf, 1).unwrap().expect("a refusal before the close");
        assert_eq!(Reply::decode(&buf[..m.len]).unwrap().status, status);
        assert!(conn.recv(&mut buf, 1).unwrap().is_none(), "then the broker closes");
    }
    // Every silent client is closed: made room for, refused, or timed out after 2 s.
    let deadline = start + Duration::from_secs(4);
    for conn in &silent {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            conn.wait_readable(Some(left)).unwrap(),
            "a silent client still open after {:?}",
            start.elapsed()
        );
        assert!(conn.try_recv(&mut [0u8; 64], 1).unwrap().is_none());
    }
}

#[test]
fn oversized_requests_and_requests_carrying_descriptors_are_dropped_unanswered() {
    use ascendless::ipc::wire::Request;
    use std::os::fd::AsFd;
    let (key, fd, importers) = exported(false);
    let name = key.broker_name();
    let request = Request::Import(key).encode();
    let oversized = Conn::connect(&name, T).unwrap();
    oversized.send(&[request.as_slice(), &[0u8; 64 * 1024]].concat(), &[]).unwrap();
    // A good request, but with a descriptor the broker did not ask for.
    let with_fd = Conn::connect(&name, T).unwrap();
    with_fd.send(&request, &[fd.as_fd()]).unwrap();
    for conn in [&oversized, &with_fd] {
        conn.set_read_timeout(Some(T)).unwrap();
        let mut buf = [0u8; 64];
        assert!(conn.recv(&mut buf, 1).unwrap().is_none(), "closed without an answer (and no import)");
    }
    assert_eq!(ipc::importers(&key), 0);
    assert!(!importers.orphaned(), "nothing was imported, so nothing is lost");
    // The broker goes on.
    assert!(ipc::import(&key.to_string(), T).is_ok());
}
