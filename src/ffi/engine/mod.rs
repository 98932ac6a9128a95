//! `ascendless.h`: the library's own C API, the native face of the engine
//! ([`crate::engine`]). One file per concept; the ADXL status numbers of the header come from
//! [`crate::error::engine_status`], the single place they are defined.
//!
//! The header lists the functions in the order of the modules below (cbindgen reads them in
//! turn), so they are declared in that order, not alphabetically.

// The engine handle and what every part shares (below the parts, so none imports this file).
mod handle;

// The library: version, last error, capabilities.
mod info;

// Memory the library allocates for transfers.
mod memory;

// An engine's handle and its Initialize/Finalize.
mod lifecycle;

// RegisterMem/DeregisterMem and the counters of each path.
mod registration;

// RegisterMem of local-only memory.
mod local_only;

// RegisterMem with a tag, and a peer's region by its tag.
mod tagged;

// Connect/Disconnect.
mod connect;

// ConnectAsync/DisconnectAsync and their states.
mod async_connect;

// TransferSync and the descriptors.
mod transfer;

// TransferAsync and its requests.
mod requests;

// TransferAsync with user data, and the batched GetTransferStatus.
mod batch_status;

// SendNotify/GetNotifies.
mod notify;

// Where a rank of an HCCL rank table listens (LLM-DataDist's link by rank table).
mod rank_table;

pub use async_connect::*;
pub use batch_status::*;
pub use connect::*;
pub use handle::{AscendlessEngine, UintptrArg};
pub use info::*;
pub use lifecycle::*;
pub use local_only::*;
pub use memory::*;
pub use notify::*;
pub use rank_table::*;
pub use registration::*;
pub use requests::*;
pub use tagged::*;
pub use transfer::*;
