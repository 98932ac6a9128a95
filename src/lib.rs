//! ascendless: the AscendCL runtime's notify and IPC APIs and the ADXL transfer engine, behind
//! the vendor's exact C and C++ ABI, on any Linux machine.
//!
//! Layers: [`ffi`] is the C ABI and the only place that touches C pointers; [`runtime`] and
//! the other core modules are safe Rust; the C++ classes live in `src/cxx/` and call the C ABI.

pub mod adxl;
pub mod config;
pub mod error;
pub mod ffi;
/// The fuzz targets' bodies (`fuzz/` and `tests/fuzz_corpus.rs` run them); not an API.
#[doc(hidden)]
pub mod fuzz_targets;
pub mod handle;
pub mod ipc;
pub mod logging;
pub mod profile;
pub mod runtime;
pub mod sync;
pub mod sys;
