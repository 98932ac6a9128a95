/* A stand-in for a vendor libascendcl.so, so the LD_PRELOAD test has a program linked against
 * "another" AscendCL: every call fails with a code ascendless never returns. */
#include "acl/acl.h"

#define NOT_ASCENDLESS 999999

aclError aclInit(const char *configPath) { (void)configPath; return NOT_ASCENDLESS; }
aclError aclFinalize(void) { return NOT_ASCENDLESS; }
aclError aclFinalizeReference(uint64_t *refCount) { (void)refCount; return NOT_ASCENDLESS; }
const char *aclGetRecentErrMsg(void) { return 0; }
