//! ascendless: the AscendCL runtime's notify and IPC APIs and the ADXL transfer engine, behind
//! the vendor's exact C and C++ ABI, on any Linux machine.
//!
//! Layers: [`ffi`] is the C ABI and the only place that touches C pointers; [`runtime`] and
//! the other core modules are safe Rust; the C++ classes live in `src/cxx/` and call the C ABI.

pub mod adxl;
#[forbid(unsafe_code)]
pub mod config;
#[forbid(unsafe_code)]
pub mod error;
pub mod ffi;
/// The fuzz targets' bodies (`fuzz/` and `tests/fuzz_corpus.rs` run them); not an API.
#[doc(hidden)]
pub mod fuzz_targets;
#[forbid(unsafe_code)]
pub mod handle;
#[forbid(unsafe_code)]
pub mod ipc;
#[forbid(unsafe_code)]
pub mod logging;
#[forbid(unsafe_code)]
pub mod profile;
#[forbid(unsafe_code)]
pub mod runtime;
#[forbid(unsafe_code)]
pub mod sync;
pub mod sys;
