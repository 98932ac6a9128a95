//! The ADXL `Status` numbers, shared by the C++ `adxl::AdxlEngine` and the native C API.
//!
//! This file is the single source of these numbers: cbindgen copies them into the checked-in
//! `ascendless.h`, and a C++ test asserts that `adxl/adxl_types.h` agrees with them.

/// Result of every ADXL call (`adxl::Status` in C++).
pub type AdxlStatus = u32;

pub const ADXL_SUCCESS: AdxlStatus = 0;
pub const ADXL_PARAM_INVALID: AdxlStatus = 103900;
pub const ADXL_TIMEOUT: AdxlStatus = 103901;
pub const ADXL_NOT_CONNECTED: AdxlStatus = 103902;
pub const ADXL_ALREADY_CONNECTED: AdxlStatus = 103903;
pub const ADXL_NOTIFY_FAILED: AdxlStatus = 103904;
pub const ADXL_UNSUPPORTED: AdxlStatus = 103905;
pub const ADXL_RESOURCE_EXHAUSTED: AdxlStatus = 203900;
pub const ADXL_FAILED: AdxlStatus = 503900;
