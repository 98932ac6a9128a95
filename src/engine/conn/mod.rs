//! Connections between engines: the ones this engine makes and the ones it serves.
//!
//! - [`link`]: links, this engine's connections to one remote engine (made by Connect).
//! - [`dialer`]: what dialling a peer needs from this engine (name, secret, transport, registry).
//! - [`auth`]: the shared-secret handshake of `adxl.Secret`, on every connection before HELLO.
//! - [`redial`]: dialling again when a peer drops a connection in its handshake.
//! - [`listener`]: the listener, which accepts and admits connections (it knows only the name).
//! - [`serve`]: the serving side (HELLO, READ, WRITE, NOTIFY, UCX_QUERY), one thread each.
//! - [`admit`]: new connections before their HELLO, bounded in count and time.
//! - [`served`]: one served connection, shared by its serving thread and announcements.
//! - [`reader`]: frames read from a connection with few system calls.
//! - [`status`]: the statuses a connection's failures become (a leaf every part may use).
//! - [`watch`]: watching for a reply instead of sleeping, for the process's one conversation.

pub mod admit;
pub mod auth;
pub mod dialer;
pub mod link;
pub mod listener;
pub mod reader;
pub mod redial;
pub mod serve;
pub mod served;
pub mod status;
pub mod watch;
