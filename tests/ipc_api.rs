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
