/*
 * graph/ascend_string.h - part of ascendless.
 * Mirrors the vendor interface: class ge::AscendString, a reference-counted, possibly null
 * string used as the key and name type of the ADXL API. The layout (one shared_ptr member,
 * 16 bytes) and every declaration match the vendor class, so objects and symbols are
 * interchangeable with code built against the vendor header.
 */
#ifndef INC_EXTERNAL_GRAPH_ASCEND_STRING_H_
#define INC_EXTERNAL_GRAPH_ASCEND_STRING_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "graph/types.h"

/* Exports the out-of-line members; a definition supplied by the user takes precedence. */
#ifndef GE_FUNC_VISIBILITY
#define GE_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace ge {
class AscendStringImpl;

class GE_FUNC_VISIBILITY AscendString {
 public:
  /* A default-constructed string is null: GetString() gives "", GetLength() gives 0. */
  AscendString() = default;
  ~AscendString() = default;

  /* Copies the NUL-terminated text; a NULL pointer leaves the string null. */
  AscendString(const char_t *const name);

  /* Copies exactly `length` bytes starting at `name`; a NULL pointer leaves the string null. */
  AscendString(const char_t *const name, size_t length);

  /* The text as a C string; "" for a null string. Valid while this object (or a copy) lives. */
  const char_t *GetString() const;

  /* Number of bytes held; 0 for a null string. */
  size_t GetLength() const;

  /* Position of the first occurrence of `ascend_string`, or std::string::npos (also when
     either side is null). */
  size_t Find(const AscendString &ascend_string) const;

  /* Hash of the content; a null string hashes like the empty string. */
  size_t Hash() const;

  /* Ordering: a null string sorts before every non-null string and two null strings are
     equal; otherwise the contents are compared as std::string does. */
  bool operator<(const AscendString &d) const;
  bool operator>(const AscendString &d) const;
  bool operator<=(const AscendString &d) const;
  bool operator>=(const AscendString &d) const;
  bool operator==(const AscendString &d) const;
  bool operator!=(const AscendString &d) const;

  /* Compares with a C string; a NULL `d` equals only a null string. */
  bool operator==(const char_t *const d) const;
  bool operator!=(const char_t *const d) const;

 private:
  std::shared_ptr<std::string> name_;
  friend class AscendStringImpl;
};
}  // namespace ge

namespace std {
template <>
struct hash<ge::AscendString> {
  size_t operator()(const ge::AscendString &name) const {
    return name.Hash();
  }
};
}  // namespace std

#endif  // INC_EXTERNAL_GRAPH_ASCEND_STRING_H_
