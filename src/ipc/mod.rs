//! Export and import between processes: the transport under IPC notifies, IPC events and IPC memory.
//!
//! # How it works
//! An exporting process runs one *broker*: a thread serving an abstract-namespace Unix socket
//! named after the process's pid and a random per-process token (started by the first
//! [`export`]). Each export is a memory file descriptor (a notify's cell or an allocation), a
//! byte range of it, and a 128-bit random secret; its [`Key`] text names the broker and the
//! secret. An importer ([`import`]) connects to the broker, sends the key, and the broker
//! - checks the importer's pid, *as the kernel reports it* (`SO_PEERCRED`), against the
//!   export's whitelist ([`allow_pids`]), unless pid validation is off for the export, in
//!   which case only processes of the exporter's own user may import;
//! - replies with the export's description and passes the descriptor (`SCM_RIGHTS`): the
//!   importer maps the very same pages, no copy;
//! - keeps the connection open as the import's *lifeline*: an importer that lets go normally
//!   says "release" first ([`ImportLink`]'s drop); a connection that closes without it means
//!   the importer died. The export's [`Importers`] count both, and are *orphaned* while an
//!   importer has died and none is left (until the next import).
//!
//! A 64-bit shareable handle (`aclrtMemExportToShareableHandle`) cannot hold a key, so an export
//! may also be *published* under a shareable id ([`publish`], [`shareable`]): the broker keeps the
//! table from id to export and also listens on a directory socket named after its pid alone,
//! where [`import_id`] asks; everything after the lookup is the same as for a key.
//!
//! The exporter's death closes the broker's socket: later imports fail with
//! `ACL_ERROR_RT_IPC_ERROR`, and live importers see it on their link
//! ([`ImportLink::exporter_gone`]). Nothing is ever created in the file system.
//!
//! # Errors
//! - malformed key; a key the (live) exporter does not know; a revoked export; bad arguments
//!   to [`export`] / [`allow_pids`]: `ACL_ERROR_RT_PARAM_INVALID` (107000);
//! - importer not whitelisted (or, without pid validation, of another user):
//!   `ACL_ERROR_RT_NO_PERMISSION` (207006);
//! - exporter gone, timeout, protocol error: `ACL_ERROR_RT_IPC_ERROR` (507022).
//!
//! Every message says what happened and, where the caller can act, what to do.
//!
//! # Threads and processes
//! Everything may be called from any thread; a process may import its own keys (its broker
//! thread answers). A child made by `fork` does not inherit its parent's exports: its first
//! export starts a broker of its own.

mod broker;
mod errors;
mod exports;
mod import;
mod importers;
pub(crate) mod key;
mod offer;
pub mod shareable;
pub mod wire;

use std::time::Duration;

use crate::error::AclResult;
use errors::{ipc_error, param_invalid};

pub use import::{ImportLink, Imported};
pub use importers::Importers;
pub use key::{KEY_MAX_LEN, Key};
pub use offer::{ExportKind, Offer};

/// Registers an export and returns its key, starting this process's broker if needed.
/// 107000 if the range is empty or lies outside the file; 507022 if the broker cannot start.
pub fn export(offer: Offer) -> AclResult<Key> {
    let size =
        offer.fd.size().map_err(|e| ipc_error(format!("cannot read the size of the exported file: {e}")))?;
    let end = offer.offset.checked_add(offer.len);
    if offer.len == 0 || end.is_none_or(|end| end > size) {
        return Err(param_invalid(format!(
            "cannot export {} bytes at offset {} of a file of {size} bytes",
            offer.len, offer.offset
        )));
    }
    broker::running()?.export(offer)
}

/// Publishes the export `key` (of this process) under a 64-bit shareable id, which
/// [`import_id`] accepts in place of the key text (see [`shareable`]). 107000 for a key this
/// process does not export or has revoked, or that has an id already; 507022 if this process
/// could not open its directory socket.
pub fn publish(key: &Key) -> AclResult<u64> {
    broker::owning(key)?.publish(key)
}

/// Imports the export published under shareable id `id`, waiting at most `timeout`.
pub fn import_id(id: u64, timeout: Duration) -> AclResult<Imported> {
    import::import_id(id, timeout)
}

/// Adds `pids` to the whitelist of `key` (`aclrtNotifySetImportPid`, `aclrtIpcMemSetImportPid`).
/// 107000 for a key this process does not export (or has revoked) and for a pid <= 0.
pub fn allow_pids(key: &Key, pids: &[i32]) -> AclResult<()> {
    if let Some(&bad) = pids.iter().find(|&&p| p <= 0) {
        return Err(param_invalid(format!("{bad} is not a process id (pids to allow must be positive)")));
    }
    broker::owning(key)?.allow_pids(key, pids)
}

/// Withdraws an export: later imports of `key` fail with 107000; existing imports keep their
/// mappings (and their lifelines, so [`Importers`] still counts them). 107000 for a key
/// this process does not export or has already revoked.
pub fn revoke(key: &Key) -> AclResult<()> {
    broker::owning(key)?.revoke(key)
}

/// How many imports of `key` are live (connections not yet released or closed); 0 for keys this
/// process does not export.
pub fn importers(key: &Key) -> usize {
    broker::owning(key).map_or(0, |b| b.importers(key))
}

/// Imports the export named by the key text, waiting at most `timeout` for the exporter.
pub fn import(key: &str, timeout: Duration) -> AclResult<Imported> {
    import::import(key, timeout)
}

#[cfg(test)]
mod tests;
