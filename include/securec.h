/*
 * securec.h - part of ascendless.
 * Mirrors the vendor interface under the same name: the bounds-checked memory and string
 * functions of Huawei's secure C library (libc_sec), which the vendor's samples call (memset_s,
 * memcpy_s, sprintf_s...). Same prototypes and return codes; each function checks its
 * arguments first and, on a violation, returns the code below and (for the *_AND_RESET codes)
 * clears the destination, as the vendor documents. docs/consumers.md says what is left out
 * (the scanf_s and wide-character families).
 */
#ifndef SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27
#define SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27

#include "securectype.h"

#include <errno.h>
#include <stdarg.h>

#ifndef SECUREC_DEFINED_ERRNO_TYPE
#define SECUREC_DEFINED_ERRNO_TYPE
#ifndef errno_t
typedef int errno_t;
#endif
#endif

/* Success. */
#ifndef EOK
#define EOK 0
#endif
/* A NULL argument; the destination could not be cleared. */
#ifndef EINVAL
#define EINVAL 22
#endif
/* A NULL source (or an unterminated destination); the destination was cleared. */
#ifndef EINVAL_AND_RESET
#define EINVAL_AND_RESET 150
#endif
/* destMax is 0 or above the limit; the destination could not be cleared. */
#ifndef ERANGE
#define ERANGE 34
#endif
/* The destination is too small; it was cleared (memset_s: filled up to destMax). */
#ifndef ERANGE_AND_RESET
#define ERANGE_AND_RESET 162
#endif
/* Source and destination overlap; the destination was cleared. */
#ifndef EOVERLAP_AND_RESET
#define EOVERLAP_AND_RESET 182
#endif

#ifndef SECUREC_API
#define SECUREC_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string; *verNumber (if not NULL) gets its number. */
SECUREC_API const char *GetHwSecureCVersion(unsigned short *verNumber);

SECUREC_API errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
SECUREC_API errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
SECUREC_API errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
SECUREC_API errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
SECUREC_API errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
SECUREC_API errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc);
SECUREC_API errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);

/* The printf family returns the length written, or -1 (the destination then holds an empty
 * string, except for the truncation cases of snprintf_s, documented there). */
SECUREC_API int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList)
    SECUREC_ATTRIBUTE(3, 0);
SECUREC_API int sprintf_s(char *strDest, size_t destMax, const char *format, ...) SECUREC_ATTRIBUTE(3, 4);
/* At most count characters: more is a truncation, which keeps the truncated text and returns
 * -1 when count < destMax. */
SECUREC_API int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
    SECUREC_ATTRIBUTE(4, 0);
SECUREC_API int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
    SECUREC_ATTRIBUTE(4, 5);
/* Truncates to destMax - 1 characters and returns that length. */
SECUREC_API int vsnprintf_truncated_s(char *strDest, size_t destMax, const char *format, va_list argList)
    SECUREC_ATTRIBUTE(3, 0);
SECUREC_API int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...)
    SECUREC_ATTRIBUTE(3, 4);

/* strtok_r with the secure library's name: NULL strDelimit or context gives NULL. */
SECUREC_API char *strtok_s(char *strToken, const char *strDelimit, char **context);

#ifdef __cplusplus
}
#endif

#endif /* SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27 */
