//! The engine's status numbers: ADXL's `Status`, which HIXL shares, for every face of the
//! engine (the native C API, the C++ `adxl::AdxlEngine`, Python).
//!
//! This file is the single source of these numbers: cbindgen copies them into the checked-in
//! `ascendless.h`, and a C++ test asserts that `adxl/adxl_types.h` agrees with them. The Rust
//! name [`EngineStatus`] is spelled `AdxlStatus` in C (the header generator renames it), and the
//! constants keep their C names, `ADXL_*`.

/// Result of every ADXL call (`adxl::Status` in C++).
pub type EngineStatus = u32;

pub const ADXL_SUCCESS: EngineStatus = 0;
pub const ADXL_PARAM_INVALID: EngineStatus = 103900;
pub const ADXL_TIMEOUT: EngineStatus = 103901;
pub const ADXL_NOT_CONNECTED: EngineStatus = 103902;
pub const ADXL_ALREADY_CONNECTED: EngineStatus = 103903;
pub const ADXL_NOTIFY_FAILED: EngineStatus = 103904;
pub const ADXL_UNSUPPORTED: EngineStatus = 103905;
pub const ADXL_RESOURCE_EXHAUSTED: EngineStatus = 203900;
pub const ADXL_FAILED: EngineStatus = 503900;
