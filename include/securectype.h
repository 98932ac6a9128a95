/*
 * securectype.h - part of ascendless.
 * Mirrors the vendor interface under the same name: the limits and helper macros of the
 * bounds-checked C string and memory functions (Huawei's "secure C" library, libc_sec in the
 * vendor's toolkit, whose functions many CANN samples call). securec.h includes it; the
 * functions themselves are in the ascendless library, which the vendor's library names
 * (libc_sec, libascend_hal) resolve to.
 */
#ifndef SECURECTYPE_H_A7BBB686_AADA_451B_B9F9_44DACDAE18A7
#define SECURECTYPE_H_A7BBB686_AADA_451B_B9F9_44DACDAE18A7

/* The C library headers the vendor's file brings in: code using the secure functions often
 * relies on them (FILE, size_t, memcmp, malloc). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest destMax a function accepts (a larger one is taken for a negative size passed
 * by mistake): 2 GiB - 1, the vendor's default. */
#ifndef SECUREC_STRING_MAX_LEN
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL
#endif
#ifndef SECUREC_MEM_MAX_LEN
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#endif

/* printf-style format checking, as the vendor's header declares it. */
#ifndef SECUREC_ATTRIBUTE
#if defined(__GNUC__)
#define SECUREC_ATTRIBUTE(x, y) __attribute__((format(printf, (x), (y))))
#else
#define SECUREC_ATTRIBUTE(x, y)
#endif
#endif

/* Which functions securec.h declares: every one ascendless implements. */
#define SECUREC_ENABLE_MEMSET 1
#define SECUREC_ENABLE_MEMMOVE 1
#define SECUREC_ENABLE_MEMCPY 1
#define SECUREC_ENABLE_STRCPY 1
#define SECUREC_ENABLE_STRNCPY 1
#define SECUREC_ENABLE_STRCAT 1
#define SECUREC_ENABLE_STRNCAT 1
#define SECUREC_ENABLE_SPRINTF 1
#define SECUREC_ENABLE_VSPRINTF 1
#define SECUREC_ENABLE_SNPRINTF 1
#define SECUREC_ENABLE_VSNPRINTF 1
#define SECUREC_SNPRINTF_TRUNCATED 1
#define SECUREC_ENABLE_STRTOK 1

#endif /* SECURECTYPE_H_A7BBB686_AADA_451B_B9F9_44DACDAE18A7 */
