//! Every count the engine bounds, in one leaf module: the part that enforces a limit and the
//! parts that size themselves by it import it from here, not from each other.

/// Most links (engines connected to with Connect) one engine holds.
pub const MAX_LINKS: usize = 512;
/// Most connections one link opens to its peer.
pub const MAX_CONNS: usize = 8;
/// Most connections one engine serves at once (the vendor's link limit).
pub const MAX_SERVED: usize = 512;
/// Most connections in their handshake (accepted, HELLO not received yet) at once.
pub const MAX_PENDING: usize = 64;
/// Most same-host initiators served at once (as many as TCP connections, [`MAX_SERVED`]).
pub const MAX_SAME_HOST_PEERS: usize = MAX_SERVED;
/// Most requests one engine holds at once (submitted and not yet reported done); one more is
/// RESOURCE_EXHAUSTED.
pub const MAX_REQUESTS: usize = 4096;
/// Most worker threads of one engine running asynchronous transfers.
pub const MAX_WORKERS: usize = 16;
/// Most notifies queued from one peer until GetNotifies takes them.
pub const MAX_NOTIFIES: usize = 4096;
/// Most notifies queued from all peers together (at most 2 KiB of text each).
pub const MAX_NOTIFIES_TOTAL: usize = 16 * MAX_NOTIFIES;
