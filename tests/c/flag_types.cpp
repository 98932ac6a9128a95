// Flag macros must have the vendor's types (0x02UL, 0x1U), not plain int: callers mix them with
// uint64_t/uint32_t in std::max and printf formats under -Werror. Compiled, not run.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "acl/acl.h"

static_assert(std::is_same<decltype(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS), uint64_t>::value, "u64 flag");
static_assert(std::is_same<decltype(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION), uint64_t>::value, "u64 flag");
static_assert(std::is_same<decltype(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION), uint64_t>::value, "u64 flag");
static_assert(std::is_same<decltype(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS), uint64_t>::value, "u64 flag");
static_assert(std::is_same<decltype(ACL_NOTIFY_DEVICE_USE_ONLY), unsigned int>::value, "u32 flag");
static_assert(std::is_same<decltype(ACL_EVENT_SYNC), unsigned int>::value, "u32 flag");

uint64_t widest(uint64_t flags);
uint64_t widest(uint64_t flags) {
    return std::max(flags, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS);
}
