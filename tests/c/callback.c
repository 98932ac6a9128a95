/* Host callbacks as the vendor's callback sample writes them, against the generated headers: a
 * pthread loops on aclrtProcessReport, is bound to a stream by its pthread_t, and runs the
 * stream's callbacks; aclrtLaunchHostFunc runs in a runtime thread and holds the stream. Run by
 * tests/host_func_api.rs; prints "N failures". */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "acl/acl.h"

static int failures = 0;
#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) {                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                              \
        }                                                            \
    } while (0)

_Static_assert(ACL_CALLBACK_NO_BLOCK == 0 && ACL_CALLBACK_BLOCK == 1, "aclrtCallbackBlockType");
_Static_assert(sizeof(aclrtCallbackBlockType) == sizeof(int), "enums are int-sized");

static volatile int looping = 1;
static pthread_t report_thread;
static int calls = 0;
static int in_report_thread = 0;
static int host_funcs = 0;
static int host_func_elsewhere = 0;

static void *report_loop(void *arg) {
    (void)arg;
    while (looping) {
        aclError rc = aclrtProcessReport(100);
        if (rc != ACL_SUCCESS && rc != ACL_ERROR_RT_REPORT_TIMEOUT && rc != ACL_ERROR_RT_THREAD_SUBSCRIBE) {
            failures++;
        }
    }
    return NULL;
}

static void on_callback(void *user_data) {
    calls += *(int *)user_data;
    in_report_thread += pthread_equal(pthread_self(), report_thread) ? 1 : 0;
}

static void on_host(void *args) {
    (void)args;
    host_funcs++;
    host_func_elsewhere += pthread_equal(pthread_self(), report_thread) ? 0 : 1;
}

int main(void) {
    CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(3) == ACL_SUCCESS);
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS);

    int one = 1;
    CHECK(aclrtLaunchCallback(on_callback, &one, ACL_CALLBACK_BLOCK, stream) == ACL_ERROR_RT_STREAM_NO_CB_REG);
    CHECK(pthread_create(&report_thread, NULL, report_loop, NULL) == 0);
    CHECK(aclrtSubscribeReport((uint64_t)report_thread, stream) == ACL_SUCCESS);
    CHECK(aclrtLaunchCallback(on_callback, &one, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS);
    CHECK(aclrtLaunchHostFunc(stream, on_host, NULL) == ACL_SUCCESS);
    for (int i = 0; i < 5; i++) {
        CHECK(aclrtLaunchCallback(on_callback, &one, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS);
    }
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    CHECK(calls == 6 && in_report_thread == 6);
    CHECK(host_funcs == 1 && host_func_elsewhere == 1);

    looping = 0;
    CHECK(pthread_join(report_thread, NULL) == 0);
    CHECK(aclrtUnSubscribeReport((uint64_t)report_thread, stream) == ACL_SUCCESS);
    CHECK(aclrtDestroyStreamForce(stream) == ACL_SUCCESS);
    CHECK(aclrtResetDeviceForce(3) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    printf("%d failures\n", failures);
    return failures != 0;
}
