// Links against libascendless.so and takes the address of every member the vendor's headers
// declare, so a missing or misnamed export fails the link; then checks the behaviour of the
// parts that are implemented. Built once per C++ string ABI.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>

#include "adxl/adxl_engine.h"

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                \
        }                                                              \
    } while (0)

template <typename T> static void keep(T member) {
    volatile bool present = (member != nullptr);
    CHECK(present);
}

int main() {
    using adxl::AdxlEngine;
    using ge::AscendString;
    keep(&AdxlEngine::Initialize);
    keep(&AdxlEngine::Finalize);
    keep(&AdxlEngine::RegisterMem);
    keep(&AdxlEngine::DeregisterMem);
    keep(&AdxlEngine::Connect);
    keep(&AdxlEngine::Disconnect);
    keep(&AdxlEngine::TransferSync);
    keep(&AdxlEngine::TransferAsync);
    keep(&AdxlEngine::GetTransferStatus);
    keep(&AdxlEngine::SendNotify);
    keep(&AdxlEngine::GetNotifies);
    keep(&AdxlEngine::MallocMem);
    keep(&AdxlEngine::FreeMem);
    keep(&AdxlEngine::GetCapability);
    keep(&AscendString::GetString);
    keep(&AscendString::GetLength);
    keep(&AscendString::Find);
    keep(&AscendString::Hash);
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator<));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator>));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator<=));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator>=));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator==));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator!=));
    keep(static_cast<bool (AscendString::*)(const char *const) const>(&AscendString::operator==));
    keep(static_cast<bool (AscendString::*)(const char *const) const>(&AscendString::operator!=));

    // ge::AscendString: the vendor's null rules.
    AscendString null_str;
    AscendString from_null(nullptr);
    AscendString empty("");
    AscendString abc("abc");
    AscendString ab("abcdef", 2);
    CHECK(std::strcmp(null_str.GetString(), "") == 0 && null_str.GetLength() == 0);
    CHECK(from_null == null_str && !(from_null < null_str));
    CHECK(null_str < empty && empty > null_str && null_str <= empty && empty >= null_str);
    CHECK(ab == "ab" && ab.GetLength() == 2 && ab < abc && abc != ab);
    CHECK(abc.Find(AscendString("bc")) == 1 && abc.Find(AscendString("x")) == std::string::npos);
    CHECK(abc.Hash() == AscendString("abc").Hash());
    CHECK(std::hash<AscendString>()(abc) == abc.Hash());
    std::map<AscendString, AscendString> options{{adxl::OPTION_BUFFER_POOL, "4:8"}, {"AutoConnect", "1"}};
    CHECK(options.size() == 2 && options[AscendString("adxl.BufferPool")] == "4:8");
    std::unordered_map<AscendString, int> counts;
    counts[AscendString("x")]++;
    counts[AscendString("x")]++;
    CHECK(counts.size() == 1 && counts[AscendString("x")] == 2);
    AscendString copy = abc;
    CHECK(copy == abc && std::strcmp(copy.GetString(), "abc") == 0);

    // adxl::AdxlEngine: constructible on the stack, with its vendor size.
    {
        AdxlEngine engine;
        int32_t value = -1;
        CHECK(AdxlEngine::GetCapability(adxl::AUTO_CONNECT, value) == adxl::SUCCESS);
        CHECK(value == adxl::FEATURE_SUPPORTED || value == adxl::FEATURE_NOT_SUPPORTED);
        CHECK(AdxlEngine::GetCapability(static_cast<adxl::FeatureType>(7), value) == adxl::SUCCESS && value == 0);
        CHECK(AdxlEngine::GetCapability(static_cast<adxl::FeatureType>(-3), value) == adxl::PARAM_INVALID);
        engine.Finalize();
        engine.Finalize();
    }

    std::printf("cxx_api: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
