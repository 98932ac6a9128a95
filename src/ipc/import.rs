//! The importer's side: ask the exporter's broker for an export and keep the connection as the
//! import's lifeline.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::errors::{ipc_error, no_permission, param_invalid};
use super::key::Key;
use super::offer::ExportKind;
use super::shareable::{directory_name, exporter_of};
use super::wire::{REPLY_LEN, Reply, Request, Status};
use crate::error::{AclError, AclResult};
use crate::logging::TARGET;
use crate::sys::memfd::MemFd;
use crate::sys::socket::Conn;

/// An export received from another process (or this one).
#[derive(Debug)]
pub struct Imported {
    pub kind: ExportKind,
    /// The exporter's file: map `len` bytes at `offset` to share its pages.
    pub fd: MemFd,
    pub offset: u64,
    pub len: u64,
    pub device: i32,
    pub notify_id: u32,
    /// The exporter's pid, as the kernel reported it for the connection.
    pub exporter_pid: u32,
    /// Keep it as long as the import is in use; dropping it tells the exporter the import ended.
    pub link: ImportLink,
}

/// The open connection to the exporter that stands for one import. Dropping it sends
/// "release" and closes it, so the exporter counts the import as ended normally; if the process
/// dies instead, the kernel closes it and the exporter learns the importer was lost.
pub struct ImportLink {
    conn: Conn,
    exporter_pid: u32,
    /// When the connection was last seen open, in ns after [`ImportLink::born`]; `u64::MAX`
    /// once it was seen closed (for good).
    seen_open_ns: AtomicU64,
    born: Instant,
}

/// How long an answer of [`ImportLink::exporter_gone`] that the exporter is there holds: a
/// record of an imported notify or IPC event asks on every call, and the question is a poll of
/// the connection, a system call on the path of every round trip of a ping-pong (issue 37).
/// An exporter's end is seen at most this much later.
const SEEN_OPEN_HOLDS: Duration = Duration::from_millis(1);

impl ImportLink {
    fn new(conn: Conn, exporter_pid: u32) -> ImportLink {
        ImportLink { conn, exporter_pid, seen_open_ns: AtomicU64::new(0), born: Instant::now() }
    }

    /// Whether the exporter's side is gone (its process ended, or it dropped the connection):
    /// a waiter on an imported notify can stop waiting for a record that will never come. The
    /// connection is polled at most once every [`SEEN_OPEN_HOLDS`] while it is open.
    pub fn exporter_gone(&self) -> bool {
        let seen = self.seen_open_ns.load(Ordering::Relaxed);
        if seen == u64::MAX {
            return true;
        }
        let now = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        if seen != 0 && now.saturating_sub(seen) < SEEN_OPEN_HOLDS.as_nanos() as u64 {
            return false;
        }
        let gone = self.conn.peer_closed();
        self.seen_open_ns.store(if gone { u64::MAX } else { now.max(1) }, Ordering::Relaxed);
        gone
    }
}

impl fmt::Debug for ImportLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportLink").field("exporter_pid", &self.exporter_pid).finish()
    }
}

impl Drop for ImportLink {
    fn drop(&mut self) {
        // Never blocks; if it cannot be sent the exporter sees a plain close and reports the
        // import as lost, which is the safe mistake.
        if let Err(e) = self.conn.try_send(&Request::Release.encode(), &[]) {
            log::debug!(target: TARGET, "IPC: could not tell process {} an import ended: {e}", self.exporter_pid);
        }
    }
}

/// Attempts at most this many connections per import.
const ATTEMPTS: u32 = 5;
/// Pause between attempts.
const RETRY_PAUSE: Duration = Duration::from_millis(10);

/// Why one attempt failed.
enum Failure {
    /// The broker closed the connection without answering: it was making room among too many
    /// silent clients (or its process is ending). Worth another attempt.
    Unanswered(AclError),
    Final(AclError),
}

impl From<AclError> for Failure {
    fn from(e: AclError) -> Self {
        Failure::Final(e)
    }
}

/// Connects to the exporter named by `text`, asks for the export, and returns it with its
/// lifeline. Everything, retries included, is bounded by `timeout` in total.
pub fn import(text: &str, timeout: Duration) -> AclResult<Imported> {
    let key = Key::parse(text)?;
    let target = Target { name: key.broker_name(), exporter: key.pid(), request: Request::Import(key) };
    import_from(&target, timeout)
}

/// Imports the export published under shareable id `id` (see `shareable.rs`), asking the
/// directory socket of the process the id names.
pub fn import_id(id: u64, timeout: Duration) -> AclResult<Imported> {
    let exporter = exporter_of(id).ok_or_else(|| {
        param_invalid(format!("{id:#x} is not a shareable handle (it names no exporting process)"))
    })?;
    let target =
        Target { name: directory_name(exporter), exporter, request: Request::ImportId { pid: exporter, id } };
    import_from(&target, timeout)
}

/// Where to ask for an import, and what.
struct Target {
    name: Vec<u8>,
    exporter: u32,
    request: Request,
}

fn import_from(target: &Target, timeout: Duration) -> AclResult<Imported> {
    let deadline = Instant::now() + timeout;
    let mut attempt = 1;
    loop {
        match attempt_import(target, deadline, timeout) {
            Ok(imported) => return Ok(imported),
            Err(Failure::Unanswered(e)) if attempt < ATTEMPTS && Instant::now() + RETRY_PAUSE < deadline => {
                log::debug!(target: TARGET, "IPC: attempt {attempt} to import from process {} failed: {}; retrying", target.exporter, e.message);
                attempt += 1;
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(Failure::Unanswered(e) | Failure::Final(e)) => return Err(e),
        }
    }
}

fn attempt_import(target: &Target, deadline: Instant, timeout: Duration) -> Result<Imported, Failure> {
    let exporter = target.exporter;
    let left = || deadline.saturating_duration_since(Instant::now());

    let conn = Conn::connect(&target.name, left()).map_err(|e| match e.kind() {
        io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound => ipc_error(format!(
            "the exporting process {exporter} is gone (nothing serves its IPC keys any more); \
             a key is only valid while its exporter runs"
        )),
        io::ErrorKind::TimedOut => ipc_error(format!(
            "exporting process {exporter} did not accept the connection within {timeout:?}"
        )),
        _ => ipc_error(format!("cannot connect to exporting process {exporter}: {e}")),
    })?;
    // The kernel's word on who answered: only the exporter itself may serve its keys.
    let answering = conn.peer_credentials().map_err(|e| ipc_error(format!("no peer credentials: {e}")))?;
    if u32::try_from(answering.pid).ok() != Some(exporter) {
        return Err(Failure::Final(ipc_error(format!(
            "process {} answered on the address of exporting process {exporter}; refusing to import from it",
            answering.pid
        ))));
    }

    let step = |what: &str, e: io::Error| -> Failure {
        match e.kind() {
            io::ErrorKind::TimedOut => Failure::Final(ipc_error(format!(
                "exporting process {exporter} did not answer within {timeout:?}"
            ))),
            // Closed under us before answering: as `Unanswered`.
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => Failure::Unanswered(ipc_error(
                format!("exporting process {exporter} closed the connection without answering ({e})"),
            )),
            _ => Failure::Final(ipc_error(format!("{what} exporting process {exporter} failed: {e}"))),
        }
    };
    conn.set_write_timeout(Some(left())).map_err(|e| step("setting up the connection to", e))?;
    conn.send(&target.request.encode(), &[]).map_err(|e| step("sending the request to", e))?;
    conn.set_read_timeout(Some(left())).map_err(|e| step("setting up the connection to", e))?;
    // Room for more than a reply, so that a longer message is reported as the wrong length.
    let mut buf = [0u8; 2 * REPLY_LEN];
    let message = conn.recv(&mut buf, 2).map_err(|e| step("reading the answer of", e))?.ok_or_else(|| {
        Failure::Unanswered(ipc_error(format!(
            "exporting process {exporter} closed the connection without answering"
        )))
    })?;
    let reply = Reply::decode(&buf[..message.len])
        .map_err(|e| ipc_error(format!("exporting process {exporter} sent a bad answer: {e}")))?;
    if let Some(refused) = refusal(reply.status, exporter) {
        return Err(Failure::Final(refused));
    }

    // The export's descriptor, and for memory the exporter's sleeper page.
    let mut fds = message.fds.into_iter();
    let memory = matches!(reply.kind, Some(ExportKind::Memory | ExportKind::Physical));
    let (Some(fd), page, None, Some(kind)) =
        (fds.next(), fds.next().filter(|_| memory), fds.next(), reply.kind)
    else {
        return Err(Failure::Final(ipc_error(format!(
            "exporting process {exporter} answered without its descriptor, or with others than expected"
        ))));
    };
    let fd = MemFd::from(fd);
    if let Some(page) = page {
        fd.adopt_sleeper_page(MemFd::from(page));
    }
    let size = fd.size().map_err(|e| ipc_error(format!("cannot read the size of the imported file: {e}")))?;
    if reply.len == 0 || reply.offset.checked_add(reply.len).is_none_or(|end| end > size) {
        return Err(Failure::Final(ipc_error(format!(
            "exporting process {exporter} described {} bytes at offset {} of a file of {size} bytes",
            reply.len, reply.offset
        ))));
    }
    log::debug!(target: TARGET, "IPC: imported {kind:?} ({} bytes) from process {exporter}", reply.len);
    Ok(Imported {
        kind,
        fd,
        offset: reply.offset,
        len: reply.len,
        device: reply.device,
        notify_id: reply.notify_id,
        exporter_pid: exporter,
        link: ImportLink::new(conn, exporter),
    })
}

/// The error a refusal stands for; `None` for success.
fn refusal(status: Status, exporter: u32) -> Option<AclError> {
    let me = std::process::id();
    Some(match status {
        Status::Ok => return None,
        Status::UnknownKey => param_invalid(format!(
            "process {exporter} does not know this IPC key: it was never exported (made up or mistyped), \
             or belongs to an earlier run"
        )),
        Status::Revoked => param_invalid(format!(
            "the export behind this IPC key was revoked by process {exporter} (its notify destroyed or \
             its memory closed)"
        )),
        Status::NotPermitted => no_permission(format!(
            "process {me} is not allowed to import this key; the exporter (process {exporter}) must call \
             aclrtNotifySetImportPid / aclrtIpcMemSetImportPid / aclrtMemSetPidToShareableHandle with its \
             pid (aclrtDeviceGetBareTgid)"
        )),
        Status::OtherUser => no_permission(format!(
            "process {me} runs as another user than the exporter (process {exporter}); an export without \
             pid validation admits its own user only; whitelist this pid with aclrtNotifySetImportPid / \
             aclrtIpcMemSetImportPid instead"
        )),
        Status::BadRequest | Status::BadVersion => ipc_error(format!(
            "exporting process {exporter} did not understand our request (protocol version {}); are both \
             processes using the same ascendless version?",
            super::wire::VERSION
        )),
        Status::Busy => {
            ipc_error(format!("exporting process {exporter} has too many live imports to take another"))
        }
    })
}
