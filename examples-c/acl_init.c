/* AscendCL initialisation and the error model, in C.
 *
 * Shows what every AscendCL program does first (aclInit / aclFinalize), how repeated
 * initialisation is counted, and how a failure's text is read back with aclGetRecentErrMsg.
 * Each line shows a call and the code it returned; the codes other than 0 are the ones the
 * vendor documents for that case, and expected.
 * Exits non-zero if the library does not behave as documented. */
#include <stdint.h>
#include <stdio.h>

#include "acl/acl.h"

static int failures = 0;

static void expect(const char *what, aclError got, aclError want) {
    printf("%-50s -> %6d %s\n", what, got, got == want ? "" : "(UNEXPECTED)");
    if (got != want) {
        failures++;
    }
}

int main(void) {
    expect("aclInit(NULL)", aclInit(NULL), ACL_SUCCESS);
    expect("aclInit(NULL) again (counted, harmless)", aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);

    uint64_t left = 99;
    expect("aclFinalizeReference(&left)", aclFinalizeReference(&left), ACL_SUCCESS);
    printf("%-50s    %llu\n", "  initialisations left", (unsigned long long)left);
    if (left != 1) {
        failures++;
    }
    expect("aclFinalize()", aclFinalize(), ACL_SUCCESS);
    expect("aclFinalize() again", aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);

    /* A failure this example expects: a config file that does not exist. (The library also logs
     * it as an [ERROR] line, as every failure; scripts/demo.sh turns its log off here.) */
    expect("aclInit(\"/nonexistent/acl.json\"): no such file", aclInit("/nonexistent/acl.json"),
           ACL_ERROR_INVALID_FILE);
    const char *msg = aclGetRecentErrMsg();
    printf("  aclGetRecentErrMsg: %s\n", msg ? msg : "(none)");
    if (msg == NULL) {
        failures++;
    }
    if (aclGetRecentErrMsg() != NULL) { /* reading consumed it */
        failures++;
    }

    expect("aclInit(NULL) after finalising", aclInit(NULL), ACL_SUCCESS);
    expect("aclFinalize()", aclFinalize(), ACL_SUCCESS);

    printf("%s\n", failures == 0 ? "acl_init: all as documented" : "acl_init: FAILED");
    return failures == 0 ? 0 : 1;
}
