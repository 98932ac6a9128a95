//! The ADXL transfer engine (safe Rust). Shared by the native C API (`ascendless.h`) and the
//! C++ `adxl::AdxlEngine` layer in `src/cxx/`, which calls the native C API.

pub mod access;
pub mod capability;
pub mod engine;
pub mod memory;
pub mod name;
pub mod options;
pub mod wire;
