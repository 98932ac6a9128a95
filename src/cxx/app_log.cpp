// aclAppLog (acl/acl_base.h, the vendor's acl/acl_base_rt.h): a printf-style log call. It is
// variadic, which Rust cannot define, so it lives here: it formats the message as the vendor
// does (at most 1024 bytes with the NUL; longer ones end in "...[truncated]") and hands it to
// the library's logger through ascendless_log.

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "acl/acl_base.h"
#include "ascendless.h"

namespace {

constexpr std::size_t kLimit = 1024;
constexpr char kTruncated[] = "...[truncated]";

}  // namespace

extern "C" __attribute__((visibility("default"))) void aclAppLog(aclLogLevel logLevel, const char *func,
                                                                 const char *file, uint32_t line,
                                                                 const char *fmt, ...) {
    if (fmt == nullptr) {
        return;
    }
    char body[kLimit];
    va_list args;
    va_start(args, fmt);
    const int n = std::vsnprintf(body, sizeof body, fmt, args);
    va_end(args);
    if (n < 0) {
        return;
    }
    char message[kLimit];
    const int m = std::snprintf(message, sizeof message, "[%s:%u][%s] %s", file != nullptr ? file : "?",
                                static_cast<unsigned>(line), func != nullptr ? func : "?", body);
    if (static_cast<std::size_t>(n) >= sizeof body || (m > 0 && static_cast<std::size_t>(m) >= sizeof message)) {
        std::memcpy(message + sizeof message - sizeof kTruncated, kTruncated, sizeof kTruncated);
    }
    ascendless_log(static_cast<int32_t>(logLevel), message);
}
