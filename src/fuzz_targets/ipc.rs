//! Targets for the IPC parsers: key texts and broker messages from another process.

use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::ipc::key::{KEY_MAX_LEN, Key};
use crate::ipc::wire::{Reply, Request, Status};

/// Longest error message a refused key may produce: it quotes only the start of the text.
const MAX_KEY_MESSAGE: usize = 1024;

/// The input as a key text. A key has one spelling: an accepted text is the key's `Display`.
/// A refusal is `PARAM_INVALID` with a message of bounded length, however long the input.
pub fn ipc_key(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match Key::parse(&text) {
        Ok(key) => {
            assert_eq!(key.to_string(), text, "an accepted key is spelled another way");
            assert!(text.len() <= KEY_MAX_LEN && key.pid() != 0);
        }
        Err(e) => {
            assert_eq!(e.code, ACL_ERROR_RT_PARAM_INVALID, "{}", e.message);
            assert!(e.message.len() <= MAX_KEY_MESSAGE, "a {}-byte message", e.message.len());
        }
    }
}

/// The input as one broker packet, request and reply. Every field of both is checked, so an
/// accepted packet encodes back to the very same bytes.
pub fn ipc_wire(data: &[u8]) {
    if let Ok(request) = Request::decode(data) {
        assert_eq!(request.encode().as_slice(), data, "{request:?}");
    }
    if let Ok(reply) = Reply::decode(data) {
        assert_eq!(reply.encode().as_slice(), data, "{reply:?}");
        assert_eq!(reply.kind.is_some(), reply.status == Status::Ok, "{reply:?}");
    }
}
