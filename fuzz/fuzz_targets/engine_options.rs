//! libFuzzer entry for `ascendless::fuzz_targets::engine_options` (the body and its checks live there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ascendless::fuzz_targets::engine_options(data));
