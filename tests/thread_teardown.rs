//! C code may call the library from a pthread key destructor, after the thread's Rust
//! thread-locals are gone. Calls must then fail or succeed normally, never abort the process.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, Ordering};

use ascendless::error::acl_codes::ACL_ERROR_UNINITIALIZE;
use ascendless::error::rt_codes::ACL_ERROR_RT_CONTEXT_NULL;

static FINALIZE_RC: AtomicI32 = AtomicI32::new(-1);
static GET_DEVICE_RC: AtomicI32 = AtomicI32::new(-1);

extern "C" fn destructor(_value: *mut c_void) {
    // SAFETY: NULL / valid out-pointers, as the functions allow.
    unsafe {
        FINALIZE_RC.store(ascendless::ffi::acl::aclFinalizeReference(std::ptr::null_mut()), Ordering::SeqCst);
        let _ = ascendless::ffi::acl::aclGetRecentErrMsg();
        let mut d = 0;
        GET_DEVICE_RC.store(ascendless::ffi::acl_rt::device::aclrtGetDevice(&mut d), Ordering::SeqCst);
    }
}

#[test]
fn calls_from_a_pthread_key_destructor_do_not_abort() {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: a valid out-pointer and an extern "C" destructor that lives for the process.
    assert_eq!(unsafe { libc::pthread_key_create(&mut key, Some(destructor)) }, 0);
    std::thread::spawn(move || {
        // Touch the library's thread-locals first so they exist (and are destroyed) before
        // the key's destructor runs.
        let _ = ascendless::ffi::acl::aclGetRecentErrMsg();
        // SAFETY: any non-NULL value makes the destructor run at thread exit.
        unsafe { libc::pthread_setspecific(key, std::ptr::dangling::<c_void>()) };
    })
    .join()
    .unwrap();
    assert_eq!(FINALIZE_RC.load(Ordering::SeqCst), ACL_ERROR_UNINITIALIZE);
    assert_eq!(GET_DEVICE_RC.load(Ordering::SeqCst), ACL_ERROR_RT_CONTEXT_NULL);
}
