//! ascendless: the AscendCL runtime's notify and IPC APIs and the ADXL transfer engine, behind
//! the vendor's exact C and C++ ABI, on any Linux machine.
//!
//! Layers: [`ffi`] is the C ABI and the only place that touches C pointers; [`sys`] is the only
//! place that makes system calls; [`runtime`] and the other core modules are safe Rust, which the
//! compiler enforces (`forbid(unsafe_code)` below); the C++ classes live in `src/cxx/` and call
//! the C ABI. docs/architecture.md describes the layers.

// Unsafe code is refused everywhere but in the two layers allowed it, so a new module is safe
// unless it is made part of one of them.
#![deny(unsafe_code)]

// The unsafe layers: each unsafe block has a SAFETY note (Cargo.toml's [lints]).
#[allow(unsafe_code)]
pub mod ffi;
#[allow(unsafe_code)]
pub mod sys;

// The safe core: forbid, so no module inside can allow itself unsafe code.
#[forbid(unsafe_code)]
pub mod config;
#[forbid(unsafe_code)]
pub mod engine;
#[forbid(unsafe_code)]
pub mod error;
/// The fuzz targets' bodies (`fuzz/` and `tests/fuzz_corpus.rs` run them); not an API.
#[doc(hidden)]
#[forbid(unsafe_code)]
pub mod fuzz_targets;
#[forbid(unsafe_code)]
pub mod handle;
#[forbid(unsafe_code)]
pub mod hccl;
#[forbid(unsafe_code)]
pub mod ipc;
#[forbid(unsafe_code)]
pub mod logging;
#[forbid(unsafe_code)]
pub(crate) mod profile;
#[forbid(unsafe_code)]
pub mod runtime;
#[forbid(unsafe_code)]
pub mod sync;
