// Checks what a vendor runtime sample relies on: the SoC its build was configured for
// (SOC_VERSION, from bin/setenv.bash) is the one aclrtGetSocName reports when it runs.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"

int main()
{
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::printf("[ERROR] aclInit or aclrtSetDevice failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    const char *soc = aclrtGetSocName();
    const char *atRun = std::getenv("SOC_VERSION");
    std::printf("[INFO]  aclrtGetSocName: %s; SOC_VERSION at build: %s, at run: %s\n", soc ? soc : "(null)",
                PROBE_SOC_VERSION, atRun ? atRun : "(unset)");
    const bool same = soc != nullptr && std::strcmp(soc, PROBE_SOC_VERSION) == 0 && atRun != nullptr &&
                      std::strcmp(atRun, soc) == 0;
    (void)aclrtResetDevice(0);
    (void)aclFinalize();
    if (!same) {
        std::printf("[ERROR] SOC_VERSION differs from aclrtGetSocName\n");
        return 1;
    }
    std::printf("[SUCCESS] samples-style host probe ran.\n");
    return 0;
}
