//! ascendless: the AscendCL runtime's notify and IPC APIs and the ADXL transfer engine, behind
//! the vendor's exact C and C++ ABI, on any Linux machine.
//!
//! Layers: [`ffi`] is the C ABI and the only place that touches C pointers; [`sys`] is the only
//! place that makes system calls; [`runtime`] and the other core modules are safe Rust, which the
//! compiler enforces (`forbid(unsafe_code)` below); the C++ classes live in `src/cxx/` and call
//! the C ABI. docs/architecture.md describes the layers.

// The unsafe layers: each unsafe block has a SAFETY note (Cargo.toml's [lints]).
pub mod ffi;
pub mod sys;

// The safe core.
#[forbid(unsafe_code)]
pub mod adxl;
#[forbid(unsafe_code)]
pub mod config;
#[forbid(unsafe_code)]
pub mod error;
/// The fuzz targets' bodies (`fuzz/` and `tests/fuzz_corpus.rs` run them); not an API.
#[doc(hidden)]
#[forbid(unsafe_code)]
pub mod fuzz_targets;
#[forbid(unsafe_code)]
pub mod handle;
#[forbid(unsafe_code)]
pub mod ipc;
#[forbid(unsafe_code)]
pub mod logging;
#[forbid(unsafe_code)]
pub mod runtime;
