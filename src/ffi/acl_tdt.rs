//! `acl/acl_tdt.h`: TDT channels, datasets and data items (`runtime/tdt/channel.rs`,
//! `runtime/tdt/dataset.rs`). The vendor's library of these is `libacl_tdt_channel.so`.
//!
//! Items, datasets and channel handles are handle values (never addresses), so a stale or
//! foreign one is an error code. The functions that return a value instead of a code return
//! the vendor's "failed" value (NULL, 0, `ACL_TENSOR_DATA_UNDEFINED`, `ACL_DT_UNDEFINED`) and
//! leave a message for `aclGetRecentErrMsg`.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void};

use crate::config::settings;
use crate::error::AclError;
use crate::error::acl_codes::{ACL_ERROR_INVALID_PARAM, aclError};
use crate::ffi::acl_base::DataTypeArg;
use crate::ffi::ptr::{self, Out};
use crate::ffi::{acl_call, acl_value};
use crate::runtime::tdt::dataset::{
    self, DT_UNDEFINED, ItemCopy, TENSOR_DATA_ABNORMAL, TENSOR_DATA_END_OF_SEQUENCE, TENSOR_DATA_TENSOR,
    TENSOR_DATA_UNDEFINED,
};
use crate::runtime::tdt::{Wait, channel};

/// The kind of a data item.
#[repr(C)]
pub enum acltdtTensorType {
    ACL_TENSOR_DATA_UNDEFINED = -1,
    ACL_TENSOR_DATA_TENSOR = 0,
    ACL_TENSOR_DATA_END_OF_SEQUENCE = 1,
    ACL_TENSOR_DATA_ABNORMAL = 2,
    ACL_TENSOR_DATA_SLICE_TENSOR = 3,
    ACL_TENSOR_DATA_END_TENSOR = 4,
}

/// An `acltdtTensorType` value as received (any integer).
pub type TensorTypeArg = i32;

/// One tensor of a dataset (opaque).
pub struct acltdtDataItem {
    _opaque: (),
}

/// An ordered collection of data items (opaque).
pub struct acltdtDataset {
    _opaque: (),
}

/// A channel between the host and a device; here a queue of datasets in the process (opaque).
pub struct acltdtChannelHandle {
    _opaque: (),
}

/// The handle value a C pointer of ours carries.
pub(crate) fn id<T>(p: *const T) -> u64 {
    p.addr() as u64
}

/// The C pointer that carries handle value `h`.
pub(crate) fn handle_ptr<T>(h: u64) -> *mut T {
    std::ptr::without_provenance_mut(h as usize)
}

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// The item's tensor type; `ACL_TENSOR_DATA_UNDEFINED` for a NULL or stale item.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetTensorTypeFromItem(dataItem: *const acltdtDataItem) -> TensorTypeArg {
    acl_value("acltdtGetTensorTypeFromItem", TENSOR_DATA_UNDEFINED, || {
        Ok(dataset::item(id(dataItem))?.tensor_type)
    })
}

/// The item's data type; `ACL_DT_UNDEFINED` for a NULL or stale item (and for items that are
/// not tensors).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDataTypeFromItem(dataItem: *const acltdtDataItem) -> DataTypeArg {
    acl_value("acltdtGetDataTypeFromItem", DT_UNDEFINED, || Ok(dataset::item(id(dataItem))?.data_type))
}

/// The item's data: the caller's memory it was made with, or for a received item the copy it
/// owns (valid until its dataset is destroyed or received into again); NULL on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDataAddrFromItem(dataItem: *const acltdtDataItem) -> *mut c_void {
    acl_value("acltdtGetDataAddrFromItem", std::ptr::null_mut(), || {
        Ok(std::ptr::with_exposed_provenance_mut(dataset::item(id(dataItem))?.data().0))
    })
}

/// The item's data size in bytes; 0 on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDataSizeFromItem(dataItem: *const acltdtDataItem) -> usize {
    acl_value("acltdtGetDataSizeFromItem", 0, || Ok(dataset::item(id(dataItem))?.data().1))
}

/// How many dims the item has; 0 on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDimNumFromItem(dataItem: *const acltdtDataItem) -> usize {
    acl_value("acltdtGetDimNumFromItem", 0, || Ok(dataset::item(id(dataItem))?.dims.len()))
}

/// The item's slice count and index: 0 and 0 (only the device's OutfeedEnqueueOpV2 slices
/// tensors, and no device sends here).
///
/// # Safety
/// `sliceNum` and `sliceId` are NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetSliceInfoFromItem(
    dataItem: *const acltdtDataItem,
    sliceNum: *mut usize,
    sliceId: *mut usize,
) -> aclError {
    acl_call("acltdtGetSliceInfoFromItem", || {
        let it = dataset::item(id(dataItem))?;
        // SAFETY: forwarded from this function's contract.
        let (num, sid) = unsafe { (Out::new(sliceNum, "sliceNum")?, Out::new(sliceId, "sliceId")?) };
        num.write(usize::from(it.slice_num));
        sid.write(usize::from(it.slice_id));
        Ok(())
    })
}

/// Copies the item's dims into `dims` (room for `dimNum`); `dims` NULL with `dimNum` > 0, a
/// `dims` with `dimNum` 0, or fewer places than the item has dims: 100000, as the vendor's.
///
/// # Safety
/// `dims` is NULL or valid for `dimNum` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDimsFromItem(
    dataItem: *const acltdtDataItem,
    dims: *mut i64,
    dimNum: usize,
) -> aclError {
    acl_call("acltdtGetDimsFromItem", || {
        let it = dataset::item(id(dataItem))?;
        if dims.is_null() != (dimNum == 0) {
            return Err(invalid(format!(
                "dims and dimNum {dimNum} disagree: NULL dims go with dimNum 0, and dims with dimNum > 0"
            )));
        }
        if dimNum < it.dims.len() {
            return Err(invalid(format!("dimNum {dimNum} is less than the item's {} dims", it.dims.len())));
        }
        if it.dims.is_empty() {
            return Ok(());
        }
        if !dims.is_aligned() {
            return Err(invalid("dims is not aligned for int64_t"));
        }
        // SAFETY: non-NULL and aligned (checked); valid for `dimNum` >= `it.dims.len()` writes
        // by this function's contract.
        unsafe { std::ptr::copy_nonoverlapping(it.dims.as_ptr(), dims, it.dims.len()) };
        Ok(())
    })
}

/// A new item describing `size` bytes at `data` (the caller's memory: neither copied nor freed
/// until it is sent), with `dimNum` dims (at most 128). An item of another type than
/// `ACL_TENSOR_DATA_TENSOR` takes no dims (they must be NULL) and keeps no data type or data, as
/// the vendor's. NULL (with a message) on bad arguments.
///
/// # Safety
/// `dims` is NULL or valid for `dimNum` reads; `data` stays valid for `size` bytes while the
/// item may be sent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateDataItem(
    tdtType: TensorTypeArg,
    dims: *const i64,
    dimNum: usize,
    dataType: DataTypeArg,
    data: *mut c_void,
    size: usize,
) -> *mut acltdtDataItem {
    acl_value("acltdtCreateDataItem", std::ptr::null_mut(), || {
        if dims.is_null() != (dimNum == 0) {
            return Err(invalid(format!(
                "dims and dimNum {dimNum} disagree: NULL dims go with dimNum 0, and dims with dimNum > 0"
            )));
        }
        if dimNum > dataset::MAX_DIMS {
            return Err(invalid(format!("dimNum {dimNum} is more than {}", dataset::MAX_DIMS)));
        }
        let dims = if dims.is_null() {
            None
        } else {
            // SAFETY: forwarded from this function's contract (dimNum <= 128 checked above).
            Some(unsafe { ptr::slice(dims, dimNum, "dims") }?)
        };
        Ok(handle_ptr(dataset::create_item(tdtType, dims, dataType, data.expose_provenance(), size)?))
    })
}

/// Destroys an item the caller made (not the memory it describes). An item a receive made
/// belongs to its dataset: 100000.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyDataItem(dataItem: *mut acltdtDataItem) -> aclError {
    acl_call("acltdtDestroyDataItem", || dataset::destroy_item(id(dataItem)))
}

/// A new empty dataset, named "".
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCreateDataset() -> *mut acltdtDataset {
    acl_value("acltdtCreateDataset", std::ptr::null_mut(), || Ok(handle_ptr(dataset::create_dataset())))
}

/// Destroys a dataset: the items a receive put in go with it, the caller's stay theirs.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyDataset(dataset: *mut acltdtDataset) -> aclError {
    acl_call("acltdtDestroyDataset", || dataset::destroy_dataset(id(dataset)))
}

/// The `index`-th item; NULL (with a message) past the end.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDataItem(dataset: *const acltdtDataset, index: usize) -> *mut acltdtDataItem {
    acl_value("acltdtGetDataItem", std::ptr::null_mut(), || {
        Ok(handle_ptr(dataset::dataset(id(dataset))?.get(index)?))
    })
}

/// Appends the caller's item; a dataset received into takes no more (200006, as the vendor's).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtAddDataItem(dataset: *mut acltdtDataset, dataItem: *mut acltdtDataItem) -> aclError {
    acl_call("acltdtAddDataItem", || {
        let d = dataset::dataset(id(dataset))?;
        d.add(id(dataItem))
    })
}

/// How many items the dataset holds; 0 on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDatasetSize(dataset: *const acltdtDataset) -> usize {
    acl_value("acltdtGetDatasetSize", 0, || Ok(dataset::dataset(id(dataset))?.len()))
}

/// The dataset's name ("": the public API gives a sender no way to name one), valid while the
/// dataset lives; NULL on failure.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtGetDatasetName(dataset: *const acltdtDataset) -> *const c_char {
    acl_value("acltdtGetDatasetName", std::ptr::null(), || {
        // The name lives in the dataset, which the table keeps alive until it is destroyed.
        Ok(dataset::dataset(id(dataset))?.name().as_ptr())
    })
}

/// Stops the channel: a thread blocked in `acltdtSendTensor` or `acltdtReceiveTensor` on it
/// wakes and returns 500001 (`ACL_ERROR_FAILURE`), as does every later send or receive.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtStopChannel(handle: *mut acltdtChannelHandle) -> aclError {
    acl_call("acltdtStopChannel", || channel::stop(id(handle)))
}

/// Reads the channel name argument.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn channel_name<'a>(name: *const c_char) -> Result<&'a str, AclError> {
    // SAFETY: forwarded from the caller's contract.
    Ok(unsafe { ptr::required_str(name, "name") }?)
}

/// Opens the channel `name` of device `deviceId` (a queue of up to 8192 datasets; opening an
/// open name gives another handle to the same queue); NULL (with a message) on bad arguments.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateChannel(deviceId: u32, name: *const c_char) -> *mut acltdtChannelHandle {
    acl_value("acltdtCreateChannel", std::ptr::null_mut(), || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { channel_name(name) }?;
        Ok(handle_ptr(channel::create(deviceId, name, None, settings())?))
    })
}

/// Opens the channel `name` of device `deviceId` holding up to `capacity` datasets (2 to
/// 8192); NULL (with a message) on bad arguments.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateChannelWithCapacity(
    deviceId: u32,
    name: *const c_char,
    capacity: usize,
) -> *mut acltdtChannelHandle {
    acl_value("acltdtCreateChannelWithCapacity", std::ptr::null_mut(), || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { channel_name(name) }?;
        Ok(handle_ptr(channel::create(deviceId, name, Some(capacity), settings())?))
    })
}

/// Closes the handle; with the channel's last handle the channel goes, and what it held.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtDestroyChannel(handle: *mut acltdtChannelHandle) -> aclError {
    acl_call("acltdtDestroyChannel", || channel::destroy(id(handle)))
}

/// Drops every dataset the channel holds.
#[unsafe(no_mangle)]
pub extern "C" fn acltdtCleanChannel(handle: *mut acltdtChannelHandle) -> aclError {
    acl_call("acltdtCleanChannel", || channel::clean(id(handle)))
}

/// Copies what a dataset's items carry (the bytes each describes, read now).
fn copy_items(d: &dataset::Dataset) -> Result<Vec<ItemCopy>, AclError> {
    let mut out = Vec::new();
    for (i, it) in d.items()?.into_iter().enumerate() {
        if ![TENSOR_DATA_TENSOR, TENSOR_DATA_END_OF_SEQUENCE, TENSOR_DATA_ABNORMAL].contains(&it.tensor_type)
        {
            return Err(invalid(format!(
                "item {i} has tensor type {}: a send carries ACL_TENSOR_DATA_TENSOR, _END_OF_SEQUENCE or _ABNORMAL",
                it.tensor_type
            )));
        }
        let (addr, size) = it.data();
        let bytes = if size == 0 {
            Vec::new()
        } else if addr == 0 {
            return Err(invalid(format!("item {i} describes {size} bytes at NULL")));
        } else {
            // SAFETY: the item was made with `size` bytes at `addr`, valid while it may be sent by
            // acltdtCreateDataItem's contract (or it is a received item's own copy, alive while the
            // `Arc` of `it` is).
            unsafe { std::slice::from_raw_parts(std::ptr::with_exposed_provenance::<u8>(addr), size) }
                .to_vec()
        };
        out.push(ItemCopy {
            tensor_type: it.tensor_type,
            dims: it.dims.clone(),
            data_type: it.data_type,
            bytes,
            slice_num: it.slice_num,
            slice_id: it.slice_id,
        });
    }
    Ok(out)
}

/// Puts a copy of the dataset's items in the channel, waiting for room: `timeout` -1 forever,
/// 0 not at all, else that many ms; full after that: 207014 (`ACL_ERROR_RT_QUEUE_FULL`).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtSendTensor(
    handle: *const acltdtChannelHandle,
    dataset: *const acltdtDataset,
    timeout: i32,
) -> aclError {
    acl_call("acltdtSendTensor", || {
        if handle.is_null() {
            return Err(ptr::null_argument("handle"));
        }
        let d = dataset::dataset(id(dataset))?;
        let wait = Wait::from_ms(timeout)?;
        channel::send(id(handle), copy_items(&d)?, wait)
    })
}

/// Takes the oldest dataset of the channel into `dataset` (empty, or received into before:
/// its items are replaced), waiting for one as `acltdtSendTensor` waits for room; empty after
/// that: 207013 (`ACL_ERROR_RT_QUEUE_EMPTY`).
#[unsafe(no_mangle)]
pub extern "C" fn acltdtReceiveTensor(
    handle: *const acltdtChannelHandle,
    dataset: *mut acltdtDataset,
    timeout: i32,
) -> aclError {
    acl_call("acltdtReceiveTensor", || {
        if handle.is_null() {
            return Err(ptr::null_argument("handle"));
        }
        let d = dataset::dataset(id(dataset))?;
        let wait = Wait::from_ms(timeout)?;
        d.check_receivable()?;
        let message = channel::receive(id(handle), wait)?;
        d.fill(message)
    })
}

/// How many datasets the channel holds.
///
/// # Safety
/// `size` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtQueryChannelSize(
    handle: *const acltdtChannelHandle,
    size: *mut usize,
) -> aclError {
    acl_call("acltdtQueryChannelSize", || {
        // SAFETY: forwarded from this function's contract.
        let out = unsafe { Out::new(size, "size") }?;
        out.write(channel::size(id(handle))?);
        Ok(())
    })
}
