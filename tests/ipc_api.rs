//! IPC notify and IPC memory between real processes, through the C entry points. The child is
//! this test binary re-run with a role variable; it obeys one command per line on its standard
//! input and answers one line per command (the return code, and any value), so each test
//! scripts the other process step by step.

use std::ffi::{CStr, CString, c_char, c_void};
use std::io::{BufRead, Write};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

mod common;

use ascendless::error::acl_codes::*;
use ascendless::error::rt_codes::*;
use ascendless::ffi::acl_rt::device::*;
use ascendless::ffi::acl_rt::ipc::*;
use ascendless::ffi::acl_rt::memory::*;
use ascendless::ffi::acl_rt::notify::*;
use ascendless::ffi::acl_rt::stream::*;
use common::Scripted;

const ROLE: &str = "ASCENDLESS_IPC_TEST_CHILD";
const SIZE: usize = 1 << 20;

// ---- the child ----

fn key_buf() -> [c_char; 65] {
    [0; 65]
}

fn key_text(buf: &[c_char; 65]) -> String {
    // SAFETY: the library wrote a NUL-terminated key into the buffer.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
}

/// Runs commands from standard input until "exit" or end of input.
fn child_main() {
    assert_eq!(aclrtSetDevice(3), ACL_SUCCESS);
    let mut stream = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut stream) }, ACL_SUCCESS);
    let mut notify: *mut c_void = null_mut();
    let mut mem: *mut c_void = null_mut();
    let mut mem_key = String::new();
    let out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["pid"] => format!("0 {}", std::process::id()),
            ["import_notify", key, flags] => {
                let key = CString::new(*key).unwrap();
                // SAFETY: valid out-pointer and C string.
                let rc = unsafe { aclrtNotifyImportByKey(&mut notify, key.as_ptr(), flags.parse().unwrap()) };
                format!("{rc}")
            }
            ["import_mem", key, flags] => {
                let k = CString::new(*key).unwrap();
                // SAFETY: valid out-pointer and C string.
                let rc = unsafe { aclrtIpcMemImportByKey(&mut mem, k.as_ptr(), flags.parse().unwrap()) };
                mem_key = key.to_string();
                format!("{rc}")
            }
            ["write_and_record", value] => {
                let data = vec![value.parse::<u8>().unwrap(); SIZE];
                // SAFETY: `data` outlives the synchronised copy.
                let rc = unsafe { aclrtMemcpyAsync(mem, SIZE, data.as_ptr().cast(), SIZE, 1, stream) };
                let rc2 = aclrtRecordNotify(notify, stream);
                let rc3 = aclrtSynchronizeStream(stream);
                format!("{}", [rc, rc2, rc3].into_iter().find(|&r| r != 0).unwrap_or(0))
            }
            ["record"] => {
                let rc = aclrtRecordNotify(notify, stream);
                format!("{}", if rc == 0 { aclrtSynchronizeStream(stream) } else { rc })
            }
            ["wait_imported"] => format!("{}", aclrtWaitAndResetNotify(notify, stream, 1)),
            ["write", value] => {
                let data = vec![value.parse::<u8>().unwrap(); SIZE];
                // SAFETY: `data` outlives the synchronous copy.
                format!("{}", unsafe { aclrtMemcpy(mem, SIZE, data.as_ptr().cast(), SIZE, 1) })
            }
            ["forge"] => format!("0 {}", forge_every_cell()),
            ["peer_status", dev, peer] => {
                let mut v = -1;
                // SAFETY: valid out-pointer.
                let rc = unsafe {
                    aclrtDevicePeerAccessStatus(dev.parse().unwrap(), peer.parse().unwrap(), &mut v)
                };
                format!("{rc} {v}")
            }
            ["export_notify"] => {
                let mut own = null_mut();
                let mut buf = key_buf();
                // SAFETY: valid pointers; a 65-byte buffer.
                let rc = unsafe {
                    aclrtCreateNotify(&mut own, 0);
                    aclrtNotifyGetExportKey(own, buf.as_mut_ptr(), 65, 2)
                };
                format!("{rc} {}", key_text(&buf))
            }
            ["export_mem"] => {
                let mut own = null_mut();
                let mut buf = key_buf();
                // SAFETY: valid pointers; a 65-byte buffer.
                let rc = unsafe {
                    aclrtMalloc(&mut own, SIZE, 0);
                    aclrtIpcMemGetExportKey(own, SIZE, buf.as_mut_ptr(), 65, 1)
                };
                format!("{rc} {}", key_text(&buf))
            }
            ["destroy_notify"] => format!("{}", aclrtDestroyNotify(notify)),
            ["close_mem"] => {
                let k = CString::new(mem_key.as_str()).unwrap();
                // SAFETY: a C string.
                format!("{}", unsafe { aclrtIpcMemClose(k.as_ptr()) })
            }
            ["close"] => {
                let k = CString::new(mem_key.as_str()).unwrap();
                // SAFETY: a C string.
                let rc = unsafe { aclrtIpcMemClose(k.as_ptr()) };
                let rc2 = aclrtDestroyNotify(notify);
                format!("{}", if rc != 0 { rc } else { rc2 })
            }
            ["exit"] => break,
            other => panic!("unknown command {other:?}"),
        };
        writeln!(out.lock(), "{reply}").unwrap();
    }
}

/// What a hostile importer can do with what it was handed: map every memory file it holds, in
/// full, and add a record to every notify cell it finds there. Returns how many files it mapped.
fn forge_every_cell() -> usize {
    use ascendless::sys::mapping::Mapping;
    use ascendless::sys::memfd::MemFd;
    use std::os::fd::{BorrowedFd, RawFd};
    let mut mapped = 0;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().filter_map(Result::ok) {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<RawFd>() else { continue };
        let is_memfd =
            std::fs::read_link(entry.path()).is_ok_and(|t| t.to_string_lossy().starts_with("/memfd:"));
        if !is_memfd {
            continue;
        }
        // SAFETY: the descriptor is open (listed just now) and only duplicated here.
        let Ok(dup) = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned() else { continue };
        let file = MemFd::from(dup);
        let size = file.size().unwrap() as usize;
        if size == 0 || size > SIZE {
            continue;
        }
        let map = Mapping::shared_rw(&file, size, 0).unwrap();
        for at in (0..size).step_by(64) {
            let word = map.atomic_u32(at).unwrap();
            word.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            ascendless::sys::futex::wake(word, u32::MAX);
        }
        mapped += 1;
    }
    mapped
}

#[test]
fn child() {
    if std::env::var_os(ROLE).is_some() {
        child_main();
    }
}

// ---- the parent's side ----

/// The other process, scripted command by command.
struct Peer(Scripted);

impl Peer {
    fn start(env: &[(&str, &str)]) -> Peer {
        Peer(Scripted::spawn(ROLE, env))
    }

    /// Sends one command; returns the reply's words (the first is the return code).
    fn ask(&mut self, command: &str) -> Vec<String> {
        self.0.send(command);
        self.0.reply_words(command)
    }

    fn code(&mut self, command: &str) -> i32 {
        self.ask(command)[0].parse().unwrap()
    }

    fn pid(&mut self) -> i32 {
        self.ask("pid")[1].parse().unwrap()
    }

    fn kill(&mut self) {
        self.0.child.kill().unwrap();
        let _ = self.0.child.wait();
    }

    fn finish(self) {
        self.0.finish();
    }
}

struct Owner {
    stream: *mut c_void,
    notify: *mut c_void,
    mem: *mut c_void,
}

/// This process's side: a stream, a notify and device memory on device 2 (on its own thread's
/// context: each test runs on its own thread).
fn owner() -> Owner {
    assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
    let (mut stream, mut notify, mut mem) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(aclrtCreateStream(&mut stream), ACL_SUCCESS);
        assert_eq!(aclrtCreateNotify(&mut notify, 0), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut mem, SIZE, 0), ACL_SUCCESS);
        assert_eq!(aclrtMemset(mem, SIZE, 0, SIZE), ACL_SUCCESS);
    }
    Owner { stream, notify, mem }
}

impl Owner {
    /// Releases what `owner` made (the notify unless a test destroyed it already).
    fn release(self, notify_alive: bool) {
        if notify_alive {
            assert_eq!(aclrtDestroyNotify(self.notify), ACL_SUCCESS);
        }
        assert_eq!(aclrtFree(self.mem), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(self.stream), ACL_SUCCESS);
    }
}

fn export_notify(n: *mut c_void, flags: u64) -> String {
    let mut buf = key_buf();
    // SAFETY: a 65-byte buffer.
    assert_eq!(unsafe { aclrtNotifyGetExportKey(n, buf.as_mut_ptr(), 65, flags) }, ACL_SUCCESS);
    key_text(&buf)
}

fn export_mem(p: *mut c_void, flags: u64) -> String {
    let mut buf = key_buf();
    // SAFETY: a 65-byte buffer.
    assert_eq!(unsafe { aclrtIpcMemGetExportKey(p, SIZE, buf.as_mut_ptr(), 65, flags) }, ACL_SUCCESS);
    key_text(&buf)
}

fn read_byte(o: &Owner) -> u8 {
    let mut out = vec![0u8; SIZE];
    // SAFETY: a live buffer of SIZE bytes.
    assert_eq!(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), SIZE, o.mem, SIZE, 2) }, ACL_SUCCESS);
    assert!(out.iter().all(|&b| b == out[0]), "the whole buffer holds one value");
    out[0]
}

fn flow(validate: bool) {
    let o = owner();
    let mut peer = Peer::start(&[]);
    let (nflags, mflags) = if validate { (0, 0) } else { (2, 1) };
    let nkey = export_notify(o.notify, nflags);
    let mkey = export_mem(o.mem, mflags);
    assert!(nkey.len() <= 64 && mkey.len() <= 64);
    if validate {
        let mut pid = peer.pid();
        // SAFETY: one readable pid; `mkey` as a C string.
        unsafe {
            assert_eq!(aclrtNotifySetImportPid(o.notify, &mut pid, 1), ACL_SUCCESS);
            let k = CString::new(mkey.as_str()).unwrap();
            assert_eq!(aclrtIpcMemSetImportPid(k.as_ptr(), &mut pid, 1), ACL_SUCCESS);
        }
    }
    assert_eq!(peer.code(&format!("import_notify {nkey} 2")), ACL_SUCCESS);
    assert_eq!(peer.code(&format!("import_mem {mkey} 1")), ACL_SUCCESS);
    assert_eq!(peer.ask("peer_status 3 2"), ["0", "1"], "ENABLE_PEER_ACCESS enabled device 3 -> 2");
    assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, 10), ACL_SUCCESS);
    assert_eq!(peer.code("write_and_record 77"), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStream(o.stream), ACL_SUCCESS, "the peer's record released the wait");
    assert_eq!(read_byte(&o), 77, "what the peer wrote is in our device memory");
    assert_eq!(peer.code("wait_imported"), ACL_ERROR_RT_PARAM_INVALID, "only the creator may wait");
    assert_eq!(peer.code("close"), ACL_SUCCESS);
    peer.finish();
    let k = CString::new(mkey).unwrap();
    // SAFETY: a C string.
    assert_eq!(unsafe { aclrtIpcMemClose(k.as_ptr()) }, ACL_SUCCESS);
    o.release(true);
}

#[test]
fn two_processes_with_pid_validation() {
    std::thread::spawn(|| flow(true)).join().unwrap();
}

#[test]
fn two_processes_without_pid_validation() {
    std::thread::spawn(|| flow(false)).join().unwrap();
}

#[test]
fn refused_imports_get_their_codes() {
    std::thread::spawn(|| {
        let o = owner();
        let mut peer = Peer::start(&[]);
        let nkey = export_notify(o.notify, 0);
        let mkey = export_mem(o.mem, 0);
        assert_eq!(
            peer.code(&format!("import_notify {nkey} 0")),
            ACL_ERROR_RT_NO_PERMISSION,
            "not whitelisted"
        );
        assert_eq!(peer.code(&format!("import_mem {mkey} 0")), ACL_ERROR_RT_NO_PERMISSION, "not whitelisted");
        let made_up =
            format!("{}{}", &nkey[..nkey.len() - 4], if nkey.ends_with("0000") { "1111" } else { "0000" });
        assert_eq!(
            peer.code(&format!("import_notify {made_up} 0")),
            ACL_ERROR_RT_PARAM_INVALID,
            "made-up key"
        );
        assert_eq!(peer.code("import_notify not-a-key 0"), ACL_ERROR_RT_PARAM_INVALID, "malformed key");
        assert_eq!(
            peer.code(&format!("import_notify {nkey} 4")),
            ACL_ERROR_RT_PARAM_INVALID,
            "flags above 3"
        );
        // A destroyed notify's key is stale.
        assert_eq!(aclrtDestroyNotify(o.notify), ACL_SUCCESS);
        assert_eq!(
            peer.code(&format!("import_notify {nkey} 0")),
            ACL_ERROR_RT_PARAM_INVALID,
            "destroyed notify"
        );
        // A key of a process that has exited.
        let mut gone = Peer::start(&[]);
        let words = gone.ask("export_notify");
        assert_eq!(words[0], "0");
        gone.finish();
        assert_eq!(
            peer.code(&format!("import_notify {} 0", words[1])),
            ACL_ERROR_RT_IPC_ERROR,
            "exporter exited"
        );
        peer.finish();
        o.release(false);
    })
    .join()
    .unwrap();
}

#[test]
fn export_rules() {
    std::thread::spawn(|| {
        let o = owner();
        let mut buf = key_buf();
        // SAFETY: NULL or valid buffers of the stated sizes.
        unsafe {
            assert_eq!(
                aclrtNotifyGetExportKey(o.notify, buf.as_mut_ptr(), 64, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "64 bytes"
            );
            assert_eq!(
                aclrtNotifyGetExportKey(o.notify, buf.as_mut_ptr(), 65, 1),
                ACL_ERROR_RT_PARAM_INVALID,
                "flag 1"
            );
            assert_eq!(aclrtNotifyGetExportKey(null_mut(), buf.as_mut_ptr(), 65, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtNotifyGetExportKey(o.notify, null_mut(), 65, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtNotifySetImportPid(o.notify, &mut 1234, 1),
                ACL_ERROR_RT_PARAM_INVALID,
                "before export"
            );
            assert_eq!(aclrtNotifyGetExportKey(o.notify, buf.as_mut_ptr(), 65, 0), ACL_SUCCESS);
            assert_eq!(
                aclrtNotifyGetExportKey(o.notify, buf.as_mut_ptr(), 65, 0),
                ACL_ERROR_RT_INTERNAL_ERROR,
                "twice"
            );
            assert_eq!(aclrtNotifySetImportPid(o.notify, null_mut(), 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtNotifySetImportPid(o.notify, &mut -5, 1), ACL_ERROR_RT_PARAM_INVALID);
            let mut sp = ascendless::ffi::acl_rt::aclrtServerPid { sdid: 0, pid: &mut 1234, num: 1 };
            assert_eq!(
                aclrtNotifySetImportPidInterServer(o.notify, &mut sp, 1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "A2"
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(o.mem.byte_add(100), 4096, buf.as_mut_ptr(), 65, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "unaligned"
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(o.mem, SIZE, buf.as_mut_ptr(), 65, 2),
                ACL_ERROR_RT_PARAM_INVALID,
                "flag 2"
            );
            assert_eq!(
                aclrtIpcMemGetExportKey(o.mem, (2 << 20) + 4096, buf.as_mut_ptr(), 65, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "past the 2 MiB allocation"
            );
            let mut host = vec![0u8; 8192];
            assert_eq!(
                aclrtIpcMemGetExportKey(host.as_mut_ptr().cast(), 4096, buf.as_mut_ptr(), 65, 0),
                ACL_ERROR_RT_PARAM_INVALID,
                "not device memory"
            );
            assert_eq!(aclrtIpcMemClose(c"0-0-0".as_ptr()), ACL_ERROR_RT_PARAM_INVALID, "unknown key");
            assert_eq!(aclrtIpcMemClose(std::ptr::null()), ACL_ERROR_INVALID_PARAM);
            // A process may import what it exported itself (its pid whitelisted).
            assert_eq!(
                aclrtIpcMemGetExportKey(o.mem.byte_add(4096), 4096, buf.as_mut_ptr(), 65, 1),
                ACL_SUCCESS
            );
            let mut again = null_mut();
            assert_eq!(aclrtIpcMemImportByKey(&mut again, buf.as_ptr(), 0), ACL_SUCCESS);
            assert_eq!(aclrtMemset(o.mem.byte_add(4096), 16, 9, 16), ACL_SUCCESS);
            let mut b = [0u8; 16];
            assert_eq!(aclrtMemcpy(b.as_mut_ptr().cast(), 16, again, 16, 2), ACL_SUCCESS);
            assert_eq!(b, [9u8; 16], "the same pages under a second address");
            assert_eq!(aclrtIpcMemClose(buf.as_ptr()), ACL_SUCCESS, "the import");
            assert_eq!(aclrtIpcMemClose(buf.as_ptr()), ACL_SUCCESS, "the export");
            assert_eq!(aclrtIpcMemClose(buf.as_ptr()), ACL_ERROR_RT_PARAM_INVALID, "nothing left");
        }
        o.release(true);
    })
    .join()
    .unwrap();
}

/// Polls `cond` for up to 3 s (the broker sees a death within milliseconds).
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !cond() {
        assert!(Instant::now() < deadline, "not within 3 s: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Live imports of `key` as this (exporting) process's broker counts them.
fn importers(key: &str) -> usize {
    ascendless::ipc::importers(&key.parse().unwrap())
}

/// Queues a wait on the owner's notify and synchronises: the wait's code.
fn wait(o: &Owner, timeout_s: u32) -> i32 {
    assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, timeout_s), ACL_SUCCESS);
    aclrtSynchronizeStreamWithTimeout(o.stream, 20_000)
}

#[test]
fn a_killed_importer_ends_a_wait_without_limit() {
    std::thread::spawn(|| {
        let o = owner();
        let mut peer = Peer::start(&[]);
        let nkey = export_notify(o.notify, 2);
        assert_eq!(peer.code(&format!("import_notify {nkey} 0")), ACL_SUCCESS);
        assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, 0), ACL_SUCCESS);
        let started = Instant::now();
        peer.kill();
        assert_eq!(aclrtSynchronizeStreamWithTimeout(o.stream, 10_000), ACL_ERROR_RT_IPC_ERROR);
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        // Nothing of either process is left in the file system (memfds and abstract sockets).
        let leftovers: Vec<_> = std::fs::read_dir("/dev/shm")
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        assert!(!leftovers.iter().any(|n: &String| n.contains("ascendless")), "{leftovers:?}");
        o.release(true);
    })
    .join()
    .unwrap();
}

/// Owner, an importer that is killed, and an importer that records after the kill: the death
/// ends no wait while another importer lives, and a wait with a time-out never ends early.
fn a_death_spares_the_other_importers(validate: bool) {
    let o = owner();
    let mut doomed = Peer::start(&[]);
    let mut survivor = Peer::start(&[]);
    let nkey = export_notify(o.notify, if validate { 0 } else { 2 });
    if validate {
        let mut pids = [doomed.pid(), survivor.pid()];
        // SAFETY: two readable pids.
        assert_eq!(unsafe { aclrtNotifySetImportPid(o.notify, pids.as_mut_ptr(), 2) }, ACL_SUCCESS);
    }
    for p in [&mut doomed, &mut survivor] {
        assert_eq!(p.code(&format!("import_notify {nkey} 0")), ACL_SUCCESS);
    }
    // A wait with a time-out, queued before the kill, is released by the survivor after it.
    assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, 10), ACL_SUCCESS);
    doomed.kill();
    eventually("the broker saw the death", || importers(&nkey) == 1);
    assert_eq!(survivor.code("record"), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(o.stream, 20_000), ACL_SUCCESS);
    // A wait without limit goes on while the survivor lives, and its record ends it.
    assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, 0), ACL_SUCCESS);
    assert_eq!(
        aclrtSynchronizeStreamWithTimeout(o.stream, 200),
        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        "a live importer keeps the wait armed"
    );
    assert_eq!(survivor.code("record"), ACL_SUCCESS);
    assert_eq!(aclrtSynchronizeStreamWithTimeout(o.stream, 20_000), ACL_SUCCESS);
    // No record: a wait with a time-out ends with its time-out, not with the death.
    assert_eq!(wait(&o, 1), ACL_ERROR_RT_TASK_TIMEOUT);
    // Once the survivor dies too, nobody who imported is alive: a wait without limit ends...
    survivor.kill();
    eventually("the broker saw the second death", || importers(&nkey) == 0);
    let started = Instant::now();
    assert_eq!(wait(&o, 0), ACL_ERROR_RT_IPC_ERROR);
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    // ... but a wait with a time-out still only ends with its time-out or a record.
    let started = Instant::now();
    assert_eq!(wait(&o, 1), ACL_ERROR_RT_TASK_TIMEOUT);
    assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
    // The owner's own records release waits, with and without limit.
    for timeout in [0, 5] {
        assert_eq!(aclrtRecordNotify(o.notify, o.stream), ACL_SUCCESS);
        assert_eq!(wait(&o, timeout), ACL_SUCCESS, "timeout {timeout}");
    }
    o.release(true);
}

#[test]
fn a_killed_importer_spares_the_other_importers_with_pid_validation() {
    std::thread::spawn(|| a_death_spares_the_other_importers(true)).join().unwrap();
}

#[test]
fn a_killed_importer_spares_the_other_importers_without_pid_validation() {
    std::thread::spawn(|| a_death_spares_the_other_importers(false)).join().unwrap();
}

#[test]
fn a_restarted_importer_rearms_the_notify() {
    std::thread::spawn(|| {
        let o = owner();
        let nkey = export_notify(o.notify, 0);
        let start = |o: &Owner| {
            let mut p = Peer::start(&[]);
            let mut pid = p.pid();
            // SAFETY: one readable pid.
            assert_eq!(unsafe { aclrtNotifySetImportPid(o.notify, &mut pid, 1) }, ACL_SUCCESS);
            assert_eq!(p.code(&format!("import_notify {nkey} 0")), ACL_SUCCESS);
            p
        };
        let mut worker = start(&o);
        worker.kill();
        eventually("the broker saw the death", || importers(&nkey) == 0);
        assert_eq!(wait(&o, 0), ACL_ERROR_RT_IPC_ERROR, "orphaned: a wait without limit would hang");
        // The worker restarts and imports again: the notify is armed again, for every kind of wait.
        let mut restarted = start(&o);
        for timeout in [0, 10] {
            assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, timeout), ACL_SUCCESS);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(restarted.code("record"), ACL_SUCCESS);
            assert_eq!(aclrtSynchronizeStreamWithTimeout(o.stream, 20_000), ACL_SUCCESS, "timeout {timeout}");
        }
        // It lets go normally: that is not a death, the earlier one was forgotten.
        assert_eq!(restarted.code("destroy_notify"), ACL_SUCCESS);
        restarted.finish();
        eventually("the release was seen", || importers(&nkey) == 0);
        assert_eq!(aclrtWaitAndResetNotify(o.notify, o.stream, 0), ACL_SUCCESS);
        assert_eq!(
            aclrtSynchronizeStreamWithTimeout(o.stream, 200),
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
            "nobody died since the last import"
        );
        // The owner records from another stream (this one is blocked by the wait).
        let mut other = null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { aclrtCreateStream(&mut other) }, ACL_SUCCESS);
        assert_eq!(aclrtRecordNotify(o.notify, other), ACL_SUCCESS);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(o.stream, 20_000), ACL_SUCCESS);
        assert_eq!(aclrtDestroyStream(other), ACL_SUCCESS);
        o.release(true);
    })
    .join()
    .unwrap();
}

#[test]
fn a_killed_memory_importer_changes_nothing_for_the_others() {
    std::thread::spawn(|| {
        let o = owner();
        let mkey = export_mem(o.mem, 1);
        let mut doomed = Peer::start(&[]);
        let mut survivor = Peer::start(&[]);
        for p in [&mut doomed, &mut survivor] {
            assert_eq!(p.code(&format!("import_mem {mkey} 0")), ACL_SUCCESS);
        }
        assert_eq!(doomed.code("write 5"), ACL_SUCCESS);
        doomed.kill();
        eventually("the broker saw the death", || importers(&mkey) == 1);
        assert_eq!(read_byte(&o), 5, "what the dead importer wrote stays");
        assert_eq!(survivor.code("write 6"), ACL_SUCCESS);
        assert_eq!(read_byte(&o), 6, "the survivor still shares the pages");
        // A new importer still may import, and its close is an ordinary release.
        let mut late = Peer::start(&[]);
        assert_eq!(late.code(&format!("import_mem {mkey} 0")), ACL_SUCCESS);
        assert_eq!(late.code("write 7"), ACL_SUCCESS);
        assert_eq!(read_byte(&o), 7);
        for p in [late, survivor] {
            let mut p = p;
            assert_eq!(p.code("close_mem"), ACL_SUCCESS);
            p.finish();
        }
        eventually("the releases were seen", || importers(&mkey) == 0);
        let k = CString::new(mkey).unwrap();
        // SAFETY: a C string.
        assert_eq!(unsafe { aclrtIpcMemClose(k.as_ptr()) }, ACL_SUCCESS);
        o.release(true);
    })
    .join()
    .unwrap();
}

#[test]
fn an_importer_reaches_only_the_notify_it_was_granted() {
    std::thread::spawn(|| {
        let o = owner();
        // Neighbours of the exported notify: one never exported, one exported to someone else.
        let (mut private, mut other) = (null_mut(), null_mut());
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtCreateNotify(&mut private, 0), ACL_SUCCESS);
            assert_eq!(aclrtCreateNotify(&mut other, 0), ACL_SUCCESS);
        }
        let granted = export_notify(o.notify, 0);
        let _not_granted = export_notify(other, 0);
        let mut hostile = Peer::start(&[]);
        let mut pid = hostile.pid();
        // SAFETY: one readable pid.
        assert_eq!(unsafe { aclrtNotifySetImportPid(o.notify, &mut pid, 1) }, ACL_SUCCESS);
        assert_eq!(hostile.code(&format!("import_notify {granted} 0")), ACL_SUCCESS);
        let words = hostile.ask("forge");
        assert!(words[1].parse::<usize>().unwrap() >= 1, "the importer mapped what it was given: {words:?}");
        assert_eq!(wait(&o, 5), ACL_SUCCESS, "the granted notify is reachable, as it should be");
        for (name, n) in [("never exported", private), ("exported to another", other)] {
            assert_eq!(aclrtWaitAndResetNotify(n, o.stream, 1), ACL_SUCCESS);
            assert_eq!(
                aclrtSynchronizeStreamWithTimeout(o.stream, 20_000),
                ACL_ERROR_RT_TASK_TIMEOUT,
                "the {name} notify got a forged record"
            );
            assert_eq!(aclrtDestroyNotify(n), ACL_SUCCESS);
        }
        hostile.finish();
        o.release(true);
    })
    .join()
    .unwrap();
}

#[test]
fn products_and_virtual_instances_without_import() {
    std::thread::spawn(|| {
        let o = owner();
        let nkey = export_notify(o.notify, 2);
        for env in [("ASCENDLESS_VIRTUAL_INSTANCE", "1"), ("ASCENDLESS_SOC", "Ascend310B1")] {
            let mut peer = Peer::start(&[env]);
            assert_eq!(
                peer.code(&format!("import_notify {nkey} 0")),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "{env:?}"
            );
            peer.finish();
        }
        o.release(true);
    })
    .join()
    .unwrap();
}

/// Imports `key` (a notify's or memory's) in this process and releases it again: the import's
/// return code.
fn import_and_release(kind: &str, key: &str) -> i32 {
    assert_eq!(aclrtSetDevice(2), ACL_SUCCESS);
    let k = CString::new(key).unwrap();
    let mut p = null_mut();
    // SAFETY: a valid out-pointer and C string.
    unsafe {
        if kind == "notify" {
            let rc = aclrtNotifyImportByKey(&mut p, k.as_ptr(), 0);
            if rc == ACL_SUCCESS {
                assert_eq!(aclrtDestroyNotify(p), ACL_SUCCESS);
            }
            rc
        } else {
            let rc = aclrtIpcMemImportByKey(&mut p, k.as_ptr(), 0);
            if rc == ACL_SUCCESS {
                assert_eq!(aclrtIpcMemClose(k.as_ptr()), ACL_SUCCESS);
            }
            rc
        }
    }
}

#[test]
fn an_exporter_killed_during_an_import_fails_it_in_time_and_a_restarted_one_serves() {
    for kind in ["notify", "mem"] {
        // A stopped exporter: the kernel takes the connection and the request, nobody answers.
        let mut peer = Peer::start(&[]);
        let key = peer.ask(&format!("export_{kind}"))[1].clone();
        common::stop(peer.pid() as u32);
        let started = Instant::now();
        let importer = std::thread::spawn(move || import_and_release(kind, &key));
        std::thread::sleep(Duration::from_millis(300));
        if importer.is_finished() {
            panic!("{kind}: the import did not wait for the stopped exporter: {}", importer.join().unwrap());
        }
        peer.kill();
        let killed = Instant::now();
        assert_eq!(importer.join().unwrap(), ACL_ERROR_RT_IPC_ERROR, "{kind}");
        eprintln!("{kind}: import failed {:?} after the kill", killed.elapsed());
        assert!(killed.elapsed() < Duration::from_secs(2), "{kind}: {:?}", killed.elapsed());
        assert!(started.elapsed() < ascendless::runtime::share::IMPORT_TIMEOUT, "{kind}");
        // The exporter started again: its new key imports.
        let mut again = Peer::start(&[]);
        let key = again.ask(&format!("export_{kind}"))[1].clone();
        assert_eq!(std::thread::spawn(move || import_and_release(kind, &key)).join().unwrap(), ACL_SUCCESS);
        again.finish();
    }
}
