//! `acl/acl_tdt_queue.h`: TDT queues, their shared buffers and the routes between queues
//! (`runtime/tdt/queue.rs`, `runtime/tdt/route.rs`; the buffers are the runtime's mbufs,
//! `runtime/mbuf.rs`; the `acltdt*Buf*` functions run the bodies of `aclrt*Buf*`, in
//! `acl_rt/mbuf.rs`). The vendor's library of these is `libacl_tdt_queue.so`.
//!
//! The `*Attr`/`*Param`/`*QueryInfo` functions move values through `void *` and a length, as
//! the vendor's: a setter copies `len` bytes (at most the value's size), a getter needs room for
//! the whole value (`len` at least its size) and says how much it wrote.

#![allow(non_camel_case_types, non_snake_case)]

use std::cell::Cell;
use std::ffi::{CString, c_void};

use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::ffi::acl_rt::mbuf as bufs;
use crate::ffi::acl_tdt::{handle_ptr, id};
use crate::ffi::handles::{raw, to_c};
use crate::ffi::ptr::{self, Out};
use crate::ffi::{acl_call, acl_value};
use crate::runtime::context;
use crate::runtime::mbuf;
use crate::runtime::tdt::Wait;
use crate::runtime::tdt::queue::{self, Message};
use crate::runtime::tdt::route::{self, RouteValue};

/// The permission to manage a queue (`acltdtGrantQueue`, `acltdtAttachQueue`).
pub const ACL_TDT_QUEUE_PERMISSION_MANAGE: u32 = 1;
/// The permission to dequeue.
pub const ACL_TDT_QUEUE_PERMISSION_DEQUEUE: u32 = 2;
/// The permission to enqueue.
pub const ACL_TDT_QUEUE_PERMISSION_ENQUEUE: u32 = 4;

/// Route states (`ACL_TDT_QUEUE_ROUTE_STATUS_INT32`).
pub const ACL_TDT_QUEUE_ROUTE_UNBIND: u32 = 0;
pub const ACL_TDT_QUEUE_ROUTE_BIND: u32 = 1;
pub const ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL: u32 = 2;

/// A shared buffer (the runtime's mbuf, as `aclrtMbuf`).
pub type acltdtBuf = *mut c_void;

/// A queue's attributes (opaque; the vendor's `struct tagMemQueueAttr`).
pub struct tagMemQueueAttr {
    _opaque: (),
}
pub type acltdtQueueAttr = tagMemQueueAttr;

/// A list of routes (opaque).
pub struct acltdtQueueRouteList {
    _opaque: (),
}

/// What `acltdtQueryQueueRoutes` looks for (opaque).
pub struct acltdtQueueRouteQueryInfo {
    _opaque: (),
}

/// A route from a source queue to a destination queue (opaque).
pub struct acltdtQueueRoute {
    _opaque: (),
}

/// What `acltdtSetQueueAttr` / `acltdtGetQueueAttr` set or get.
#[repr(C)]
pub enum acltdtQueueAttrType {
    ACL_TDT_QUEUE_NAME_PTR = 0,
    ACL_TDT_QUEUE_DEPTH_UINT32 = 1,
}

/// What `acltdtGetQueueRouteParam` gets.
#[repr(C)]
pub enum acltdtQueueRouteParamType {
    ACL_TDT_QUEUE_ROUTE_SRC_UINT32 = 0,
    ACL_TDT_QUEUE_ROUTE_DST_UINT32 = 1,
    ACL_TDT_QUEUE_ROUTE_STATUS_INT32 = 2,
}

/// Which routes `acltdtQueryQueueRoutes` finds.
#[repr(C)]
pub enum acltdtQueueRouteQueryMode {
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC = 0,
    ACL_TDT_QUEUE_ROUTE_QUERY_DST = 1,
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST = 2,
    ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL = 100,
}

/// What `acltdtSetQueueRouteQueryInfo` sets.
#[repr(C)]
pub enum acltdtQueueRouteQueryInfoParamType {
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM = 0,
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 = 1,
    ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32 = 2,
}

/// The memory of `acltdtAllocBuf` (`type`).
#[repr(C)]
pub enum acltdtAllocBufType {
    ACL_TDT_NORMAL_MEM = 0,
    ACL_TDT_DVPP_MEM = 1,
}

/// An `acltdtQueueAttrType` value as received (any integer).
pub type QueueAttrTypeArg = i32;
/// An `acltdtQueueRouteParamType` value as received.
pub type QueueRouteParamTypeArg = i32;
/// An `acltdtQueueRouteQueryInfoParamType` value as received.
pub type QueueRouteQueryInfoParamTypeArg = i32;

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// The `len` bytes at `param` over `N` zero bytes (a setter's value): more than `N`: 100000.
///
/// # Safety
/// `param` is NULL or valid for `len` reads.
unsafe fn value_in<const N: usize>(
    param: *const c_void,
    len: usize,
    what: &str,
) -> Result<[u8; N], AclError> {
    if param.is_null() {
        return Err(invalid(format!("{what}: param must not be NULL")));
    }
    if len > N {
        return Err(invalid(format!("{what}: len {len} is larger than the value's {N} bytes")));
    }
    let mut out = [0u8; N];
    // SAFETY: non-NULL; valid for `len` <= N reads by the caller's contract; `out` holds N.
    unsafe { std::ptr::copy_nonoverlapping(param.cast::<u8>(), out.as_mut_ptr(), len) };
    Ok(out)
}

/// Writes a getter's value to `param` (room for `len` bytes: fewer than the value's is 100000)
/// and its size to `paramRetSize`.
///
/// # Safety
/// `param` is NULL or valid for `len` writes; `paramRetSize` is NULL or valid for a write.
unsafe fn value_out(
    param: *mut c_void,
    len: usize,
    paramRetSize: *mut usize,
    value: &[u8],
) -> Result<(), AclError> {
    if param.is_null() {
        return Err(ptr::null_argument("param"));
    }
    // SAFETY: forwarded from the caller's contract.
    let ret = unsafe { Out::new(paramRetSize, "paramRetSize") }?;
    if len < value.len() {
        return Err(invalid(format!("len {len} is smaller than the value's {} bytes", value.len())));
    }
    // SAFETY: non-NULL; valid for `len` >= value.len() writes by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), param.cast::<u8>(), value.len()) };
    ret.write(value.len());
    Ok(())
}

/// Creates a queue with `attr`'s name and depth (NULL: a name of the library's choosing, depth
/// 8) and gives its id, the smallest free. A name in use, or a depth outside [2, 8192]: 100000;
/// no current device (`aclrtSetDevice`): 107002, as the vendor's.
///
/// # Safety
/// `qid` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueue(attr: *const acltdtQueueAttr, qid: *mut u32) -> aclError {
    acl_call("acltdtCreateQueue", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(qid, "qid") }?;
        context::current_device()?;
        let (name, depth) = if attr.is_null() {
            (String::new(), queue::DEPTH_DEFAULT)
        } else {
            queue::attr(id(attr))?.values()?
        };
        out.write(queue::create(&name, depth)?);
        Ok(())
    })
}

/// Destroys a queue and frees the buffers it holds; a queue on a bound route: 500001 (unbind
/// first, as the vendor's).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyQueue(qid: u32) -> aclError {
    acl_call("acltdtDestroyQueue", || queue::destroy(qid))
}

/// Moves `buf` into the queue (which then owns it, until a dequeue hands it out), waiting for
/// room: `timeout` -1 forever, 0 not at all, else that many ms; full after that: 207014. On
/// failure the buffer stays the caller's.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtEnqueue(qid: u32, buf: acltdtBuf, timeout: i32) -> aclError {
    acl_call("acltdtEnqueue", || {
        if buf.is_null() {
            return Err(ptr::null_argument("buf"));
        }
        mbuf::get(raw(buf), "buf")?;
        let wait = Wait::from_ms(timeout)?;
        queue::enqueue(qid, Message::Buf(raw(buf)), wait).map_err(|(e, _)| e)
    })
}

/// Makes a shared buffer holding `data` and `user` (its valid length the data's size).
fn buf_of(data: &[u8], user: &[u8]) -> Result<u64, AclError> {
    let b = mbuf::alloc(data.len().max(1))?;
    let m = mbuf::get(b, "buf")?;
    let (addr, _) = m.data();
    // SAFETY: the block was just allocated with at least `data.len()` bytes at `addr`, and no
    // one else has its handle yet.
    unsafe {
        std::ptr::copy_nonoverlapping(data.as_ptr(), std::ptr::with_exposed_provenance_mut(addr), data.len())
    };
    m.set_len(data.len())?;
    m.set_user_data(0, user)?;
    Ok(b)
}

/// Takes the oldest message out as a shared buffer (the caller's to free), waiting for one as
/// `acltdtEnqueue` waits for room; empty after that: 207013. Bytes of `acltdtEnqueueData` come
/// out in a new buffer.
///
/// # Safety
/// `buf` is NULL or valid for a write of an `acltdtBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDequeue(qid: u32, buf: *mut acltdtBuf, timeout: i32) -> aclError {
    acl_call("acltdtDequeue", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(buf, "buf") }?;
        let wait = Wait::from_ms(timeout)?;
        let b = match queue::dequeue(qid, wait, |_| Ok(()))? {
            Message::Buf(b) => b,
            Message::Data { data, user } => buf_of(&data, &user)?,
        };
        out.write(to_c(b));
        Ok(())
    })
}

/// Copies `dataSize` bytes (> 0) at `data` and `userDataSize` bytes (at most 96) at `userData`
/// into the queue, waiting for room as `acltdtEnqueue` does. `rsv` is reserved (ignored).
///
/// # Safety
/// `data` is NULL or valid for `dataSize` reads, `userData` NULL or for `userDataSize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtEnqueueData(
    qid: u32,
    data: *const c_void,
    dataSize: usize,
    userData: *const c_void,
    userDataSize: usize,
    timeout: i32,
    rsv: u32,
) -> aclError {
    let _ = rsv;
    acl_call("acltdtEnqueueData", || {
        if data.is_null() {
            return Err(ptr::null_argument("data"));
        }
        if dataSize == 0 {
            return Err(invalid("dataSize must be greater than 0"));
        }
        if userDataSize > mbuf::USER_DATA_SIZE {
            return Err(invalid(format!(
                "userDataSize {userDataSize} is more than {} bytes",
                mbuf::USER_DATA_SIZE
            )));
        }
        let wait = Wait::from_ms(timeout)?;
        // SAFETY: forwarded from this function's contract.
        let (bytes, user) = unsafe {
            (
                ptr::slice(data.cast::<u8>(), dataSize, "data")?,
                ptr::slice(userData.cast::<u8>(), userDataSize, "userData")?,
            )
        };
        let message = Message::Data { data: bytes.to_vec(), user: user.to_vec() };
        queue::enqueue(qid, message, wait).map_err(|(e, _)| e)
    })
}

/// Takes the oldest message out into `data` (room for `dataSize` bytes) and its user data into
/// `userData` (the first `userDataSize` bytes of its 96), waiting as `acltdtDequeue` does;
/// `retDataSize` is the message's size. A message larger than `dataSize` stays in the queue
/// (100000, `retDataSize` saying how much room it needs). A shared buffer of `acltdtEnqueue`
/// comes out as its valid bytes, and is freed.
///
/// # Safety
/// `data` is NULL or valid for `dataSize` writes, `userData` NULL or for `userDataSize`;
/// `retDataSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDequeueData(
    qid: u32,
    data: *mut c_void,
    dataSize: usize,
    retDataSize: *mut usize,
    userData: *mut c_void,
    userDataSize: usize,
    timeout: i32,
) -> aclError {
    acl_call("acltdtDequeueData", || {
        if data.is_null() {
            return Err(ptr::null_argument("data"));
        }
        // SAFETY: forwarded from this function's contract.
        let ret = unsafe { Out::new(retDataSize, "retDataSize") }?;
        if dataSize == 0 {
            return Err(invalid("dataSize must be greater than 0"));
        }
        if userDataSize > mbuf::USER_DATA_SIZE {
            return Err(invalid(format!(
                "userDataSize {userDataSize} is more than {} bytes",
                mbuf::USER_DATA_SIZE
            )));
        }
        if userData.is_null() && userDataSize > 0 {
            return Err(ptr::null_argument("userData"));
        }
        let wait = Wait::from_ms(timeout)?;
        let needed = Cell::new(None);
        let got = queue::dequeue(qid, wait, |m| {
            let len = m.len();
            if len > dataSize {
                needed.set(Some(len));
                return Err(invalid(format!("the message has {len} bytes, more than dataSize {dataSize}")));
            }
            Ok(())
        });
        let message = match got {
            Ok(m) => m,
            Err(e) => {
                if let Some(n) = needed.get() {
                    ret.write(n);
                }
                return Err(e);
            }
        };
        let mut user = [0u8; mbuf::USER_DATA_SIZE];
        let len = match &message {
            Message::Data { data: bytes, user: u } => {
                user[..u.len()].copy_from_slice(u);
                // SAFETY: `data` is valid for `dataSize` >= bytes.len() writes (accepted above).
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
                bytes.len()
            }
            Message::Buf(b) => {
                let m = mbuf::get(*b, "buf")?;
                let ((addr, _), len) = (m.data(), m.len().min(dataSize));
                m.user_data(0, &mut user)?;
                // SAFETY: the buffer's block holds at least its valid length at `addr` and lives
                // while `m` does; `data` is valid for `dataSize` >= len writes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        std::ptr::with_exposed_provenance::<u8>(addr),
                        data.cast::<u8>(),
                        len,
                    )
                };
                len
            }
        };
        if userDataSize > 0 {
            // SAFETY: non-NULL (checked) and valid for `userDataSize` <= 96 writes by this
            // function's contract.
            unsafe { std::ptr::copy_nonoverlapping(user.as_ptr(), userData.cast::<u8>(), userDataSize) };
        }
        if let Message::Buf(b) = message {
            let _ = mbuf::free(b);
        }
        ret.write(len);
        Ok(())
    })
}

/// Grants a queue to a process. Queues are local to this process, which holds every
/// permission on its queues already: granting to itself is checked and succeeds; granting to
/// another process is not supported (200006, the code the vendor's host library answers with).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGrantQueue(qid: u32, pid: i32, permission: u32, timeout: i32) -> aclError {
    acl_call("acltdtGrantQueue", || {
        Wait::from_ms(timeout)?;
        queue::grant(qid, pid, permission, std::process::id() as i32)
    })
}

/// The permissions this process holds on its queue `qid`: all three (7).
///
/// # Safety
/// `permission` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAttachQueue(qid: u32, timeout: i32, permission: *mut u32) -> aclError {
    acl_call("acltdtAttachQueue", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(permission, "permission") }?;
        Wait::from_ms(timeout)?;
        out.write(queue::attach(qid)?);
        Ok(())
    })
}

/// Binds the list's routes: from then on what reaches a source queue moves on to its
/// destinations (each gets it; the others than the last a new reference to a buffer) as soon
/// as all have room. Each route's status says whether it is bound (1) or not (0); any failure
/// (a missing queue, a queue to itself, a circle of routes) fails the call.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtBindQueueRoutes(qRouteList: *mut acltdtQueueRouteList) -> aclError {
    acl_call("acltdtBindQueueRoutes", || route::list(id(qRouteList), "qRouteList")?.bind(true))
}

/// Unbinds the list's routes (each one's status then 0); a route not bound fails the call.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtUnbindQueueRoutes(qRouteList: *mut acltdtQueueRouteList) -> aclError {
    acl_call("acltdtUnbindQueueRoutes", || route::list(id(qRouteList), "qRouteList")?.bind(false))
}

/// Fills the list with the bound routes the query finds (its mode, and the source and/or
/// destination that mode looks at, must be set).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtQueryQueueRoutes(
    queryInfo: *const acltdtQueueRouteQueryInfo,
    qRouteList: *mut acltdtQueueRouteList,
) -> aclError {
    acl_call("acltdtQueryQueueRoutes", || {
        let list = route::list(id(qRouteList), "qRouteList")?;
        let q = route::query(id(queryInfo), "queryInfo")?;
        list.fill_from(&q)
    })
}

/// Allocates a shared buffer of `size` bytes, as `aclrtAllocBuf`; `type` is
/// `ACL_TDT_NORMAL_MEM` or `ACL_TDT_DVPP_MEM` (the same host memory here), else 100000.
///
/// # Safety
/// `buf` is NULL or valid for a write of an `acltdtBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAllocBuf(size: usize, r#type: u32, buf: *mut acltdtBuf) -> aclError {
    let check = || {
        if r#type > 1 {
            return Err(invalid(
                format!("type {type}: ACL_TDT_NORMAL_MEM (0) or ACL_TDT_DVPP_MEM (1)", type = r#type),
            ));
        }
        Ok(())
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::alloc_buf("acltdtAllocBuf", buf, size, check) }
}

/// Frees a shared buffer, as `aclrtFreeBuf`.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtFreeBuf(buf: acltdtBuf) -> aclError {
    bufs::free_buf("acltdtFreeBuf", buf)
}

/// The buffer's data area, as `aclrtGetBufData`.
///
/// # Safety
/// `dataPtr` and `size` are NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufData(
    buf: acltdtBuf,
    dataPtr: *mut *mut c_void,
    size: *mut usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::get_buf_data("acltdtGetBufData", buf, dataPtr, size) }
}

/// Sets the buffer's valid length, as `aclrtSetBufDataLen`.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtSetBufDataLen(buf: acltdtBuf, len: usize) -> aclError {
    bufs::set_buf_data_len("acltdtSetBufDataLen", buf, len)
}

/// The buffer's valid length, as `aclrtGetBufDataLen`.
///
/// # Safety
/// `len` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufDataLen(buf: acltdtBuf, len: *mut usize) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::get_buf_data_len("acltdtGetBufDataLen", buf, len) }
}

/// Appends `buf` to the chain headed by `headBuf`, as `aclrtAppendBufChain`.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtAppendBufChain(headBuf: acltdtBuf, buf: acltdtBuf) -> aclError {
    bufs::append_buf_chain("acltdtAppendBufChain", headBuf, buf)
}

/// How many buffers the chain holds, as `aclrtGetBufChainNum`.
///
/// # Safety
/// `num` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufChainNum(headBuf: acltdtBuf, num: *mut u32) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::get_buf_chain_num("acltdtGetBufChainNum", headBuf, num) }
}

/// The `index`-th buffer of the chain, as `aclrtGetBufFromChain`.
///
/// # Safety
/// `buf` is NULL or valid for a write of an `acltdtBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufFromChain(
    headBuf: acltdtBuf,
    index: u32,
    buf: *mut acltdtBuf,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::get_buf_from_chain("acltdtGetBufFromChain", headBuf, index, buf) }
}

/// Copies `size` bytes of the buffer's user data from `offset`, as `aclrtGetBufUserData`.
///
/// # Safety
/// `dataPtr` is valid for a write of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufUserData(
    buf: acltdtBuf,
    dataPtr: *mut c_void,
    size: usize,
    offset: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::get_buf_user_data("acltdtGetBufUserData", buf, dataPtr, size, offset) }
}

/// Writes `size` bytes into the buffer's user data at `offset`, as `aclrtSetBufUserData`.
///
/// # Safety
/// `dataPtr` is valid for a read of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetBufUserData(
    buf: acltdtBuf,
    dataPtr: *const c_void,
    size: usize,
    offset: usize,
) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::set_buf_user_data("acltdtSetBufUserData", buf, dataPtr, size, offset) }
}

/// A new reference to the buffer's data block, as `aclrtCopyBufRef`.
///
/// # Safety
/// `newBuf` is NULL or valid for a write of an `acltdtBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCopyBufRef(buf: acltdtBuf, newBuf: *mut acltdtBuf) -> aclError {
    // SAFETY: forwarded from this function's contract.
    unsafe { bufs::copy_buf_ref("acltdtCopyBufRef", buf, newBuf) }
}

/// New queue attributes: no name (one is chosen when the queue is made), depth 8.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCreateQueueAttr() -> *mut acltdtQueueAttr {
    acl_value("acltdtCreateQueueAttr", std::ptr::null_mut(), || Ok(handle_ptr(queue::create_attr())))
}

/// Destroys queue attributes (a name pointer they gave out goes with them).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyQueueAttr(attr: *const acltdtQueueAttr) -> aclError {
    acl_call("acltdtDestroyQueueAttr", || queue::destroy_attr(id(attr)))
}

/// Reads a queue name of at most 127 bytes at `p`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string (only its first 128 bytes are read).
unsafe fn bounded_name(p: *const u8) -> Result<CString, AclError> {
    if p.is_null() {
        return Err(invalid("the queue name pointer must not be NULL"));
    }
    let mut bytes = Vec::new();
    for i in 0..queue::NAME_MAX {
        // SAFETY: the string is NUL-terminated by the caller's contract and no byte past its NUL
        // is read (the loop stops at it).
        let b = unsafe { p.add(i).read() };
        if b == 0 {
            return CString::new(bytes).map_err(|_| invalid("the queue name holds a NUL"));
        }
        bytes.push(b);
    }
    Err(invalid(format!("the queue name is longer than {} bytes", queue::NAME_MAX - 1)))
}

/// Sets an attribute from `len` bytes at `param`: `ACL_TDT_QUEUE_NAME_PTR` takes a pointer to
/// the name (copied; at most 127 bytes), `ACL_TDT_QUEUE_DEPTH_UINT32` a `uint32_t`.
///
/// # Safety
/// `param` is NULL or valid for `len` reads; a name pointer in it is NULL or a NUL-terminated
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetQueueAttr(
    attr: *mut acltdtQueueAttr,
    r#type: QueueAttrTypeArg,
    len: usize,
    param: *const c_void,
) -> aclError {
    acl_call("acltdtSetQueueAttr", || {
        let a = queue::attr(id(attr))?;
        match r#type {
            0 => {
                // SAFETY: forwarded from this function's contract.
                let bytes =
                    unsafe { value_in::<{ size_of::<usize>() }>(param, len, "ACL_TDT_QUEUE_NAME_PTR") }?;
                let p = std::ptr::with_exposed_provenance::<u8>(usize::from_ne_bytes(bytes));
                // SAFETY: the name pointer is NULL or a NUL-terminated string by this
                // function's contract.
                a.set_name(unsafe { bounded_name(p) }?)
            }
            1 => {
                let mut now = a.depth().to_ne_bytes();
                // SAFETY: forwarded from this function's contract.
                let bytes = unsafe { value_in::<4>(param, len, "ACL_TDT_QUEUE_DEPTH_UINT32") }?;
                now[..len].copy_from_slice(&bytes[..len]);
                a.set_depth(u32::from_ne_bytes(now));
                Ok(())
            }
            t => Err(invalid(format!("type {t}: ACL_TDT_QUEUE_NAME_PTR or ACL_TDT_QUEUE_DEPTH_UINT32"))),
        }
    })
}

/// Gets an attribute into `param` (room for `len` bytes): the name's address (valid while the
/// attributes live) or the depth; `paramRetSize` its size.
///
/// # Safety
/// `param` is NULL or valid for `len` writes; `paramRetSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueAttr(
    attr: *const acltdtQueueAttr,
    r#type: QueueAttrTypeArg,
    len: usize,
    paramRetSize: *mut usize,
    param: *mut c_void,
) -> aclError {
    acl_call("acltdtGetQueueAttr", || {
        let a = queue::attr(id(attr))?;
        let value: Vec<u8> = match r#type {
            0 => a.name_ptr().expose_provenance().to_ne_bytes().to_vec(),
            1 => a.depth().to_ne_bytes().to_vec(),
            t => {
                return Err(invalid(format!(
                    "type {t}: ACL_TDT_QUEUE_NAME_PTR or ACL_TDT_QUEUE_DEPTH_UINT32"
                )));
            }
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { value_out(param, len, paramRetSize, &value) }
    })
}

/// A new route from queue `srcId` to queue `dstId`, status 0 (not bound).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCreateQueueRoute(srcId: u32, dstId: u32) -> *mut acltdtQueueRoute {
    acl_value("acltdtCreateQueueRoute", std::ptr::null_mut(), || {
        Ok(handle_ptr(route::create_route(srcId, dstId)))
    })
}

/// Destroys a route object (a bound route stays bound: unbinding goes through a list).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyQueueRoute(route: *const acltdtQueueRoute) -> aclError {
    acl_call("acltdtDestroyQueueRoute", || route::destroy_route(id(route)))
}

/// Gets a route's source, destination (`uint32_t`) or status (`int32_t`) into `param`.
///
/// # Safety
/// `param` is NULL or valid for `len` writes; `paramRetSize` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueRouteParam(
    route: *const acltdtQueueRoute,
    r#type: QueueRouteParamTypeArg,
    len: usize,
    paramRetSize: *mut usize,
    param: *mut c_void,
) -> aclError {
    acl_call("acltdtGetQueueRouteParam", || {
        let r = *crate::sync::lock(&route::route(id(route))?.value);
        let value = match r#type {
            0 => r.src.to_ne_bytes(),
            1 => r.dst.to_ne_bytes(),
            2 => r.status.to_ne_bytes(),
            t => {
                return Err(invalid(format!(
                    "type {t}: ACL_TDT_QUEUE_ROUTE_SRC_UINT32, _DST_UINT32 or _STATUS_INT32"
                )));
            }
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { value_out(param, len, paramRetSize, &value) }
    })
}

/// A new empty list of routes.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCreateQueueRouteList() -> *mut acltdtQueueRouteList {
    acl_value("acltdtCreateQueueRouteList", std::ptr::null_mut(), || Ok(handle_ptr(route::create_list())))
}

/// Destroys a list (the routes it bound stay bound).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyQueueRouteList(routeList: *const acltdtQueueRouteList) -> aclError {
    acl_call("acltdtDestroyQueueRouteList", || route::destroy_list(id(routeList)))
}

/// Appends a copy of `route` to the list.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtAddQueueRoute(
    routeList: *mut acltdtQueueRouteList,
    route: *const acltdtQueueRoute,
) -> aclError {
    acl_call("acltdtAddQueueRoute", || {
        let list = route::list(id(routeList), "routeList")?;
        let r: RouteValue = *crate::sync::lock(&route::route(id(route))?.value);
        list.add(r);
        Ok(())
    })
}

/// Copies the list's `index`-th route into the route object `route`.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetQueueRoute(
    routeList: *const acltdtQueueRouteList,
    index: usize,
    route: *mut acltdtQueueRoute,
) -> aclError {
    acl_call("acltdtGetQueueRoute", || {
        let list = route::list(id(routeList), "routeList")?;
        let target = route::route(id(route))?;
        *crate::sync::lock(&target.value) = list.get(index)?;
        Ok(())
    })
}

/// How many routes the list holds; 0 on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetQueueRouteNum(routeList: *const acltdtQueueRouteList) -> usize {
    acl_value("acltdtGetQueueRouteNum", 0, || Ok(route::list(id(routeList), "routeList")?.len()))
}

/// A new query with nothing set.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCreateQueueRouteQueryInfo() -> *mut acltdtQueueRouteQueryInfo {
    acl_value("acltdtCreateQueueRouteQueryInfo", std::ptr::null_mut(), || {
        Ok(handle_ptr(route::create_query()))
    })
}

/// Destroys a query.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyQueueRouteQueryInfo(info: *const acltdtQueueRouteQueryInfo) -> aclError {
    acl_call("acltdtDestroyQueueRouteQueryInfo", || route::destroy_query(id(info)))
}

/// Sets the query's mode (`acltdtQueueRouteQueryMode`), source or destination queue (`uint32_t`)
/// from `len` bytes (at most 4) at `value`.
///
/// # Safety
/// `value` is NULL or valid for `len` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetQueueRouteQueryInfo(
    param: *mut acltdtQueueRouteQueryInfo,
    r#type: QueueRouteQueryInfoParamTypeArg,
    len: usize,
    value: *const c_void,
) -> aclError {
    acl_call("acltdtSetQueueRouteQueryInfo", || {
        let q = route::query(id(param), "param")?;
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { value_in::<4>(value, len, "value") }?;
        match r#type {
            0 => q.set_mode(i32::from_ne_bytes(bytes)),
            1 => q.set_src(u32::from_ne_bytes(bytes)),
            2 => q.set_dst(u32::from_ne_bytes(bytes)),
            t => {
                return Err(invalid(format!(
                    "type {t}: ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, _SRC_ID_UINT32 or _DST_ID_UINT32"
                )));
            }
        }
        Ok(())
    })
}
