//! Shared buffers (`aclrtMbuf`, the vendor's mbufs) in host memory.
//!
//! A buffer is a reference to a data block: [`copy_ref`] makes a second reference to the same
//! block, and the block is freed when its last reference is. Each reference has its own valid
//! length and its own user data area (`USER_DATA_SIZE` bytes, the vendor's default private
//! area). A reference may head a chain of up to [`CHAIN_MAX`] buffers (itself first); the chain
//! owns what was appended, so freeing the head frees the members too.
//!
//! The data block is pinned host memory of the runtime (`memory::alloc_host`), so the data
//! pointer may be handed to the runtime's copies like any pinned buffer.

use std::sync::{Arc, Mutex};

use crate::error::rt_codes::{ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;
use crate::runtime::memory::{self, AllocKind};
use crate::sync;

/// Bytes of the user data area of every buffer (the vendor's default private area).
pub const USER_DATA_SIZE: usize = 96;
/// Most buffers a chain holds, its head included.
pub const CHAIN_MAX: usize = 128;
/// Largest data area (the vendor's limit: 4 GiB).
pub const SIZE_MAX: usize = 4 << 30;

/// The data block shared by the references to it.
struct Block {
    addr: usize,
    size: usize,
}

impl Drop for Block {
    fn drop(&mut self) {
        // A block outliving the runtime's memory (finalised first) has nothing left to free.
        let _ = memory::free(self.addr, AllocKind::Host);
    }
}

/// One reference to a data block.
pub struct Mbuf {
    block: Arc<Block>,
    state: Mutex<State>,
}

struct State {
    len: usize,
    user: [u8; USER_DATA_SIZE],
    /// Handles of the buffers appended to this one (it is their chain's head).
    chain: Vec<u64>,
    /// The head whose chain holds this buffer.
    in_chain: Option<u64>,
}

handle_kind!(pub static MBUFS: Mbuf => Mbuf, AclError);

fn invalid(message: String) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, message)
}

/// A new buffer with a data area of `size` bytes, valid length 0 and zeroed user data.
pub fn alloc(size: usize) -> AclResult<u64> {
    if size == 0 || size > SIZE_MAX {
        return Err(invalid(format!("size {size}: a buffer holds 1 byte to 4 GiB")));
    }
    let addr = memory::alloc_host(size).map_err(|e| {
        AclError::new(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("no memory for a {size}-byte buffer: {}", e.message),
        )
    })?;
    Ok(MBUFS.insert(Mbuf::new(Arc::new(Block { addr, size }), 0, [0; USER_DATA_SIZE])))
}

impl Mbuf {
    fn new(block: Arc<Block>, len: usize, user: [u8; USER_DATA_SIZE]) -> Mbuf {
        Mbuf { block, state: Mutex::new(State { len, user, chain: Vec::new(), in_chain: None }) }
    }

    /// The data area: its address and size.
    pub fn data(&self) -> (usize, usize) {
        (self.block.addr, self.block.size)
    }

    pub fn len(&self) -> usize {
        sync::lock(&self.state).len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets the valid length: at most the data area's size.
    pub fn set_len(&self, len: usize) -> AclResult<()> {
        if len > self.block.size {
            return Err(invalid(format!(
                "len {len} is beyond the buffer's data area of {} bytes",
                self.block.size
            )));
        }
        sync::lock(&self.state).len = len;
        Ok(())
    }

    /// Copies `out.len()` bytes of the user data area from `offset`.
    pub fn user_data(&self, offset: usize, out: &mut [u8]) -> AclResult<()> {
        let range = user_range(offset, out.len())?;
        out.copy_from_slice(&sync::lock(&self.state).user[range]);
        Ok(())
    }

    /// Writes `data` into the user data area at `offset`.
    pub fn set_user_data(&self, offset: usize, data: &[u8]) -> AclResult<()> {
        let range = user_range(offset, data.len())?;
        sync::lock(&self.state).user[range].copy_from_slice(data);
        Ok(())
    }
}

fn user_range(offset: usize, size: usize) -> AclResult<std::ops::Range<usize>> {
    match offset.checked_add(size) {
        Some(end) if end <= USER_DATA_SIZE => Ok(offset..end),
        _ => Err(invalid(format!(
            "offset {offset} + size {size} is beyond the user data area of {USER_DATA_SIZE} bytes"
        ))),
    }
}

/// A new reference to `buf`'s data block, with a copy of its valid length and user data.
pub fn copy_ref(buf: u64) -> AclResult<u64> {
    let b = get(buf, "buf")?;
    let (len, user) = {
        let st = sync::lock(&b.state);
        (st.len, st.user)
    };
    Ok(MBUFS.insert(Mbuf::new(Arc::clone(&b.block), len, user)))
}

/// The live buffer `raw` names (`what` in messages).
pub fn get(raw: u64, what: &str) -> AclResult<Arc<Mbuf>> {
    Mbuf::resolve(raw, what)
}

/// Appends `buf` to the chain headed by `head`. `buf` must be in no chain and head none; `head`
/// must not itself be a member of a chain.
pub fn append(head: u64, buf: u64) -> AclResult<()> {
    if head == buf {
        return Err(invalid("a buffer cannot be appended to its own chain".into()));
    }
    let h = get(head, "headBuf")?;
    let b = get(buf, "buf")?;
    // Lock order: head, then member (a head is never a member, so no cycle).
    let mut hs = sync::lock(&h.state);
    if hs.in_chain.is_some() {
        return Err(invalid("headBuf is a member of another chain: append to that chain's head".into()));
    }
    if hs.chain.len() + 1 >= CHAIN_MAX {
        return Err(invalid(format!("the chain already holds {CHAIN_MAX} buffers, the most it may")));
    }
    let mut bs = sync::lock(&b.state);
    if bs.in_chain.is_some() || !bs.chain.is_empty() {
        return Err(invalid("buf is already part of a chain".into()));
    }
    bs.in_chain = Some(head);
    hs.chain.push(buf);
    Ok(())
}

/// How many buffers the chain headed by `head` holds, the head included.
pub fn chain_len(head: u64) -> AclResult<u32> {
    let h = get(head, "headBuf")?;
    Ok(sync::lock(&h.state).chain.len() as u32 + 1)
}

/// The `index`-th buffer of the chain headed by `head` (0: the head itself).
pub fn chain_member(head: u64, index: u32) -> AclResult<u64> {
    let h = get(head, "headBuf")?;
    let st = sync::lock(&h.state);
    match index as usize {
        0 => Ok(head),
        i if i <= st.chain.len() => Ok(st.chain[i - 1]),
        i => Err(invalid(format!("index {i}: the chain holds {} buffers", st.chain.len() + 1))),
    }
}

/// Frees the reference `buf` and, if it heads a chain, the chain's members. A member of a chain
/// is freed with its head, not alone.
pub fn free(buf: u64) -> AclResult<()> {
    let b = get(buf, "buf")?;
    if sync::lock(&b.state).in_chain.is_some() {
        return Err(invalid("buf is a member of a chain: free the chain's head".into()));
    }
    let b = Mbuf::release(buf, "buf")?;
    let members = std::mem::take(&mut sync::lock(&b.state).chain);
    for m in members {
        let _ = MBUFS.remove(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_share_the_block_and_chains_count_their_head() {
        let a = alloc(64).unwrap();
        let b = copy_ref(a).unwrap();
        let (pa, sa) = MBUFS.get(a).unwrap().data();
        assert_eq!((pa, sa), MBUFS.get(b).unwrap().data());
        free(a).unwrap();
        // The block lives on through the second reference.
        MBUFS.get(b).unwrap().set_len(64).unwrap();
        let c = alloc(8).unwrap();
        append(b, c).unwrap();
        assert_eq!(chain_len(b).unwrap(), 2);
        assert_eq!(chain_member(b, 1).unwrap(), c);
        assert!(free(c).is_err());
        free(b).unwrap();
        assert!(MBUFS.get(c).is_err());
    }

    #[test]
    fn user_data_is_bounded() {
        let a = alloc(1).unwrap();
        let m = MBUFS.get(a).unwrap();
        m.set_user_data(90, &[1; 6]).unwrap();
        assert!(m.set_user_data(91, &[1; 6]).is_err());
        let mut out = [0; 2];
        m.user_data(94, &mut out).unwrap();
        assert_eq!(out, [1, 1]);
        free(a).unwrap();
    }
}
