// ge::AscendString and the ADXL engine's capabilities, in C++, through the vendor's headers.
//
// Builds engine options the way ADXL callers do (a std::map of AscendString), then asks the
// engine which optional features this build has. Exits non-zero on unexpected behaviour.
#include <cstdio>
#include <map>
#include <unordered_set>

#include "adxl/adxl_engine.h"

int main() {
    int failures = 0;

    std::map<ge::AscendString, ge::AscendString> options;
    options[adxl::OPTION_BUFFER_POOL] = "4:8";
    options[adxl::OPTION_AUTO_CONNECT] = "1";
    for (const auto &kv : options) {
        std::printf("option %-24s = %s\n", kv.first.GetString(), kv.second.GetString());
    }
    ge::AscendString null_name(nullptr);
    std::unordered_set<ge::AscendString> names{"127.0.0.1:26000", "127.0.0.1:26000", null_name};
    if (names.size() != 2 || null_name.GetLength() != 0 || !(null_name < ge::AscendString(""))) {
        std::printf("AscendString rules: UNEXPECTED\n");
        failures++;
    }

    const struct {
        adxl::FeatureType feature;
        const char *name;
    } features[] = {{adxl::AUTO_CONNECT, "AUTO_CONNECT"}, {adxl::CLIENT_SERVER_COMM, "CLIENT_SERVER_COMM"}};
    for (const auto &f : features) {
        int32_t value = -1;
        adxl::Status st = adxl::AdxlEngine::GetCapability(f.feature, value);
        std::printf("GetCapability(%-18s) -> status %u, %s\n", f.name, st,
                    value == adxl::FEATURE_SUPPORTED ? "supported" : "not supported");
        if (st != adxl::SUCCESS || (value != adxl::FEATURE_SUPPORTED && value != adxl::FEATURE_NOT_SUPPORTED)) {
            failures++;
        }
    }
    // A feature type that does not exist is refused with PARAM_INVALID: a failure this example
    // expects (the library also logs it as an [ERROR] line, as every failure; scripts/demo.sh
    // turns its log off for this program).
    int32_t value = 0;
    adxl::Status st = adxl::AdxlEngine::GetCapability(static_cast<adxl::FeatureType>(-1), value);
    std::printf("GetCapability(%-18s) -> status %u, %s\n", "FeatureType(-1)", st,
                st == adxl::PARAM_INVALID ? "PARAM_INVALID, as expected (no such feature)" : "UNEXPECTED");
    if (st != adxl::PARAM_INVALID) {
        failures++;
    }

    std::printf("%s\n", failures == 0 ? "adxl_capabilities: all as documented" : "adxl_capabilities: FAILED");
    return failures == 0 ? 0 : 1;
}
