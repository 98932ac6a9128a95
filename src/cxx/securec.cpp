// The secure C functions of securec.h (the vendor's libc_sec), in C++ compiled as C symbols:
// the printf family is variadic, which stable Rust cannot define, and keeping the whole family
// in one file keeps its shared rules (the limits, what is cleared on which error) together.
// Each function checks destMax, then the pointers, then the sizes, in the order the vendor
// documents, so a caller sees the same code for the same mistake.
#include "securec.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#define SECUREC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

bool BadMemMax(size_t destMax) { return destMax == 0 || destMax > SECUREC_MEM_MAX_LEN; }
bool BadStrMax(size_t destMax) { return destMax == 0 || destMax > SECUREC_STRING_MAX_LEN; }

bool Overlap(const void *a, size_t aLen, const void *b, size_t bLen) {
  const auto x = reinterpret_cast<uintptr_t>(a);
  const auto y = reinterpret_cast<uintptr_t>(b);
  return x < y + bLen && y < x + aLen;
}

// Copies count bytes of src (no terminator) after dest's first `at` bytes and terminates.
errno_t PutString(char *dest, size_t destMax, size_t at, const char *src, size_t count) {
  if (Overlap(dest, destMax, src, count + 1)) {
    dest[0] = '\0';
    return EOVERLAP_AND_RESET;
  }
  std::memcpy(dest + at, src, count);
  dest[at + count] = '\0';
  return EOK;
}

// The checks shared by memcpy_s and memmove_s; EOK means go on.
errno_t CheckMemArgs(void *dest, size_t destMax, const void *src, size_t count) {
  if (BadMemMax(destMax)) {
    return ERANGE;
  }
  if (dest == nullptr) {
    return EINVAL;
  }
  if (src == nullptr) {
    std::memset(dest, 0, destMax);
    return EINVAL_AND_RESET;
  }
  if (count > destMax) {
    std::memset(dest, 0, destMax);
    return ERANGE_AND_RESET;
  }
  return EOK;
}

// The checks shared by the string copies and appends; EOK means go on.
errno_t CheckStringArgs(char *dest, size_t destMax, const char *src, size_t count) {
  if (BadStrMax(destMax)) {
    return ERANGE;
  }
  if (dest == nullptr) {
    return EINVAL;
  }
  if (src == nullptr) {
    dest[0] = '\0';
    return EINVAL_AND_RESET;
  }
  if (count > SECUREC_STRING_MAX_LEN) {
    dest[0] = '\0';
    return ERANGE_AND_RESET;
  }
  return EOK;
}

// vsnprintf into dest, which must hold the whole output: -1 and an empty string otherwise.
int FormatWhole(char *dest, size_t destMax, const char *format, va_list args) {
  const int n = std::vsnprintf(dest, destMax, format, args);
  if (n < 0 || static_cast<size_t>(n) >= destMax) {
    dest[0] = '\0';
    return -1;
  }
  return n;
}

bool BadFormatArgs(char *dest, size_t destMax, const char *format) {
  if (BadStrMax(destMax) || dest == nullptr) {
    return true;
  }
  if (format == nullptr) {
    dest[0] = '\0';
    return true;
  }
  return false;
}

}  // namespace

SECUREC_EXPORT const char *GetHwSecureCVersion(unsigned short *verNumber) {
  if (verNumber != nullptr) {
    *verNumber = 0x0100;
  }
  return "ascendless secure C functions 1.0";
}

SECUREC_EXPORT errno_t memset_s(void *dest, size_t destMax, int c, size_t count) {
  if (BadMemMax(destMax)) {
    return ERANGE;
  }
  if (dest == nullptr) {
    return EINVAL;
  }
  if (count > destMax) {
    std::memset(dest, c, destMax);
    return ERANGE_AND_RESET;
  }
  std::memset(dest, c, count);
  return EOK;
}

SECUREC_EXPORT errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count) {
  const errno_t bad = CheckMemArgs(dest, destMax, src, count);
  if (bad != EOK || dest == src || count == 0) {
    return bad;
  }
  if (Overlap(dest, count, src, count)) {
    std::memset(dest, 0, destMax);
    return EOVERLAP_AND_RESET;
  }
  std::memcpy(dest, src, count);
  return EOK;
}

SECUREC_EXPORT errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count) {
  const errno_t bad = CheckMemArgs(dest, destMax, src, count);
  if (bad == EOK && dest != src && count != 0) {
    std::memmove(dest, src, count);
  }
  return bad;
}

SECUREC_EXPORT errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc) {
  const errno_t bad = CheckStringArgs(strDest, destMax, strSrc, 0);
  if (bad != EOK) {
    return bad;
  }
  const size_t len = strnlen(strSrc, destMax);
  if (len == destMax) {
    strDest[0] = '\0';
    return ERANGE_AND_RESET;
  }
  if (strDest == strSrc) {
    return EOK;
  }
  return PutString(strDest, destMax, 0, strSrc, len);
}

SECUREC_EXPORT errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
  const errno_t bad = CheckStringArgs(strDest, destMax, strSrc, count);
  if (bad != EOK) {
    return bad;
  }
  const size_t len = strnlen(strSrc, count < destMax ? count : destMax);
  if (len >= destMax) {
    strDest[0] = '\0';
    return ERANGE_AND_RESET;
  }
  if (strDest == strSrc) {
    strDest[len] = '\0';
    return EOK;
  }
  return PutString(strDest, destMax, 0, strSrc, len);
}

SECUREC_EXPORT errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc) {
  return strncat_s(strDest, destMax, strSrc, SECUREC_STRING_MAX_LEN);
}

SECUREC_EXPORT errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count) {
  const errno_t bad = CheckStringArgs(strDest, destMax, strSrc, count);
  if (bad != EOK) {
    return bad;
  }
  const size_t at = strnlen(strDest, destMax);
  if (at == destMax) {
    strDest[0] = '\0';
    return EINVAL_AND_RESET;
  }
  const size_t room = destMax - at;
  const size_t len = strnlen(strSrc, count < room ? count : room);
  if (len >= room) {
    strDest[0] = '\0';
    return ERANGE_AND_RESET;
  }
  return PutString(strDest, destMax, at, strSrc, len);
}

SECUREC_EXPORT int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList) {
  if (BadFormatArgs(strDest, destMax, format)) {
    return -1;
  }
  return FormatWhole(strDest, destMax, format, argList);
}

SECUREC_EXPORT int sprintf_s(char *strDest, size_t destMax, const char *format, ...) {
  va_list args;
  va_start(args, format);
  const int n = vsprintf_s(strDest, destMax, format, args);
  va_end(args);
  return n;
}

SECUREC_EXPORT int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList) {
  if (BadFormatArgs(strDest, destMax, format)) {
    return -1;
  }
  if (count > SECUREC_STRING_MAX_LEN) {
    strDest[0] = '\0';
    return -1;
  }
  if (count >= destMax) {
    return FormatWhole(strDest, destMax, format, argList);
  }
  // count < destMax: keep at most count characters; more is a truncation, reported as -1
  // with the truncated text left in place.
  const int n = std::vsnprintf(strDest, count + 1, format, argList);
  if (n < 0) {
    strDest[0] = '\0';
    return -1;
  }
  return static_cast<size_t>(n) > count ? -1 : n;
}

SECUREC_EXPORT int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...) {
  va_list args;
  va_start(args, format);
  const int n = vsnprintf_s(strDest, destMax, count, format, args);
  va_end(args);
  return n;
}

SECUREC_EXPORT int vsnprintf_truncated_s(char *strDest, size_t destMax, const char *format, va_list argList) {
  if (BadFormatArgs(strDest, destMax, format)) {
    return -1;
  }
  const int n = std::vsnprintf(strDest, destMax, format, argList);
  if (n < 0) {
    strDest[0] = '\0';
    return -1;
  }
  return static_cast<size_t>(n) >= destMax ? static_cast<int>(destMax - 1) : n;
}

SECUREC_EXPORT int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...) {
  va_list args;
  va_start(args, format);
  const int n = vsnprintf_truncated_s(strDest, destMax, format, args);
  va_end(args);
  return n;
}

SECUREC_EXPORT char *strtok_s(char *strToken, const char *strDelimit, char **context) {
  if (strDelimit == nullptr || context == nullptr) {
    return nullptr;
  }
  if (strToken == nullptr && *context == nullptr) {
    return nullptr;
  }
  return strtok_r(strToken, strDelimit, context);
}
