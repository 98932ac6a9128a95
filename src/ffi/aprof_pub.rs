//! `profiling/aprof_pub.h` (the vendor's libprofapi.so): the one function of it that programs
//! call themselves, `MsprofSetDeviceIdByGeModelIdx`, which names a model id for
//! `aclprofModelSubscribe` (the vendor's model loading calls it; its subscribe sample calls it
//! in place of loading a model).

use crate::runtime::profiling::subscribe;

/// Model `geModelIdx` runs on `deviceId`: 0 (the vendor's success).
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn MsprofSetDeviceIdByGeModelIdx(geModelIdx: u32, deviceId: u32) -> i32 {
    crate::ffi::boundary("MsprofSetDeviceIdByGeModelIdx", -1, || {
        subscribe::set_model_device(geModelIdx, deviceId);
        0
    })
}
