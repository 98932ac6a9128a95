//! TDT data items and datasets (`acltdtDataItem`, `acltdtDataset`): plain host objects.
//!
//! An item made by the caller describes the caller's memory (it neither copies nor frees it, as
//! the vendor's). An item a receive made owns a copy of the bytes that were sent, and belongs
//! to the dataset received into: it goes when that dataset is destroyed or received into again.

use std::ffi::CString;
use std::sync::{Arc, Mutex};

use crate::error::acl_codes::{ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;
use crate::sync;

/// `ACL_TENSOR_DATA_TENSOR`: the one tensor type that carries dims, a data type and data.
pub const TENSOR_DATA_TENSOR: i32 = 0;
/// `ACL_TENSOR_DATA_END_OF_SEQUENCE`.
pub const TENSOR_DATA_END_OF_SEQUENCE: i32 = 1;
/// `ACL_TENSOR_DATA_ABNORMAL`.
pub const TENSOR_DATA_ABNORMAL: i32 = 2;
/// `ACL_TENSOR_DATA_UNDEFINED`: what the getters give for a NULL item.
pub const TENSOR_DATA_UNDEFINED: i32 = -1;
/// `ACL_DT_UNDEFINED`.
pub const DT_UNDEFINED: i32 = -1;
/// Most dims an item has (the vendor's `MAX_DIM_CNT`).
pub const MAX_DIMS: usize = 128;

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// The bytes an item describes.
struct Bytes {
    addr: usize,
    size: usize,
    /// The copy a receive made (its heap buffer is at `addr`, kept alive by this field);
    /// `None`: the caller's memory.
    _owned: Option<Vec<u8>>,
}

/// One tensor (or control item: end of sequence, abnormal) of a dataset.
pub struct DataItem {
    pub tensor_type: i32,
    pub dims: Vec<i64>,
    pub data_type: i32,
    bytes: Bytes,
    pub slice_num: u16,
    pub slice_id: u16,
    /// Made by a receive: destroyed with its dataset, not alone.
    pub received: bool,
}

handle_kind!(pub static DATA_ITEMS: TdtDataItem => DataItem, AclError);

impl DataItem {
    /// The described data: its address (0 for none) and size.
    pub fn data(&self) -> (usize, usize) {
        (self.bytes.addr, self.bytes.size)
    }
}

/// What a sent item carries, copied out of the sender's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemCopy {
    pub tensor_type: i32,
    pub dims: Vec<i64>,
    pub data_type: i32,
    pub bytes: Vec<u8>,
    pub slice_num: u16,
    pub slice_id: u16,
}

/// `acltdtCreateDataItem`: an item describing `size` bytes at `addr` (the caller's, neither
/// copied nor freed). A tensor has up to 128 dims; any other type carries none (dims must be
/// NULL) and neither data type nor data, as the vendor's.
pub fn create_item(
    tensor_type: i32,
    dims: Option<&[i64]>,
    data_type: i32,
    addr: usize,
    size: usize,
) -> AclResult<u64> {
    let dims = dims.map(<[i64]>::to_vec);
    if dims.as_ref().is_some_and(|d| d.len() > MAX_DIMS) {
        return Err(invalid(format!(
            "dimNum {} is more than the {MAX_DIMS} dims an item may have",
            dims.unwrap().len()
        )));
    }
    let item = if tensor_type == TENSOR_DATA_TENSOR {
        DataItem {
            tensor_type,
            dims: dims.unwrap_or_default(),
            data_type,
            bytes: Bytes { addr, size, _owned: None },
            slice_num: 0,
            slice_id: 0,
            received: false,
        }
    } else {
        if dims.is_some() {
            return Err(invalid(format!(
                "tdtType {tensor_type} is not ACL_TENSOR_DATA_TENSOR: its dims must be NULL"
            )));
        }
        DataItem {
            tensor_type,
            dims: Vec::new(),
            data_type: DT_UNDEFINED,
            bytes: Bytes { addr: 0, size: 0, _owned: None },
            slice_num: 0,
            slice_id: 0,
            received: false,
        }
    };
    Ok(DATA_ITEMS.insert(item))
}

/// An item owning a copy of what was sent.
fn received_item(copy: ItemCopy) -> u64 {
    let mut bytes = copy.bytes;
    let addr = if bytes.is_empty() { 0 } else { bytes.as_mut_ptr().expose_provenance() };
    DATA_ITEMS.insert(DataItem {
        tensor_type: copy.tensor_type,
        dims: copy.dims,
        data_type: copy.data_type,
        bytes: Bytes { addr, size: bytes.len(), _owned: Some(bytes) },
        slice_num: copy.slice_num,
        slice_id: copy.slice_id,
        received: true,
    })
}

/// `acltdtDestroyDataItem`. An item a receive made belongs to its dataset (100000 here).
pub fn destroy_item(raw: u64) -> AclResult<()> {
    if DataItem::resolve(raw, "dataItem")?.received {
        return Err(invalid(
            "dataItem was made by acltdtReceiveTensor and belongs to the dataset it was received into: \
             destroy that dataset instead",
        ));
    }
    DataItem::release(raw, "dataItem").map(drop)
}

pub fn item(raw: u64) -> AclResult<Arc<DataItem>> {
    DataItem::resolve(raw, "dataItem")
}

/// An ordered collection of items.
pub struct Dataset {
    state: Mutex<DatasetState>,
    /// Stays put while the dataset lives, so `acltdtGetDatasetName`'s pointer stays valid.
    name: CString,
}

struct DatasetState {
    items: Vec<u64>,
    /// Filled by a receive: the items are its own (freed with it), and no more may be added.
    received: bool,
}

handle_kind!(pub static DATASETS: TdtDataset => Dataset, AclError);

/// `acltdtCreateDataset`: empty, named "" (the vendor's sender cannot name a dataset through the
/// public API, so a received dataset is named "" too).
pub fn create_dataset() -> u64 {
    DATASETS.insert(Dataset {
        state: Mutex::new(DatasetState { items: Vec::new(), received: false }),
        name: CString::default(),
    })
}

pub fn dataset(raw: u64) -> AclResult<Arc<Dataset>> {
    Dataset::resolve(raw, "dataset")
}

/// `acltdtDestroyDataset`: the items a receive put in go with it; the caller's stay.
pub fn destroy_dataset(raw: u64) -> AclResult<()> {
    let d = Dataset::release(raw, "dataset")?;
    let st = sync::lock(&d.state);
    if st.received {
        for &i in &st.items {
            let _ = DATA_ITEMS.remove(i);
        }
    }
    Ok(())
}

impl Dataset {
    /// `acltdtAddDataItem`: appends a caller's item; a received dataset takes no more (200006,
    /// as the vendor's).
    pub fn add(&self, item_raw: u64) -> AclResult<()> {
        let it = item(item_raw)?;
        if it.received {
            return Err(invalid("dataItem belongs to a received dataset: it cannot be added to another"));
        }
        let mut st = sync::lock(&self.state);
        if st.received {
            return Err(AclError::new(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                "the dataset was received into and holds its own items: no item can be added to it",
            ));
        }
        st.items.push(item_raw);
        Ok(())
    }

    pub fn len(&self) -> usize {
        sync::lock(&self.state).items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `index`-th item's handle.
    pub fn get(&self, index: usize) -> AclResult<u64> {
        let st = sync::lock(&self.state);
        st.items.get(index).copied().ok_or_else(|| {
            invalid(format!("index {index} is not less than the dataset's size {}", st.items.len()))
        })
    }

    /// The name (a NUL-terminated string that lives as long as the dataset).
    pub fn name(&self) -> &CString {
        &self.name
    }

    /// The items, resolved (a destroyed one is an error naming its place).
    pub fn items(&self) -> AclResult<Vec<Arc<DataItem>>> {
        let handles = sync::lock(&self.state).items.clone();
        handles
            .iter()
            .enumerate()
            .map(|(i, &h)| {
                DataItem::resolve(h, "dataItem")
                    .map_err(|e| AclError::new(e.code, format!("item {i} of the dataset: {}", e.message)))
            })
            .collect()
    }

    /// Checks that the dataset may be received into: empty, or filled by an earlier receive
    /// (whose items are then replaced), as the vendor's.
    pub fn check_receivable(&self) -> AclResult<()> {
        let st = sync::lock(&self.state);
        if !st.items.is_empty() && !st.received {
            return Err(invalid(format!(
                "the dataset holds {} items of the caller's: receive into an empty dataset",
                st.items.len()
            )));
        }
        Ok(())
    }

    /// Replaces what the dataset holds with new items made from `copies` (it must pass
    /// [`Dataset::check_receivable`]).
    pub fn fill(&self, copies: Vec<ItemCopy>) -> AclResult<()> {
        let mut st = sync::lock(&self.state);
        if !st.items.is_empty() && !st.received {
            return Err(invalid("the dataset holds items of the caller's: receive into an empty dataset"));
        }
        for &old in &st.items {
            let _ = DATA_ITEMS.remove(old);
        }
        st.items = copies.into_iter().map(received_item).collect();
        st.received = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(bytes: &[u8]) -> ItemCopy {
        ItemCopy {
            tensor_type: TENSOR_DATA_TENSOR,
            dims: vec![bytes.len() as i64],
            data_type: 4,
            bytes: bytes.to_vec(),
            slice_num: 0,
            slice_id: 0,
        }
    }

    #[test]
    fn a_received_dataset_owns_its_items() {
        let d = create_dataset();
        let ds = dataset(d).unwrap();
        ds.fill(vec![copy(b"abc")]).unwrap();
        let i = ds.get(0).unwrap();
        assert_eq!(item(i).unwrap().data().1, 3);
        assert!(destroy_item(i).is_err(), "it belongs to the dataset");
        let mine = create_item(TENSOR_DATA_TENSOR, None, 0, 0, 0).unwrap();
        assert_eq!(ds.add(mine).unwrap_err().code, ACL_ERROR_FEATURE_UNSUPPORTED);
        // A second receive replaces the first one's items.
        ds.fill(vec![copy(b"de"), copy(b"f")]).unwrap();
        assert!(item(i).is_err());
        assert_eq!(ds.len(), 2);
        destroy_dataset(d).unwrap();
        destroy_item(mine).unwrap();
    }

    #[test]
    fn control_items_carry_no_dims() {
        assert!(create_item(TENSOR_DATA_END_OF_SEQUENCE, Some(&[1]), 0, 0, 0).is_err());
        let e = create_item(TENSOR_DATA_END_OF_SEQUENCE, None, 3, 64, 8).unwrap();
        let it = item(e).unwrap();
        assert_eq!((it.data_type, it.data()), (DT_UNDEFINED, (0, 0)));
        destroy_item(e).unwrap();
        assert!(create_item(TENSOR_DATA_TENSOR, Some(&[1; 129]), 0, 0, 0).is_err());
    }
}
