/* Helpers shared by the IPC examples: a tiny file-based rendezvous in a directory both
 * processes know (the vendor samples pass keys and pids through files or sockets the same way),
 * and error checking. */
#ifndef ASCENDLESS_EXAMPLES_IPC_COMMON_H
#define ASCENDLESS_EXAMPLES_IPC_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        aclError err_ = (call);                                                            \
        if (err_ != ACL_SUCCESS) {                                                         \
            const char *msg_ = aclGetRecentErrMsg();                                       \
            fprintf(stderr, "[%s] %s failed: %d (%s)\n", ROLE, #call, err_, msg_ ? msg_ : ""); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#define BUFFER_SIZE (2u << 20)

/* Writes `text` to dir/name atomically (write a temporary file, then rename). */
static void put_file(const char *dir, const char *name, const char *text) {
    char tmp[512], path[512];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        perror("writing a rendezvous file");
        exit(1);
    }
}

/* Waits up to 20 s for dir/name and reads it into `out`. */
static void get_file(const char *dir, const char *name, char *out, size_t cap) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 2000; i++) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            size_t n = fread(out, 1, cap - 1, f);
            out[n] = '\0';
            fclose(f);
            return;
        }
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    fprintf(stderr, "timed out waiting for %s\n", path);
    exit(1);
}

#endif
