//! In-process tests of export and import: the process imports its own keys, which goes through
//! the same socket, broker thread and descriptor passing as an import from another process.
//! Multi-process behaviour (whitelists by the kernel's pid, deaths) is in `tests/ipc_broker.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::error::rt_codes::{
    ACL_ERROR_RT_IPC_ERROR, ACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_PARAM_INVALID,
};
use crate::sys::mapping::Mapping;
use crate::sys::memfd::MemFd;

const T: Duration = Duration::from_secs(2);

fn memory_offer(validate_pid: bool) -> (Arc<MemFd>, Offer) {
    let fd = Arc::new(MemFd::create("ascendless-ipc-test", 2 * 4096).unwrap());
    let offer = Offer {
        kind: ExportKind::Memory,
        fd: Arc::clone(&fd),
        offset: 4096,
        len: 4096,
        device: 2,
        notify_id: 9,
        validate_pid,
        importers: Arc::default(),
    };
    (fd, offer)
}

fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + T;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

#[test]
fn a_process_imports_its_own_export_and_shares_its_pages() {
    let (fd, offer) = memory_offer(false);
    let key = export(offer).unwrap();
    let imported = import(&key.to_string(), T).unwrap();
    assert_eq!(
        (imported.kind, imported.offset, imported.len, imported.device, imported.notify_id),
        (ExportKind::Memory, 4096, 4096, 2, 9)
    );
    assert_eq!(imported.exporter_pid, std::process::id());
    assert_eq!(importers(&key), 1);
    let theirs = Mapping::shared_rw(&fd, 2 * 4096, 0).unwrap();
    let ours = Mapping::shared_rw(&imported.fd, 2 * 4096, 0).unwrap();
    theirs.atomic_u32(4096).unwrap().store(42, std::sync::atomic::Ordering::Release);
    assert_eq!(ours.atomic_u32(4096).unwrap().load(std::sync::atomic::Ordering::Acquire), 42);
    assert!(!imported.link.exporter_gone());
    drop(imported);
    assert!(wait_for(|| importers(&key) == 0), "the release reached the broker");
}

#[test]
fn imported_memory_counts_its_sleepers_in_the_exporters_page() {
    use std::sync::atomic::Ordering;
    let (fd, offer) = memory_offer(false);
    let key = export(offer).unwrap();
    let imported = import(&key.to_string(), T).unwrap();
    let (theirs, ours) =
        (crate::sys::sleepers::for_file(&fd).unwrap(), crate::sys::sleepers::for_file(&imported.fd).unwrap());
    assert!(!Arc::ptr_eq(&theirs, &ours), "the importer maps the page it was handed");
    // The same file and the same counter in both: a sleeper counted by one is seen by the other.
    let id = fd.id().unwrap();
    assert_eq!(imported.fd.id().unwrap(), id);
    ours.counter(id, 4096).fetch_add(1, Ordering::SeqCst);
    assert_eq!(theirs.counter(id, 4096).load(Ordering::SeqCst), 1);
    ours.counter(id, 4096).fetch_sub(1, Ordering::SeqCst);
    // A notify's cell goes alone (no page with it).
    let cell = Arc::new(MemFd::create("ascendless-ipc-test", 4096).unwrap());
    let notify = Offer { kind: ExportKind::Notify, fd: cell, offset: 0, len: 64, ..memory_offer(false).1 };
    let got = import(&export(notify).unwrap().to_string(), T).unwrap();
    assert_eq!(got.kind, ExportKind::Notify);
}

#[test]
fn keys_are_short_and_every_export_gets_its_own() {
    let a = export(memory_offer(true).1).unwrap();
    let b = export(memory_offer(true).1).unwrap();
    assert_ne!(a, b);
    assert_ne!(a.secret(), b.secret());
    assert_eq!((a.pid(), a.token()), (b.pid(), b.token()), "one broker per process");
    assert!(a.to_string().len() <= KEY_MAX_LEN);
}

#[test]
fn whitelists_decide_for_validated_exports() {
    let key = export(memory_offer(true).1).unwrap();
    let err = import(&key.to_string(), T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_NO_PERMISSION);
    assert!(
        err.message.contains(&format!("process {} is not allowed", std::process::id())),
        "{}",
        err.message
    );
    assert!(err.message.contains("aclrtNotifySetImportPid"), "{}", err.message);
    allow_pids(&key, &[std::process::id() as i32]).unwrap();
    import(&key.to_string(), T).unwrap();
}

#[test]
fn made_up_malformed_and_revoked_keys_are_param_invalid() {
    let key = export(memory_offer(false).1).unwrap();
    let made_up = Key::new(key.pid(), key.token(), key.secret() ^ 1);
    let err = import(&made_up.to_string(), T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_PARAM_INVALID, "{}", err.message);
    assert!(err.message.contains("does not know"), "{}", err.message);

    assert_eq!(import("not a key", T).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);

    let live = import(&key.to_string(), T).unwrap();
    revoke(&key).unwrap();
    let err = import(&key.to_string(), T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_PARAM_INVALID);
    assert!(err.message.contains("revoked"), "{}", err.message);
    assert_eq!(importers(&key), 1, "existing imports outlive the revocation");
    drop(live);
    assert!(wait_for(|| importers(&key) == 0));
    assert_eq!(revoke(&key).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
}

#[test]
fn bad_arguments_are_param_invalid() {
    let key = export(memory_offer(true).1).unwrap();
    for pids in [&[0][..], &[5, -1]] {
        let err = allow_pids(&key, pids).unwrap_err();
        assert_eq!(err.code, ACL_ERROR_RT_PARAM_INVALID);
        assert!(err.message.contains("not a process id"), "{}", err.message);
    }
    let unknown = Key::new(key.pid(), key.token(), key.secret() ^ 1);
    assert_eq!(allow_pids(&unknown, &[5]).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    let other_process = Key::new(key.pid() + 1, key.token(), key.secret());
    assert_eq!(revoke(&other_process).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    assert_eq!(importers(&other_process), 0);

    for (offset, len) in [(0, 0), (4096, 4097), (u64::MAX, 2)] {
        let (_, mut offer) = memory_offer(false);
        (offer.offset, offer.len) = (offset, len);
        assert_eq!(export(offer).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "{offset} {len}");
    }
}

#[test]
fn a_key_of_a_process_that_does_not_exist_is_an_ipc_error() {
    // Pid 0x7fffffff is above every pid_max Linux allows.
    let err = import("7fffffff-0123456789abcdef-0123456789abcdef0123456789abcdef", T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_IPC_ERROR);
    assert!(err.message.contains("is gone"), "{}", err.message);
}

#[test]
fn a_published_export_is_imported_by_its_shareable_id() {
    let (_, offer) = memory_offer(true);
    let key = export(offer).unwrap();
    let id = publish(&key).unwrap();
    assert_eq!(shareable::exporter_of(id), Some(std::process::id()));
    assert_eq!(publish(&key).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "one id per export");
    assert_eq!(import_id(id, T).unwrap_err().code, ACL_ERROR_RT_NO_PERMISSION, "the whitelist decides");
    allow_pids(&key, &[std::process::id() as i32]).unwrap();
    let imported = import_id(id, T).unwrap();
    assert_eq!((imported.kind, imported.offset, imported.len), (ExportKind::Memory, 4096, 4096));
    assert_eq!(importers(&key), 1);
    let err = import_id(id ^ 1, T).unwrap_err();
    assert_eq!(err.code, ACL_ERROR_RT_PARAM_INVALID, "{}", err.message);
    revoke(&key).unwrap();
    assert!(import_id(id, T).unwrap_err().message.contains("revoked"));
    assert_eq!(import_id(5, T).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID, "pid 0: no exporter");
    // Pid 0x3fffff is the largest Linux allows, and only with pid_max at its limit: not running.
    let gone = shareable::make_id(0x3f_ffff, 1).unwrap();
    assert_eq!(import_id(gone, T).unwrap_err().code, ACL_ERROR_RT_IPC_ERROR);
}
